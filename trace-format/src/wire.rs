//! The container's byte layout, and nothing else.
//!
//! A file is a [`FileHeader`], then chunks, each a [`ChunkHeader`] followed by its
//! zstd-compressed payload, then optionally an index of [`IndexEntry`]s closed by a
//! [`Trailer`]. All integers are little-endian. `docs/trace-format.md` describes the
//! same layout for people; keep the two in step.

/// First eight bytes of every macroscope file. The high first byte catches 7-bit
/// transfers, the newline catches line-ending conversion.
pub const FILE_MAGIC: [u8; 8] = *b"\x89MSCOPE\n";
/// Format version this build writes (and the newest it reads). Version 2 added chunks
/// of stored records ([`CHUNK_STORED_RECORDS`]); version 3, byte vectors stored as byte
/// planes in them ([`crate::byte_planes`]); version 4, generic records' parameters
/// packed into one byte string ([`crate::generic_params`]); version 5, generic records
/// naming their command by number ([`crate::names::command_of_id`]), which a reader of
/// version 4 would take for no command. Files of older versions read as before.
pub const FORMAT_VERSION: u16 = 5;
/// The oldest format version this build reads.
pub const OLDEST_READ_VERSION: u16 = 1;
/// Size of [`FileHeader`] on disk.
pub const FILE_HEADER_LEN: usize = 16;

/// Marks the start of every chunk header: `CHNK`.
pub const CHUNK_MAGIC: u32 = u32::from_le_bytes(*b"CHNK");
/// Size of [`ChunkHeader`] on disk.
pub const CHUNK_HEADER_LEN: usize = 40;
/// Byte range of the checksum inside a chunk header.
const CHUNK_CRC_RANGE: std::ops::Range<usize> = 20..24;

/// Size of one [`IndexEntry`] on disk.
pub const INDEX_ENTRY_LEN: usize = 32;
/// Last eight bytes of a file whose footer index was written.
pub const TRAILER_MAGIC: [u8; 8] = *b"MSCOPEIX";
/// Size of [`Trailer`] on disk.
pub const TRAILER_LEN: usize = 32;

/// Largest payload a chunk may declare once decompressed. Writers close chunks far
/// below this; readers refuse anything above it, so a hostile size field cannot make
/// them allocate without limit.
pub const MAX_CHUNK_UNCOMPRESSED: u32 = 64 << 20;
/// Largest compressed payload a chunk may declare (zstd's worst-case expansion of
/// [`MAX_CHUNK_UNCOMPRESSED`], rounded up).
pub const MAX_CHUNK_COMPRESSED: u32 = MAX_CHUNK_UNCOMPRESSED + (MAX_CHUNK_UNCOMPRESSED >> 7) + 4096;

/// What a file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Content {
    /// Recorded Vulkan calls (`.mscope`); chunks hold `trace::RecordBatch`.
    Trace,
    /// Replay results (`.msr`); chunks hold `results::ResultsBatch`.
    Results,
}

impl Content {
    fn code(self) -> u16 {
        match self {
            Content::Trace => 1,
            Content::Results => 2,
        }
    }

    fn from_code(code: u16) -> Option<Self> {
        match code {
            1 => Some(Content::Trace),
            2 => Some(Content::Results),
            _ => None,
        }
    }

    /// A word for messages: "trace" or "results".
    pub fn name(self) -> &'static str {
        match self {
            Content::Trace => "trace",
            Content::Results => "results",
        }
    }
}

/// The fixed header at offset 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileHeader {
    /// Format version the file was written with.
    pub version: u16,
    /// What the chunks hold.
    pub content: Content,
    /// Reserved; written as 0 and ignored on read.
    pub flags: u32,
}

/// Why a file header could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderProblem {
    /// The first eight bytes are not [`FILE_MAGIC`].
    BadMagic,
    /// The version is not one this build reads.
    Version(u16),
    /// The content code is unknown.
    Content(u16),
}

impl FileHeader {
    /// A header for a new file of this build's version.
    pub fn new(content: Content) -> Self {
        FileHeader {
            version: FORMAT_VERSION,
            content,
            flags: 0,
        }
    }

    /// The on-disk bytes.
    pub fn to_bytes(&self) -> [u8; FILE_HEADER_LEN] {
        let mut b = [0u8; FILE_HEADER_LEN];
        b[0..8].copy_from_slice(&FILE_MAGIC);
        b[8..10].copy_from_slice(&self.version.to_le_bytes());
        b[10..12].copy_from_slice(&self.content.code().to_le_bytes());
        b[12..16].copy_from_slice(&self.flags.to_le_bytes());
        b
    }

