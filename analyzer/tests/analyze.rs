//! The analyzer on results files with known rows.

use std::path::{Path, PathBuf};

use analyzer::compare::{compare, Thresholds, Verdict};
use analyzer::export::{export, Format};
use analyzer::{GroupBy, Metric, Report};
use trace_format::generated::results::{DrawKind, DrawRow, DrawState, MmeArch, RunInfoT};
use trace_format::results::RowState;
use trace_format::{ResultsWriter, WriterOptions};

/// `draws` rows per repetition; MME instructions scaled by `mme_scale`, timings jittered
/// per repetition.
fn results(dir: &Path, name: &str, draws: u64, reps: u16, mme_scale: f64) -> PathBuf {
    let path = dir.join(name);
    let mut run = RunInfoT::default();
    run.mme_arch = MmeArch::Turing;
    run.repetitions = reps.into();
    let mut w = ResultsWriter::create(&path, run, &WriterOptions::default()).unwrap();
    for rep in 0..reps {
        for seq in 0..draws {
            let kind = if seq % 3 == 0 {
                DrawKind::DrawIndexed
            } else {
                DrawKind::Draw
            };
            let views = (seq % 4) as u8 + 1;
            let mme = ((100 + seq % 50) as f64 * mme_scale).round() as u32;
            let row = DrawRow::new(
                seq,
                0x10 + seq % 2,
                (seq / 100) as u32,
                0,
                rep,
                kind,
                views,
                (1 << views) - 1,
                1,
                3,
                1,
                mme,
                20,
                7,
                u32::from(views),
                0,
                0,
                1000 + u64::from(rep) * 7,
                5000 + seq % 10 + u64::from(rep) * 11,
                100,
                0,
            );
            w.push_draw(row).unwrap();
        }
    }
    w.finish(&[]).unwrap();
    path
}

#[test]
fn percentiles_and_breakdowns_match_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = results(dir.path(), "r.msr", 1000, 1, 1.0);
    let report = Report::build(&path, GroupBy::Kind, 5, Metric::MmeInstructions).unwrap();
    assert_eq!(report.draws, 1000);
    let mut mme: Vec<u64> = (0..1000u64).map(|s| 100 + s % 50).collect();
    mme.sort();
    let h = report.histogram(Metric::MmeInstructions);
    // Values below 2048 are exact at three significant digits.
    assert_eq!(h.value_at_quantile(0.5), mme[499]);
    assert_eq!(h.value_at_quantile(0.9), mme[899]);
    assert_eq!(h.max(), 149);
    let indexed = &report.groups["vkCmdDrawIndexed"];
    assert_eq!(indexed.draws, 334);
    let want: u64 = (0..1000u64)
        .filter(|s| s % 3 == 0)
        .map(|s| 100 + s % 50)
        .sum();
    assert_eq!(indexed.sums[0], want);
    assert_eq!(report.groups.values().map(|g| g.draws).sum::<u64>(), 1000);
    assert_eq!(report.top.len(), 5);
    assert!(report.top.iter().all(|t| t.value == 149));

    let by_views = Report::build(&path, GroupBy::ViewCount, 0, Metric::HwDraws).unwrap();
    assert_eq!(by_views.groups.len(), 4);
    assert_eq!(by_views.groups["04 views"].sums[3], 250 * 4);
}

#[test]
fn compare_flags_ten_percent_more_mme_and_passes_an_identical_run() {
    let dir = tempfile::tempdir().unwrap();
    let base = results(dir.path(), "base.msr", 500, 5, 1.0);
    let same = results(dir.path(), "same.msr", 500, 5, 1.0);
    let worse = results(dir.path(), "worse.msr", 500, 3, 1.1);
    let ok = compare(&base, &same, &[], Thresholds::default()).unwrap();
    assert_eq!(ok.verdict(), Verdict::Ok, "{ok:?}");
    let bad = compare(
        &base,
        &worse,
        &[Metric::MmeInstructions],
        Thresholds::default(),
    )
    .unwrap();
    assert!(bad.regressed());
    assert!(
        (bad.metrics[0].change_pct - 10.0).abs() < 0.5,
        "{:?}",
        bad.metrics[0]
    );
    // Timings, when asked for, carry an interval; identical runs' interval holds zero.
    let timed = compare(&base, &same, &[Metric::MmeNs], Thresholds::default()).unwrap();
    let (lo, hi) = timed.metrics[0].interval_pct.unwrap();
    assert!(lo <= 0.0 && hi >= 0.0, "{lo} {hi}");
}

