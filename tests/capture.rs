//! The capture layer under real programs: vkcube (under Xvfb) through the system
//! Vulkan loader on lavapipe, captured with `macroscope capture`, read back, checked
//! with spirv-val, and replayed; a capture killed mid-run; the Khronos validation layer
//! above and below ours; FFmpeg's Vulkan filters importing memory from host pointers.
//!
//! Needs Xvfb (xvfb-run), vkcube, lavapipe and spirv-val. Without them the tests say so
//! and pass, unless MACROSCOPE_REQUIRE_VULKAN is set (scripts/test sets it, after
//! installing them).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use trace_format::generated::trace::Call;
use trace_format::generic_params::ParamList;
use trace_format::TraceReader;

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether the tests can run here; panics if they must and cannot.
fn vulkan_ready() -> bool {
    let missing: Vec<_> = ["xvfb-run", "vkcube", "spirv-val"]
        .into_iter()
        .filter(|t| !have(t))
        .collect();
    let layer = layer_library();
    if missing.is_empty() && layer.is_file() {
        return true;
    }
    let why = format!(
        "missing {missing:?}{}",
        if layer.is_file() {
            String::new()
        } else {
            format!(", {}", layer.display())
        }
    );
    assert!(
        std::env::var_os("MACROSCOPE_REQUIRE_VULKAN").is_none(),
        "capture tests must run here but cannot: {why} (cargo build -p capture-layer builds the layer)"
    );
    eprintln!("skipping the capture tests: {why}");
    false
}

fn layer_library() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_macroscope")).with_file_name("libmacroscope_capture.so")
}

/// `xvfb-run` on a server number of its own: the tests start several at once, and
/// `xvfb-run -a` picks the first free number without holding it, so two started
/// together can pick the same one and one of them fails to start its server.
fn xvfb_run() -> Command {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let server = 100 + (std::process::id() % 500) * 16 + n % 16;
    let mut c = Command::new("xvfb-run");
    c.args(["-n", &server.to_string(), "-s", "-screen 0 640x480x24"]);
    c
}

