//! `replay --device` on this machine's Vulkan device (lavapipe in CI): the NVIDIA
//! captures in `samples/` replay here with their memory types remapped, every draw
//! timed; the timings reach `report`; a trace asking for what the device lacks fails
//! with the object and the call before anything is submitted.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use trace_format::generated::results::DrawKind;
use trace_format::generated::trace::{Call, CallT, VulkanParamT};
use trace_format::generic_params;
use trace_format::trace::CallMeta;
use trace_format::{ResultsReader, TraceReader, TraceWriter, WriterOptions};

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("samples/{name}-nvidia.mscope"))
}

fn ready() -> bool {
    if Path::new("/usr/share/vulkan/icd.d").is_dir() {
        return true;
    }
    assert!(
        std::env::var_os("MACROSCOPE_REQUIRE_VULKAN").is_none(),
        "device replay tests must run here but no Vulkan driver is installed"
    );
    eprintln!("skipping the device replay tests: no Vulkan driver");
    false
}

fn macroscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_macroscope"))
        .args(args)
        .output()
        .unwrap()
}

/// Whether rows of `kind` are timed on the device (draws and dispatches; the copies,
/// fills, clears and barriers the model also writes rows for are not).
fn timed(kind: DrawKind) -> bool {
    kind.0 <= DrawKind::DrawIndirectByteCount.0
        || kind == DrawKind::Dispatch
        || kind == DrawKind::DispatchIndirect
}

