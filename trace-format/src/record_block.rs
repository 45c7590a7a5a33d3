//! Records encoded one at a time, each a self-contained flatbuffer or kept compact; the
//! block a recording thread keeps them in ([`RecordBlock`]); and the chunk layout that
//! gathers them.
//!
//! A trace chunk is read as one `RecordBatch` whose `records` vector points at the
//! records' tables. The writer does not build the chunk in one flatbuffers builder: each
//! record is finished on its own (a root offset, its table, its vtable, its strings and
//! vectors) or kept compact, and the chunk stores them as a stream ([`ChunkBody`]); the
//! reader places their bytes, eight-byte aligned, after a small hand-made head (the
//! root offset, the batch's vtable and table, and the vector of offsets), compact ones
//! laid out ([`lay_out_stored`]). A record so encoded can be made on any thread and
//! moved into any chunk, which is what lets the capture layer's threads encode without a
//! shared lock (see [`crate::sequencer`]). The batch is an ordinary flatbuffer: every
//! offset points forward, every object keeps its alignment.

use flatbuffers::{FlatBufferBuilder, UnionWIPOffset, WIPOffset};

use crate::compact::{self, append_compact, append_finished, decode_fields, Carried, CompactHead};
use crate::direct::{append_direct, DirectField, FittingShapes, MAX_DIRECT_FIELDS};
use crate::direct_records::{DirectCalls, StoredDirect};
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
    /// 8-aligned), stored compact and laid out as a flatbuffer by the reader.
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
    /// ([`crate::compact`]), in the trace too; its reader lays it out as a flatbuffer.
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
        self.pop_if(|_| true)
    }

    /// Takes out the next record if `take` accepts its order key: the record is read
    /// once, its key tested and the record kept in the block when refused. `None` when
    /// the block is empty or `take` refused.
    #[inline]
    pub fn pop_if(
        &mut self,
        take: impl FnOnce(u64) -> bool,
    ) -> Result<Option<EncodedRecord<'_>>, MalformedRecord> {
        if self.is_empty() {
            return Ok(None);
        }
        let mut carried = self.read;
        let Some((record, next)) = compact::read(&self.bytes, self.read_at, &mut carried) else {
            return Err(self.malformed());
        };
        if !take(record.key) {
            return Ok(None);
        }
        self.read = carried;
        self.read_at = next;
        self.taken += 1;
        Ok(Some(record))
    }

    /// Takes out, as one run of the block's bytes, the records from the next on while
    /// `accept` takes each one's order key, up to and including the first frame
    /// boundary, and while the run stays within `max_bytes` (at least one record is
    /// taken when accepted). Only each record's header words are read
    /// (`compact::skip`), its bytes not rewritten: they hold what changed since the
    /// record before them in this block, so they may follow that record anywhere whole
    /// ([`ChunkBody::push_run`]).
    pub fn take_run(
        &mut self,
        max_bytes: usize,
        mut accept: impl FnMut(u64) -> bool,
    ) -> Result<Run<'_>, MalformedRecord> {
        let start = self.read_at;
        let (mut at, mut carried, mut count, mut ends_frame) = (start, self.read, 0, false);
        while self.taken + count < self.pushed && !ends_frame {
            let mut next_carried = carried;
            let Some(record) = compact::skip(&self.bytes, at, &mut next_carried) else {
                self.read_at = at;
                self.read = carried;
                self.taken += count;
                return Err(self.malformed());
            };
            let next = record.next;
            if (count > 0 && next.min(self.bytes.len()) - start > max_bytes) || !accept(record.key)
            {
                break;
            }
            ends_frame = record.frame_boundary;
            carried = next_carried;
            at = next;
            count += 1;
        }
        // The next record starts 8-aligned: after the last one (whose bytes end where
        // its fields do) that is past the bytes, and the run is empty.
        let end = at.min(self.bytes.len());
        self.read_at = at;
        self.read = carried;
        self.taken += count;
        Ok(Run {
            bytes: self.bytes.get(start.min(end)..end).unwrap_or_default(),
            records: count,
            ends_frame,
            carried,
        })
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

/// Records taken out of a [`RecordBlock`] whole ([`RecordBlock::take_run`]).
#[derive(Debug)]
pub struct Run<'a> {
    /// Their bytes, from an 8-aligned start.
    pub bytes: &'a [u8],
    /// How many.
    pub records: usize,
    /// Whether the last is a frame boundary.
    pub ends_frame: bool,
    /// What the last leaves to the record after it.
    pub(crate) carried: Carried,
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

/// A chunk's records being gathered, as a trace stores them: the stream of a
/// [`RecordBlock`], compact records kept compact (a record's sequence number is its
/// place in the chunk, counted from the chunk's first; the order keys that runs moved
/// whole from a block still carry mean nothing here, and records appended one by one
/// carry 0).
/// The merging thread appends; the compression thread compresses the stream as it is
/// (a chunk flagged [`CHUNK_STORED_RECORDS`](crate::wire::CHUNK_STORED_RECORDS)), and
/// the reader lays it out as a `RecordBatch` ([`lay_out_stored`]).
#[derive(Debug, Default)]
pub(crate) struct ChunkBody {
    bytes: Vec<u8>,
    /// What the last record appended left to the next.
    carried: Carried,
    records: usize,
}

