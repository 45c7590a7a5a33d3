//! `macroscope import`: a GFXReconstruct capture (`.gfxr`) into a macroscope trace; and
//! the on-the-fly import that lets `info`, `dump`, `replay` and `shaders` read a `.gfxr`
//! file directly (recognised by its header, not its name).

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use trace_format::gfxr::{self, ImportStats};

/// Arguments of `macroscope import`.
#[derive(Parser)]
pub struct Args {
    /// The GFXReconstruct capture.
    file: PathBuf,
    /// The trace to write (default: the capture's name with `.mscope`).
    #[arg(short, long)]
    output: Option<PathBuf>,
}

/// Runs `macroscope import`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.file.with_extension("mscope"));
    let started = std::time::Instant::now();
    let stats = convert(&args.file, &output)?;
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "imported {} ({}, format {}.{}, {} compression)",
        args.file.display(),
        size(stats.bytes_read),
        stats.header.map_or(0, |h| h.major),
        stats.header.map_or(0, |h| h.minor),
        stats
            .header
            .map_or("no".into(), |h| h.compression.to_string()),
    );
    println!(
        "trace: {} · {} records · {} frames · {} calls · {} memory fills · {seconds:.2} s",
        output.display(),
        stats.records,
        stats.frames,
        stats.calls,
        stats.memory_fills,
    );
    note_unrecorded(&stats);
    Ok(())
}

fn size(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// What the import left out, a line per reason (none when nothing was).
fn note_unrecorded(stats: &ImportStats) {
    let lines = [
        (
            "not recorded (as the capture layer leaves them out)",
            listed(stats.not_recorded.iter()),
        ),
        (
            "passed over (a type this build does not decode)",
            listed(stats.undecoded.iter()),
        ),
        (
            "calls of ids this build does not know",
            listed(
                stats
                    .unknown_calls
                    .iter()
                    .map(|(id, n)| (format!("{id:#x}"), n)),
            ),
        ),
    ];
    for (why, names) in lines {
        if !names.is_empty() {
            println!("{why}: {names}");
        }
    }
}

/// `name ×count` for each entry, comma-separated.
fn listed<N: std::fmt::Display>(
    entries: impl Iterator<Item = (N, impl std::fmt::Display)>,
) -> String {
    entries
        .map(|(name, n)| format!("{name} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Imports `input` into `output`, with a progress bar on a terminal. On a damaged file
/// the trace keeps what was converted and the error names the block.
fn convert(input: &Path, output: &Path) -> anyhow::Result<ImportStats> {
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template(
                "importing {bar:40} {bytes}/{total_bytes} {bytes_per_sec}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });
    let result = gfxr::import(input, output, |done, total| {
        if let Some(bar) = &bar {
            bar.set_length(total);
            bar.set_position(done);
        }
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    result.map_err(|failed| {
        let (error, stats) = *failed;
        // A trace is written once the file's header has been read.
        let context = match stats.header {
            Some(_) => format!(
                "importing {}: {} records before the damage are in {}",
                input.display(),
                stats.records,
                output.display()
            ),
            None => format!("importing {}", input.display()),
        };
        anyhow::Error::new(error).context(context)
    })
}

/// A file a reading command can open: the file itself, or for a GFXReconstruct capture
/// a trace imported into a temporary directory that lives as long as this value.
pub struct Readable {
    /// The trace to read.
    pub path: PathBuf,
    _dir: Option<tempfile::TempDir>,
}

/// `path` as a trace: imported first when it is a GFXReconstruct capture.
pub fn readable(path: &Path) -> anyhow::Result<Readable> {
    if !gfxr::is_gfxr(path) {
        return Ok(Readable {
            path: path.to_path_buf(),
            _dir: None,
        });
    }
    let dir = tempfile::tempdir().context("a temporary directory for the imported trace")?;
    let name = path
        .file_stem()
        .map_or_else(|| "imported".into(), |s| s.to_os_string());
    let trace = dir.path().join(name).with_extension("mscope");
    let stats = convert(path, &trace)?;
    eprintln!(
        "macroscope: {} is a GFXReconstruct capture: read through an import ({} records, {} frames)",
        path.display(),
        stats.records,
        stats.frames
    );
    Ok(Readable {
        path: trace,
        _dir: Some(dir),
    })
}
