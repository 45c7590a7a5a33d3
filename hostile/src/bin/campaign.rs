//! `campaign`: mutated traces, GFXReconstruct captures and results, each through one
//! `macroscope` reading command in a child process under a 2 GiB address-space limit
//! and a 10 s time limit. `scripts/fuzz` runs it; see [`hostile::campaign`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use hostile::campaign::{run_limited, Campaign, Command, Ending, Seed, TIME_LIMIT};

/// Runs mutated files through every reading command of `macroscope`.
#[derive(Parser)]
struct Args {
    /// The `macroscope` binary to run.
    #[arg(long, default_value = "target/release/macroscope")]
    macroscope: PathBuf,
    /// Inputs in all.
    #[arg(long, default_value_t = 1000)]
    inputs: u64,
    /// Commands run at once.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// The first random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The folder of valid traces and GFXReconstruct captures to mutate (results are
    /// made from the traces by replaying them).
    #[arg(long, default_value = "samples")]
    samples: PathBuf,
    /// Where findings are saved.
    #[arg(long, default_value = "trace-format/fuzz/regressions/cli")]
    regressions: PathBuf,
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Traces replayed into the results files the campaign mutates (small and varied).
const RESULTS_FROM: [&str; 3] = [
    "multiview-nvidia.mscope",
    "vkcube-lavapipe.mscope",
    "compute-nvidia.mscope",
];

fn run(args: &Args) -> anyhow::Result<bool> {
    let scratch = hostile::fuzz::scratch_dir()?;
    let mut seeds = Vec::new();
    let mut names: Vec<PathBuf> = std::fs::read_dir(&args.samples)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "mscope" || e == "gfxr"))
        .collect();
    names.sort();
    for path in &names {
        seeds.push(Seed::read(path)?);
    }
    for name in RESULTS_FROM {
        let out = scratch.path().join(name).with_extension("msr");
        let trace = args.samples.join(name).display().to_string();
        let replay = [
            "replay".to_string(),
            trace,
            "-o".into(),
            out.display().to_string(),
        ];
        let ending = run_limited(&args.macroscope, &replay, TIME_LIMIT)?;
        anyhow::ensure!(ending == Ending::Fine, "replaying {name}: {ending:?}");
        seeds.push(Seed::read(&out)?);
    }
    let base = scratch.path().join(RESULTS_FROM[0]).with_extension("msr");
    anyhow::ensure!(
        !seeds.is_empty(),
        "no seed files in {}",
        args.samples.display()
    );
    println!(
        "campaign: {} inputs over {} seed files, {} at a time, seed {}",
        args.inputs,
        seeds.len(),
        args.jobs,
        args.seed
    );
    let step = (args.inputs / 20).max(1);
    let campaign = Campaign {
        macroscope: &args.macroscope,
        seeds: &seeds,
        base_results: &base,
        inputs: args.inputs,
        jobs: args.jobs,
        seed: args.seed,
        regressions: Some(&args.regressions),
        scratch: scratch.path(),
        time_limit: TIME_LIMIT,
    };
    let tally = campaign.run(&|done| {
        if done % step == 0 {
            eprintln!("  {done} inputs");
        }
    });
    println!(
        "{} inputs in {:.1} s ({:.0} a second)",
        tally.inputs(),
        tally.elapsed.as_secs_f64(),
        tally.inputs() as f64 / tally.elapsed.as_secs_f64().max(1e-9)
    );
    for (command, n) in Command::ALL.iter().zip(tally.per_command) {
        println!("  {:<16} {n}", command.name());
    }
    println!("{} findings", tally.findings.len());
    for f in &tally.findings {
        println!(
            "  {} {}: {:?}",
            f.command.name(),
            f.path.display(),
            f.ending
        );
    }
    for why in &tally.stopped {
        eprintln!("stopped early: {why}");
    }
    anyhow::ensure!(
        tally.stopped.is_empty(),
        "the campaign ran {} of {} inputs",
        tally.inputs(),
        args.inputs
    );
    Ok(tally.findings.is_empty())
}
