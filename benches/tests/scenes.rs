//! Every scene captured through the real layer on the system loader (lavapipe here),
//! read back and replayed: the trace's draws, frames, view masks and queries are what
//! the scene issued, and the replay expands each draw to its views and each query to
//! its slots.
//!
//! Needs a Vulkan device and the capture layer's library (`cargo build -p
//! capture-layer`). Without them the tests say so and pass, unless
//! MACROSCOPE_REQUIRE_VULKAN is set (scripts/test sets it).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use driver::mme::Arch;
use replayer::{replay, ReplayOptions};
use trace_format::generated::results::{DrawRow, SubmitRow};
use trace_format::{ReadOptions, ResultsReader, TraceReader};

fn layer_library() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_scene")).with_file_name(macroscope_capture::LIBRARY_FILE)
}

fn ready() -> bool {
    let vulkan = Path::new("/usr/share/vulkan/icd.d").is_dir();
    if vulkan && layer_library().is_file() {
        return true;
    }
    assert!(
        std::env::var_os("MACROSCOPE_REQUIRE_VULKAN").is_none(),
        "scene tests must run here: is the layer built (cargo build -p capture-layer) at {}?",
        layer_library().display()
    );
    eprintln!("skipping the scene tests: no Vulkan driver or no layer library");
    false
}

/// A folder under `dir` holding the capture layer's manifest, for `VK_ADD_LAYER_PATH`.
fn layer_manifests(dir: &Path) -> PathBuf {
    let manifests = dir.join("layer");
    std::fs::create_dir_all(&manifests).unwrap();
    std::fs::write(
        manifests.join("VkLayer_macroscope_capture.json"),
        macroscope_capture::manifest(&layer_library()),
    )
    .unwrap();
    manifests
}

/// What the scene printed it issued, as JSON.
struct Issued(serde_json::Value);

impl Issued {
    fn count(&self, group: &str, key: &str) -> u64 {
        self.0[group][key].as_u64().unwrap_or(0)
    }
}

#[test]
fn a_capture_whose_disk_fills_stops_with_one_line_and_the_program_runs_on() {
    use std::os::unix::process::CommandExt;
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let manifests = layer_manifests(dir.path());
    let trace = dir.path().join("full.mscope");
    // The file may not grow past 512 KiB (storm's 40 frames take about 2 MiB): writes
    // past it fail as on a full disk (with SIGXFSZ ignored, the write returns an error
    // instead of killing the program).
    let limit = 512 << 10;
    let mut command = Command::new(env!("CARGO_BIN_EXE_scene"));
    command
        .args(["storm", "40"])
        .env("VK_ADD_LAYER_PATH", &manifests)
        .env("VK_INSTANCE_LAYERS", "VK_LAYER_MACROSCOPE_capture")
        .env("MACROSCOPE_CAPTURE_FILE", &trace);
    // SAFETY: between fork and exec the child only calls signal and setrlimit, both
    // async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let rlimit = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            match libc::setrlimit(libc::RLIMIT_FSIZE, &rlimit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        })
    };
    let out = command.output().unwrap();
    // The program ran to its end and drew every frame.
    assert!(out.status.success(), "{out:?}");
    let issued: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(issued["draws"]["CmdDraw"], 400_000, "{issued}");
    // One line says capture stopped, and why.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("macroscope-capture:"))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("capture stopped") && lines[0].contains("the program runs on"),
        "{stderr}"
    );
    // The trace reads up to its last whole chunk.
    assert!(std::fs::metadata(&trace).unwrap().len() <= limit);
    let (mut chunks, mut records) = (0, 0);
    for chunk in TraceReader::open(&trace).unwrap() {
        let Ok(chunk) = chunk else { break };
        chunks += 1;
        records += chunk.records().count();
    }
    assert!(
        chunks >= 2 && records > 10_000,
        "{chunks} chunks, {records} records"
    );
}

/// Runs `scene` for `frames` frames under the capture layer.
fn capture(dir: &Path, scene: &str, frames: u64) -> (PathBuf, Issued) {
    capture_with(dir, scene, frames, &[])
}

/// Runs `scene` for `frames` frames with the scene's `options` under the capture layer.
fn capture_with(dir: &Path, scene: &str, frames: u64, options: &[&str]) -> (PathBuf, Issued) {
    let manifests = layer_manifests(dir);
    let trace = dir.join(format!("{scene}.mscope"));
    let out = Command::new(env!("CARGO_BIN_EXE_scene"))
        .args([scene, &frames.to_string()])
        .args(options)
        .env("VK_ADD_LAYER_PATH", &manifests)
        .env("VK_INSTANCE_LAYERS", "VK_LAYER_MACROSCOPE_capture")
        .env("MACROSCOPE_CAPTURE_FILE", &trace)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let issued: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The layer offers VK_EXT_frame_boundary, so the scene marks its frames.
    assert_eq!(issued["frame_boundaries"], true, "{issued}");
    (trace, Issued(issued))
}

fn calls(trace: &Path) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for chunk in TraceReader::open(trace).unwrap() {
        for r in chunk.unwrap().records() {
            *counts
                .entry(r.call_type().variant_name().unwrap_or("?").to_string())
                .or_default() += 1;
        }
    }
    counts
}

fn replayed(dir: &Path, trace: &Path, arch: Arch) -> (Vec<DrawRow>, Vec<SubmitRow>) {
    let out = dir.join("r.msr");
    let options = ReplayOptions {
        chipset: driver::chipset::Chipset::for_arch(arch),
        frames: None,
        repeat: 1,
        read: ReadOptions::default(),
        mme_budget: replayer::DEFAULT_MME_BUDGET,
        remember_macro_runs: true,
    };
    replay(trace, &out, &options, &mut |_, _| {}).unwrap();
    let (mut draws, mut submits) = (Vec::new(), Vec::new());
    for chunk in ResultsReader::open(&out).unwrap() {
        let chunk = chunk.unwrap();
        draws.extend(chunk.draws().copied());
        submits.extend(chunk.submits().copied());
    }
    (draws, submits)
}

