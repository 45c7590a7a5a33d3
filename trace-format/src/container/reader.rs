//! Reading a container: the header, the footer index when there is a sound one, and
//! chunks one at a time, each bounded, checksummed and decompressed before use.
//!
//! Reading never depends on the footer: chunks follow one another from offset 16, so a
//! file cut off by a crash reads up to its last whole chunk, and the first torn or
//! corrupt chunk ends the stream with an error naming its offset.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind, Location, Result};
use crate::wire::{
    ChunkHeader, Content, FileHeader, HeaderProblem, IndexEntry, Trailer, CHUNK_HEADER_LEN,
    CHUNK_MAGIC, FILE_HEADER_LEN, FORMAT_VERSION, INDEX_ENTRY_LEN, MAX_CHUNK_COMPRESSED,
    MAX_CHUNK_UNCOMPRESSED, TRAILER_LEN,
};

/// One chunk, checked and decompressed.
#[derive(Debug)]
pub struct RawChunk {
    /// Its header.
    pub header: ChunkHeader,
    /// Ordinal of the chunk in the file, from 0.
    pub ordinal: u64,
    /// File offset of its header.
    pub offset: u64,
    /// The decompressed payload, exactly `header.uncompressed_len` bytes. Its buffer
    /// goes back to the reader's pool when the chunk is dropped (take it with
    /// `std::mem::take` to keep it).
    pub payload: Vec<u8>,
}

impl Drop for RawChunk {
    fn drop(&mut self) {
        payload_pool::give(std::mem::take(&mut self.payload));
    }
}

/// Payload buffers given back by dropped chunks, for the next chunks to decompress
/// into. A reader goes through a trace a chunk (a megabyte or so) at a time: taking
/// the buffer the chunk before it left, it writes memory already mapped, where a new
/// buffer each time is fresh pages from the kernel, each faulted in and cleared.
pub(crate) mod payload_pool {
    use std::sync::{Mutex, PoisonError};

    /// Buffers kept at most: a reader with read-ahead holds a few chunks at once.
    const MAX_BUFFERS: usize = 8;
    /// The largest buffer kept.
    const MAX_BYTES: usize = 64 << 20;

    static POOL: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

    /// An empty buffer with room for `capacity` bytes, given back earlier if one is.
    pub(crate) fn take(capacity: usize) -> Vec<u8> {
        let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
        // The smallest that fits: a reader of stored records takes two buffers a chunk,
        // one for the payload and a larger one for its lay-out, and the larger ones
        // must stay for the lay-outs.
        let fitting = pool
            .iter()
            .enumerate()
            .filter(|(_, b)| b.capacity() >= capacity)
            .min_by_key(|(_, b)| b.capacity())
            .map(|(i, _)| i);
        match fitting {
            Some(i) => pool.swap_remove(i),
            None => {
                drop(pool);
                Vec::with_capacity(capacity)
            }
        }
    }

    /// Keeps `buffer` (emptied) for a later [`take`], unless enough are kept.
    pub(crate) fn give(mut buffer: Vec<u8>) {
        if buffer.capacity() == 0 || buffer.capacity() > MAX_BYTES {
            return;
        }
        buffer.clear();
        let mut pool = POOL.lock().unwrap_or_else(PoisonError::into_inner);
        if pool.len() < MAX_BUFFERS {
            pool.push(buffer);
        }
    }
}

impl RawChunk {
    /// Where the chunk is, for error messages.
    pub fn location(&self) -> Location {
        Location::Chunk {
            index: self.ordinal,
            offset: self.offset,
        }
    }
}

/// One chunk as read from the file: its header (bounds already checked) and its
/// compressed payload, not yet checksummed or decompressed.
#[derive(Debug)]
pub struct CompressedChunk {
    /// Its header.
    pub header: ChunkHeader,
    /// Ordinal of the chunk in the file, from 0.
    pub ordinal: u64,
    /// File offset of its header.
    pub offset: u64,
    /// The compressed payload.
    pub bytes: Vec<u8>,
}

