//! A whole GFXReconstruct file into a macroscope trace.

use std::collections::BTreeMap;
use std::path::Path;

use super::convert::Converter;
use super::file::{Block, BlockReader, GfxrError, Header};
use super::params::decode_call;
use super::tables::command;
use crate::generated::trace::CallT;
use crate::trace::{CallMeta, TraceWriter};
use crate::WriterOptions;

/// GFXReconstruct's marker block types, and its begin and end markers.
const FRAME_MARKER: u32 = 1;
const STATE_MARKER: u32 = 2;
const BEGIN_MARKER: u32 = 1;
const END_MARKER: u32 = 2;

/// The latest frame a trimmed capture may start at: the frames before it are written as
/// empty frames, so a hostile frame number must not make the import run for ever.
const MAX_TRIM_START: u64 = 10_000_000;

/// What an import read and wrote.
#[derive(Clone, Debug, Default)]
pub struct ImportStats {
    /// The file header.
    pub header: Option<Header>,
    /// Blocks read.
    pub blocks: u64,
    /// Function calls read.
    pub calls: u64,
    /// Records written.
    pub records: u64,
    /// Frames ended (presents).
    pub frames: u64,
    /// Memory fills converted.
    pub memory_fills: u64,
    /// Bytes of the .gfxr file read.
    pub bytes_read: u64,
    /// Calls the layer would not record (commands it does not capture, failed
    /// creations), by name.
    pub not_recorded: BTreeMap<String, u64>,
    /// Calls with an id this build does not know, by id.
    pub unknown_calls: BTreeMap<u32, u64>,
    /// Calls holding a type this build does not decode, by name, passed over.
    pub undecoded: BTreeMap<String, u64>,
}

/// Why an import stopped: the file's error, with what was converted up to there
/// written as a readable trace.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The .gfxr file is damaged or of a kind this build does not read.
    #[error(transparent)]
    Gfxr(#[from] GfxrError),
    /// Writing the trace failed.
    #[error(transparent)]
    Trace(#[from] crate::Error),
}

impl ImportError {
    /// Whether the input file is at fault (not the machine).
    pub fn is_bad_input(&self) -> bool {
        matches!(self, ImportError::Gfxr(e) if !e.io)
    }
}

/// Converts `input` into the trace `output`, calling `progress` with the bytes read
/// after each block. On a damaged file the trace keeps every record converted before
/// the damage (it is finished and readable) and the error names the block.
pub fn import(
    input: &Path,
    output: &Path,
    mut progress: impl FnMut(u64, u64),
) -> Result<ImportStats, Box<(ImportError, ImportStats)>> {
    let mut stats = ImportStats::default();
    let reader = match BlockReader::open(input) {
        Ok(r) => r,
        Err(e) => return Err(Box::new((e.into(), stats))),
    };
    let total = reader.len();
    stats.header = Some(reader.header());
    let mut writer = match TraceWriter::create(output, &WriterOptions::default()) {
        Ok(w) => w,
        Err(e) => return Err(Box::new((e.into(), stats))),
    };
    let outcome = convert_all(reader, &mut writer, &mut stats, |done| {
        progress(done, total)
    });
    let finished = writer.finish();
    match (outcome, finished) {
        (Err(e), _) => Err(Box::new((e, stats))),
        (Ok(()), Err(e)) => Err(Box::new((e.into(), stats))),
        (Ok(()), Ok(_)) => Ok(stats),
    }
}

fn convert_all(
    reader: BlockReader,
    writer: &mut TraceWriter,
    stats: &mut ImportStats,
    mut progress: impl FnMut(u64),
) -> Result<(), ImportError> {
    let path = reader.path().to_path_buf();
    let mut converter = Converter::default();
    // Whether a present ended a frame since the last frame-end marker: files that mark
    // frames both ways end each frame once.
    let mut presented = false;
    let mut records_in_frame = 0u64;
    for block in reader {
        let placed = block?;
        stats.blocks += 1;
        stats.bytes_read = placed.offset + placed.size;
        match placed.block {
            Block::Call { id, thread, params } => {
                stats.calls += 1;
                let Some(desc) = command(id) else {
                    *stats.unknown_calls.entry(id).or_default() += 1;
                    continue;
                };
                let call = match decode_call(desc, &params) {
                    Ok(call) => call,
                    Err(e) if e.unsupported => {
                        *stats.undecoded.entry(desc.name.to_string()).or_default() += 1;
                        continue;
                    }
                    Err(e) => {
                        return Err(GfxrError {
                            path: path.clone(),
                            block: Some(placed.index),
                            offset: placed.offset,
                            what: format!("{e}"),
                            io: false,
                        }
                        .into())
                    }
                };
                let converted = converter.convert(&call);
                if converted.is_empty() {
                    *stats.not_recorded.entry(desc.name.to_string()).or_default() += 1;
                }
                for c in converted {
                    let present = matches!(c.call, CallT::QueuePresent(_));
                    let meta = CallMeta {
                        thread_id: thread,
                        timestamp_ns: 0,
                        result: c.result,
                    };
                    writer.append(meta, &c.call)?;
                    stats.records += 1;
                    records_in_frame += 1;
                    if present {
                        presented = true;
                        records_in_frame = 0;
                        writer.end_frame(CallMeta {
                            thread_id: thread,
                            ..Default::default()
                        })?;
                        stats.records += 1;
                        stats.frames += 1;
                    }
                }
            }
            Block::FillMemory {
                memory,
                offset,
                data,
            } => {
                stats.memory_fills += 1;
                let call = converter.memory_contents(memory, offset, data);
                writer.append(CallMeta::default(), &call)?;
                stats.records += 1;
            }
            Block::InitBuffer { buffer, data } => match converter.buffer_contents(buffer, data) {
                Some(call) => {
                    stats.memory_fills += 1;
                    writer.append(CallMeta::default(), &call)?;
                    stats.records += 1;
                }
                None => {
                    *stats
                        .not_recorded
                        .entry("buffer initialisation of an unbound buffer".into())
                        .or_default() += 1
                }
            },
            Block::Marker {
                block_type: FRAME_MARKER,
                marker: END_MARKER,
                ..
            } => {
                // A frame GFXReconstruct marked without a present (an offscreen
                // program's frame boundary).
                if !presented && records_in_frame > 0 {
                    writer.end_frame(CallMeta::default())?;
                    stats.records += 1;
                    stats.frames += 1;
                    records_in_frame = 0;
                }
                presented = false;
            }
            Block::Marker {
                block_type: STATE_MARKER,
                marker: BEGIN_MARKER,
                frame,
            } if stats.frames == 0 => {
                // A trimmed capture: its state snapshot, then the frames from `frame`
                // (counted from 1). The frames before it are empty, as in a trace our
                // layer records of the same range, so frame numbers are the program's.
                if frame > MAX_TRIM_START {
                    return Err(GfxrError {
                        path: path.clone(),
                        block: Some(placed.index),
                        offset: placed.offset,
                        what: format!("a state snapshot for frame {frame}, past {MAX_TRIM_START}"),
                        io: false,
                    }
                    .into());
                }
                for _ in 1..frame {
                    writer.end_frame(CallMeta::default())?;
                    stats.records += 1;
                    stats.frames += 1;
                }
            }
            Block::Marker { .. } | Block::Other { .. } => {}
        }
        progress(stats.bytes_read);
    }
    for (name, n) in converter.skipped {
        *stats.not_recorded.entry(name.to_string()).or_default() += n;
    }
    Ok(())
}
