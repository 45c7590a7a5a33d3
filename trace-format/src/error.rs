//! Errors, with the file, the place in it and the cause.
//!
//! Every error the readers and writers return names the file and, where it has one,
//! the chunk and byte offset, so a message reads like
//! `trace.mscope: chunk 42 at offset 7936 (0x1f00): checksum mismatch (stored 0x…, computed 0x…)`.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Where in a file an error was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// The file as a whole (opening, its size).
    File,
    /// The fixed header at offset 0.
    Header,
    /// A chunk: its ordinal and the offset of its header.
    Chunk {
        /// Ordinal of the chunk, from 0.
        index: u64,
        /// File offset of the chunk header.
        offset: u64,
    },
    /// The footer index or trailer at this offset.
    Footer {
        /// File offset where the footer problem lies.
        offset: u64,
    },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Location::File => Ok(()),
            Location::Header => write!(f, "header at offset 0: "),
            Location::Chunk { index, offset } => {
                write!(f, "chunk {index} at offset {offset} ({offset:#x}): ")
            }
            Location::Footer { offset } => write!(f, "footer at offset {offset} ({offset:#x}): "),
        }
    }
}

/// What went wrong.
#[derive(Debug, thiserror::Error)]
pub enum ErrorKind {
    /// The operating system refused a read or write.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The file does not start with the macroscope magic.
    #[error("not a macroscope file (bad magic)")]
    BadMagic,
    /// The file is of a format version this build cannot read.
    #[error(
        "format version {found} is not supported (this build reads versions 1 to {supported})"
    )]
    UnsupportedVersion {
        /// Version in the file.
        found: u16,
        /// The newest version this build reads.
        supported: u16,
    },
    /// The header's content code is unknown.
    #[error("unknown content code {0}")]
    UnknownContent(u16),
    /// A trace was opened as results or the other way round.
    #[error("is a {found} file, not a {expected} file")]
    WrongContent {
        /// What the caller wanted.
        expected: &'static str,
        /// What the file holds.
        found: &'static str,
    },
    /// The file ends inside a structure.
    #[error("file ends {available} bytes into a {what} of {needed} bytes (torn write)")]
    Truncated {
        /// The structure being read.
        what: &'static str,
        /// Its full length.
        needed: u64,
        /// Bytes of it present.
        available: u64,
    },
    /// A chunk header's magic is wrong.
    #[error("bad chunk magic {found:#010x}")]
    BadChunkMagic {
        /// The word found where the magic should be.
        found: u32,
    },
    /// A declared size is above what the format allows.
    #[error("declared {what} of {declared} bytes exceeds the limit of {limit} bytes")]
    SizeLimit {
        /// Which size.
        what: &'static str,
        /// The size the file declares.
        declared: u64,
        /// The largest allowed.
        limit: u64,
    },
    /// A chunk's checksum does not match its bytes.
    #[error("checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    ChecksumMismatch {
        /// Checksum in the file.
        stored: u32,
        /// Checksum of the bytes read.
        computed: u32,
    },
    /// zstd could not decompress a payload.
    #[error("zstd: {0}")]
    Decompress(String),
    /// The payload decompressed to another size than declared.
    #[error("payload decompressed to {actual} bytes, header declares {declared}")]
    DecompressedSize {
        /// Size in the chunk header.
        declared: u64,
        /// Size zstd produced.
        actual: u64,
    },
    /// The payload verifier rejected the payload.
    #[error("invalid flatbuffer: {0}")]
    InvalidFlatbuffer(#[from] Box<crate::verify::Invalid>),
    /// A chunk of stored records holds one that cannot be laid out as a record.
    #[error("{0}")]
    BadStoredRecord(#[from] crate::record_block::BadStoredRecord),
    /// The chunk holds another number of records than its header says.
    #[error("holds {actual} records, header declares {declared}")]
    RecordCount {
        /// Count in the chunk header.
        declared: u64,
        /// Count in the payload.
        actual: u64,
    },
    /// The footer is inconsistent with the file.
    #[error("{0}")]
    BadFooter(String),
    /// A frame that the file does not hold was asked for.
    #[error("frame {frame} is not in this file (it holds frames 0..{frames})")]
    NoSuchFrame {
        /// The frame asked for.
        frame: u64,
        /// Frames the file holds.
        frames: u64,
    },
    /// The background writer thread stopped (its own error was reported earlier).
    #[error("the writer's background thread has stopped")]
    WriterGone,
    /// A caller passed something the format cannot hold.
    #[error("{0}")]
    Unsupported(String),
}

/// An error with the file and place it concerns.
#[derive(Debug)]
pub struct Error {
    path: PathBuf,
    location: Location,
    kind: ErrorKind,
}

impl Error {
    /// An error at `location` in `path`.
    pub fn new(path: &Path, location: Location, kind: impl Into<ErrorKind>) -> Self {
        Error {
            path: path.to_path_buf(),
            location,
            kind: kind.into(),
        }
    }

    /// The file concerned.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where in the file.
    pub fn location(&self) -> Location {
        self.location
    }

    /// The byte offset the error concerns, where it has one.
    pub fn offset(&self) -> Option<u64> {
        match self.location {
            Location::File => None,
            Location::Header => Some(0),
            Location::Chunk { offset, .. } | Location::Footer { offset } => Some(offset),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// Whether the file itself is at fault (bad or cut input), rather than the system.
    pub fn is_bad_input(&self) -> bool {
        !matches!(self.kind, ErrorKind::Io(_) | ErrorKind::WriterGone)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}{}", self.path.display(), self.location, self.kind)
    }
}

impl std::error::Error for Error {
    /// The cause behind the kind's own cause: the message above already says the
    /// kind and its immediate cause (`No such file or directory`), so a chain
    /// printed cause by cause says each once.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.kind.source().and_then(std::error::Error::source)
    }
}

/// Results of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
