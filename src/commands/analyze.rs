//! `macroscope report`, `compare` and `export`: the analyzer on results files.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use analyzer::changes::{changes, Changes};
use analyzer::compare::{
    compare as compare_runs, Comparison, MetricComparison, Thresholds, Verdict,
    MIN_TIMING_REPETITIONS,
};
use analyzer::export::{export as export_rows, Format};
use analyzer::report::{PERCENTILES, STATE_GROUP_ROWS};
use analyzer::{GroupBy, Metric, Report};

use super::BadInput;

fn metric(name: &str) -> Result<Metric, String> {
    Metric::from_name(name).ok_or_else(|| {
        let names: Vec<_> = Metric::ALL.iter().map(|m| m.name()).collect();
        format!("unknown metric `{name}` (one of: {})", names.join(", "))
    })
}

/// How `report` groups.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum By {
    /// The draw command.
    Kind,
    /// Views in the view mask.
    ViewCount,
    /// The bound pipeline.
    Pipeline,
    /// The frame.
    Frame,
    /// The graphics state the draws' flushes emitted, by group.
    StateGroup,
    /// The render pass instance (dynamic rendering included, secondaries in their
    /// pass).
    Pass,
    /// The debug-label region (`vkCmdBeginDebugUtilsLabelEXT`), nested labels as a
    /// path `a/b/c`.
    Label,
}

/// Arguments of `macroscope report`.
#[derive(clap::Args)]
pub struct ReportArgs {
    /// A results file (.msr).
    results: PathBuf,
    /// Break totals down by this.
    #[arg(long, value_enum, default_value = "kind")]
    by: By,
    /// List this many of the costliest draws.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// The metric that ranks the costliest draws.
    #[arg(long, default_value = "mme-instructions", value_parser = metric)]
    metric: Metric,
    /// Also write plots (SVG and PNG) into this folder.
    #[arg(long)]
    plot: Option<PathBuf>,
}

/// Prints the report.
pub fn report(args: &ReportArgs) -> anyhow::Result<()> {
    let by = match args.by {
        By::Kind => GroupBy::Kind,
        By::ViewCount => GroupBy::ViewCount,
        By::Pipeline => GroupBy::Pipeline,
        By::Frame => GroupBy::Frame,
        By::StateGroup => GroupBy::StateGroup,
        By::Pass => GroupBy::Pass,
        By::Label => GroupBy::Label,
    };
    let report = Report::build(&args.results, by, args.top, args.metric)?;
    let mut out = BufWriter::new(io::stdout().lock());
    if let Some(run) = &report.run {
        writeln!(
            out,
            "{}: trace {}, {}, {} repetition(s)",
            args.results.display(),
            run.trace_path.as_deref().unwrap_or("?"),
            gpu_phrase(run),
            run.repetitions
        )?;
    }
    let others = if report.other_rows > 0 {
        format!(
            " and {} rows of other commands (dispatches, transfers, clears, barriers: see --by kind)",
            report.other_rows
        )
    } else {
        String::new()
    };
    match &report.totals {
        Some(t) => writeln!(
            out,
            "{} frames, {} draws{others}, {} submits; the driver model executed {} of {} recorded vkCmd* calls ({:.1}%)\n",
            t.frames,
            report.draws,
            report.submits,
            t.executed_commands,
            t.recorded_commands,
            super::info::share(t.executed_commands, t.recorded_commands)
        )?,
        None => writeln!(
            out,
            "{} draws{others}, {} submits\n",
            report.draws, report.submits
        )?,
    }
    if let (n @ 1.., Some(first)) = &report.failed_rows {
        writeln!(
            out,
            "{n} row(s) are calls the GPU model could not finish (first: {first})\n"
        )?;
    }
    write_frame_spreads(&mut out, &report)?;
    write!(out, "{:<18} {:>12}", "metric", "mean")?;
    for (_, name) in PERCENTILES {
        write!(out, " {name:>12}")?;
    }
    writeln!(out, "  unit")?;
    for m in Metric::ALL {
        let h = report.histogram(m);
        // GPU time exists only for a device replay with timing: no row of zeros for
        // what was never measured.
        if m == Metric::GpuNs && h.max() == 0 {
            continue;
        }
        write!(out, "{:<18} {:>12.1}", m.name(), h.mean())?;
        for (q, _) in PERCENTILES {
            write!(out, " {:>12}", h.value_at_quantile(q))?;
        }
        writeln!(out, "  {}", m.unit())?;
    }
    writeln!(out, "\nby {:?}:", args.by)?;
    if by == GroupBy::StateGroup {
        write_state_groups(&mut out, &report)?;
    } else {
        let width = report
            .groups
            .keys()
            .map(String::len)
            .max()
            .unwrap_or(0)
            .max(24);
        writeln!(
            out,
            "{:<width$} {:>10} {:>16} {:>12} {:>12} {:>14}",
            "group", "rows", "mme-instructions", "dwords", "hw-draws", "execute-ns"
        )?;
        for (key, g) in &report.groups {
            writeln!(
                out,
                "{key:<width$} {:>10} {:>16} {:>12} {:>12} {:>14}",
                g.draws, g.sums[0], g.sums[2], g.sums[3], g.sums[5]
            )?;
        }
    }
    if !report.top.is_empty() {
        writeln!(
            out,
            "\ncostliest draws by {} (find them with `macroscope dump TRACE`):",
            args.metric.name()
        )?;
        for t in &report.top {
            let frame = if report.is_teardown(t.frame) {
                "teardown".to_string()
            } else {
                format!("frame {}", t.frame)
            };
            writeln!(
                out,
                "  #{:<10} {frame:<12} {:<29} view mask {:#010x} {:>12}",
                t.seq, t.kind, t.view_mask, t.value
            )?;
        }
    }
    if let Some(dir) = &args.plot {
        let files = analyzer::plots::report_plots(&report, dir)?;
        writeln!(out, "\nwrote {} plots to {}", files.len(), dir.display())?;
    }
    out.flush()?;
    Ok(())
}

