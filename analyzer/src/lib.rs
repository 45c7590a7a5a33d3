//! The analyzer: histograms, per-draw breakdowns, plots, exports and the A/B verdict
//! over replay results.
//!
//! Not built yet: it arrives with its own issue, on top of `trace-format`'s results files.