/// Each draw command issued is in the trace, and each frame ends in it.
fn assert_draws_match(trace: &Path, issued: &Issued, frames: u64) {
    let counts = calls(trace);
    assert_eq!(counts["FrameBoundary"], frames, "{counts:?}");
    for (command, n) in issued.0["draws"].as_object().unwrap() {
        assert_eq!(
            counts.get(command).copied().unwrap_or(0),
            n.as_u64().unwrap(),
            "{command}: {counts:?}"
        );
    }
}

/// Frame boundaries in the whole chunks of `trace` so far (none where it is not there
/// yet); a chunk being written stops the count.
fn frames_written(trace: &Path) -> u64 {
    let Ok(reader) = TraceReader::open(trace) else {
        return 0;
    };
    let mut frames = 0;
    for chunk in reader {
        let Ok(chunk) = chunk else { break };
        frames += chunk
            .records()
            .filter(|r| r.call_type() == trace_format::generated::trace::Call::FrameBoundary)
            .count() as u64;
    }
    frames
}

/// A program that draws a few frames and then waits (for input, as a viewer drawing on
/// demand does) is killed: the frames it drew are in the trace, and replay. They share
/// a chunk that only a later frame or the program's exit would have closed; the layer
/// sends them to the file once the program has been quiet a while.
#[test]
fn a_program_killed_while_it_waits_leaves_the_frames_it_drew() {
    use std::io::BufRead;
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let manifests = layer_manifests(dir.path());
    let trace = dir.path().join("waiting.mscope");
    let frames = 3;
    let mut child = Command::new(env!("CARGO_BIN_EXE_scene"))
        .args(["multiview", &frames.to_string(), "--then-wait"])
        .env("VK_ADD_LAYER_PATH", &manifests)
        .env("VK_INSTANCE_LAYERS", "VK_LAYER_MACROSCOPE_capture")
        .env("MACROSCOPE_CAPTURE_FILE", &trace)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let issued = Issued(serde_json::from_str(&line).unwrap());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while frames_written(&trace) < frames && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_draws_match(&trace, &issued, frames);
    let (draws, _) = replayed(dir.path(), &trace, Arch::Turing);
    let issued_draws: u64 = issued.0["draws"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(draws.len() as u64, issued_draws);
}

#[test]
fn multiview_scene_draws_expand_to_their_views_and_queries_to_their_slots() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let frames = 3;
    let (trace, issued) = capture(dir.path(), "multiview", frames);
    assert_draws_match(&trace, &issued, frames);
    let counts = calls(&trace);
    assert_eq!(counts["CmdEndQuery"], issued.count("queries", "occlusion"));
    assert_eq!(
        counts["CmdWriteTimestamp"],
        issued.count("queries", "timestamp")
    );
    for arch in [Arch::Turing, Arch::Fermi] {
        let (draws, submits) = replayed(dir.path(), &trace, arch);
        let mut masks = BTreeMap::new();
        for d in &draws {
            *masks.entry(d.view_mask()).or_insert(0u64) += 1;
            assert_eq!(u32::from(d.view_count()), d.view_mask().count_ones());
            // One hardware draw per view and instance.
            assert_eq!(
                d.hw_draws(),
                d.view_mask().count_ones() * d.instance_count(),
                "{d:?}"
            );
        }
        for (mask, n) in issued.0["view_masks"].as_object().unwrap() {
            let mask: u32 = mask.parse().unwrap();
            assert_eq!(masks[&mask], n.as_u64().unwrap(), "{masks:?}");
        }
        // Per frame: the 4-view occlusion query takes 4 slots, the four 2-view ones 2
        // each, and the 3 timestamps (outside render passes) 1 each. As NVK does, the
        // first view's slot gets the real report and the others zeros.
        let queries: u64 = submits.iter().map(|s| u64::from(s.queries())).sum();
        let zeros: u64 = submits.iter().map(|s| u64::from(s.zero_queries())).sum();
        assert_eq!(queries + zeros, frames * (4 + 4 * 2 + 3), "{arch:?}");
        assert_eq!(zeros, frames * (3 + 4), "{arch:?}");
    }
}

#[test]
fn a_program_that_probes_with_an_instance_first_has_the_frames_it_renders_after_captured() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let frames = 3;
    // An instance and device made and destroyed first, as Zink under ParaView's pvpython
    // does before the screen it renders on: capture goes on into the second instance.
    let (trace, issued) = capture_with(dir.path(), "multiview", frames, &["--probe-first"]);
    let counts = calls(&trace);
    assert_eq!(counts["CreateInstance"], 2, "{counts:?}");
    assert_eq!(counts["DestroyInstance"], 2, "{counts:?}");
    assert_eq!(counts["CreateDevice"], 2, "{counts:?}");
    assert_draws_match(&trace, &issued, frames);
    // It ends with a footer, written at exit, and replays every draw.
    let reader = TraceReader::open(&trace).unwrap();
    assert_eq!(
        reader.container().footer_frame_count(),
        Some(frames),
        "the footer"
    );
    let (draws, _) = replayed(dir.path(), &trace, Arch::Turing);
    let issued_draws: u64 = issued.0["draws"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(draws.len() as u64, issued_draws);
}

