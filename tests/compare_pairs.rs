//! A compare that `git bisect run` can trust: 100 pairs of replays of the same trace by
//! the same build never regress, by default and at threshold 0, and a timing of one
//! repetition a side is inconclusive, never regressed.

use analyzer::compare::{compare, Thresholds, Verdict};
use analyzer::Metric;
use driver::mme::Arch;
use replayer::{replay, ReplayOptions, DEFAULT_MME_BUDGET};
use trace_format::ReadOptions;

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/samples/multiview-nvidia.mscope"
);

#[test]
fn a_hundred_pairs_of_replays_by_one_build_never_regress() {
    let dir = tempfile::tempdir().unwrap();
    let options = ReplayOptions {
        chipset: driver::chipset::Chipset::for_arch(Arch::Turing),
        frames: None,
        repeat: 1,
        read: ReadOptions::default(),
        mme_budget: DEFAULT_MME_BUDGET,
        remember_macro_runs: true,
    };
    let zero = Thresholds {
        counts_pct: 0.0,
        timings_pct: 0.0,
    };
    for pair in 0..100 {
        let (a, b) = (
            dir.path().join(format!("a{pair}.msr")),
            dir.path().join(format!("b{pair}.msr")),
        );
        for out in [&a, &b] {
            replay(SAMPLE.as_ref(), out, &options, &mut |_, _| {}).unwrap();
        }
        for thresholds in [Thresholds::default(), zero] {
            let c = compare(&a, &b, &[], thresholds).unwrap();
            assert_eq!(c.verdict(), Verdict::Ok, "pair {pair}: {c:?}");
        }
        // Host timings of one repetition a side cannot be judged.
        let timing = compare(&a, &b, &[Metric::MmeNs], zero).unwrap();
        assert_eq!(timing.verdict(), Verdict::Inconclusive, "pair {pair}");
        std::fs::remove_file(&a).unwrap();
        std::fs::remove_file(&b).unwrap();
    }
}
