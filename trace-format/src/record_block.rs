//! Records encoded one at a time, each a self-contained flatbuffer or kept compact; the
//! block a recording thread keeps them in ([`RecordBlock`]); and the chunk layout that
//! gathers them.
//!
//! A trace chunk's payload is one `RecordBatch` whose `records` vector points at the
//! records' tables. The writer does not build the chunk in one flatbuffers builder: each
//! record is finished on its own (a root offset, its table, its vtable, its strings and
//! vectors) and its bytes are placed, eight-byte aligned, after a small hand-made head
//! (the root offset, the batch's vtable and table, and the vector of offsets). A record
//! so encoded can be made on any thread and moved into any chunk, which is what lets the
//! capture layer's threads encode without a shared lock (see [`crate::sequencer`]). The
//! payload is an ordinary flatbuffer: every offset points forward, every object keeps
//! its alignment, and the reader and its verifier see no difference.

use flatbuffers::{FlatBufferBuilder, UnionWIPOffset, WIPOffset};

use crate::compact::{self, append_compact, append_finished, decode_fields, Carried, CompactHead};
use crate::direct::{append_direct, DirectField};
use crate::generated::trace::{Call, Envelope, Record, RecordArgs};
use crate::trace::CallMeta;

/// The alignment every record's bytes start at (the largest any trace object needs:
/// the envelope's 64-bit fields).
pub(crate) const RECORD_ALIGN: usize = 8;

/// Bytes of the chunk head before the offsets: the root offset, the batch's vtable
/// (three u16: its size, the table's size, the `records` field's place), two bytes of
/// padding, the batch table (its vtable offset and the `records` offset) and the
/// vector's length.
const HEAD_BYTES: usize = 4 + 6 + 2 + 8 + 4;

/// One record, as a recording thread's block or a chunk being gathered holds it.
#[derive(Clone, Copy, Debug)]
pub struct EncodedRecord<'a> {
    /// Where it goes in the trace's order ([`crate::sequencer`]'s keys): the writer
    /// gives it the next sequence number when it is appended.
    pub key: u64,
    /// Whether it is a `FrameBoundary`.
    pub frame_boundary: bool,
    /// Its bytes.
    pub body: RecordBody<'a>,
}

/// A record's bytes, finished or compact.
#[derive(Clone, Copy, Debug)]
pub enum RecordBody<'a> {
    /// A finished flatbuffer whose root is a `Record`.
    Finished(&'a [u8]),
    /// A compact record ([`crate::compact`]): its head and its fields' bytes (starting
    /// 8-aligned), laid out as a flatbuffer when its chunk is written.
    Compact {
        /// The call, its fields' kinds and its envelope.
        head: CompactHead,
        /// The fields' values.
        fields: &'a [u8],
    },
}

/// Encodes records one at a time, reusing one builder.
pub struct RecordEncoder {
    fbb: FlatBufferBuilder<'static>,
}

impl Default for RecordEncoder {
    fn default() -> Self {
        Self::new()
    }
}

impl RecordEncoder {
    /// An encoder with a small builder (it grows to the largest record).
    pub fn new() -> Self {
        RecordEncoder {
            fbb: FlatBufferBuilder::with_capacity(256),
        }
    }

    /// Encodes the call `build` makes, with order key `key` and `meta`'s envelope (the
    /// envelope's sequence number is set when the record is appended to a trace).
    pub fn encode<F>(&mut self, key: u64, meta: CallMeta, build: F) -> EncodedRecord<'_>
    where
        F: FnOnce(&mut FlatBufferBuilder<'static>) -> (Call, WIPOffset<UnionWIPOffset>),
    {
        self.fbb.reset();
        let (call_type, call) = build(&mut self.fbb);
        let record = Record::create(
            &mut self.fbb,
            &RecordArgs {
                envelope: Some(&Envelope::new(
                    key,
                    meta.thread_id,
                    meta.timestamp_ns,
                    meta.result,
                )),
                call_type,
                call: Some(call),
            },
        );
        self.fbb.finish_minimal(record);
        EncodedRecord {
            key,
            frame_boundary: call_type == Call::FrameBoundary,
            body: RecordBody::Finished(self.fbb.finished_data()),
        }
    }
}

/// A record of a recording block that does not read back: its bytes were damaged (the
/// recording thread wrote them, so this is a defect, reported rather than guessed at).
#[derive(Debug)]
pub struct MalformedRecord {
    /// Which record: its place in its block, or its sequence number in the trace.
    pub which: String,
}

impl std::fmt::Display for MalformedRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} of a recording block does not read back", self.which)
    }
}