impl ChunkBody {
    /// Appends one record.
    pub(crate) fn push(&mut self, record: EncodedRecord<'_>) {
        match record.body {
            RecordBody::Finished(bytes) => append_finished(
                &mut self.bytes,
                &mut self.carried,
                0,
                record.frame_boundary,
                bytes,
            ),
            RecordBody::Compact { head, fields } => {
                compact::append_compact_fields(&mut self.bytes, &mut self.carried, 0, &head, fields)
            }
        }
        self.records += 1;
    }

    /// Appends one record of `call_type` holding `fields`, compact.
    pub(crate) fn push_direct(
        &mut self,
        meta: CallMeta,
        call_type: Call,
        fields: &[DirectField<'_>],
    ) {
        append_compact(
            &mut self.bytes,
            &mut self.carried,
            0,
            meta,
            call_type,
            fields,
        );
        self.records += 1;
    }

    /// Appends a run of records taken whole from a block, right after the record that
    /// came before them in that block (so what they carry over holds here too).
    pub(crate) fn push_run(&mut self, run: &Run<'_>) {
        let start = self.bytes.len().next_multiple_of(RECORD_ALIGN);
        self.bytes.resize(start, 0);
        self.bytes.extend_from_slice(run.bytes);
        self.carried = run.carried;
        self.records += run.records;
    }

    /// Records held.
    pub(crate) fn len(&self) -> usize {
        self.records
    }

    /// Bytes held.
    pub(crate) fn len_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Hands the stored records over as the chunk's payload: `out` takes the body's
    /// bytes, the body keeps `out`'s buffer (emptied) for its next chunk.
    pub(crate) fn finish_into(&mut self, out: &mut Vec<u8>) {
        std::mem::swap(out, &mut self.bytes);
        self.bytes.clear();
        self.carried = Carried::default();
        self.records = 0;
    }
}

/// Why a chunk of stored records does not lay out.
#[derive(Debug)]
pub struct BadStoredRecord {
    /// The record's place in its chunk.
    pub index: usize,
    /// Its byte offset in the decompressed payload.
    pub offset: usize,
    /// What is wrong.
    pub problem: String,
}

impl std::fmt::Display for BadStoredRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "stored record {} (at payload byte {:#x}): {}",
            self.index, self.offset, self.problem
        )
    }
}

impl std::error::Error for BadStoredRecord {}

/// Lays a chunk of stored records ([`ChunkBody`]) out into `out` as a `RecordBatch` of
/// `declared` records (what the chunk header says it holds) whose sequence numbers
/// count from `first_seq`, checking as it goes that the result can be read unchecked: a
/// compact record's call and field kinds must be the schema's
/// ([`crate::direct::stored_fields_fit`]), and each finished record must pass the
/// payload verifier on its own (its offsets then stay within its bytes, which keep their
/// alignment in the batch). At most `max_bytes` are laid out.
pub fn lay_out_stored(
    stored: &[u8],
    first_seq: u64,
    declared: u32,
    max_bytes: usize,
    out: &mut Vec<u8>,
) -> Result<(), BadStoredRecord> {
    let mut handed = Vec::new();
    lay_out_stored_handing(
        stored,
        first_seq,
        declared,
        max_bytes,
        DirectCalls::NONE,
        out,
        &mut handed,
    )
}

