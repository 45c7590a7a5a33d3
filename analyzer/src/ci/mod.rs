//! `macroscope ci`: a corpus of traces checked against the costs each is expected to
//! replay with, as Mesa's trace checks hold images against their checksums. The counts
//! the model gives are exact and the same on every machine, so a change of one method
//! in one draw is caught.
//!
//! This module reads and rewrites the trace list ([`list`]), sums a replay's costs
//! ([`measure`]), holds them against the list ([`check`]) and writes the summary and
//! JUnit report ([`output`]); the CLI runs the replays.

pub mod check;
pub mod glob;
pub mod list;
pub mod measure;
pub mod output;

pub use check::{changes, in_shard, moved_rows, Change, MovedRow};
pub use list::{Entry, Expected, ListError, TraceList};
pub use measure::Measured;
pub use output::{CheckResult, Verdict};
