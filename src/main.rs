//! `macroscope`: the command-line front end. Each subcommand lives in `commands/` and
//! calls into the library crates; this file only parses arguments and maps errors to
//! exit codes (0 success, 1 failure, 2 bad input or usage).

mod commands;

/// mimalloc: the replay's many small allocations cost fewer instructions than with
/// glibc's allocator (6% more draws a second on glxgears).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::io;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "macroscope", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Summarize a trace or results file: header, chunks, frames, calls, sizes.
    Info(commands::info::Args),
    /// Print a trace's records, one line (or JSON object) each.
    Dump(commands::dump::Args),
    /// Histograms, breakdowns and the costliest draws of a results file.
    Report(commands::analyze::ReportArgs),
    /// Compare two results files; exit 1 when a metric regressed (for `git bisect run`).
    Compare(commands::analyze::CompareArgs),
    /// Write a results file's rows as CSV, JSON Lines or Perfetto trace JSON.
    Export(commands::analyze::ExportArgs),
    /// Browse a results file in the terminal, optionally against a baseline.
    Tui(commands::browse::Args),
    /// Run a program under the capture layer and record its Vulkan calls into a trace.
    Capture(commands::capture::Args),
    /// Convert a GFXReconstruct capture (.gfxr) into a trace.
    Import(commands::import::Args),
    /// Replay a trace through the bundled NVK model and write per-draw results.
    Replay(commands::replay::Args),
    /// List a trace's shader modules and what the driver's SPIR-V passes find in them.
    Shaders(commands::shaders::Args),
    /// Write a synthetic trace shaped like real frames, for trying the tools.
    Sample(commands::sample::Args),
    /// Compare the driver model's method stream with what real NVK pushes for the
    /// same trace, draw by draw; exit 1 on an unexplained difference.
    Verify(commands::verify::Args),
    /// Replay a list of traces in parallel and check each one's costs against what the
    /// list expects; exit 1 when one changed, 2 on bad input.
    Ci(commands::ci::Args),
}

/// Lets a closed pipe end the process quietly, as it ends every other Unix tool
/// (`macroscope replay … | head -1`): Rust ignores SIGPIPE, and printing to a closed
/// pipe then panics. Files are written before the lines that name them are printed.
fn die_quietly_on_closed_pipe() {
    // SAFETY: setting a signal's disposition to its default, before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Whether this process's memory was kept off transparent huge pages before
/// [`HUGE_PAGES_OFF_AT_LOAD`] turned them off: what `capture` gives back to the program
/// it starts.
#[cfg(target_os = "linux")]
static HUGE_PAGES_WERE_OFF: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Has the kernel back this process's memory with 4 KiB pages, not transparent huge
/// pages, from before the first allocation (the runtime's, before `main`): run as the
/// executable is loaded. mimalloc asks for huge pages for its arenas, and the kernel
/// zeroes a whole 2 MiB page at the first touch of any byte in it: each thread's first
/// allocations, a vector's first row, the zstd contexts. A replay of the glxgears
/// sample spent 41 % of its process's time so (perf, 40 cold runs) and peaked at
/// 35 MiB resident; on small pages it takes 9.7 ms against 11.3 (median of 30) in
/// 19 MiB, and replays as fast once warm (the storm sample 1.65 M draws a second
/// either way).
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static HUGE_PAGES_OFF_AT_LOAD: extern "C" fn() = {
    extern "C" fn huge_pages_off() {
        // SAFETY: flags of this process's own memory map; no pointer is passed. Where
        // the kernel has no such flag (before Linux 3.15), memory is as it was.
        let was_off = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) } == 1;
        HUGE_PAGES_WERE_OFF.store(was_off, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    }
    huge_pages_off
};

/// Traces from this size on replay faster on transparent huge pages, which `replay`
/// and `verify` give back for them ([`huge_pages_for_trace`]).
const HUGE_PAGES_FROM_BYTES: u64 = 1 << 20;

/// Gives transparent huge pages back as the process found them for a replay of
/// `trace` of [`HUGE_PAGES_FROM_BYTES`] or more. Small pages pay off where the process
/// is short and touches little memory; a trace of megabytes fills the model's memory
/// with what the program wrote through its mappings, a 4 KiB page fault at a time.
/// `replay`, one pass, paired medians of 7 interleaved rounds on a 2-core machine
/// (docs/driver-model.md, *What a replay pays beyond its passes*): KiCad (17 MB)
/// 2.00× as fast on huge pages, Warzone 2100 (4 MB) 1.45×, Endless Sky (62 MB) 1.24×,
/// for 30–135 MiB more resident; traces under a megabyte gain nothing.
fn huge_pages_for_trace(trace: &std::path::Path) {
    if std::fs::metadata(trace).is_ok_and(|m| m.len() >= HUGE_PAGES_FROM_BYTES) {
        huge_pages_as_found();
    }
}