/// `macroscope ARGS` under a virtual X server.
fn under_xvfb(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = xvfb_run();
    c.arg(env!("CARGO_BIN_EXE_macroscope"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// Records per call type, and the shader modules' SPIR-V.
fn read(trace: &Path) -> (std::collections::BTreeMap<String, u64>, Vec<Vec<u32>>) {
    let mut counts = std::collections::BTreeMap::new();
    let mut modules = Vec::new();
    for chunk in TraceReader::open(trace).unwrap() {
        let chunk = chunk.unwrap();
        for r in chunk.records() {
            let name = r.call_type().variant_name().unwrap_or("?").to_string();
            *counts.entry(name).or_default() += 1;
            if r.call_type() == Call::CreateShaderModule {
                let m = r.call_as_create_shader_module().unwrap();
                modules.push(m.code().unwrap().iter().collect());
            }
        }
    }
    (counts, modules)
}

/// Structures recorded in `pNext` chains of generically recorded calls, in every whole
/// chunk.
fn chained_structures(trace: &Path) -> usize {
    let mut n = 0;
    for chunk in TraceReader::open(trace).unwrap() {
        let Ok(chunk) = chunk else { break };
        for r in chunk.records() {
            if let Some(c) = r.call_as_vulkan_call() {
                n += ParamList::of(&c)
                    .unwrap()
                    .iter()
                    .map(|p| p.chain().map_or(0, |c| c.len()))
                    .sum::<usize>();
            }
        }
    }
    n
}

/// The byte sizes of what the structures in parameter `param` of `command` point to.
fn nested_sizes(trace: &Path, command: &str, param: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    for chunk in TraceReader::open(trace).unwrap() {
        let chunk = chunk.unwrap();
        for r in chunk.records() {
            let Some(c) = r.call_as_vulkan_call() else {
                continue;
            };
            if trace_format::names::generic_command(&c) != Some(command) {
                continue;
            }
            let p = ParamList::of(&c).unwrap().get(param).unwrap();
            for n in p.nested().into_iter().flatten() {
                sizes.push(n.bytes().map_or(0, |b| b.len()));
            }
        }
    }
    sizes
}

/// The generically recorded calls: command name and each parameter's bytes.
fn generic_calls(trace: &Path) -> Vec<(String, Vec<Vec<u8>>)> {
    let mut calls = Vec::new();
    for chunk in TraceReader::open(trace).unwrap() {
        let chunk = chunk.unwrap();
        for r in chunk.records() {
            if let Some(c) = r.call_as_vulkan_call() {
                let params = ParamList::of(&c)
                    .unwrap()
                    .iter()
                    .map(|p| p.bytes().unwrap_or_default().to_vec())
                    .collect();
                calls.push((
                    trace_format::names::generic_command(&c)
                        .unwrap()
                        .to_string(),
                    params,
                ));
            }
        }
    }
    calls
}

/// Runs the driver's SPIR-V passes over `words` (ViewIndex, geometry counting, UBO
/// chains, one after another) and checks each output with spirv-val.
fn passes_validate(dir: &Path, words: &[u32]) {
    use driver::spirv::{gs_count, load, ubo_chains, view_index, words as assemble};
    let mut module = load(words).unwrap();
    view_index::lower(&mut module);
    gs_count::lower(&mut module);
    ubo_chains::lower(&mut module);
    let v = spirv_val(dir, &assemble(&module));
    assert!(v.status.success(), "spirv-val after the passes: {v:?}");
}

fn spirv_val(dir: &Path, words: &[u32]) -> Output {
    let path = dir.join("module.spv");
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&path, bytes).unwrap();
    Command::new("spirv-val").arg(&path).output().unwrap()
}

/// `macroscope` keeps its own memory off transparent huge pages (they cost a short
/// replay a third of its time), but the program it captures runs as it does alone:
/// the setting would pass to it.
#[test]
fn a_captured_program_keeps_the_memory_settings_it_has_alone() {
    if !vulkan_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let status = ["THP_enabled", "/proc/self/status"];
    let alone = Command::new("grep").args(status).output().unwrap();
    if !alone.status.success() {
        eprintln!("skipping: this kernel's /proc/self/status does not say THP_enabled");
        return;
    }
    let trace = dir.path().join("grep.mscope");
    let captured = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .arg("capture")
        .arg("-o")
        .arg(&trace)
        .arg("--")
        .arg("grep")
        .args(status)
        .output()
        .unwrap();
    assert!(captured.status.success(), "{captured:?}");
    assert_eq!(
        String::from_utf8_lossy(&captured.stdout),
        String::from_utf8_lossy(&alone.stdout)
    );
}

/// `macroscope capture` preloads the library that keeps the layer's fault handler
/// installed when the program installs its own, before what the user preloads.
#[test]
fn capture_preloads_the_fault_handler_keeper_before_the_users_preloads() {
    if !vulkan_ready() {
        return;
    }
    let signals = layer_library().with_file_name("libmacroscope_signals.so");
    assert!(
        signals.is_file(),
        "no {} (cargo build -p capture-signals)",
        signals.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(["capture", "-o"])
        .arg(dir.path().join("sh.mscope"))
        .args(["--", "sh", "-c", "echo \"$LD_PRELOAD\""])
        .env("LD_PRELOAD", "libuser.so")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let preload = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        preload.trim(),
        format!("{}:libuser.so", signals.canonicalize().unwrap().display())
    );
}

#[test]
fn vkcube_captures_100_frames_that_read_back_validate_and_replay() {
    if !vulkan_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("cube.mscope");
    let out = under_xvfb(
        &[
            "capture",
            "-o",
            trace.to_str().unwrap(),
            "--",
            "vkcube",
            "--c",
            "100",
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout.contains("trace: ") && stdout.contains("· 100 frames"),
        "{stdout}"
    );

    let (counts, modules) = read(&trace);
    assert_eq!(counts["FrameBoundary"], 100, "{counts:?}");
    assert_eq!(counts["QueuePresent"], 100, "{counts:?}");
    assert!(counts["QueueSubmit"] >= 100, "{counts:?}");
    assert!(
        counts["CmdDraw"] >= 1 && counts["CreateGraphicsPipelines"] >= 1,
        "{counts:?}"
    );
    // vkcube's uniform buffer is rewritten every frame through a mapping.
    assert!(counts["MemoryContents"] >= 100, "{counts:?}");
    assert_eq!(
        modules.len(),
        2,
        "vkcube has a vertex and a fragment shader"
    );
    for m in &modules {
        let v = spirv_val(dir.path(), m);
        assert!(v.status.success(), "spirv-val: {v:?}");
        passes_validate(dir.path(), m);
    }

    // Every other command is recorded generically, with its parameters: vkcube's
    // dynamic viewport is one VkViewport of its 500×500 window.
    let generic = generic_calls(&trace);
    for command in [
        "vkCreateSwapchainKHR",
        "vkAcquireNextImageKHR",
        "vkUpdateDescriptorSets",
        "vkCmdSetScissor",
    ] {
        assert!(
            generic.iter().any(|(name, _)| name == command),
            "{command} missing"
        );
    }
    let (_, viewport) = generic
        .iter()
        .find(|(name, _)| name == "vkCmdSetViewport")
        .unwrap();
    let bytes = viewport[3].as_slice();
    assert_eq!(bytes.len(), 24, "one VkViewport");
    let width = f32::from_le_bytes(bytes[8..12].try_into().unwrap());
    assert_eq!(width, 500.0);

    // Pointers inside structures are followed: vkcube's descriptor writes carry the
    // uniform buffer's VkDescriptorBufferInfo (buffer, offset, range: 24 bytes).
    assert!(nested_sizes(&trace, "vkUpdateDescriptorSets", 2).contains(&24));

    // Replay: one row per draw vkcube submitted, on both MME generations.
    let results = dir.path().join("cube.msr");
    for mme in ["turing", "fermi"] {
        let r = Command::new(env!("CARGO_BIN_EXE_macroscope"))
            .args([
                "replay",
                trace.to_str().unwrap(),
                "-o",
                results.to_str().unwrap(),
                "--mme",
                mme,
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&r.stdout);
        assert!(r.status.success(), "{r:?}");
        assert!(
            text.contains("100 draws") || text.contains("101 draws"),
            "{text}"
        );
    }

    // Real NVK pushes what the model pushes, but for the explained differences.
    assert_verifies_on_nvk(&trace);

    // The layer checksummed every presented frame; replayed on this device, the trace
    // draws the same 100 frames, bit for bit.
    assert_eq!(counts["FrameChecksum"], 100, "{counts:?}");
    assert_frames_match(&trace, 100, &[]);
    // Looped twice over frames 10-19 (after the ten before them): each pass starts
    // from the memory the first found, and draws the same frames again.
    assert_frames_match(&trace, 30, &["--loop", "2", "--frames", "10-19"]);
}

/// Captures `frames` frames of vkcube under Xvfb with `capture`'s `options`, into
/// `NAME.mscope` in `dir`; the capture must succeed.
fn capture_vkcube(dir: &Path, name: &str, options: &[&str], frames: u32) -> PathBuf {
    let trace = dir.join(format!("{name}.mscope"));
    let frames = frames.to_string();
    let mut args = vec!["capture"];
    args.extend_from_slice(options);
    args.extend([
        "-o",
        trace.to_str().unwrap(),
        "--",
        "vkcube",
        "--c",
        &frames,
    ]);
    let out = under_xvfb(&args, &[]);
    assert!(out.status.success(), "{out:?}");
    trace
}

/// A capture of a window of frames (`--frames 10-19`) holds the waits of the frames
/// before it but not their submits; on the device the replay answers those waits
/// (a fence no replayed submit signals would hang it) and every frame of the window
/// draws what the program drew, its checksum coming frames after its present.
#[test]
fn a_window_of_frames_replays_on_the_device_and_draws_the_captured_frames() {
    if !vulkan_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = capture_vkcube(dir.path(), "window", &["--frames", "10-19"], 40);
    let (counts, _) = read(&trace);
    assert_eq!(counts["FrameChecksum"], 10, "{counts:?}");
    // Bounded: a replay that waits for a fence nothing signals never ends.
    let r = Command::new("timeout")
        .arg("120")
        .arg(env!("CARGO_BIN_EXE_macroscope"))
        .args(["replay", "--device", "--check-frames"])
        .arg(&trace)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(r.status.success(), "{r:?}");
    assert!(
        text.contains("frames checked: 10 of 10 match the capture"),
        "{text}"
    );
}

/// `capture --frame-checksums 25`: of 100 frames, frames 0, 25, 50 and 75 are read
/// back; the replay on the device checks those four and no others, and each matches.
#[test]
fn every_nth_frame_is_checksummed_when_asked_and_those_frames_match() {
    if !vulkan_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = capture_vkcube(dir.path(), "sparse", &["--frame-checksums", "25"], 100);
    let (counts, _) = read(&trace);
    assert_eq!(counts["FrameBoundary"], 100, "{counts:?}");
    assert_eq!(counts["FrameChecksum"], 4, "{counts:?}");
    assert_frames_match(&trace, 4, &[]);

    // A choice the layer would not understand is refused before the program starts.
    let bad = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(["capture", "--frame-checksums", "often", "--", "vkcube"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("a frame period"),
        "{bad:?}"
    );
}

/// `macroscope verify` of `trace` against NVK 25.0.7 on a Turing and a pre-Turing
/// chipset passes with the project's allow file: every difference explained, the draws
/// paired one to one. Skipped (with a line) where the oracle is not set up, unless
/// MACROSCOPE_REQUIRE_NVK is set.
/// Whether the NVK oracle can run here; panics if it must and cannot.
fn nvk_oracle_ready() -> bool {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_macroscope"))
        .parent()
        .unwrap();
    match replayer::verify::oracle::ready(&root.join("scripts/nvk-oracle"), bin_dir) {
        Ok(()) => true,
        Err(why) => {
            assert!(
                std::env::var_os("MACROSCOPE_REQUIRE_NVK").is_none(),
                "the NVK oracle must run here: {why}"
            );
            eprintln!("not verified against NVK: {why}");
            false
        }
    }
}

fn assert_verifies_on_nvk(trace: &Path) {
    if !nvk_oracle_ready() {
        return;
    }
    let allow = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/nvk-25.0.7.allow");
    for chipset in ["0x162", "0x140"] {
        let out = Command::new(env!("CARGO_BIN_EXE_macroscope"))
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
        assert!(out.status.success(), "{chipset}: {out:?}");
        assert!(report.contains("every difference explained"), "{report}");
        assert!(!report.contains("draws:           NVK 0,"), "{report}");
        assert!(!report.contains("counts differ"), "{report}");
    }
}

/// `replay --device --check-frames` on `trace` (with `extra` arguments): it succeeds,
/// every one of the `frames` frames checked matches.
fn assert_frames_match(trace: &Path, frames: u64, extra: &[&str]) {
    let r = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args([
            "replay",
            "--device",
            "--check-frames",
            trace.to_str().unwrap(),
        ])
        .args(extra)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(r.status.success(), "{r:?}");
    assert!(
        text.contains(&format!(
            "frames checked: {frames} of {frames} match the capture"
        )),
        "{text}"
    );
}

/// FFmpeg's Vulkan filters upload frames from the program's own memory, imported with
/// VK_EXT_external_memory_host, and never map any: every write the trace holds was made
/// through an imported pointer, recorded as mapped memory is. The trace replays on
/// lavapipe, which imports host memory too, and under NVK 25.0.7, which cannot (the
/// replay stands host-visible memory in, filled from the trace), where every
/// difference is explained.
#[test]
fn memory_imported_from_host_pointers_is_recorded_and_replays_without_the_extension() {
    if !vulkan_ready() || !have("ffmpeg") {
        assert!(
            std::env::var_os("MACROSCOPE_REQUIRE_VULKAN").is_none(),
            "ffmpeg must be here (scripts/test installs it)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("ffmpeg.mscope");
    let out = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(["capture", "-o", trace.to_str().unwrap(), "--"])
        .args([
            "ffmpeg",
            "-hide_banner",
            "-loglevel",
            "error",
            "-init_hw_device",
            "vulkan=vk:0",
            "-filter_hw_device",
            "vk",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=160x120:rate=30",
            "-vf",
            "format=yuv420p,hwupload,scale_vulkan=w=80:h=60,hwdownload,format=yuv420p",
            "-frames:v",
            "8",
            "-f",
            "null",
            "-",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let (counts, _) = read(&trace);
    let imports = generic_calls(&trace)
        .iter()
        .filter(|(name, _)| name == "vkGetMemoryHostPointerPropertiesEXT")
        .count();
    assert!(imports > 0, "{counts:?}");
    assert_eq!(counts.get("MapMemory"), None, "{counts:?}");
    assert!(
        counts.get("MemoryContents").copied().unwrap_or(0) >= 8,
        "{counts:?}"
    );
    // On lavapipe, with the extension.
    let replayed = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(["replay", "--device", trace.to_str().unwrap(), "-o"])
        .arg(dir.path().join("device.msr"))
        .output()
        .unwrap();
    assert!(replayed.status.success(), "{replayed:?}");
    // Under NVK 25.0.7, without it.
    if !nvk_oracle_ready() {
        return;
    }
    let verified = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(["verify", trace.to_str().unwrap()])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&verified.stdout);
    assert!(verified.status.success(), "{verified:?}");
    assert!(report.contains("every difference explained"), "{report}");
}

#[test]
fn glxgears_through_zink_captures_valid_spirv_and_replays() {
    if !vulkan_ready() || !have("glxgears") {
        assert!(
            std::env::var_os("MACROSCOPE_REQUIRE_VULKAN").is_none(),
            "glxgears is missing"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("gears.mscope");
    // GL through Zink on lavapipe; glxgears runs until `timeout` interrupts it (SIGINT).
    let out = under_xvfb(
        &[
            "capture",
            "-o",
            trace.to_str().unwrap(),
            "--",
            "timeout",
            "-s",
            "INT",
            "3",
            "glxgears",
            // Small enough that Zink suballocates its depth buffer from a block it
            // maps (see the memory-contents check below).
            "-geometry",
            "64x64",
        ],
        &[
            ("LIBGL_ALWAYS_SOFTWARE", "1"),
            ("MESA_LOADER_DRIVER_OVERRIDE", "zink"),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("trace: "), "{out:?}");
    // `timeout` ran out and glxgears ended of its SIGINT, its trace finished: the
    // capture succeeds.
    assert!(out.status.success(), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("timeout ran out of time (status 124); its trace is finished"),
        "{out:?}"
    );
    let (counts, modules) = read_prefix_with_modules(&trace);
    assert!(
        counts.get("FrameBoundary").copied().unwrap_or(0) >= 10,
        "{counts:?}"
    );
    assert!(
        counts.get("CmdDrawIndexed").copied().unwrap_or(0) >= 10,
        "{counts:?}"
    );
    // Zink renders with dynamic rendering.
    assert!(counts.contains_key("CmdBeginRendering"), "{counts:?}");
    // On lavapipe Zink draws through vkCmdDrawMultiIndexedEXT: each draw it makes is
    // stored as compact as a vkCmdDrawIndexed, not as a flatbuffer of its own.
    let (compact, finished) = stored(&trace, Call::CmdDrawIndexed);
    assert!(
        compact >= 10 && finished == 0,
        "{compact} compact, {finished} not"
    );
    // Its command buffers inherit nothing: each vkBeginCommandBuffer is compact too.
    let (compact, finished) = stored(&trace, Call::BeginCommandBuffer);
    assert!(
        compact >= 10 && finished == 0,
        "vkBeginCommandBuffer: {compact} compact, {finished} not"
    );
    // Zink hands its push-descriptor templates a pointer into its context, whose
    // descriptor arrays lie kilobytes apart: the layer records the runs the template's
    // entries read, not the extent between them.
    let (updates, largest) = template_data_recorded(&trace);
    assert!(updates > 0, "glxgears pushes descriptors through templates");
    assert!(largest <= 512, "a template update recorded {largest} bytes");
    // Its feature and property queries chain structures; the generic records keep them.
    assert!(chained_structures(&trace) > 10);
    // Lavapipe's memory is all host-visible: Zink's depth buffer lies in memory it maps
    // for its buffers, and the device rewrites it every frame. Those bytes are the
    // driver's: none of them is recorded as memory contents.
    let (over, optimal_bound) = contents_over_optimal_images(&trace);
    assert!(optimal_bound > 0, "Zink binds optimal-tiling images");
    assert!(
        over.is_empty(),
        "contents recorded over optimal images: {over:?}"
    );
    assert!(!modules.is_empty());
    for m in &modules {
        let v = spirv_val(dir.path(), m);
        assert!(v.status.success(), "spirv-val on Zink's SPIR-V: {v:?}");
        passes_validate(dir.path(), m);
    }
    // glxgears ends of timeout's SIGINT, and the layer finishes the trace first: it reads
    // to its footer and replays whole. The share of vkCmd* calls executed, and every
    // skipped one named (-v): the skipped vkCmd* counts add up to what was not executed.
    assert!(!stdout.contains("not finished"), "{stdout}");
    let results = dir.path().join("gears.msr");
    let verbose = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args([
            "replay",
            "-v",
            trace.to_str().unwrap(),
            "-o",
            results.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(verbose.status.success(), "{verbose:?}");
    let text = String::from_utf8_lossy(&verbose.stdout);
    assert!(text.contains("draws"), "{text}");
    let coverage = text
        .lines()
        .find(|l| l.starts_with("driver model executed "))
        .unwrap_or_else(|| panic!("{text}"));
    let words: Vec<&str> = coverage.split_whitespace().collect();
    let executed: u64 = words[3].parse().unwrap();
    let recorded: u64 = words[5].parse().unwrap();
    assert!(executed > 0 && executed <= recorded, "{coverage}");
    let skipped: u64 = text
        .lines()
        .filter(|l| l.trim_start().starts_with("vkCmd"))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(skipped, recorded - executed, "{text}");
    // Zink sets its dynamic state through vkCmdSet*: the model executes those.
    assert!(!text.contains("vkCmdSetViewportWithCount"), "{text}");
    assert!(!text.contains("vkCmdSetDepthTestEnable "), "{text}");
    // Real NVK pushes what the model pushes, but for the explained differences.
    assert_verifies_on_nvk(&trace);
    let report = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(["report", results.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(report.status.success(), "{report:?}");
    assert!(String::from_utf8_lossy(&report.stdout).contains("DrawIndexed"));

    // Replayed on this device, the frames Zink presented come out as captured.
    let (counts, _) = read(&trace);
    let frames = counts["FrameChecksum"];
    assert!(frames > 0, "{counts:?}");
    assert_frames_match(&trace, frames, &[]);
}

/// Records of `call` in every whole chunk: how many are stored compact (handed over as
/// they are stored when a reader asks for them) and how many are not.
fn stored(trace: &Path, call: Call) -> (usize, usize) {
    use trace_format::direct_records::{ChunkRecord, DirectCalls};
    let options = trace_format::ReadOptions {
        direct: DirectCalls::of(&[call]),
        ..trace_format::ReadOptions::default()
    };
    let (mut compact, mut finished) = (0, 0);
    for chunk in TraceReader::open_with(trace, &options).unwrap() {
        let Ok(chunk) = chunk else { break };
        for entry in chunk.entries() {
            match entry {
                ChunkRecord::Direct(d) if d.call() == call => compact += 1,
                ChunkRecord::Table(t) if t.call_type() == call => finished += 1,
                _ => {}
            }
        }
    }
    (compact, finished)
}

/// Template updates (`vkCmdPushDescriptorSetWithTemplateKHR`) in every whole chunk, and
/// the most bytes one of them recorded for its data (every run together).
fn template_data_recorded(trace: &Path) -> (usize, usize) {
    let (mut updates, mut largest) = (0, 0);
    for chunk in TraceReader::open(trace).unwrap() {
        let Ok(chunk) = chunk else { break };
        for r in chunk.records() {
            let Some(call) = r.call_as_vulkan_call() else {
                continue;
            };
            if trace_format::names::generic_command(&call)
                != Some("vkCmdPushDescriptorSetWithTemplateKHR")
            {
                continue;
            }
            let data = ParamList::of(&call).unwrap().get(4).unwrap();
            let runs = data.nested().map_or(0, |runs| {
                runs.iter()
                    .map(|r| r.bytes().map_or(0, |b| b.len()))
                    .sum::<usize>()
            });
            let whole = data.bytes().map_or(0, |b| b.len());
            updates += 1;
            largest = largest.max(runs + whole);
        }
    }
    (updates, largest)
}

/// Memory-contents records that land on an optimal-tiling image's bytes (the first
/// `width × height` bytes from where it is bound: less than any image's size), as
/// `(image, memory, offset)`, and how many optimal images were bound to memory.
fn contents_over_optimal_images(trace: &Path) -> (Vec<(u64, u64, u64)>, usize) {
    use std::collections::HashMap;
    let mut optimal: HashMap<u64, u64> = HashMap::new();
    let mut bound: Vec<(u64, u64, u64, u64)> = Vec::new();
    let mut contents: Vec<(u64, u64, u64)> = Vec::new();
    for chunk in TraceReader::open(trace).unwrap() {
        let Ok(chunk) = chunk else { break };
        for r in chunk.records() {
            if let Some(c) = r.call_as_create_image() {
                let e = c.extent().unwrap();
                if c.tiling() == 0 {
                    optimal.insert(c.image(), u64::from(e.width()) * u64::from(e.height()));
                }
            } else if let Some(b) = r.call_as_bind_image_memory() {
                if let Some(texels) = optimal.get(&b.image()) {
                    bound.push((b.image(), b.memory(), b.offset(), b.offset() + texels));
                }
            } else if let Some(m) = r.call_as_memory_contents() {
                let len = m.data().map_or(0, |d| d.len()) as u64;
                contents.push((m.memory(), m.offset(), m.offset() + len));
            }
        }
    }
    let over = contents
        .iter()
        .flat_map(|&(memory, start, end)| {
            bound
                .iter()
                .filter(move |&&(_, m, s, e)| m == memory && start < e && s < end)
                .map(move |&(image, ..)| (image, memory, start))
        })
        .collect();
    (over, bound.len())
}

/// Records per call type and shader modules, stopping quietly at a torn last chunk.
fn read_prefix_with_modules(
    trace: &Path,
) -> (std::collections::BTreeMap<String, u64>, Vec<Vec<u32>>) {
    let mut counts = std::collections::BTreeMap::new();
    let mut modules = Vec::new();
    for chunk in TraceReader::open(trace).unwrap() {
        let Ok(chunk) = chunk else { break };
        for r in chunk.records() {
            *counts
                .entry(r.call_type().variant_name().unwrap_or("?").to_string())
                .or_default() += 1;
            if r.call_type() == Call::CreateShaderModule {
                modules.push(
                    r.call_as_create_shader_module()
                        .unwrap()
                        .code()
                        .unwrap()
                        .iter()
                        .collect(),
                );
            }
        }
    }
    (counts, modules)
}

/// `capture --quit-after-frames` ends a program that would run until closed, once the
/// last frame asked for is in the trace: vkcube dies of the layer's SIGTERM; vkcube
/// ignoring SIGTERM is killed 10 s later. Either way the trace is finished and holds
/// every frame asked for, and the capture succeeds.
#[test]
fn quit_after_frames_ends_a_program_that_would_run_on() {
    if !vulkan_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str], &str); 2] = [
        ("dies", &["vkcube"], "signal 15"),
        (
            "ignores",
            &["bash", "-c", "trap '' TERM; exec vkcube"],
            "signal 9",
        ),
    ];
    for (name, program, ended_by) in cases {
        let trace = dir.path().join(format!("{name}.mscope"));
        let mut child = xvfb_run()
            .arg(env!("CARGO_BIN_EXE_macroscope"))
            .args(["capture", "--frames", "0-4", "--quit-after-frames", "-o"])
            .arg(&trace)
            .arg("--")
            .args(program)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // vkcube runs until closed: a capture that does not end it never ends.
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while child.try_wait().unwrap().is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("{name}: the program was not ended after its last frame");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let out = child.wait_with_output().unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "{name}: {out:?}");
        assert!(stdout.contains("· 5 frames"), "{name}: {stdout}");
        assert!(
            stderr.contains(&format!("{ended_by} after its last frame was captured")),
            "{name}: {stderr}"
        );
        let info = Command::new(env!("CARGO_BIN_EXE_macroscope"))
            .arg("info")
            .arg(&trace)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&info.stdout);
        assert!(text.contains("index:       footer"), "{name}: {text}");
        let (counts, _) = read(&trace);
        assert_eq!(counts["FrameBoundary"], 5, "{name}: {counts:?}");
    }
}

#[test]
fn processes_of_one_program_capture_into_traces_of_their_own() {
    if !vulkan_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Two at once (a program and a helper it starts): each trace whole, the one named
    // the first's, the other beside it by process id. Then a third after they ended
    // (a program that probes the GPU in a process of its own before it draws): it
    // writes over the one no process holds any more.
    let trace = dir.path().join("tree.mscope");
    std::fs::write(&trace, b"a trace from an earlier run").unwrap();
    let script = "vkcube --c 20 & vkcube --c 20; wait; vkcube --c 30";
    let out = under_xvfb(
        &[
            "capture",
            "-o",
            trace.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            script,
        ],
        &[],
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}{stderr}");
    let mut traces: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    traces.sort();
    assert_eq!(traces.len(), 2, "{traces:?}\n{stderr}");
    assert!(traces.contains(&trace), "{traces:?}");
    for t in &traces {
        // Whole: the footer's index, and every chunk reads.
        let (counts, _) = read(t);
        let frames = if t == &trace { 30 } else { 20 };
        assert_eq!(
            counts["FrameBoundary"],
            frames,
            "{}: {counts:?}",
            t.display()
        );
        assert!(
            stdout.contains(&format!("trace: {} ·", t.display())),
            "{stdout}"
        );
        if t != &trace {
            assert!(
                stderr.contains(&format!("captures into {}", t.display())),
                "{stderr}"
            );
        }
    }
}

#[test]
fn a_launcher_that_ends_before_its_program_gets_the_whole_trace_reported() {
    if !vulkan_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("launched.mscope");
    // The launcher starts the program, waits until it has begun its trace, and ends.
    let script = format!(
        "vkcube --c 300 & while [ ! -s '{0}' ]; do sleep 0.05; done; exit 0",
        trace.display()
    );
    let out = under_xvfb(
        &[
            "capture",
            "-o",
            trace.to_str().unwrap(),
            "--",
            "sh",
            "-c",
            &script,
        ],
        &[],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    // Reported once the program had finished it: every frame, and its index.
    assert!(stdout.contains("· 300 frames ·"), "{stdout}");
    assert!(!stdout.contains("not finished"), "{stdout}");
}

/// A program that runs set-group-ID (vkcube made a game of group `games`, as Debian
/// installs those keeping shared high scores) takes no layer from the environment's
/// folders: where the layer is not installed in the system's (or its manifest names a
/// library since removed), `capture` says so before the program runs and again when no
/// trace came, naming the program and the command that installs the layer; where it
/// is, the program is captured as any other.
#[test]
fn a_set_group_id_program_is_captured_or_the_user_told_how_to_capture_it() {
    if !vulkan_ready() {
        return;
    }
    // SAFETY: getuid cannot fail.
    if unsafe { libc::getuid() } != 0 {
        eprintln!("skipping: only root can make a program of another group here");
        return;
    }
    // Not under /tmp, which may be mounted so that set-ID bits are ignored.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let game = dir.path().join("vkcube-game");
    std::fs::copy("/usr/bin/vkcube", &game).unwrap();
    std::os::unix::fs::chown(&game, Some(0), Some(60)).unwrap();
    std::fs::set_permissions(&game, std::os::unix::fs::PermissionsExt::from_mode(0o2755)).unwrap();
    let trace = dir.path().join("game.mscope");
    let out = under_xvfb(
        &[
            "capture",
            "-o",
            trace.to_str().unwrap(),
            "--",
            "timeout",
            "60",
            game.to_str().unwrap(),
            "--c",
            "5",
        ],
        &[],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let told = format!("{} runs set-group-ID", game.display());
    let captured = || {
        assert!(out.status.success(), "{stderr}");
        let (counts, _) = read(&trace);
        assert_eq!(counts["FrameBoundary"], 5, "{counts:?}");
    };
    // Nothing recorded, the user told `hint` before the run and why after it.
    let told_before_and_after = |hint: &str| {
        assert!(stderr.contains(hint), "{stderr}");
        assert!(!trace.exists(), "{stderr}");
        assert!(
            stderr.contains(&format!(
                "it wrote no trace ({} runs set-ID: `sudo macroscope capture --install-layer`",
                game.display()
            )),
            "{stderr}"
        );
    };
    let installs_this_one = "`sudo macroscope capture --install-layer` installs this one";
    if !stderr.contains(&told) {
        // This build's layer is installed (the corpus installs it for Emilia Pinball).
        captured();
    } else if stderr.contains("names a library that is not there") {
        // A removed build's manifest is: the loader cannot load it.
        told_before_and_after(installs_this_one);
    } else if stderr.contains("is another build's") {
        // Another build's is: the program is captured by it, as the warning says.
        assert!(stderr.contains(installs_this_one), "{stderr}");
        captured();
    } else {
        // None is.
        told_before_and_after(
            "install the layer once where the loader looks (`sudo macroscope capture --install-layer`",
        );
    }
}

/// `capture --install-layer DIR` writes the manifest the loader reads, naming the layer
/// library beside `macroscope`.
#[test]
fn install_layer_writes_a_manifest_naming_this_builds_layer() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(["capture", "--install-layer", dir.path().to_str().unwrap()])
        .output()
        .unwrap();
    if !layer_library().is_file() {
        assert!(!out.status.success());
        return;
    }
    assert!(out.status.success(), "{out:?}");
    let manifest = dir.path().join("VkLayer_macroscope_capture.json");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    assert_eq!(json["layer"]["name"], "VK_LAYER_MACROSCOPE_capture");
    assert_eq!(
        Path::new(json["layer"]["library_path"].as_str().unwrap()),
        layer_library().canonicalize().unwrap()
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("installed {}", manifest.display())),
        "{stdout}"
    );
}

#[test]
fn a_capture_killed_mid_run_reads_back_to_its_last_whole_chunk() {
    if !vulkan_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("killed.mscope");
    let mut child = xvfb_run()
        .args(["vkcube", "--c", "100000"])
        .env("VK_ADD_LAYER_PATH", manifest_dir(dir.path()))
        .env("VK_INSTANCE_LAYERS", "VK_LAYER_MACROSCOPE_capture")
        .env("MACROSCOPE_CAPTURE_FILE", &trace)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Let it run some frames, then kill vkcube itself with SIGKILL: only the process
    // whose command line starts so, not the `xvfb-run` shell whose line holds it too
    // (killed, it would leave its X server running).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::fs::metadata(&trace).map_or(0, |m| m.len()) < 20_000 {
        assert!(
            std::time::Instant::now() < deadline,
            "the capture never grew"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = Command::new("pkill")
        .args(["-KILL", "-f", "^vkcube --c 100000"])
        .status();
    let _ = child.wait();
    let info = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(["info", trace.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&info.stdout);
    // No footer: the summary of every whole chunk, with frames in it.
    assert!(text.contains("index:       none"), "{text}");
    let (counts, _) = read_prefix(&trace);
    assert!(
        counts.get("FrameBoundary").copied().unwrap_or(0) >= 1,
        "{counts:?}"
    );
    assert!(counts.contains_key("CreateInstance"), "{counts:?}");
}

/// Ctrl-C in the terminal of `macroscope capture -- vkcube`: the terminal sends SIGINT
/// to both. `capture` waits on; the layer finishes the trace (last chunk, footer) before
/// vkcube ends of the signal, and `capture` sums the trace up and succeeds.
#[test]
fn a_program_interrupted_with_ctrl_c_leaves_a_finished_trace() {
    if !vulkan_ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("interrupted.mscope");
    let mut command = xvfb_run();
    command
        .arg(env!("CARGO_BIN_EXE_macroscope"))
        .args(["capture", "-o", trace.to_str().unwrap(), "--"])
        .args(["vkcube", "--c", "99999"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // As in a terminal, SIGINT at its default action: a shell without job control
    // starts what it runs in the background with SIGINT ignored, and the tests may run
    // under one (an ignored SIGINT stays ignored through exec).
    // SAFETY: `signal` is async-signal-safe, as a child before exec needs.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let capture = command.spawn().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::fs::metadata(&trace).map_or(0, |m| m.len()) < 20_000 {
        assert!(
            std::time::Instant::now() < deadline,
            "the capture never grew"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // As the terminal does: `capture` first, then the program (only these two: the
    // `xvfb-run` around them would take its X server down).
    let interrupt = |pattern: &str| {
        Command::new("pkill")
            .args(["-INT", "-f", pattern])
            .status()
            .unwrap()
    };
    assert!(interrupt(&format!(
        "^{} capture -o {}",
        env!("CARGO_BIN_EXE_macroscope"),
        trace.display()
    ))
    .success());
    assert!(interrupt("^vkcube --c 99999").success());
    let out = capture.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stderr.contains("vkcube was interrupted (SIGINT); its trace is finished"),
        "{stderr}"
    );
    assert!(
        stdout.contains("trace: ") && !stdout.contains("not finished"),
        "{stdout}"
    );
    // The footer is there, and every record replays.
    let info = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(["info", trace.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&info.stdout).contains("index:       footer with"),
        "{info:?}"
    );
    let replay = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(["replay", "--strict", trace.to_str().unwrap()])
        .args(["-o", dir.path().join("interrupted.msr").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(replay.status.success(), "{replay:?}");
}

/// Like `read`, but stops quietly at a torn last chunk.
fn read_prefix(trace: &Path) -> (std::collections::BTreeMap<String, u64>, ()) {
    let mut counts = std::collections::BTreeMap::new();
    for chunk in TraceReader::open(trace).unwrap() {
        let Ok(chunk) = chunk else { break };
        for r in chunk.records() {
            *counts
                .entry(r.call_type().variant_name().unwrap_or("?").to_string())
                .or_default() += 1;
        }
    }
    (counts, ())
}

/// Writes the layer's manifest into `dir` (as `macroscope capture --write-manifest`).
fn manifest_dir(dir: &Path) -> PathBuf {
    let manifests = dir.join("layer");
    let out = Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(["capture", "--write-manifest", manifests.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    manifests
}

#[test]
fn the_validation_layer_sees_nothing_wrong_with_ours_above_or_below_it() {
    if !vulkan_ready()
        || !Path::new("/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json").exists()
    {
        assert!(
            std::env::var_os("MACROSCOPE_REQUIRE_VULKAN").is_none() || vulkan_ready(),
            "the validation layer is missing"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let layers = manifest_dir(dir.path());
    let run = |order: &str| {
        let out = xvfb_run()
            .args(["vkcube", "--c", "30", "--validate"])
            .env("VK_ADD_LAYER_PATH", &layers)
            .env("VK_INSTANCE_LAYERS", order)
            .env("MACROSCOPE_CAPTURE_FILE", dir.path().join("v.mscope"))
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let messages: Vec<String> = text
            .lines()
            .filter(|l| {
                l.contains("VUID")
                    || l.contains("Validation Error")
                    || l.contains("Validation Warning")
            })
            .map(str::to_string)
            .collect();
        (out.status.success().then_some(()).ok_or(text), messages)
    };
    let (ok, baseline) = run("VK_LAYER_KHRONOS_validation");
    assert!(ok.is_ok(), "{ok:?}");
    for order in [
        "VK_LAYER_KHRONOS_validation:VK_LAYER_MACROSCOPE_capture",
        "VK_LAYER_MACROSCOPE_capture:VK_LAYER_KHRONOS_validation",
    ] {
        let (ok, messages) = run(order);
        assert!(ok.is_ok(), "{order}: {ok:?}");
        let ours: Vec<_> = messages.iter().filter(|m| !baseline.contains(m)).collect();
        assert!(
            ours.is_empty(),
            "{order}: messages only with our layer: {ours:#?}"
        );
        let (counts, _) = read(&dir.path().join("v.mscope"));
        assert_eq!(counts["FrameBoundary"], 30, "{order}: {counts:?}");
    }
}
