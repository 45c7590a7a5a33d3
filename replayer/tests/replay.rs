//! Replays of synthetic traces: per-draw rows match what the trace drew, on both MME
//! generations, repeatably; a damaged trace stops the replay and leaves readable results.

use std::path::{Path, PathBuf};

use driver::mme::Arch;
use replayer::{replay, ReplayError, ReplayOptions};
use trace_format::generated::results::{DrawKind, DrawRow, SubmitRow};
use trace_format::synthetic::{write_synthetic, SyntheticShape};
use trace_format::{ReadOptions, ResultsReader, TraceWriter, WriterOptions};

fn trace(dir: &Path, view_mask: u32) -> PathBuf {
    let path = dir.join(format!("t{view_mask}.mscope"));
    let shape = SyntheticShape {
        frames: 3,
        draws_per_frame: 300,
        view_mask,
    };
    write_synthetic(
        TraceWriter::create(&path, &WriterOptions::default()).unwrap(),
        &shape,
    )
    .unwrap();
    path
}

fn options(arch: Arch) -> ReplayOptions {
    ReplayOptions {
        chipset: driver::chipset::Chipset::for_arch(arch),
        frames: None,
        repeat: 1,
        read: ReadOptions::parallel(),
        mme_budget: replayer::DEFAULT_MME_BUDGET,
        remember_macro_runs: true,
    }
}

fn rows(path: &Path) -> (Vec<DrawRow>, Vec<SubmitRow>) {
    let (mut draws, mut submits) = (Vec::new(), Vec::new());
    for chunk in ResultsReader::open(path).unwrap() {
        let chunk = chunk.unwrap();
        draws.extend(chunk.draws().copied());
        submits.extend(chunk.submits().copied());
    }
    (draws, submits)
}

#[test]
fn each_draw_expands_to_popcount_views_and_each_query_takes_that_many_slots() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), 0b1111);
    let out = dir.path().join("r.msr");
    let summary = replay(&t, &out, &options(Arch::Turing), &mut |_, _| {}).unwrap();
    let (draws, submits) = rows(&out);
    assert_eq!(draws.len(), 900);
    assert_eq!(summary.draws, 900);
    for d in &draws {
        assert_eq!((d.view_mask(), d.view_count()), (0b1111, 4));
        let want = 4 * d.instance_count() * d.indirect_draw_count();
        assert_eq!(d.hw_draws(), want, "row {d:?}");
        assert!(d.mme_instructions() > 0 && d.pushbuf_dwords() > 0 && d.methods() > 0);
        if d.kind() != DrawKind::DrawIndexedIndirect {
            assert_eq!(d.indirect_draw_count(), 1);
        }
    }
    assert!(draws
        .iter()
        .any(|d| d.kind() == DrawKind::DrawIndexedIndirect && d.element_count() > 0));
    // 16 occlusion queries a frame; under four views each takes four slots.
    assert_eq!(submits.len(), 3);
    for s in &submits {
        assert_eq!((s.queries(), s.zero_queries()), (16, 48));
        assert_eq!(s.draws(), 300);
    }
    assert_eq!(
        summary.hw_draws,
        draws.iter().map(|d| u64::from(d.hw_draws())).sum::<u64>()
    );
}

#[test]
fn turing_and_fermi_start_the_same_draws_with_different_mme_counts() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), 0b101);
    let (turing, fermi) = (dir.path().join("t.msr"), dir.path().join("f.msr"));
    replay(&t, &turing, &options(Arch::Turing), &mut |_, _| {}).unwrap();
    replay(&t, &fermi, &options(Arch::Fermi), &mut |_, _| {}).unwrap();
    let (a, _) = rows(&turing);
    let (b, _) = rows(&fermi);
    let shape = |r: &DrawRow| {
        (
            r.seq(),
            r.hw_draws(),
            r.view_count(),
            r.instance_count(),
            r.element_count(),
        )
    };
    assert_eq!(
        a.iter().map(shape).collect::<Vec<_>>(),
        b.iter().map(shape).collect::<Vec<_>>()
    );
    let mme = |rows: &[DrawRow]| {
        rows.iter()
            .map(|r| u64::from(r.mme_instructions()))
            .sum::<u64>()
    };
    assert_ne!(mme(&a), mme(&b));
}

#[test]
fn counts_are_identical_across_repetitions() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), 0b11);
    let out = dir.path().join("r.msr");
    let opts = ReplayOptions {
        repeat: 3,
        ..options(Arch::Turing)
    };
    replay(&t, &out, &opts, &mut |_, _| {}).unwrap();
    let (draws, _) = rows(&out);
    assert_eq!(draws.len(), 3 * 900);
    let counts = |rep: u16| -> Vec<_> {
        draws
            .iter()
            .filter(|d| d.repetition() == rep)
            .map(|d| {
                (
                    d.seq(),
                    d.mme_instructions(),
                    d.methods(),
                    d.pushbuf_dwords(),
                    d.hw_draws(),
                )
            })
            .collect()
    };
    assert_eq!(counts(0), counts(1));
    assert_eq!(counts(0), counts(2));
}

