//! A mutation campaign through the `macroscope` command line: valid files (traces,
//! GFXReconstruct captures, results) mutated — in their raw bytes, or inside one
//! chunk's decompressed payload with the chunk sealed again (checksum right), so that
//! the damage reaches the flatbuffers verifier and what reads past it — and each run
//! through one reading command in a child process under an address-space limit and a
//! time limit, as a user's shell would run it.
//!
//! What [`fuzz`](crate::fuzz) catches in-process (a panic, an allocation past the
//! bound) this catches as the user meets it: a panic's exit status, an abort
//! (`memory allocation of … failed`), a signal, a hang. Findings are saved as
//! `<command>-<hash>.<ext>` under a regressions folder; [`Command::from_file_name`]
//! reads the command back, so the test suite runs each one again.

use std::fs;
use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use trace_format::container::{ChunkMeta, ContainerReader, ContainerWriter, WriterOptions};
use trace_format::wire::{CHUNK_ENDS_FRAME, CHUNK_STORED_RECORDS};
use trace_format::Content;

use crate::fuzz::{fnv, mutate, Rng};

/// The address space a command may take (`ulimit -v`).
pub const ADDRESS_SPACE_LIMIT: u64 = 2 << 30;
/// The time a command of a release build may take.
pub const TIME_LIMIT: Duration = Duration::from_secs(10);

/// What kind of file a command reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A trace (`.mscope`).
    Trace,
    /// A GFXReconstruct capture (`.gfxr`).
    Gfxr,
    /// A results file (`.msr`).
    Results,
}

impl FileKind {
    /// Its file extension.
    pub fn extension(self) -> &'static str {
        match self {
            FileKind::Trace => "mscope",
            FileKind::Gfxr => "gfxr",
            FileKind::Results => "msr",
        }
    }

    /// The container content, for the kinds our container holds.
    fn content(self) -> Option<Content> {
        match self {
            FileKind::Trace => Some(Content::Trace),
            FileKind::Results => Some(Content::Results),
            FileKind::Gfxr => None,
        }
    }
}

/// A reading command of `macroscope`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// `info FILE`.
    Info,
    /// `dump FILE`.
    Dump,
    /// `dump --json FILE`.
    DumpJson,
    /// `replay FILE --mme turing`.
    ReplayTuring,
    /// `replay FILE --mme fermi`.
    ReplayFermi,
    /// `shaders FILE`.
    Shaders,
    /// `import FILE.gfxr`.
    Import,
    /// `report FILE`.
    Report,
    /// `export FILE --format csv`.
    ExportCsv,
    /// `export FILE --format json`.
    ExportJson,
    /// `export FILE --format perfetto`.
    ExportPerfetto,
    /// `export FILE --format counts`.
    ExportCounts,
    /// `compare BASE FILE`, the mutated file as the new side.
    CompareNew,
    /// `compare FILE BASE`, the mutated file as the baseline.
    CompareBase,
}

impl Command {
    /// Every command.
    pub const ALL: [Command; 14] = [
        Command::Info,
        Command::Dump,
        Command::DumpJson,
        Command::ReplayTuring,
        Command::ReplayFermi,
        Command::Shaders,
        Command::Import,
        Command::Report,
        Command::ExportCsv,
        Command::ExportJson,
        Command::ExportPerfetto,
        Command::ExportCounts,
        Command::CompareNew,
        Command::CompareBase,
    ];