#[test]
fn a_second_device_runs_on_channels_of_its_own_and_a_device_replay_makes_one_for_two_alike() {
    use replayer::device::{replay_on_device, DeviceOptions};
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A buffer on the scene's device, then a second instance and device, submitted to
    // once and kept to the end, as a program with two GL contexts on Zink makes (Sweet
    // Home 3D).
    let (trace, _) = capture_with(dir.path(), "multiview", 2, &["--second-device"]);
    let counts = calls(&trace);
    assert_eq!(counts["CreateDevice"], 2, "{counts:?}");
    // NVK gives each device's queue a channel of its own, and so does the model: the
    // submits that go from one device to the other run on their own channel's state,
    // and a strict replay executes every command.
    let out = Command::new(macroscope_binary())
        .args(["replay", "--strict", "-o"])
        .arg(dir.path().join("strict.msr"))
        .arg(&trace)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("(100.0%)"), "{said}");
    // The second device asks for what the first asked: a replay on a device makes one
    // device for both, the first's memory still there for the scene's draws after it.
    let summary = replay_on_device(&trace, &DeviceOptions::default(), &mut |_, _| {})
        .expect("both devices' work replays on one");
    assert_eq!(summary.devices_made_again, 1);
    assert_eq!(summary.submits, counts["QueueSubmit"], "{counts:?}");

    // A second device that asks for another feature is made as asked, the newest
    // driven: the first one's memory is not there, and the error says why.
    let (trace, _) = capture_with(dir.path(), "multiview", 2, &["--second-device-unlike"]);
    let e = replay_on_device(&trace, &DeviceOptions::default(), &mut |_, _| {})
        .expect_err("the first device's memory is gone");
    let said = e.to_string();
    assert!(
        said.contains("the trace makes a second device at #") && said.contains("drives one device"),
        "{said}"
    );
}

#[test]
fn a_device_made_again_starts_on_fresh_channels_so_its_draws_cost_what_they_first_did() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The multiview scene, then its device and instance destroyed and the scene run
    // again on new ones, as VLC makes its devices in turn.
    let (trace, _) = capture_with(dir.path(), "multiview", 2, &["--again-on-a-new-device"]);
    let counts = calls(&trace);
    assert_eq!(
        (counts["CreateDevice"], counts["DestroyDevice"]),
        (2, 2),
        "{counts:?}"
    );
    // NVK sets a new device's queue up on a channel of its own, its MME scratch fresh
    // (the draw macros' last view index written among it): the second run's draws
    // cost what the first run's did, draw for draw, on both MME generations.
    for arch in [Arch::Turing, Arch::Fermi] {
        let (draws, _) = replayed(dir.path(), &trace, arch);
        let cost = |d: &DrawRow| {
            (
                d.kind(),
                d.view_mask(),
                d.mme_instructions(),
                d.methods(),
                d.pushbuf_dwords(),
                d.hw_draws(),
            )
        };
        let (first, again) = draws.split_at(draws.len() / 2);
        assert!(!first.is_empty());
        assert_eq!(
            first.iter().map(cost).collect::<Vec<_>>(),
            again.iter().map(cost).collect::<Vec<_>>(),
            "{arch:?}"
        );
    }
}

#[test]
fn indirect_scene_draws_read_their_arguments_from_captured_memory() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let frames = 2;
    let (trace, issued) = capture(dir.path(), "indirect", frames);
    assert_draws_match(&trace, &issued, frames);
    let (draws, _) = replayed(dir.path(), &trace, Arch::Turing);
    assert_eq!(draws.len() as u64, 4 * frames);
    for frame in draws.chunks(4) {
        // The argument buffer the scene wrote: 4 draws of 1..4 instances; 4 indexed of
        // 2; the count buffer caps the counted ones at 3 and 2.
        let got: Vec<(u32, u32)> = frame
            .iter()
            .map(|d| (d.indirect_draw_count(), d.hw_draws()))
            .collect();
        assert_eq!(
            got,
            [(4, 1 + 2 + 3 + 4), (4, 4 * 2), (3, 1 + 2 + 3), (2, 2 * 2)]
        );
    }
}

#[test]
fn storm_and_tessellation_scenes_replay_every_draw() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (scene, frames, per_frame) in [("storm", 1, 10_000u64), ("tessellation", 2, 4)] {
        let (trace, issued) = capture(dir.path(), scene, frames);
        assert_draws_match(&trace, &issued, frames);
        let counts = calls(&trace);
        assert_eq!(counts["CmdPushConstants"], frames * per_frame, "{scene}");
        let (draws, _) = replayed(dir.path(), &trace, Arch::Turing);
        assert_eq!(draws.len() as u64, frames * per_frame, "{scene}");
    }
}

