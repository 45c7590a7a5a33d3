//! `macroscope sample`: writes the synthetic trace of `trace_format::synthetic`.

use std::path::PathBuf;

use anyhow::Context;
use trace_format::synthetic::{write_synthetic, SyntheticShape};
use trace_format::{TraceWriter, WriterOptions};

/// Arguments of `macroscope sample`.
#[derive(clap::Args)]
pub struct Args {
    /// Where to write the trace.
    #[arg(short, long, default_value = "sample.mscope")]
    output: PathBuf,
    /// Frames to write.
    #[arg(long, default_value_t = 3)]
    frames: u64,
    /// Draws per frame.
    #[arg(long, default_value_t = 2000)]
    draws: u32,
    /// View mask of the render pass (0 for no multiview), e.g. 0b1111 as 15.
    #[arg(long, default_value_t = 0)]
    view_mask: u32,
}

/// Writes the trace and says where it went.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let writer = TraceWriter::create(&args.output, &WriterOptions::default())?;
    let shape = SyntheticShape {
        frames: args.frames,
        draws_per_frame: args.draws,
        view_mask: args.view_mask,
    };
    let stats = write_synthetic(writer, &shape)
        .with_context(|| format!("writing {}", args.output.display()))?;
    println!(
        "wrote {}: {} frames, {} records in {} chunks, {} bytes",
        args.output.display(),
        args.frames,
        stats.records,
        stats.chunks,
        stats.file_bytes
    );
    Ok(())
}