/// What a draw row counts (its host times left out: they differ run to run).
fn counted(d: &DrawRow) -> [u64; 8] {
    [
        d.seq(),
        d.kind().0.into(),
        d.frame().into(),
        d.mme_instructions().into(),
        d.methods().into(),
        d.pushbuf_dwords().into(),
        d.hw_draws().into(),
        d.instance_count().into(),
    ]
}

#[test]
fn reading_ahead_counts_as_reading_in_place() {
    // Read ahead, chunks are decompressed and their compact records laid out on
    // threads of their own; read in place, all on the replay's thread. Real captures:
    // one of direct draws and binds, one of generic calls and push descriptors.
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    let dir = tempfile::tempdir().unwrap();
    for name in ["storm-nvidia.mscope", "glxgears-zink-lavapipe.mscope"] {
        let trace = samples.join(name);
        let replay_with = |read: ReadOptions, out: &str| {
            let out = dir.path().join(out);
            let options = ReplayOptions {
                read,
                ..options(Arch::Turing)
            };
            let summary = replay(&trace, &out, &options, &mut |_, _| {}).unwrap();
            let (draws, submits) = rows(&out);
            let draws: Vec<_> = draws.iter().map(counted).collect();
            let submits: Vec<_> = submits.iter().map(|s| (s.draws(), s.queries())).collect();
            (summary.draws, summary.executed_commands, draws, submits)
        };
        let ahead = replay_with(ReadOptions::with_threads(2), "ahead.msr");
        let in_place = replay_with(ReadOptions::with_threads(0), "in-place.msr");
        assert!(ahead.0 > 0 && !ahead.2.is_empty(), "{name}: no draws");
        assert_eq!(ahead, in_place, "{name}");
    }
}

#[test]
fn a_frame_range_executes_only_its_submits() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), 0);
    let out = dir.path().join("r.msr");
    let opts = ReplayOptions {
        frames: Some((1, 1)),
        ..options(Arch::Fermi)
    };
    replay(&t, &out, &opts, &mut |_, _| {}).unwrap();
    let (draws, submits) = rows(&out);
    assert_eq!(draws.len(), 300);
    assert!(draws.iter().all(|d| d.frame() == 1
        && d.view_count() == 0
        && d.hw_draws() == d.instance_count() * d.indirect_draw_count()));
    assert_eq!(submits.len(), 1);
}

#[test]
fn frames_that_share_a_chunk_replay_as_their_own_frames() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shared.mscope");
    let options_shared = WriterOptions {
        // Every frame in one chunk.
        chunk_max_age: Some(std::time::Duration::from_secs(3600)),
        ..WriterOptions::default()
    };
    let shape = SyntheticShape {
        frames: 3,
        draws_per_frame: 20,
        view_mask: 0,
    };
    let stats =
        write_synthetic(TraceWriter::create(&path, &options_shared).unwrap(), &shape).unwrap();
    assert_eq!(stats.chunks, 1);
    let out = dir.path().join("r.msr");
    replay(&path, &out, &options(Arch::Turing), &mut |_, _| {}).unwrap();
    let (draws, submits) = rows(&out);
    let per_frame: Vec<usize> = (0..3)
        .map(|f| draws.iter().filter(|d| d.frame() == f).count())
        .collect();
    assert_eq!(per_frame, [20, 20, 20]);
    assert_eq!(submits.len(), 3);
    // A frame range picks the frame out of the shared chunk.
    let opts = ReplayOptions {
        frames: Some((1, 1)),
        ..options(Arch::Turing)
    };
    replay(&path, &out, &opts, &mut |_, _| {}).unwrap();
    let (draws, _) = rows(&out);
    assert_eq!(draws.len(), 20);
    assert!(draws.iter().all(|d| d.frame() == 1));
}

#[test]
fn a_damaged_trace_stops_the_replay_and_the_results_so_far_stay_readable() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), 0b1);
    let bytes = std::fs::read(&t).unwrap();
    let cut = dir.path().join("cut.mscope");
    std::fs::write(&cut, &bytes[..bytes.len() * 3 / 4]).unwrap();
    let out = dir.path().join("r.msr");
    let err = replay(&cut, &out, &options(Arch::Turing), &mut |_, _| {}).unwrap_err();
    assert!(matches!(err, ReplayError::Format(_)), "{err}");
    assert!(err.to_string().contains("torn write"), "{err}");
    let (draws, _) = rows(&out);
    assert!(
        !draws.is_empty() && draws.len() < 900,
        "{} rows",
        draws.len()
    );
}

