//! GFXReconstruct captures read by `macroscope import`: the scenes, vkcube and glxgears
//! captured by Debian's GFXReconstruct layer replay through the driver model with the
//! counts of our own capture of the same program; damaged files fail naming the block,
//! and keep what was converted before the damage.
//!
//! Needs Vulkan (lavapipe), the capture layer's library, GFXReconstruct's layer
//! (Debian `gfxreconstruct`), and Xvfb with vkcube and glxgears. Without them the tests
//! say so and pass, unless MACROSCOPE_REQUIRE_VULKAN is set (scripts/test sets it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_scene"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn macroscope() -> Command {
    Command::new(bin_dir().join("macroscope"))
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn ready() -> bool {
    let layer = bin_dir().join(macroscope_capture::LIBRARY_FILE);
    let gfxr =
        Path::new("/usr/share/vulkan/explicit_layer.d/VkLayer_gfxreconstruct.json").is_file();
    let ok = layer.is_file()
        && gfxr
        && bin_dir().join("macroscope").is_file()
        && ["xvfb-run", "vkcube", "glxgears"].iter().all(|t| have(t));
    assert!(
        ok || std::env::var_os("MACROSCOPE_REQUIRE_VULKAN").is_none(),
        "GFXReconstruct import tests must run here: the layer ({}), gfxreconstruct, the \
         macroscope binary, Xvfb, vkcube and glxgears are needed",
        layer.display()
    );
    if !ok {
        eprintln!("skipping the GFXReconstruct tests: something they need is missing");
    }
    ok
}

fn run(command: &mut Command) -> Output {
    let out = command.output().unwrap();
    assert!(out.status.success(), "{command:?}: {out:?}");
    out
}

/// `program` run under GFXReconstruct's layer with `compression`, into `file`.
fn gfxr_capture(program: &mut Command, file: &Path, compression: &str) {
    gfxr_capture_unchecked(program, file, compression);
    assert!(file.is_file(), "{program:?} wrote no {}", file.display());
}

/// As [`gfxr_capture`], for captures GFXReconstruct names itself (trimmed ones).
fn gfxr_capture_unchecked(program: &mut Command, file: &Path, compression: &str) {
    program
        .env("VK_INSTANCE_LAYERS", "VK_LAYER_LUNARG_gfxreconstruct")
        .env("GFXRECON_CAPTURE_FILE", file)
        .env("GFXRECON_CAPTURE_FILE_TIMESTAMP", "false")
        .env("GFXRECON_CAPTURE_COMPRESSION_TYPE", compression);
    let _ = program.output().unwrap();
}

/// `args` run under our capture layer into `trace` (`capture`'s own options first,
/// then `--` and the program).
fn own_capture(trace: &Path, args: &[&str], env: &[(&str, &str)]) {
    let mut c = macroscope();
    c.args(["capture", "-o", trace.to_str().unwrap()]);
    if !args.contains(&"--") {
        c.arg("--");
    }
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let _ = c.output().unwrap();
    assert!(trace.is_file());
}

/// Every row's counts of a replay of `trace` on `mme`, frame numbers kept or not.
fn counts(trace: &Path, mme: &str, keep_frames: bool) -> Vec<String> {
    let results = trace.with_extension(format!("{mme}.msr"));
    run(macroscope().args([
        "replay",
        "--strict",
        trace.to_str().unwrap(),
        "--mme",
        mme,
        "-o",
        results.to_str().unwrap(),
    ]));
    let out = run(macroscope().args(["export", "--format", "counts", results.to_str().unwrap()]));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            let kind = l.split_once("× ").map_or(*l, |(_, rest)| rest);
            kind.starts_with("draw ") || kind.starts_with("submit ")
        })
        .map(|l| {
            if keep_frames {
                return l.to_string();
            }
            // The scenes mark frames with VK_EXT_frame_boundary, which GFXReconstruct's
            // layer does not pass on: their imports have no frames.
            let (runs, rest) = l.split_once("× ").map_or(("", l), |(n, r)| (n, r));
            let mut fields: Vec<&str> = rest.split(' ').collect();
            fields[1] = "F";
            format!(
                "{runs}{}{}",
                if runs.is_empty() { "" } else { "× " },
                fields.join(" ")
            )
        })
        .collect()
}

