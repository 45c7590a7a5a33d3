//! `macroscope ci TRACES.toml`: replays every trace a list names on every GPU it names,
//! in parallel (each replay serial and deterministic), and holds each replay's costs
//! against the list's expectations; `--device` also replays each trace on this
//! machine's Vulkan device and holds its frames against their expected checksums.
//!
//! Exit status: 0 every check as expected (or changed as the list allows), 1 a cost or
//! checksum changed or has no expectation, 2 bad input (the list, a trace, a GPU name).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use analyzer::ci::{self, CheckResult, Entry, TraceList, Verdict};
use driver::chipset::Chipset;
use replayer::ReplayOptions;
use trace_format::ReadOptions;

use super::BadInput;

/// The rows that moved a check lists, at most.
const MOVED_ROWS_SHOWN: usize = 20;

/// Arguments of `macroscope ci`.
#[derive(clap::Args)]
pub struct Args {
    /// The trace list (TOML): each `[[trace]]` a path or glob, the GPUs to replay it on,
    /// and what each replay is expected to cost.
    list: PathBuf,
    /// Replays at once (default: one per core).
    #[arg(long, short)]
    jobs: Option<usize>,
    /// Check only shard I of N (`2/4`), a stable share of the traces by their paths,
    /// for CI systems that split a corpus across machines.
    #[arg(long, value_parser = parse_shard)]
    shard: Option<(u32, u32)>,
    /// Check only the traces whose path in the list matches this glob (`*` any run of
    /// characters, `?` one): with --update, rewrite only theirs.
    #[arg(long, value_name = "GLOB")]
    only: Option<String>,
    /// Rewrite the expectations (and counts files) of every check that changed or has
    /// none, from this run: review the diff, then commit it.
    #[arg(long)]
    update: bool,
    /// Also replay each trace on this machine's Vulkan device and check its frames'
    /// checksums against the list's for that device.
    #[arg(long)]
    device: bool,
    /// Also write the Markdown summary here.
    #[arg(long)]
    summary: Option<PathBuf>,
    /// Write a JUnit XML report here (GitLab's `artifacts:reports:junit`, Jenkins,
    /// GitHub test reporters).
    #[arg(long)]
    junit: Option<PathBuf>,
}

fn parse_shard(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("`{s}` is no shard: write I/N, 1 ≤ I ≤ N (`2/4`)");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u32, u32) = (i.parse().map_err(|_| bad())?, n.parse().map_err(|_| bad())?);
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

/// One check to run.
#[derive(Clone, Debug)]
struct Job {
    entry: usize,
    trace: String,
    /// The GPU to replay on; `None`: the device.
    chipset: Option<(String, Chipset)>,
}

/// Runs the checks; returns whether every one came out as expected (or allowed).
pub fn run(args: &Args) -> anyhow::Result<u8> {
    let start = Instant::now();
    let list = TraceList::load(&args.list).map_err(|e| BadInput(e.to_string()))?;
    let jobs = plan(&list, args)?;
    if jobs.is_empty() {
        let which = match (&args.only, args.shard) {
            (Some(g), _) => format!("matches {g}"),
            (None, Some((i, n))) => format!("falls in shard {i}/{n}"),
            (None, None) => "is listed".to_string(),
        };
        return Err(BadInput(format!("{}: no trace {which}", args.list.display())).into());
    }
    let workers = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, jobs.len());
    let scratch = tempfile::tempdir()?;
    let list = Mutex::new(list);
    let results: Mutex<Vec<Option<CheckResult>>> = Mutex::new(vec![None; jobs.len()]);
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let result = check(
                    &list,
                    job,
                    args.update,
                    &scratch.path().join(format!("{i}.msr")),
                );
                eprintln!(
                    "{} on {}: {}",
                    result.trace,
                    result.target,
                    result.verdict.word()
                );
                if let Ok(mut r) = results.lock() {
                    r[i] = Some(result);
                }
            });
        }
    });
    let results: Vec<CheckResult> = results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect();
    let list = list
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a check panicked"))?;
    if args.update && results.iter().any(|r| r.verdict == Verdict::Updated) {
        list.save().map_err(|e| BadInput(e.to_string()))?;
    }
    let wall = start.elapsed().as_secs_f64();
    let title = args.list.display().to_string();
    let md = ci::output::markdown(&title, &results, wall, workers);
    print!("{md}");
    if let Some(path) = &args.summary {
        std::fs::write(path, &md)?;
    }
    if let Some(path) = &args.junit {
        std::fs::write(path, ci::output::junit(&title, &results, wall))?;
    }
    Ok(if results.iter().any(|r| r.verdict == Verdict::Failed) {
        2
    } else if results.iter().any(|r| r.verdict.fails()) {
        1
    } else {
        0
    })
}