#[test]
fn inspecting_a_draw_gives_the_method_stream_its_row_counts() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), 0b1111);
    for arch in [Arch::Turing, Arch::Fermi] {
        let out = dir.path().join("r.msr");
        replay(&t, &out, &options(arch), &mut |_, _| {}).unwrap();
        let (draws, _) = rows(&out);
        for ordinal in [0, 7, draws.len() as u64 - 1] {
            let row = draws[ordinal as usize];
            let found = replayer::inspect_draw(&t, &options(arch), ordinal).unwrap();
            assert_eq!(found.seq, row.seq());
            assert_eq!(found.methods.len() as u64, u64::from(row.methods()));
            assert_eq!(found.mme_instructions, u64::from(row.mme_instructions()));
            assert_eq!(found.dwords, u64::from(row.pushbuf_dwords()));
            // Four views: the macro begins four hardware draws, one per layer.
            let begins = found
                .methods
                .iter()
                .filter(|m| m.from_macro && m.mthd == driver::class::BEGIN)
                .count() as u32;
            assert_eq!(begins, row.hw_draws());
            // The state the draw flushed (pushed methods), then the draw macro's call.
            let runs = found.runs();
            let call = runs
                .iter()
                .position(|r| r.name.starts_with("CALL_MME_MACRO("))
                .unwrap_or_else(|| panic!("{runs:?}"));
            assert!(runs[..call].iter().all(|r| !r.from_macro), "{runs:?}");
            let folded: u32 = runs.iter().map(|r| r.count).sum();
            assert_eq!(folded as usize, found.methods.len());
        }
        let past = draws.len() as u64;
        assert!(matches!(
            replayer::inspect_draw(&t, &options(arch), past),
            Err(ReplayError::NoSuchDraw { ordinal }) if ordinal == past
        ));
    }
}

/// A generic record's parameter holding `v`.
fn param(v: u64) -> trace_format::generated::trace::VulkanParamT {
    let mut p = trace_format::generated::trace::VulkanParamT::default();
    p.value = v;
    p
}

/// A generic record of `command` with `params`, packed as the capture layer records it.
fn generic_call(
    command: &str,
    params: Vec<trace_format::generated::trace::VulkanParamT>,
) -> trace_format::generated::trace::CallT {
    use trace_format::generic_params::packed_call;
    trace_format::generated::trace::CallT::VulkanCall(Box::new(packed_call(command, &params)))
}

#[test]
fn generic_records_execute_when_they_decode_and_are_skipped_with_the_reason_when_not() {
    use trace_format::generated::trace::{CallT, VulkanCallT};
    use trace_format::trace::CallMeta;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("generic.mscope");
    let mut w = TraceWriter::create(&path, &WriterOptions::default()).unwrap();
    let (value, call) = (param, generic_call);
    // vkCmdSetViewport(cb, 0, 1, {0, 0, 64, 32, 0, 1}): decodes and executes.
    let mut viewport = value(0);
    viewport.bytes = Some(
        [0.0f32, 0.0, 64.0, 32.0, 0.0, 1.0]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect(),
    );
    let good = call(
        "vkCmdSetViewport",
        vec![value(7), value(0), value(1), viewport],
    );
    // Its count says 2 but one viewport is recorded; and one with no parameters at all.
    let mut short = value(0);
    short.bytes = Some(vec![0; 24]);
    let miscounted = call(
        "vkCmdSetViewport",
        vec![value(7), value(0), value(2), short],
    );
    let empty = call("vkCmdSetViewport", Vec::new());
    // Packed parameters whose second node carries a flag no writer sets.
    let mut damaged = VulkanCallT::default();
    damaged.command = Some("vkCmdSetViewport".into());
    damaged.packed = Some(vec![2, 0, 0, 0, 1, 7, 0, 0, 0, 0, 0, 0, 0, 0x40]);
    let damaged = CallT::VulkanCall(Box::new(damaged));
    for c in [
        &good,
        &miscounted,
        &empty,
        &empty,
        &damaged,
        &call(
            "vkCmdDrawMeshTasksEXT",
            vec![value(7), value(1), value(1), value(1)],
        ),
    ] {
        w.append(CallMeta::default(), c).unwrap();
    }
    w.end_frame(CallMeta::default()).unwrap();
    w.finish().unwrap();
    let out = dir.path().join("r.msr");
    let summary = replay(&path, &out, &options(Arch::Turing), &mut |_, _| {}).unwrap();
    let find = |name: &str| {
        summary
            .skipped
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name}: {:?}", summary.skipped))
    };
    let count = find(
        "vkCmdSetViewport (does not decode: parameter `viewports` holds 1 elements, its count says 2)",
    );
    assert_eq!((count.count, count.needed), (1, true));
    let arity =
        find("vkCmdSetViewport (does not decode: 0 parameters recorded, the command has 4)");
    assert_eq!((arity.count, arity.needed), (2, true));
    let damaged =
        find("vkCmdSetViewport (does not decode: packed parameters: unknown flags at byte 13)");
    assert_eq!((damaged.count, damaged.needed), (1, true));
    assert!(find("vkCmdDrawMeshTasksEXT").needed);
    assert_eq!(
        (summary.recorded_commands, summary.executed_commands),
        (6, 1),
        "the well-formed vkCmdSetViewport executed"
    );
}

