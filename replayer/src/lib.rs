//! The replayer: streams a trace through the bundled driver model and times every draw.
//!
//! Not built yet: it arrives with its own issue, on top of `trace-format` and `driver`.