#[test]
fn the_nvidia_samples_replay_here_with_every_draw_and_dispatch_timed() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for name in ["multiview", "indirect", "storm", "tessellation", "compute"] {
        let results = dir.path().join(format!("{name}.msr"));
        let out = macroscope(&[
            "replay",
            "--device",
            "--gpu-timing",
            sample(name).to_str().unwrap(),
            "-o",
            results.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{name}: {out:?}");
        let (mut timed_rows, mut untimed) = (0, 0);
        for chunk in ResultsReader::open(&results).unwrap() {
            for row in chunk.unwrap().rows() {
                if timed(row.kind()) {
                    timed_rows += 1;
                    if row.gpu_ns == 0 {
                        untimed += 1;
                    }
                }
            }
        }
        assert!(timed_rows > 0, "{name}");
        assert_eq!(
            untimed, 0,
            "{name}: {untimed} of {timed_rows} draws have no gpu-ns"
        );
    }
}

#[test]
fn gpu_timing_of_the_storm_scene_gives_each_draw_a_gpu_time_that_report_shows() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("storm.msr");
    let out = macroscope(&[
        "replay",
        "--device",
        "--gpu-timing",
        sample("storm").to_str().unwrap(),
        "-o",
        results.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("30000 draw executions timed on the GPU"),
        "{text}"
    );
    let mut draws = 0;
    for chunk in ResultsReader::open(&results).unwrap() {
        for row in chunk.unwrap().rows() {
            assert!(row.gpu_ns > 0, "draw #{} has no gpu-ns", row.seq());
            draws += 1;
        }
    }
    assert_eq!(draws, 30_000);
    let report = macroscope(&["report", results.to_str().unwrap(), "--metric", "gpu-ns"]);
    assert!(report.status.success(), "{report:?}");
    let text = String::from_utf8_lossy(&report.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("gpu-ns"))
        .unwrap_or_else(|| panic!("{text}"));
    let p50: u64 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!(p50 > 0, "{line}");
    assert!(text.contains("costliest draws by gpu-ns"), "{text}");
}

#[test]
fn looping_the_frames_times_every_pass_and_writes_each_as_a_repetition() {
    if !ready() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("storm.msr");
    let out = macroscope(&[
        "replay",
        "--device",
        "--gpu-timing",
        "--loop",
        "3",
        sample("storm").to_str().unwrap(),
        "-o",
        results.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("pass 0 (warm-up): 30000 draw executions"),
        "{text}"
    );
    assert!(text.contains("passes 1-2: 60000 draw executions"), "{text}");
    let mut per_repetition = [0u32; 3];
    for chunk in ResultsReader::open(&results).unwrap() {
        for row in chunk.unwrap().rows() {
            assert!(
                row.gpu_ns > 0,
                "draw #{} of repetition {}",
                row.seq(),
                row.repetition()
            );
            per_repetition[usize::from(row.repetition())] += 1;
        }
    }
    assert_eq!(per_repetition, [30_000; 3]);
}

/// How a test changes a trace.
enum Edit<'a> {
    /// One more extension enabled on the device.
    Extension(&'a str),
    /// The core feature at this byte offset of `VkPhysicalDeviceFeatures` enabled.
    Feature(usize),
    /// The first `vkCreateDescriptorSetLayout`'s create info cut short by a byte.
    ShortCreateInfo,
    /// The first image made in this `VkFormat`.
    ImageFormat(u32),
    /// The first image made this many texels wide and high.
    ImageExtent(u32),
}

/// `trace` rewritten as `edit` says; returns the sequence number of the record it
/// changed.
fn with_device_edit(trace: &Path, out: &Path, edit: Edit<'_>) -> u64 {
    let mut create_device_seq = 0;
    rewrite(trace, out, |meta, mut call, writer| {
        if let (CallT::VulkanCall(c), Edit::ShortCreateInfo) = (&mut call, &edit) {
            if c.command.as_deref() == Some("vkCreateDescriptorSetLayout") && create_device_seq == 0
            {
                let mut params = match c.packed.take() {
                    Some(packed) => generic_params::unpack(&packed).unwrap(),
                    None => c.params.take().unwrap(),
                };
                params[1].bytes.as_mut().unwrap().pop();
                c.packed = Some(generic_params::packed(&params));
                create_device_seq = writer.next_seq();
            }
        }
        if let (CallT::CreateImage(c), Edit::ImageFormat(format)) = (&mut call, &edit) {
            if create_device_seq == 0 {
                c.format = *format;
                create_device_seq = writer.next_seq();
            }
        }
        if let (CallT::CreateImage(c), Edit::ImageExtent(side)) = (&mut call, &edit) {
            if create_device_seq == 0 {
                let extent = c.extent.as_mut().unwrap();
                extent.width = *side;
                extent.height = *side;
                create_device_seq = writer.next_seq();
            }
        }
        if let CallT::CreateDevice(c) = &mut call {
            match edit {
                Edit::Extension(name) => c
                    .enabled_extensions
                    .get_or_insert_with(Vec::new)
                    .push(name.to_string()),
                Edit::ShortCreateInfo | Edit::ImageFormat(_) | Edit::ImageExtent(_) => {}
                Edit::Feature(offset) => {
                    // VkDeviceCreateInfo's nested parameters: queue infos, layer
                    // names, extension names, pEnabledFeatures (220 bytes).
                    let mut features = vec![0u8; 220];
                    features[offset..offset + 4].copy_from_slice(&1u32.to_le_bytes());
                    let mut info = VulkanParamT::default();
                    info.bytes = Some(vec![0; 72]);
                    let mut enabled = VulkanParamT::default();
                    enabled.value = 1;
                    enabled.bytes = Some(features);
                    info.nested = Some(vec![
                        VulkanParamT::default(),
                        VulkanParamT::default(),
                        VulkanParamT::default(),
                        enabled,
                    ]);
                    c.create_info = Some(Box::new(info));
                }
            }
            if matches!(edit, Edit::Extension(_) | Edit::Feature(_)) {
                create_device_seq = writer.next_seq();
            }
        }
        writer.append(meta, &call).unwrap();
    });
    create_device_seq
}

/// Writes `trace` to `out` through `each`, which is given each record's envelope and
/// call and appends what it makes of them (frame boundaries pass as they are).
fn rewrite(trace: &Path, out: &Path, mut each: impl FnMut(CallMeta, CallT, &mut TraceWriter)) {
    let mut writer = TraceWriter::create(out, &WriterOptions::default()).unwrap();
    for chunk in TraceReader::open(trace).unwrap() {
        for record in chunk.unwrap().records() {
            let e = record.envelope();
            let meta = CallMeta {
                thread_id: e.thread_id(),
                timestamp_ns: e.timestamp_ns(),
                result: e.result(),
            };
            if record.call_type() == Call::FrameBoundary {
                writer.end_frame(meta).unwrap();
                continue;
            }
            each(meta, record.unpack().call, &mut writer);
        }
    }
    writer.finish().unwrap();
}

/// `replay --device` (with `extra` arguments) on `trace` made by `edit` of `sample`:
/// exit 2, stderr naming the changed call with `message` after `call #SEQ`; with
/// `before_submits`, nothing replayed (no summary).
fn assert_refused(
    sample_name: &str,
    edit: Edit<'_>,
    extra: &[&str],
    message: &str,
    before_submits: bool,
) {
    let dir = tempfile::tempdir().unwrap();
    let edited = dir.path().join("edited.mscope");
    let seq = with_device_edit(&sample(sample_name), &edited, edit);
    assert!(seq > 0);
    let mut args = vec!["replay", "--device"];
    args.extend_from_slice(extra);
    args.push(edited.to_str().unwrap());
    let out = macroscope(&args);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("call #{seq}{message}")),
        "{stderr}"
    );
    // A capture made on another driver replays only without what this one lacks:
    // the refusal says how.
    if message.contains("extension") || message.contains("feature") {
        assert!(
            stderr.contains("`--switch-off-missing` replays"),
            "{stderr}"
        );
    }
    if before_submits {
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("submits"),
            "{out:?}"
        );
    }
}