#[test]
fn a_secondary_command_buffer_starts_with_unknown_state_and_leaves_the_primary_so() {
    use trace_format::generated::trace::{
        BeginCommandBufferT, CallT, CmdDrawT, CmdExecuteCommandsT, QueueSubmitT, SubmitInfoT,
    };
    use trace_format::trace::CallMeta;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secondary.mscope");
    let mut w = TraceWriter::create(&path, &WriterOptions::default()).unwrap();
    let (primary, secondary) = (1u64, 2u64);
    let begin = |cb| {
        let mut c = BeginCommandBufferT::default();
        c.command_buffer = cb;
        CallT::BeginCommandBuffer(Box::new(c))
    };
    let draw = |cb| {
        let mut c = CmdDrawT::default();
        c.command_buffer = cb;
        c.vertex_count = 3;
        c.instance_count = 1;
        CallT::CmdDraw(Box::new(c))
    };
    let mut execute = CmdExecuteCommandsT::default();
    execute.command_buffer = primary;
    execute.command_buffers = Some(vec![secondary]);
    let mut info = SubmitInfoT::default();
    info.command_buffers = Some(vec![primary]);
    let mut submit = QueueSubmitT::default();
    submit.submits = Some(vec![info]);
    let calls = [
        begin(secondary),
        draw(secondary),
        begin(primary),
        draw(primary),
        draw(primary),
        CallT::CmdExecuteCommands(Box::new(execute)),
        draw(primary),
        CallT::QueueSubmit(Box::new(submit)),
    ];
    for c in &calls {
        w.append(CallMeta::default(), c).unwrap();
    }
    w.end_frame(CallMeta::default()).unwrap();
    w.finish().unwrap();
    for arch in [Arch::Turing, Arch::Fermi] {
        let out = dir.path().join("r.msr");
        replay(&path, &out, &options(arch), &mut |_, _| {}).unwrap();
        let (rows, submits) = rows(&out);
        let dwords: Vec<u32> = rows.iter().map(|r| r.pushbuf_dwords()).collect();
        assert_eq!(dwords.len(), 4, "{arch:?}");
        // A command buffer's first draw flushes only what was set (nothing here) and
        // every pipeline slot; the primary's second draw flushes nothing; the
        // secondary's draw starts as the primary's first did; after
        // vkCmdExecuteCommands every state is dirty, so the primary's next draw
        // flushes the whole state (NVK 25.0.7's nvk_cmd_invalidate_graphics_state).
        assert!(dwords[1] < dwords[0], "{arch:?} {dwords:?}");
        assert_eq!(dwords[2], dwords[0], "{arch:?} {dwords:?}");
        assert!(dwords[3] > dwords[0] + 100, "{arch:?} {dwords:?}");
        // The submit covers the rows and both command buffers' beginnings.
        let rows_total: u64 = dwords.iter().map(|d| u64::from(*d)).sum();
        assert!(submits[0].pushbuf_dwords() > rows_total, "{arch:?}");
    }
}

/// Replays, on Turing, a command buffer of pool 10 recorded with two draws and submitted,
/// then `release` (calls that free it or destroy its pool), then the same handle
/// submitted again; the draw rows of each submit.
fn draws_submitted_around(release: &[trace_format::generated::trace::CallT]) -> Vec<u32> {
    use trace_format::generated::trace::{
        AllocateCommandBuffersT, BeginCommandBufferT, CallT, CmdDrawT, QueueSubmitT, SubmitInfoT,
    };
    use trace_format::trace::CallMeta;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("freed.mscope");
    let mut w = TraceWriter::create(&path, &WriterOptions::default()).unwrap();
    let cb = 1u64;
    let mut allocate = AllocateCommandBuffersT::default();
    allocate.command_pool = 10;
    allocate.command_buffers = Some(vec![cb]);
    let mut begin = BeginCommandBufferT::default();
    begin.command_buffer = cb;
    let mut draw = CmdDrawT::default();
    draw.command_buffer = cb;
    draw.vertex_count = 3;
    draw.instance_count = 1;
    let mut info = SubmitInfoT::default();
    info.command_buffers = Some(vec![cb]);
    let mut submit = QueueSubmitT::default();
    submit.submits = Some(vec![info]);
    let submit = CallT::QueueSubmit(Box::new(submit));
    let mut calls = vec![
        CallT::AllocateCommandBuffers(Box::new(allocate)),
        CallT::BeginCommandBuffer(Box::new(begin)),
        CallT::CmdDraw(Box::new(draw.clone())),
        CallT::CmdDraw(Box::new(draw)),
        submit.clone(),
    ];
    calls.extend(release.iter().cloned());
    calls.push(submit);
    for c in &calls {
        w.append(CallMeta::default(), c).unwrap();
    }
    w.end_frame(CallMeta::default()).unwrap();
    w.finish().unwrap();
    let out = dir.path().join("r.msr");
    replay(&path, &out, &options(Arch::Turing), &mut |_, _| {}).unwrap();
    rows(&out).1.iter().map(|s| s.draws()).collect()
}