/// Records one thread encoded, by ascending order key (equal keys in the order they were
/// pushed), waiting to be merged into the trace; taken out by [`RecordBlock::pop`] in
/// that order. One stream of bytes, each record framed by a header word and carrying
/// only what changed since the record before it ([`crate::compact`] has the layout).
#[derive(Debug, Default)]
pub struct RecordBlock {
    bytes: Vec<u8>,
    /// What the last record pushed left to the next.
    written: Carried,
    /// Records pushed.
    pushed: usize,
    /// Where the next record to take out starts, and what the one before left it.
    read_at: usize,
    read: Carried,
    /// Records taken out.
    taken: usize,
}

impl RecordBlock {
    /// An empty block.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty block with room for `bytes` of records.
    pub fn with_capacity(bytes: usize) -> Self {
        RecordBlock {
            bytes: Vec::with_capacity(bytes),
            ..Self::default()
        }
    }

    /// Bytes the block holds room for.
    pub fn capacity_bytes(&self) -> usize {
        self.bytes.capacity()
    }

    /// Appends `record`, whose key must be at least every one in the block.
    pub fn push(&mut self, record: EncodedRecord<'_>) {
        debug_assert!(self.pushed == 0 || self.written.key <= record.key);
        match record.body {
            RecordBody::Finished(bytes) => append_finished(
                &mut self.bytes,
                &mut self.written,
                record.key,
                record.frame_boundary,
                bytes,
            ),
            RecordBody::Compact { head, fields } => compact::append_compact_fields(
                &mut self.bytes,
                &mut self.written,
                record.key,
                &head,
                fields,
            ),
        }
        self.pushed += 1;
    }

    /// Appends a record of `call_type` holding `fields` (see [`crate::direct`]), with
    /// order key `key` (at least every one in the block). It is kept compact
    /// ([`crate::compact`]) until its chunk is written, and laid out as a flatbuffer
    /// there: on a compression thread, not the recording one.
    #[inline(always)]
    pub fn push_direct(
        &mut self,
        key: u64,
        meta: CallMeta,
        call_type: Call,
        fields: &[DirectField<'_>],
    ) {
        debug_assert!(self.pushed == 0 || self.written.key <= key);
        append_compact(
            &mut self.bytes,
            &mut self.written,
            key,
            meta,
            call_type,
            fields,
        );
        self.pushed += 1;
    }

    /// Encoded bytes held.
    pub fn len_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Records not yet taken out.
    pub fn len(&self) -> usize {
        self.pushed - self.taken
    }

    /// Whether every record has been taken out (or none was put in).
    pub fn is_empty(&self) -> bool {
        self.taken == self.pushed
    }

    /// The order key of the next record [`pop`](Self::pop) gives.
    pub fn peek_key(&self) -> Result<Option<u64>, MalformedRecord> {
        if self.is_empty() {
            return Ok(None);
        }
        match compact::peek_key(&self.bytes, self.read_at, &self.read) {
            Some(key) => Ok(Some(key)),
            None => Err(self.malformed()),
        }
    }

    /// The next record's failure to read back.
    fn malformed(&self) -> MalformedRecord {
        MalformedRecord {
            which: format!("record {} (at byte {})", self.taken, self.read_at),
        }
    }

    /// Takes out the next record.
    pub fn pop(&mut self) -> Result<Option<EncodedRecord<'_>>, MalformedRecord> {
        if self.is_empty() {
            return Ok(None);
        }
        let Some((record, next)) = compact::read(&self.bytes, self.read_at, &mut self.read) else {
            return Err(self.malformed());
        };
        self.read_at = next;
        self.taken += 1;
        Ok(Some(record))
    }

    /// Empties the block, keeping its memory.
    pub fn clear(&mut self) {
        self.bytes.clear();
        *self = RecordBlock {
            bytes: std::mem::take(&mut self.bytes),
            ..Self::default()
        };
    }
}

