//! Replays of the traces captured from the scenes on an NVIDIA H200 with NVIDIA's own
//! driver (`samples/`): what the scenes drew, on both MME generations.

use std::path::{Path, PathBuf};

use driver::mme::Arch;
use replayer::{replay, ReplayOptions, Summary};
use trace_format::generated::results::{DrawKind, DrawRow, SubmitRow};
use trace_format::{ReadOptions, ResultsReader, TraceReader};

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../samples")
        .join(format!("{name}-nvidia.mscope"))
}

fn run(name: &str, arch: Arch) -> (Summary, Vec<DrawRow>, Vec<SubmitRow>) {
    run_remembering(name, arch, true)
}

/// Replays sample `name`, with repeated macro calls replayed from remembered runs or
/// every call simulated.
fn run_remembering(
    name: &str,
    arch: Arch,
    remember_macro_runs: bool,
) -> (Summary, Vec<DrawRow>, Vec<SubmitRow>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.msr");
    let options = ReplayOptions {
        chipset: driver::chipset::Chipset::for_arch(arch),
        frames: None,
        repeat: 1,
        read: ReadOptions::default(),
        mme_budget: replayer::DEFAULT_MME_BUDGET,
        remember_macro_runs,
    };
    let summary = replay(&sample(name), &out, &options, &mut |_, _| {}).unwrap();
    let (mut draws, mut submits) = (Vec::new(), Vec::new());
    for chunk in ResultsReader::open(&out).unwrap() {
        let chunk = chunk.unwrap();
        draws.extend(chunk.draws().copied());
        submits.extend(chunk.submits().copied());
    }
    (summary, draws, submits)
}

#[test]
fn the_samples_come_from_nvidias_driver() {
    let chunk = TraceReader::open(&sample("multiview"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let device = chunk
        .records()
        .find_map(|r| r.call_as_physical_device_info())
        .unwrap();
    assert_eq!(device.vendor_id(), 0x10de);
    assert_eq!(device.driver_name(), Some("NVIDIA"));
    assert_eq!(device.max_multiview_view_count(), 32);
}

#[test]
fn nvidia_multiview_sample_expands_views_and_query_slots() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let (_, draws, submits) = run("multiview", arch);
        assert_eq!(draws.len(), 18);
        let masks: Vec<u32> = draws[..6].iter().map(|d| d.view_mask()).collect();
        assert_eq!(masks, [0b1111, 0b1111, 5, 10, 5, 10]);
        for d in &draws {
            assert_eq!(
                d.hw_draws(),
                d.view_mask().count_ones() * d.instance_count()
            );
        }
        let slots: u32 = submits.iter().map(|s| s.queries() + s.zero_queries()).sum();
        assert_eq!(slots, 3 * (4 + 4 * 2 + 3));
    }
}

#[test]
fn turing_and_fermi_agree_on_draws_and_differ_in_mme_instructions() {
    for name in ["multiview", "indirect", "storm", "tessellation"] {
        let (t, td, _) = run(name, Arch::Turing);
        let (f, fd, _) = run(name, Arch::Fermi);
        assert_eq!((t.draws, t.hw_draws), (f.draws, f.hw_draws), "{name}");
        let shape = |d: &DrawRow| (d.seq(), d.kind(), d.view_mask(), d.hw_draws());
        assert!(td.iter().map(shape).eq(fd.iter().map(shape)), "{name}");
        assert_ne!(t.mme_instructions, f.mme_instructions, "{name}");
        // What the model needs and skips: only the binds it does not execute yet.
        let not_modelled: Vec<&str> = t
            .skipped
            .iter()
            .filter(|s| s.needed)
            .map(|s| s.name.as_str())
            .collect();
        assert!(
            not_modelled.iter().all(|n| [
                "vkCmdBindDescriptorSets",
                "vkCmdBindVertexBuffers",
                "vkCmdBindIndexBuffer"
            ]
            .contains(n)),
            "{name}: {not_modelled:?}"
        );
    }
}

#[test]
fn nvidia_indirect_sample_reads_arguments_and_counts_from_captured_memory() {
    let (_, draws, _) = run("indirect", Arch::Turing);
    let kinds: Vec<DrawKind> = draws[..4].iter().map(|d| d.kind()).collect();
    assert_eq!(
        kinds,
        [
            DrawKind::DrawIndirect,
            DrawKind::DrawIndexedIndirect,
            DrawKind::DrawIndirectCount,
            DrawKind::DrawIndexedIndirectCount
        ]
    );
    let shape: Vec<(u32, u32)> = draws[..4]
        .iter()
        .map(|d| (d.indirect_draw_count(), d.hw_draws()))
        .collect();
    assert_eq!(shape, [(4, 10), (4, 8), (3, 6), (2, 4)]);
}