/// The checks the list asks for, in list order: each trace of this shard on each of its
/// entry's GPUs, then (with `--device`) on the device.
fn plan(list: &TraceList, args: &Args) -> anyhow::Result<Vec<Job>> {
    let mut jobs = Vec::new();
    for entry in &list.entries {
        let chipsets: Vec<(String, Chipset)> = entry
            .chipsets
            .iter()
            .map(|name| {
                Chipset::parse(name)
                    .map(|c| (name.clone(), c))
                    .map_err(|e| {
                        BadInput(format!(
                            "{}: trace {}: {e}",
                            list.path().display(),
                            entry.index + 1
                        ))
                    })
            })
            .collect::<Result<_, _>>()?;
        for trace in list.traces(entry).map_err(|e| BadInput(e.to_string()))? {
            if args.shard.is_some_and(|s| !ci::in_shard(&trace, s))
                || args
                    .only
                    .as_ref()
                    .is_some_and(|g| !ci::glob::matches(g, &trace))
            {
                continue;
            }
            for c in &chipsets {
                jobs.push(Job {
                    entry: entry.index,
                    trace: trace.clone(),
                    chipset: Some(c.clone()),
                });
            }
            if args.device {
                jobs.push(Job {
                    entry: entry.index,
                    trace: trace.clone(),
                    chipset: None,
                });
            }
        }
    }
    Ok(jobs)
}

/// Runs one check; what went wrong is its result, not an error.
fn check(list: &Mutex<TraceList>, job: &Job, update: bool, scratch: &Path) -> CheckResult {
    let start = Instant::now();
    let mut result = CheckResult {
        trace: job.trace.clone(),
        target: job
            .chipset
            .as_ref()
            .map_or_else(|| "device".to_string(), |(name, _)| name.clone()),
        note: None,
        verdict: Verdict::AsExpected,
        seconds: 0.0,
        changes: Vec::new(),
        moved: Vec::new(),
        moved_count: 0,
        row_counts: None,
        error: None,
    };
    let outcome = lock(list)
        .map(|l| (l.entries[job.entry].clone(), l.resolve(&job.trace)))
        .and_then(|(entry, path)| {
            result.note.clone_from(&entry.note);
            match &job.chipset {
                Some((name, chipset)) => model_check(
                    list,
                    &entry,
                    job,
                    (name, *chipset),
                    &path,
                    scratch,
                    update,
                    &mut result,
                ),
                None => device_check(list, &entry, job, &path, update, &mut result),
            }
        });
    if let Err(e) = outcome {
        result.verdict = Verdict::Failed;
        result.error = Some(format!("{e:#}"));
    }
    result.seconds = start.elapsed().as_secs_f64();
    result
}

