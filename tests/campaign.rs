//! The command-line mutation campaign (`hostile::campaign`) as CI runs its share:
//! every saved finding in `trace-format/fuzz/regressions/cli/` again through the
//! command that once failed on it, and a fixed campaign through every reading command,
//! each under a 2 GiB address-space limit. `scripts/fuzz` runs longer campaigns on a
//! release build.

use std::path::{Path, PathBuf};
use std::time::Duration;

use hostile::campaign::{rerun, run_limited, Campaign, Command, Ending, Seed};

/// What one command of this debug build may take: slower than a release build's
/// [`hostile::campaign::TIME_LIMIT`], yet a hang still runs into it.
const DEBUG_TIME_LIMIT: Duration = Duration::from_secs(240);

fn macroscope() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_macroscope"))
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// A valid results file to compare against, made by replaying a sample.
fn base_results(dir: &Path) -> PathBuf {
    let out = dir.join("base.msr");
    let args = [
        "replay".to_string(),
        repo("samples/multiview-nvidia.mscope")
            .display()
            .to_string(),
        "-o".into(),
        out.display().to_string(),
    ];
    assert_eq!(
        run_limited(macroscope(), &args, DEBUG_TIME_LIMIT).unwrap(),
        Ending::Fine
    );
    out
}

#[test]
fn saved_command_line_findings_stay_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let base = base_results(dir.path());
    let mut ran = Vec::new();
    let folder = repo("trace-format/fuzz/regressions/cli");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let ending = rerun(macroscope(), &path, &base, dir.path(), DEBUG_TIME_LIMIT).unwrap();
        assert_eq!(ending, Ending::Fine, "{}", path.display());
        ran.push(path.file_name().unwrap().to_string_lossy().into_owned());
    }
    // The two inputs an outside campaign found: a record whose call value this build
    // does not know (`dump` panicked), and a draw whose macro emits until its budget
    // (the macro memo took 1 GiB and the replay aborted).
    for name in [
        "dump-unknown-call-value.mscope",
        "replay-turing-macro-memo-1gib.mscope",
    ] {
        assert!(ran.iter().any(|r| r == name), "{name} is kept and run");
    }
}

#[test]
fn finding_names_give_their_command() {
    assert_eq!(
        Command::from_file_name("dump-json-0123.mscope"),
        Some(Command::DumpJson)
    );
    assert_eq!(
        Command::from_file_name("dump-0123.mscope"),
        Some(Command::Dump)
    );
    assert_eq!(
        Command::from_file_name("replay-fermi-x.gfxr"),
        Some(Command::ReplayFermi)
    );
    assert_eq!(Command::from_file_name("replay.mscope"), None);
}

#[test]
fn the_harness_limits_memory_and_time_and_tells_endings_apart() {
    let bash = |script: &str, limit: u64| {
        let args = ["-c".to_string(), script.to_string()];
        run_limited(Path::new("/bin/bash"), &args, Duration::from_secs(limit)).unwrap()
    };
    // The address-space limit is the child's (`ulimit -v` in KiB).
    assert_eq!(
        bash("[ \"$(ulimit -v)\" = 2097152 ] || exit 7", 30),
        Ending::Fine
    );
    assert!(matches!(bash("kill -ABRT $$", 30), Ending::Signalled(6, _)));
    assert_eq!(bash("sleep 30", 1), Ending::Hung);
    assert!(matches!(
        bash("echo \"thread 'main' panicked at src/x.rs:1:1:\" >&2; exit 101", 30),
        Ending::Panicked(line) if line.contains("src/x.rs")
    ));
    assert!(matches!(bash("exit 3", 30), Ending::Exited(3, _)));
}

#[test]
fn a_fixed_campaign_through_every_reading_command_finds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let base = base_results(dir.path());
    let mut seeds: Vec<Seed> = [
        "samples/multiview-nvidia.mscope",
        "samples/vkcube-lavapipe.mscope",
        "samples/tessellation-nvidia.mscope",
        "samples/compute-nvidia.mscope",
        "samples/multiview-lavapipe.gfxr",
        "samples/indirect-lavapipe-zstd.gfxr",
    ]
    .iter()
    .map(|p| Seed::read(&repo(p)).unwrap())
    .collect();
    seeds.push(Seed::read(&base).unwrap());
    let campaign = Campaign {
        macroscope: macroscope(),
        seeds: &seeds,
        base_results: &base,
        inputs: 600,
        jobs: 2,
        seed: 26,
        regressions: None,
        scratch: dir.path(),
        time_limit: DEBUG_TIME_LIMIT,
    };
    let tally = campaign.run(&|_| {});
    assert!(tally.stopped.is_empty(), "{:?}", tally.stopped);
    assert_eq!(tally.inputs(), 600);
    for (command, n) in Command::ALL.iter().zip(tally.per_command) {
        assert!(n > 0, "{} ran no input", command.name());
        println!("{}: {n}", command.name());
    }
    assert!(tally.findings.is_empty(), "{:#?}", tally.findings);
}