#[test]
fn a_freed_command_buffer_and_those_of_a_destroyed_pool_hold_no_commands() {
    use trace_format::generated::trace::{CallT, DestroyObjectT};
    let (value, generic) = (param, generic_call);
    // vkFreeCommandBuffers(device, pool 10, 1, &cb 1), the handles 8 bytes each.
    let mut handles = value(0x5000);
    handles.bytes = Some(1u64.to_le_bytes().to_vec());
    let free = generic(
        "vkFreeCommandBuffers",
        vec![value(0x100), value(10), value(1), handles],
    );
    let mut destroy = DestroyObjectT::default();
    destroy.object_type = 25; // VK_OBJECT_TYPE_COMMAND_POOL
    destroy.handle = 10;
    let destroy = CallT::DestroyObject(Box::new(destroy));
    let mut other_pool = DestroyObjectT::default();
    other_pool.object_type = 25;
    other_pool.handle = 11;
    let other_pool = CallT::DestroyObject(Box::new(other_pool));
    assert_eq!(
        draws_submitted_around(&[]),
        [2, 2],
        "submitted again, it runs again"
    );
    assert_eq!(
        draws_submitted_around(&[other_pool]),
        [2, 2],
        "another pool destroyed"
    );
    for (what, release) in [("freed", free), ("pool destroyed", destroy)] {
        assert_eq!(draws_submitted_around(&[release]), [2, 0], "{what}");
    }
}

/// A trace of one command buffer under view mask 0b1111 with draws of these instance
/// counts, submitted once.
fn instanced_trace(path: &Path, instances: &[u32]) {
    use trace_format::generated::trace::{
        BeginCommandBufferT, CallT, CmdBeginRenderingT, CmdDrawT, QueueSubmitT, SubmitInfoT,
    };
    use trace_format::trace::CallMeta;
    let mut w = TraceWriter::create(path, &WriterOptions::default()).unwrap();
    let mut begin = BeginCommandBufferT::default();
    begin.command_buffer = 1;
    let mut rendering = CmdBeginRenderingT::default();
    rendering.command_buffer = 1;
    rendering.view_mask = 0b1111;
    rendering.layer_count = 1;
    let mut calls = vec![
        CallT::BeginCommandBuffer(Box::new(begin)),
        CallT::CmdBeginRendering(Box::new(rendering)),
    ];
    for n in instances {
        let mut draw = CmdDrawT::default();
        draw.command_buffer = 1;
        draw.vertex_count = 3;
        draw.instance_count = *n;
        calls.push(CallT::CmdDraw(Box::new(draw)));
    }
    let mut info = SubmitInfoT::default();
    info.command_buffers = Some(vec![1]);
    let mut submit = QueueSubmitT::default();
    submit.submits = Some(vec![info]);
    calls.push(CallT::QueueSubmit(Box::new(submit)));
    for c in &calls {
        w.append(CallMeta::default(), c).unwrap();
    }
    w.end_frame(CallMeta::default()).unwrap();
    w.finish().unwrap();
}

#[test]
fn a_million_instance_draw_replays_and_a_runaway_one_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.mscope");
    // A million instances and the default ceiling in a release build (`cargo test
    // --release` prints the times); a debug build simulates ~20 times slower, so it
    // scales both down.
    let (big, ceiling) = if cfg!(debug_assertions) {
        (50_000, 4_000_000)
    } else {
        (1_000_000, replayer::DEFAULT_MME_BUDGET)
    };
    instanced_trace(&path, &[big, u32::MAX, 2]);
    for arch in [Arch::Turing, Arch::Fermi] {
        let out = dir.path().join("r.msr");
        let mut options = options(arch);
        options.mme_budget = ceiling;
        let started = std::time::Instant::now();
        let summary = replay(&path, &out, &options, &mut |_, _| {}).unwrap();
        eprintln!("{arch:?}: {:?}", started.elapsed());
        let (rows, _) = rows(&out);
        let hw: Vec<u32> = rows.iter().map(|r| r.hw_draws()).collect();
        // Four views of a million instances; the runaway draw stopped partway; the
        // last draw whole.
        assert_eq!(hw[0], 4 * big, "{arch:?}");
        assert!(hw[1] < u32::MAX, "{arch:?}");
        assert_eq!(hw[2], 8, "{arch:?}");
        assert_eq!(summary.failed.len(), 1, "{arch:?}");
        assert_eq!(summary.failed[0].count, 1, "{arch:?}");
        assert_eq!(summary.failed[0].reason, "past its instruction budget");
        assert!(
            summary.failed[0].first.1.contains("draw"),
            "the macro is named: {}",
            summary.failed[0].first.1
        );
        // The failed row says why; the others do not.
        let chunk = trace_format::ResultsReader::open(&out)
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        let errors = chunk.draw_errors();
        assert_eq!(errors.len(), 1, "{arch:?}");
        assert_eq!(errors[0].0, 1, "{arch:?}");
    }
}

/// A render pass of one colour attachment, a 64x32 framebuffer, and a secondary begun
/// with `flags` and that render pass and framebuffer inherited, executed inside the
/// pass by a primary; returns the submit's push-buffer dwords and the secondary's
/// draw's dwords.
/// Writes `calls` as a one-frame trace at `path` and replays it on `arch` into a
/// results file beside it; returns its rows.
fn replay_one_frame(
    path: &Path,
    calls: &[trace_format::generated::trace::CallT],
    arch: Arch,
) -> (Vec<DrawRow>, Vec<SubmitRow>) {
    use trace_format::trace::CallMeta;
    let mut w = TraceWriter::create(path, &WriterOptions::default()).unwrap();
    for c in calls {
        w.append(CallMeta::default(), c).unwrap();
    }
    w.end_frame(CallMeta::default()).unwrap();
    w.finish().unwrap();
    let out = path.with_extension("msr");
    replay(path, &out, &options(arch), &mut |_, _| {}).unwrap();
    rows(&out)
}

