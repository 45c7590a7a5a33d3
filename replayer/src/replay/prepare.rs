//! The commands of a chunk's compact records, made on a thread beside the replay.
//!
//! Most of what a frame records are draws, binds and push constants read straight
//! from their compact records ([`crate::direct_commands`]). Making a [`Cmd`] of one
//! needs nothing but the record, so where the trace is read ahead, a thread of its own
//! decodes each chunk's compact records into their commands while the replay executes
//! the chunk before: the replay's thread then only files each command under its
//! command buffer. A chunk travels with its commands, in file order, through a
//! channel of [`AHEAD`] chunks, so memory stays bounded whatever the trace's length.

use std::sync::mpsc::{sync_channel, Receiver};
use std::thread::Scope;

use trace_format::direct::{DirectField, MAX_DIRECT_FIELDS};
use trace_format::direct_records::ChunkRecord;
use trace_format::generated::trace::Call;
use trace_format::{TraceChunk, TraceReader};

use crate::commands::Cmd;
use crate::direct_commands::from_direct;

/// Chunks made ready ahead of the replay at most.
const AHEAD: usize = 2;
/// Entries a chunk's list of commands is first given room for at most.
const MAX_ROOM: usize = 1 << 16;

/// What [`from_direct`] made of a compact record: the command buffer and its command,
/// or `None` for a call it does not make a command of.
pub(super) type Made = Option<(u64, Cmd)>;

/// A chunk and, for each of its entries in order, the command made of it beforehand
/// (`None` where none was: a record read through its table, a generic call).
pub(super) struct PreparedChunk {
    pub(super) chunk: TraceChunk,
    pub(super) made: Vec<Option<Made>>,
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
        made.extend(chunk.entries().map(|entry| match entry {
            ChunkRecord::Direct(record) if record.call() != Call::VulkanCall => {
                let mut room = [DirectField::Absent; MAX_DIRECT_FIELDS];
                Some(from_direct(
                    record.seq,
                    record.call(),
                    record.fields(&mut room),
                ))
            }
            _ => None,
        }));
        PreparedChunk { chunk, made }
    }
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
