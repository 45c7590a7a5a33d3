//! Replayed draws per second on a draw-storm trace (10,000 draws a frame with push
//! constants and descriptor binds, view mask 0, Turing), and the share of that time
//! spent decoding the trace (measured apart: reading every record of the same trace);
//! the same on the storm scene captured on NVIDIA's driver (`samples/`).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use driver::mme::Arch;
use replayer::{replay, ReplayOptions};
use trace_format::synthetic::{write_synthetic, SyntheticShape};
use trace_format::{ReadOptions, TraceReader, TraceWriter, WriterOptions};

const FRAMES: u64 = 4;
const DRAWS: u32 = 10_000;

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
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

    let mut group = c.benchmark_group("replay_draw_storm");
    group.throughput(Throughput::Elements(FRAMES * u64::from(DRAWS)));
    group.sample_size(10);
    for (name, threads) in [
        ("serial_read", ReadOptions::default()),
        ("read_ahead", ReadOptions::parallel()),
    ] {
        let options = ReplayOptions {
            arch: Arch::Turing,
            frames: None,
            repeat: 1,
            read: threads,
        };
        group.bench_function(format!("turing_mask0/{name}"), |b| {
            b.iter(|| black_box(replay(&trace, &out, &options, &mut |_, _| {}).unwrap()))
        });
    }
    group.bench_function("decode_only", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for chunk in TraceReader::open(&trace).unwrap() {
                n += chunk.unwrap().records().count() as u64;
            }
            black_box(n)
        })
    });
    group.finish();
    captured_storm(c, &out);
}

/// The storm scene as NVIDIA's driver ran it (`samples/storm-nvidia.mscope`: 3 frames
/// of 10,000 draws with push constants and descriptor binds), replayed on Turing.
fn captured_storm(c: &mut Criterion, out: &std::path::Path) {
    let trace =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples/storm-nvidia.mscope");
    let mut group = c.benchmark_group("replay_captured_storm");
    group.throughput(Throughput::Elements(30_000));
    group.sample_size(10);
    for (name, threads) in [
        ("serial_read", ReadOptions::default()),
        ("read_ahead", ReadOptions::parallel()),
    ] {
        let options = ReplayOptions {
            arch: Arch::Turing,
            frames: None,
            repeat: 1,
            read: threads,
        };
        group.bench_function(format!("turing/{name}"), |b| {
            b.iter(|| black_box(replay(&trace, out, &options, &mut |_, _| {}).unwrap()))
        });
    }
    group.bench_function("decode_only", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for chunk in TraceReader::open(&trace).unwrap() {
                n += chunk.unwrap().records().count() as u64;
            }
            black_box(n)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