#[test]
fn nvidia_storm_sample_replays_ten_thousand_draws_a_frame() {
    let (summary, draws, _) = run("storm", Arch::Turing);
    assert_eq!(summary.draws, 30_000);
    for frame in 0..3 {
        assert_eq!(draws.iter().filter(|d| d.frame() == frame).count(), 10_000);
    }
}

/// The storm sample's draws with what their flush and binds cost, by group.
fn storm_states(arch: Arch) -> Vec<(DrawRow, [(u32, u32); 8])> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.msr");
    let options = ReplayOptions {
        chipset: driver::chipset::Chipset::for_arch(arch),
        frames: None,
        repeat: 1,
        read: ReadOptions::default(),
        mme_budget: replayer::DEFAULT_MME_BUDGET,
        remember_macro_runs: true,
    };
    replay(&sample("storm"), &out, &options, &mut |_, _| {}).unwrap();
    let mut rows = Vec::new();
    for chunk in ResultsReader::open(&out).unwrap() {
        let chunk = chunk.unwrap();
        for (i, row) in chunk.draws().enumerate() {
            let state = trace_format::results::state_group_costs(&chunk.draw_state(i))
                .map(|c| (c.methods, c.dwords));
            rows.push((*row, state));
        }
    }
    rows
}

#[test]
fn storm_draws_carry_their_descriptor_binds_and_an_unchanged_state_costs_nothing() {
    let group = |name: &str| {
        trace_format::results::STATE_GROUPS
            .iter()
            .position(|g| *g == name)
            .unwrap()
    };
    let (descriptors, shaders, constant_buffers) = (
        group("descriptors"),
        group("shaders"),
        group("constant-buffers"),
    );
    for arch in [Arch::Turing, Arch::Fermi] {
        let rows = storm_states(arch);
        assert_eq!(rows.len(), 30_000);
        // Every storm draw follows a push-constant update and a descriptor set bind:
        // their root-table writes are the draw's `descriptors` share.
        for (row, state) in &rows {
            assert!(state[descriptors].1 > 0, "{arch:?}: {state:?}");
            let flushed: u32 = state.iter().map(|(_, d)| d).sum();
            assert!(
                row.pushbuf_dwords() > flushed,
                "the draw macro's call comes on top"
            );
        }
        // The first draw of a command buffer flushes the whole dynamic state and binds
        // the shaders; the others, with nothing changed, flush nothing but what their
        // binds wrote and the constant buffers the set bind made stale: on Turing the
        // fragment shader's uniform buffer, rebound from its descriptor
        // (BIND_CBUF_DESC, then SELECT_CB0: 4 methods pushed in 6 dwords, and the 7
        // those macros emit — the READ_FIFOED set-up, the bind, the root table's
        // selector again); before Turing NVK reads uniform buffers from memory and
        // rebinds nothing.
        let per_frame = 10_000;
        for (i, (_, state)) in rows.iter().enumerate() {
            let dynamic: u32 = state
                .iter()
                .enumerate()
                .filter(|(g, _)| *g != descriptors && *g != constant_buffers)
                .map(|(_, (_, d))| d)
                .sum();
            if i % per_frame == 0 {
                assert!(dynamic > 0, "{arch:?} draw {i}");
                assert!(state[shaders].0 > 0, "{arch:?} draw {i}: {state:?}");
            } else {
                assert_eq!(dynamic, 0, "{arch:?} draw {i}: {state:?}");
                let expected = if arch == Arch::Turing {
                    (11, 6)
                } else {
                    (0, 0)
                };
                assert_eq!(state[constant_buffers], expected, "{arch:?} draw {i}");
            }
        }
        // Without the binds, a draw is the draw macro's 6 dwords: a header and NVK's five
        // parameters.
        let (row, state) = rows[1];
        let binds: u32 = state.iter().map(|(_, d)| d).sum();
        assert_eq!(row.pushbuf_dwords() - binds, 6, "{arch:?}");
    }
}

