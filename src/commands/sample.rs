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
    /// View mask of the render pass (0 for no multiview), in decimal, binary or hex:
    /// 15, 0b1111 and 0xf are the same four views.
    #[arg(long, default_value = "0", value_parser = parse_view_mask)]
    view_mask: u32,
}

/// A view mask written as a 32-bit number in decimal, binary (`0b`) or hex (`0x`).
fn parse_view_mask(text: &str) -> Result<u32, String> {
    let (digits, radix) = match text.get(..2) {
        Some("0b" | "0B") => (&text[2..], 2),
        Some("0x" | "0X") => (&text[2..], 16),
        _ => (text, 10),
    };
    u32::from_str_radix(digits, radix)
        .map_err(|e| format!("{e}: a view mask is a 32-bit number, such as 15, 0b1111 or 0xf"))
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

#[cfg(test)]
mod tests {
    use super::parse_view_mask;

    #[test]
    fn a_view_mask_reads_in_decimal_binary_and_hex() {
        for text in ["15", "0b1111", "0B1111", "0xf", "0XF"] {
            assert_eq!(parse_view_mask(text), Ok(15), "{text}");
        }
        assert_eq!(parse_view_mask("0b10110001"), Ok(0xb1));
        assert_eq!(parse_view_mask("0"), Ok(0));
        for text in ["0b", "0b102", "0xg", "-1", "0x100000000", ""] {
            assert!(parse_view_mask(text).is_err(), "{text}");
        }
    }
}
