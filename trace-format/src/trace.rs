//! Trace files: writing records into chunks, and reading them back verified.
//!
//! The writer encodes each record on its own and gathers the bytes for the current
//! chunk ([`crate::record_block`]); when the chunk reaches its size target or a frame
//! ends, the chunk goes to the container's background threads for compression. The reader hands out one
//! verified [`TraceChunk`] at a time; its records borrow from it, so reading copies
//! nothing per record.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use flatbuffers::{FlatBufferBuilder, UnionWIPOffset, WIPOffset};

use crate::container::payload_pool;
use crate::container::ChunkStream;
use crate::container::{
    ChunkMeta, ContainerReader, ContainerWriter, RawChunk, WriterOptions, WriterStats,
};
use crate::direct_records::{ChunkRecord, DirectCalls, DirectRecord, StoredDirect};
use crate::error::{Error, ErrorKind, Location, Result};
use crate::generated::trace::{Call, CallT, FrameBoundary, FrameBoundaryArgs, Record, RecordBatch};
use crate::record_block::{lay_out_stored_handing, ChunkBody, EncodedRecord, RecordEncoder, Run};
use crate::wire::{Content, IndexEntry, CHUNK_STORED_RECORDS};

/// The envelope fields a caller supplies with each call; the writer adds the sequence
/// number.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CallMeta {
    /// The calling thread.
    pub thread_id: u64,
    /// Nanoseconds since the capture started.
    pub timestamp_ns: u64,
    /// The call's VkResult (0 for void calls).
    pub result: i32,
}

/// Writes a trace file.
///
/// ```
/// use trace_format::{trace::CallMeta, TraceReader, TraceWriter, WriterOptions};
/// use trace_format::generated::trace::{CallT, CmdDrawT};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("one.mscope");
/// let mut writer = TraceWriter::create(&path, &WriterOptions::default()).unwrap();
/// let mut draw = CmdDrawT::default();
/// draw.vertex_count = 3;
/// writer.append(CallMeta::default(), &CallT::CmdDraw(Box::new(draw))).unwrap();
/// writer.end_frame(CallMeta::default()).unwrap();
/// writer.finish().unwrap();
///
/// let mut reader = TraceReader::open(&path).unwrap();
/// let chunk = reader.next().unwrap().unwrap();
/// let first = chunk.records().next().unwrap();
/// assert_eq!(first.call_as_cmd_draw().unwrap().vertex_count(), 3);
/// ```
pub struct TraceWriter {
    out: ContainerWriter,
    /// The encoder [`append_with`](Self::append_with) uses.
    encoder: RecordEncoder,
    /// The open chunk's records.
    body: ChunkBody,
    /// Bodies the compression threads have taken the bytes of, for reuse.
    spare_bodies: Arc<Mutex<Vec<ChunkBody>>>,
    target_bytes: usize,
    next_seq: u64,
    frame: u64,
    chunk_first_seq: u64,
    chunk_first_frame: u64,
    /// When the open chunk got its first record.
    chunk_opened: Instant,
    chunk_max_age: Option<Duration>,
}

impl TraceWriter {
    /// Creates a trace at `path`.
    pub fn create(path: &Path, options: &WriterOptions) -> Result<Self> {
        let out = ContainerWriter::create(path, Content::Trace, options)?;
        Ok(Self::with_container(out, options))
    }

    /// Writes a trace into `file`, opened for writing and empty, which is `path`: for a
    /// writer that claimed the file itself (the capture layer, which locks it).
    pub fn create_in(file: std::fs::File, path: &Path, options: &WriterOptions) -> Result<Self> {
        let out = ContainerWriter::create_in(file, path, Content::Trace, options)?;
        Ok(Self::with_container(out, options))
    }

