//! Writing a container. The caller hands over finished payloads; compression threads
//! compress them and each chunk is written, in the order the caller gave them, with one
//! `write_all`, and at `finish` the footer index. One compression thread writes its
//! chunks itself (they come out in order); several hand theirs to a writer thread,
//! which puts them back in order. A process
//! killed at any point leaves every chunk written so far whole and readable (at worst
//! the last one is torn, which readers report and stop at). Memory stays bounded: the
//! queue to the compressors holds `queue_depth` chunks, and so does the one to the
//! writer thread where there is one.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Location, Result};
use crate::wire::{
    ChunkHeader, Content, FileHeader, IndexEntry, Trailer, CHUNK_ENDS_FRAME, CHUNK_HEADER_LEN,
    CHUNK_STORED_RECORDS, FILE_HEADER_LEN, MAX_CHUNK_UNCOMPRESSED,
};

/// How a writer compresses and buffers.
#[derive(Clone, Debug)]
pub struct WriterOptions {
    /// zstd level (1 = fastest; negative levels trade ratio for speed).
    pub compression_level: i32,
    /// Finished chunks that may wait for the background thread before the caller
    /// blocks. Bounds the writer's memory at about `queue_depth × chunk_target_bytes`.
    pub queue_depth: usize,
    /// A chunk is closed once its payload reaches this size (and at a frame end, see
    /// `chunk_max_age`).
    pub chunk_target_bytes: usize,
    /// How frames share chunks. `None`: a chunk ends at every frame boundary. `Some(age)`:
    /// a chunk ends at the first frame boundary once it holds `age` of recording (or at
    /// `chunk_target_bytes`), so small frames are compressed together — a program
    /// killed mid-capture loses at most that much. Readers number records' frames by
    /// counting frame boundaries from the chunk's first frame either way.
    pub chunk_max_age: Option<std::time::Duration>,
    /// Threads compressing chunks (at least one). Chunks are written in the order they
    /// were given whichever thread compressed them.
    pub compression_threads: usize,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            compression_level: 3,
            queue_depth: 8,
            chunk_target_bytes: 1 << 20,
            chunk_max_age: None,
            compression_threads: 1,
        }
    }
}

/// What one chunk's payload holds, as the caller knows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChunkMeta {
    /// Records (or rows) in the payload.
    pub record_count: u32,
    /// Sequence number of the first record.
    pub first_seq: u64,
    /// Frame in progress at the first record.
    pub first_frame: u64,
    /// The last record closes a frame.
    pub ends_frame: bool,
    /// The payload is a trace chunk's records as stored
    /// (`record_block::ChunkBody`), not a laid-out `RecordBatch`.
    pub stored_records: bool,
}

impl ChunkMeta {
    /// The chunk header's flags for this chunk.
    fn flags(&self) -> u32 {
        let mut flags = 0;
        if self.ends_frame {
            flags |= CHUNK_ENDS_FRAME;
        }
        if self.stored_records {
            flags |= CHUNK_STORED_RECORDS;
        }
        flags
    }
}

/// Totals of a finished file, and where its writing spent time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// Chunks written.
    pub chunks: u64,
    /// Records written.
    pub records: u64,
    /// Payload bytes before compression.
    pub uncompressed_bytes: u64,
    /// Bytes of the whole file.
    pub file_bytes: u64,
    /// Time the compression threads spent laying chunks out and compressing them,
    /// summed over the threads.
    pub compressing: Duration,
    /// Time the caller waited to queue a chunk while every compression thread was busy
    /// and the queue full (back-pressure from compression).
    pub queue_waits: Duration,
}

/// Fills the buffer given with a chunk's payload, on the compression thread that takes
/// the chunk (so that whatever that costs, a copy or a buffer swap, runs beside the
/// thread that gathered it); an `Err` says what went wrong, and stops the file there.
pub type PayloadFiller = Box<dyn FnOnce(&mut Vec<u8>) -> std::result::Result<(), String> + Send>;

/// A chunk's payload as handed to the compression threads.
enum Payload {
    /// Ready: the bytes from `start` on.
    Ready { bytes: Vec<u8>, start: usize },
    /// Written into the thread's buffer first.
    Filler(PayloadFiller),
}

/// A payload for a compression thread, with its place in the file.
struct Job {
    ticket: u64,
    payload: Payload,
    meta: ChunkMeta,
}

/// How the file ends, set by `finish` before the threads are told to stop: the frame
/// count and the chunks queued, for the footer. Left unset (a writer dropped unfinished),
/// the file ends without a footer, as a killed process leaves it.
type Ending = Arc<Mutex<Option<(u64, u64)>>>;

