//! `macroscope info`: what a trace or results file holds.
//!
//! It reads every chunk (so every checksum and flatbuffer is verified), prints what it
//! found, and on a torn or corrupt chunk prints the summary of the good part before the
//! error, which names the byte offset.

use std::io::{self, Write};
use std::path::PathBuf;

use trace_format::generated::results::MmeArch;
use trace_format::generated::trace::Call;
use trace_format::{ErrorKind, ReadOptions, ResultsReader, TraceReader};

/// Arguments of `macroscope info`.
#[derive(clap::Args)]
pub struct Args {
    /// A trace (.mscope) or results (.msr) file.
    file: PathBuf,
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
    frames_done: u64,
    last_frame: Option<u64>,
}

fn trace_info(mut reader: TraceReader) -> anyhow::Result<()> {
    let container = reader.container();
    let path = container.path().to_path_buf();
    let file_len = container.file_len();
    let footer = container.index().map(<[_]>::len);
    let version = container.header().version;
    let mut totals = Totals::default();
    let mut per_call: std::collections::BTreeMap<String, u64> = Default::default();
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
        totals.last_frame = Some(header.first_frame);
        for record in chunk.records() {
            let call = record.call_type();
            *per_call.entry(record_name(&record)).or_default() += 1;
            if call == Call::FrameBoundary {
                totals.frames_done += 1;
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
    let partial = totals.last_frame.is_some_and(|f| f >= totals.frames_done);
    writeln!(
        out,
        "frames:      {}{}",
        totals.frames_done,
        if partial { " complete, 1 partial" } else { "" }
    )?;
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
    writeln!(out, "calls:")?;
    let mut calls: Vec<(String, u64)> = per_call.into_iter().collect();
    calls.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    for (call, count) in calls {
        writeln!(out, "  {call:<36} {count:>10}")?;
    }
    out.flush()?;
    match failure {
        Some(e) => Err(anyhow::Error::new(e)
            .context("the trace is damaged; the summary above covers what precedes the damage")),
        None => Ok(()),
    }
}

/// A record's name: its call's, or for a call recorded generically the Vulkan
/// command's (`vkCmdSetViewport`).
pub fn record_name(record: &trace_format::generated::trace::Record<'_>) -> String {
    match record.call_as_vulkan_call().and_then(|c| c.command()) {
        Some(command) => command.to_string(),
        None => call_name(record.call_type()),
    }
}

/// The call's name, or a note that this build does not know it.
pub fn call_name(call: Call) -> String {
    match call.variant_name() {
        Some(name) => name.to_string(),
        None => format!("<unknown call type {}>", call.0),
    }
}

fn results_info(mut reader: ResultsReader) -> anyhow::Result<()> {
    let container = reader.container();
    let path = container.path().to_path_buf();
    let file_len = container.file_len();
    let (mut draws, mut submits, mut chunks) = (0u64, 0u64, 0u64);
    let mut run = None;
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
        writeln!(out, "repetitions: {}", run.repetitions)?;
    }
    writeln!(out, "draw rows:   {draws}")?;
    writeln!(out, "submit rows: {submits}")?;
    for call in skipped {
        let why = if call.needed {
            "not modelled"
        } else {
            "not needed"
        };
        writeln!(
            out,
            "  skipped {:<28} {:>10} ({why})",
            call.name, call.count
        )?;
    }
    out.flush()?;
    match failure {
        Some(e) => Err(anyhow::Error::new(e).context(
            "the results file is damaged; the summary above covers what precedes the damage",
        )),
        None => Ok(()),
    }
}