fn replay_secondary_in_render_pass(dir: &Path, flags: u32, arch: Arch) -> (u64, u32) {
    use trace_format::generated::trace::{
        AttachmentDescriptionT, AttachmentReferenceT, BeginCommandBufferT, CallT,
        CmdBeginRenderPassT, CmdDrawT, CmdEndRenderPassT, CmdExecuteCommandsT,
        CommandBufferInheritanceT, CreateFramebufferT, CreateRenderPassT, QueueSubmitT, Rect2DT,
        SubmitInfoT, SubpassDescriptionT,
    };
    let path = dir.join(format!("secondary-{flags}.mscope"));
    let (primary, secondary, pass, fb) = (1u64, 2u64, 10u64, 11u64);
    let mut render_pass = CreateRenderPassT::default();
    render_pass.render_pass = pass;
    render_pass.attachments = Some(vec![AttachmentDescriptionT {
        format: 44, // VK_FORMAT_B8G8R8A8_UNORM
        samples: 1,
        ..Default::default()
    }]);
    let mut subpass = SubpassDescriptionT::default();
    subpass.color_attachments = Some(vec![AttachmentReferenceT {
        attachment: 0,
        layout: 2,
        aspect_mask: 0,
    }]);
    render_pass.subpasses = Some(vec![subpass]);
    let mut framebuffer = CreateFramebufferT::default();
    framebuffer.framebuffer = fb;
    framebuffer.render_pass = pass;
    framebuffer.attachments = Some(vec![20]);
    (framebuffer.width, framebuffer.height, framebuffer.layers) = (64, 32, 1);
    let mut inheritance = CommandBufferInheritanceT::default();
    (inheritance.render_pass, inheritance.framebuffer) = (pass, fb);
    let mut begin_secondary = BeginCommandBufferT::default();
    begin_secondary.command_buffer = secondary;
    begin_secondary.flags = flags;
    begin_secondary.inheritance = Some(Box::new(inheritance));
    let mut begin_primary = BeginCommandBufferT::default();
    begin_primary.command_buffer = primary;
    let mut draw = CmdDrawT::default();
    draw.command_buffer = secondary;
    (draw.vertex_count, draw.instance_count) = (3, 1);
    let mut begin_pass = CmdBeginRenderPassT::default();
    begin_pass.command_buffer = primary;
    begin_pass.render_pass = pass;
    begin_pass.framebuffer = fb;
    let mut area = Rect2DT::default();
    (area.extent.width, area.extent.height) = (64, 32);
    begin_pass.render_area = Some(area);
    let mut end_pass = CmdEndRenderPassT::default();
    end_pass.command_buffer = primary;
    let mut execute = CmdExecuteCommandsT::default();
    execute.command_buffer = primary;
    execute.command_buffers = Some(vec![secondary]);
    let mut info = SubmitInfoT::default();
    info.command_buffers = Some(vec![primary]);
    let mut submit = QueueSubmitT::default();
    submit.submits = Some(vec![info]);
    let calls = [
        CallT::CreateRenderPass(Box::new(render_pass)),
        CallT::CreateFramebuffer(Box::new(framebuffer)),
        CallT::BeginCommandBuffer(Box::new(begin_secondary)),
        CallT::CmdDraw(Box::new(draw)),
        CallT::BeginCommandBuffer(Box::new(begin_primary)),
        CallT::CmdBeginRenderPass(Box::new(begin_pass)),
        CallT::CmdExecuteCommands(Box::new(execute)),
        CallT::CmdEndRenderPass(Box::new(end_pass)),
        CallT::QueueSubmit(Box::new(submit)),
    ];
    let (rows, submits) = replay_one_frame(&path, &calls, arch);
    assert_eq!(rows.len(), 1, "the secondary's draw");
    (submits[0].pushbuf_dwords(), rows[0].pushbuf_dwords())
}

#[test]
fn a_secondary_continuing_a_render_pass_resumes_its_rendering() {
    const RENDER_PASS_CONTINUE: u32 = 0x2;
    let dir = tempfile::tempdir().unwrap();
    for arch in [Arch::Turing, Arch::Fermi] {
        let (resumed, resumed_draw) =
            replay_secondary_in_render_pass(dir.path(), RENDER_PASS_CONTINUE, arch);
        let (alone, alone_draw) = replay_secondary_in_render_pass(dir.path(), 0, arch);
        // Resuming pushes the subpass's rendering again in the secondary (eight colour
        // targets of ten words each at least), with no clear.
        assert!(resumed >= alone + 80, "{arch:?}: {resumed} vs {alone}");
        // The resumed rendering dirties the states that depend on its attachments
        // (nvk_cmd_buffer_dirty_render_pass), which its first draw flushes; a
        // secondary outside any rendering has nothing set or dirty and flushes none.
        assert!(
            resumed_draw > alone_draw,
            "{arch:?}: {resumed_draw} vs {alone_draw}"
        );
    }
}