#[test]
fn every_scene_captured_by_gfxreconstruct_replays_with_the_counts_of_our_capture() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let scene = env!("CARGO_BIN_EXE_scene");
    for name in benches::scenes::SCENES {
        let own = dir.path().join(format!("{name}.mscope"));
        own_capture(&own, &[scene, name], &[]);
        let ours = [counts(&own, "turing", false), counts(&own, "fermi", false)];
        assert!(
            ours[0].iter().any(|l| l.contains("draw ")),
            "{name}: {ours:?}"
        );
        for compression in ["LZ4", "ZSTD", "NONE"] {
            let gfxr = dir.path().join(format!("{name}-{compression}.gfxr"));
            gfxr_capture(Command::new(scene).arg(name), &gfxr, compression);
            for (mme, ours) in ["turing", "fermi"].into_iter().zip(&ours) {
                assert_eq!(
                    &counts(&gfxr, mme, false),
                    ours,
                    "{name} ({compression}) on {mme}"
                );
            }
        }
    }
}

#[test]
fn vkcube_and_glxgears_captured_by_gfxreconstruct_replay_frame_for_frame_as_our_captures() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // vkcube: 100 frames, every frame's counts.
    let gfxr = dir.path().join("vkcube.gfxr");
    gfxr_capture(
        Command::new("xvfb-run").args(["-a", "vkcube", "--c", "100"]),
        &gfxr,
        "LZ4",
    );
    let own = dir.path().join("vkcube.mscope");
    own_capture(&own, &["xvfb-run", "-a", "vkcube", "--c", "100"], &[]);
    let imported = dir.path().join("vkcube-imported.mscope");
    let out = run(macroscope().args([
        "import",
        gfxr.to_str().unwrap(),
        "-o",
        imported.to_str().unwrap(),
    ]));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("· 100 frames ·"),
        "{out:?}"
    );
    for mme in ["turing", "fermi"] {
        assert_eq!(
            counts(&imported, mme, true),
            counts(&own, mme, true),
            "vkcube on {mme}"
        );
    }
    // The reading commands take the .gfxr file itself.
    let info = run(macroscope().args(["info", gfxr.to_str().unwrap()]));
    assert!(
        String::from_utf8_lossy(&info.stdout).contains("100"),
        "{info:?}"
    );
    let dump = run(macroscope().args(["dump", gfxr.to_str().unwrap()]));
    assert!(
        String::from_utf8_lossy(&dump.stdout).contains("CmdDraw"),
        "{dump:?}"
    );
    run(macroscope().args(["shaders", gfxr.to_str().unwrap()]));
    // On lavapipe, the imported trace draws the frames a replay of our capture draws
    // (GFXReconstruct's files carry no checksums of their own to check against).
    let checksums = |trace: &Path| -> Vec<String> {
        let out = run(macroscope().args([
            "replay",
            "--device",
            "--frame-checksums",
            trace.to_str().unwrap(),
        ]));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| l.starts_with("frame "))
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                format!("{} {}", f[1], f[f.len() - 1])
            })
            .collect()
    };
    let replayed = checksums(&gfxr);
    assert_eq!(replayed.len(), 100);
    assert_eq!(replayed, checksums(&own));
    run(macroscope().args([
        "replay",
        "--device",
        "--check-frames",
        own.to_str().unwrap(),
    ]));

    // A trimmed capture (GFXReconstruct counts frames from 1): its state snapshot, then
    // frames 20 to 29, numbered as in a trace our layer records of the same range.
    let trim = dir.path().join("trim.gfxr");
    let mut program = Command::new("xvfb-run");
    program
        .args(["-a", "vkcube", "--c", "40"])
        .env("GFXRECON_CAPTURE_FRAMES", "21-30");
    gfxr_capture_unchecked(&mut program, &trim, "LZ4");
    let trimmed = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("trim_frames_21_through_30"))
        .expect("GFXReconstruct names a trimmed capture by its frames");
    let own_trim = dir.path().join("trim.mscope");
    own_capture(
        &own_trim,
        &[
            "--frames", "20-29", "--", "xvfb-run", "-a", "vkcube", "--c", "40",
        ],
        &[],
    );
    let theirs = counts(&trimmed, "turing", true);
    assert_eq!(
        theirs.iter().filter(|l| l.starts_with("draw 2")).count(),
        10,
        "{theirs:?}"
    );
    assert_eq!(theirs, counts(&own_trim, "turing", true), "trimmed vkcube");

    // glxgears through Zink: the frames both captures hold, frame by frame. It runs
    // until `timeout` interrupts it; GFXReconstruct's file may end in a torn block,
    // which the import names (exit 2) after converting everything before it.
    let zink = [
        ("LIBGL_ALWAYS_SOFTWARE", "1"),
        ("MESA_LOADER_DRIVER_OVERRIDE", "zink"),
    ];
    let gears = [
        "xvfb-run",
        "-a",
        "timeout",
        "-s",
        "INT",
        "3",
        "glxgears",
        "-geometry",
        "64x64",
    ];
    let gfxr = dir.path().join("gears.gfxr");
    let mut program = Command::new(gears[0]);
    program.args(&gears[1..]).envs(zink);
    gfxr_capture(&mut program, &gfxr, "LZ4");
    let own = dir.path().join("gears.mscope");
    own_capture(&own, &gears, &zink);
    let imported = dir.path().join("gears-imported.mscope");
    let out = macroscope()
        .args([
            "import",
            gfxr.to_str().unwrap(),
            "-o",
            imported.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(matches!(out.status.code(), Some(0 | 2)), "{out:?}");
    let frames_of = |rows: Vec<String>| -> Vec<Vec<String>> {
        let mut frames: Vec<Vec<String>> = Vec::new();
        for row in rows {
            if row.contains("× ") {
                continue; // folded runs span frames; the single rows are compared
            }
            let frame: usize = row
                .split(' ')
                .nth(1)
                .and_then(|f| f.parse().ok())
                .unwrap_or(0);
            if frames.len() <= frame {
                frames.resize(frame + 1, Vec::new());
            }
            frames[frame].push(row);
        }
        frames
    };
    let theirs = frames_of(counts(&imported, "turing", true));
    let ours = frames_of(counts(&own, "turing", true));
    let common = theirs.len().min(ours.len()).saturating_sub(1);
    assert!(common >= 10, "{} and {} frames", theirs.len(), ours.len());
    assert_eq!(theirs[..common], ours[..common]);
}

/// The offsets of every block of a GFXReconstruct file.
fn block_offsets(bytes: &[u8]) -> Vec<usize> {
    let options = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let mut at = 16 + options * 8;
    let mut offsets = Vec::new();
    while at + 12 <= bytes.len() {
        offsets.push(at);
        let size = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
        at += 12 + size;
    }
    offsets
}

#[test]
fn damaged_gfxreconstruct_files_fail_naming_the_block_and_keep_what_came_before() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let gfxr = dir.path().join("multiview.gfxr");
    gfxr_capture(
        Command::new(env!("CARGO_BIN_EXE_scene")).arg("multiview"),
        &gfxr,
        "LZ4",
    );
    let whole = std::fs::read(&gfxr).unwrap();
    let blocks = block_offsets(&whole);
    assert!(blocks.len() > 100, "{} blocks", blocks.len());
    let damaged = dir.path().join("damaged.gfxr");
    let trace = dir.path().join("damaged.mscope");
    let import = |bytes: &[u8]| {
        std::fs::write(&damaged, bytes).unwrap();
        let out = macroscope()
            .args([
                "import",
                damaged.to_str().unwrap(),
                "-o",
                trace.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let readable_records = || {
        let out = run(macroscope().args(["info", trace.to_str().unwrap()]));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // Cut inside every block (and at each boundary, which is a whole, shorter file).
    for (i, &start) in blocks.iter().enumerate() {
        let (code, stderr) = import(&whole[..start + 13]);
        assert_eq!(code, Some(2), "cut inside block {i}: {stderr}");
        assert!(
            stderr.contains(&format!("block {i} at offset {start}")),
            "cut inside block {i}: {stderr}"
        );
        if i % 40 == 0 {
            assert!(readable_records().contains("records"), "block {i}");
        }
        let (code, stderr) = import(&whole[..start]);
        assert_eq!(code, Some(0), "cut before block {i}: {stderr}");
    }
    // A block claiming a huge size.
    let mut huge = whole.clone();
    let at = blocks[blocks.len() / 2];
    huge[at..at + 8].copy_from_slice(&(1u64 << 60).to_le_bytes());
    let (code, stderr) = import(&huge);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("claims 1152921504606846976 bytes"),
        "{stderr}"
    );
    // Flipped bits anywhere: an error or a conversion, never a crash.
    for n in 0..200usize {
        let mut flipped = whole.clone();
        let byte = 16 + (n * 7919) % (whole.len() - 16);
        flipped[byte] ^= 1 << (n % 8);
        let (code, stderr) = import(&flipped);
        assert!(
            matches!(code, Some(0 | 2)),
            "bit {} of byte {byte}: {stderr}",
            n % 8
        );
    }
}