    /// Its name in reports and finding files.
    pub fn name(self) -> &'static str {
        match self {
            Command::Info => "info",
            Command::Dump => "dump",
            Command::DumpJson => "dump-json",
            Command::ReplayTuring => "replay-turing",
            Command::ReplayFermi => "replay-fermi",
            Command::Shaders => "shaders",
            Command::Import => "import",
            Command::Report => "report",
            Command::ExportCsv => "export-csv",
            Command::ExportJson => "export-json",
            Command::ExportPerfetto => "export-perfetto",
            Command::ExportCounts => "export-counts",
            Command::CompareNew => "compare-new",
            Command::CompareBase => "compare-base",
        }
    }

    /// Whether it reads files of `kind`.
    pub fn reads(self, kind: FileKind) -> bool {
        match self {
            Command::Info | Command::Dump | Command::DumpJson => kind != FileKind::Results,
            Command::ReplayTuring | Command::ReplayFermi | Command::Shaders => {
                kind != FileKind::Results
            }
            Command::Import => kind == FileKind::Gfxr,
            _ => kind == FileKind::Results,
        }
    }

    /// The command a finding's file name (`<command>-<anything>.<ext>`) names: the
    /// longest command name it starts with.
    pub fn from_file_name(name: &str) -> Option<Command> {
        Command::ALL
            .into_iter()
            .filter(|c| {
                name.strip_prefix(c.name())
                    .is_some_and(|rest| rest.starts_with('-'))
            })
            .max_by_key(|c| c.name().len())
    }

    /// Its arguments for `file`; `out` is a scratch path for what it writes, `base` a
    /// valid results file for `compare`.
    pub fn args(self, file: &Path, out: &Path, base: &Path) -> Vec<String> {
        let f = file.display().to_string();
        let o = out.display().to_string();
        let b = base.display().to_string();
        let words: Vec<&str> = match self {
            Command::Info => vec!["info", &f],
            Command::Dump => vec!["dump", &f],
            Command::DumpJson => vec!["dump", "--json", &f],
            Command::ReplayTuring => vec!["replay", &f, "-o", &o, "--mme", "turing"],
            Command::ReplayFermi => vec!["replay", &f, "-o", &o, "--mme", "fermi"],
            Command::Shaders => vec!["shaders", &f],
            Command::Import => vec!["import", &f, "-o", &o],
            Command::Report => vec!["report", &f],
            Command::ExportCsv => vec!["export", &f, "--format", "csv", "-o", &o],
            Command::ExportJson => vec!["export", &f, "--format", "json", "-o", &o],
            Command::ExportPerfetto => vec!["export", &f, "--format", "perfetto", "-o", &o],
            Command::ExportCounts => vec!["export", &f, "--format", "counts", "-o", &o],
            Command::CompareNew => vec!["compare", &b, &f],
            Command::CompareBase => vec!["compare", &f, &b],
        };
        words.into_iter().map(str::to_string).collect()
    }
}

/// How one command ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// An exit status the command documents (0, 1, 2, or `compare`'s 125).
    Fine,
    /// A panic (exit status 101), with the last line of what it printed.
    Panicked(String),
    /// Killed by a signal (an abort for memory, a crash), with its number and the last
    /// line printed.
    Signalled(i32, String),
    /// Still running at its time limit.
    Hung,
    /// Another exit status.
    Exited(i32, String),
}

/// Runs `macroscope` with `args` under [`ADDRESS_SPACE_LIMIT`], killed past
/// `time_limit`.
pub fn run_limited(
    macroscope: &Path,
    args: &[String],
    time_limit: Duration,
) -> std::io::Result<Ending> {
    let mut command = std::process::Command::new(macroscope);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .env("RUST_BACKTRACE", "0");
    // SAFETY: setrlimit is async-signal-safe; the closure touches nothing else.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: ADDRESS_SPACE_LIMIT,
                rlim_max: ADDRESS_SPACE_LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn()?;
    let stderr = child.stderr.take();
    // The pipe is read on its own thread, so that a command printing much never
    // blocks on it.
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        if let Some(mut s) = stderr {
            let _ = s.by_ref().take(1 << 20).read_to_end(&mut text);
            let _ = std::io::copy(&mut s, &mut std::io::sink());
        }
        String::from_utf8_lossy(&text).into_owned()
    });
    let status = wait_until(&mut child, Instant::now() + time_limit)?;
    let text = reader.join().unwrap_or_default();
    let last = text.lines().rev().find(|l| !l.trim().is_empty());
    let last = last.unwrap_or("").chars().take(300).collect::<String>();
    Ok(match status {
        None => Ending::Hung,
        Some(s) => match (s.code(), s.signal()) {
            _ if text.contains("panicked at") => {
                let line = text
                    .lines()
                    .find(|l| l.contains("panicked at"))
                    .map_or(last.clone(), |l| l.chars().take(300).collect());
                Ending::Panicked(line)
            }
            (Some(0 | 1 | 2 | 125), _) => Ending::Fine,
            (Some(code), _) => Ending::Exited(code, last),
            (None, Some(signal)) => Ending::Signalled(signal, last),
            (None, None) => Ending::Exited(-1, last),
        },
    })
}

