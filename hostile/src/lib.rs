//! Hostile-but-valid inputs for macroscope's readers, replay and analyzer, and a fuzzer
//! of them that runs on stable Rust.
//!
//! - [`stream`] writes traces whose every byte is valid but whose values are extreme:
//!   every record type of the trace schema (builders generated from it, `generated`),
//!   every generic command the replayer decodes, fields at 0, 1 and their maximum,
//!   random values, and hand-written records that break assumptions.
//! - [`fuzz`] mutates valid files and fuzzer-chosen record streams and runs them through
//!   the readers and the replay, catching panics, with regressions kept as files.
//! - [`campaign`] mutates real files and runs each through one `macroscope` reading
//!   command in a child process under an address-space and a time limit.

#![deny(missing_docs)]

pub mod alloc;
pub mod campaign;
pub mod fuzz;
#[allow(missing_docs)]
pub mod generated;
mod special;
pub mod stream;
pub mod values;
