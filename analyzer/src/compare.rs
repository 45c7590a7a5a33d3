//! `compare`: two runs metric by metric, with a verdict `git bisect run` can use.
//!
//! Counts are deterministic, so they are compared exactly (the first repetition's
//! totals): any growth past the count threshold (0 by default) is a regression, and
//! they are what is compared unless timings are asked for. Host timings vary, so each
//! repetition's total is one sample: with fewer than [`MIN_TIMING_REPETITIONS`] on
//! either side a timing is `inconclusive`, never `regressed`; with enough, the change of
//! the median is reported with a 95% bootstrap interval, and a timing regresses only
//! when the whole interval lies past the threshold.

use std::collections::BTreeMap;
use std::path::Path;

use trace_format::{ReadOptions, ResultsReader};

use crate::metrics::Metric;
use crate::AnalyzeError;

/// Repetitions each side needs before a timing can be judged: below this a bootstrap
/// over per-repetition totals gives an interval that says nothing (one sample gives a
/// zero-width "interval").
pub const MIN_TIMING_REPETITIONS: usize = 5;

/// What a comparison says of a metric, or of a whole run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Not worse past the threshold.
    Ok,
    /// Too few samples to judge (timings with few repetitions).
    Inconclusive,
    /// Worse past the threshold.
    Regressed,
}

impl Verdict {
    /// The word `compare` prints.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Regressed => "REGRESSED",
        }
    }
}

/// One metric of a comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricComparison {
    /// The metric.
    pub metric: Metric,
    /// The base run's total (counts) or median per-repetition total (timings).
    pub base: f64,
    /// The new run's, likewise.
    pub new: f64,
    /// `(new - base) / base`, in percent.
    pub change_pct: f64,
    /// For timings: the 95% bootstrap interval of the change, in percent.
    pub interval_pct: Option<(f64, f64)>,
    /// What the comparison says of this metric.
    pub verdict: Verdict,
    /// Repetitions on each side (timings are judged on these).
    pub repetitions: (usize, usize),
}

/// A whole comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// Per metric.
    pub metrics: Vec<MetricComparison>,
    /// The thresholds used, in percent.
    pub thresholds: Thresholds,
}

impl Comparison {
    /// Whether any metric regressed.
    pub fn regressed(&self) -> bool {
        self.verdict() == Verdict::Regressed
    }

    /// The run's verdict: regressed if any metric did, else inconclusive if any metric
    /// could not be judged, else ok.
    pub fn verdict(&self) -> Verdict {
        self.metrics
            .iter()
            .map(|m| m.verdict)
            .max()
            .unwrap_or(Verdict::Ok)
    }
}

/// How much worse a metric may get before it regresses, in percent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thresholds {
    /// For exact counts.
    pub counts_pct: f64,
    /// For timings: the lower end of the change's interval must lie past this.
    pub timings_pct: f64,
}

impl Default for Thresholds {
    /// Any growth of a count; 2% for timings.
    fn default() -> Self {
        Thresholds {
            counts_pct: 0.0,
            timings_pct: 2.0,
        }
    }
}

/// Totals per repetition, in [`Metric::ALL`] order.
fn totals(path: &Path) -> Result<BTreeMap<u16, [u64; Metric::ALL.len()]>, AnalyzeError> {
    let mut per_rep: BTreeMap<u16, [u64; Metric::ALL.len()]> = BTreeMap::new();
    for chunk in ResultsReader::open_with(path, &ReadOptions::parallel())? {
        let chunk = chunk?;
        for row in chunk.rows() {
            let row = &row;
            let sums = per_rep.entry(row.repetition()).or_default();
            for (s, m) in sums.iter_mut().zip(Metric::ALL) {
                *s += m.of(row);
            }
        }
    }
    if per_rep.is_empty() {
        return Err(AnalyzeError::NoRows(path.display().to_string()));
    }
    Ok(per_rep)
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn change(base: f64, new: f64) -> f64 {
    if base == 0.0 {
        if new == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (new - base) / base * 100.0
    }
}

/// A small deterministic generator for the bootstrap, so verdicts are repeatable.
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// 95% interval of the change of medians, by resampling each side's repetitions.
fn bootstrap(base: &[f64], new: &[f64]) -> (f64, f64) {
    const RESAMPLES: usize = 2000;
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let mut changes = Vec::with_capacity(RESAMPLES);
    let (mut b, mut n) = (vec![0.0; base.len()], vec![0.0; new.len()]);
    for _ in 0..RESAMPLES {
        b.iter_mut().for_each(|v| *v = base[rng.below(base.len())]);
        n.iter_mut().for_each(|v| *v = new[rng.below(new.len())]);
        changes.push(change(median(&mut b), median(&mut n)));
    }
    changes.sort_by(f64::total_cmp);
    (
        changes[RESAMPLES / 40],
        changes[RESAMPLES - 1 - RESAMPLES / 40],
    )
}

/// Compares `new` against `base` on `metrics` (every exact count when empty).
pub fn compare(
    base: &Path,
    new: &Path,
    metrics: &[Metric],
    thresholds: Thresholds,
) -> Result<Comparison, AnalyzeError> {
    let (a, b) = (totals(base)?, totals(new)?);
    let repetitions = (a.len(), b.len());
    let metrics = if metrics.is_empty() {
        Metric::ALL
            .iter()
            .copied()
            .filter(|m| !m.is_timing())
            .collect()
    } else {
        metrics.to_vec()
    };
    let column = |t: &BTreeMap<u16, [u64; Metric::ALL.len()]>, i: usize| -> Vec<f64> {
        t.values().map(|s| s[i] as f64).collect()
    };
    let mut rows = Vec::new();
    for metric in metrics {
        let i = Metric::ALL.iter().position(|m| *m == metric).unwrap_or(0);
        let row = if metric.is_timing() {
            let (mut x, mut y) = (column(&a, i), column(&b, i));
            let (bm, nm) = (median(&mut x), median(&mut y));
            let enough = x.len().min(y.len()) >= MIN_TIMING_REPETITIONS;
            let interval = enough.then(|| bootstrap(&x, &y));
            let verdict = match interval {
                None => Verdict::Inconclusive,
                Some((lo, _)) if lo > thresholds.timings_pct => Verdict::Regressed,
                Some(_) => Verdict::Ok,
            };
            MetricComparison {
                metric,
                base: bm,
                new: nm,
                change_pct: change(bm, nm),
                interval_pct: interval,
                verdict,
                repetitions,
            }
        } else {
            let (x, y) = (column(&a, i)[0], column(&b, i)[0]);
            let c = change(x, y);
            MetricComparison {
                metric,
                base: x,
                new: y,
                change_pct: c,
                interval_pct: None,
                verdict: if c > thresholds.counts_pct {
                    Verdict::Regressed
                } else {
                    Verdict::Ok
                },
                repetitions,
            }
        };
        rows.push(row);
    }
    Ok(Comparison {
        metrics: rows,
        thresholds,
    })
}