/// Gives transparent huge pages back as the process found them: for `capture`, whose
/// program inherits the setting and must run as it does alone.
fn huge_pages_as_found() {
    #[cfg(target_os = "linux")]
    {
        let off = HUGE_PAGES_WERE_OFF.load(std::sync::atomic::Ordering::Relaxed);
        // SAFETY: as in `HUGE_PAGES_OFF_AT_LOAD`.
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, libc::c_ulong::from(off), 0, 0, 0) };
    }
}

fn main() -> ExitCode {
    die_quietly_on_closed_pipe();
    let cli = Cli::parse();
    if matches!(cli.command, Command::Capture(_)) {
        huge_pages_as_found();
    }
    let result = match cli.command {
        Command::Info(mut args) => {
            readable(&mut args.file).and_then(|_imported| commands::info::run(&args))
        }
        Command::Dump(mut args) => {
            readable(&mut args.file).and_then(|_imported| commands::dump::run(&args))
        }
        Command::Replay(mut args) => readable(&mut args.trace).and_then(|_imported| {
            huge_pages_for_trace(&args.trace);
            commands::replay::run(&args)
        }),
        Command::Import(args) => commands::import::run(&args),
        Command::Report(args) => commands::analyze::report(&args),
        Command::Export(args) => commands::analyze::export(&args),
        // For `git bisect run`: 0 good, 1 bad, 125 skip (cannot tell), 2 bad input.
        Command::Compare(args) => match commands::analyze::compare(&args) {
            Ok(analyzer::compare::Verdict::Regressed) => return ExitCode::from(1),
            Ok(analyzer::compare::Verdict::Inconclusive) => return ExitCode::from(125),
            Ok(analyzer::compare::Verdict::Ok) => Ok(()),
            Err(e) => Err(e),
        },
        Command::Sample(args) => commands::sample::run(&args),
        Command::Tui(args) => commands::browse::run(&args),
        Command::Capture(args) => commands::capture::run(&args),
        Command::Shaders(mut args) => {
            readable(&mut args.trace).and_then(|_imported| commands::shaders::run(&args))
        }
        Command::Ci(args) => match commands::ci::run(&args) {
            Ok(0) => Ok(()),
            Ok(code) => return ExitCode::from(code),
            Err(e) => Err(e),
        },
        Command::Verify(args) => {
            huge_pages_for_trace(args.trace());
            match commands::verify::run(&args) {
                Ok(true) => Ok(()),
                Ok(false) => return ExitCode::from(1),
                Err(e) => Err(e),
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("macroscope: error: {error:#}");
            ExitCode::from(exit_code(&error))
        }
    }
}

/// Points `path` at a trace: a GFXReconstruct capture is imported first, into a
/// temporary file that lives as long as the value returned.
fn readable(path: &mut std::path::PathBuf) -> anyhow::Result<commands::import::Readable> {
    let imported = commands::import::readable(path)?;
    path.clone_from(&imported.path);
    Ok(imported)
}

/// 2 when the input was at fault, 1 otherwise.
fn exit_code(error: &anyhow::Error) -> u8 {
    let bad_input = error.chain().any(|cause| {
        cause
            .downcast_ref::<trace_format::Error>()
            .is_some_and(trace_format::Error::is_bad_input)
            || cause.downcast_ref::<commands::BadInput>().is_some()
            || cause
                .downcast_ref::<trace_format::gfxr::ImportError>()
                .is_some_and(trace_format::gfxr::ImportError::is_bad_input)
            || matches!(
                cause.downcast_ref::<replayer::ReplayError>(),
                Some(replayer::ReplayError::Format(e)) if e.is_bad_input()
            )
            || cause
                .downcast_ref::<analyzer::AnalyzeError>()
                .is_some_and(analyzer::AnalyzeError::is_bad_input)
            || cause
                .downcast_ref::<tui::TuiError>()
                .is_some_and(tui::TuiError::is_bad_input)
    });
    if bad_input {
        2
    } else {
        1
    }
}

/// A closed pipe (`macroscope dump t | head`) is not a failure.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