impl CompressedChunk {
    /// Checks the checksum and decompresses to exactly the declared size.
    pub fn decompress(
        self,
        path: &Path,
        decompressor: &mut zstd::bulk::Decompressor<'_>,
    ) -> Result<RawChunk> {
        let location = Location::Chunk {
            index: self.ordinal,
            offset: self.offset,
        };
        let err = |kind: ErrorKind| Error::new(path, location, kind);
        let header = self.header;
        let computed = header.compute_crc(&self.bytes);
        if computed != header.crc32 {
            return Err(err(ErrorKind::ChecksumMismatch {
                stored: header.crc32,
                computed,
            }));
        }
        let declared = header.uncompressed_len as usize;
        let mut payload = payload_pool::take(declared);
        decompressor
            .decompress_to_buffer(&self.bytes[..], &mut payload)
            .map_err(|e| err(ErrorKind::Decompress(e.to_string())))?;
        if payload.len() != declared {
            return Err(err(ErrorKind::DecompressedSize {
                declared: declared as u64,
                actual: payload.len() as u64,
            }));
        }
        Ok(RawChunk {
            header,
            ordinal: self.ordinal,
            offset: self.offset,
            payload,
        })
    }
}

/// The footer as read and checked.
#[derive(Debug)]
struct Footer {
    trailer: Trailer,
    entries: Vec<IndexEntry>,
}

/// Reads chunks in file order, from the start or from an indexed position.
pub struct ContainerReader {
    path: PathBuf,
    file: File,
    file_len: u64,
    header: FileHeader,
    footer: Option<Footer>,
    chunks_end: u64,
    pos: u64,
    ordinal: u64,
    stopped: bool,
    decompressor: zstd::bulk::Decompressor<'static>,
}

