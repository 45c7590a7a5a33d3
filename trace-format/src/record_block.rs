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
    /// Where the records of one order key begin, one entry at each change of key: a
    /// run of commands of one key (every command a thread records between two of its
    /// numbered calls) is taken out in one step ([`RecordBlock::take_run`]).
    stretches: Vec<Stretch>,
    /// The stretch the next record to take out lies in (or one before it).
    stretch_at: usize,
}

/// Records of one block with one order key, from its first on.
#[derive(Clone, Copy, Debug)]
struct Stretch {
    /// The first record's place among the block's records, and where its bytes begin.
    first: usize,
    start: usize,
    /// Their key.
    key: u64,
    /// Whether it may be taken out whole: a key of commands, which many records share
    /// and admitting one admits all ([`crate::sequencer`]), and no frame boundary in it,
    /// which ends a run.
    whole: bool,
    /// What the record before the first left to it.
    before: Carried,
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
        let (start, before) = (self.bytes.len(), self.written);
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
        self.note_pushed(record.key, start, before, record.frame_boundary);
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
        // The stretch is noted after the record is written: a call, or a store, before
        // the writing left the hooks' inlined writing of their fields less folded
        // (vkCmdBindDescriptorSets: 120 instructions more a call, callgrind).
        let (start, before) = (self.bytes.len(), self.written);
        append_compact(
            &mut self.bytes,
            &mut self.written,
            key,
            meta,
            call_type,
            fields,
        );
        self.note_pushed(key, start, before, call_type == Call::FrameBoundary);
    }

    /// Counts the record just written, of key `key` from `start` (the stream's length
    /// before it) after a record that left `before`, and notes its stretch: a new one
    /// where its key changes, one taken record by record where it is a frame boundary.
    #[inline(always)]
    fn note_pushed(&mut self, key: u64, start: usize, before: Carried, frame_boundary: bool) {
        if self.pushed == 0 || key != before.key {
            self.begin_stretch(key, start, before);
        }
        if frame_boundary {
            self.end_whole_stretch();
        }
        self.pushed += 1;
    }

    /// Begins a stretch of key `key` at the record just written, at `start` (the
    /// stream's length before it), after a record that left `before`.
    #[inline(never)]
    fn begin_stretch(&mut self, key: u64, start: usize, before: Carried) {
        self.stretches.push(Stretch {
            first: self.pushed,
            start: start.next_multiple_of(RECORD_ALIGN),
            key,
            whole: crate::sequencer::is_command_key(key),
            before,
        });
    }

    /// The record just written is a frame boundary: its stretch ends a run, and is
    /// taken out record by record.
    #[cold]
    fn end_whole_stretch(&mut self) {
        if let Some(last) = self.stretches.last_mut() {
            last.whole = false;
        }
    }

    /// Where the stretch holding record `index` ends, when the records from `index` to
    /// that end may be taken out whole: the record after them, where its bytes begin,
    /// what the last of them leaves to it, and their key.
    fn whole_rest_of_stretch(&mut self, index: usize) -> Option<(usize, usize, Carried, u64)> {
        while self
            .stretches
            .get(self.stretch_at + 1)
            .is_some_and(|next| next.first <= index)
        {
            self.stretch_at += 1;
        }
        let stretch = self.stretches.get(self.stretch_at)?;
        if !stretch.whole || stretch.first > index {
            return None;
        }
        let key = stretch.key;
        Some(match self.stretches.get(self.stretch_at + 1) {
            Some(next) => (next.first, next.start, next.before, key),
            None => (
                self.pushed,
                self.bytes.len().next_multiple_of(RECORD_ALIGN),
                self.written,
                key,
            ),
        })
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
            // The rest of a stretch of commands goes in one step where it fits: its
            // records share the key `accept` is asked about, and their ends are known
            // from where the next stretch begins.
            if let Some((end, end_at, end_carried, key)) =
                self.whole_rest_of_stretch(self.taken + count)
            {
                let fits = end_at.min(self.bytes.len()) - start <= max_bytes;
                if fits && end > self.taken + count {
                    if !accept(key) {
                        break;
                    }
                    count = end - self.taken;
                    at = end_at;
                    carried = end_carried;
                    continue;
                }
            }
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
        self.stretches.clear();
        *self = RecordBlock {
            bytes: std::mem::take(&mut self.bytes),
            stretches: std::mem::take(&mut self.stretches),
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
                let given = decode_fields(head.kinds, head.field_count, fields, &mut room)
                    .ok_or_else(unread)?
                    .len();
                // Laid out with every field of the call's table (each call type has one
                // layout): those a record written before the table grew lacks, as their
                // defaults (the shape was checked to allow it, above).
                let all = crate::direct::with_lacked_fields(head.call_type, &mut room, given);
                append_direct(out, seq, head.meta, head.call_type, all)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generated::trace::{CmdEndRenderPass, CmdEndRenderPassArgs};
    use crate::sequencer::{command_key, is_command_key, numbered_key};

    /// A small generator, so that the test needs no dependency.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// A block as one recording thread fills it: runs of commands (compact draws,
    /// pushes and finished records) between numbered calls and frame boundaries, the
    /// thread and timestamp changing now and then.
    fn recorded(rng: &mut Rng) -> RecordBlock {
        let mut block = RecordBlock::new();
        let mut encoder = RecordEncoder::new();
        let mut numbered = 0;
        let mut meta = CallMeta::default();
        for _ in 0..rng.below(400) {
            if rng.below(8) == 0 {
                meta.timestamp_ns += 1 + rng.below(1000);
            }
            if rng.below(40) == 0 {
                meta.thread_id = rng.below(3);
            }
            match rng.below(20) {
                0 => {
                    block.push_direct(
                        numbered_key(numbered),
                        meta,
                        Call::FrameBoundary,
                        &[DirectField::U64(numbered)],
                    );
                    numbered += 1;
                }
                1 | 2 => {
                    let key = numbered_key(numbered);
                    // Now and then a numbered call twice, as a defect would record it:
                    // a sequencer refuses the second.
                    if rng.below(10) == 0 {
                        block.push_direct(key, meta, Call::CmdDraw, &[DirectField::U64(5)]);
                    }
                    block.push(encoder.encode(key, meta, |fbb| {
                        let t = CmdEndRenderPass::create(
                            fbb,
                            &CmdEndRenderPassArgs { command_buffer: 5 },
                        );
                        (Call::CmdEndRenderPass, t.as_union_value())
                    }));
                    numbered += 1;
                }
                3 => block.push(encoder.encode(command_key(numbered), meta, |fbb| {
                    let t =
                        CmdEndRenderPass::create(fbb, &CmdEndRenderPassArgs { command_buffer: 5 });
                    (Call::CmdEndRenderPass, t.as_union_value())
                })),
                4..=9 => {
                    let bytes = vec![7u8; rng.below(90) as usize];
                    block.push_direct(
                        command_key(numbered),
                        meta,
                        Call::CmdPushConstants,
                        &[
                            DirectField::U64(5),
                            DirectField::U64(6),
                            DirectField::U32(1),
                            DirectField::U32(0),
                            DirectField::Bytes(&bytes),
                        ],
                    );
                }
                _ => block.push_direct(
                    command_key(numbered),
                    meta,
                    Call::CmdDraw,
                    &[
                        DirectField::U64(5),
                        DirectField::U32(rng.below(9) as u32),
                        DirectField::U32(1),
                        DirectField::U32(0),
                        DirectField::U32(0),
                    ],
                ),
            }
        }
        block
    }

    /// What a sequencer admits: keys up to a limit, a numbered call only as the next.
    #[derive(Clone, Copy)]
    struct Admit {
        limit: u64,
        next_numbered: u64,
    }

    impl Admit {
        fn admit(&mut self, key: u64) -> bool {
            if key > self.limit {
                return false;
            }
            if !is_command_key(key) {
                if key != numbered_key(self.next_numbered) {
                    return false;
                }
                self.next_numbered += 1;
            }
            true
        }
    }

    /// What a run gives: its bytes, records, whether it ends a frame, what it carries.
    fn seen(run: Run<'_>) -> (Vec<u8>, usize, bool, Carried) {
        (run.bytes.to_vec(), run.records, run.ends_frame, run.carried)
    }

    #[test]
    fn runs_taken_by_stretches_are_the_runs_taken_record_by_record() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut whole_runs = 0;
        for _ in 0..300 {
            let seed = rng.below(u64::MAX - 1) + 1;
            let mut by_stretch = recorded(&mut Rng(seed));
            let mut by_record = recorded(&mut Rng(seed));
            by_record.stretches.clear();
            // Keys admitted up to a limit that moves on, chunks of varied room, as a
            // sequencer takes runs; a refused or empty run takes one record alone.
            let (mut admit_a, mut admit_b) = (
                Admit {
                    limit: 0,
                    next_numbered: 0,
                },
                Admit {
                    limit: 0,
                    next_numbered: 0,
                },
            );
            while !by_stretch.is_empty() {
                admit_a.limit += rng.below(6);
                admit_b.limit = admit_a.limit;
                let room = rng.below(3000) as usize;
                let (a, b) = (
                    by_stretch
                        .take_run(room, |key| admit_a.admit(key))
                        .map(seen),
                    by_record.take_run(room, |key| admit_b.admit(key)).map(seen),
                );
                let (a, b) = (a.unwrap(), b.unwrap());
                whole_runs += usize::from(a.1 > 1);
                assert_eq!(a, b);
                assert_eq!(admit_a.next_numbered, admit_b.next_numbered);
                if a.1 == 0 {
                    let (a, b) = (by_stretch.pop().unwrap(), by_record.pop().unwrap());
                    let (a, b) = (a.map(|r| r.key), b.map(|r| r.key));
                    assert_eq!(a, b);
                    if a == Some(numbered_key(admit_a.next_numbered)) {
                        admit_a.next_numbered += 1;
                        admit_b.next_numbered += 1;
                    }
                }
                assert_eq!(by_stretch.len(), by_record.len());
            }
            assert!(by_record.is_empty());
        }
        assert!(whole_runs > 300, "{whole_runs} runs of several records");
    }
}
