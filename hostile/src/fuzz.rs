//! A fuzzer that runs on stable Rust: inputs mutated from valid seeds (or chosen
//! outright, for the record-stream target) run through a target with panics caught and
//! what the target's thread allocates measured. No coverage guidance: mutations are
//! blind, so seeds are small valid files and the mutations know the container's shape
//! (a target that re-packs a mutated chunk payload with a valid checksum reaches the
//! flatbuffers verifier and past it).
//!
//! Findings are written to a regressions folder as `<target>-<hash>.bin`; the test
//! suite runs every file there through its target.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Instant;

use driver::mme::Arch;
use flatbuffers::FlatBufferBuilder;
use replayer::{replay, ReplayOptions};
use trace_format::container::{ChunkMeta, ContainerWriter};
use trace_format::generated::trace::{Envelope, Record, RecordArgs, RecordBatch, RecordBatchArgs};
use trace_format::synthetic::handles;
use trace_format::{Content, ReadOptions, ResultsReader, TraceReader, WriterOptions};

use crate::alloc;
use crate::generated::{build_call, CALLS};
use crate::stream::write_fuzzed;
use crate::values::{Mode, Values};

/// The MME budget fuzzed replays run under: a runaway draw stops here rather than at
/// the default ceiling (the same rule, reached sooner).
pub const FUZZ_MME_BUDGET: u64 = 1 << 18;
/// Records a fuzzed record stream holds at most.
const MAX_FUZZED_RECORDS: usize = 64;
/// What one input may make its target allocate: this, plus [`ALLOC_PER_INPUT_BYTE`]
/// per byte of the file it read.
pub const ALLOC_BASE: u64 = 512 << 20;
/// See [`ALLOC_BASE`].
pub const ALLOC_PER_INPUT_BYTE: u64 = 64;

/// What a target is fed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A trace file's bytes, mutated, read with one and two threads.
    TraceBytes,
    /// A results file's bytes, mutated, read.
    ResultsBytes,
    /// One chunk's decompressed record batch, mutated and written back as a valid
    /// chunk (checksums right), read and replayed.
    TracePayload,
    /// The values of a record stream on top of a valid base, replayed on both MME
    /// generations.
    Records,
    /// A GFXReconstruct capture's bytes, mutated, imported, the trace read and replayed.
    GfxrBytes,
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 5] = [
        Target::TraceBytes,
        Target::ResultsBytes,
        Target::TracePayload,
        Target::Records,
        Target::GfxrBytes,
    ];

    /// Its name, as regression files and `scripts/fuzz` use it.
    pub fn name(self) -> &'static str {
        match self {
            Target::TraceBytes => "trace-bytes",
            Target::ResultsBytes => "results-bytes",
            Target::TracePayload => "trace-payload",
            Target::Records => "records",
            Target::GfxrBytes => "gfxr-bytes",
        }
    }

    /// The target a name or a regression file's name stands for.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL
            .into_iter()
            .find(|t| name == t.name() || name.starts_with(&format!("{}-", t.name())))
    }
}

/// What one input did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// An error or results: what a reader owes bad input.
    Fine,
    /// A panic, with its message.
    Panicked(String),
    /// More allocated than the bound allows (bytes allocated, bound).
    Allocated(u64, u64),
}

/// Valid inputs to mutate from, written under `dir`.
pub fn seeds(target: Target, dir: &Path) -> anyhow::Result<Vec<Vec<u8>>> {
    let trace = dir.join("seed.mscope");
    crate::stream::write_fuzzed(&trace, &[7; 16], 4)?;
    Ok(match target {
        Target::TraceBytes => vec![fs::read(&trace)?],
        Target::ResultsBytes => {
            let results = dir.join("seed.msr");
            replay(&trace, &results, &options(Arch::Turing), &mut |_, _| {})?;
            vec![fs::read(&results)?]
        }
        Target::TracePayload => vec![batch_payload(1), batch_payload(2)],
        Target::Records => vec![vec![0; 32], (0..=255).collect(), vec![0xff; 64]],
        // Real GFXReconstruct captures of two scenes, uncompressed and zstd.
        Target::GfxrBytes => GFXR_SEEDS
            .iter()
            .map(|name| {
                fs::read(
                    Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("../samples")
                        .join(name),
                )
            })
            .collect::<std::io::Result<_>>()?,
    })
}

/// The GFXReconstruct captures in `samples/` the `gfxr-bytes` target mutates.
const GFXR_SEEDS: [&str; 2] = ["multiview-lavapipe.gfxr", "indirect-lavapipe-zstd.gfxr"];

fn options(arch: Arch) -> ReplayOptions {
    ReplayOptions {
        chipset: driver::chipset::Chipset::for_arch(arch),
        frames: None,
        repeat: 1,
        read: ReadOptions::with_threads(0),
        mme_budget: FUZZ_MME_BUDGET,
        remember_macro_runs: true,
    }
}

