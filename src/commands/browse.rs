//! `macroscope tui`: browse a results file in the terminal.

use std::io::IsTerminal;
use std::path::PathBuf;

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
        return Err(BadInput(
            "`macroscope tui` needs a terminal; use `report` or `export` in scripts".into(),
        )
        .into());
    }
    tui::run(&args.results, args.baseline.as_deref())?;
    Ok(())
}
