//! The analyzer: histograms, per-draw breakdowns, A/B comparison and exports over
//! replay results.
//!
//! Each entry point reads a results file in one streaming pass
//! ([`trace_format::ResultsReader`]), so memory stays flat however many rows there are:
//! [`Report::build`] keeps HDR histograms, group totals and a top-N heap;
//! [`compare`](compare::compare) keeps totals per repetition; [`export`](export::export)
//! writes rows as it reads them.

#![deny(missing_docs)]

pub mod changes;
pub mod ci;
pub mod compare;
pub mod counts;
pub mod export;
pub mod metrics;
pub mod plots;
pub mod report;

pub use metrics::Metric;
pub use report::{GroupBy, Report};

/// Why an analysis failed.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// The results file is unreadable or damaged.
    #[error(transparent)]
    Format(#[from] trace_format::Error),
    /// Writing the output failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The results file holds no draw rows.
    #[error("{0}: holds no draw rows")]
    NoRows(String),
    /// A histogram could not be made.
    #[error("histogram: {0}")]
    Histogram(String),
    /// A plot could not be drawn.
    #[error("plot: {0}")]
    Plot(String),
}

impl AnalyzeError {
    /// Whether the input (not the system) is at fault.
    pub fn is_bad_input(&self) -> bool {
        match self {
            AnalyzeError::Format(e) => e.is_bad_input(),
            AnalyzeError::NoRows(_) => true,
            AnalyzeError::Io(_) | AnalyzeError::Histogram(_) | AnalyzeError::Plot(_) => false,
        }
    }
}