/// A run of frames (a game's): each frame's cost by the model's counts, spread over the
/// frames, and how many draws repeat the one before them.
fn write_frame_spreads(out: &mut impl Write, report: &Report) -> io::Result<()> {
    let spreads = report.frame_spreads();
    if spreads.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "per frame (the frame's sum over its rows; host time is the model's own):"
    )?;
    writeln!(
        out,
        "{:<18} {:>12} {:>12} {:>12} {:>12}  in frame",
        "", "mean", "p50", "p90", "max"
    )?;
    for s in &spreads {
        writeln!(
            out,
            "{:<18} {:>12.1} {:>12} {:>12} {:>12}  {}",
            s.name, s.mean, s.p50, s.p90, s.max.0, s.max.1
        )?;
    }
    if report.has_state && report.draws > 0 {
        writeln!(
            out,
            "draws that repeat the draw before them (same command, pipeline and cost in every state group): {} of {} ({:.1}%)",
            report.repeated_draws,
            report.draws,
            report.repeated_draws as f64 * 100.0 / report.draws as f64
        )?;
    }
    writeln!(out)
}

/// The state groups' table: what the draws' flushes emitted per group, and the draw
/// macros' own share.
fn write_state_groups(out: &mut impl Write, report: &Report) -> io::Result<()> {
    if !report.has_state {
        writeln!(
            out,
            "(this results file holds no state costs: it was made by an older version)"
        )?;
        return Ok(());
    }
    let all_dwords: u64 = report.state_groups.iter().map(|g| g.dwords).sum();
    writeln!(
        out,
        "{:<16} {:>10} {:>12} {:>12} {:>8} {:>12}",
        "group", "draws", "methods", "dwords", "share", "mme"
    )?;
    for (name, g) in STATE_GROUP_ROWS.iter().zip(&report.state_groups) {
        let share = if all_dwords == 0 {
            0.0
        } else {
            g.dwords as f64 * 100.0 / all_dwords as f64
        };
        writeln!(
            out,
            "{name:<16} {:>10} {:>12} {:>12} {share:>7.1}% {:>12}",
            g.draws, g.methods, g.dwords, g.mme_instructions
        )?;
    }
    Ok(())
}

