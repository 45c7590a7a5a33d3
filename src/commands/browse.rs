//! `macroscope tui`: browse a results file in the terminal, with draws' method streams
//! traced through the replayer on request.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use replayer::{inspect_draw, ReplayOptions};
use trace_format::generated::results::RunInfoT;
use trace_format::ReadOptions;
use tui::{DrawTracer, MethodRun, TracedDraw};

use super::BadInput;

/// Arguments of `macroscope tui`.
#[derive(clap::Args)]
pub struct Args {
    /// A results file (.msr).
    results: PathBuf,
    /// A results file to compare against (shown as B; A − B colours regressions).
    #[arg(long)]
    baseline: Option<PathBuf>,
}

/// Runs the browser until the user quits.
pub fn run(args: &Args) -> anyhow::Result<()> {
    if !std::io::stdout().is_terminal() {
        let why = "`macroscope tui` needs a terminal; use `report` or `export` in scripts";
        return Err(BadInput(why.into()).into());
    }
    tui::run(
        &args.results,
        args.baseline.as_deref(),
        Some(Arc::new(ReplayTracer)),
    )?;
    Ok(())
}

/// Traces a draw by replaying its trace up to it, as the results were replayed.
pub struct ReplayTracer;

impl DrawTracer for ReplayTracer {
    fn trace(&self, trace: &Path, run: &RunInfoT, ordinal: u64) -> Result<TracedDraw, String> {
        let options = ReplayOptions {
            chipset: replayer::run_chipset(run),
            frames: (run.frames_first != 0 || run.frames_last != u64::MAX)
                .then_some((run.frames_first, run.frames_last)),
            repeat: 1,
            read: ReadOptions::for_replay(),
            mme_budget: replayer::DEFAULT_MME_BUDGET,
            remember_macro_runs: true,
        };
        let found = inspect_draw(trace, &options, ordinal)
            .map_err(|e| format!("{}: {e}", trace.display()))?;
        Ok(TracedDraw {
            seq: found.seq,
            mme_instructions: found.mme_instructions,
            runs: found
                .runs()
                .into_iter()
                .map(|r| MethodRun {
                    name: r.name,
                    from_macro: r.from_macro,
                    count: r.count,
                })
                .collect(),
        })
    }
}