#[test]
fn the_analyzer_on_real_scene_results() {
    use analyzer::compare::{compare, Thresholds};
    use analyzer::export::{export, Format};
    use analyzer::{GroupBy, Metric, Report};
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (trace, _) = capture(dir.path(), "multiview", 4);
    let run = |name: &str, arch: Arch| {
        let out = dir.path().join(name);
        let options = ReplayOptions {
            chipset: driver::chipset::Chipset::for_arch(arch),
            frames: None,
            repeat: 3,
            read: ReadOptions::default(),
            mme_budget: replayer::DEFAULT_MME_BUDGET,
            remember_macro_runs: true,
        };
        replay(&trace, &out, &options, &mut |_, _| {}).unwrap();
        out
    };
    let (turing, again, fermi) = (
        run("turing.msr", Arch::Turing),
        run("again.msr", Arch::Turing),
        run("fermi.msr", Arch::Fermi),
    );
    let rows: Vec<DrawRow> = ResultsReader::open(&turing)
        .unwrap()
        .flat_map(|c| c.unwrap().draws().copied().collect::<Vec<_>>())
        .collect();

    // Percentiles and breakdowns against the rows (small values are exact).
    let report = Report::build(&turing, GroupBy::ViewCount, 3, Metric::MmeInstructions).unwrap();
    assert_eq!(report.draws, rows.len() as u64);
    let mut mme: Vec<u64> = rows.iter().map(|r| r.mme_instructions().into()).collect();
    mme.sort();
    let h = report.histogram(Metric::MmeInstructions);
    assert_eq!(h.max(), *mme.last().unwrap());
    assert_eq!(h.value_at_quantile(0.5), mme[(mme.len() - 1) / 2]);
    for (group, views) in [("02 views", 2u8), ("04 views", 4)] {
        let g = &report.groups[group];
        let of_group = rows.iter().filter(|r| r.view_count() == views);
        assert_eq!(g.draws, of_group.clone().count() as u64);
        assert_eq!(
            g.sums[3],
            of_group.map(|r| u64::from(r.hw_draws())).sum::<u64>()
        );
    }
    assert_eq!(report.top[0].value, *mme.last().unwrap());

    // Compare: the same replay passes; the Fermi MME, which runs more instructions
    // for the same draws, is flagged; hardware draws agree exactly.
    let counts = [Metric::MmeInstructions, Metric::HwDraws];
    assert!(!compare(&turing, &again, &counts, Thresholds::default())
        .unwrap()
        .regressed());
    let worse = compare(&turing, &fermi, &counts, Thresholds::default()).unwrap();
    assert!(worse.regressed(), "{worse:?}");
    assert!(worse.metrics[0].change_pct > 5.0, "{:?}", worse.metrics[0]);
    assert_eq!(worse.metrics[1].change_pct, 0.0);

    // Perfetto: one slice per draw of every repetition.
    assert_eq!(
        rows.iter().filter(|r| r.repetition() == 2).count() * 3,
        rows.len()
    );
    let mut json = Vec::new();
    export(&turing, Format::Perfetto, &mut json).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let slices = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "draw" && e["ph"] == "X")
        .count();
    assert_eq!(slices, rows.len());

    // Plots: SVG with the metric's title, and a PNG.
    let plots = analyzer::plots::report_plots(&report, &dir.path().join("plots")).unwrap();
    let svg = plots
        .iter()
        .find(|p| {
            p.to_string_lossy().contains("mme-instructions")
                && p.extension().is_some_and(|e| e == "svg")
        })
        .unwrap();
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("Distribution of mme-instructions per draw"));
    assert!(plots
        .iter()
        .any(|p| p.extension().is_some_and(|e| e == "png")));
}

#[test]
fn threads_recording_at_once_get_one_total_order() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let frames = 2;
    let (trace, issued) = capture(dir.path(), "threads", frames);
    assert_draws_match(&trace, &issued, frames);
    // Every record has its own place: sequence numbers count up without gaps, while
    // the threads' draws interleave.
    let mut seqs = Vec::new();
    let mut draw_threads = Vec::new();
    for chunk in TraceReader::open(&trace).unwrap() {
        for r in chunk.unwrap().records() {
            seqs.push(r.envelope().seq());
            if r.call_as_cmd_draw().is_some() {
                draw_threads.push(r.envelope().thread_id());
            }
        }
    }
    assert!(seqs.windows(2).all(|w| w[1] == w[0] + 1));
    let switches = draw_threads.windows(2).filter(|w| w[0] != w[1]).count();
    let threads: std::collections::BTreeSet<_> = draw_threads.iter().collect();
    assert!(threads.len() >= benches::scenes::THREADS, "{threads:?}");
    assert!(
        switches > threads.len(),
        "the recording threads never overlapped"
    );
    let (draws, submits) = replayed(dir.path(), &trace, Arch::Turing);
    let per_frame = benches::scenes::THREADS as u64 * u64::from(benches::scenes::THREAD_DRAWS);
    assert_eq!(draws.len() as u64, frames * per_frame);
    assert!(submits.iter().all(|s| u64::from(s.draws()) == per_frame));
}