#[test]
fn a_trace_needing_an_extension_the_device_lacks_fails_naming_it_before_any_submit() {
    if !ready() {
        return;
    }
    // Lavapipe has no NVIDIA ray tracing.
    assert_refused(
        "multiview",
        Edit::Extension("VK_NV_ray_tracing"),
        &["--check-frames"],
        ": the replay device has no device extension VK_NV_ray_tracing",
        true,
    );
}

#[test]
fn a_trace_needing_a_feature_the_device_lacks_fails_naming_it_before_any_submit() {
    if !ready() {
        return;
    }
    // VkPhysicalDeviceFeatures.sparseBinding, at byte 176: lavapipe has none.
    assert_refused(
        "storm",
        Edit::Feature(176),
        &[],
        ": the replay device has no feature VkPhysicalDeviceFeatures.sparseBinding",
        true,
    );
}

#[test]
fn a_malformed_record_fails_naming_the_call_and_parameter_and_exits_2() {
    if !ready() {
        return;
    }
    assert_refused(
        "storm",
        Edit::ShortCreateInfo,
        &[],
        " (vkCreateDescriptorSetLayout): `pCreateInfo`: 31 bytes are not a whole number of VkDescriptorSetLayoutCreateInfo (32 bytes each)",
        false,
    );
}

#[test]
fn a_trace_making_an_image_the_device_cannot_fails_naming_it_before_anything_runs() {
    if !ready() {
        return;
    }
    // VK_FORMAT_ASTC_4x4_UNORM_BLOCK: lavapipe has no ASTC render targets.
    assert_refused(
        "multiview",
        Edit::ImageFormat(157),
        &[],
        ": the replay device has no format ASTC_4X4_UNORM_BLOCK",
        true,
    );
}

/// The `device memory:` line of a replay's output.
fn memory_line(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().find(|l| l.starts_with("device memory: "));
    line.unwrap_or_else(|| panic!("no device memory line: {out:?}"))
        .to_string()
}

