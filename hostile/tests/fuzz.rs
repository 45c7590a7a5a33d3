//! The stable-Rust fuzzer in the test suite: a fixed number of inputs per target from
//! fixed seeds (the same inputs every run), and every saved finding in
//! `trace-format/fuzz/regressions/` run again. Longer runs: `scripts/fuzz MINUTES`.

use std::path::Path;

use hostile::alloc::Counting;
use hostile::fuzz::{fuzz, guarded, run_one, scratch_dir, Budget, Outcome, Target, ALLOC_BASE};

#[global_allocator]
static ALLOC: Counting = Counting;

const REGRESSIONS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../trace-format/fuzz/regressions"
);

fn inputs(target: Target) -> u64 {
    // About two minutes in all in a debug build on two cores.
    match target {
        Target::TraceBytes => 60_000,
        Target::ResultsBytes => 90_000,
        Target::TracePayload => 6_000,
        Target::Records => 1_800,
        Target::GfxrBytes => 1_500,
    }
}

#[test]
fn every_target_survives_its_fixed_inputs() {
    std::panic::set_hook(Box::new(|_| {}));
    for target in Target::ALL {
        let dir = scratch_dir().unwrap();
        let budget = Budget::Inputs(inputs(target));
        let report = fuzz(target, 1, budget, dir.path(), None).unwrap();
        assert_eq!(report.inputs, inputs(target));
        assert!(
            report.findings.is_empty(),
            "{}: {:?} (run `scripts/fuzz` to save them)",
            target.name(),
            report.findings
        );
        println!("{}: {} inputs, no findings", target.name(), report.inputs);
    }
}

#[test]
fn saved_findings_stay_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let mut ran = 0;
    for entry in std::fs::read_dir(Path::new(REGRESSIONS)).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        // `cli/` holds the command-line campaign's findings (tests/campaign.rs).
        if name.starts_with('.') || name.ends_with(".md") || path.is_dir() {
            continue;
        }
        let target = Target::from_name(&name).unwrap_or_else(|| panic!("{name}: no target"));
        let input = std::fs::read(&path).unwrap();
        assert_eq!(run_one(target, &input, dir.path()), Outcome::Fine, "{name}");
        ran += 1;
    }
    println!("{ran} saved findings");
}

#[test]
fn the_harness_reports_panics_and_allocations_past_the_bound() {
    std::panic::set_hook(Box::new(|_| {}));
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        run_one(Target::TraceBytes, b"not a trace", dir.path()),
        Outcome::Fine
    );
    assert_eq!(
        guarded(|| panic!("boom at record 7")),
        Outcome::Panicked("boom at record 7".into())
    );
    let outcome = guarded(|| {
        let big = vec![1u8; (ALLOC_BASE + (1 << 20)) as usize];
        std::hint::black_box(&big);
        0
    });
    assert!(matches!(outcome, Outcome::Allocated(..)), "{outcome:?}");
}
