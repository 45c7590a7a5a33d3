//! GFXReconstruct's container: the file header with its options, then blocks, each a
//! 64-bit size and a 32-bit type; function calls and memory fills may be compressed
//! (LZ4 or zstd, as the header's compression option says).
//!
//! [`BlockReader`] yields one block at a time, decompressed. Every size read from the
//! file is checked against what is left of the file before anything is allocated, and
//! every error names the block, its offset and what was wrong.

use std::fmt;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// "GFXR", the file's first four bytes.
pub const FOURCC: [u8; 4] = *b"GFXR";

/// The largest block this reads, compressed or not (GFXReconstruct's own blocks stay far
/// below; a larger size is a damaged file).
pub const MAX_BLOCK_BYTES: u64 = 1 << 30;

/// The most bytes one LZ4 byte decompresses to (a match length byte adds 255).
const LZ4_MAX_RATIO: usize = 255;

/// The most file options a header may list.
const MAX_OPTIONS: u32 = 1024;

/// Block types (GFXReconstruct's `BlockType`; the high bit marks a compressed block).
mod block_type {
    pub const FRAME_MARKER: u32 = 1;
    pub const STATE_MARKER: u32 = 2;
    pub const META_DATA: u32 = 3;
    pub const FUNCTION_CALL: u32 = 4;
    pub const COMPRESSED: u32 = 0x8000_0000;
}

/// Meta-data command types (the low 16 bits of a meta-data id).
mod meta {
    pub const FILL_MEMORY: u32 = 2;
    pub const INIT_BUFFER: u32 = 7;
}

/// How the file's blocks are compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Not at all.
    None,
    /// LZ4 blocks.
    Lz4,
    /// zlib (not read by this build).
    Zlib,
    /// zstd frames.
    Zstd,
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::None => "none",
            Compression::Lz4 => "LZ4",
            Compression::Zlib => "zlib",
            Compression::Zstd => "zstd",
        })
    }
}

/// The file header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// File format major version.
    pub major: u32,
    /// File format minor version.
    pub minor: u32,
    /// How blocks are compressed.
    pub compression: Compression,
}

/// One block, decompressed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Block {
    /// A Vulkan function call: its call id, thread and parameter bytes.
    Call {
        /// GFXReconstruct's call id.
        id: u32,
        /// The calling thread.
        thread: u64,
        /// The encoded parameters (and return value).
        params: Vec<u8>,
    },
    /// Bytes the program wrote into mapped memory.
    FillMemory {
        /// The memory object's id.
        memory: u64,
        /// Offset from the start of the mapping (not of the memory object).
        offset: u64,
        /// The bytes.
        data: Vec<u8>,
    },
    /// A buffer's contents at the start of a trimmed capture (its state snapshot).
    InitBuffer {
        /// The buffer's id.
        buffer: u64,
        /// The bytes, from the buffer's start.
        data: Vec<u8>,
    },
    /// A frame or state marker.
    Marker {
        /// Frame marker (1) or state marker (2).
        block_type: u32,
        /// Begin (1) or end (2).
        marker: u32,
        /// The frame it marks.
        frame: u64,
    },
    /// A block this reader passes over (other meta-data, annotations, method calls):
    /// its type, and for meta-data its id.
    Other {
        /// The block type.
        block_type: u32,
        /// The meta-data id (0 for other blocks).
        meta_id: u32,
    },
}

/// A block with its place in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// Ordinal of the block, from 0.
    pub index: u64,
    /// File offset of its block header.
    pub offset: u64,
    /// Its size, header included.
    pub size: u64,
    /// The block.
    pub block: Block,
}

/// What was wrong in a GFXReconstruct file, and where.
#[derive(Debug, thiserror::Error)]
pub struct GfxrError {
    /// The file.
    pub path: PathBuf,
    /// The block (`None`: the file header).
    pub block: Option<u64>,
    /// The byte offset.
    pub offset: u64,
    /// What was wrong.
    pub what: String,
    /// The operating system refused to open or read the file (not the file's fault).
    pub io: bool,
}

impl fmt::Display for GfxrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.offset;
        if self.io {
            return write!(f, "{}: {}", self.path.display(), self.what);
        }
        match self.block {
            Some(b) => write!(
                f,
                "{}: block {b} at offset {at} ({at:#x}): {}",
                self.path.display(),
                self.what
            ),
            None => write!(
                f,
                "{}: header at offset {at}: {}",
                self.path.display(),
                self.what
            ),
        }
    }
}

