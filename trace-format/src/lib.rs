//! macroscope's file formats: traces of Vulkan calls (`.mscope`) and replay results
//! (`.msr`).
//!
//! Both are a [container](container) of independently decompressible zstd chunks, each
//! a flatbuffers batch verified before use (size bounds, CRC-32, flatbuffers verifier),
//! with an optional footer index. The schemas live in `schema/*.fbs`; the code `flatc`
//! generates from them is committed under [`generated`]. `docs/trace-format.md` in the
//! repository describes the bytes.
//!
//! Data flows: a [`TraceWriter`] builds records into the current chunk and hands
//! finished chunks to a background thread that compresses and writes them; a
//! [`TraceReader`] yields one verified [`TraceChunk`] at a time whose records borrow
//! from it. [`ResultsWriter`] and [`ResultsReader`] do the same for replay results.

#![deny(missing_docs)]

// The generated object API names `alloc::` paths.
extern crate alloc;

pub mod byte_planes;
pub mod compact;
pub mod container;
pub mod direct;
pub mod direct_records;
pub mod error;
pub mod frame_checksum;
pub mod generated;
pub mod generic_params;
pub mod gfxr;
pub mod names;
pub mod pipeline_parts;
pub mod record_block;
pub mod results;
pub mod sequencer;
pub mod synthetic;
pub mod trace;
pub mod verify;
pub mod wire;

pub use container::{WriterOptions, WriterStats};
pub use error::{Error, ErrorKind, Location, Result};
pub use results::{ResultsChunk, ResultsReader, ResultsWriter, Row, SkippedCall};
pub use trace::{
    replay_read_ahead_workers, CallMeta, ReadOptions, TraceChunk, TraceReader, TraceWriter,
};
pub use wire::Content;