/// [`lay_out_stored`], handing over instead of laying out the compact records of the
/// calls in `direct` (checked alike): each goes into `handed` with its place among the
/// chunk's records and its fields' place in `stored`, and the batch in `out` holds the
/// other records, in order. Nothing is handed over from a `stored` that does not start
/// 8-aligned in memory (its fields are read from a copy).
pub fn lay_out_stored_handing(
    stored: &[u8],
    first_seq: u64,
    declared: u32,
    max_bytes: usize,
    direct: DirectCalls,
    out: &mut Vec<u8>,
    handed: &mut Vec<StoredDirect>,
) -> Result<(), BadStoredRecord> {
    handed.clear();
    let direct = match (stored.as_ptr() as usize) % RECORD_ALIGN {
        0 => direct,
        _ => DirectCalls::NONE,
    };
    let declared = declared as usize;
    let whole = |problem: String| BadStoredRecord {
        index: 0,
        offset: 0,
        problem,
    };
    // Every stored record takes at least its 8-byte header word: a count past that is
    // not believed (nor made room for).
    if declared > stored.len() / 8 {
        return Err(whole(format!(
            "{declared} records declared in {} bytes",
            stored.len()
        )));
    }
    // Room for the records handed over, made once: as many as the count declared (now
    // believed, above), or as 16-byte records fill the stream (a draw takes 32), so that
    // the list seldom grows by copying itself.
    if direct != DirectCalls::NONE {
        handed.reserve(declared.min(stored.len() / 16));
    }
    // Vectors of 32- and 64-bit elements are borrowed where they lie: the stream must
    // start 8-aligned in memory, as an allocation does; a copy where it does not.
    let aligned_copy: Vec<u64>;
    let stored = if (stored.as_ptr() as usize) % RECORD_ALIGN == 0 {
        stored
    } else {
        let mut words = vec![0u64; stored.len().div_ceil(8)];
        // SAFETY: `words` holds at least `stored.len()` bytes, and a u64 takes any bytes.
        unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), stored.len()) }
            .copy_from_slice(stored);
        aligned_copy = words;
        // SAFETY: as above, read only, for as long as `aligned_copy` lives.
        unsafe { std::slice::from_raw_parts(aligned_copy.as_ptr().cast::<u8>(), stored.len()) }
    };
    // The head, with its offsets, goes first: its size follows from the count declared.
    let base = (HEAD_BYTES + 4 * declared).next_multiple_of(RECORD_ALIGN);
    out.clear();
    out.resize(base, 0);
    let mut carried = Carried::default();
    let mut fitting = FittingShapes::default();
    let mut verifier = crate::verify::RecordVerifier::default();
    // Each compact record's fields, read into the same room one record after another.
    let mut room = [DirectField::Absent; MAX_DIRECT_FIELDS];
    let mut at = 0;
    let mut index = 0;
    while at < stored.len() {
        let bad = |problem: String| BadStoredRecord {
            index,
            offset: at,
            problem,
        };
        if index >= declared {
            return Err(bad(format!(
                "more records than the {declared} the chunk declares"
            )));
        }
        let Some((record, next)) = compact::read(stored, at, &mut carried) else {
            return Err(bad("cut short, or of an unknown field kind".into()));
        };
        let seq = first_seq.wrapping_add(index as u64);
        let start = match record.body {
            RecordBody::Compact { head, fields } => {
                if !fitting.fit(head.call_type, head.field_count, head.kinds) {
                    return Err(bad(format!(
                        "call type {} with {} fields of kinds {:#x} is not the schema's",
                        head.call_type.0, head.field_count, head.kinds
                    )));
                }
                let unread = || bad("its fields do not read back".into());
                if direct.contains(head.call_type) {
                    if !compact::fields_read_back(head.kinds, head.field_count, fields) {
                        return Err(unread());
                    }
                    // `fields` lies within `stored`, which starts 8-aligned (above).
                    let start = fields.as_ptr() as usize - stored.as_ptr() as usize;
                    handed.push(StoredDirect {
                        index: index as u32,
                        head,
                        start: start as u32,
                        end: (start + fields.len()) as u32,
                    });
                    index += 1;
                    at = next;
                    continue;
                }
                let laid = decode_fields(head.kinds, head.field_count, fields, &mut room)
                    .ok_or_else(unread)?;
                append_direct(out, seq, head.meta, head.call_type, laid)
            }
            RecordBody::Finished(bytes) => {
                let start = out.len().next_multiple_of(RECORD_ALIGN);
                out.resize(start, 0);
                out.extend_from_slice(bytes);
                set_envelope_seq(&mut out[start..], seq)
                    .ok_or_else(|| bad("a finished record without an envelope".into()))?;
                // Verified as it will be read, its sequence number in place (a damaged
                // vtable may place the envelope over another field).
                verifier
                    .verify(&out[start..])
                    .map_err(|e| bad(e.to_string()))?;
                start
            }
        };
        if out.len() > max_bytes {
            return Err(bad(format!("lays out past {max_bytes} bytes")));
        }
        let root = out[start..]
            .get(..4)
            .map_or(0, |r| u32::from_le_bytes([r[0], r[1], r[2], r[3]]));
        let table = start + root as usize;
        let slot = HEAD_BYTES + 4 * (index - handed.len());
        out[slot..slot + 4].copy_from_slice(&((table - slot) as u32).to_le_bytes());
        index += 1;
        at = next;
    }
    if index != declared {
        return Err(whole(format!(
            "{index} records stored, the chunk declares {declared}"
        )));
    }
    write_head(out, declared - handed.len());
    Ok(())
}

/// Writes the first [`HEAD_BYTES`] of a `RecordBatch` of `records` records into
/// `out`: the root offset, to the batch table at 12; the batch's vtable at 4 (6 bytes
/// long, a table of 8 bytes, `records` at 4); the table at 12, its vtable 8 bytes
/// before it, `records` at 20 (16 + 4); the vector at 20, its offsets from 24 on.
fn write_head(out: &mut [u8], records: usize) {
    out[..4].copy_from_slice(&12u32.to_le_bytes());
    for (i, half) in [6u16, 8, 4, 0].iter().enumerate() {
        out[4 + 2 * i..6 + 2 * i].copy_from_slice(&half.to_le_bytes());
    }
    out[12..16].copy_from_slice(&8i32.to_le_bytes());
    out[16..20].copy_from_slice(&4u32.to_le_bytes());
    out[20..24].copy_from_slice(&(records as u32).to_le_bytes());
}