/// Waits for `child` until `deadline`; kills it then and returns `None`.
fn wait_until(
    child: &mut Child,
    deadline: Instant,
) -> std::io::Result<Option<std::process::ExitStatus>> {
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// A valid file to mutate: its bytes and, for our container, its chunks decompressed.
pub struct Seed {
    /// Its name, for reports.
    pub name: String,
    /// What it is.
    pub kind: FileKind,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Each chunk's meta and decompressed payload (empty for GFXReconstruct files).
    chunks: Vec<(ChunkMeta, Vec<u8>)>,
    /// Frames its footer names.
    frames: u64,
}

impl Seed {
    /// Reads a seed file; its kind from its extension.
    pub fn read(path: &Path) -> anyhow::Result<Seed> {
        let kind = match path.extension().and_then(|e| e.to_str()) {
            Some("mscope") => FileKind::Trace,
            Some("gfxr") => FileKind::Gfxr,
            Some("msr") => FileKind::Results,
            _ => anyhow::bail!("{}: not a .mscope, .gfxr or .msr file", path.display()),
        };
        let mut chunks = Vec::new();
        let mut frames = 0;
        if let Some(content) = kind.content() {
            let mut reader = ContainerReader::open(path, content)?;
            frames = reader.footer_frame_count().unwrap_or(0);
            while let Some(chunk) = reader.next_chunk() {
                let mut chunk = chunk?;
                let meta = ChunkMeta {
                    record_count: chunk.header.record_count,
                    first_seq: chunk.header.first_seq,
                    first_frame: chunk.header.first_frame,
                    ends_frame: chunk.header.flags & CHUNK_ENDS_FRAME != 0,
                    stored_records: chunk.header.flags & CHUNK_STORED_RECORDS != 0,
                };
                chunks.push((meta, std::mem::take(&mut chunk.payload)));
            }
        }
        Ok(Seed {
            name: path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            kind,
            bytes: fs::read(path)?,
            chunks,
            frames,
        })
    }

    /// A mutated copy written to `file`: raw bytes, or (three times in four, for our
    /// container, whose checksums stop most raw damage at the first chunk) one chunk's
    /// payload mutated and the file sealed again.
    fn write_mutant(&self, other: &Seed, rng: &mut Rng, file: &Path) -> anyhow::Result<()> {
        if self.chunks.is_empty() || rng.below(4) == 0 {
            fs::write(file, mutate(&self.bytes, &other.bytes, rng))?;
            return Ok(());
        }
        let content = self.kind.content().unwrap_or(Content::Trace);
        let target = rng.below(self.chunks.len());
        let splice_from = other
            .chunks
            .get(rng.below(other.chunks.len()))
            .map_or(&[][..], |c| c.1.as_slice());
        let mut writer = ContainerWriter::create(file, content, &WriterOptions::default())?;
        for (i, (meta, payload)) in self.chunks.iter().enumerate() {
            let payload = if i == target {
                mutate(payload, splice_from, rng)
            } else {
                payload.clone()
            };
            writer.write_chunk(payload, 0, *meta)?;
        }
        writer.finish(self.frames)?;
        Ok(())
    }
}

/// One finding.
#[derive(Clone, Debug)]
pub struct Finding {
    /// Where the input was saved (or would be).
    pub path: PathBuf,
    /// The command.
    pub command: Command,
    /// How it ended.
    pub ending: Ending,
}

/// What a campaign did.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Inputs run, per command (in [`Command::ALL`]'s order).
    pub per_command: [u64; Command::ALL.len()],
    /// Findings.
    pub findings: Vec<Finding>,
    /// Why a worker stopped before its share (a command that could not be started, a
    /// scratch file that could not be written): no finding, but the run is short.
    pub stopped: Vec<String>,
    /// Time taken.
    pub elapsed: Duration,
}

impl Tally {
    /// Inputs run in all.
    pub fn inputs(&self) -> u64 {
        self.per_command.iter().sum()
    }
}

/// A campaign's settings.
pub struct Campaign<'a> {
    /// The `macroscope` binary.
    pub macroscope: &'a Path,
    /// Valid files to mutate.
    pub seeds: &'a [Seed],
    /// A valid results file, the other side of `compare`.
    pub base_results: &'a Path,
    /// Inputs in all.
    pub inputs: u64,
    /// Worker threads (each runs one command at a time).
    pub jobs: usize,
    /// The first random seed.
    pub seed: u64,
    /// Where findings are saved, when given.
    pub regressions: Option<&'a Path>,
    /// Scratch files go here.
    pub scratch: &'a Path,
    /// The time one command may take ([`TIME_LIMIT`] for a release build).
    pub time_limit: Duration,
}

