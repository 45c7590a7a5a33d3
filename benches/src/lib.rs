//! Criterion benches for macroscope, under `benches/`. Run them with
//! `cargo bench -p benches` (add `-- --quick` for a fast pass, as CI does).
//!
//! - `trace_format`: trace encoding and decoding throughput, against plain zstd
//!   decompression of the same chunks.
//! - `mme`: simulated MME instructions per second on both instruction sets.
