//! `fuzz`: runs the stable-Rust fuzzer on each target for a while and saves what it
//! finds. `scripts/fuzz MINUTES` runs it on every target.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use hostile::fuzz::{fuzz, Budget, Target};

#[global_allocator]
static ALLOC: hostile::alloc::Counting = hostile::alloc::Counting;

/// Fuzzes macroscope's readers and replay on stable Rust.
#[derive(Parser)]
struct Args {
    /// Minutes in all, shared between the targets.
    #[arg(long, default_value_t = 1.0)]
    minutes: f64,
    /// Only this target (trace-bytes, results-bytes, trace-payload, records, gfxr-bytes).
    #[arg(long)]
    target: Option<String>,
    /// The first random seed (each run of the script should pick another).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where findings are saved.
    #[arg(long, default_value = "trace-format/fuzz/regressions")]
    regressions: PathBuf,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let targets: Vec<Target> = match &args.target {
        Some(name) => match Target::from_name(name) {
            Some(t) => vec![t],
            None => {
                eprintln!("error: no fuzz target `{name}`");
                return ExitCode::from(2);
            }
        },
        None => Target::ALL.to_vec(),
    };
    // Panics are caught and reported as findings: keep the default hook's output off.
    std::panic::set_hook(Box::new(|_| {}));
    let share = Duration::from_secs_f64(args.minutes.max(0.0) * 60.0 / targets.len() as f64);
    let mut found = 0;
    for (i, target) in targets.into_iter().enumerate() {
        let dir = match hostile::fuzz::scratch_dir() {
            Ok(d) => d,
            Err(e) => {
                eprintln!("error: a scratch folder: {e}");
                return ExitCode::from(2);
            }
        };
        let until = Budget::Until(Instant::now() + share);
        match fuzz(
            target,
            args.seed + i as u64,
            until,
            dir.path(),
            Some(&args.regressions),
        ) {
            Ok(report) => {
                println!(
                    "{}: {} inputs, {} findings",
                    target.name(),
                    report.inputs,
                    report.findings.len()
                );
                for (path, outcome) in &report.findings {
                    println!("  {}: {outcome:?}", path.display());
                }
                found += report.findings.len();
            }
            Err(e) => {
                eprintln!("error: {}: {e:#}", target.name());
                return ExitCode::from(2);
            }
        }
    }
    if found > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