#[test]
fn the_compute_sample_replays_every_command_as_rows_on_both_generations() {
    for arch in [Arch::Turing, Arch::Fermi] {
        let (summary, rows, submits) = run("compute", arch);
        // Barriers, events, binds: every command executed.
        assert_eq!(summary.first_unmodelled, None, "{arch:?}");
        assert_eq!(summary.executed_commands, summary.recorded_commands);
        assert_eq!(
            (summary.draws, summary.dispatches, summary.clears),
            (0, 27, 3)
        );
        let count = |kind: DrawKind| rows.iter().filter(|r| r.kind() == kind).count();
        assert_eq!(count(DrawKind::Dispatch), 9, "{arch:?}");
        assert_eq!(count(DrawKind::DispatchIndirect), 3, "{arch:?}");
        assert_eq!(count(DrawKind::CopyBuffer), 3, "{arch:?}");
        assert_eq!(count(DrawKind::FillBuffer), 3, "{arch:?}");
        assert_eq!(count(DrawKind::ClearColorImage), 3, "{arch:?}");
        for kind in [
            DrawKind::BlitImage,
            DrawKind::CopyImageToBuffer,
            DrawKind::CopyBufferToImage,
        ] {
            assert_eq!(count(kind), 3, "{arch:?} {kind:?}");
        }
        // The indirect dispatches read 3 × 1 × 1 workgroups from captured memory.
        assert!(rows
            .iter()
            .filter(|r| r.kind() == DrawKind::DispatchIndirect)
            .all(|r| r.element_count() == 3));
        assert_eq!(submits.len(), 3, "{arch:?}");
    }
    // A dispatch row carries the words NVK uploads for it: the root table (0x800
    // bytes, NVK 25.0.7's) and the 128-word QMD.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.msr");
    let options = ReplayOptions {
        chipset: driver::chipset::Chipset::for_arch(Arch::Turing),
        frames: None,
        repeat: 1,
        read: ReadOptions::default(),
        mme_budget: replayer::DEFAULT_MME_BUDGET,
        remember_macro_runs: true,
    };
    replay(&sample("compute"), &out, &options, &mut |_, _| {}).unwrap();
    let mut checked = 0;
    for chunk in ResultsReader::open(&out).unwrap() {
        let chunk = chunk.unwrap();
        for (i, row) in chunk.draws().enumerate() {
            let words = chunk.draw_memory_words(i);
            match row.kind() {
                DrawKind::Dispatch | DrawKind::DispatchIndirect => {
                    // The root table, then NVK 25.0.7's 256-byte QMD.
                    assert_eq!(words, 0x800 / 4 + 64);
                    checked += 1;
                }
                DrawKind::ClearColorImage | DrawKind::PipelineBarrier => assert_eq!(words, 0),
                _ => {}
            }
        }
    }
    assert_eq!(checked, 12);
}

#[test]
fn a_storm_draw_s_mme_instructions_are_split_between_its_groups_and_its_macro() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.msr");
    let options = ReplayOptions {
        chipset: driver::chipset::Chipset::for_arch(Arch::Turing),
        frames: None,
        repeat: 1,
        read: ReadOptions::default(),
        mme_budget: replayer::DEFAULT_MME_BUDGET,
        remember_macro_runs: true,
    };
    replay(&sample("storm"), &out, &options, &mut |_, _| {}).unwrap();
    let chunk = ResultsReader::open(&out).unwrap().next().unwrap().unwrap();
    let row = *chunk.draws().nth(1).unwrap();
    let groups = trace_format::results::state_group_costs(&chunk.draw_state(1));
    let cbufs = trace_format::results::STATE_GROUPS
        .iter()
        .position(|g| *g == "constant-buffers")
        .unwrap();
    // BIND_CBUF_DESC and SELECT_CB0 run for the constant-buffer group; the draw macro
    // runs the rest of the row's instructions.
    assert!(groups[cbufs].mme > 0, "{groups:?}");
    let in_groups: u32 = groups.iter().map(|c| c.mme).sum();
    assert!(in_groups < row.mme_instructions(), "{groups:?}");
    assert!(groups
        .iter()
        .enumerate()
        .all(|(g, c)| g == cbufs || c.mme == 0));
}

#[test]
fn remembered_macro_runs_give_the_rows_that_simulating_every_call_gives() {
    for name in ["multiview", "indirect", "storm", "compute", "tessellation"] {
        for arch in [Arch::Turing, Arch::Fermi] {
            let [simulated, remembered] = [false, true].map(|remember| {
                let (summary, mut draws, mut submits) = run_remembering(name, arch, remember);
                // Host times differ from run to run; everything else must not.
                for d in &mut draws {
                    d.set_encode_ns(0);
                    d.set_mme_ns(0);
                    d.set_multiview_ns(0);
                    d.set_query_ns(0);
                }
                for s in &mut submits {
                    s.set_encode_ns(0);
                    s.set_mme_ns(0);
                    s.set_multiview_ns(0);
                    s.set_query_ns(0);
                }
                let counts = [summary.draws, summary.hw_draws, summary.mme_instructions];
                (counts, draws, submits)
            });
            assert!(!simulated.1.is_empty(), "{name}");
            assert_eq!(remembered, simulated, "{name} on {arch:?}");
        }
    }
}