    /// A writer of records into the container `out`, nothing written yet.
    fn with_container(out: ContainerWriter, options: &WriterOptions) -> Self {
        TraceWriter {
            out,
            encoder: RecordEncoder::new(),
            body: ChunkBody::default(),
            spare_bodies: Arc::default(),
            target_bytes: options.chunk_target_bytes,
            next_seq: 0,
            frame: 0,
            chunk_first_seq: 0,
            chunk_first_frame: 0,
            chunk_opened: Instant::now(),
            chunk_max_age: options.chunk_max_age,
        }
    }

    /// The frame calls are now being recorded into (frames count from 0).
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// The file being written.
    pub fn path(&self) -> &std::path::Path {
        self.out.path()
    }

    /// The sequence number the next record must carry.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Appends one call built by `build`, and returns its sequence number. The fast
    /// path: the call is built straight into a reused builder, nothing is allocated
    /// per call.
    pub fn append_with<F>(&mut self, meta: CallMeta, build: F) -> Result<u64>
    where
        F: FnOnce(&mut FlatBufferBuilder<'static>) -> (Call, WIPOffset<UnionWIPOffset>),
    {
        let seq = self.next_seq;
        let mut encoder = std::mem::take(&mut self.encoder);
        let outcome = self.append_encoded(encoder.encode(seq, meta, build));
        self.encoder = encoder;
        outcome.map(|()| seq)
    }

    /// Appends a record encoded elsewhere (by [`RecordEncoder`], on any thread) as the
    /// next record: it gets the next sequence number, whatever its key (putting records
    /// in order is the caller's work, see [`crate::sequencer`]). A frame boundary ends
    /// the frame as [`end_frame`](Self::end_frame) does.
    pub fn append_encoded(&mut self, record: EncodedRecord<'_>) -> Result<()> {
        self.open_record();
        self.body.push(record);
        self.close_record(record.frame_boundary)
    }

    /// Appends records taken whole from a block ([`RecordBlock::take_run`]) right after
    /// the block's record before them, which must be the last record appended (and in
    /// this chunk: see [`chunk_is_empty`](Self::chunk_is_empty)). A run ends at a frame
    /// boundary at the latest, which ends the frame as [`end_frame`](Self::end_frame)
    /// does.
    ///
    /// [`RecordBlock::take_run`]: crate::record_block::RecordBlock::take_run
    pub fn append_run(&mut self, run: &Run<'_>) -> Result<()> {
        if run.records == 0 {
            return Ok(());
        }
        debug_assert!(self.body.len() != 0, "a run follows its block's record");
        self.body.push_run(run);
        self.next_seq += run.records as u64 - 1;
        self.close_record(run.ends_frame)
    }

    /// Whether the open chunk holds no record (a chunk closed with the last one).
    pub fn chunk_is_empty(&self) -> bool {
        self.body.len() == 0
    }

    /// Bytes the open chunk may still take before it closes at its size target.
    pub fn chunk_room(&self) -> usize {
        self.target_bytes.saturating_sub(self.body.len_bytes())
    }

    /// Appends a call of `call_type` whose table holds `fields` (by field id, every one
    /// present, as [`crate::direct`] says) and returns its sequence number: the record
    /// is stored compact, as the capture layer stores the commands it records most.
    pub fn append_direct(
        &mut self,
        meta: CallMeta,
        call_type: Call,
        fields: &[crate::direct::DirectField<'_>],
    ) -> Result<u64> {
        let fits = fields.len() <= crate::direct::MAX_DIRECT_FIELDS
            && crate::direct::stored_fields_fit(
                call_type,
                fields.len() as u8,
                crate::compact::kinds_of(fields),
            );
        if !fits {
            let why = crate::direct::schema_mismatch(call_type, fields)
                .unwrap_or_else(|| "more fields than a direct record holds".into());
            return Err(Error::new(
                self.out.path(),
                Location::File,
                ErrorKind::Unsupported(why),
            ));
        }
        let seq = self.next_seq;
        self.open_record();
        self.body.push_direct(meta, call_type, fields);
        self.close_record(call_type == Call::FrameBoundary)?;
        Ok(seq)
    }

    /// Before a record goes into the chunk: a chunk's first record starts it.
    fn open_record(&mut self) {
        if self.body.len() == 0 {
            self.chunk_first_seq = self.next_seq;
            self.chunk_first_frame = self.frame;
            if self.chunk_max_age.is_some() {
                self.chunk_opened = Instant::now();
            }
        }
    }

    /// After a record went into the chunk: it takes its sequence number, and a frame
    /// boundary or the chunk's size may close the chunk.
    fn close_record(&mut self, frame_boundary: bool) -> Result<()> {
        self.next_seq += 1;
        if frame_boundary {
            let old_enough = self
                .chunk_max_age
                .is_none_or(|age| self.chunk_opened.elapsed() >= age);
            if old_enough {
                self.close_chunk(true)?;
            }
            self.frame += 1;
        } else if self.body.len_bytes() >= self.target_bytes {
            self.close_chunk(false)?;
        }
        Ok(())
    }

    /// Appends one call given as an owned value.
    pub fn append(&mut self, meta: CallMeta, call: &CallT) -> Result<u64> {
        let call_type = call.call_type();
        if call_type == Call::NONE {
            return Err(Error::new(
                self.out.path(),
                Location::File,
                ErrorKind::Unsupported("a record must carry a call".into()),
            ));
        }
        self.append_with(meta, |fbb| {
            let offset = call
                .pack(fbb)
                .expect("a call other than NONE packs to a table");
            (call_type, offset)
        })
    }

    /// Records the end of the current frame (a `FrameBoundary` record), closes the chunk
    /// there (with `chunk_max_age`, once the chunk is that old), and starts the next
    /// frame.
    pub fn end_frame(&mut self, meta: CallMeta) -> Result<u64> {
        let frame = self.frame;
        self.append_with(meta, |fbb| {
            let boundary = FrameBoundary::create(fbb, &FrameBoundaryArgs { frame });
            (Call::FrameBoundary, boundary.as_union_value())
        })
    }

    /// Closes the open chunk now, if it holds a record, so that what was appended goes
    /// to the file without waiting for a frame's end or the chunk's size; later records
    /// start the next chunk. The trace stays open (no footer).
    pub fn end_chunk(&mut self) -> Result<()> {
        match self.body.len() {
            0 => Ok(()),
            _ => self.close_chunk(false),
        }
    }

    /// Writes what is pending and the footer index; returns the file's totals.
    pub fn finish(mut self) -> Result<WriterStats> {
        if self.body.len() != 0 {
            self.close_chunk(false)?;
        }
        self.out.finish(self.frame)
    }

    fn close_chunk(&mut self, ends_frame: bool) -> Result<()> {
        let meta = ChunkMeta {
            record_count: self.body.len() as u32,
            first_seq: self.chunk_first_seq,
            first_frame: self.chunk_first_frame,
            ends_frame,
            stored_records: true,
        };
        // The records go into the file as they are stored (compact ones compact); the
        // compression thread takes the body's bytes and gives it a buffer for its next
        // chunk, so no chunk's memory is allocated anew.
        let pool = Arc::clone(&self.spare_bodies);
        let spare = lock(&pool).pop().unwrap_or_default();
        let mut body = std::mem::replace(&mut self.body, spare);
        let fill = move |out: &mut Vec<u8>| {
            body.finish_into(out);
            let mut spare = lock(&pool);
            if spare.len() < SPARE_BODIES {
                spare.push(body);
            }
            Ok(())
        };
        self.out.write_chunk_filled_by(Box::new(fill), meta)
    }
}

/// Chunk bodies kept for reuse (each holds a chunk's memory).
const SPARE_BODIES: usize = 4;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The most bytes a chunk of stored records may lay out to: its compact records grow
/// (a draw's 32 bytes to 112), within twice the largest payload a chunk may hold.
const MAX_LAID_OUT: usize = 2 * crate::wire::MAX_CHUNK_UNCOMPRESSED as usize;

/// One verified chunk of a trace.
#[derive(Debug)]
pub struct TraceChunk {
    raw: RawChunk,
    /// The chunk's stored records, kept where records were handed over as they are
    /// stored (their fields lie here); empty otherwise.
    stored: Vec<u8>,
    /// The records handed over, in order ([`ReadOptions::direct`]).
    handed: Vec<StoredDirect>,
}

/// The stored records' buffer goes back to the pool with the chunk, as the laid-out
/// payload does ([`RawChunk`]'s drop): the next chunk decompresses into one and lays out
/// into the other, where a buffer lost here makes the next lay-out take fresh pages (a
/// chunk's lay-out is about four times its payload).
impl Drop for TraceChunk {
    fn drop(&mut self) {
        payload_pool::give(std::mem::take(&mut self.stored));
    }
}

impl TraceChunk {
    fn verify(mut raw: RawChunk, path: &Path, direct: DirectCalls) -> Result<Self> {
        let err = |kind: ErrorKind| Error::new(path, raw.location(), kind);
        if raw.header.flags & CHUNK_STORED_RECORDS != 0 {
            // Laid out by this reader, checked as it went: read unchecked as it is.
            let mut laid_out =
                payload_pool::take(raw.payload.len().saturating_mul(4).min(MAX_LAID_OUT));
            let mut handed = Vec::new();
            lay_out_stored_handing(
                &raw.payload,
                raw.header.first_seq,
                raw.header.record_count,
                MAX_LAID_OUT,
                direct,
                &mut laid_out,
                &mut handed,
            )
            .map_err(|e| err(e.into()))?;
            let stored = std::mem::replace(&mut raw.payload, laid_out);
            let stored = match handed.is_empty() {
                true => {
                    payload_pool::give(stored);
                    Vec::new()
                }
                false => stored,
            };
            #[cfg(debug_assertions)]
            if let Err(e) = crate::verify::verify_trace_payload(&raw.payload) {
                panic!("a chunk of stored records laid out unverifiable: {e}");
            }
            return Ok(TraceChunk {
                raw,
                stored,
                handed,
            });
        }
        crate::verify::verify_trace_payload(&raw.payload).map_err(|e| err(e.into()))?;
        // SAFETY: verified just above against the schema's layout.
        let batch = unsafe { flatbuffers::root_unchecked::<RecordBatch>(&raw.payload) };
        let actual = batch.records().map_or(0, |r| r.len()) as u64;
        let declared = u64::from(raw.header.record_count);
        if actual != declared {
            return Err(err(ErrorKind::RecordCount { declared, actual }));
        }
        Ok(TraceChunk {
            raw,
            stored: Vec::new(),
            handed: Vec::new(),
        })
    }

    /// The chunk's ordinal in the file.
    pub fn ordinal(&self) -> u64 {
        self.raw.ordinal
    }

    /// The file offset of the chunk's header.
    pub fn offset(&self) -> u64 {
        self.raw.offset
    }

    /// The chunk header (sizes, first sequence number, frame at start).
    pub fn header(&self) -> &crate::wire::ChunkHeader {
        &self.raw.header
    }

    /// The chunk's records.
    pub fn batch(&self) -> RecordBatch<'_> {
        // SAFETY: `verify` ran the flatbuffers verifier over exactly these bytes when the
        // chunk was made, and the bytes are never mutated afterwards.
        unsafe { flatbuffers::root_unchecked::<RecordBatch>(&self.raw.payload) }
    }

    /// The chunk's records read through their tables, in sequence order: every record,
    /// unless the reader was asked to hand some over ([`ReadOptions::direct`]), which
    /// only [`TraceChunk::entries`] gives.
    pub fn records(&self) -> impl Iterator<Item = Record<'_>> + '_ {
        self.batch().records().into_iter().flatten()
    }

    /// Every record of the chunk, in sequence order: the tables, and in their places
    /// the compact records handed over as they are stored ([`ReadOptions::direct`]).
    pub fn entries(&self) -> impl Iterator<Item = ChunkRecord<'_>> + '_ {
        let mut tables = self.records();
        let mut handed = self.handed.iter().peekable();
        let first_seq = self.raw.header.first_seq;
        let count = self.raw.header.record_count;
        (0..count).map_while(move |index| match handed.next_if(|h| h.index == index) {
            Some(h) => {
                let bytes = self
                    .stored
                    .get(h.start as usize..h.end as usize)
                    .unwrap_or_default();
                let seq = first_seq.wrapping_add(u64::from(index));
                Some(ChunkRecord::Direct(DirectRecord::new(seq, h.head, bytes)))
            }
            None => tables.next().map(ChunkRecord::Table),
        })
    }
}

/// How a reader spreads its work. The default reads on the calling thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Threads that checksum, decompress and verify chunks ahead of the consumer; 0
    /// does it all on the calling thread.
    pub threads: usize,
    /// Chunks a file must have left to read (by its footer index) for `threads` to read
    /// ahead of the consumer; where fewer are left, they are read on the calling thread
    /// (0: read ahead wherever `threads` says).
    pub fewest_chunks_ahead: usize,
    /// Calls whose compact records are handed over as they are stored, not laid out as
    /// tables ([`TraceChunk::entries`]); none by default.
    pub direct: DirectCalls,
}

