//! `scene NAME [FRAMES]`: runs one of the capture-workload scenes offscreen and prints
//! what it issued as one line of JSON. Scenes: multiview, indirect, storm, tessellation.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(name) = args.first() else {
        eprintln!(
            "usage: scene NAME [FRAMES]  (NAME: {})",
            benches::scenes::SCENES.join(", ")
        );
        return ExitCode::from(2);
    };
    let frames = match args.get(1).map(|f| f.parse::<u64>()) {
        None => 3,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("scene: FRAMES must be a positive number");
            return ExitCode::from(2);
        }
    };
    match benches::scenes::run(name, frames) {
        Ok(issued) => {
            println!("{}", issued.to_json(name));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("scene {name}: {e}");
            ExitCode::FAILURE
        }
    }
}
