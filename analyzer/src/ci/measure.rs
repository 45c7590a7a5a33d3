//! What a replay cost, as `macroscope ci` holds it against its expectation: the run's
//! totals and each state group's, read from a results file in one pass.

use std::path::Path;

use trace_format::names::is_draw_kind;
use trace_format::results::{state_group_costs, STATE_GROUPS};
use trace_format::{ReadOptions, ResultsReader};

use crate::AnalyzeError;

/// The totals an expectation names, in this order.
pub const METRICS: [&str; 6] = [
    "draws",
    "rows",
    "hw_draws",
    "methods",
    "dwords",
    "mme_instructions",
];

/// The parts of a state group's cost, in the order an expectation lists them.
pub const GROUP_PARTS: [&str; 3] = ["methods", "dwords", "mme_instructions"];

/// One replay's costs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Measured {
    /// Per [`METRICS`] name.
    pub totals: [u64; METRICS.len()],
    /// Per state group ([`STATE_GROUPS`] order): methods, dwords, MME instructions.
    pub groups: [[u64; 3]; STATE_GROUPS.len()],
}

impl Measured {
    /// Sums the rows of the results file `path`.
    pub fn of(path: &Path) -> Result<Measured, AnalyzeError> {
        let mut m = Measured::default();
        for chunk in ResultsReader::open_with(path, &ReadOptions::default())? {
            let chunk = chunk?;
            for (i, r) in chunk.draws().enumerate() {
                if is_draw_kind(r.kind()) {
                    m.totals[0] += 1;
                }
                m.totals[1] += 1;
                m.totals[2] += u64::from(r.hw_draws());
                m.totals[3] += u64::from(r.methods());
                m.totals[4] += u64::from(r.pushbuf_dwords());
                m.totals[5] += u64::from(r.mme_instructions());
                for (g, c) in m
                    .groups
                    .iter_mut()
                    .zip(state_group_costs(&chunk.draw_state(i)))
                {
                    g[0] += u64::from(c.methods);
                    g[1] += u64::from(c.dwords);
                    g[2] += u64::from(c.mme);
                }
            }
        }
        Ok(m)
    }

    /// The total called `name` ([`METRICS`]).
    pub fn total(&self, name: &str) -> Option<u64> {
        METRICS
            .iter()
            .position(|m| *m == name)
            .map(|i| self.totals[i])
    }
}