impl Campaign<'_> {
    /// Runs the campaign; `progress` is called after each input with the inputs done.
    /// A worker that cannot go on stops, saying why in [`Tally::stopped`]; the others
    /// finish their shares.
    pub fn run(&self, progress: &(dyn Fn(u64) + Sync)) -> Tally {
        let start = Instant::now();
        let done = std::sync::atomic::AtomicU64::new(0);
        let jobs = self.jobs.max(1);
        let tallies = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..jobs)
                .map(|w| {
                    let done = &done;
                    scope.spawn(move || self.worker(w, jobs, done, progress))
                })
                .collect();
            workers
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| Tally {
                        stopped: vec!["a worker panicked".into()],
                        ..Tally::default()
                    })
                })
                .collect::<Vec<Tally>>()
        });
        let mut tally = Tally::default();
        for t in tallies {
            for (sum, n) in tally.per_command.iter_mut().zip(t.per_command) {
                *sum += n;
            }
            tally.findings.extend(t.findings);
            tally.stopped.extend(t.stopped);
        }
        tally.elapsed = start.elapsed();
        tally
    }

    fn worker(
        &self,
        index: usize,
        jobs: usize,
        done: &std::sync::atomic::AtomicU64,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Tally {
        let mut tally = Tally::default();
        if let Err(e) = self.work(index, jobs, done, progress, &mut tally) {
            tally.stopped.push(format!("worker {index}: {e:#}"));
        }
        tally
    }

    /// A worker's inputs, counted into `tally` as they go.
    fn work(
        &self,
        index: usize,
        jobs: usize,
        done: &std::sync::atomic::AtomicU64,
        progress: &(dyn Fn(u64) + Sync),
        tally: &mut Tally,
    ) -> anyhow::Result<()> {
        let dir = self.scratch.join(format!("worker-{index}"));
        fs::create_dir_all(&dir)?;
        let mut rng = Rng::new(self.seed.wrapping_add(index as u64));
        let share =
            self.inputs / jobs as u64 + u64::from((index as u64) < self.inputs % jobs as u64);
        for _ in 0..share {
            let seed = &self.seeds[rng.below(self.seeds.len())];
            let other = &self.seeds[rng.below(self.seeds.len())];
            let commands: Vec<Command> = Command::ALL
                .into_iter()
                .filter(|c| c.reads(seed.kind))
                .collect();
            let command = commands[rng.below(commands.len())];
            let input = dir.join(format!("input.{}", seed.kind.extension()));
            seed.write_mutant(other, &mut rng, &input)?;
            let out = dir.join("out");
            let _ = fs::remove_file(&out);
            let args = command.args(&input, &out, self.base_results);
            let ending = run_limited(self.macroscope, &args, self.time_limit)?;
            if let Some(slot) = Command::ALL.iter().position(|c| *c == command) {
                tally.per_command[slot] += 1;
            }
            if ending != Ending::Fine {
                let bytes = fs::read(&input)?;
                let name = format!(
                    "{}-{:016x}.{}",
                    command.name(),
                    fnv(&bytes),
                    seed.kind.extension()
                );
                let path = self
                    .regressions
                    .map_or_else(|| dir.join(&name), |d| d.join(&name));
                if let Some(d) = self.regressions {
                    fs::create_dir_all(d)?;
                }
                fs::write(&path, &bytes)?;
                tally.findings.push(Finding {
                    path,
                    command,
                    ending,
                });
            }
            progress(done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1);
        }
        Ok(())
    }
}

/// Runs a saved finding (`<command>-<hash>.<ext>`) again through its command, within
/// `time_limit`.
pub fn rerun(
    macroscope: &Path,
    finding: &Path,
    base_results: &Path,
    scratch: &Path,
    time_limit: Duration,
) -> anyhow::Result<Ending> {
    let name = finding
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let command = Command::from_file_name(&name)
        .ok_or_else(|| anyhow::anyhow!("{name}: names no command"))?;
    // Commands read the file where it is; a copy keeps what they write beside it
    // (`replay` of a .gfxr) out of the repository.
    let copy = scratch.join(&name);
    fs::copy(finding, &copy)?;
    let out = scratch.join("out");
    Ok(run_limited(
        macroscope,
        &command.args(&copy, &out, base_results),
        time_limit,
    )?)
}