#[test]
fn exports_have_one_row_or_slice_per_draw() {
    let dir = tempfile::tempdir().unwrap();
    let path = results(dir.path(), "r.msr", 50, 2, 1.0);
    let mut csv = Vec::new();
    assert_eq!(export(&path, Format::Csv, &mut csv).unwrap(), 100);
    let csv = String::from_utf8(csv).unwrap();
    assert_eq!(csv.lines().count(), 101);
    assert!(csv.lines().next().unwrap().starts_with("seq,frame,submit"));

    let mut json = Vec::new();
    export(&path, Format::Json, &mut json).unwrap();
    let rows: Vec<serde_json::Value> = String::from_utf8(json)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 100);
    assert_eq!(rows[3]["kind"], "vkCmdDrawIndexed");

    let mut trace = Vec::new();
    export(&path, Format::Perfetto, &mut trace).unwrap();
    let trace: serde_json::Value = serde_json::from_slice(&trace).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let draws = events
        .iter()
        .filter(|e| e["cat"] == "draw" && e["ph"] == "X")
        .count();
    assert_eq!(draws, 100);
    // Nested slices sit inside their draw.
    let first = events.iter().find(|e| e["cat"] == "draw").unwrap();
    let encode = events.iter().find(|e| e["cat"] == "encode").unwrap();
    assert_eq!(first["ts"], encode["ts"]);
    assert!(encode["dur"].as_f64().unwrap() <= first["dur"].as_f64().unwrap());
}

#[test]
fn a_damaged_results_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = results(dir.path(), "r.msr", 100, 1, 1.0);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let err = Report::build(&path, GroupBy::Kind, 1, Metric::Methods)
        .err()
        .unwrap();
    assert!(err.is_bad_input(), "{err}");
    assert!(err.to_string().contains("torn write"), "{err}");
}

