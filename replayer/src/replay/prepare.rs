//! The commands of a chunk's compact records, made on a thread beside the replay.
//!
//! Most of what a frame records are draws, binds and push constants read straight
//! from their compact records ([`crate::direct_commands`]), and generic command buffer
//! commands (barriers, dynamic state, push descriptors: [`crate::generic`]). Making a
//! [`Cmd`] of the first, or decoding the second, needs nothing but the record, so where
//! the trace is read ahead, a thread of its own does it for each chunk while the
//! replay executes the chunk before: the replay's thread then only files each command
//! under its command buffer. A chunk travels with its commands, in file order, through a
//! channel of [`AHEAD`] chunks, so memory stays bounded whatever the trace's length.

use std::collections::HashMap;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::OnceLock;
use std::thread::Scope;

use trace_format::direct::{DirectField, MAX_DIRECT_FIELDS};
use trace_format::direct_records::ChunkRecord;
use trace_format::generated::trace::Call;
use trace_format::{TraceChunk, TraceReader};

use crate::commands::{Cmd, WorkArgs};
use crate::direct_commands::{from_direct, Fields};
use crate::execute::sync::pipeline_barrier2_of;
use crate::generic::read::Params;
use crate::generic::{self, DecodeError, GenericCmd};

/// Chunks made ready ahead of the replay at most.
const AHEAD: usize = 2;
/// Entries a chunk's list of commands is first given room for at most.
const MAX_ROOM: usize = 1 << 16;

/// What [`from_direct`] made of a compact record: the command buffer and its command,
/// or `None` for a call it does not make a command of.
pub(super) type Made = Option<(u64, Cmd)>;

/// What was made of a compact record beforehand.
pub(super) enum Prepared {
    /// A call [`from_direct`] reads: what it made.
    Command(Made),
    /// A generic command buffer command whose parameters decode alone
    /// ([`super::Pass::decoded_alone`]): its name and its decoder's result.
    Generic {
        name: &'static str,
        decoded: Result<GenericCmd, DecodeError>,
    },
    /// A generic command buffer command made whole (a pipeline barrier, its masks read
    /// where they lie): its command buffer and command.
    Recorded { cb: u64, cmd: Cmd },
}

/// A chunk and, for each of its entries in order, what was made of it beforehand
/// (`None` where nothing was: a record read through its table, a generic call the
/// replay decodes itself).
pub(super) struct PreparedChunk {
    pub(super) chunk: TraceChunk,
    pub(super) made: Vec<Option<Prepared>>,
}

impl PreparedChunk {
    /// A chunk whose compact records are left to the replay to decode.
    pub(super) fn unprepared(chunk: TraceChunk) -> Self {
        PreparedChunk {
            chunk,
            made: Vec::new(),
        }
    }

    /// A chunk with the command of each of its compact records made.
    fn prepared(chunk: TraceChunk) -> Self {
        // Room for the records the header counts, up to a bound: a header is file data.
        let records = usize::try_from(chunk.header().record_count).unwrap_or(usize::MAX);
        let mut made = Vec::with_capacity(records.min(MAX_ROOM));
        made.extend(chunk.entries().map(|entry| {
            let ChunkRecord::Direct(record) = entry else {
                return None;
            };
            let mut room = [DirectField::Absent; MAX_DIRECT_FIELDS];
            let fields = record.fields(&mut room);
            match record.call() {
                Call::VulkanCall => decode_generic(record.seq, Fields(fields)),
                call => Some(Prepared::Command(from_direct(record.seq, call, fields))),
            }
        }));
        PreparedChunk { chunk, made }
    }
}

/// A generic record's command made or decoded, where the replay needs nothing else of
/// it (as [`super::Pass::take_generic`] would take it).
fn decode_generic(seq: u64, fields: Fields<'_, '_>) -> Option<Prepared> {
    let name = static_name(fields.str(0)?)?;
    let packed = fields.bytes(2);
    let mut params = Params::new();
    super::gather_generic(&fields, &packed, &mut params).ok()?;
    if matches!(name, "vkCmdPipelineBarrier2" | "vkCmdPipelineBarrier2KHR") {
        let (cb, barriers) = pipeline_barrier2_of(&params)?;
        let args = WorkArgs::PipelineBarrier(barriers);
        let cmd = Cmd::Work { seq, args };
        return Some(Prepared::Recorded { cb, cmd });
    }
    let decoded = generic::decode(name, &params).transpose()?;
    super::Pass::decoded_alone(name, &decoded).then_some(Prepared::Generic { name, decoded })
}

/// `name` as the decoders name it, if they decode it.
fn static_name(name: &str) -> Option<&'static str> {
    type Names = HashMap<&'static str, (), foldhash::fast::FixedState>;
    static NAMES: OnceLock<Names> = OnceLock::new();
    let names = NAMES.get_or_init(|| generic::DECODED.iter().map(|(n, _)| (*n, ())).collect());
    names.get_key_value(name).map(|(n, ())| *n)
}

/// Reads `reader` on a thread of `scope`, each chunk's commands made there; the
/// chunks come out of the receiver in file order, a read error last. The thread stops
/// when the receiver is dropped. `None` where no thread could be started.
pub(super) fn read_prepared<'scope>(
    scope: &'scope Scope<'scope, '_>,
    reader: TraceReader,
) -> Option<Receiver<trace_format::Result<PreparedChunk>>> {
    let (sender, receiver) = sync_channel(AHEAD);
    std::thread::Builder::new()
        .name("macroscope-prep".into())
        .spawn_scoped(scope, move || {
            for chunk in reader {
                let failed = chunk.is_err();
                if sender.send(chunk.map(PreparedChunk::prepared)).is_err() || failed {
                    break;
                }
            }
        })
        .ok()?;
    Some(receiver)
}