/// Arguments of `macroscope compare`.
#[derive(clap::Args)]
pub struct CompareArgs {
    /// The baseline results.
    base: PathBuf,
    /// The results to judge.
    new: PathBuf,
    /// Metrics to compare (every exact count when none is given; timings only when
    /// named, and judged only with at least 5 repetitions a side).
    #[arg(long = "metric", value_parser = metric)]
    metrics: Vec<Metric>,
    /// A timing regresses when its change's interval lies wholly past this many percent.
    #[arg(long, default_value_t = 2.0)]
    threshold: f64,
    /// A count regresses when it grows by more than this many percent (by default, any
    /// growth).
    #[arg(long, default_value_t = 0.0)]
    count_threshold: f64,
    /// Also write the compared metrics' distributions, overlaid, into this folder.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// How to print: text, markdown (for a CI comment) or json (for tools).
    #[arg(long, value_enum, default_value = "text")]
    format: CompareFormat,
    /// Rows listed per changed metric, largest change first.
    #[arg(long, default_value_t = 10)]
    top: usize,
}

/// `compare`'s output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum CompareFormat {
    /// Aligned columns.
    Text,
    /// Tables for an issue or CI comment.
    Markdown,
    /// One JSON object.
    Json,
}

/// Prints the comparison and returns its verdict.
pub fn compare(args: &CompareArgs) -> anyhow::Result<Verdict> {
    for (name, value) in [
        ("threshold", args.threshold),
        ("count threshold", args.count_threshold),
    ] {
        if value.is_nan() || value < 0.0 {
            return Err(BadInput(format!("{name} {value} is not a percentage")).into());
        }
    }
    let thresholds = Thresholds {
        counts_pct: args.count_threshold,
        timings_pct: args.threshold,
    };
    let c = compare_runs(&args.base, &args.new, &args.metrics, thresholds)?;
    let compared: Vec<Metric> = c.metrics.iter().map(|m| m.metric).collect();
    let where_ = changes(&args.base, &args.new, &compared, args.top)?;
    let mut out = io::stdout().lock();
    match args.format {
        CompareFormat::Json => {
            write_json(&mut out, &c, &where_)?;
            return Ok(c.verdict());
        }
        CompareFormat::Markdown => {
            write_markdown(&mut out, &c, &where_)?;
            return Ok(c.verdict());
        }
        CompareFormat::Text => {}
    }
    writeln!(
        out,
        "{:<18} {:>16} {:>16} {:>10} {:>22}  verdict",
        "metric", "base", "new", "change", "95% interval"
    )?;
    for m in &c.metrics {
        writeln!(
            out,
            "{:<18} {:>16.0} {:>16.0} {:>+9.2}% {:>22}  {}",
            m.metric.name(),
            m.base,
            m.new,
            m.change_pct,
            interval_text(m),
            m.verdict.word()
        )?;
    }
    write_changes_text(&mut out, &where_)?;
    write_gpu_comparison(&mut out, &args.base, &args.new)?;
    if let Some(dir) = &args.plot {
        let base = Report::build(&args.base, GroupBy::Kind, 0, Metric::MmeInstructions)?;
        let new = Report::build(&args.new, GroupBy::Kind, 0, Metric::MmeInstructions)?;
        for m in &c.metrics {
            analyzer::plots::ab_plot(&base, &new, m.metric, dir)?;
        }
        writeln!(out, "wrote the A/B plots to {}", dir.display())?;
    }
    writeln!(out, "{}", summary_line(&c))?;
    Ok(c.verdict())
}

/// The interval column: the bootstrap's, the repetitions a timing lacked, or `exact`.
fn interval_text(m: &MetricComparison) -> String {
    match m.interval_pct {
        Some((lo, hi)) => format!("[{lo:+.1}%, {hi:+.1}%]"),
        None if m.metric.is_timing() => {
            format!("{} vs {} repetitions", m.repetitions.0, m.repetitions.1)
        }
        None => "exact".to_string(),
    }
}

/// The verdict in words, with the thresholds.
fn summary_line(c: &Comparison) -> String {
    let summary = match c.verdict() {
        Verdict::Ok => "no regression".to_string(),
        Verdict::Regressed => "regression".to_string(),
        Verdict::Inconclusive => format!(
            "inconclusive: timings need at least {MIN_TIMING_REPETITIONS} repetitions a side (replay --repeat)"
        ),
    };
    format!(
        "{summary} (counts: any growth past {:.1}%; timings: past {:.1}%)",
        c.thresholds.counts_pct, c.thresholds.timings_pct
    )
}