/// Replays one render pass on a 64×32 colour image of `tiling`, beside a depth image
/// when `depth`, storing colour with `store_op`; returns the submit's dwords.
/// One render pass over a 64×32 framebuffer of `views` (the first a colour
/// attachment, a second the depth one), recorded into command buffer 1 and submitted:
/// the render pass (10), the framebuffer (11), the command buffer's begin, the pass
/// begun and ended, the submit.
fn one_render_pass(
    attachments: Vec<trace_format::generated::trace::AttachmentDescriptionT>,
    views: Vec<u64>,
) -> Vec<trace_format::generated::trace::CallT> {
    use trace_format::generated::trace::{
        AttachmentReferenceT, BeginCommandBufferT, CallT, CmdBeginRenderPassT, CmdEndRenderPassT,
        CreateFramebufferT, CreateRenderPassT, QueueSubmitT, Rect2DT, SubmitInfoT,
        SubpassDescriptionT,
    };
    let (cmd, pass, fb) = (1u64, 10u64, 11u64);
    let mut subpass = SubpassDescriptionT::default();
    subpass.color_attachments = Some(vec![AttachmentReferenceT {
        attachment: 0,
        layout: 2,
        aspect_mask: 0,
    }]);
    if attachments.len() > 1 {
        subpass.depth_stencil_attachment = Some(AttachmentReferenceT {
            attachment: 1,
            layout: 3,
            aspect_mask: 0,
        });
    }
    let mut render_pass = CreateRenderPassT::default();
    render_pass.render_pass = pass;
    render_pass.attachments = Some(attachments);
    render_pass.subpasses = Some(vec![subpass]);
    let mut framebuffer = CreateFramebufferT::default();
    (framebuffer.framebuffer, framebuffer.render_pass) = (fb, pass);
    framebuffer.attachments = Some(views);
    (framebuffer.width, framebuffer.height, framebuffer.layers) = (64, 32, 1);
    let mut begin = BeginCommandBufferT::default();
    begin.command_buffer = cmd;
    let mut begin_pass = CmdBeginRenderPassT::default();
    (begin_pass.command_buffer, begin_pass.render_pass) = (cmd, pass);
    begin_pass.framebuffer = fb;
    let mut area = Rect2DT::default();
    (area.extent.width, area.extent.height) = (64, 32);
    begin_pass.render_area = Some(area);
    let mut end_pass = CmdEndRenderPassT::default();
    end_pass.command_buffer = cmd;
    let mut info = SubmitInfoT::default();
    info.command_buffers = Some(vec![cmd]);
    let mut submit = QueueSubmitT::default();
    submit.submits = Some(vec![info]);
    vec![
        CallT::CreateRenderPass(Box::new(render_pass)),
        CallT::CreateFramebuffer(Box::new(framebuffer)),
        CallT::BeginCommandBuffer(Box::new(begin)),
        CallT::CmdBeginRenderPass(Box::new(begin_pass)),
        CallT::CmdEndRenderPass(Box::new(end_pass)),
        CallT::QueueSubmit(Box::new(submit)),
    ]
}

fn replay_render_pass_on(dir: &Path, tiling: u32, depth: bool, store_op: u32) -> u64 {
    use trace_format::generated::trace::{
        AttachmentDescriptionT, CallT, CreateImageT, CreateImageViewT, Extent3DT,
    };
    const D32_SFLOAT: u32 = 126;
    let path = dir.join(format!("linear-{tiling}-{depth}-{store_op}.mscope"));
    let mut calls = Vec::new();
    for (image, view, format, tiling) in [(30, 20, 44, tiling), (31, 21, D32_SFLOAT, 0)] {
        let mut create = CreateImageT::default();
        (create.image, create.format, create.tiling) = (image, format, tiling);
        (create.image_type, create.mip_levels, create.array_layers) = (1, 1, 1);
        create.samples = 1;
        create.extent = Some(Extent3DT {
            width: 64,
            height: 32,
            depth: 1,
        });
        let mut create_view = CreateImageViewT::default();
        (create_view.image_view, create_view.image) = (view, image);
        (create_view.format, create_view.layer_count) = (format, 1);
        calls.push(CallT::CreateImage(Box::new(create)));
        calls.push(CallT::CreateImageView(Box::new(create_view)));
    }
    let mut attachments = vec![AttachmentDescriptionT {
        format: 44, // VK_FORMAT_B8G8R8A8_UNORM
        samples: 1,
        store_op,
        ..Default::default()
    }];
    if depth {
        attachments.push(AttachmentDescriptionT {
            format: D32_SFLOAT,
            samples: 1,
            ..Default::default()
        });
    }
    let views = if depth { vec![20, 21] } else { vec![20] };
    calls.extend(one_render_pass(attachments, views));
    replay_one_frame(&path, &calls, Arch::Turing).1[0].pushbuf_dwords()
}