#[test]
fn plots_are_valid_svg_and_png_with_their_titles_and_series() {
    let dir = tempfile::tempdir().unwrap();
    let base = results(dir.path(), "base.msr", 400, 1, 1.0);
    let new = results(dir.path(), "new.msr", 400, 1, 1.2);
    let report = Report::build(&base, GroupBy::Kind, 0, Metric::MmeInstructions).unwrap();
    let plots = dir.path().join("plots");
    let files = analyzer::plots::report_plots(&report, &plots).unwrap();
    // A histogram per metric, the per-frame line, the view-count bars; each as SVG and PNG.
    assert_eq!(files.len(), 2 * (Metric::ALL.len() + 2), "{files:?}");
    let svg = std::fs::read_to_string(plots.join("histogram-mme-instructions.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("Distribution of mme-instructions per draw"));
    assert!(svg.contains("mme-instructions (instructions)"));
    assert!(svg.contains("<rect"), "bars are drawn");
    let frames = std::fs::read_to_string(plots.join("frames.svg")).unwrap();
    assert!(frames.contains("MME instructions per frame") && frames.contains("<polyline"));
    for name in [
        "histogram-mme-instructions.png",
        "frames.png",
        "view-count.png",
    ] {
        let png = std::fs::read(plots.join(name)).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{name}");
        let width = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
        let height = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
        assert_eq!((width, height), (900, 540), "{name}");
    }

    let new_report = Report::build(&new, GroupBy::Kind, 0, Metric::MmeInstructions).unwrap();
    analyzer::plots::ab_plot(&report, &new_report, Metric::MmeInstructions, &plots).unwrap();
    let ab = std::fs::read_to_string(plots.join("ab-mme-instructions.svg")).unwrap();
    assert!(
        ab.contains("base against new") && ab.contains("\nbase\n") && ab.contains("\nnew\n"),
        "two labelled series"
    );
}

#[test]
fn timings_are_judged_only_with_enough_repetitions_and_counts_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let one = results(dir.path(), "one.msr", 200, 1, 1.0);
    let other = results(dir.path(), "other.msr", 200, 1, 1.0);
    // By default only the exact counts: an identical replay passes even at threshold 0.
    let counts = compare(&one, &other, &[], Thresholds::default()).unwrap();
    assert_eq!(counts.verdict(), Verdict::Ok, "{counts:?}");
    assert!(counts.metrics.iter().all(|m| !m.metric.is_timing()));
    // One repetition a side: a timing cannot be judged, whatever it did.
    let timing = compare(&one, &other, &[Metric::EncodeNs], Thresholds::default()).unwrap();
    assert_eq!(timing.verdict(), Verdict::Inconclusive, "{timing:?}");
    assert_eq!(timing.metrics[0].interval_pct, None);
    // Five a side: judged, with an interval (the rows' timings drift by repetition
    // the same way on both sides, so no regression).
    let five = results(dir.path(), "five.msr", 200, 5, 1.0);
    let again = results(dir.path(), "again.msr", 200, 5, 1.0);
    let judged = compare(&five, &again, &[Metric::MmeNs], Thresholds::default()).unwrap();
    assert_eq!(judged.verdict(), Verdict::Ok, "{judged:?}");
    assert!(judged.metrics[0].interval_pct.is_some());
    // One more MME instruction anywhere is a count regression.
    let more = results(dir.path(), "more.msr", 200, 1, 1.01);
    let c = compare(&one, &more, &[], Thresholds::default()).unwrap();
    assert_eq!(c.verdict(), Verdict::Regressed, "{c:?}");
}

#[test]
fn results_without_state_costs_read_as_made_by_an_older_version() {
    let dir = tempfile::tempdir().unwrap();
    // Written without draw states, as files from before they existed.
    let path = results(dir.path(), "old.msr", 100, 1, 1.0);
    let report = Report::build(&path, GroupBy::StateGroup, 0, Metric::MmeInstructions).unwrap();
    assert!(!report.has_state);
    assert_eq!(report.draws, 100);
    // Every dword is the draw macro's.
    let macro_row = report.state_groups.last().unwrap();
    assert_eq!(macro_row.dwords, 100 * 7);
    assert!(report.state_groups[..6].iter().all(|g| g.dwords == 0));
}

/// Rows whose blend state costs `blend_dwords` more on every fifth draw.
fn results_with_blend(dir: &Path, name: &str, blend_dwords: u32) -> PathBuf {
    let path = dir.join(name);
    let mut run = RunInfoT::default();
    run.mme_arch = MmeArch::Turing;
    run.repetitions = 1;
    let mut w = ResultsWriter::create(&path, run, &WriterOptions::default()).unwrap();
    for seq in 0..50u64 {
        let extra = if seq % 5 == 0 { blend_dwords } else { 0 };
        // 2 vertex-input methods in 6 dwords, blend 1 method in 2 dwords (+ extra).
        let state = RowState {
            state: DrawState::new(2, 6, 0, 0, 0, 0, 0, 0, 1, 2 + extra, 0, 0),
            ..RowState::default()
        };
        let row = DrawRow::new(
            seq,
            0x10,
            0,
            0,
            0,
            DrawKind::Draw,
            1,
            1,
            1,
            3,
            1,
            100,
            3 + 4 + 1,
            8 + 7 + extra,
            1,
            0,
            0,
            1000,
            5000,
            100,
            0,
        );
        w.push_draw_with_state(row, state).unwrap();
    }
    w.finish(&[]).unwrap();
    path
}

#[test]
fn compare_says_which_state_group_moved() {
    let dir = tempfile::tempdir().unwrap();
    let base = results_with_blend(dir.path(), "a.msr", 0);
    let new = results_with_blend(dir.path(), "b.msr", 4);
    let c = compare(&base, &new, &[], Thresholds::default()).unwrap();
    assert_eq!(c.verdict(), Verdict::Regressed);
    let counts: Vec<Metric> = c.metrics.iter().map(|m| m.metric).collect();
    let found = analyzer::changes::changes(&base, &new, &counts, 5).unwrap();
    let dwords = found
        .metrics
        .iter()
        .find(|m| m.metric == "dwords")
        .expect("dwords moved");
    // Only the blend group moved, on ten draws; the draw macro's own dwords did not.
    let groups = &dwords.groups["state group"];
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert_eq!(groups[0].group, "blend");
    assert_eq!((groups[0].hurt, groups[0].helped), (10, 0));
    assert_eq!(groups[0].new - groups[0].base, 40);
    assert!(found.metrics.iter().all(|m| m.metric != "methods"));
}