impl ReadOptions {
    /// Read-ahead on one thread per core, for files of [`FEWEST_CHUNKS_AHEAD`] chunks
    /// or more.
    pub fn parallel() -> Self {
        ReadOptions {
            threads: available_cores(),
            fewest_chunks_ahead: FEWEST_CHUNKS_AHEAD,
            ..ReadOptions::default()
        }
    }

    /// Read-ahead for a replay through the driver model: [`replay_read_ahead_workers`]
    /// threads for the cores this process may use, which is as fast as a thread a core
    /// and holds fewer chunks in memory on a large machine; for files of
    /// [`FEWEST_CHUNKS_AHEAD`] chunks or more.
    pub fn for_replay() -> Self {
        ReadOptions {
            threads: replay_read_ahead_workers(available_cores()),
            fewest_chunks_ahead: FEWEST_CHUNKS_AHEAD,
            ..ReadOptions::default()
        }
    }

    /// Reading on `threads` read-ahead threads (0: on the calling thread), whatever the
    /// file's size.
    pub fn with_threads(threads: usize) -> Self {
        ReadOptions {
            threads,
            ..ReadOptions::default()
        }
    }
}

/// The chunks a file must have left for [`ReadOptions::parallel`] and
/// [`ReadOptions::for_replay`] to read ahead: the consumer waits for the first chunk
/// either way, and with one more there is less to overlap than the threads cost. The
/// glxgears sample (2 chunks) replays in 3.41 ms a pass read on the calling thread and
/// 4.93 ms read ahead (Fermi, 2 cores).
pub const FEWEST_CHUNKS_AHEAD: usize = 3;