    /// Parses and checks the on-disk bytes.
    pub fn parse(b: &[u8; FILE_HEADER_LEN]) -> Result<Self, HeaderProblem> {
        if b[0..8] != FILE_MAGIC {
            return Err(HeaderProblem::BadMagic);
        }
        let version = u16_at(b, 8);
        if !(OLDEST_READ_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(HeaderProblem::Version(version));
        }
        let code = u16_at(b, 10);
        let content = Content::from_code(code).ok_or(HeaderProblem::Content(code))?;
        Ok(FileHeader {
            version,
            content,
            flags: u32_at(b, 12),
        })
    }
}

/// Chunk flag: the chunk's last record closes a frame.
pub const CHUNK_ENDS_FRAME: u32 = 1;
/// Chunk flag (format version 2 on): the trace chunk's payload is its records as the
/// capture stored them (`trace_format::record_block::ChunkBody`), laid out as a
/// `RecordBatch` by the reader; without it, the payload is the `RecordBatch` itself.
pub const CHUNK_STORED_RECORDS: u32 = 2;

/// The header in front of every chunk's compressed payload.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChunkHeader {
    /// [`CHUNK_ENDS_FRAME`] and reserved bits.
    pub flags: u32,
    /// Bytes of compressed payload that follow the header.
    pub compressed_len: u32,
    /// Bytes the payload decompresses to.
    pub uncompressed_len: u32,
    /// Records (or rows) the payload holds.
    pub record_count: u32,
    /// CRC-32 of the header (with this field zeroed) followed by the payload.
    pub crc32: u32,
    /// Sequence number of the chunk's first record.
    pub first_seq: u64,
    /// Frame number in progress at the chunk's first record.
    pub first_frame: u64,
}

impl ChunkHeader {
    /// The on-disk bytes, with `crc32` as stored in `self`.
    pub fn to_bytes(&self) -> [u8; CHUNK_HEADER_LEN] {
        let mut b = [0u8; CHUNK_HEADER_LEN];
        b[0..4].copy_from_slice(&CHUNK_MAGIC.to_le_bytes());
        b[4..8].copy_from_slice(&self.flags.to_le_bytes());
        b[8..12].copy_from_slice(&self.compressed_len.to_le_bytes());
        b[12..16].copy_from_slice(&self.uncompressed_len.to_le_bytes());
        b[16..20].copy_from_slice(&self.record_count.to_le_bytes());
        b[CHUNK_CRC_RANGE].copy_from_slice(&self.crc32.to_le_bytes());
        b[24..32].copy_from_slice(&self.first_seq.to_le_bytes());
        b[32..40].copy_from_slice(&self.first_frame.to_le_bytes());
        b
    }

    /// Parses the on-disk bytes; `None` when the magic is wrong.
    pub fn parse(b: &[u8; CHUNK_HEADER_LEN]) -> Option<Self> {
        if u32_at(b, 0) != CHUNK_MAGIC {
            return None;
        }
        Some(ChunkHeader {
            flags: u32_at(b, 4),
            compressed_len: u32_at(b, 8),
            uncompressed_len: u32_at(b, 12),
            record_count: u32_at(b, 16),
            crc32: u32_at(b, CHUNK_CRC_RANGE.start),
            first_seq: u64_at(b, 24),
            first_frame: u64_at(b, 32),
        })
    }

    /// The checksum this header and `payload` should carry.
    pub fn compute_crc(&self, payload: &[u8]) -> u32 {
        let mut bytes = self.to_bytes();
        bytes[CHUNK_CRC_RANGE].fill(0);
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&bytes);
        hasher.update(payload);
        hasher.finalize()
    }

    /// Whether the chunk's last record closes a frame.
    pub fn ends_frame(&self) -> bool {
        self.flags & CHUNK_ENDS_FRAME != 0
    }
}

/// One chunk's entry in the footer index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    /// File offset of the chunk header.
    pub offset: u64,
    /// Sequence number of the chunk's first record.
    pub first_seq: u64,
    /// Frame number in progress at the chunk's first record.
    pub first_frame: u64,
    /// Records in the chunk.
    pub record_count: u32,
    /// The chunk's flags.
    pub flags: u32,
}

impl IndexEntry {
    /// The on-disk bytes.
    pub fn to_bytes(&self) -> [u8; INDEX_ENTRY_LEN] {
        let mut b = [0u8; INDEX_ENTRY_LEN];
        b[0..8].copy_from_slice(&self.offset.to_le_bytes());
        b[8..16].copy_from_slice(&self.first_seq.to_le_bytes());
        b[16..24].copy_from_slice(&self.first_frame.to_le_bytes());
        b[24..28].copy_from_slice(&self.record_count.to_le_bytes());
        b[28..32].copy_from_slice(&self.flags.to_le_bytes());
        b
    }

