//! Where a comparison's change is: each row of the first repetition matched with its
//! counterpart, and for each compared count whose total moved, the rows helped and hurt
//! by group (row kind, view count, pipeline; methods, dwords and MME instructions also by
//! state group), the largest per-row changes, and the rows only one side has. fossil-db's
//! report is the model: totals, helped/hurt counts, the top changed items.
//!
//! Rows are matched by sequence number when both runs replayed the same trace (the
//! same file digest). Otherwise — the program before and after an update, a capture
//! from another machine — they are matched frame by frame by the longest common
//! subsequence of their identities (command, view mask, instances, elements, indirect
//! commands), so that an inserted or removed row shows as added or removed instead of
//! shifting every later one. (Pipeline handles differ between captures, so they are not
//! part of the identity. Frames whose two sides multiply to more than
//! [`LCS_CELLS`] cells are matched by position.)

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;

use trace_format::generated::results::DrawKind;
use trace_format::results::RowState;
use trace_format::results::{state_group_costs, STATE_GROUPS};
use trace_format::{ReadOptions, ResultsReader, Row};

use crate::metrics::{kind_name, Metric};
use crate::AnalyzeError;

/// What a row is, for grouping and for people, and its value of each count metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RowKey {
    frame: u32,
    kind: u8,
    view_count: u8,
    pipeline: u64,
    values: [u64; Metric::ALL.len()],
    /// What the program asked for, the same in two captures of the same draw.
    identity: (u8, u32, u32, u32, u32),
    /// Methods, dwords and MME instructions by state group, then the rest (the draw
    /// macro's own).
    state: [[u64; 3]; STATE_GROUPS.len() + 1],
}

/// The most cells the per-frame longest-common-subsequence table may have.
pub const LCS_CELLS: usize = 16 << 20;

impl RowKey {
    fn of(row: &Row, state: &RowState) -> Self {
        let mut values = [0; Metric::ALL.len()];
        for (v, m) in values.iter_mut().zip(Metric::ALL) {
            *v = m.of(row);
        }
        let mut groups = [[0u64; 3]; STATE_GROUPS.len() + 1];
        let mut sums = [0u64; 3];
        for (g, c) in groups.iter_mut().zip(state_group_costs(state)) {
            *g = [c.methods, c.dwords, c.mme].map(u64::from);
            for (s, v) in sums.iter_mut().zip(*g) {
                *s += v;
            }
        }
        groups[STATE_GROUPS.len()] = [
            u64::from(row.methods()).saturating_sub(sums[0]),
            u64::from(row.pushbuf_dwords()).saturating_sub(sums[1]),
            u64::from(row.mme_instructions()).saturating_sub(sums[2]),
        ];
        RowKey {
            frame: row.frame(),
            kind: row.kind().0,
            view_count: row.view_count(),
            pipeline: row.pipeline(),
            values,
            identity: (
                row.kind().0,
                row.view_mask(),
                row.instance_count(),
                row.element_count(),
                row.indirect_draw_count(),
            ),
            state: groups,
        }
    }
}

/// How a row is grouped: its group's name.
type GroupKey = fn(&RowKey) -> String;

/// Rows by sequence number, in order.
type Rows = Vec<(u64, RowKey)>;

/// A results file's first repetition: the trace's digest, and its rows in order.
fn rows(path: &Path) -> Result<(Option<String>, Rows), AnalyzeError> {
    let (mut digest, mut rows) = (None, Vec::new());
    for chunk in ResultsReader::open_with(path, &ReadOptions::parallel())? {
        let chunk = chunk?;
        if let Some(run) = chunk.batch().run() {
            digest = run.trace_hash().map(str::to_string);
        }
        for (i, row) in chunk.rows().enumerate() {
            let row = &row;
            if row.repetition() == 0 {
                rows.push((row.seq(), RowKey::of(row, &chunk.draw_state(i))));
            }
        }
    }
    Ok((digest, rows))
}

