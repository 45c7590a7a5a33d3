//! Replayed draws per second on a draw-storm trace (10,000 draws a frame with push
//! constants and descriptor binds, view mask 0, Turing), and the share of that time
//! spent decoding the trace (measured apart: reading every record of the same trace);
//! on a synthetic storm, and on the storm scene captured on NVIDIA's driver
//! (`samples/storm-nvidia.mscope`: 3 frames of 10,000 draws), and on glxgears captured
//! through Zink on lavapipe (`samples/glxgears-zink-lavapipe.mscope`: 60 frames, each
//! a render pass of barriers, dynamic state, push descriptors and indexed draws); the
//! captures on both MME generations; and on any trace `MACROSCOPE_BENCH_TRACE` names
//! (a game's, say) as `replay_trace`. Target: a million draws a second, serial.

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use driver::mme::Arch;
use replayer::{replay, ReplayOptions};
use trace_format::synthetic::{write_synthetic, SyntheticShape};
use trace_format::{ReadOptions, TraceReader, TraceWriter, WriterOptions};

/// The allocator `macroscope` runs with, so that the bench times what a replay costs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const FRAMES: u64 = 4;
const DRAWS: u32 = 10_000;

fn bench(c: &mut Criterion) {
    // The results files go to memory where there is a tmpfs: on a disk mounted with
    // online discard, rewriting a file waits on the device, which is not the replay.
    let dir = match Path::new("/dev/shm").is_dir() {
        true => tempfile::tempdir_in("/dev/shm"),
        false => tempfile::tempdir(),
    }
    .unwrap();
    let trace = dir.path().join("storm.mscope");
    let out = dir.path().join("storm.msr");
    let shape = SyntheticShape {
        frames: FRAMES,
        draws_per_frame: DRAWS,
        view_mask: 0,
    };
    write_synthetic(
        TraceWriter::create(&trace, &WriterOptions::default()).unwrap(),
        &shape,
    )
    .unwrap();
    let draws = FRAMES * u64::from(DRAWS);
    replay_group(
        c,
        "replay_draw_storm",
        &[("turing_mask0", Arch::Turing)],
        &trace,
        &out,
        draws,
    );
    let captured = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/storm-nvidia.mscope");
    replay_group(c, "replay_captured_storm", &BOTH, &captured, &out, 30_000);
    let gears =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/glxgears-zink-lavapipe.mscope");
    replay_group(
        c,
        "replay_captured_glxgears",
        &BOTH,
        &gears,
        &out,
        draw_count(&gears),
    );
    // A real program's trace, too large to keep among the samples: a game or a corpus
    // program captured here (`scripts/corpus run supertux`, the CI's games).
    if let Some(trace) = std::env::var_os("MACROSCOPE_BENCH_TRACE") {
        let trace = Path::new(&trace);
        replay_group(c, "replay_trace", &BOTH, trace, &out, draw_count(trace));
    }
}

/// The draws a replay of `trace` replays (the throughput's elements: draw calls, not
/// the barrier and clear rows beside them).
fn draw_count(trace: &Path) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rows.msr");
    let options = options(Arch::Turing, ReadOptions::default());
    replay(trace, &out, &options, &mut |_, _| {}).unwrap().draws
}

/// A replay of one pass on `arch`, reading as `read` says.
fn options(arch: Arch, read: ReadOptions) -> ReplayOptions {
    ReplayOptions {
        chipset: driver::chipset::Chipset::for_arch(arch),
        frames: None,
        repeat: 1,
        read,
        mme_budget: replayer::DEFAULT_MME_BUDGET,
        remember_macro_runs: true,
    }
}

/// Both MME generations, by the name their benches take.
const BOTH: [(&str, Arch); 2] = [("turing", Arch::Turing), ("fermi", Arch::Fermi)];

/// Replays `trace` (of `draws` draws) on each of `archs` with serial reading and with
/// read-ahead, and decodes it alone.
fn replay_group(
    c: &mut Criterion,
    group: &str,
    archs: &[(&str, Arch)],
    trace: &Path,
    out: &Path,
    draws: u64,
) {
    let mut group = c.benchmark_group(group);
    group.throughput(Throughput::Elements(draws));
    group.sample_size(10);
    for ((prefix, arch), (name, threads)) in archs.iter().flat_map(|a| {
        [
            (*a, ("serial_read", ReadOptions::default())),
            (*a, ("read_ahead", ReadOptions::for_replay())),
        ]
    }) {
        let options = options(arch, threads);
        group.bench_function(format!("{prefix}/{name}"), |b| {
            b.iter(|| black_box(replay(trace, out, &options, &mut |_, _| {}).unwrap()))
        });
    }
    group.bench_function("decode_only", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for chunk in TraceReader::open(trace).unwrap() {
                n += chunk.unwrap().records().count() as u64;
            }
            black_box(n)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