/// Writes `seq` into the envelope of the finished `Record` flatbuffer `record` (its
/// root's first field, a struct whose first member is the sequence number); `None`
/// when the bytes do not hold such a record.
fn set_envelope_seq(record: &mut [u8], seq: u64) -> Option<()> {
    let u16_at = |at: usize| Some(u16::from_le_bytes(record.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(record.get(at..at + 4)?.try_into().ok()?));
    let table = u32_at(0)? as usize;
    // The table starts with its vtable's offset, signed, counted back from the table.
    let back = u32_at(table)? as i32 as isize;
    let vtable = usize::try_from(table as isize - back).ok()?;
    // The envelope's slot: after the vtable's two lengths (absent, or 0, is no envelope).
    if u16_at(vtable)? < 6 {
        return None;
    }
    let field = u16_at(vtable + 4)?;
    if field == 0 {
        return None;
    }
    let at = table + usize::from(field);
    record
        .get_mut(at..at + 8)?
        .copy_from_slice(&seq.to_le_bytes());
    Some(())
}

/// Where one record of a [`ChunkBody`] lies, and how it is stored.
#[derive(Clone, Copy, Debug)]
struct BodyEntry {
    start: u32,
    end: u32,
    seq: u64,
    /// A compact record's head (its bytes are its fields); `None` for a finished one.
    compact: Option<CompactHead>,
}

/// A chunk's records being gathered, as they were stored: compact or finished. The
/// merging thread only appends their bytes; [`finish_into`](Self::finish_into), on the
/// compression thread that takes the chunk, lays out the payload.
#[derive(Debug, Default)]
pub(crate) struct ChunkBody {
    bytes: Vec<u8>,
    entries: Vec<BodyEntry>,
    /// Each laid-out record's table, as an offset into the payload (reused from chunk
    /// to chunk).
    tables: Vec<u32>,
}

impl ChunkBody {
    /// Appends one record's bytes, as record `seq` of the trace.
    pub(crate) fn push(&mut self, record: EncodedRecord<'_>, seq: u64) {
        let (bytes, compact) = match record.body {
            RecordBody::Finished(bytes) => (bytes, None),
            RecordBody::Compact { head, fields } => (fields, Some(head)),
        };
        let start = self.bytes.len().next_multiple_of(RECORD_ALIGN);
        self.bytes.resize(start, 0);
        self.bytes.extend_from_slice(bytes);
        self.entries.push(BodyEntry {
            start: start as u32,
            end: self.bytes.len() as u32,
            seq,
            compact,
        });
    }

    /// Records held.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Bytes held.
    pub(crate) fn len_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Writes the chunk payload into `out`: the head, then each record laid out as a
    /// flatbuffer after it (compact ones expanded), in one pass; empties the body.
    pub(crate) fn finish_into(&mut self, out: &mut Vec<u8>) -> Result<(), MalformedRecord> {
        let laid_out = self.lay_out_after_head(out);
        self.bytes.clear();
        self.entries.clear();
        laid_out
    }

    fn lay_out_after_head(&mut self, out: &mut Vec<u8>) -> Result<(), MalformedRecord> {
        let n = self.entries.len();
        let base = (HEAD_BYTES + 4 * n).next_multiple_of(RECORD_ALIGN);
        out.clear();
        out.reserve(base + self.bytes.len() * 2);
        out.resize(base, 0);
        self.tables.clear();
        for e in &self.entries {
            let stored = &self.bytes[e.start as usize..e.end as usize];
            let malformed = || MalformedRecord {
                which: format!("record {}", e.seq),
            };
            let start = if let Some(head) = e.compact {
                let fields =
                    decode_fields(head.kinds, head.field_count, stored).ok_or_else(malformed)?;
                let fields = &fields[..usize::from(head.field_count)];
                append_direct(out, e.seq, head.meta, head.call_type, fields)
            } else {
                let start = out.len().next_multiple_of(RECORD_ALIGN);
                out.resize(start, 0);
                out.extend_from_slice(stored);
                set_envelope_seq(&mut out[start..], e.seq).ok_or_else(malformed)?;
                start
            };
            let root = out[start..]
                .get(..4)
                .map_or(0, |r| u32::from_le_bytes([r[0], r[1], r[2], r[3]]));
            self.tables.push(start as u32 + root);
        }
        // The head: the root offset, to the batch table at 12; the batch's vtable at 4
        // (6 bytes long, a table of 8 bytes, `records` at 4); the table at 12, its
        // vtable 8 bytes before it, `records` at 20 (16 + 4); the vector at 20, its
        // offsets from 24 on.
        let mut head = Vec::with_capacity(HEAD_BYTES);
        head.extend_from_slice(&12u32.to_le_bytes());
        for half in [6u16, 8, 4, 0] {
            head.extend_from_slice(&half.to_le_bytes());
        }
        head.extend_from_slice(&8i32.to_le_bytes());
        head.extend_from_slice(&4u32.to_le_bytes());
        head.extend_from_slice(&(n as u32).to_le_bytes());
        out[..HEAD_BYTES].copy_from_slice(&head);
        for (i, table) in self.tables.iter().enumerate() {
            let at = HEAD_BYTES + 4 * i;
            out[at..at + 4].copy_from_slice(&((*table as usize - at) as u32).to_le_bytes());
        }
        Ok(())
    }
}