/// Reads a GFXReconstruct file block by block.
pub struct BlockReader {
    path: PathBuf,
    input: BufReader<File>,
    len: u64,
    offset: u64,
    index: u64,
    header: Header,
    done: bool,
}

/// Whether `path` starts as a GFXReconstruct file does.
pub fn is_gfxr(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && magic == FOURCC
}

impl BlockReader {
    /// Opens `path` and reads its header.
    pub fn open(path: &Path) -> Result<Self, GfxrError> {
        let fail = |offset: u64, what: String| GfxrError {
            path: path.to_path_buf(),
            block: None,
            offset,
            what,
            io: false,
        };
        let refused = |e: std::io::Error| GfxrError {
            io: true,
            ..fail(0, e.to_string())
        };
        let file = File::open(path).map_err(refused)?;
        let len = file.metadata().map_err(refused)?.len();
        let mut input = BufReader::with_capacity(1 << 20, file);
        let mut words = [0u8; 16];
        input.read_exact(&mut words).map_err(|_| {
            fail(
                0,
                format!("a file header needs 16 bytes, the file has {len}"),
            )
        })?;
        if words[..4] != FOURCC {
            return Err(fail(0, "not a GFXReconstruct file (no GFXR magic)".into()));
        }
        let word =
            |i: usize| u32::from_le_bytes([words[i], words[i + 1], words[i + 2], words[i + 3]]);
        let (major, minor, options) = (word(4), word(8), word(12));
        if options > MAX_OPTIONS || 16 + u64::from(options) * 8 > len {
            return Err(fail(
                12,
                format!("{options} file options do not fit the file"),
            ));
        }
        let mut compression = Compression::None;
        for i in 0..options {
            let mut pair = [0u8; 8];
            input
                .read_exact(&mut pair)
                .map_err(|e| fail(16 + u64::from(i) * 8, e.to_string()))?;
            let key = u32::from_le_bytes([pair[0], pair[1], pair[2], pair[3]]);
            let value = u32::from_le_bytes([pair[4], pair[5], pair[6], pair[7]]);
            if key == 1 {
                compression = match value {
                    0 => Compression::None,
                    1 => Compression::Lz4,
                    2 => Compression::Zlib,
                    3 => Compression::Zstd,
                    other => {
                        return Err(fail(
                            16 + u64::from(i) * 8,
                            format!("unknown compression type {other}"),
                        ))
                    }
                };
            }
        }
        Ok(BlockReader {
            path: path.to_path_buf(),
            input,
            len,
            offset: 16 + u64::from(options) * 8,
            index: 0,
            header: Header {
                major,
                minor,
                compression,
            },
            done: false,
        })
    }

    /// The file header.
    pub fn header(&self) -> Header {
        self.header
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file holds no blocks.
    pub fn is_empty(&self) -> bool {
        self.offset >= self.len
    }

    /// Bytes read so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn fail(&self, offset: u64, what: impl Into<String>) -> GfxrError {
        GfxrError {
            path: self.path.clone(),
            block: Some(self.index),
            offset,
            what: what.into(),
            io: false,
        }
    }

    fn read_block(&mut self) -> Result<Option<Placed>, GfxrError> {
        let start = self.offset;
        if start >= self.len {
            return Ok(None);
        }
        if self.len - start < 12 {
            return Err(self.fail(
                start,
                format!("a block header needs 12 bytes, {} left", self.len - start),
            ));
        }
        let mut head = [0u8; 12];
        self.input
            .read_exact(&mut head)
            .map_err(|e| self.fail(start, e.to_string()))?;
        let size = u64::from_le_bytes(head[..8].try_into().unwrap_or_default());
        let block_type = u32::from_le_bytes(head[8..].try_into().unwrap_or_default());
        let left = self.len - start - 12;
        if size > left {
            return Err(self.fail(
                start,
                format!(
                    "block of type {block_type:#x} claims {size} bytes, {left} left in the file"
                ),
            ));
        }
        if size > MAX_BLOCK_BYTES {
            return Err(self.fail(
                start,
                format!("block claims {size} bytes, more than {MAX_BLOCK_BYTES}"),
            ));
        }
        let mut body = vec![0u8; size as usize];
        self.input
            .read_exact(&mut body)
            .map_err(|e| self.fail(start, e.to_string()))?;
        let block = self.parse(start, block_type, &body)?;
        let placed = Placed {
            index: self.index,
            offset: start,
            size: size + 12,
            block,
        };
        self.offset = start + 12 + size;
        self.index += 1;
        Ok(Some(placed))
    }