#[test]
fn a_linear_image_rendered_beside_depth_is_copied_through_its_tiled_shadow() {
    const LINEAR: u32 = 1;
    const STORE: u32 = 0;
    const DONT_CARE: u32 = 1;
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    // Each copy: the remap (a method: its word does not fit an immediate), the eight
    // transfer words, the shadow's block (five) and origin (two), the launch — each
    // group behind its header, 21 dwords.
    let optimal = replay_render_pass_on(dir, 0, true, STORE);
    assert_eq!(
        replay_render_pass_on(dir, LINEAR, true, STORE),
        optimal + 42,
        "loaded into the shadow and stored back"
    );
    assert_eq!(
        replay_render_pass_on(dir, LINEAR, true, DONT_CARE),
        optimal + 21,
        "loaded, not stored"
    );
    // Alone, a linear target is rendered to directly.
    assert_eq!(
        replay_render_pass_on(dir, LINEAR, false, STORE),
        replay_render_pass_on(dir, 0, false, STORE)
    );
}

/// The colour target a render pass into image view 20 binds, as the model pushes it:
/// its width and format (`SET_COLOR_TARGET_WIDTH(0)`, `SET_COLOR_TARGET_FORMAT(0)`).
fn color_target_of(
    path: &Path,
    before_view: Vec<trace_format::generated::trace::CallT>,
) -> (u32, u32) {
    use trace_format::generated::trace::{AttachmentDescriptionT, CallT, CreateImageViewT};
    use trace_format::trace::CallMeta;
    let mut calls = before_view;
    let mut create_view = CreateImageViewT::default();
    (create_view.image_view, create_view.image) = (20, 30);
    (create_view.format, create_view.layer_count) = (44, 1);
    calls.push(CallT::CreateImageView(Box::new(create_view)));
    calls.extend(one_render_pass(
        vec![AttachmentDescriptionT {
            format: 44, // VK_FORMAT_B8G8R8A8_UNORM
            samples: 1,
            ..Default::default()
        }],
        vec![20],
    ));
    let mut w = TraceWriter::create(path, &WriterOptions::default()).unwrap();
    for c in &calls {
        w.append(CallMeta::default(), c).unwrap();
    }
    w.end_frame(CallMeta::default()).unwrap();
    w.finish().unwrap();
    let tape = replayer::verify::model_tape(path, &options(Arch::Turing)).unwrap();
    let target = driver::class::SET_COLOR_TARGET_A;
    let (mut width, mut format) = (None, None);
    for w in driver::push::parse(&tape.words) {
        let w = w.unwrap();
        if w.mthd == target + 8 {
            width = Some(w.data);
        } else if w.mthd == target + 16 {
            format = Some(w.data);
        }
    }
    (
        width.expect("a colour target's width"),
        format.expect("its format"),
    )
}

#[test]
fn a_destroyed_image_handle_that_a_swapchain_hands_out_again_is_the_swapchain_image() {
    use trace_format::generated::trace::{
        CallT, CreateImageT, DestroyObjectT, Extent3DT, VulkanCallT, VulkanParamT,
    };
    let dir = tempfile::tempdir().unwrap();
    let image = 30u64;
    let param = |value: u64, bytes: Option<Vec<u8>>| {
        let mut p = VulkanParamT::default();
        (p.value, p.bytes) = (value, bytes);
        p
    };
    let generic = |command: &str, params: Vec<VulkanParamT>| {
        let mut call = VulkanCallT::default();
        (call.command, call.params) = (Some(command.into()), Some(params));
        CallT::VulkanCall(Box::new(call))
    };
    // A 64×32 B8G8R8A8_UNORM swapchain (VkSwapchainCreateInfoKHR, 104 bytes).
    let mut info = vec![0u8; 104];
    for (at, v) in [
        (0, 1_000_001_000u32),
        (36, 44),
        (44, 64),
        (48, 32),
        (52, 1),
        (56, 0x10),
    ] {
        info[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
    let swapchain = 77u64;
    let swapchain_calls = vec![
        generic(
            "vkCreateSwapchainKHR",
            vec![
                param(5, None),
                param(0, Some(info)),
                param(0, None),
                param(0, Some(swapchain.to_le_bytes().to_vec())),
            ],
        ),
        generic(
            "vkGetSwapchainImagesKHR",
            vec![
                param(5, None),
                param(swapchain, None),
                param(0, Some(1u32.to_le_bytes().to_vec())),
                param(0, Some(image.to_le_bytes().to_vec())),
            ],
        ),
    ];
    // A 16×16 R16G16B16A16_SFLOAT image made and destroyed first, whose handle the
    // swapchain's first image then takes.
    let mut create = CreateImageT::default();
    (create.image, create.format, create.image_type) = (image, 97, 1);
    (create.mip_levels, create.array_layers, create.samples) = (1, 1, 1);
    create.extent = Some(Extent3DT {
        width: 16,
        height: 16,
        depth: 1,
    });
    let mut destroy = DestroyObjectT::default();
    (destroy.object_type, destroy.handle) = (10, image); // VK_OBJECT_TYPE_IMAGE
    let mut reused = vec![
        CallT::CreateImage(Box::new(create)),
        CallT::DestroyObject(Box::new(destroy)),
    ];
    reused.extend(swapchain_calls.clone());

    let fresh = color_target_of(&dir.path().join("fresh.mscope"), swapchain_calls);
    let after_destroy = color_target_of(&dir.path().join("reused.mscope"), reused);
    assert_eq!(fresh.0, 64, "the swapchain's width");
    assert_eq!(
        after_destroy, fresh,
        "the swapchain image, not the destroyed 16×16 half-float image"
    );
}
