//! `macroscope replay`: a trace through the bundled NVK model, into a results file.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use driver::chipset::Chipset;
use driver::mme::Arch;
use indicatif::{ProgressBar, ProgressStyle};
use replayer::{replay, ReplayOptions, Summary};
use trace_format::names;
use trace_format::{ReadOptions, ResultsReader, SkippedCall};

use super::{BadInput, FrameRange};

/// The MME to simulate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mme {
    /// Turing and later (TU104's instruction set).
    Turing,
    /// Fermi through Volta.
    Fermi,
}

impl Mme {
    /// The driver model's instruction set.
    pub fn arch(self) -> Arch {
        match self {
            Mme::Turing => Arch::Turing,
            Mme::Fermi => Arch::Fermi,
        }
    }
}

/// `--chipset` as a value parser: a name (`ga102`) or an id (`0x172`).
pub(crate) fn parse_chipset(s: &str) -> Result<Chipset, String> {
    Chipset::parse(s)
}

/// The GPU the model drives: `--chipset`, else `--mme`'s representative (a Turing
/// TU102; before Turing, a Volta GV100), else a TU102. Both given must agree.
pub(crate) fn chosen_chipset(
    chipset: Option<Chipset>,
    mme: Option<Mme>,
) -> Result<Chipset, BadInput> {
    match (chipset, mme) {
        (Some(c), Some(m)) if c.arch() != m.arch() => Err(BadInput(format!(
            "chipset {} runs the {} MME, not the one --mme names",
            c.describe(),
            c.arch().name()
        ))),
        (Some(c), _) => Ok(c),
        (None, Some(m)) => Ok(Chipset::for_arch(m.arch())),
        (None, None) => Ok(Chipset::for_arch(Arch::Turing)),
    }
}

/// Arguments of `macroscope replay`.
#[derive(clap::Args)]
pub struct Args {
    /// The trace (.mscope).
    pub(crate) trace: PathBuf,
    /// Where to write the results (default: the trace's name with .msr).
    #[arg(short, long)]
    pub(crate) output: Option<PathBuf>,
    /// The GPU the model drives, by chip or chipset id: gk104 (0xe4), gm107 (0x117),
    /// gm200 (0x120), gp104 (0x134), gv100 (0x140), tu102 (0x162, the default), ga102
    /// (0x172), ad102 (0x192), or another chip of those generations.
    #[arg(long, value_parser = parse_chipset)]
    chipset: Option<Chipset>,
    /// Shorthand for a GPU of an MME generation: `turing` a TU102, `fermi` (the
    /// pre-Turing MME) a Volta GV100.
    #[arg(long, value_enum)]
    mme: Option<Mme>,
    /// Only execute submits in these frames, e.g. `10-20`.
    #[arg(long)]
    frames: Option<FrameRange>,
    /// Replay the whole trace this many times (timings per repetition; counts must agree).
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// List every call the model skipped, not only the most frequent.
    #[arg(short, long)]
    verbose: bool,
    /// Fail (exit 2) when the driver model could not execute a call the replay
    /// needed, or could not finish one, naming the first; the results are still written.
    #[arg(long)]
    strict: bool,
    /// The most MME instructions one call may run; a draw's own budget follows the
    /// hardware draws it asks for, up to this.
    #[arg(long, default_value_t = replayer::DEFAULT_MME_BUDGET)]
    mme_budget: u64,
    /// Run every macro call on the simulator, also one that repeats a call seen before
    /// (the same macro, parameters and state read), which is otherwise replayed from
    /// what it emitted then. The counts are the same either way; this is for checking.
    #[arg(long)]
    simulate_every_macro: bool,
    /// Replay on a real Vulkan device through the system's loader instead of the
    /// driver model: every object recreated, command buffers recorded and submitted
    /// in trace order, swapchains replaced by offscreen images.
    #[arg(long)]
    device: bool,
    /// With --device: the physical device to use, by its place in the loader's list.
    #[arg(long, requires = "device")]
    gpu: Option<usize>,
    /// With --device: write each presented frame into this folder as a PNG.
    #[arg(long, requires = "device")]
    dump_frames: Option<PathBuf>,
    /// With --device: read every presented frame back and print its checksum.
    #[arg(long, requires = "device")]
    frame_checksums: bool,
    /// With --device: compare every presented frame with the checksum the capture
    /// recorded; exit 1 when one differs.
    #[arg(long, requires = "device")]
    check_frames: bool,
    /// With --device: leave out the device extensions and switch off the features the
    /// trace enabled that the device lacks (with a note) instead of refusing the
    /// trace; a call that needs one then fails where it is made.
    #[arg(long, requires = "device")]
    switch_off_missing: bool,
    /// With --device: time every draw on the GPU between two timestamp queries and
    /// write the results file with `gpu-ns` beside the driver model's counts.
    #[arg(long, requires = "device")]
    gpu_timing: bool,
    /// With --device: replay the frames (--frames, else all) this many times; the
    /// first pass makes the objects and warms caches and is reported apart. With
    /// --gpu-timing, pass N's times are repetition N's in the results.
    #[arg(
        long = "loop",
        value_name = "N",
        requires = "device",
        default_value_t = 1
    )]
    loops: u32,
}

