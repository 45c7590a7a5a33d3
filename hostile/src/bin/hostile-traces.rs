//! `hostile-traces DIR [RANDOM]`: writes the hostile cases' traces into DIR (with
//! `RANDOM` seeds of random values; 3 unless given), for trying a command on them.

use std::path::PathBuf;
use std::process::ExitCode;

use hostile::stream::{cases, write_case};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next().map(PathBuf::from) else {
        eprintln!("usage: hostile-traces DIR [RANDOM]");
        return ExitCode::from(2);
    };
    let random = args.next().and_then(|s| s.parse().ok()).unwrap_or(3);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("error: {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    for (i, case) in cases(random).iter().enumerate() {
        let path = dir.join(format!("case{i}.mscope"));
        match write_case(&path, &case.mode) {
            Ok(records) => println!(
                "{}: {} ({records} hostile records)",
                path.display(),
                case.name
            ),
            Err(e) => {
                eprintln!("error: {}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    ExitCode::SUCCESS
}
