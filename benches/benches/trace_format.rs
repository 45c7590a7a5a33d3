//! Trace encoding and decoding throughput over a synthetic stream shaped like real
//! frames (thousands of draws with binds and push constants).
//!
//! - `encode/caller`: the time the recording thread spends per record; compression
//!   happens on the writer's background thread and is not included.
//! - `encode/end_to_end`: the same, waiting for compression and the footer.
//! - `decode/macroscope`: reading every chunk (checksum, decompression, flatbuffers
//!   verification) and visiting every record.
//! - `decode/macroscope_read_ahead`: the same with `ReadOptions::parallel()` (chunks
//!   decoded on worker threads ahead of the consumer).
//! - `decode/zstd_only`: zstd decompression alone of the same chunks, the baseline that
//!   the target compares against (decode at ≥ 60% of it).
//! - `byte_planes/split`, `byte_planes/join`: a MiB of words stored as byte planes (what
//!   the capture layer's thread does to a mapped-memory change) and laid out again (the
//!   reader), beside `byte_planes/copy`, the copy the layer made before.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use trace_format::synthetic::{write_synthetic, write_synthetic_calls, SyntheticShape};
use trace_format::wire::{ChunkHeader, CHUNK_HEADER_LEN};
use trace_format::{ReadOptions, TraceReader, TraceWriter, WriterOptions};

const SHAPE: SyntheticShape = SyntheticShape {
    frames: 8,
    draws_per_frame: 5000,
    view_mask: 0,
};

struct Stream {
    records: u64,
    uncompressed: u64,
}

fn options() -> WriterOptions {
    // Deep enough that a burst of frames never waits for compression.
    WriterOptions {
        queue_depth: 64,
        ..Default::default()
    }
}

fn encode(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("encode.mscope");
    let stats = write_synthetic(TraceWriter::create(&path, &options()).unwrap(), &SHAPE).unwrap();
    let stream = Stream {
        records: stats.records,
        uncompressed: stats.uncompressed_bytes,
    };

    let mut group = c.benchmark_group("encode");
    group.throughput(Throughput::Elements(stream.records));
    group.bench_function("caller", |b| {
        b.iter_custom(|iters| {
            let mut caller = Duration::ZERO;
            for _ in 0..iters {
                let mut writer = TraceWriter::create(&path, &options()).unwrap();
                let start = Instant::now();
                write_synthetic_calls(&mut writer, &SHAPE).unwrap();
                caller += start.elapsed();
                writer.finish().unwrap();
            }
            caller
        })
    });
    group.throughput(Throughput::Bytes(stream.uncompressed));
    group.bench_function("end_to_end", |b| {
        b.iter(|| write_synthetic(TraceWriter::create(&path, &options()).unwrap(), &SHAPE).unwrap())
    });
    group.finish();
}

fn decode(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("decode.mscope");
    let stats = write_synthetic(TraceWriter::create(&path, &options()).unwrap(), &SHAPE).unwrap();

    // The compressed payloads, in memory, for the zstd-only baseline.
    let bytes = std::fs::read(&path).unwrap();
    let reader = TraceReader::open(&path).unwrap();
    let payloads: Vec<(Vec<u8>, usize)> = reader
        .container()
        .index()
        .unwrap()
        .iter()
        .map(|entry| {
            let at = entry.offset as usize;
            let header =
                ChunkHeader::parse(bytes[at..at + CHUNK_HEADER_LEN].try_into().unwrap()).unwrap();
            let start = at + CHUNK_HEADER_LEN;
            (
                bytes[start..start + header.compressed_len as usize].to_vec(),
                header.uncompressed_len as usize,
            )
        })
        .collect();

    let mut group = c.benchmark_group("decode");
    group.throughput(Throughput::Bytes(stats.uncompressed_bytes));
    group.bench_function("macroscope", |b| {
        b.iter(|| {
            let mut seen = 0u64;
            for chunk in TraceReader::open(&path).unwrap() {
                for record in chunk.unwrap().records() {
                    seen = seen
                        .wrapping_add(record.envelope().seq() ^ u64::from(record.call_type().0));
                }
            }
            black_box(seen)
        })
    });
    group.bench_function("macroscope_read_ahead", |b| {
        b.iter(|| {
            let mut seen = 0u64;
            for chunk in TraceReader::open_with(&path, &ReadOptions::parallel()).unwrap() {
                for record in chunk.unwrap().records() {
                    seen = seen
                        .wrapping_add(record.envelope().seq() ^ u64::from(record.call_type().0));
                }
            }
            black_box(seen)
        })
    });
    group.bench_function("zstd_only", |b| {
        let mut decompressor = zstd::bulk::Decompressor::new().unwrap();
        b.iter(|| {
            let mut total = 0;
            for (compressed, len) in &payloads {
                let mut out = Vec::with_capacity(*len);
                decompressor
                    .decompress_to_buffer(&compressed[..], &mut out)
                    .unwrap();
                total += out.len();
            }
            black_box(total)
        })
    });
    group.throughput(Throughput::Elements(stats.records));
    group.bench_function("macroscope_records", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for chunk in TraceReader::open(&path).unwrap() {
                n += chunk.unwrap().records().count() as u64;
            }
            black_box(n)
        })
    });
    group.finish();
}

fn byte_planes(c: &mut Criterion) {
    use trace_format::byte_planes::{join_into, split_into};
    let words: Vec<u8> = (0u32..1 << 18)
        .flat_map(|i| (7 ^ i).to_le_bytes())
        .collect();
    let mut planes = Vec::new();
    split_into(&words, &mut planes);
    let mut out = Vec::with_capacity(words.len());
    let mut group = c.benchmark_group("byte_planes");
    group.throughput(Throughput::Bytes(words.len() as u64));
    group.bench_function("split", |b| {
        b.iter(|| {
            out.clear();
            split_into(black_box(&words), &mut out);
        })
    });
    group.bench_function("join", |b| {
        b.iter(|| {
            out.clear();
            join_into(black_box(&planes), &mut out);
        })
    });
    group.bench_function("copy", |b| {
        b.iter(|| {
            out.clear();
            out.extend_from_slice(black_box(&words));
        })
    });
    group.finish();
}

criterion_group!(benches, encode, decode, byte_planes);
criterion_main!(benches);
