//! A build of the driver model whose draw macro runs one more instruction — made in
//! this test process by lengthening the macro — is flagged by `compare` as a
//! regression, with the draws and the group it hurt named. (In its own test binary:
//! the lengthened macro holds for the whole process.)

use analyzer::changes::changes;
use analyzer::compare::{compare, Thresholds, Verdict};
use analyzer::Metric;
use driver::mme::Arch;
use driver::nvk::{lengthen_for_tests, Macro};
use replayer::{replay, ReplayOptions, DEFAULT_MME_BUDGET};
use trace_format::ReadOptions;

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/samples/multiview-nvidia.mscope"
);

#[test]
fn a_draw_macro_one_instruction_longer_is_flagged_with_its_draws() {
    let dir = tempfile::tempdir().unwrap();
    for arch in [Arch::Turing, Arch::Fermi] {
        let options = ReplayOptions {
            chipset: driver::chipset::Chipset::for_arch(arch),
            frames: None,
            repeat: 1,
            read: ReadOptions::default(),
            mme_budget: DEFAULT_MME_BUDGET,
            remember_macro_runs: true,
        };
        let (base, new) = (dir.path().join("base.msr"), dir.path().join("new.msr"));
        lengthen_for_tests(None);
        replay(SAMPLE.as_ref(), &base, &options, &mut |_, _| {}).unwrap();
        lengthen_for_tests(Some(Macro::Draw));
        replay(SAMPLE.as_ref(), &new, &options, &mut |_, _| {}).unwrap();
        lengthen_for_tests(None);

        let c = compare(&base, &new, &[], Thresholds::default()).unwrap();
        assert_eq!(c.verdict(), Verdict::Regressed, "{arch:?}: {c:?}");
        let counts: Vec<Metric> = c.metrics.iter().map(|m| m.metric).collect();
        let found = changes(&base, &new, &counts, 5).unwrap();
        assert_eq!(found.metrics.len(), 1, "{arch:?}: {found:?}");
        let mme = &found.metrics[0];
        assert_eq!(mme.metric, "mme-instructions");
        // Every vkCmdDraw is hurt, by the same few instructions; nothing else moved.
        let by_kind = &mme.groups["kind"];
        assert_eq!(by_kind.len(), 1, "{arch:?}: {by_kind:?}");
        assert_eq!(by_kind[0].group, "vkCmdDraw");
        assert!(by_kind[0].hurt > 0 && by_kind[0].helped == 0 && by_kind[0].unchanged == 0);
        let step = mme.top[0].new - mme.top[0].base;
        assert!((1..=2).contains(&step), "{arch:?}: {:?}", mme.top);
        assert!(mme
            .top
            .iter()
            .all(|r| r.kind == "vkCmdDraw" && r.new - r.base == step));
    }
}
