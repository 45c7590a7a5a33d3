//! `macroscope replay`: a trace through the bundled NVK model, into a results file.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context;
use driver::mme::Arch;
use indicatif::{ProgressBar, ProgressStyle};
use replayer::{replay, ReplayOptions};
use trace_format::ReadOptions;

use super::FrameRange;

/// The MME to simulate.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum Mme {
    /// Turing and later (TU104's instruction set).
    Turing,
    /// Fermi through Volta.
    Fermi,
}

/// Arguments of `macroscope replay`.
#[derive(clap::Args)]
pub struct Args {
    /// The trace (.mscope).
    trace: PathBuf,
    /// Where to write the results (default: the trace's name with .msr).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// The MME instruction set to simulate.
    #[arg(long, value_enum, default_value = "turing")]
    mme: Mme,
    /// Only execute submits in these frames, e.g. `10-20`.
    #[arg(long)]
    frames: Option<FrameRange>,
    /// Replay the whole trace this many times (timings per repetition; counts must agree).
    #[arg(long, default_value_t = 1)]
    repeat: u32,
}

/// Replays, with a progress bar on a terminal, and prints the summary.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.trace.with_extension("msr"));
    let options = ReplayOptions {
        arch: match args.mme {
            Mme::Turing => Arch::Turing,
            Mme::Fermi => Arch::Fermi,
        },
        frames: args.frames.map(|f| (f.first, f.last)),
        repeat: args.repeat.max(1),
        read: ReadOptions::parallel(),
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
    let result = replay(&args.trace, &output, &options, &mut progress);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let summary = result.with_context(|| {
        format!(
            "replaying {} (results so far are in {})",
            args.trace.display(),
            output.display()
        )
    })?;
    for call in summary.skipped.iter().filter(|c| c.needed) {
        eprintln!(
            "macroscope: warning: {} × {} could not be modelled",
            call.count, call.name
        );
    }
    println!(
        "replayed {} on {}: {} frames, {} submits, {} draws, {} hardware draws, {} MME instructions, {} repetition(s) in {:.2?} -> {}",
        args.trace.display(),
        options.arch.name(),
        summary.frames,
        summary.submits,
        summary.draws,
        summary.hw_draws,
        summary.mme_instructions,
        options.repeat,
        summary.wall,
        output.display()
    );
    Ok(())
}
