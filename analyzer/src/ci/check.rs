//! Holding a replay against its expectation: which totals and state groups moved, which
//! rows moved (from a counts file), and which frames read back differently.

use trace_format::results::STATE_GROUPS;

use super::list::Expected;
use super::measure::{Measured, GROUP_PARTS, METRICS};

/// One value that is not what the list expects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The total (`methods`), a state group's part (`groups.viewport.methods`), or
    /// `nvk` for the release the numbers were taken under.
    pub what: String,
    /// What the list expects.
    pub expected: String,
    /// What the replay gave.
    pub measured: String,
    /// The reason, where the list allows this change.
    pub allowed: Option<String>,
}

/// Every way `measured` (under NVK `nvk`) differs from `expected`, allowed or not.
pub fn changes(expected: &Expected, measured: &Measured, nvk: &str) -> Vec<Change> {
    let mut out = Vec::new();
    if let Some(e) = &expected.nvk {
        if e != nvk {
            out.push(Change {
                what: "nvk".into(),
                expected: e.clone(),
                measured: nvk.into(),
                allowed: None,
            });
        }
    }
    let mut number = |what: String, want: u64, got: u64| {
        if want != got {
            let allowed = expected
                .allow
                .iter()
                .find(|a| a.metric == what && a.to == got)
                .map(|a| a.reason.clone());
            out.push(Change {
                what,
                expected: want.to_string(),
                measured: got.to_string(),
                allowed,
            });
        }
    };
    for (name, got) in METRICS.iter().zip(measured.totals) {
        if let Some(want) = expected.totals.get(*name) {
            number(name.to_string(), *want, got);
        }
    }
    for (group, got) in STATE_GROUPS.iter().zip(measured.groups) {
        // A group the list leaves out is expected to cost nothing.
        let want = expected.groups.get(*group).copied().unwrap_or([0; 3]);
        for ((part, w), g) in GROUP_PARTS.iter().zip(want).zip(got) {
            number(format!("groups.{group}.{part}"), w, g);
        }
    }
    out
}

/// A row whose counts moved: its place and what changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MovedRow {
    /// Its position among the replay's draw rows, from 0.
    pub row: usize,
    /// Frame, submit and command, as the counts name it.
    pub at: String,
    /// Each field that changed, `name: expected → measured`.
    pub fields: Vec<String>,
}

/// What differs between two `export --format counts` texts: the draw rows that moved
/// (the first `limit` of them), how many moved in all, and the row counts when they
/// differ.
pub fn moved_rows(
    expected: &str,
    measured: &str,
    limit: usize,
) -> (Vec<MovedRow>, usize, Option<(usize, usize)>) {
    let (want, got) = (draw_lines(expected), draw_lines(measured));
    let mut moved = Vec::new();
    let mut count = 0;
    for (row, (w, g)) in want.iter().zip(&got).enumerate() {
        if w == g {
            continue;
        }
        count += 1;
        if moved.len() < limit {
            moved.push(MovedRow {
                row,
                at: place(g),
                fields: field_changes(w, g),
            });
        }
    }
    let lengths = (want.len() != got.len()).then_some((want.len(), got.len()));
    (moved, count, lengths)
}

/// The draw lines of a counts text, each run of repeats written out.
fn draw_lines(text: &str) -> Vec<&str> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let (times, line) = match line.split_once("× ") {
            Some((n, rest)) if n.bytes().all(|b| b.is_ascii_digit()) => {
                (n.parse::<usize>().unwrap_or(1), rest)
            }
            _ => (1, line),
        };
        if line.starts_with("draw ") {
            rows.extend(std::iter::repeat_n(line, times.min(1 << 24)));
        }
    }
    rows
}

/// `frame F submit S KIND` of a counts draw line.
fn place(line: &str) -> String {
    let f: Vec<&str> = line.split_whitespace().collect();
    match f.as_slice() {
        [_, frame, submit, _, kind, ..] => format!("frame {frame} submit {submit} {kind}"),
        _ => line.to_string(),
    }
}

/// The `name=value` fields that differ between two counts lines.
fn field_changes(want: &str, got: &str) -> Vec<String> {
    let fields = |l: &str| -> Vec<(String, String)> {
        l.split_whitespace()
            .filter_map(|f| f.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let (w, g) = (fields(want), fields(got));
    let mut out = Vec::new();
    for (k, gv) in &g {
        let wv = w.iter().find(|(wk, _)| wk == k).map(|(_, v)| v.as_str());
        if wv != Some(gv.as_str()) {
            out.push(format!("{k}: {} → {gv}", wv.unwrap_or("-")));
        }
    }
    for (k, wv) in &w {
        if !g.iter().any(|(gk, _)| gk == k) {
            out.push(format!("{k}: {wv} → -"));
        }
    }
    out
}

/// Whether `trace` falls in shard `index` of `count` (from 1): by a hash of its path,
/// so a trace keeps its shard as others join or leave the list.
pub fn in_shard(trace: &str, (index, count): (u32, u32)) -> bool {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in trace.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h % u64::from(count.max(1)) == u64::from(index.saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::super::list::Allowed;
    use super::*;

    #[test]
    fn a_moved_group_is_named_and_an_allowed_change_carries_its_reason() {
        let mut m = Measured {
            totals: [2, 2, 2, 30, 40, 50],
            ..Measured::default()
        };
        m.groups[1] = [3, 4, 0];
        let mut e = Expected::default();
        e.totals.insert("methods".into(), 29);
        e.totals.insert("dwords".into(), 39);
        e.groups.insert("viewport".into(), [2, 3, 0]);
        e.allow.push(Allowed {
            metric: "dwords".into(),
            to: 40,
            reason: "one more".into(),
        });
        let c = changes(&e, &m, "25.0.7");
        let what: Vec<_> = c
            .iter()
            .map(|c| (c.what.as_str(), c.allowed.is_some()))
            .collect();
        assert_eq!(
            what,
            [
                ("methods", false),
                ("dwords", true),
                ("groups.viewport.methods", false),
                ("groups.viewport.dwords", false)
            ]
        );
    }

    #[test]
    fn moved_rows_name_the_row_and_the_fields() {
        let want = "3× draw 0 0 0 vkCmdDraw views=1 mme=10 methods=20 | viewport=2/3/0\nsubmit 0 0 0 draws=3\n";
        let got = "2× draw 0 0 0 vkCmdDraw views=1 mme=10 methods=20 | viewport=2/3/0\ndraw 0 0 0 vkCmdDraw views=1 mme=10 methods=21 | viewport=3/4/0\n";
        let (moved, count, lengths) = moved_rows(want, got, 10);
        assert_eq!(count, 1);
        assert_eq!(lengths, None);
        assert_eq!(moved[0].row, 2);
        assert_eq!(moved[0].at, "frame 0 submit 0 vkCmdDraw");
        assert_eq!(
            moved[0].fields,
            ["methods: 20 → 21", "viewport: 2/3/0 → 3/4/0"]
        );
    }

    #[test]
    fn shards_cover_each_trace_once() {
        let traces: Vec<String> = (0..200).map(|i| format!("traces/t{i}.mscope")).collect();
        for n in [1, 2, 3, 7] {
            for t in &traces {
                let hits = (1..=n).filter(|i| in_shard(t, (*i, n))).count();
                assert_eq!(hits, 1, "{t} in {hits} of {n} shards");
            }
        }
    }
}
