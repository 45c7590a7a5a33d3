//! The terminal browser for replay results.
//!
//! Not built yet: it arrives with its own issue, on top of the analyzer.