    /// Parses the on-disk bytes.
    pub fn parse(b: &[u8]) -> Self {
        IndexEntry {
            offset: u64_at(b, 0),
            first_seq: u64_at(b, 8),
            first_frame: u64_at(b, 16),
            record_count: u32_at(b, 24),
            flags: u32_at(b, 28),
        }
    }
}

/// The last [`TRAILER_LEN`] bytes of a finished file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trailer {
    /// File offset of the first index entry (just past the last chunk).
    pub index_offset: u64,
    /// Number of index entries.
    pub entry_count: u32,
    /// CRC-32 of the index entries followed by the trailer's first 12 bytes.
    pub crc32: u32,
    /// Frames completed in the file.
    pub frame_count: u64,
}

impl Trailer {
    /// The on-disk bytes.
    pub fn to_bytes(&self) -> [u8; TRAILER_LEN] {
        let mut b = [0u8; TRAILER_LEN];
        b[0..8].copy_from_slice(&self.index_offset.to_le_bytes());
        b[8..12].copy_from_slice(&self.entry_count.to_le_bytes());
        b[12..16].copy_from_slice(&self.crc32.to_le_bytes());
        b[16..24].copy_from_slice(&self.frame_count.to_le_bytes());
        b[24..32].copy_from_slice(&TRAILER_MAGIC);
        b
    }

    /// Parses the on-disk bytes; `None` when the file has no trailer magic.
    pub fn parse(b: &[u8; TRAILER_LEN]) -> Option<Self> {
        if b[24..32] != TRAILER_MAGIC {
            return None;
        }
        Some(Trailer {
            index_offset: u64_at(b, 0),
            entry_count: u32_at(b, 8),
            crc32: u32_at(b, 12),
            frame_count: u64_at(b, 16),
        })
    }

    /// The checksum a trailer over `entries` (their on-disk bytes) should carry.
    pub fn compute_crc(&self, entries: &[u8]) -> u32 {
        let bytes = self.to_bytes();
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(entries);
        hasher.update(&bytes[0..12]);
        hasher.update(&bytes[16..24]);
        hasher.finalize()
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip() {
        let h = FileHeader::new(Content::Results);
        assert_eq!(FileHeader::parse(&h.to_bytes()), Ok(h));
        let c = ChunkHeader {
            flags: CHUNK_ENDS_FRAME,
            compressed_len: 10,
            uncompressed_len: 20,
            record_count: 3,
            crc32: 0xdead_beef,
            first_seq: 1 << 40,
            first_frame: 7,
        };
        assert_eq!(ChunkHeader::parse(&c.to_bytes()), Some(c));
        let t = Trailer {
            index_offset: 99,
            entry_count: 2,
            crc32: 5,
            frame_count: 4,
        };
        assert_eq!(Trailer::parse(&t.to_bytes()), Some(t));
        let e = IndexEntry {
            offset: 16,
            first_seq: 0,
            first_frame: 1,
            record_count: 9,
            flags: 1,
        };
        assert_eq!(IndexEntry::parse(&e.to_bytes()), e);
    }

    #[test]
    fn file_header_rejects_other_versions_and_magic() {
        let mut b = FileHeader::new(Content::Trace).to_bytes();
        b[8] = 1;
        assert_eq!(
            FileHeader::parse(&b).map(|h| h.version),
            Ok(1),
            "version 1 still reads"
        );
        b[8] = 2;
        assert_eq!(
            FileHeader::parse(&b).map(|h| h.version),
            Ok(2),
            "version 2 still reads"
        );
        for newer in [FORMAT_VERSION as u8 + 1, 0] {
            b[8] = newer;
            assert_eq!(
                FileHeader::parse(&b),
                Err(HeaderProblem::Version(newer.into()))
            );
        }
        b[0] = b'M';
        assert_eq!(FileHeader::parse(&b), Err(HeaderProblem::BadMagic));
    }

    #[test]
    fn chunk_crc_ignores_its_own_field() {
        let mut c = ChunkHeader {
            compressed_len: 3,
            ..Default::default()
        };
        let crc = c.compute_crc(b"abc");
        c.crc32 = crc;
        assert_eq!(c.compute_crc(b"abc"), crc);
        assert_ne!(c.compute_crc(b"abd"), crc);
    }
}
