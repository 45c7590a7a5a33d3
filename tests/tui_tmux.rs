//! `macroscope tui` end to end: the real binary in a tmux session, driven with
//! send-keys and read back with capture-pane, as a user at a terminal would.
//!
//! Needs tmux. Without it the test says so and passes, unless MACROSCOPE_REQUIRE_TMUX
//! is set (scripts/test sets it, after installing tmux).

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use trace_format::ResultsReader;

fn macroscope(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    out
}

/// A tmux server of its own, killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// Whether tmux is here; panics if the tests must run and it is not.
    fn ready() -> bool {
        let here = Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            here || std::env::var_os("MACROSCOPE_REQUIRE_TMUX").is_none(),
            "tmux is required but not installed"
        );
        if !here {
            eprintln!("tmux is not installed: skipping the end-to-end TUI test");
        }
        here
    }

    fn start(name: &str, dir: &Path, command: &str) -> Tmux {
        let socket = format!("macroscope-{name}-{}", std::process::id());
        let tmux = Tmux { socket };
        let status = Command::new("tmux")
            .args(["-L", &tmux.socket, "-f", "/dev/null", "new-session", "-d"])
            .args(["-x", "160", "-y", "50", "-c"])
            .arg(dir)
            .arg(command)
            .env("TERM", "xterm-256color")
            .status()
            .unwrap();
        assert!(status.success());
        tmux
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        for key in keys {
            self.tmux(&["send-keys", "-t", "0", key]);
        }
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "0"])
    }

    /// Scrolls the focused pane down a line at a time until the screen shows `text`.
    fn scroll_until(&self, text: &str) {
        for _ in 0..80 {
            if self.screen().contains(text) {
                return;
            }
            self.keys(&["j"]);
            std::thread::sleep(Duration::from_millis(20));
        }
        self.wait_for(text);
    }

    /// Waits until the screen shows `text`, and returns the screen.
    fn wait_for(&self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "`{text}` never showed; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

#[test]
fn tui_browses_filters_sorts_compares_and_quits_with_the_terminal_intact() {
    if !Tmux::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // A real trace: the indirect scene as NVIDIA's driver ran it.
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/indirect-nvidia.mscope"
    );
    let (a, b) = (format!("{d}/a.msr"), format!("{d}/b.msr"));
    macroscope(&["replay", trace, "-o", &a, "--mme", "turing"]);
    macroscope(&["replay", trace, "-o", &b, "--mme", "fermi"]);
    let rows: Vec<_> = ResultsReader::open(Path::new(&a))
        .unwrap()
        .flat_map(|c| c.unwrap().draws().copied().collect::<Vec<_>>())
        .collect();

    let command = format!(
        "{} tui a.msr --baseline b.msr; echo EXITED $?; sleep 60",
        env!("CARGO_BIN_EXE_macroscope")
    );
    let tmux = Tmux::start("browse", dir.path(), &command);
    let screen = tmux.wait_for("Rows of frame 0");
    assert!(
        screen.contains("Frames · mme-instructions per frame · A"),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("Draw #{}", rows[0].seq())),
        "{screen}"
    );

    // Move: two draws down, then the next frame.
    tmux.keys(&["j", "j"]);
    tmux.wait_for(&format!("Draw #{}", rows[2].seq()));
    tmux.keys(&["l"]);
    let first_of_frame1 = rows.iter().find(|r| r.frame() == 1).unwrap();
    tmux.wait_for("Rows of frame 1");
    tmux.wait_for(&format!("Draw #{}", first_of_frame1.seq()));

    // Trace the selected draw's method stream through the driver model.
    tmux.keys(&["Enter"]);
    let screen = tmux.wait_for(" methods: ");
    let row = rows.iter().find(|r| r.frame() == 1).unwrap();
    assert!(
        screen.contains(&format!("{} methods: ", row.methods())),
        "every method the row counts is in the stream:\n{screen}"
    );
    // The focus is on the draw's pane: scrolling down, the state the draw flushed (a
    // line per group), the draw macro's call, and the hardware draws it begins.
    for line in [
        "push  state: viewport ×",
        "push  CALL_MME_MACRO(",
        "macro BEGIN",
    ] {
        tmux.scroll_until(line);
    }
    tmux.keys(&["Tab", "Tab", "Tab"]); // detail → histogram → frames → submits
    tmux.keys(&["Tab"]); // → draws

    // Filter to indexed draws.
    tmux.keys(&["/", "indexed", "Enter"]);
    let screen = tmux.wait_for("filter `indexed`");
    let indexed = rows
        .iter()
        .filter(|r| r.frame() == 1 && format!("{:?}", r.kind()).contains("Indexed"))
        .count();
    assert!(screen.contains(&format!("{indexed} of 4")), "{screen}");

    // Sort by MME instructions, costliest first.
    tmux.keys(&["s", "s", "s", "s", "s"]);
    tmux.wait_for("sort mme ↓");

    // The costliest frame's costliest draw, then B and A − B.
    tmux.keys(&["c"]);
    tmux.keys(&["b"]);
    tmux.wait_for("B (baseline)");
    tmux.keys(&["b"]);
    tmux.wait_for("A − B");

    // Quit: the alternate screen is gone and the mouse released.
    tmux.keys(&["q"]);
    let screen = tmux.wait_for("EXITED 0");
    assert!(!screen.contains("Frames ·"), "{screen}");
    assert_eq!(tmux.tmux(&["display", "-p", "#{alternate_on}"]).trim(), "0");
    assert_eq!(
        tmux.tmux(&["display", "-p", "#{mouse_any_flag}"]).trim(),
        "0"
    );
}

#[test]
fn tui_quits_on_ctrl_c_and_refuses_a_bad_file() {
    if !Tmux::ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let trace = format!("{d}/sample.mscope");
    let a = format!("{d}/a.msr");
    macroscope(&["sample", "-o", &trace, "--frames", "2", "--draws", "50"]);
    macroscope(&["replay", &trace, "-o", &a]);
    std::fs::write(format!("{d}/bad.msr"), b"not a results file").unwrap();
    let command = format!(
        "{bin} tui bad.msr; echo BAD $?; {bin} tui a.msr; echo EXITED $?; sleep 60",
        bin = env!("CARGO_BIN_EXE_macroscope")
    );
    let tmux = Tmux::start("ctrl-c", dir.path(), &command);
    tmux.wait_for("Rows of frame 0");
    tmux.keys(&["C-c"]);
    let screen = tmux.wait_for("EXITED 0");
    assert!(!screen.contains("Rows of frame"), "{screen}");
    // The bad file was refused before any screen opened, with exit status 2.
    assert!(
        screen.contains("macroscope: error: ") && screen.contains("bad.msr"),
        "{screen}"
    );
    assert!(screen.contains("BAD 2"), "{screen}");
}
