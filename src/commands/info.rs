//! `macroscope info`: what a trace or results file holds.
//!
//! It reads every chunk (so every checksum and flatbuffer is verified), prints what it
//! found, and on a torn or corrupt chunk prints the summary of the good part before the
//! error, which names the byte offset.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::PathBuf;

use trace_format::generated::results::MmeArch;
use trace_format::generated::trace::Call;
use trace_format::names::{self, RecordClass};
use trace_format::{ErrorKind, ReadOptions, ResultsReader, TraceReader};

/// Arguments of `macroscope info`.
#[derive(clap::Args)]
pub struct Args {
    /// A trace (.mscope) or results (.msr) file.
    pub(crate) file: PathBuf,
}

/// Prints the summary.
pub fn run(args: &Args) -> anyhow::Result<()> {
    match TraceReader::open_with(&args.file, &ReadOptions::parallel()) {
        Ok(reader) => trace_info(reader),
        Err(e) if matches!(e.kind(), ErrorKind::WrongContent { .. }) => results_info(
            ResultsReader::open_with(&args.file, &ReadOptions::parallel())?,
        ),
        Err(e) => Err(e.into()),
    }
}

#[derive(Default)]
struct Totals {
    chunks: u64,
    records: u64,
    compressed: u64,
    uncompressed: u64,
    /// Frame boundaries: the frames the program rendered.
    frames: u64,
    /// Records before the first submit.
    setup: u64,
    /// Records after the last frame boundary.
    after_last_frame: u64,
    submitted: bool,
}

fn trace_info(mut reader: TraceReader) -> anyhow::Result<()> {
    let container = reader.container();
    let path = container.path().to_path_buf();
    let file_len = container.file_len();
    let footer = container.index().map(<[_]>::len);
    let version = container.header().version;
    let mut totals = Totals::default();
    let mut per_name: BTreeMap<(RecordClass, String), u64> = BTreeMap::new();
    let mut failure = None;
    for chunk in &mut reader {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        let header = chunk.header();
        totals.chunks += 1;
        totals.records += u64::from(header.record_count);
        totals.compressed += u64::from(header.compressed_len);
        totals.uncompressed += u64::from(header.uncompressed_len);
        for record in chunk.records() {
            let call = record.call_type();
            let (name, class) = names::record_name(&record);
            match per_name.get_mut(&(class, name.to_string())) {
                Some(count) => *count += 1,
                None => {
                    per_name.insert((class, name.into_owned()), 1);
                }
            }
            totals.submitted |= call == Call::QueueSubmit;
            if !totals.submitted {
                totals.setup += 1;
            }
            if call == Call::FrameBoundary {
                totals.frames += 1;
                totals.after_last_frame = 0;
            } else {
                totals.after_last_frame += 1;
            }
        }
    }

    let mut out = io::stdout().lock();
    writeln!(out, "file:        {}", path.display())?;
    writeln!(out, "format:      macroscope trace, version {version}")?;
    writeln!(out, "size:        {file_len} bytes")?;
    match footer {
        Some(entries) => writeln!(out, "index:       footer with {entries} chunk entries")?,
        None => writeln!(
            out,
            "index:       none (capture did not finish); chunks scanned"
        )?,
    }
    writeln!(out, "chunks:      {}", totals.chunks)?;
    // A finished capture's calls after the last frame are its teardown; a capture cut
    // off (no footer) was inside a frame it never finished.
    let cut_off = footer.is_none() || failure.is_some();
    if cut_off && totals.after_last_frame > 0 {
        writeln!(
            out,
            "frames:      {} complete, 1 partial (cut off after {} records)",
            totals.frames, totals.after_last_frame
        )?;
    } else {
        writeln!(out, "frames:      {}", totals.frames)?;
    }
    writeln!(
        out,
        "setup:       {} records before the first submit",
        totals.setup
    )?;
    if !cut_off && totals.frames > 0 {
        writeln!(
            out,
            "teardown:    {} records after the last frame",
            totals.after_last_frame
        )?;
    }
    writeln!(out, "records:     {}", totals.records)?;
    let ratio = if totals.compressed == 0 {
        0.0
    } else {
        totals.uncompressed as f64 / totals.compressed as f64
    };
    writeln!(
        out,
        "payload:     {} bytes uncompressed, {} compressed (ratio {ratio:.2}:1)",
        totals.uncompressed, totals.compressed
    )?;
    let width = per_name
        .keys()
        .map(|(_, name)| name.len())
        .max()
        .unwrap_or(0);
    for (class, title) in [
        (RecordClass::Command, "commands:"),
        (RecordClass::Other, "other records:"),
    ] {
        let mut rows: Vec<(&str, u64)> = per_name
            .iter()
            .filter(|((c, _), _)| *c == class)
            .map(|((_, name), count)| (name.as_str(), *count))
            .collect();
        if rows.is_empty() {
            continue;
        }
        rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        writeln!(out, "{title}")?;
        for (name, count) in rows {
            writeln!(out, "  {name:<width$} {count:>10}")?;
        }
    }
    out.flush()?;
    match failure {
        Some(e) => Err(anyhow::Error::new(e)
            .context("the trace is damaged; the summary above covers what precedes the damage")),
        None => Ok(()),
    }
}