/// Skipped calls listed without `--verbose`.
const TOP_SKIPPED: usize = 8;

/// Replays, with a progress bar on a terminal, and prints the summary.
pub fn run(args: &Args) -> anyhow::Result<()> {
    if args.device {
        return run_on_device(args);
    }
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.trace.with_extension("msr"));
    let options = ReplayOptions {
        chipset: chosen_chipset(args.chipset, args.mme)?,
        frames: args.frames.map(|f| (f.first, f.last)),
        repeat: args.repeat.max(1),
        read: ReadOptions::for_replay(),
        mme_budget: args.mme_budget,
        remember_macro_runs: !args.simulate_every_macro,
    };
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template(
                "{spinner} replaying {wide_bar} {bytes}/{total_bytes} ({eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });
    let repeat = u64::from(options.repeat);
    let mut pass_base = 0u64;
    let mut last = 0u64;
    let mut progress = |pos: u64, total: u64| {
        if let Some(bar) = &bar {
            if pos < last {
                pass_base += total;
            }
            last = pos;
            bar.set_length(total * repeat);
            bar.set_position(pass_base + pos);
        }
    };
    let before = file_stamp(&output);
    let result = replay(&args.trace, &output, &options, &mut progress);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let summary = match result {
        Ok(summary) => summary,
        Err(e) => {
            let context = match rows_written_since(&output, before) {
                Some(rows) => format!(
                    "replaying {} (the {rows} rows before the error are in {})",
                    args.trace.display(),
                    output.display()
                ),
                None => format!("replaying {}", args.trace.display()),
            };
            return Err(anyhow::Error::new(e).context(context));
        }
    };
    println!(
        "replayed {} on {}: {}, {} submits, {} draws{}, {} hardware draws, {} MME instructions ({} in its rows, as report and compare sum them), {} repetition(s) in {:.2?} -> {}",
        args.trace.display(),
        options.chipset.describe(),
        frames_phrase(&summary),
        summary.submits,
        summary.draws,
        [
            (summary.dispatches, "dispatches and transfers"),
            (summary.clears, "clears"),
            (summary.barriers, "barriers")
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!(", {n} {what}"))
        .collect::<String>(),
        summary.hw_draws,
        summary.mme_instructions,
        summary.row_mme_instructions,
        options.repeat,
        summary.wall,
        output.display()
    );
    print_coverage(&summary, args.verbose);
    print_failures(&summary);
    if args.strict {
        if let Some(f) = summary.failed.first() {
            return Err(BadInput(format!(
                "--strict: the driver model could not finish call #{}: {}",
                f.first.0, f.first.1
            ))
            .into());
        }
        if let Some(first) = &summary.first_unmodelled {
            let needed: u64 = summary
                .skipped
                .iter()
                .filter(|s| s.needed)
                .map(|s| s.count)
                .sum();
            return Err(BadInput(format!(
                "--strict: the driver model could not execute {} (call #{}), the first of {needed} such call(s); `replay -v` lists them",
                first.name, first.seq
            ))
            .into());
        }
    }
    Ok(())
}