#[test]
fn an_image_too_big_for_its_captured_allocation_gets_memory_of_its_own_in_its_place() {
    if !ready() {
        return;
    }
    // vkcube's first image, its 500×500 depth buffer, has an allocation of its own
    // sized for it; made 1000×1000 it needs four times the room there. It goes to
    // memory of its own, and the allocation it left, holding nothing else, is never
    // made on the device: a trace whose images another driver lays out bigger (Zink
    // on lavapipe gives each large texture an allocation) takes its memory once.
    let dir = tempfile::tempdir().unwrap();
    let vkcube = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/vkcube-lavapipe.mscope");
    let replay = |trace: &Path, results: &str| {
        let out = macroscope(&[
            "replay",
            "--device",
            "--check-frames",
            trace.to_str().unwrap(),
            "-o",
            dir.path().join(results).to_str().unwrap(),
        ]);
        assert!(out.status.success(), "{out:?}");
        out
    };
    let as_captured = replay(&vkcube, "captured.msr");
    assert!(
        memory_line(&as_captured).starts_with(
            "device memory: 5 of the trace's 5 allocations made on the device, 0 resources in memory of their own;"
        ),
        "{}",
        memory_line(&as_captured)
    );
    let edited = dir.path().join("edited.mscope");
    assert!(with_device_edit(&vkcube, &edited, Edit::ImageExtent(1000)) > 0);
    let bigger = replay(&edited, "edited.msr");
    assert!(
        memory_line(&bigger).starts_with(
            "device memory: 4 of the trace's 5 allocations made on the device, 1 resource in memory of its own;"
        ),
        "{}",
        memory_line(&bigger)
    );
    // The render area stays 500×500: every frame is still the one captured.
    assert!(
        String::from_utf8_lossy(&bigger.stdout)
            .contains("frames checked: 100 of 100 match the capture"),
        "{bigger:?}"
    );
}

/// A parameter of a generic record: `value`, and the bytes it points to.
fn param(value: u64, bytes: Option<Vec<u8>>) -> VulkanParamT {
    let mut p = VulkanParamT::default();
    p.value = value;
    p.bytes = bytes;
    p
}

