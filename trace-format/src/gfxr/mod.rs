//! Reading GFXReconstruct captures (`.gfxr`) and converting them into macroscope traces.
//!
//! - [`file`]: the container — header, blocks, LZ4/zstd decompression;
//! - [`params`]: a call's parameters decoded into values, driven by [`generated`]
//!   tables made from the Vulkan registry (`capture-layer/gen/gfxr.py`);
//! - [`convert`]: decoded calls into the records the capture layer makes for the same
//!   call — typed records where the layer makes them, `VulkanCall` records (in the
//!   layer's C-layout encoding, see [`generic`]) for the rest;
//! - [`import`]: a whole file into a trace.
//!
//! Files written by GFXReconstruct 0.9.18 (format version 0.0) are what this was
//! checked against, with each compression GFXReconstruct offers but zlib.

pub mod convert;
pub mod file;
#[rustfmt::skip]
pub mod generated;
pub mod generic;
pub mod import;
pub mod params;
pub mod tables;

pub use file::{is_gfxr, BlockReader, GfxrError};
pub use import::{import, ImportError, ImportStats};