#[test]
fn the_compute_scene_replays_its_dispatches_copies_and_fills_as_rows() {
    use trace_format::generated::results::DrawKind;
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let frames = 3;
    let (trace, issued) = capture(dir.path(), "compute", frames);
    let mut indirect_mme = Vec::new();
    for arch in [Arch::Turing, Arch::Fermi] {
        let (rows, submits) = replayed(dir.path(), &trace, arch);
        let count = |kind: DrawKind| rows.iter().filter(|r| r.kind() == kind).count() as u64;
        for (kind, command) in [
            (DrawKind::Dispatch, "CmdDispatch"),
            (DrawKind::DispatchIndirect, "CmdDispatchIndirect"),
            (DrawKind::CopyBuffer, "CmdCopyBuffer"),
            (DrawKind::FillBuffer, "CmdFillBuffer"),
            (DrawKind::ClearColorImage, "CmdClearColorImage"),
            (DrawKind::BlitImage, "CmdBlitImage"),
            (DrawKind::CopyImageToBuffer, "CmdCopyImageToBuffer"),
            (DrawKind::CopyBufferToImage, "CmdCopyBufferToImage"),
        ] {
            assert_eq!(
                count(kind),
                issued.count("draws", command),
                "{arch:?} {command}"
            );
        }
        // Workgroups: 16, 8, 4 direct; 3 read from the indirect buffer. A transfer's
        // elements are its copy-engine launches: the 4 KiB copy is one line.
        let groups = |kind: DrawKind| {
            rows.iter()
                .filter(|r| r.kind() == kind)
                .map(|r| r.element_count())
                .collect::<Vec<_>>()
        };
        assert_eq!(groups(DrawKind::Dispatch)[..3], [16, 8, 4], "{arch:?}");
        assert!(groups(DrawKind::DispatchIndirect).iter().all(|g| *g == 3));
        assert!(groups(DrawKind::CopyBuffer).iter().all(|g| *g == 1));
        // Barriers are rows too: seven a frame (one before the clear, three between
        // dispatches, three between transfers), some of them pushing waits and
        // invalidations.
        let barriers: Vec<&DrawRow> = rows
            .iter()
            .filter(|r| r.kind() == DrawKind::PipelineBarrier)
            .collect();
        assert_eq!(barriers.len() as u64, 7 * frames, "{arch:?}");
        assert!(barriers.iter().any(|r| r.pushbuf_dwords() > 0), "{arch:?}");
        for r in rows
            .iter()
            .filter(|r| r.kind() != DrawKind::PipelineBarrier)
        {
            // NVK 25.0.7 transfers on the copy engine: no macro runs for them.
            let copy_engine = matches!(
                r.kind(),
                DrawKind::CopyBuffer
                    | DrawKind::FillBuffer
                    | DrawKind::CopyImageToBuffer
                    | DrawKind::CopyBufferToImage
            );
            assert_eq!(
                r.mme_instructions() > 0,
                !copy_engine,
                "{arch:?} {:?}",
                r.kind()
            );
            assert!(r.pushbuf_dwords() > 0, "{arch:?}");
            // The blit is NVK's meta draw: one rectangle; the rest draw nothing.
            let draws = u32::from(r.kind() == DrawKind::BlitImage);
            assert_eq!(r.hw_draws(), draws, "{arch:?} {:?}", r.kind());
        }
        // One 64 × 64 layer: one rectangle copy.
        assert!(groups(DrawKind::CopyImageToBuffer).iter().all(|g| *g == 1));
        // The clear binds eight colour targets and no depth target, then clears the
        // image's layers through the CLEAR macro.
        let clear = rows
            .iter()
            .find(|r| r.kind() == DrawKind::ClearColorImage)
            .unwrap();
        assert!(clear.pushbuf_dwords() > 8 * 11, "{arch:?}");
        // The barriers between dispatches are in the submits' totals, not in a row.
        let row_dwords: u64 = rows.iter().map(|r| u64::from(r.pushbuf_dwords())).sum();
        let submit_dwords: u64 = submits.iter().map(|s| s.pushbuf_dwords()).sum();
        assert!(
            submit_dwords > row_dwords,
            "{submit_dwords} vs {row_dwords}"
        );
        indirect_mme.push(
            rows.iter()
                .find(|r| r.kind() == DrawKind::DispatchIndirect)
                .map(|r| r.mme_instructions())
                .unwrap(),
        );
    }
    // DISPATCH_INDIRECT multiplies in hardware on Turing, in a loop before it.
    assert!(indirect_mme[1] > indirect_mme[0], "{indirect_mme:?}");
    // Every command, barriers and events included, is executed (`replay --strict`).
    let out = dir.path().join("strict.msr");
    let options = ReplayOptions {
        chipset: driver::chipset::Chipset::for_arch(Arch::Turing),
        frames: None,
        repeat: 1,
        read: ReadOptions::default(),
        mme_budget: replayer::DEFAULT_MME_BUDGET,
        remember_macro_runs: true,
    };
    let summary = replay(&trace, &out, &options, &mut |_, _| {}).unwrap();
    assert_eq!(summary.first_unmodelled, None);
    assert_eq!(summary.executed_commands, summary.recorded_commands);
    assert!(summary.recorded_commands >= frames * 12, "{summary:?}");
}

