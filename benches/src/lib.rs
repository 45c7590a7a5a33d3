//! Criterion benches for macroscope, under `benches/`, and the scenes (`scenes`): small
//! Vulkan programs that serve as capture workloads (`cargo run -p benches --bin scene`).
//! Run the benches with `cargo bench -p benches` (add `-- --quick` for a fast pass, as
//! CI does).
//!
//! - `trace_format`: trace encoding and decoding throughput, against plain zstd
//!   decompression of the same chunks.
//! - `mme`: simulated MME instructions per second on both instruction sets.

pub mod mme_macros;
pub mod scenes;