/// A record batch of one of each call with random values.
fn batch_payload(seed: u64) -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::new();
    let mut v = Values::new(Mode::Random(seed), &handles::ALL, &[]);
    let records: Vec<_> = (0..CALLS.len())
        .map(|i| {
            let (call_type, call) = build_call(&mut fbb, i, &mut v);
            Record::create(
                &mut fbb,
                &RecordArgs {
                    envelope: Some(&Envelope::new(i as u64, 1, i as u64, 0)),
                    call_type,
                    call: Some(call),
                },
            )
        })
        .collect();
    let records = fbb.create_vector(&records);
    let batch = RecordBatch::create(
        &mut fbb,
        &RecordBatchArgs {
            records: Some(records),
        },
    );
    fbb.finish_minimal(batch);
    fbb.finished_data().to_vec()
}

/// Runs `input` through `target` in this thread, with scratch files under `dir`.
pub fn run_one(target: Target, input: &[u8], dir: &Path) -> Outcome {
    guarded(|| {
        let file = dir.join("input.bin");
        let written = match target {
            Target::TraceBytes => fs::write(&file, input).map(|()| read_trace(&file)),
            Target::ResultsBytes => fs::write(&file, input).map(|()| read_results(&file)),
            Target::TracePayload => write_payload(&file, input).map(|()| {
                same_verdict_as_flatbuffers(input);
                read_trace(&file);
                replay_both(&file, dir);
            }),
            Target::Records => write_fuzzed(&file, input, MAX_FUZZED_RECORDS)
                .map_err(std::io::Error::other)
                .map(|_| replay_both(&file, dir)),
            Target::GfxrBytes => fs::write(&file, input).map(|()| {
                // What an import converted before any damage is a trace to read and
                // replay.
                let trace = dir.join("imported.mscope");
                let _ = trace_format::gfxr::import(&file, &trace, |_, _| {});
                read_trace(&trace);
                replay_both(&trace, dir);
            }),
        };
        // A scratch file that cannot be written is no finding; the bound is the input's.
        let _ = written;
        fs::metadata(&file).map_or(input.len() as u64, |m| m.len())
    })
}

/// Runs `f` with its panics caught and what this thread allocates measured against
/// the bound for the file length `f` returns.
pub fn guarded(f: impl FnOnce() -> u64) -> Outcome {
    let start = alloc::held();
    alloc::reset_peak();
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(file_len) => {
            let used = alloc::peak_since(start);
            let bound = ALLOC_BASE + ALLOC_PER_INPUT_BYTE * file_len;
            if used > bound {
                Outcome::Allocated(used, bound)
            } else {
                Outcome::Fine
            }
        }
        Err(panic) => Outcome::Panicked(
            panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".into()),
        ),
    }
}

/// Checks that the reader's payload verifier judges `payload` as flatbuffers' own
/// verifier does (a disagreement is a finding: the reader reads verified payloads
/// unchecked).
fn same_verdict_as_flatbuffers(payload: &[u8]) {
    let ours = trace_format::verify::verify_trace_payload(payload);
    let opts = trace_format::verify::verifier_options(payload.len());
    let theirs = flatbuffers::root_with_opts::<RecordBatch>(&opts, payload);
    assert_eq!(
        ours.is_ok(),
        theirs.is_ok(),
        "the payload verifier disagrees with flatbuffers': ours {ours:?}, theirs {theirs:?}"
    );
}

/// Writes `payload` as the one chunk of a trace, checksums and all.
fn write_payload(file: &Path, payload: &[u8]) -> std::io::Result<()> {
    let chunk = || -> trace_format::Result<()> {
        let mut w = ContainerWriter::create(file, Content::Trace, &WriterOptions::default())?;
        let meta = ChunkMeta {
            record_count: CALLS.len() as u32,
            first_seq: 0,
            first_frame: 0,
            ends_frame: true,
            stored_records: false,
        };
        w.write_chunk(payload.to_vec(), 0, meta)?;
        w.finish(1)?;
        Ok(())
    };
    chunk().map_err(std::io::Error::other)
}

/// Reads every record of a trace, names it and formats it, with and without read-ahead.
fn read_trace(path: &Path) {
    for threads in [0, 2] {
        let Ok(reader) = TraceReader::open_with(path, &ReadOptions::with_threads(threads)) else {
            continue;
        };
        for chunk in reader {
            let Ok(chunk) = chunk else { break };
            for record in chunk.records() {
                let _ = trace_format::names::record_name(&record);
                let _ = format!("{record:?}");
            }
        }
    }
}

/// Reads every row of a results file through every accessor.
fn read_results(path: &Path) {
    let Ok(reader) = ResultsReader::open_with(path, &ReadOptions::with_threads(0)) else {
        return;
    };
    for chunk in reader {
        let Ok(chunk) = chunk else { break };
        for (i, row) in chunk.draws().enumerate() {
            let _ = (row.seq(), chunk.draw_state(i), chunk.draw_memory_words(i));
            let _ = chunk.draw_error(i);
        }
        let _ = chunk.submits().count();
        let _ = (chunk.skipped_calls(), chunk.totals(), chunk.draw_errors());
    }
}

