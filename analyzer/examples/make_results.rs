//! Writes a results file of N synthetic draw rows (10,000 a frame), for
//! `scripts/bench-report`. Usage: make_results N OUT.msr

use std::process::ExitCode;

use trace_format::synthetic::write_synthetic_results;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(n), Some(out)) = (args.first().and_then(|a| a.parse().ok()), args.get(1)) else {
        eprintln!("usage: make_results N OUT.msr");
        return ExitCode::from(2);
    };
    match write_synthetic_results(out.as_ref(), n, 10_000) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("make_results: {e}");
            ExitCode::FAILURE
        }
    }
}