#[test]
fn two_captures_differing_by_one_draw_match_every_other_draw() {
    use analyzer::changes::changes;
    use analyzer::Metric;
    if !ready() {
        return;
    }
    let (plain_dir, extra_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (plain, _) = capture(plain_dir.path(), "multiview", 3);
    let (extra, issued) = capture_with(extra_dir.path(), "multiview", 3, &["--extra-draw"]);
    assert_eq!(issued.count("view_masks", "15"), 3 * 2 + 1);
    let replay_to = |trace: &Path, dir: &Path| {
        let out = dir.join("r.msr");
        let options = ReplayOptions {
            chipset: driver::chipset::Chipset::for_arch(Arch::Turing),
            frames: None,
            repeat: 1,
            read: ReadOptions::default(),
            mme_budget: replayer::DEFAULT_MME_BUDGET,
            remember_macro_runs: true,
        };
        replay(trace, &out, &options, &mut |_, _| {}).unwrap();
        out
    };
    let (a, b) = (
        replay_to(&plain, plain_dir.path()),
        replay_to(&extra, extra_dir.path()),
    );
    let counts: Vec<Metric> = Metric::ALL.into_iter().filter(|m| !m.is_timing()).collect();
    let found = changes(&a, &b, &counts, 10).unwrap();
    // Two captures: matched by what each draw is, frame by frame. The extra draw is
    // the one added row; every other row matches its counterpart with no change.
    assert_eq!(found.matched_by, "identity");
    assert_eq!(
        (found.added_count, found.removed_count),
        (1, 0),
        "{found:?}"
    );
    assert!(found.metrics.is_empty(), "{found:?}");
    // The same trace replayed twice: matched by sequence number.
    let again = replay_to(&plain, extra_dir.path());
    let same = changes(&a, &again, &counts, 10).unwrap();
    assert_eq!(same.matched_by, "sequence");
    assert_eq!((same.added_count, same.removed_count), (0, 0));
}

/// What the trace's vkCreateGraphicsPipelines records say of each pipeline made.
#[derive(Debug, PartialEq)]
struct PipelineMade {
    /// The parts it defines (`VkGraphicsPipelineLibraryCreateInfoEXT`).
    parts: u32,
    /// The libraries it is linked from.
    libraries: usize,
    /// Its recorded viewports' widths (from the pre-rasterization part).
    viewport_widths: Vec<f32>,
    /// Its recorded attachments' write masks (from the fragment output part).
    write_masks: Vec<u32>,
    /// Its recorded sample count (from either fragment part).
    samples: u32,
}

fn pipelines_made(trace: &Path) -> Vec<PipelineMade> {
    let mut made = Vec::new();
    for chunk in TraceReader::open(trace).unwrap() {
        for r in chunk.unwrap().records() {
            let Some(c) = r.call_as_create_graphics_pipelines() else {
                continue;
            };
            for p in c.pipelines().into_iter().flatten() {
                let state = p.state().unwrap();
                made.push(PipelineMade {
                    parts: p.library_parts(),
                    libraries: p.libraries().map_or(0, |l| l.len()),
                    viewport_widths: state
                        .viewports()
                        .into_iter()
                        .flatten()
                        .map(|v| v.width())
                        .collect(),
                    write_masks: state
                        .blend_attachments()
                        .into_iter()
                        .flatten()
                        .map(|a| a.color_write_mask())
                        .collect(),
                    samples: state.rasterization_samples(),
                });
            }
        }
    }
    made
}

#[test]
fn a_pipeline_linked_from_libraries_replays_as_the_same_pipeline_made_whole() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let frames = 5;
    let (trace, issued) = capture(dir.path(), "libraries", frames);
    assert_draws_match(&trace, &issued, frames);
    // The whole pipeline, the three libraries with their parts, the linked pipeline;
    // each with the static state of the parts it defines (a 64-pixel viewport, one
    // attachment writing RGBA, one sample), none of the others'.
    let made = |parts, libraries, viewport: bool, blend: bool, samples| PipelineMade {
        parts,
        libraries,
        viewport_widths: if viewport { vec![64.0] } else { vec![] },
        write_masks: if blend { vec![0xf] } else { vec![] },
        samples,
    };
    assert_eq!(
        pipelines_made(&trace),
        [
            made(0, 0, true, true, 1),
            made(0x1, 0, false, false, 0),
            made(0x2 | 0x4, 0, true, false, 1),
            made(0x8, 0, false, true, 1),
            made(0, 3, false, false, 0),
        ]
    );
    for arch in [Arch::Turing, Arch::Fermi] {
        let (draws, _) = replayed(dir.path(), &trace, arch);
        assert_eq!(draws.len() as u64, frames);
        // Each frame's command buffer starts with nothing known, so its one draw
        // flushes everything: the linked pipeline's shaders, topology and attachments
        // cost what the whole pipeline's do. (The first frame's macros find the GPU
        // as the device's initialization left it, and do more.)
        let cost = |d: &DrawRow| (d.mme_instructions(), d.methods(), d.pushbuf_dwords());
        for pair in draws[1..].windows(2) {
            assert_ne!(pair[0].pipeline(), pair[1].pipeline());
            assert_eq!(cost(&pair[0]), cost(&pair[1]), "{arch:?}");
        }
    }
}

#[test]
fn every_byte_the_mapped_scene_writes_is_in_the_trace_before_its_submit() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let frames = 5;
    let (trace, _) = capture(dir.path(), "mapped", frames);
    assert_mapped_writes_recorded(&trace, frames);
}

/// A program that writes more into mapped memory at once than a trace chunk holds (64
/// MiB; Blender 5.2 on its Vulkan backend does) is captured whole: its write is
/// recorded in pieces, every byte of it in the trace before the first submit, and the
/// capture goes on. Recorded as one record, it stopped the capture ("declared chunk
/// payload of ... bytes exceeds the limit").
#[test]
fn a_write_to_mapped_memory_larger_than_a_chunk_is_captured_whole() {
    use benches::scenes::{big_write_word, BIG_WRITE, MAPPED_BYTES};
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let frames = 3;
    let (trace, _) = capture_with(dir.path(), "mapped", frames, &["--big-write"]);
    assert_mapped_writes_recorded(&trace, frames);
    // The big write, as the records before the first submit hold it.
    let start = MAPPED_BYTES - BIG_WRITE;
    let mut region = vec![0u8; BIG_WRITE as usize];
    let found = walk_mapped(
        &trace,
        |offset, data| {
            let end = offset + data.len() as u64;
            let (from, to) = (offset.max(start), end.min(MAPPED_BYTES));
            if from < to {
                let at = (from - start) as usize;
                region[at..at + (to - from) as usize]
                    .copy_from_slice(&data[(from - offset) as usize..(to - offset) as usize]);
            }
        },
        || false,
    );
    assert!(found, "no allocation of the mapped scene's size");
    let wrong = region
        .chunks_exact(4)
        .enumerate()
        .filter(|(i, w)| u32::from_le_bytes((*w).try_into().unwrap()) != big_write_word(*i as u64))
        .count();
    assert_eq!(wrong, 0, "{wrong} words of the big write missing or wrong");
}

/// A program that installs a SIGSEGV handler of its own after the layer has installed
/// its (ioquake3 does) keeps its handler for its own faults, and the layer keeps
/// finding its writes to mapped memory, with `libmacroscope_signals.so` preloaded as
/// `macroscope capture` preloads it. Without it the handler got the layer's first
/// fault and the scene ended with status 3 (ioquake3 died of it).
#[test]
fn a_program_installing_its_own_fault_handler_keeps_it_and_its_writes_are_recorded() {
    if !ready() {
        return;
    }
    let signals =
        layer_library().with_file_name(macroscope_capture::fault_chain::SIGNALS_LIBRARY_FILE);
    assert!(
        signals.is_file(),
        "no {} (cargo build -p capture-signals)",
        signals.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let frames = 5;
    let trace = dir.path().join("mapped.mscope");
    let out = Command::new(env!("CARGO_BIN_EXE_scene"))
        .args(["mapped", &frames.to_string(), "--own-fault-handler"])
        .env("VK_ADD_LAYER_PATH", layer_manifests(dir.path()))
        .env("VK_INSTANCE_LAYERS", "VK_LAYER_MACROSCOPE_capture")
        .env("MACROSCOPE_CAPTURE_FILE", &trace)
        .env("LD_PRELOAD", &signals)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("its own SIGSEGV handler took 1 fault(s)"),
        "{stderr}"
    );
    assert_mapped_writes_recorded(&trace, frames);
}

