//! Writing a container. The caller hands over finished payloads; a background thread
//! compresses them, writes each chunk with one `write_all`, and at `finish` writes the
//! footer index. A process killed at any point leaves every chunk written so far whole
//! and readable (at worst the last one is torn, which readers report and stop at).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use crate::error::{Error, ErrorKind, Location, Result};
use crate::wire::{
    ChunkHeader, Content, FileHeader, IndexEntry, Trailer, CHUNK_ENDS_FRAME, CHUNK_HEADER_LEN,
    FILE_HEADER_LEN, MAX_CHUNK_UNCOMPRESSED,
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
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            compression_level: 3,
            queue_depth: 8,
            chunk_target_bytes: 1 << 20,
            chunk_max_age: None,
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
}

/// Totals of a finished file.
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
}

enum Message {
    Chunk {
        payload: Vec<u8>,
        start: usize,
        meta: ChunkMeta,
    },
    Finish {
        frame_count: u64,
    },
}

/// Streams chunks to a file through a background compression thread.
pub struct ContainerWriter {
    path: PathBuf,
    jobs: Option<SyncSender<Message>>,
    recycled: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<Result<WriterStats>>>,
}

impl ContainerWriter {
    /// Creates (or truncates) `path` and writes the file header.
    pub fn create(path: &Path, content: Content, options: &WriterOptions) -> Result<Self> {
        let io_err = |e| Error::new(path, Location::File, ErrorKind::Io(e));
        let mut file = File::create(path).map_err(io_err)?;
        file.write_all(&FileHeader::new(content).to_bytes())
            .map_err(io_err)?;
        let (jobs, job_rx) = mpsc::sync_channel(options.queue_depth.max(1));
        let (recycle_tx, recycled) = mpsc::sync_channel(options.queue_depth.max(1) + 1);
        let level = options.compression_level;
        let thread_path = path.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("macroscope-writer".into())
            .spawn(move || Background::new(file, thread_path, level)?.run(job_rx, recycle_tx))
            .map_err(io_err)?;
        Ok(ContainerWriter {
            path: path.to_path_buf(),
            jobs: Some(jobs),
            recycled,
            thread: Some(thread),
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
            return Err(Error::new(
                &self.path,
                Location::File,
                ErrorKind::SizeLimit {
                    what: "chunk payload",
                    declared: len as u64,
                    limit: MAX_CHUNK_UNCOMPRESSED.into(),
                },
            ));
        }
        self.send(Message::Chunk {
            payload,
            start,
            meta,
        })
    }

    /// A buffer the background thread is done with, for the caller to reuse.
    pub fn recycled_buffer(&mut self) -> Option<Vec<u8>> {
        self.recycled.try_recv().ok()
    }

    /// Writes the footer index, waits for the background thread, and returns totals.
    pub fn finish(mut self, frame_count: u64) -> Result<WriterStats> {
        self.send(Message::Finish { frame_count })?;
        self.jobs = None;
        self.join()
    }

    fn send(&mut self, message: Message) -> Result<()> {
        let sent = match &self.jobs {
            Some(jobs) => jobs.send(message).is_ok(),
            None => false,
        };
        if sent {
            return Ok(());
        }
        // The thread has stopped: its own error says why.
        self.jobs = None;
        Err(self
            .join()
            .err()
            .unwrap_or_else(|| Error::new(&self.path, Location::File, ErrorKind::WriterGone)))
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
        // Not finished: let the thread write what it was given, without a footer, as a
        // killed process would leave it.
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The background thread's state.
struct Background {
    file: File,
    path: PathBuf,
    compressor: zstd::bulk::Compressor<'static>,
    out: Vec<u8>,
    index: Vec<IndexEntry>,
    offset: u64,
    stats: WriterStats,
}

impl Background {
    fn new(file: File, path: PathBuf, level: i32) -> Result<Self> {
        let compressor = zstd::bulk::Compressor::new(level)
            .map_err(|e| Error::new(&path, Location::File, ErrorKind::Io(e)))?;
        Ok(Background {
            file,
            path,
            compressor,
            out: Vec::new(),
            index: Vec::new(),
            offset: FILE_HEADER_LEN as u64,
            stats: WriterStats::default(),
        })
    }

    fn run(mut self, jobs: Receiver<Message>, recycle: SyncSender<Vec<u8>>) -> Result<WriterStats> {
        for message in jobs {
            match message {
                Message::Chunk {
                    payload,
                    start,
                    meta,
                } => {
                    self.write_chunk(&payload[start..], meta)?;
                    let _ = recycle.try_send(payload);
                }
                Message::Finish { frame_count } => {
                    self.write_footer(frame_count)?;
                    break;
                }
            }
        }
        self.stats.file_bytes = self.offset;
        Ok(self.stats)
    }

    fn write_chunk(&mut self, data: &[u8], meta: ChunkMeta) -> Result<()> {
        let location = Location::Chunk {
            index: self.stats.chunks,
            offset: self.offset,
        };
        let bound = zstd::zstd_safe::compress_bound(data.len());
        self.out.clear();
        self.out.resize(CHUNK_HEADER_LEN + bound, 0);
        let compressed_len = self
            .compressor
            .compress_to_buffer(data, &mut self.out[CHUNK_HEADER_LEN..])
            .map_err(|e| Error::new(&self.path, location, ErrorKind::Io(e)))?;
        self.out.truncate(CHUNK_HEADER_LEN + compressed_len);
        let mut header = ChunkHeader {
            flags: if meta.ends_frame { CHUNK_ENDS_FRAME } else { 0 },
            compressed_len: compressed_len as u32,
            uncompressed_len: data.len() as u32,
            record_count: meta.record_count,
            crc32: 0,
            first_seq: meta.first_seq,
            first_frame: meta.first_frame,
        };
        header.crc32 = header.compute_crc(&self.out[CHUNK_HEADER_LEN..]);
        self.out[..CHUNK_HEADER_LEN].copy_from_slice(&header.to_bytes());
        self.file
            .write_all(&self.out)
            .map_err(|e| Error::new(&self.path, location, ErrorKind::Io(e)))?;
        self.index.push(IndexEntry {
            offset: self.offset,
            first_seq: meta.first_seq,
            first_frame: meta.first_frame,
            record_count: meta.record_count,
            flags: header.flags,
        });
        self.offset += self.out.len() as u64;
        self.stats.chunks += 1;
        self.stats.records += u64::from(meta.record_count);
        self.stats.uncompressed_bytes += data.len() as u64;
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