/// A compressed chunk, header and all, ready to write.
struct Compressed {
    ticket: u64,
    bytes: Vec<u8>,
    meta: ChunkMeta,
    flags: u32,
    uncompressed_len: u64,
    /// Time spent laying it out and compressing it.
    work: Duration,
}

/// Streams chunks to a file through background compression and writer threads.
pub struct ContainerWriter {
    path: PathBuf,
    jobs: Option<SyncSender<Job>>,
    next_ticket: u64,
    /// With several compression threads: they hand their chunks to `thread`.
    compressors: Vec<JoinHandle<()>>,
    recycled: Receiver<Vec<u8>>,
    /// Writes the chunks (and, with one compression thread, compresses them first).
    thread: Option<JoinHandle<Result<WriterStats>>>,
    ending: Ending,
    /// Time spent waiting on a full compression queue.
    queue_waits: Duration,
}

impl ContainerWriter {
    /// Creates (or truncates) `path` and writes the file header.
    pub fn create(path: &Path, content: Content, options: &WriterOptions) -> Result<Self> {
        let file =
            File::create(path).map_err(|e| Error::new(path, Location::File, ErrorKind::Io(e)))?;
        Self::create_in(file, path, content, options)
    }

    /// Writes the file header into `file`, opened for writing, empty, and known as
    /// `path` (in errors and to the writer's threads), and the container after it.
    pub fn create_in(
        mut file: File,
        path: &Path,
        content: Content,
        options: &WriterOptions,
    ) -> Result<Self> {
        let io_err = |e| Error::new(path, Location::File, ErrorKind::Io(e));
        file.write_all(&FileHeader::new(content).to_bytes())
            .map_err(io_err)?;
        let depth = options.queue_depth.max(1);
        let (jobs, job_rx) = mpsc::sync_channel::<Job>(depth);
        let (recycle_tx, recycled) = mpsc::sync_channel(depth + 1);
        let ending = Ending::default();
        let background = Background::new(file, path.to_path_buf(), ending.clone());
        let compressor = || zstd::bulk::Compressor::new(options.compression_level).map_err(io_err);
        let threads = options.compression_threads.max(1);
        let mut compressors = Vec::new();
        let thread = if threads == 1 {
            // One thread compresses and writes: no hand-over between two threads a chunk.
            let mut compressor = Compressor::new(compressor()?, path, recycle_tx);
            std::thread::Builder::new()
                .name("macroscope-zstd".into())
                .spawn(move || background.run(job_rx.iter().map(|job| compressor.compress(job))))
                .map_err(io_err)?
        } else {
            let (written, written_rx) = mpsc::sync_channel(depth);
            let job_rx = Arc::new(Mutex::new(job_rx));
            for i in 0..threads {
                let mut compressor = Compressor::new(compressor()?, path, recycle_tx.clone());
                let (job_rx, written) = (job_rx.clone(), written.clone());
                let handle = std::thread::Builder::new()
                    .name(format!("macroscope-zstd-{i}"))
                    .spawn(move || compressor.compress_jobs(&job_rx, &written))
                    .map_err(io_err)?;
                compressors.push(handle);
            }
            std::thread::Builder::new()
                .name("macroscope-writer".into())
                .spawn(move || background.run(written_rx))
                .map_err(io_err)?
        };
        Ok(ContainerWriter {
            path: path.to_path_buf(),
            jobs: Some(jobs),
            next_ticket: 0,
            compressors,
            recycled,
            thread: Some(thread),
            ending,
            queue_waits: Duration::ZERO,
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues `payload[start..]` as one chunk. Blocks only while the queue is full.
    pub fn write_chunk(&mut self, payload: Vec<u8>, start: usize, meta: ChunkMeta) -> Result<()> {
        let len = payload.len().saturating_sub(start);
        if len > MAX_CHUNK_UNCOMPRESSED as usize {
            return Err(too_large(&self.path, len));
        }
        self.queue(
            Payload::Ready {
                bytes: payload,
                start,
            },
            meta,
        )
    }

    /// Queues one chunk whose payload `filler` writes, on the compression thread that
    /// takes it. Blocks only while the queue is full.
    pub fn write_chunk_filled_by(&mut self, filler: PayloadFiller, meta: ChunkMeta) -> Result<()> {
        self.queue(Payload::Filler(filler), meta)
    }

    fn queue(&mut self, payload: Payload, meta: ChunkMeta) -> Result<()> {
        let job = Job {
            ticket: self.next_ticket,
            payload,
            meta,
        };
        let sent = match &self.jobs {
            Some(jobs) => match jobs.try_send(job) {
                Ok(()) => true,
                Err(TrySendError::Full(job)) => {
                    let start = Instant::now();
                    let sent = jobs.send(job).is_ok();
                    self.queue_waits += start.elapsed();
                    sent
                }
                Err(TrySendError::Disconnected(_)) => false,
            },
            None => false,
        };
        if sent {
            self.next_ticket += 1;
            return Ok(());
        }
        // The threads have stopped: the writer's own error says why.
        self.stop_compressors();
        Err(self
            .join()
            .err()
            .unwrap_or_else(|| Error::new(&self.path, Location::File, ErrorKind::WriterGone)))
    }

    /// A buffer the background threads are done with, for the caller to reuse.
    pub fn recycled_buffer(&mut self) -> Option<Vec<u8>> {
        self.recycled.try_recv().ok()
    }

    /// Writes the footer index, waits for the background threads, and returns totals.
    pub fn finish(mut self, frame_count: u64) -> Result<WriterStats> {
        *self.ending.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((frame_count, self.next_ticket));
        self.stop_compressors();
        let queue_waits = self.queue_waits;
        self.join().map(|stats| WriterStats {
            queue_waits,
            ..stats
        })
    }

    /// Closes the compressors' queue and waits until they have handed on every chunk.
    fn stop_compressors(&mut self) {
        self.jobs = None;
        for handle in self.compressors.drain(..) {
            let _ = handle.join();
        }
    }

    fn join(&mut self) -> Result<WriterStats> {
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) | None => Err(Error::new(
                &self.path,
                Location::File,
                ErrorKind::WriterGone,
            )),
        }
    }
}

impl Drop for ContainerWriter {
    fn drop(&mut self) {
        // Not finished: let the threads write what they were given, without a footer,
        // as a killed process would leave it.
        self.stop_compressors();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The error for a chunk payload of `len` bytes, over the format's bound.
fn too_large(path: &Path, len: usize) -> Error {
    Error::new(
        path,
        Location::File,
        ErrorKind::SizeLimit {
            what: "chunk payload",
            declared: len as u64,
            limit: MAX_CHUNK_UNCOMPRESSED.into(),
        },
    )
}

/// What a compression thread keeps from chunk to chunk.
struct Compressor {
    zstd: zstd::bulk::Compressor<'static>,
    path: PathBuf,
    /// Fillers write their payloads here, one buffer kept from job to job.
    filled: Vec<u8>,
    /// Ready payloads' buffers go back to the caller through this.
    recycle: SyncSender<Vec<u8>>,
}

impl Compressor {
    fn new(
        zstd: zstd::bulk::Compressor<'static>,
        path: &Path,
        recycle: SyncSender<Vec<u8>>,
    ) -> Self {
        Compressor {
            zstd,
            path: path.to_path_buf(),
            filled: Vec::new(),
            recycle,
        }
    }

    /// Takes jobs until the queue closes, handing each compressed chunk to the writer
    /// thread (stopping when the writer has stopped).
    fn compress_jobs(
        &mut self,
        jobs: &Mutex<Receiver<Job>>,
        written: &SyncSender<Result<Compressed>>,
    ) {
        loop {
            let job = match jobs.lock() {
                Ok(rx) => rx.recv(),
                Err(_) => return,
            };
            let Ok(job) = job else {
                return;
            };
            if written.send(self.compress(job)).is_err() {
                return;
            }
        }
    }

    /// Lays out (where a filler writes it) and compresses one job's payload.
    fn compress(&mut self, job: Job) -> Result<Compressed> {
        let start = Instant::now();
        let path = &self.path;
        let result = match job.payload {
            Payload::Ready { bytes, start } => {
                let data = bytes.get(start..).unwrap_or(&[]);
                let result = compress(&mut self.zstd, path, job.ticket, job.meta, data);
                let _ = self.recycle.try_send(bytes);
                result
            }
            Payload::Filler(fill) => match fill(&mut self.filled) {
                Ok(()) if self.filled.len() > MAX_CHUNK_UNCOMPRESSED as usize => {
                    Err(too_large(path, self.filled.len()))
                }
                Ok(()) => compress(&mut self.zstd, path, job.ticket, job.meta, &self.filled),
                Err(why) => Err(Error::new(
                    path,
                    Location::File,
                    ErrorKind::Unsupported(why),
                )),
            },
        };
        result.map(|chunk| Compressed {
            work: start.elapsed(),
            ..chunk
        })
    }
}

/// Compresses a job's payload into a whole chunk: header, then the zstd frame.
fn compress(
    compressor: &mut zstd::bulk::Compressor<'static>,
    path: &Path,
    ticket: u64,
    meta: ChunkMeta,
    data: &[u8],
) -> Result<Compressed> {
    let bound = zstd::zstd_safe::compress_bound(data.len());
    // The frame goes after room for the header, into capacity zstd writes without it
    // being cleared first (a cleared bound cost as much as a fast level's compression).
    let mut out = Vec::with_capacity(CHUNK_HEADER_LEN + bound);
    out.resize(CHUNK_HEADER_LEN, 0);
    let mut frame = std::io::Cursor::new(out);
    frame.set_position(CHUNK_HEADER_LEN as u64);
    let compressed_len = compressor
        .compress_to_buffer(data, &mut frame)
        .map_err(|e| Error::new(path, Location::File, ErrorKind::Io(e)))?;
    let mut out = frame.into_inner();
    out.truncate(CHUNK_HEADER_LEN + compressed_len);
    let mut header = ChunkHeader {
        flags: meta.flags(),
        compressed_len: compressed_len as u32,
        uncompressed_len: data.len() as u32,
        record_count: meta.record_count,
        crc32: 0,
        first_seq: meta.first_seq,
        first_frame: meta.first_frame,
    };
    header.crc32 = header.compute_crc(&out[CHUNK_HEADER_LEN..]);
    out[..CHUNK_HEADER_LEN].copy_from_slice(&header.to_bytes());
    Ok(Compressed {
        ticket,
        bytes: out,
        meta,
        flags: header.flags,
        uncompressed_len: data.len() as u64,
        work: Duration::ZERO,
    })
}

/// The state of the thread that writes the file.
struct Background {
    file: File,
    path: PathBuf,
    index: Vec<IndexEntry>,
    offset: u64,
    stats: WriterStats,
    /// Chunks compressed ahead of their turn, by ticket.
    early: BTreeMap<u64, Compressed>,
    ending: Ending,
}

impl Background {
    fn new(file: File, path: PathBuf, ending: Ending) -> Self {
        Background {
            file,
            path,
            index: Vec::new(),
            offset: FILE_HEADER_LEN as u64,
            stats: WriterStats::default(),
            early: BTreeMap::new(),
            ending,
        }
    }

    /// Writes chunks in ticket order as they come; once they stop coming, the footer
    /// where the writer was finished and every chunk it queued is written. Stops at the
    /// first error.
    fn run(mut self, chunks: impl IntoIterator<Item = Result<Compressed>>) -> Result<WriterStats> {
        for chunk in chunks {
            let chunk = chunk?;
            self.early.insert(chunk.ticket, chunk);
            while let Some(next) = self.early.remove(&self.stats.chunks) {
                self.write_chunk(next)?;
            }
        }
        let ending = *self.ending.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((frame_count, chunks)) = ending {
            if self.stats.chunks == chunks {
                self.write_footer(frame_count)?;
            }
        }
        self.stats.file_bytes = self.offset;
        Ok(self.stats)
    }

    fn write_chunk(&mut self, chunk: Compressed) -> Result<()> {
        let location = Location::Chunk {
            index: self.stats.chunks,
            offset: self.offset,
        };
        self.file
            .write_all(&chunk.bytes)
            .map_err(|e| Error::new(&self.path, location, ErrorKind::Io(e)))?;
        let meta = chunk.meta;
        self.index.push(IndexEntry {
            offset: self.offset,
            first_seq: meta.first_seq,
            first_frame: meta.first_frame,
            record_count: meta.record_count,
            flags: chunk.flags,
        });
        self.offset += chunk.bytes.len() as u64;
        self.stats.chunks += 1;
        self.stats.records += u64::from(meta.record_count);
        self.stats.uncompressed_bytes += chunk.uncompressed_len;
        self.stats.compressing += chunk.work;
        Ok(())
    }

    fn write_footer(&mut self, frame_count: u64) -> Result<()> {
        let location = Location::Footer {
            offset: self.offset,
        };
        let mut bytes = Vec::with_capacity(self.index.len() * 32 + 32);
        for entry in &self.index {
            bytes.extend_from_slice(&entry.to_bytes());
        }
        let entry_count = u32::try_from(self.index.len()).map_err(|_| {
            Error::new(
                &self.path,
                location,
                ErrorKind::Unsupported("more than 2^32 chunks".into()),
            )
        })?;
        let mut trailer = Trailer {
            index_offset: self.offset,
            entry_count,
            crc32: 0,
            frame_count,
        };
        trailer.crc32 = trailer.compute_crc(&bytes);
        bytes.extend_from_slice(&trailer.to_bytes());
        self.file
            .write_all(&bytes)
            .and_then(|()| self.file.flush())
            .map_err(|e| Error::new(&self.path, location, ErrorKind::Io(e)))?;
        self.offset += bytes.len() as u64;
        Ok(())
    }
}