/// The calls the GPU model could not finish, by why (their rows say so too).
fn print_failures(summary: &Summary) {
    let total: u64 = summary.failed.iter().map(|f| f.count).sum();
    if total == 0 {
        return;
    }
    println!(
        "{total} call(s) could not be finished; their rows are marked and the replay went on:"
    );
    for f in &summary.failed {
        println!(
            "  {} × {} (first: call #{}: {})",
            f.count, f.reason, f.first.0, f.first.1
        );
    }
}

/// "3 frames", with the submits after the last frame named as teardown.
fn frames_phrase(summary: &Summary) -> String {
    let frames = plural(summary.frames, "frame");
    match (summary.frames, summary.teardown_submits) {
        (_, 0) => frames,
        (0, n) => format!(
            "{frames} (no frame boundary: {} outside any frame)",
            plural(n, "submit")
        ),
        (_, n) => format!("{frames} + teardown ({})", plural(n, "submit")),
    }
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The share of recorded `vkCmd*` calls the model executed, and what it skipped:
/// the most frequent names, or all of them with `verbose`.
fn print_coverage(summary: &Summary, verbose: bool) {
    let (executed, recorded) = (summary.executed_commands, summary.recorded_commands);
    let share = super::info::share(executed, recorded);
    println!("driver model executed {executed} of {recorded} recorded vkCmd* calls ({share:.1}%)");
    let mut skipped: Vec<&SkippedCall> = summary.skipped.iter().collect();
    skipped.sort_by(|a, b| b.count.cmp(&a.count).then(a.name.cmp(&b.name)));
    // Without -v: the skipped vkCmd* calls the share counts, the most frequent first,
    // and any other call the model needed and could not follow.
    let (shown, rest): (Vec<&SkippedCall>, Vec<&SkippedCall>) = if verbose {
        (skipped, Vec::new())
    } else {
        let (mut commands, mut rest): (Vec<_>, Vec<_>) = skipped
            .into_iter()
            .partition(|c| c.needed || names::is_recorded_command(&c.name));
        if commands.len() > TOP_SKIPPED {
            rest.extend(commands.split_off(TOP_SKIPPED));
        }
        (commands, rest)
    };
    if !shown.is_empty() {
        let others_needed = shown.iter().any(|c| !names::is_recorded_command(&c.name));
        println!(
            "skipped {}, by count:",
            match (verbose, others_needed) {
                (true, _) => "calls",
                (false, false) => "vkCmd* calls",
                (false, true) => "vkCmd* calls and calls the model needed",
            }
        );
    }
    let width = shown.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for call in &shown {
        let why = if call.needed {
            "not modelled"
        } else {
            "not needed"
        };
        println!("  {:<width$} {:>10}  {why}", call.name, call.count);
    }
    if !rest.is_empty() {
        let calls: u64 = rest.iter().map(|c| c.count).sum();
        println!(
            "  and {calls} other calls skipped under {} names (-v lists them all)",
            rest.len()
        );
    }
}

/// A file's modification time and length, where it exists.
fn file_stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// The rows the results file at `path` holds, when the replay wrote it (it is not as
/// `before` found it) and it holds some.
fn rows_written_since(path: &Path, before: Option<(SystemTime, u64)>) -> Option<u64> {
    // A file the replay did not touch is as it was (the file system's clock is too
    // coarse to compare its time with the replay's start).
    let now = file_stamp(path)?;
    if before == Some(now) {
        return None;
    }
    let mut rows = 0u64;
    for chunk in ResultsReader::open(path).ok()? {
        let Ok(chunk) = chunk else { break };
        rows += (chunk.draws().count() + chunk.submits().count()) as u64;
    }
    (rows > 0).then_some(rows)
}

/// `replay --device`: the trace on a real Vulkan device.
fn run_on_device(args: &Args) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let options = replayer::device::DeviceOptions {
        gpu: args.gpu,
        dump_frames: args.dump_frames.clone(),
        read_frames: args.frame_checksums || args.check_frames,
        gpu_timing: args.gpu_timing,
        frames: args.frames.map(|f| (f.first, f.last)),
        loops: args.loops.max(1),
        switch_off_missing: args.switch_off_missing,
    };
    let summary = replayer::device::replay_on_device(&args.trace, &options, &mut |_, _| {})
        .map_err(|e| {
            let bad_input = e.is_bad_input();
            let message = format!("replaying {} on a device: {e}", args.trace.display());
            if bad_input {
                anyhow::Error::new(BadInput(message))
            } else {
                anyhow::anyhow!(message)
            }
        })?;
    writeln!(
        out,
        "replayed {} on {}: {} calls, {} submits, {} frames read back in {:.2?}",
        args.trace.display(),
        summary.device,
        summary.calls,
        summary.submits,
        summary.frames.len(),
        summary.wall
    )?;
    write_memory_use(&mut out, &summary.memory)?;
    if args.frame_checksums {
        for f in &summary.frames {
            writeln!(
                out,
                "frame {:>6}  #{:<10} crc32 {:08x}",
                f.frame, f.seq, f.checksum
            )?;
        }
    }
    if let Some(dir) = &args.dump_frames {
        writeln!(
            out,
            "{} frames written to {}",
            summary.frames.len(),
            dir.display()
        )?;
    }
    if summary.devices_made_again > 0 {
        writeln!(
            out,
            "{} device(s) made while one that asked for the same extensions and features lived: replayed as that one (one queue, whose channel runs both devices' work, as `verify` gives the model)",
            summary.devices_made_again
        )?;
    }
    if !summary.skipped.is_empty() {
        let listed: Vec<String> = summary
            .skipped
            .iter()
            .map(|(n, c)| format!("{n} ×{c}"))
            .collect();
        writeln!(out, "answered without the device: {}", listed.join(", "))?;
    }
    if args.gpu_timing {
        write_gpu_timing(&mut out, args, &summary)?;
    }
    if args.check_frames {
        return check_frames(&mut out, &summary);
    }
    if summary.unknown_handles > 0 {
        writeln!(
        out,
            "{} handle(s) inside structures named objects the trace never created; replaced by null",
            summary.unknown_handles
        )?;
    }
    Ok(())
}

