//! `mme_rate write DIR`: writes the macros `benches::mme_macros::cases` times, each as
//! `NAME.tu104.bin`, `NAME.fermi.bin` and `NAME.params.bin` (little-endian words), and
//! lists them as `NAME SLOT VALUE`, for Mesa's simulators to run
//! (`scripts/bench-mme-vs-mesa`).
//!
//! `mme_rate run RUNS`: runs each macro RUNS times on macroscope's simulator of each
//! MME generation and prints `NAME ARCH INSTRUCTIONS METHODS NS`: instructions and
//! method writes a run, nanoseconds a run.

use std::hint::black_box;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use benches::mme_macros::{cases, BenchMachine};
use driver::mme::{fermi, tu104, DEFAULT_BUDGET};

fn words_to_file(path: &Path, words: &[u32]) -> std::io::Result<()> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(path, bytes)
}

fn write(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for case in cases() {
        words_to_file(
            &dir.join(format!("{}.tu104.bin", case.name)),
            &case.binaries[0],
        )?;
        words_to_file(
            &dir.join(format!("{}.fermi.bin", case.name)),
            &case.binaries[1],
        )?;
        words_to_file(&dir.join(format!("{}.params.bin", case.name)), &case.params)?;
        println!("{} {} {}", case.name, case.scratch.0, case.scratch.1);
    }
    Ok(())
}

fn run(runs: u32) -> Result<(), String> {
    for case in cases() {
        let (slot, value) = case.scratch;
        let turing = tu104::Sim::new(case.name, &case.binaries[0]).map_err(|e| e.to_string())?;
        let fermi = fermi::Sim::new(case.name, &case.binaries[1]).map_err(|e| e.to_string())?;
        for arch in ["tu104", "fermi"] {
            let mut machine = BenchMachine::with(&case.params, slot, value);
            let mut instructions = 0;
            let start = Instant::now();
            for _ in 0..runs {
                machine.next = 0;
                let stats = match arch {
                    "tu104" => turing.run(&mut machine, DEFAULT_BUDGET),
                    _ => fermi.run(&mut machine, DEFAULT_BUDGET),
                }
                .map_err(|e| format!("{} on {arch}: {e}", case.name))?;
                instructions = black_box(stats.instructions);
            }
            let ns = start.elapsed().as_nanos() as f64 / f64::from(runs.max(1));
            let methods = machine.methods / u64::from(runs.max(1));
            println!("{} {arch} {instructions} {methods} {ns:.1}", case.name);
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["write", dir] => write(Path::new(dir)).map_err(|e| e.to_string()),
        ["run", runs] => match runs.parse() {
            Ok(runs) => run(runs),
            Err(_) => Err("RUNS must be a whole number".into()),
        },
        _ => Err("usage: mme_rate write DIR | mme_rate run RUNS".into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mme_rate: {e}");
            ExitCode::from(2)
        }
    }
}