/// Every word the mapped scene wrote in each frame is in the trace before that frame's
/// submit.
fn assert_mapped_writes_recorded(trace: &Path, frames: u64) {
    use benches::scenes::MAPPED_WRITE;
    // The contents recorded into the mapped memory so far.
    let contents = std::cell::RefCell::new(Vec::<(u64, Vec<u8>)>::new());
    let mut submits = 0u64;
    let found = walk_mapped(
        trace,
        |offset, data| contents.borrow_mut().push((offset, data.to_vec())),
        || {
            // What the trace holds of this frame's MiB, applied in order.
            let frame = submits;
            let start = frame * MAPPED_WRITE;
            let mut region = vec![0u8; MAPPED_WRITE as usize];
            for (offset, data) in contents.borrow().iter() {
                let end = offset + data.len() as u64;
                let (from, to) = ((*offset).max(start), end.min(start + MAPPED_WRITE));
                if from < to {
                    region[(from - start) as usize..(to - start) as usize]
                        .copy_from_slice(&data[(from - offset) as usize..(to - offset) as usize]);
                }
            }
            let wrong = region
                .chunks_exact(4)
                .enumerate()
                .filter(|(i, w)| {
                    u32::from_le_bytes((*w).try_into().unwrap()) != (frame as u32) ^ (*i as u32)
                })
                .count();
            assert_eq!(
                wrong, 0,
                "frame {frame}: {wrong} words differ at its submit"
            );
            submits += 1;
            true
        },
    );
    assert!(found, "no allocation of the mapped scene's size");
    assert_eq!(submits, frames);
}

/// Walks the mapped scene's trace: `contents` gets each write recorded into its
/// persistently mapped memory (the offset from where its buffer is bound, and the
/// bytes), `submit` each submit, until it answers false. Whether the memory was found.
fn walk_mapped(
    trace: &Path,
    mut contents: impl FnMut(u64, &[u8]),
    mut submit: impl FnMut() -> bool,
) -> bool {
    use benches::scenes::MAPPED_BYTES;
    let mut memory = None;
    let mut bound_at = 0;
    for chunk in TraceReader::open(trace).unwrap() {
        for r in chunk.unwrap().records() {
            if let Some(a) = r.call_as_allocate_memory() {
                if a.size() >= MAPPED_BYTES {
                    memory = Some(a.memory());
                }
            } else if let Some(b) = r.call_as_bind_buffer_memory() {
                if Some(b.memory()) == memory {
                    bound_at = b.offset();
                }
            } else if let Some(c) = r.call_as_memory_contents() {
                if Some(c.memory()) == memory {
                    let data = c.data().map(|d| d.bytes()).unwrap_or_default();
                    contents(c.offset().saturating_sub(bound_at), data);
                }
            } else if r.call_as_queue_submit().is_some() && !submit() {
                return memory.is_some();
            }
        }
    }
    memory.is_some()
}

#[test]
fn every_scene_replays_on_this_device_with_its_frames_as_captured_and_each_draw_timed() {
    use replayer::device::{replay_on_device, DeviceOptions};
    use trace_format::generated::results::DrawKind;
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let options = DeviceOptions {
        gpu_timing: true,
        read_frames: true,
        ..DeviceOptions::default()
    };
    for (scene, frames) in [
        ("multiview", 2),
        ("indirect", 2),
        ("storm", 2),
        ("tessellation", 2),
        ("compute", 2),
        ("threads", 2),
        ("secondary", 2),
        ("mapped", 2),
        ("libraries", 2),
    ] {
        let (trace, _) = capture(dir.path(), scene, frames);
        let device = replay_on_device(&trace, &options, &mut |_, _| {})
            .unwrap_or_else(|e| panic!("{scene}: {e}"));
        // What the driver model replays of the same trace: one row per draw and
        // dispatch (and per copy, fill, clear and barrier, which are not timed).
        let (rows, _) = replayed(dir.path(), &trace, Arch::Turing);
        let timed_kinds = |k: DrawKind| {
            k.0 <= DrawKind::DrawIndirectByteCount.0
                || k == DrawKind::Dispatch
                || k == DrawKind::DispatchIndirect
        };
        let expected = rows.iter().filter(|r| timed_kinds(r.kind())).count();
        assert!(expected > 0, "{scene}");
        assert_eq!(
            device.gpu_times.len(),
            expected,
            "{scene}: {:?}",
            device.gpu_times.first()
        );
        let row_seqs: std::collections::BTreeSet<u64> = rows
            .iter()
            .filter(|r| timed_kinds(r.kind()))
            .map(|r| r.seq())
            .collect();
        for t in &device.gpu_times {
            assert!(t.ns > 0, "{scene}: draw #{} took no GPU time", t.seq);
            assert!(row_seqs.contains(&t.seq), "{scene}: #{} is no draw", t.seq);
        }
        assert!(
            device.submits >= frames,
            "{scene}: {} submits",
            device.submits
        );
        // The scenes name their colour target at each frame boundary: the layer
        // checksums it from the second frame on (the first starts its layout
        // tracking), and the replay draws it bit for bit.
        assert_eq!(device.captured_checksums, frames - 1, "{scene}");
        assert_eq!(device.frames.len() as u64, frames - 1, "{scene}");
        for f in &device.frames {
            assert_eq!(
                f.matches(),
                Some(true),
                "{scene}: frame {} differs",
                f.frame
            );
        }
    }
}