fn signed_change(base: u64, new: u64) -> String {
    let d = new as i128 - base as i128;
    if base == 0 {
        format!("{d:+}")
    } else {
        format!("{d:+} ({:+.2}%)", d as f64 * 100.0 / base as f64)
    }
}

/// Where the counts changed: per metric, helped/hurt by group, the top rows; then the
/// rows only one side has.
fn write_changes_text(out: &mut impl Write, w: &Changes) -> anyhow::Result<()> {
    if w.matched_by == "identity" {
        writeln!(
            out,
            "\nthe runs replayed different traces: rows matched frame by frame by what they draw"
        )?;
    }
    for m in &w.metrics {
        writeln!(out, "\nwhere {} changed:", m.metric)?;
        for (by, groups) in &m.groups {
            writeln!(
                out,
                "  by {by}:\n    {:<36} {:>8} {:>8} {:>14} {:>14}  change",
                "group", "helped", "hurt", "base", "new"
            )?;
            for g in groups {
                writeln!(
                    out,
                    "    {:<36} {:>8} {:>8} {:>14} {:>14}  {}",
                    g.group,
                    g.helped,
                    g.hurt,
                    g.base,
                    g.new,
                    signed_change(g.base, g.new)
                )?;
            }
        }
        writeln!(out, "  largest changes:")?;
        for r in &m.top {
            writeln!(
                out,
                "    #{:<10} frame {:<6} {:<32} {:>10} -> {:<10} {}",
                r.seq,
                r.frame,
                r.kind,
                r.base,
                r.new,
                signed_change(r.base, r.new)
            )?;
        }
    }
    if w.added_count + w.removed_count > 0 {
        writeln!(
            out,
            "\nrows only in the new run: {} {:?}; only in the base run: {} {:?}",
            w.added_count, w.added, w.removed_count, w.removed
        )?;
    }
    Ok(())
}

/// The comparison as Markdown tables, for an issue or a CI comment.
fn write_markdown(out: &mut impl Write, c: &Comparison, w: &Changes) -> anyhow::Result<()> {
    writeln!(out, "### macroscope compare: {}\n", c.verdict().word())?;
    writeln!(out, "| metric | base | new | change | interval | verdict |")?;
    writeln!(out, "|---|---:|---:|---:|---|---|")?;
    for m in &c.metrics {
        writeln!(
            out,
            "| {} | {:.0} | {:.0} | {:+.2}% | {} | {} |",
            m.metric.name(),
            m.base,
            m.new,
            m.change_pct,
            interval_text(m),
            m.verdict.word()
        )?;
    }
    for m in &w.metrics {
        writeln!(out, "\n#### Where `{}` changed\n", m.metric)?;
        for (by, groups) in &m.groups {
            writeln!(out, "By {by}:\n")?;
            writeln!(out, "| group | helped | hurt | base | new | change |")?;
            writeln!(out, "|---|---:|---:|---:|---:|---:|")?;
            for g in groups {
                writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} |",
                    g.group,
                    g.helped,
                    g.hurt,
                    g.base,
                    g.new,
                    signed_change(g.base, g.new)
                )?;
            }
            writeln!(out)?;
        }
        writeln!(out, "Largest changes:\n")?;
        writeln!(out, "| row | frame | command | base | new | change |")?;
        writeln!(out, "|---:|---:|---|---:|---:|---:|")?;
        for r in &m.top {
            writeln!(
                out,
                "| #{} | {} | {} | {} | {} | {} |",
                r.seq,
                r.frame,
                r.kind,
                r.base,
                r.new,
                signed_change(r.base, r.new)
            )?;
        }
    }
    if w.added_count + w.removed_count > 0 {
        writeln!(
            out,
            "\nRows only in the new run: {}; only in the base run: {}.",
            w.added_count, w.removed_count
        )?;
    }
    writeln!(out, "\n{}", summary_line(c))?;
    Ok(())
}