/// The device memory line: how many of the trace's allocations the device made, how
/// many resources got memory of their own, and the most held at once.
fn write_memory_use(
    out: &mut impl Write,
    memory: &replayer::device::MemoryUse,
) -> anyhow::Result<()> {
    if memory.allocations == 0 {
        return Ok(());
    }
    let (resources, their) = match memory.own {
        1 => ("resource", "its"),
        _ => ("resources", "their"),
    };
    writeln!(
        out,
        "device memory: {} of the trace's {} allocations made on the device, {} {resources} in memory of {their} own; {:.1} MiB held at most",
        memory.made,
        memory.allocations,
        memory.own,
        memory.peak_bytes as f64 / (1024.0 * 1024.0)
    )?;
    Ok(())
}

/// `--check-frames`: every replayed frame against its captured checksum.
fn check_frames(
    out: &mut impl Write,
    summary: &replayer::device::DeviceSummary,
) -> anyhow::Result<()> {
    if summary.captured_checksums == 0 {
        return Err(BadInput(
            "--check-frames: the trace holds no frame checksums (captured with MACROSCOPE_CAPTURE_FRAME_CHECKSUMS=0, by an older layer, or presenting nothing)".into(),
        )
        .into());
    }
    let checked: Vec<_> = summary
        .frames
        .iter()
        .filter(|f| f.captured.is_some())
        .collect();
    let differing: Vec<_> = checked
        .iter()
        .filter(|f| f.matches() == Some(false))
        .collect();
    for f in differing.iter().take(20) {
        writeln!(
            out,
            "frame {} (#{}) differs: replayed crc32 {:08x}, captured {:08x}",
            f.frame,
            f.seq,
            f.checksum,
            f.captured.unwrap_or_default()
        )?;
    }
    writeln!(
        out,
        "frames checked: {} of {} match the capture{}",
        checked.len() - differing.len(),
        checked.len(),
        if summary.captured_checksums as usize > checked.len() {
            format!(
                " ({} captured checksums had no replayed frame)",
                summary.captured_checksums as usize - checked.len()
            )
        } else {
            String::new()
        }
    )?;
    if differing.is_empty() && summary.captured_checksums as usize == checked.len() {
        Ok(())
    } else {
        Err(anyhow::anyhow!(
            "{} of {} frames differ from the capture",
            differing.len(),
            checked.len()
        ))
    }
}

