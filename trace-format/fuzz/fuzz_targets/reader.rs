//! Feeds arbitrary bytes to the trace and results readers: every outcome must be
//! records or an error, never a panic, a hang or an unbounded allocation.
//!
//! Run: `cargo +nightly fuzz run reader` in `trace-format/`. Keep each crash input in
//! `trace-format/fuzz/regressions/` and add it to the `damaged` tests.

#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use trace_format::{ReadOptions, ResultsReader, TraceReader};

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!("macroscope-fuzz-{}.bin", std::process::id()));
    let Ok(mut file) = std::fs::File::create(&path) else { return };
    if file.write_all(data).is_err() {
        return;
    }
    drop(file);
    for threads in [0, 2] {
        if let Ok(reader) = TraceReader::open_with(&path, &ReadOptions { threads }) {
            for chunk in reader {
                let Ok(chunk) = chunk else { break };
                for record in chunk.records() {
                    let _ = format!("{record:?}");
                }
            }
        }
        if let Ok(reader) = ResultsReader::open_with(&path, &ReadOptions { threads }) {
            for chunk in reader {
                let Ok(chunk) = chunk else { break };
                let _ = chunk.draws().count() + chunk.submits().count() + chunk.skipped_calls().len();
            }
        }
    }
});