    fn parse(&self, start: u64, block_type: u32, body: &[u8]) -> Result<Block, GfxrError> {
        let need = |n: usize, what: &str| {
            if body.len() < n {
                Err(self.fail(
                    start,
                    format!("{what} needs {n} bytes, the block has {}", body.len()),
                ))
            } else {
                Ok(())
            }
        };
        let u32_at =
            |i: usize| u32::from_le_bytes([body[i], body[i + 1], body[i + 2], body[i + 3]]);
        let u64_at = |i: usize| u64::from_le_bytes(body[i..i + 8].try_into().unwrap_or_default());
        let compressed = block_type & block_type::COMPRESSED != 0;
        Ok(match block_type & !block_type::COMPRESSED {
            block_type::FUNCTION_CALL => {
                let head = if compressed { 20 } else { 12 };
                need(head, "a function call")?;
                let (id, thread) = (u32_at(0), u64_at(4));
                let params = if compressed {
                    self.decompress(start, &body[head..], u64_at(12))?
                } else {
                    body[head..].to_vec()
                };
                Block::Call { id, thread, params }
            }
            block_type::META_DATA => {
                need(4, "a meta-data block")?;
                let meta_id = u32_at(0);
                let kind = meta_id & 0xffff;
                if kind == meta::FILL_MEMORY || kind == meta::INIT_BUFFER {
                    // Both: the thread, an id, a second word, the size, then the bytes.
                    let what = if kind == meta::FILL_MEMORY {
                        "memory fill"
                    } else {
                        "buffer initialisation"
                    };
                    need(36, what)?;
                    let (id, word, size) = (u64_at(12), u64_at(20), u64_at(28));
                    let data = if compressed {
                        self.decompress(start, &body[36..], size)?
                    } else {
                        let data = &body[36..];
                        if data.len() as u64 != size {
                            return Err(self.fail(
                                start,
                                format!("{what} of {size} bytes carries {}", data.len()),
                            ));
                        }
                        data.to_vec()
                    };
                    if kind == meta::FILL_MEMORY {
                        Block::FillMemory {
                            memory: id,
                            offset: word,
                            data,
                        }
                    } else {
                        // `id` is the device, `word` the buffer.
                        Block::InitBuffer { buffer: word, data }
                    }
                } else {
                    Block::Other {
                        block_type,
                        meta_id,
                    }
                }
            }
            block_type::FRAME_MARKER | block_type::STATE_MARKER => {
                need(12, "a marker")?;
                Block::Marker {
                    block_type: block_type & !block_type::COMPRESSED,
                    marker: u32_at(0),
                    frame: u64_at(4),
                }
            }
            _ => Block::Other {
                block_type,
                meta_id: 0,
            },
        })
    }

    fn decompress(&self, start: u64, data: &[u8], size: u64) -> Result<Vec<u8>, GfxrError> {
        if size > MAX_BLOCK_BYTES {
            return Err(self.fail(
                start,
                format!("block claims {size} uncompressed bytes, more than {MAX_BLOCK_BYTES}"),
            ));
        }
        let size = size as usize;
        let out = match self.header.compression {
            Compression::Lz4 => {
                // An LZ4 byte expands to at most 255: a larger claim is damage, refused
                // before the output is allocated.
                let most = data.len().saturating_mul(LZ4_MAX_RATIO).saturating_add(64);
                if size > most {
                    return Err(self.fail(
                        start,
                        format!("block claims {size} uncompressed bytes, more than its {} LZ4 bytes can hold", data.len()),
                    ));
                }
                lz4_flex::block::decompress(data, size)
                    .map_err(|e| self.fail(start, format!("LZ4 data does not decompress: {e}")))?
            }
            Compression::Zstd => {
                // The output grows as it is decompressed, up to one byte past the claim:
                // memory follows what the data holds, not what the header says.
                let mut out = Vec::new();
                zstd::stream::read::Decoder::with_buffer(data)
                    .and_then(|d| d.take(size as u64 + 1).read_to_end(&mut out))
                    .map_err(|e| self.fail(start, format!("zstd data does not decompress: {e}")))?;
                out
            }
            Compression::Zlib => {
                return Err(self.fail(start, "zlib-compressed blocks are not read by this build"))
            }
            Compression::None => {
                return Err(self.fail(start, "a compressed block in a file without compression"))
            }
        };
        if out.len() != size {
            return Err(self.fail(
                start,
                format!("decompressed to {} bytes, the block says {size}", out.len()),
            ));
        }
        Ok(out)
    }
}

impl Iterator for BlockReader {
    type Item = Result<Placed, GfxrError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.read_block() {
            Ok(Some(b)) => Some(Ok(b)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