fn results_info(mut reader: ResultsReader) -> anyhow::Result<()> {
    let container = reader.container();
    let path = container.path().to_path_buf();
    let file_len = container.file_len();
    let (mut draws, mut submits, mut chunks) = (0u64, 0u64, 0u64);
    let mut run = None;
    let mut totals = None;
    let mut skipped = Vec::new();
    let mut failure = None;
    for chunk in &mut reader {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        chunks += 1;
        let batch = chunk.batch();
        draws += batch.draws().map_or(0, |d| d.len()) as u64;
        submits += batch.submits().map_or(0, |s| s.len()) as u64;
        if let Some(info) = batch.run() {
            run = Some(info.unpack());
        }
        skipped.extend(chunk.skipped_calls());
        totals = chunk.totals().or(totals);
    }
    let mut out = io::stdout().lock();
    writeln!(out, "file:        {}", path.display())?;
    writeln!(
        out,
        "format:      macroscope results, version {}",
        reader.container().header().version
    )?;
    writeln!(out, "size:        {file_len} bytes")?;
    writeln!(out, "chunks:      {chunks}")?;
    if let Some(run) = run {
        let arch = match run.mme_arch {
            MmeArch::Turing => "turing",
            MmeArch::Fermi => "fermi",
            _ => "unknown",
        };
        writeln!(out, "tool:        {}", run.tool_version.unwrap_or_default())?;
        writeln!(
            out,
            "trace:       {} ({})",
            run.trace_path.unwrap_or_default(),
            run.trace_hash.unwrap_or_default()
        )?;
        writeln!(out, "mme:         {arch}")?;
        if let Some(gpu) = run.gpu {
            writeln!(out, "gpu:         {gpu}")?;
        }
        if let Some(nvk) = run.nvk {
            writeln!(out, "nvk:         {nvk} (the release the model followed)")?;
        }
        writeln!(out, "repetitions: {}", run.repetitions)?;
    }
    if let Some(totals) = &totals {
        writeln!(out, "frames:      {}", totals.frames)?;
        writeln!(
            out,
            "executed:    {} of {} recorded vkCmd* calls ({:.1}%)",
            totals.executed_commands,
            totals.recorded_commands,
            share(totals.executed_commands, totals.recorded_commands)
        )?;
    }
    writeln!(out, "draw rows:   {draws}")?;
    writeln!(out, "submit rows: {submits}")?;
    skipped.sort_by(|a, b| b.count.cmp(&a.count).then(a.name.cmp(&b.name)));
    if !skipped.is_empty() {
        writeln!(out, "skipped calls:")?;
    }
    let width = skipped.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for call in skipped {
        let why = if call.needed {
            "not modelled"
        } else {
            "not needed"
        };
        writeln!(out, "  {:<width$} {:>10}  {why}", call.name, call.count)?;
    }
    out.flush()?;
    match failure {
        Some(e) => Err(anyhow::Error::new(e).context(
            "the results file is damaged; the summary above covers what precedes the damage",
        )),
        None => Ok(()),
    }
}

/// `part` as a percentage of `whole`; 100 when there is nothing to cover.
pub fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        100.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}