/// Replays on both MME generations and reads the results back.
fn replay_both(trace: &Path, dir: &Path) {
    for arch in [Arch::Turing, Arch::Fermi] {
        let out = dir.join("out.msr");
        if replay(trace, &out, &options(arch), &mut |_, _| {}).is_ok() {
            read_results(&out);
        }
    }
}

/// A small deterministic generator.
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator started from `seed`.
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Values that break size and count fields.
const INTERESTING: [u32; 10] = [
    0,
    1,
    2,
    0x7f,
    0x80,
    0xff,
    0xffff,
    0x7fff_ffff,
    0x8000_0000,
    u32::MAX,
];
/// The most bytes a mutated input grows to.
const MAX_INPUT: usize = 1 << 20;

/// One to four mutations of `input`; `other` is another seed to splice from.
pub(crate) fn mutate(input: &[u8], other: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let len = out.len();
        match rng.below(8) {
            0 if len > 0 => {
                let i = rng.below(len);
                out[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                out[i] = INTERESTING[rng.below(INTERESTING.len())] as u8;
            }
            2 if len >= 4 => {
                let i = rng.below(len - 3);
                let v = INTERESTING[rng.below(INTERESTING.len())];
                out[i..i + 4].copy_from_slice(&v.to_le_bytes());
            }
            3 if len > 0 => out.truncate(rng.below(len)),
            4 if len > 0 => {
                let i = rng.below(len);
                let n = rng.below((len - i).min(64) + 1);
                out.drain(i..i + n);
            }
            5 if len > 0 && len < MAX_INPUT => {
                let i = rng.below(len);
                let n = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                out.splice(i..i, bytes);
            }
            6 if !other.is_empty() && len > 0 => {
                let i = rng.below(len);
                let j = rng.below(other.len());
                let n = rng.below((other.len() - j).min(len - i).min(256) + 1);
                out[i..i + n].copy_from_slice(&other[j..j + n]);
            }
            _ if len > 0 && len < MAX_INPUT => {
                let i = rng.below(len);
                let n = rng.below((len - i).min(64) + 1);
                let copy = out[i..i + n].to_vec();
                out.splice(i..i, copy);
            }
            _ => out.push(rng.next() as u8),
        }
    }
    out
}

/// How long a fuzzing run lasts.
#[derive(Clone, Copy, Debug)]
pub enum Budget {
    /// This many inputs.
    Inputs(u64),
    /// Until then.
    Until(Instant),
}

/// What a fuzzing run did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Inputs run.
    pub inputs: u64,
    /// Findings, as the files they were saved to (or would be) and what happened.
    pub findings: Vec<(PathBuf, Outcome)>,
}

/// A scratch directory for [`fuzz`] and [`run_one`], in memory where the system has
/// `/dev/shm`: every input rewrites files there, and on a disk mounted with online
/// discard each rewrite waits for the disk (it made the fuzzer four times slower).
pub fn scratch_dir() -> std::io::Result<tempfile::TempDir> {
    let shm = Path::new("/dev/shm");
    let builder = tempfile::Builder::new().prefix("hostile-").tempdir_in(shm);
    match builder {
        Ok(dir) if shm.is_dir() => Ok(dir),
        _ => tempfile::tempdir(),
    }
}

/// Fuzzes `target` from seed `seed` within `budget`, scratch files under `dir`; each
/// finding is saved under `regressions` (when given). The input being run is kept in
/// `dir/current.bin` so that a crash the harness cannot catch (an abort) leaves it.
pub fn fuzz(
    target: Target,
    seed: u64,
    budget: Budget,
    dir: &Path,
    regressions: Option<&Path>,
) -> anyhow::Result<Report> {
    let seeds = seeds(target, dir)?;
    let mut rng = Rng::new(seed);
    let mut report = Report::default();
    loop {
        match budget {
            Budget::Inputs(n) if report.inputs >= n => break,
            Budget::Until(t) if Instant::now() >= t => break,
            _ => {}
        }
        let base = &seeds[rng.below(seeds.len())];
        let other = &seeds[rng.below(seeds.len())];
        let input = if target == Target::Records && rng.below(2) == 0 {
            (0..rng.below(256)).map(|_| rng.next() as u8).collect()
        } else {
            mutate(base, other, &mut rng)
        };
        fs::write(dir.join("current.bin"), &input)?;
        let outcome = run_one(target, &input, dir);
        report.inputs += 1;
        if outcome != Outcome::Fine {
            let name = format!("{}-{:016x}.bin", target.name(), fnv(&input));
            let path = regressions.map_or_else(|| PathBuf::from(&name), |d| d.join(&name));
            if let Some(d) = regressions {
                fs::create_dir_all(d)?;
                fs::write(&path, &input)?;
            }
            report.findings.push((path, outcome));
        }
    }
    Ok(report)
}

/// FNV-1a, to name a finding by its bytes.
pub(crate) fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
