//! Hostile-but-valid traces — every record type of the trace schema and every generic
//! command the replayer decodes, with every field at 0, at 1 and at its maximum, each
//! field alone at those extremes, random values, and records written to break
//! assumptions (`hostile::stream`) — through every command that reads a trace or its
//! results: `replay` on both MME generations, `info`, `dump`, `shaders`, `report`,
//! `compare`, `export` and the TUI's loader. None may panic, hang, or allocate past a
//! bound set by the file's size.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use driver::mme::Arch;
use hostile::alloc::{self, Counting};
use hostile::fuzz::{ALLOC_BASE, ALLOC_PER_INPUT_BYTE};
use hostile::stream::{cases, write_case};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use replayer::{replay, ReplayOptions};
use trace_format::ReadOptions;

#[global_allocator]
static ALLOC: Counting = Counting;

/// The most one command may take on one hostile trace (a debug build on two cores; a
/// hang runs into it, a slow but bounded replay does not).
const TIME_LIMIT: Duration = Duration::from_secs(180);
/// The MME budget the replays run under: runaway draws stop sooner than at the default
/// ceiling, by the same rule.
const MME_BUDGET: u64 = 1 << 18;
/// Address space a command may map (`ulimit -v`, KiB).
const ADDRESS_SPACE_KIB: u64 = 4 << 20;

/// Runs `f` on its own thread, failing the test if it panics or outlives the limit.
/// Returns its value and the most its thread allocated.
fn in_thread<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> (T, u64) {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let start = alloc::held();
        alloc::reset_peak();
        let value = f();
        let _ = tx.send((value, alloc::peak_since(start)));
    });
    match rx.recv_timeout(TIME_LIMIT) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: still running after {TIME_LIMIT:?}")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: panicked"),
    }
}

/// Runs the CLI with `args` under an address-space limit and a time limit: it must
/// exit by itself, with a status of its own (no panic, no signal).
fn cli(what: &str, args: &[&str]) -> Output {
    let child = Command::new("bash")
        .arg("-c")
        .arg(format!("ulimit -v {ADDRESS_SPACE_KIB}; exec \"$@\""))
        .arg("macroscope")
        .arg(env!("CARGO_BIN_EXE_macroscope"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Read its output while it runs (a full pipe would stall it), on another thread.
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(TIME_LIMIT) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            panic!(
                "{what}: `macroscope {}` still running after {TIME_LIMIT:?}",
                args.join(" ")
            );
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code().is_some_and(|c| c != 101) && !stderr.contains("panicked"),
        "{what}: `macroscope {}` ended with {:?}:\n{stderr}",
        args.join(" "),
        out.status
    );
    out
}

fn replay_in_thread(what: &str, trace: &Path, out: &Path, arch: Arch) -> (bool, u64) {
    let (trace, out) = (trace.to_path_buf(), out.to_path_buf());
    let (ok, peak) = in_thread(what, move || {
        let options = ReplayOptions {
            chipset: driver::chipset::Chipset::for_arch(arch),
            frames: None,
            repeat: 1,
            read: ReadOptions::with_threads(0),
            mme_budget: MME_BUDGET,
            remember_macro_runs: true,
        };
        replay(&trace, &out, &options, &mut |_, _| {}).is_ok()
    });
    (ok, peak)
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn tui_loads(what: &str, results: PathBuf, baseline: PathBuf) {
    in_thread(what, move || {
        let mut app = tui::App::open(&results, Some(&baseline)).unwrap();
        app.a.index.wait();
        if let Some(b) = &mut app.b {
            b.index.wait();
        }
        app.tick();
        let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
        terminal.draw(|f| app.draw(f)).unwrap();
    });
}

#[test]
fn hostile_traces_never_panic_hang_or_allocate_without_bound() {
    let dir = tempfile::tempdir().unwrap();
    for (i, case) in cases(3).into_iter().enumerate() {
        let what = &case.name;
        let trace = dir.path().join(format!("case{i}.mscope"));
        let records = write_case(&trace, &case.mode).unwrap();
        assert!(records > 60, "{what}: {records} records");
        let len = std::fs::metadata(&trace).unwrap().len();
        let bound = ALLOC_BASE + ALLOC_PER_INPUT_BYTE * len;

        let turing = dir.path().join(format!("case{i}.turing.msr"));
        let fermi = dir.path().join(format!("case{i}.fermi.msr"));
        for (arch, out) in [(Arch::Turing, &turing), (Arch::Fermi, &fermi)] {
            let (ok, peak) = replay_in_thread(what, &trace, out, arch);
            assert!(ok, "{what}: the {arch:?} replay failed as a whole");
            assert!(
                peak <= bound,
                "{what}: the {arch:?} replay allocated {peak} bytes for a {len}-byte trace"
            );
        }

        let t = path_str(&trace);
        cli(what, &["info", t]);
        cli(what, &["dump", t]);
        cli(what, &["shaders", t]);
        let again = dir.path().join(format!("case{i}.cli.msr"));
        let budget = MME_BUDGET.to_string();
        let out = cli(
            what,
            &["replay", t, "-o", path_str(&again), "--mme-budget", &budget],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{what}: replay: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (a, b) = (path_str(&turing), path_str(&fermi));
        cli(what, &["info", a]);
        cli(what, &["report", a]);
        cli(what, &["compare", a, b]);
        for format in ["csv", "json", "perfetto"] {
            cli(what, &["export", a, "--format", format]);
        }
        tui_loads(what, turing.clone(), fermi.clone());
    }
}
