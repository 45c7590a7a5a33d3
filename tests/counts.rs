//! The counts are the product: every sample trace, replayed on both MME generations,
//! gives in every row the counts written before (`tests/counts/NAME.ARCH.counts`, as
//! `macroscope export --format counts` writes them), whatever the replay's speed.
//!
//! After a change to the model that is meant to move counts, write the files anew with
//! `MACROSCOPE_BLESS=1 cargo test --test counts` and let the diff show which rows moved.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Every trace in `samples/`: the scenes captured on NVIDIA's driver and on lavapipe,
/// vkcube, glxgears through Zink and LibreOffice drawn by Skia.
const SAMPLES: [&str; 14] = [
    "storm-nvidia",
    "multiview-nvidia",
    "indirect-nvidia",
    "tessellation-nvidia",
    "compute-nvidia",
    "threads-lavapipe",
    "secondary-lavapipe",
    "mapped-lavapipe",
    "libraries-lavapipe",
    "resolve-lavapipe",
    "subpasses-lavapipe",
    "vkcube-lavapipe",
    "glxgears-zink-lavapipe",
    "libreoffice-skia-lavapipe",
];

/// GFXReconstruct captures in `samples/`, replayed through an import (`replay` reads
/// `.gfxr` files directly).
const GFXR_SAMPLES: [&str; 2] = ["multiview-lavapipe", "indirect-lavapipe-zstd"];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn macroscope(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "macroscope {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The counts of `trace` replayed on `arch`.
fn counts(trace: &Path, arch: &str, dir: &Path) -> String {
    let results = dir.join(format!("{arch}.msr"));
    macroscope(&[
        "replay",
        trace.to_str().unwrap(),
        "--mme",
        arch,
        "-o",
        results.to_str().unwrap(),
    ]);
    macroscope(&["export", results.to_str().unwrap(), "--format", "counts"])
}

/// The first line where `a` and `b` differ, numbered from 1, with both sides.
fn first_difference(a: &str, b: &str) -> Option<(usize, String, String)> {
    let (mut x, mut y) = (a.lines(), b.lines());
    for n in 1.. {
        match (x.next(), y.next()) {
            (None, None) => return None,
            (l, r) if l == r => continue,
            (l, r) => {
                let side = |s: Option<&str>| s.unwrap_or("(end)").to_string();
                return Some((n, side(l), side(r)));
            }
        }
    }
    None
}

#[test]
fn every_sample_replays_to_the_counts_written_before_on_both_mme_generations() {
    let dir = tempfile::tempdir().unwrap();
    let bless = std::env::var_os("MACROSCOPE_BLESS").is_some();
    let mut moved = Vec::new();
    let traces = SAMPLES
        .iter()
        .map(|name| (name, "mscope"))
        .chain(GFXR_SAMPLES.iter().map(|name| (name, "gfxr")));
    for (name, extension) in traces {
        let trace = root().join(format!("samples/{name}.{extension}"));
        for arch in ["turing", "fermi"] {
            let now = counts(&trace, arch, dir.path());
            assert!(
                now.lines().any(|l| l.contains("draw ")),
                "{name} {arch}: no draws"
            );
            let golden: PathBuf = root().join(format!("tests/counts/{name}.{arch}.counts"));
            if bless {
                std::fs::write(&golden, &now).unwrap();
                continue;
            }
            let before = std::fs::read_to_string(&golden)
                .unwrap_or_else(|e| panic!("{}: {e}", golden.display()));
            if let Some((line, was, is)) = first_difference(&before, &now) {
                moved.push(format!(
                    "{name} on {arch}, line {line}:\n  before: {was}\n  now:    {is}"
                ));
            }
        }
    }
    assert!(
        moved.is_empty(),
        "counts moved (MACROSCOPE_BLESS=1 writes them anew):\n{}",
        moved.join("\n")
    );
}

/// The same program captured by two formats of the trace: glxgears through Zink in
/// format 1 (a table a parameter of every generic record) and the sample, captured
/// since (parameters packed into one string, records compact). Older traces still
/// read: every row gives the same counts whichever form carried the calls; only the
/// totals may differ, by what a run of glxgears records around its frames.
#[test]
fn a_program_captured_in_an_older_format_replays_to_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let older = root().join("trace-format/tests/data/glxgears-zink-lavapipe-format1.mscope");
    let newer = root().join("samples/glxgears-zink-lavapipe.mscope");
    let rows = |counts: &str| -> Vec<String> {
        counts
            .lines()
            .filter(|l| !l.starts_with("totals "))
            .map(str::to_owned)
            .collect()
    };
    for arch in ["turing", "fermi"] {
        let (was, is) = (
            counts(&older, arch, dir.path()),
            counts(&newer, arch, dir.path()),
        );
        assert!(was.lines().any(|l| l.contains("draw ")), "{arch}: no draws");
        let (was, is) = (rows(&was), rows(&is));
        assert_eq!(was.len(), is.len(), "{arch}");
        for (n, (w, i)) in was.iter().zip(&is).enumerate() {
            assert_eq!(w, i, "{arch}, line {}", n + 1);
        }
    }
}

#[test]
fn a_first_difference_names_the_line_and_both_sides() {
    assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
    assert_eq!(
        first_difference("a\nb\n", "a\nc\n"),
        Some((2, "b".into(), "c".into()))
    );
    assert_eq!(
        first_difference("a\n", "a\nb\n"),
        Some((2, "(end)".into(), "b".into()))
    );
}