/// The macroscope binary, built beside the scene.
fn macroscope_binary() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_scene")).with_file_name("macroscope")
}

#[test]
fn every_scene_captured_here_matches_nvk_on_both_mme_generations_but_for_explained_differences() {
    if !ready() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let bin = macroscope_binary();
    let bin_dir = bin.parent().unwrap();
    if let Err(why) = replayer::verify::oracle::ready(&root.join("scripts/nvk-oracle"), bin_dir)
        .and_then(|()| {
            bin.is_file()
                .then_some(())
                .ok_or("no macroscope binary".into())
        })
    {
        assert!(
            std::env::var_os("MACROSCOPE_REQUIRE_NVK").is_none(),
            "the NVK oracle must run here: {why}"
        );
        eprintln!("skipping the NVK oracle test: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let allow = root.join("samples/nvk-25.0.7.allow");
    for scene in [
        "multiview",
        "indirect",
        "storm",
        "tessellation",
        "threads",
        "secondary",
        "compute",
        "mapped",
        "libraries",
    ] {
        let (trace, _) = capture(dir.path(), scene, 2);
        for chipset in ["0x162", "0x140"] {
            let out = Command::new(&bin)
                .args([
                    "verify",
                    trace.to_str().unwrap(),
                    "--chipset",
                    chipset,
                    "--allow",
                ])
                .arg(&allow)
                .output()
                .unwrap();
            let report = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{scene} {chipset}: {out:?}");
            assert!(
                report.contains("every difference explained"),
                "{scene} {chipset}: {report}"
            );
            assert!(
                !report.contains("counts differ"),
                "{scene} {chipset}: {report}"
            );
        }
    }
}

/// Every row `export --format json` writes for `results`: its kind, pass and label.
fn placed_rows(results: &Path) -> Vec<(String, String, String)> {
    let out = Command::new(macroscope_binary())
        .args(["export", "--format", "json"])
        .arg(results)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let row: serde_json::Value = serde_json::from_str(l).unwrap();
            let field = |k: &str| row[k].as_str().unwrap().to_string();
            (field("kind"), field("pass"), field("label"))
        })
        .collect()
}

/// `report --by GROUPING`'s groups: name and rows.
fn report_groups(results: &Path, by: &str) -> BTreeMap<String, u64> {
    let out = Command::new(macroscope_binary())
        .args(["report", "--top", "0", "--by", by])
        .arg(results)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let table = text.split_once("\ngroup ").unwrap().1;
    table
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            // The name may hold spaces: the five numbers are the last fields.
            let fields: Vec<&str> = l.split_whitespace().collect();
            let name = fields[..fields.len() - 5].join(" ");
            (name, fields[fields.len() - 5].parse().unwrap())
        })
        .collect()
}

#[test]
fn labels_and_passes_place_each_row_and_add_up_to_the_frame() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let frames = 3;
    let (trace, issued) = capture(dir.path(), "multiview", frames);
    let results = dir.path().join("multiview.msr");
    let replay = Command::new(macroscope_binary())
        .args(["replay", "--strict", "-o"])
        .arg(&results)
        .arg(&trace)
        .output()
        .unwrap();
    // The labels are executed as NVK does (at no cost): --strict passes.
    assert!(replay.status.success(), "{replay:?}");

    // By label: each path holds the rows the scene issued under it, and the groups
    // together hold every row.
    let by_label = report_groups(&results, "label");
    let labelled = issued.0["labelled_draws"].as_object().unwrap();
    assert_eq!(labelled.len(), 5, "{labelled:?}");
    for (path, n) in labelled {
        assert_eq!(
            by_label.get(path).copied(),
            n.as_u64(),
            "{path}: {by_label:?}"
        );
    }
    let rows = placed_rows(&results);
    assert_eq!(by_label.values().sum::<u64>(), rows.len() as u64);
    assert_eq!(by_label.len(), labelled.len(), "{by_label:?}");

    // By pass: two instances a frame, named after their framebuffers, the first with
    // its two draws, the second with one draw per subpass.
    let by_pass = report_groups(&results, "pass");
    for frame in 0..frames {
        let first = format!(
            "frame {frame:06} pass {:04} vkCmdBeginRenderPass \"all views\" 64x64",
            2 * frame + 1
        );
        let second = format!(
            "frame {frame:06} pass {:04} vkCmdBeginRenderPass \"view pairs\" 64x64",
            2 * frame + 2
        );
        assert_eq!(by_pass.get(&first), Some(&2), "{by_pass:?}");
        assert_eq!(by_pass.get(&second), Some(&4), "{by_pass:?}");
    }
    assert_eq!(by_pass.values().sum::<u64>(), rows.len() as u64);

    // A secondary's draws count in the pass its primary began.
    let (trace, _) = capture(dir.path(), "secondary", 2);
    let results = dir.path().join("secondary.msr");
    let replay = Command::new(macroscope_binary())
        .args(["replay", "-o"])
        .arg(&results)
        .arg(&trace)
        .output()
        .unwrap();
    assert!(replay.status.success(), "{replay:?}");
    let rows = placed_rows(&results);
    let draws: Vec<_> = rows
        .iter()
        .filter(|r| r.0.starts_with("vkCmdDraw"))
        .collect();
    assert!(!draws.is_empty());
    for (kind, pass, _) in draws {
        assert!(pass.contains(" pass "), "{kind} outside a pass: {pass}");
    }
}
