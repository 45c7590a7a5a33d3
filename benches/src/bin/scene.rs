//! `scene NAME [FRAMES] [--extra-draw] [--own-fault-handler] [--probe-first]
//! [--second-device] [--second-device-unlike] [--again-on-a-new-device] [--then-wait]`: runs one of the capture-workload scenes offscreen and prints what
//! it issued as one line of JSON. `--extra-draw` adds one draw to frame 1 of the
//! multiview scene, for comparing two captures that differ by it; `--own-fault-handler`
//! has the mapped scene install a SIGSEGV handler of its own after the layer's, as some
//! programs do; `--probe-first` makes and destroys a Vulkan instance and device before
//! the scene's own, as a GL driver or toolkit probing the GPU does; `--second-device`
//! makes a second instance and device once the scene's own is made, submits to it once
//! and keeps it to the end, as a program with two GL contexts on Zink does;
//! `--second-device-unlike` makes that device ask for a feature the first does not;
//! `--again-on-a-new-device` runs the scene a second time on an instance and device
//! made after the first ones are destroyed (its line is the second run's);
//! `--then-wait` prints the line once the frames are drawn and waits to be killed,
//! keeping its device, as a program drawing on demand waits for input.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let options = benches::scenes::SceneOptions {
        extra_draw: args.iter().any(|a| a == "--extra-draw"),
        own_fault_handler: args.iter().any(|a| a == "--own-fault-handler"),
        probe_first: args.iter().any(|a| a == "--probe-first"),
        second_device: args
            .iter()
            .any(|a| a == "--second-device" || a == "--second-device-unlike"),
        second_device_unlike: args.iter().any(|a| a == "--second-device-unlike"),
        again_on_a_new_device: args.iter().any(|a| a == "--again-on-a-new-device"),
        then_wait: args.iter().any(|a| a == "--then-wait"),
        big_write: args.iter().any(|a| a == "--big-write"),
    };
    args.retain(|a| {
        !matches!(
            a.as_str(),
            "--extra-draw"
                | "--own-fault-handler"
                | "--probe-first"
                | "--second-device"
                | "--second-device-unlike"
                | "--again-on-a-new-device"
                | "--then-wait"
                | "--big-write"
        )
    });
    let Some(name) = args.first() else {
        eprintln!(
            "usage: scene NAME [FRAMES] [--extra-draw] [--own-fault-handler] [--probe-first] [--second-device] [--second-device-unlike] [--again-on-a-new-device] [--then-wait] [--big-write]  (NAME: {})",
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
