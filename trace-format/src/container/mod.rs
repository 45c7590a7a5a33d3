//! The container: chunks of opaque payload bytes, compressed with zstd, checksummed,
//! and indexed by a footer. Trace and results files both use it; what a payload means
//! is up to `trace` and `results`.

mod prefetch;
mod reader;
mod stream;
mod writer;

pub use prefetch::{Finish, Prefetcher};
pub(crate) use reader::payload_pool;
pub use reader::{CompressedChunk, ContainerReader, RawChunk};
pub use stream::ChunkStream;
pub use writer::{ChunkMeta, ContainerWriter, WriterOptions, WriterStats};