/// Replays the trace on the model of one GPU and holds its costs (and rows, where the
/// entry keeps a counts file) against the list.
#[allow(clippy::too_many_arguments)]
fn model_check(
    list: &Mutex<TraceList>,
    entry: &Entry,
    job: &Job,
    (name, chipset): (&str, Chipset),
    path: &Path,
    scratch: &Path,
    update: bool,
    result: &mut CheckResult,
) -> anyhow::Result<()> {
    // A GFXReconstruct capture is imported first.
    let trace = super::import::readable(path)?;
    let options = ReplayOptions {
        chipset,
        frames: entry.frames,
        repeat: 1,
        read: ReadOptions::default(),
        mme_budget: replayer::DEFAULT_MME_BUDGET,
        remember_macro_runs: true,
    };
    replayer::replay(&trace.path, scratch, &options, &mut |_, _| {})?;
    let measured = ci::Measured::of(scratch)?;
    let nvk = driver::nvk::MODELLED_NVK;
    let expected = lock(list)?.expected(job.entry, &job.trace, name)?;
    match &expected {
        None => result.verdict = Verdict::New,
        Some(e) => {
            result.changes = ci::changes(e, &measured, nvk);
            result.verdict = if result.changes.is_empty() {
                Verdict::AsExpected
            } else if result.changes.iter().all(|c| c.allowed.is_some()) {
                Verdict::Allowed
            } else {
                Verdict::Changed
            };
        }
    }
    let mme = chipset.arch().name().to_lowercase();
    let counts_file = lock(list)?.counts_file(entry, &job.trace, name, &mme);
    if let Some(file) = &counts_file {
        let mut text = Vec::new();
        analyzer::counts::export_counts(scratch, &mut text)?;
        let text = String::from_utf8_lossy(&text).into_owned();
        match std::fs::read_to_string(file) {
            Ok(want) => {
                let (moved, count, lengths) = ci::moved_rows(&want, &text, MOVED_ROWS_SHOWN);
                result.moved = moved;
                result.moved_count = count;
                result.row_counts = lengths;
                if (count > 0 || lengths.is_some() || want != text)
                    && result.verdict == Verdict::AsExpected
                {
                    result.verdict = Verdict::Changed;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if result.verdict == Verdict::AsExpected {
                    result.verdict = Verdict::New;
                }
            }
            Err(e) => return Err(anyhow::anyhow!("{}: {e}", file.display())),
        }
        if update && result.verdict != Verdict::AsExpected {
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(file, &text)?;
        }
    }
    if update && result.verdict != Verdict::AsExpected {
        lock(list)?.set_expected(job.entry, &job.trace, name, &measured, nvk);
        result.verdict = Verdict::Updated;
    }
    Ok(())
}

/// Replays the trace on this machine's device and holds its frames' checksums against
/// the list's for that device.
fn device_check(
    list: &Mutex<TraceList>,
    entry: &Entry,
    job: &Job,
    path: &Path,
    update: bool,
    result: &mut CheckResult,
) -> anyhow::Result<()> {
    let trace = super::import::readable(path)?;
    let options = replayer::device::DeviceOptions {
        gpu: None,
        dump_frames: None,
        read_frames: true,
        gpu_timing: false,
        frames: entry.frames,
        loops: 1,
        switch_off_missing: false,
    };
    let summary = replayer::device::replay_on_device(&trace.path, &options, &mut |_, _| {})?;
    result.target = format!("frames on {}", summary.device);
    let got: Vec<u32> = summary.frames.iter().map(|f| f.checksum).collect();
    let want = lock(list)?.checksums(job.entry, &job.trace, &summary.device);
    match want {
        None => result.verdict = Verdict::New,
        Some(want) => {
            for (i, (w, g)) in want.iter().zip(&got).enumerate() {
                if w != g {
                    result.changes.push(ci::Change {
                        what: format!("frame {i} crc32"),
                        expected: format!("{w:08x}"),
                        measured: format!("{g:08x}"),
                        allowed: None,
                    });
                }
            }
            if want.len() != got.len() {
                result.changes.push(ci::Change {
                    what: "frames read back".into(),
                    expected: want.len().to_string(),
                    measured: got.len().to_string(),
                    allowed: None,
                });
            }
            if !result.changes.is_empty() {
                result.verdict = Verdict::Changed;
            }
        }
    }
    if update && result.verdict != Verdict::AsExpected {
        lock(list)?.set_checksums(job.entry, &job.trace, &summary.device, &got);
        result.verdict = Verdict::Updated;
    }
    Ok(())
}

fn lock(list: &Mutex<TraceList>) -> anyhow::Result<std::sync::MutexGuard<'_, TraceList>> {
    list.lock().map_err(|_| anyhow::anyhow!("a check panicked"))
}