#[test]
fn a_semaphore_exported_as_a_sync_file_does_not_stall_the_replay() {
    if !ready() {
        return;
    }
    // Weston's Vulkan renderer exports its render-done semaphore as a sync file after
    // each repaint. A serialized replay's submits signal no semaphore, and Mesa's
    // runtime waits for a pending signal before exporting one: called, the export
    // would wait forever (Debian sid's lavapipe; Debian 12's, without the extension
    // enabled, refused the call and ended the replay). vkcube's first submit that
    // signals a semaphore is followed here by such an export.
    use trace_format::generated::trace::VulkanCallT;
    const SEMAPHORE_GET_FD_INFO: u32 = 1_000_079_001;
    const SYNC_FD: u32 = 0x10;
    let dir = tempfile::tempdir().unwrap();
    let vkcube = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/vkcube-lavapipe.mscope");
    let edited = dir.path().join("exported.mscope");
    let (mut device, mut exported) = (0, false);
    rewrite(&vkcube, &edited, |meta, call, writer| {
        writer.append(meta, &call).unwrap();
        if let CallT::CreateDevice(c) = &call {
            device = c.device;
        }
        let CallT::QueueSubmit(c) = &call else {
            return;
        };
        let signalled = c
            .submits
            .iter()
            .flatten()
            .flat_map(|s| s.signal_semaphores.iter().flatten())
            .next();
        if let (Some(&semaphore), false) = (signalled, exported) {
            let mut info = Vec::new();
            info.extend_from_slice(&SEMAPHORE_GET_FD_INFO.to_le_bytes());
            info.extend_from_slice(&[0; 12]);
            info.extend_from_slice(&semaphore.to_le_bytes());
            info.extend_from_slice(&SYNC_FD.to_le_bytes());
            info.extend_from_slice(&[0; 4]);
            let mut export = VulkanCallT::default();
            export.command = Some("vkGetSemaphoreFdKHR".into());
            export.params = Some(vec![
                param(device, None),
                param(0x1000, Some(info)),
                param(0x2000, Some(vec![0xff; 4])),
            ]);
            writer
                .append(meta, &CallT::VulkanCall(Box::new(export)))
                .unwrap();
            exported = true;
        }
    });
    assert!(exported && device != 0);
    // A stalled replay is ended after a minute (it takes well under a second).
    let out = Command::new("timeout")
        .args(["60", env!("CARGO_BIN_EXE_macroscope"), "replay", "--device"])
        .arg(&edited)
        .arg("-o")
        .arg(dir.path().join("exported.msr"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("vkGetSemaphoreFdKHR ×1"), "{stdout}");
}

/// A replay on lavapipe under the Khronos validation layer: vkcube as captured, and
/// vkcube as RetroArch would acquire its images — a fence made for each
/// `vkAcquireNextImageKHR`, waited on and destroyed right after. The validation layer
/// finds nothing wrong with either: the replay's device asks for the swapchain
/// extension's layouts with the surface extension it needs on its instance, and the
/// acquire's fence is signalled and waited for before the program destroys it (left
/// in flight, lavapipe's queue thread signalled a destroyed fence and RetroArch's
/// replay died of SIGSEGV).
#[test]
fn a_replay_under_the_validation_layer_is_valid_with_a_fence_made_for_each_acquire() {
    use trace_format::generated::trace::VulkanCallT;
    const FENCE_CREATE_INFO: u32 = 8;
    if !ready()
        || !Path::new("/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json").exists()
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let vkcube = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/vkcube-lavapipe.mscope");
    let fenced = dir.path().join("fenced.mscope");
    let (mut device, mut acquires) = (0, 0u64);
    let generic = |command: &str, params: Vec<VulkanParamT>| {
        let mut call = VulkanCallT::default();
        call.command = Some(command.into());
        call.params = Some(params);
        CallT::VulkanCall(Box::new(call))
    };
    rewrite(&vkcube, &fenced, |meta, mut call, writer| {
        if let CallT::CreateDevice(c) = &call {
            device = c.device;
        }
        let CallT::VulkanCall(c) = &mut call else {
            writer.append(meta, &call).unwrap();
            return;
        };
        let name = c
            .command
            .clone()
            .or_else(|| trace_format::names::command_of_id(c.command_id).map(str::to_string));
        if name.as_deref() != Some("vkAcquireNextImageKHR") {
            writer.append(meta, &call).unwrap();
            return;
        }
        acquires += 1;
        let fence = 0xfe0c_0000 + acquires;
        let mut info = FENCE_CREATE_INFO.to_le_bytes().to_vec();
        info.extend_from_slice(&[0; 20]);
        let create = vec![
            param(device, None),
            param(0x1000, Some(info)),
            param(0, None),
            param(0x2000, Some(fence.to_le_bytes().to_vec())),
        ];
        writer
            .append(meta, &generic("vkCreateFence", create))
            .unwrap();
        let mut params = match c.packed.take() {
            Some(packed) => generic_params::unpack(&packed).unwrap(),
            None => c.params.take().unwrap(),
        };
        params[4].value = fence;
        c.packed = Some(generic_params::packed(&params));
        writer.append(meta, &call).unwrap();
        let wait = vec![
            param(device, None),
            param(1, None),
            param(0x3000, Some(fence.to_le_bytes().to_vec())),
            param(1, None),
            param(u64::MAX, None),
        ];
        writer
            .append(meta, &generic("vkWaitForFences", wait))
            .unwrap();
        let destroy = vec![param(device, None), param(fence, None), param(0, None)];
        writer
            .append(meta, &generic("vkDestroyFence", destroy))
            .unwrap();
    });
    assert!(acquires > 10 && device != 0);
    for trace in [vkcube.as_path(), fenced.as_path()] {
        let out = Command::new(env!("CARGO_BIN_EXE_macroscope"))
            .args(["replay", "--device"])
            .arg(trace)
            .arg("-o")
            .arg(dir.path().join("validated.msr"))
            .env("VK_INSTANCE_LAYERS", "VK_LAYER_KHRONOS_validation")
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{trace:?}: {text}");
        assert!(!text.contains("Validation Error"), "{trace:?}: {text}");
    }
}