/// The cores this process may run on (1 where that cannot be told).
fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// How many read-ahead workers a replay on `cores` cores gains from: one a core, at
/// most four. Replaying real programs' traces on 16 cores (median of 3, ms a pass): etr
/// 169 serial, 98 with 2 workers, 104 with 4, 94 with 15; Warzone 2100 58, 29, 24, 21;
/// chromium-bsu 27, 21, 21, 22: past four, more workers only hold more chunks in memory
/// (twice the workers, and one more). On 2 cores two workers still pay: `replay
/// --repeat 5` of DDNet took 493 ms against 532 serial, Neverball 177 against 212
/// (median of 15, interleaved).
pub fn replay_read_ahead_workers(cores: usize) -> usize {
    cores.clamp(1, 4)
}

/// Reads a trace file chunk by chunk, in file order.
pub struct TraceReader {
    stream: ChunkStream<TraceChunk>,
}

impl TraceReader {
    /// Opens a trace, to be read on the calling thread; fails if `path` is not a
    /// readable trace of this format version.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with(path, &ReadOptions::default())
    }

    /// Opens a trace with read-ahead as `options` say.
    pub fn open_with(path: &Path, options: &ReadOptions) -> Result<Self> {
        let inner = ContainerReader::open(path, Content::Trace)?;
        let direct = options.direct;
        Ok(TraceReader {
            stream: ChunkStream::new(
                inner,
                options.threads,
                options.fewest_chunks_ahead,
                Arc::new(move |raw, path| TraceChunk::verify(raw, path, direct)),
            ),
        })
    }

    /// The underlying container (header, footer index, file size).
    pub fn container(&self) -> &ContainerReader {
        self.stream.container()
    }

    /// Positions the reader at the chunk where `frame` begins, using the footer index
    /// or, without one, a scan of the chunk headers. A chunk may hold several frames
    /// (`WriterOptions::chunk_max_age`): the records before `frame` in that chunk belong
    /// to earlier ones — count the frame boundaries from the chunk's `first_frame`.
    pub fn seek_to_frame(&mut self, frame: u64) -> Result<()> {
        let index = self.stream.container_mut().scan_index()?;
        let frames = self.frames_begun_in(&index)?;
        let ordinal = index.iter().rposition(|e| e.first_frame <= frame);
        let inner = self.stream.container_mut();
        match ordinal {
            Some(ordinal) if frame < frames => {
                inner.seek_to(&index[ordinal], ordinal as u64);
                Ok(())
            }
            _ => Err(Error::new(
                inner.path(),
                Location::File,
                ErrorKind::NoSuchFrame { frame, frames },
            )),
        }
    }

    /// Frames with at least one record: the last chunk's first frame plus the frame
    /// boundaries it holds (and one for records after its last boundary). Leaves the
    /// reader after that chunk.
    pub fn frames_begun(&mut self) -> Result<u64> {
        let index = self.stream.container_mut().scan_index()?;
        self.frames_begun_in(&index)
    }

    fn frames_begun_in(&mut self, index: &[IndexEntry]) -> Result<u64> {
        let Some(last) = index.last() else {
            return Ok(0);
        };
        self.stream
            .container_mut()
            .seek_to(last, index.len() as u64 - 1);
        let Some(chunk) = self.stream.next() else {
            return Ok(last.first_frame + 1);
        };
        let (mut frames, mut trailing) = (last.first_frame, true);
        for record in chunk?.records() {
            if record.call_type() == Call::FrameBoundary {
                frames += 1;
                trailing = false;
            } else {
                trailing = true;
            }
        }
        Ok(frames + u64::from(trailing))
    }
}

impl Iterator for TraceReader {
    type Item = Result<TraceChunk>;

    fn next(&mut self) -> Option<Self::Item> {
        self.stream.next()
    }
}

#[cfg(test)]
mod tests {
    use super::replay_read_ahead_workers;

    #[test]
    fn a_replay_reads_ahead_on_a_worker_a_core_up_to_four() {
        assert_eq!(replay_read_ahead_workers(0), 1);
        assert_eq!(replay_read_ahead_workers(1), 1);
        // This 2-core machine.
        assert_eq!(replay_read_ahead_workers(2), 2);
        assert_eq!(replay_read_ahead_workers(4), 4);
        // Past four workers a replay is no faster (the device host's 16 cores).
        assert_eq!(replay_read_ahead_workers(16), 4);
        assert_eq!(replay_read_ahead_workers(128), 4);
    }
}