/// `--gpu-timing`: the driver model's replay of the same trace, its draw rows carrying
/// the GPU times the device replay measured.
fn write_gpu_timing(
    out: &mut impl Write,
    args: &Args,
    summary: &replayer::device::DeviceSummary,
) -> anyhow::Result<()> {
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.trace.with_extension("msr"));
    let mut times = replayer::GpuTimes::new();
    for t in &summary.gpu_times {
        times
            .entry((t.pass, t.submit_seq, t.seq))
            .or_default()
            .push(t.ns);
    }
    let options = ReplayOptions {
        chipset: chosen_chipset(args.chipset, args.mme)?,
        frames: args.frames.map(|f| (f.first, f.last)),
        repeat: args.loops.max(1),
        read: ReadOptions::for_replay(),
        mme_budget: args.mme_budget,
        remember_macro_runs: !args.simulate_every_macro,
    };
    let model = replayer::replay_with_gpu_times(
        &args.trace,
        &output,
        &options,
        Some(&times),
        &mut |_, _| {},
    )
    .map_err(|e| {
        anyhow::Error::new(e).context(format!(
            "replaying {} through the driver model",
            args.trace.display()
        ))
    })?;
    // The first pass warms caches: with --loop it is reported apart from the others.
    let times = |wanted: &dyn Fn(u32) -> bool| -> Vec<u64> {
        let mut t: Vec<u64> = summary
            .gpu_times
            .iter()
            .filter(|t| wanted(t.pass))
            .map(|t| t.ns)
            .collect();
        t.sort_unstable();
        t
    };
    let groups = if args.loops > 1 {
        vec![
            ("pass 0 (warm-up): ".to_string(), times(&|p| p == 0)),
            (
                match args.loops {
                    2 => "pass 1: ".to_string(),
                    n => format!("passes 1-{}: ", n - 1),
                },
                times(&|p| p > 0),
            ),
        ]
    } else {
        vec![(String::new(), times(&|_| true))]
    };
    for (label, sorted) in groups {
        let at = |q: f64| {
            sorted
                .get(((sorted.len() as f64 - 1.0) * q).round() as usize)
                .copied()
                .unwrap_or(0)
        };
        writeln!(
            out,
            "{label}{} draw executions timed on the GPU: median {} ns, p90 {} ns, max {} ns",
            sorted.len(),
            at(0.5),
            at(0.9),
            sorted.last().copied().unwrap_or(0),
        )?;
    }
    writeln!(
        out,
        "{} model rows with their gpu-ns -> {}",
        model.draws + model.dispatches + model.clears + model.barriers,
        output.display()
    )?;
    Ok(())
}