impl ContainerReader {
    /// Opens `path`, checks its header is of `content`, and reads its footer if present.
    /// A footer that is present but inconsistent with the file is an error.
    pub fn open(path: &Path, content: Content) -> Result<Self> {
        let at_file = |kind: ErrorKind| Error::new(path, Location::File, kind);
        let mut file = File::open(path).map_err(|e| at_file(e.into()))?;
        let file_len = file.metadata().map_err(|e| at_file(e.into()))?.len();
        let header = read_file_header(path, &mut file, file_len)?;
        if header.content != content {
            return Err(Error::new(
                path,
                Location::Header,
                ErrorKind::WrongContent {
                    expected: content.name(),
                    found: header.content.name(),
                },
            ));
        }
        let footer = read_footer(path, &mut file, file_len)?;
        let chunks_end = footer.as_ref().map_or(file_len, |f| f.trailer.index_offset);
        let decompressor = zstd::bulk::Decompressor::new().map_err(|e| at_file(e.into()))?;
        Ok(ContainerReader {
            path: path.to_path_buf(),
            file,
            file_len,
            header,
            footer,
            chunks_end,
            pos: FILE_HEADER_LEN as u64,
            ordinal: 0,
            stopped: false,
            decompressor,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// The file header.
    pub fn header(&self) -> FileHeader {
        self.header
    }

    /// The footer index, when the file was finished.
    pub fn index(&self) -> Option<&[IndexEntry]> {
        self.footer.as_ref().map(|f| f.entries.as_slice())
    }

    /// Frames the footer says the file completes, when it has a footer.
    pub fn footer_frame_count(&self) -> Option<u64> {
        self.footer.as_ref().map(|f| f.trailer.frame_count)
    }

    /// Chunks from the reading position to the end, as the footer index lists them;
    /// `None` without one.
    pub fn chunks_left(&self) -> Option<usize> {
        let index = self.index()?;
        Some(
            index
                .iter()
                .filter(|entry| entry.offset >= self.pos)
                .count(),
        )
    }

    /// Moves to the chunk at `entry` (from [`Self::index`] or [`Self::scan_index`]),
    /// which becomes chunk number `ordinal`.
    pub fn seek_to(&mut self, entry: &IndexEntry, ordinal: u64) {
        self.pos = entry.offset;
        self.ordinal = ordinal;
        self.stopped = false;
    }

    /// A second reader of the same file at the same position, for a read-ahead thread.
    pub fn reopen(&self) -> Result<Self> {
        let mut other = ContainerReader::open(&self.path, self.header.content)?;
        other.pos = self.pos;
        other.ordinal = self.ordinal;
        other.stopped = self.stopped;
        Ok(other)
    }

    /// Ordinal of the chunk the next read returns.
    pub fn next_ordinal(&self) -> u64 {
        self.ordinal
    }

    /// Ends iteration: `next_chunk` returns `None` from now on.
    pub fn stop(&mut self) {
        self.stopped = true;
    }

    /// Moves back to the first chunk.
    pub fn rewind(&mut self) {
        self.pos = FILE_HEADER_LEN as u64;
        self.ordinal = 0;
        self.stopped = false;
    }

    /// The index from the footer or, without one, built by reading every chunk header
    /// (payloads are skipped, not checked). Stops with an error at a torn or bad header.
    pub fn scan_index(&mut self) -> Result<Vec<IndexEntry>> {
        if let Some(entries) = self.index() {
            return Ok(entries.to_vec());
        }
        let mut entries = Vec::new();
        let mut pos = FILE_HEADER_LEN as u64;
        let mut ordinal = 0;
        while pos < self.chunks_end {
            let header = self.read_chunk_header(pos, ordinal)?;
            entries.push(IndexEntry {
                offset: pos,
                first_seq: header.first_seq,
                first_frame: header.first_frame,
                record_count: header.record_count,
                flags: header.flags,
            });
            pos += (CHUNK_HEADER_LEN as u64) + u64::from(header.compressed_len);
            ordinal += 1;
        }
        Ok(entries)
    }

    /// The next chunk, checked and decompressed; `None` after the last one or after an
    /// error.
    pub fn next_chunk(&mut self) -> Option<Result<RawChunk>> {
        let compressed = match self.next_compressed()? {
            Ok(compressed) => compressed,
            Err(e) => return Some(Err(e)),
        };
        let result = compressed.decompress(&self.path, &mut self.decompressor);
        if result.is_err() {
            self.stopped = true;
        }
        Some(result)
    }

    /// The next chunk's header and compressed bytes, bounds-checked but not yet
    /// checksummed or decompressed; `None` after the last one or after an error.
    pub fn next_compressed(&mut self) -> Option<Result<CompressedChunk>> {
        if self.stopped || self.pos >= self.chunks_end {
            return None;
        }
        let (offset, ordinal) = (self.pos, self.ordinal);
        let result = self.read_chunk_header(offset, ordinal).and_then(|header| {
            let io_error = |e| {
                Error::new(
                    &self.path,
                    Location::Chunk {
                        index: ordinal,
                        offset,
                    },
                    ErrorKind::Io(e),
                )
            };
            // The header's length is within the file (checked above); read into room
            // made for it, not zeroed first.
            let len = header.compressed_len as usize;
            let mut bytes = Vec::with_capacity(len);
            let read = (&mut self.file)
                .take(len as u64)
                .read_to_end(&mut bytes)
                .map_err(io_error)?;
            if read != len {
                return Err(io_error(std::io::ErrorKind::UnexpectedEof.into()));
            }
            Ok(CompressedChunk {
                header,
                ordinal,
                offset,
                bytes,
            })
        });
        match &result {
            Ok(chunk) => {
                self.pos =
                    offset + CHUNK_HEADER_LEN as u64 + u64::from(chunk.header.compressed_len);
                self.ordinal += 1;
            }
            Err(_) => self.stopped = true,
        }
        Some(result)
    }

    /// Reads and bounds-checks the chunk header at `offset`, leaving the file positioned
    /// at its payload.
    fn read_chunk_header(&mut self, offset: u64, ordinal: u64) -> Result<ChunkHeader> {
        let location = Location::Chunk {
            index: ordinal,
            offset,
        };
        let err = |kind: ErrorKind| Error::new(&self.path, location, kind);
        let available = self.chunks_end - offset;
        if available < CHUNK_HEADER_LEN as u64 {
            return Err(err(ErrorKind::Truncated {
                what: "chunk header",
                needed: CHUNK_HEADER_LEN as u64,
                available,
            }));
        }
        let mut bytes = [0u8; CHUNK_HEADER_LEN];
        self.file
            .seek(SeekFrom::Start(offset))
            .map_err(|e| err(e.into()))?;
        self.file
            .read_exact(&mut bytes)
            .map_err(|e| err(e.into()))?;
        let header = ChunkHeader::parse(&bytes).ok_or_else(|| {
            let found = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
            debug_assert_ne!(found, CHUNK_MAGIC);
            err(ErrorKind::BadChunkMagic { found })
        })?;
        check_limit(
            "decompressed size",
            header.uncompressed_len.into(),
            MAX_CHUNK_UNCOMPRESSED.into(),
        )
        .map_err(err)?;
        check_limit(
            "compressed size",
            header.compressed_len.into(),
            MAX_CHUNK_COMPRESSED.into(),
        )
        .map_err(err)?;
        // Every record costs at least a 4-byte offset in the batch's vector.
        check_limit(
            "record count",
            u64::from(header.record_count) * 4,
            header.uncompressed_len.into(),
        )
        .map_err(err)?;
        let needed = CHUNK_HEADER_LEN as u64 + u64::from(header.compressed_len);
        if needed > available {
            return Err(err(ErrorKind::Truncated {
                what: "chunk",
                needed,
                available,
            }));
        }
        Ok(header)
    }
}

fn check_limit(what: &'static str, declared: u64, limit: u64) -> Result<(), ErrorKind> {
    if declared > limit {
        Err(ErrorKind::SizeLimit {
            what,
            declared,
            limit,
        })
    } else {
        Ok(())
    }
}

fn read_file_header(path: &Path, file: &mut File, file_len: u64) -> Result<FileHeader> {
    let err = |kind: ErrorKind| Error::new(path, Location::Header, kind);
    if file_len < FILE_HEADER_LEN as u64 {
        return Err(err(ErrorKind::Truncated {
            what: "file header",
            needed: FILE_HEADER_LEN as u64,
            available: file_len,
        }));
    }
    let mut bytes = [0u8; FILE_HEADER_LEN];
    file.read_exact(&mut bytes).map_err(|e| err(e.into()))?;
    FileHeader::parse(&bytes).map_err(|problem| {
        err(match problem {
            HeaderProblem::BadMagic => ErrorKind::BadMagic,
            HeaderProblem::Version(found) => ErrorKind::UnsupportedVersion {
                found,
                supported: FORMAT_VERSION,
            },
            HeaderProblem::Content(code) => ErrorKind::UnknownContent(code),
        })
    })
}

/// Reads the trailer and index if the file ends with the trailer magic.
fn read_footer(path: &Path, file: &mut File, file_len: u64) -> Result<Option<Footer>> {
    if file_len < (FILE_HEADER_LEN + TRAILER_LEN) as u64 {
        return Ok(None);
    }
    let trailer_offset = file_len - TRAILER_LEN as u64;
    let err = |offset: u64, kind: ErrorKind| Error::new(path, Location::Footer { offset }, kind);
    let mut bytes = [0u8; TRAILER_LEN];
    file.seek(SeekFrom::Start(trailer_offset))
        .map_err(|e| err(trailer_offset, e.into()))?;
    file.read_exact(&mut bytes)
        .map_err(|e| err(trailer_offset, e.into()))?;
    let Some(trailer) = Trailer::parse(&bytes) else {
        return Ok(None);
    };
    let index_len = u64::from(trailer.entry_count) * INDEX_ENTRY_LEN as u64;
    let fits = trailer.index_offset >= FILE_HEADER_LEN as u64
        && trailer.index_offset.checked_add(index_len) == Some(trailer_offset);
    if !fits {
        return Err(err(
            trailer_offset,
            ErrorKind::BadFooter(format!(
                "index of {} entries at offset {} does not fit a file of {} bytes",
                trailer.entry_count, trailer.index_offset, file_len
            )),
        ));
    }
    // `fits` bounds the allocation by the file's own size.
    let mut index_bytes = vec![0u8; index_len as usize];
    file.seek(SeekFrom::Start(trailer.index_offset))
        .and_then(|_| file.read_exact(&mut index_bytes))
        .map_err(|e| err(trailer.index_offset, e.into()))?;
    let computed = trailer.compute_crc(&index_bytes);
    if computed != trailer.crc32 {
        return Err(err(
            trailer_offset,
            ErrorKind::ChecksumMismatch {
                stored: trailer.crc32,
                computed,
            },
        ));
    }
    let entries: Vec<IndexEntry> = index_bytes
        .chunks_exact(INDEX_ENTRY_LEN)
        .map(IndexEntry::parse)
        .collect();
    let mut next_min = FILE_HEADER_LEN as u64;
    for (i, entry) in entries.iter().enumerate() {
        if entry.offset < next_min || entry.offset >= trailer.index_offset {
            return Err(err(
                trailer.index_offset + (i * INDEX_ENTRY_LEN) as u64,
                ErrorKind::BadFooter(format!(
                    "index entry {i} points at offset {} outside the chunks (offsets {}..{})",
                    entry.offset, next_min, trailer.index_offset
                )),
            ));
        }
        next_min = entry.offset + CHUNK_HEADER_LEN as u64;
    }
    Ok(Some(Footer { trailer, entries }))
}