/// Pairs of indices into `a` and `b` (each in order) of the longest common subsequence
/// of their identities.
fn lcs(a: &[(u64, RowKey)], b: &[(u64, RowKey)]) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > LCS_CELLS {
        return (0..n.min(m)).map(|i| (i, i)).collect();
    }
    // lengths[i][j]: the LCS of a[i..] and b[j..].
    let mut lengths = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lengths[at(i, j)] = if a[i].1.identity == b[j].1.identity {
                lengths[at(i + 1, j + 1)] + 1
            } else {
                lengths[at(i + 1, j)].max(lengths[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j, mut pairs) = (0, 0, Vec::new());
    while i < n && j < m {
        if a[i].1.identity == b[j].1.identity {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if lengths[at(i + 1, j)] >= lengths[at(i, j + 1)] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}

/// For each of `a`'s rows, the index of its counterpart among `b`'s — the same frame
/// of two different captures — by the longest common subsequence of what they ask for;
/// `None` for a row only `a` has.
pub fn match_rows(a: &[Row], b: &[Row]) -> Vec<Option<usize>> {
    let keys = |rows: &[Row]| -> Rows {
        rows.iter()
            .map(|r| (r.seq(), RowKey::of(r, &RowState::default())))
            .collect()
    };
    let mut out = vec![None; a.len()];
    for (i, j) in lcs(&keys(a), &keys(b)) {
        out[i] = Some(j);
    }
    out
}

/// Matched rows (`a`'s sequence number with both keys), and the sequence numbers only
/// `a` and only `b` have.
type Matching<'a> = (Vec<(u64, &'a RowKey, &'a RowKey)>, Vec<u64>, Vec<u64>);

/// Matches the rows of two runs: by sequence number when they replayed the same trace,
/// else frame by frame by the longest common subsequence.
fn matching<'a>(a: &'a [(u64, RowKey)], b: &'a [(u64, RowKey)], same_trace: bool) -> Matching<'a> {
    let (mut matched, mut only_a, mut only_b) = (Vec::new(), Vec::new(), Vec::new());
    if same_trace {
        let by_seq: HashMap<u64, &RowKey> = b.iter().map(|(s, k)| (*s, k)).collect();
        let seqs_a: HashSet<u64> = a.iter().map(|(s, _)| *s).collect();
        for (seq, x) in a {
            match by_seq.get(seq) {
                Some(y) => matched.push((*seq, x, *y)),
                None => only_a.push(*seq),
            }
        }
        only_b.extend(b.iter().map(|(s, _)| *s).filter(|s| !seqs_a.contains(s)));
        return (matched, only_a, only_b);
    }
    let frames = |rows: &'a [(u64, RowKey)]| {
        let mut by_frame: BTreeMap<u32, Vec<(u64, RowKey)>> = BTreeMap::new();
        for r in rows {
            by_frame.entry(r.1.frame).or_default().push(*r);
        }
        by_frame
    };
    let (fa, fb) = (frames(a), frames(b));
    let index = |rows: &'a [(u64, RowKey)]| -> HashMap<u64, &'a RowKey> {
        rows.iter().map(|(s, k)| (*s, k)).collect()
    };
    let (ia, ib) = (index(a), index(b));
    let empty = Vec::new();
    let all_frames: BTreeSet<u32> = fa.keys().chain(fb.keys()).copied().collect();
    for frame in all_frames {
        let (ra, rb) = (
            fa.get(&frame).unwrap_or(&empty),
            fb.get(&frame).unwrap_or(&empty),
        );
        let pairs = lcs(ra, rb);
        let (mut used_a, mut used_b) = (vec![false; ra.len()], vec![false; rb.len()]);
        for (i, j) in pairs {
            used_a[i] = true;
            used_b[j] = true;
            if let (Some(x), Some(y)) = (ia.get(&ra[i].0), ib.get(&rb[j].0)) {
                matched.push((ra[i].0, *x, *y));
            }
        }
        only_a.extend(
            ra.iter()
                .zip(&used_a)
                .filter(|(_, u)| !**u)
                .map(|(r, _)| r.0),
        );
        only_b.extend(
            rb.iter()
                .zip(&used_b)
                .filter(|(_, u)| !**u)
                .map(|(r, _)| r.0),
        );
    }
    (matched, only_a, only_b)
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
    /// Rows only the new run has (their sequence numbers in its trace, the first few).
    pub added: Vec<u64>,
    /// Rows only the base run has (in its trace).
    pub removed: Vec<u64>,
    /// How many rows only the new run has.
    pub added_count: u64,
    /// How many rows only the base run has.
    pub removed_count: u64,
    /// How rows were matched: `sequence` (one trace) or `identity` (two captures).
    pub matched_by: String,
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
    let ((digest_a, a), (digest_b, b)) = (rows(base)?, rows(new)?);
    let same_trace = match (&digest_a, &digest_b) {
        (Some(a), Some(b)) => trace_format::results::same_trace(a, b) == Some(true),
        _ => false,
    };
    let mut out = Changes {
        matched_by: if same_trace { "sequence" } else { "identity" }.to_string(),
        ..Changes::default()
    };
    let (mut matched, mut removed, mut added) = matching(&a, &b, same_trace);
    removed.sort_unstable();
    added.sort_unstable();
    out.removed_count = removed.len() as u64;
    out.added_count = added.len() as u64;
    out.removed = removed.into_iter().take(LISTED).collect();
    out.added = added.into_iter().take(LISTED).collect();
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
        // Methods, dwords and MME instructions also by state group: which part of the
        // rows moved.
        let part = match metric {
            Metric::Methods => Some(0),
            Metric::PushbufDwords => Some(1),
            Metric::MmeInstructions => Some(2),
            _ => None,
        };
        if let Some(part) = part {
            let names = STATE_GROUPS.iter().copied().chain(["draw macro"]);
            let mut list: Vec<GroupChange> = names
                .enumerate()
                .map(|(g, name)| {
                    let mut change = GroupChange {
                        group: name.to_string(),
                        ..GroupChange::default()
                    };
                    for (_, x, y) in &matched {
                        let pick = |k: &RowKey| k.state[g][part];
                        let (u, v) = (pick(x), pick(y));
                        change.base += u;
                        change.new += v;
                        match v.cmp(&u) {
                            std::cmp::Ordering::Less => change.helped += 1,
                            std::cmp::Ordering::Greater => change.hurt += 1,
                            std::cmp::Ordering::Equal => change.unchanged += 1,
                        }
                    }
                    change
                })
                .filter(|g| g.helped + g.hurt > 0)
                .collect();
            list.sort_by_key(|g| std::cmp::Reverse(g.new.abs_diff(g.base)));
            groups.insert("state group".to_string(), list);
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
