//! `scene NAME [FRAMES] [--extra-draw]`: runs one of the capture-workload scenes
//! offscreen and prints what it issued as one line of JSON. `--extra-draw` adds one draw
//! to frame 1 of the multiview scene, for comparing two captures that differ by it.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let options = benches::scenes::SceneOptions {
        extra_draw: args.iter().any(|a| a == "--extra-draw"),
    };
    args.retain(|a| a != "--extra-draw");
    let Some(name) = args.first() else {
        eprintln!(
            "usage: scene NAME [FRAMES] [--extra-draw]  (NAME: {})",
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
    match benches::scenes::run_with(name, frames, options) {
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
