//! Where a comparison's change is: each row of the first repetition matched with its
//! counterpart by sequence number (two replays of one trace), and for each compared
//! count whose total moved, the rows helped and hurt by group (row kind, view count,
//! pipeline), the largest per-row changes, and the rows only one side has. fossil-db's
//! report is the model: totals, helped/hurt counts, the top changed items.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use trace_format::generated::results::{DrawKind, DrawRow};
use trace_format::{ReadOptions, ResultsReader};

use crate::metrics::{kind_name, Metric};
use crate::AnalyzeError;

/// What a row is, for grouping and for people, and its value of each count metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RowKey {
    frame: u32,
    kind: u8,
    view_count: u8,
    pipeline: u64,
    values: [u64; 7],
}

impl RowKey {
    fn of(row: &DrawRow) -> Self {
        let mut values = [0; 7];
        for (v, m) in values.iter_mut().zip(Metric::ALL) {
            *v = m.of(row);
        }
        RowKey {
            frame: row.frame(),
            kind: row.kind().0,
            view_count: row.view_count(),
            pipeline: row.pipeline(),
            values,
        }
    }
}

/// How a row is grouped: its group's name.
type GroupKey = fn(&RowKey) -> String;

/// The first repetition's rows by sequence number.
fn rows(path: &Path) -> Result<HashMap<u64, RowKey>, AnalyzeError> {
    let mut rows = HashMap::new();
    for chunk in ResultsReader::open_with(path, &ReadOptions::parallel())? {
        let chunk = chunk?;
        for row in chunk.draws().filter(|r| r.repetition() == 0) {
            rows.insert(row.seq(), RowKey::of(row));
        }
    }
    Ok(rows)
}

/// Rows of one group that got better, worse, or stayed.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct GroupChange {
    /// The group (`vkCmdDrawIndexed`, `2 views`, `pipeline 0x…`).
    pub group: String,
    /// Rows whose value went down.
    pub helped: u64,
    /// Rows whose value went up.
    pub hurt: u64,
    /// Rows whose value stayed.
    pub unchanged: u64,
    /// The group's total in the base run.
    pub base: u64,
    /// The group's total in the new run.
    pub new: u64,
}

/// One row's change.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RowChange {
    /// Its sequence number in the trace (`macroscope dump` finds it).
    pub seq: u64,
    /// Its frame.
    pub frame: u32,
    /// Its command.
    pub kind: String,
    /// Its value in the base run.
    pub base: u64,
    /// Its value in the new run.
    pub new: u64,
}

/// Where one metric's change is.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MetricChanges {
    /// The metric's name.
    pub metric: String,
    /// Helped and hurt rows by row kind, view count and pipeline, each group sorted
    /// by how much it moved.
    pub groups: BTreeMap<String, Vec<GroupChange>>,
    /// The largest per-row changes, largest first.
    pub top: Vec<RowChange>,
}

/// Where a comparison's change is.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Changes {
    /// Per compared count whose total moved.
    pub metrics: Vec<MetricChanges>,
    /// Rows only the new run has (their sequence numbers, the first few).
    pub added: Vec<u64>,
    /// Rows only the base run has.
    pub removed: Vec<u64>,
    /// How many rows only the new run has.
    pub added_count: u64,
    /// How many rows only the base run has.
    pub removed_count: u64,
}

/// Rows listed by sequence number in `added` and `removed`.
const LISTED: usize = 20;

/// Where `new` differs from `base` on `metrics` (the count metrics among them),
/// listing `top_n` rows per metric.
pub fn changes(
    base: &Path,
    new: &Path,
    metrics: &[Metric],
    top_n: usize,
) -> Result<Changes, AnalyzeError> {
    let (a, b) = (rows(base)?, rows(new)?);
    let mut out = Changes::default();
    let mut removed: Vec<u64> = a.keys().filter(|s| !b.contains_key(s)).copied().collect();
    let mut added: Vec<u64> = b.keys().filter(|s| !a.contains_key(s)).copied().collect();
    removed.sort_unstable();
    added.sort_unstable();
    out.removed_count = removed.len() as u64;
    out.added_count = added.len() as u64;
    out.removed = removed.into_iter().take(LISTED).collect();
    out.added = added.into_iter().take(LISTED).collect();
    let mut matched: Vec<(u64, &RowKey, &RowKey)> = a
        .iter()
        .filter_map(|(seq, x)| b.get(seq).map(|y| (*seq, x, y)))
        .collect();
    matched.sort_unstable_by_key(|(seq, _, _)| *seq);
    for metric in metrics.iter().filter(|m| !m.is_timing()) {
        let i = Metric::ALL.iter().position(|m| m == metric).unwrap_or(0);
        if matched.iter().all(|(_, x, y)| x.values[i] == y.values[i]) {
            continue;
        }
        let mut groups = BTreeMap::new();
        let groupings: [(&str, GroupKey); 3] = [
            ("kind", |r| kind_name(DrawKind(r.kind)).to_string()),
            ("view count", |r| format!("{} views", r.view_count)),
            ("pipeline", |r| format!("pipeline {:#x}", r.pipeline)),
        ];
        for (by, key) in groupings {
            let mut by_group: BTreeMap<String, GroupChange> = BTreeMap::new();
            for (_, x, y) in &matched {
                let g = by_group.entry(key(x)).or_default();
                let (u, v) = (x.values[i], y.values[i]);
                g.base += u;
                g.new += v;
                match v.cmp(&u) {
                    std::cmp::Ordering::Less => g.helped += 1,
                    std::cmp::Ordering::Greater => g.hurt += 1,
                    std::cmp::Ordering::Equal => g.unchanged += 1,
                }
            }
            let mut list: Vec<GroupChange> = by_group
                .into_iter()
                .map(|(group, g)| GroupChange { group, ..g })
                .filter(|g| g.helped + g.hurt > 0)
                .collect();
            list.sort_by_key(|g| std::cmp::Reverse(g.new.abs_diff(g.base)));
            groups.insert(by.to_string(), list);
        }
        let mut top: Vec<RowChange> = matched
            .iter()
            .filter(|(_, x, y)| x.values[i] != y.values[i])
            .map(|(seq, x, y)| RowChange {
                seq: *seq,
                frame: x.frame,
                kind: kind_name(DrawKind(x.kind)).to_string(),
                base: x.values[i],
                new: y.values[i],
            })
            .collect();
        top.sort_by_key(|r| (std::cmp::Reverse(r.new.abs_diff(r.base)), r.seq));
        top.truncate(top_n);
        out.metrics.push(MetricChanges {
            metric: metric.name().to_string(),
            groups,
            top,
        });
    }
    Ok(out)
}