/// The comparison as one JSON object.
fn write_json(out: &mut impl Write, c: &Comparison, w: &Changes) -> anyhow::Result<()> {
    let metrics: Vec<serde_json::Value> = c
        .metrics
        .iter()
        .map(|m| {
            serde_json::json!({
                "metric": m.metric.name(),
                "base": m.base,
                "new": m.new,
                "change_pct": m.change_pct,
                "interval_pct": m.interval_pct.map(|(lo, hi)| [lo, hi]),
                "repetitions": [m.repetitions.0, m.repetitions.1],
                "verdict": m.verdict.word().to_lowercase(),
            })
        })
        .collect();
    let value = serde_json::json!({
        "verdict": c.verdict().word().to_lowercase(),
        "thresholds_pct": { "counts": c.thresholds.counts_pct, "timings": c.thresholds.timings_pct },
        "metrics": metrics,
        "changes": w,
    });
    serde_json::to_writer_pretty(&mut *out, &value)?;
    writeln!(out)?;
    Ok(())
}

/// Export formats.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum ExportFormat {
    /// Comma-separated values.
    Csv,
    /// JSON Lines, one object per draw.
    Json,
    /// Chrome/Perfetto trace-event JSON.
    Perfetto,
    /// Every row's counts as text, no host times, runs of equal rows folded: diff two.
    Counts,
}

/// Arguments of `macroscope export`.
#[derive(clap::Args)]
pub struct ExportArgs {
    /// A results file (.msr).
    results: PathBuf,
    /// The format.
    #[arg(long, value_enum)]
    format: ExportFormat,
    /// Where to write (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
}

/// Writes the export.
pub fn export(args: &ExportArgs) -> anyhow::Result<()> {
    let format = match args.format {
        ExportFormat::Csv => Format::Csv,
        ExportFormat::Json => Format::Json,
        ExportFormat::Perfetto => Format::Perfetto,
        ExportFormat::Counts => Format::Counts,
    };
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(BufWriter::new(std::fs::File::create(path)?)),
        None => Box::new(BufWriter::new(io::stdout().lock())),
    };
    export_rows(&args.results, format, &mut out)?;
    Ok(())
}

/// The GPU a run modelled, for people: `GA102 (0x172, Ampere)`, or in files written
/// before the GPU was recorded, its MME generation.
fn gpu_phrase(run: &trace_format::generated::results::RunInfoT) -> String {
    let gpu = match &run.gpu {
        Some(gpu) => format!("GPU {gpu}"),
        None => format!("MME {:?}", run.mme_arch),
    };
    match &run.nvk {
        Some(nvk) => format!("{gpu}, NVK {nvk}"),
        None => gpu,
    }
}

/// Where the two runs modelled different GPUs or NVK releases (one trace replayed with
/// `--chipset` on two generations): each state group's cost on each, so the
/// comparison says what the generation changes. Nothing when both ran alike.
fn write_gpu_comparison(out: &mut impl Write, base: &Path, new: &Path) -> anyhow::Result<()> {
    let base = Report::build(base, GroupBy::StateGroup, 0, Metric::MmeInstructions)?;
    let new = Report::build(new, GroupBy::StateGroup, 0, Metric::MmeInstructions)?;
    let gpu = |r: &Report| r.run.as_ref().map(gpu_phrase).unwrap_or_default();
    let (base_gpu, new_gpu) = (gpu(&base), gpu(&new));
    if base_gpu == new_gpu || !base.has_state || !new.has_state {
        return Ok(());
    }
    writeln!(
        out,
        "\nper state group, base ({base_gpu}) -> new ({new_gpu}); methods, dwords, MME instructions:"
    )?;
    for ((name, b), n) in STATE_GROUP_ROWS
        .iter()
        .zip(&base.state_groups)
        .zip(&new.state_groups)
    {
        if b.dwords == 0 && n.dwords == 0 && b.mme_instructions == 0 && n.mme_instructions == 0 {
            continue;
        }
        writeln!(
            out,
            "  {name:<18} {:>10} {:>10} {:>12}  ->  {:>10} {:>10} {:>12}",
            b.methods, b.dwords, b.mme_instructions, n.methods, n.dwords, n.mme_instructions
        )?;
    }
    Ok(())
}
