//! `report`: HDR histograms per metric, breakdowns by a grouping, and the costliest
//! draws, built in one streaming pass so memory does not grow with the row count.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::path::Path;

use hdrhistogram::Histogram;
use trace_format::generated::results::{DrawPlace, DrawRow, RunInfoT, RunTotalsT};
use trace_format::names::is_draw_kind;
use trace_format::results::{state_group_costs, STATE_GROUPS};
use trace_format::{ReadOptions, ResultsReader, Row, SkippedCall};

use crate::metrics::{kind_name, Metric};
use crate::AnalyzeError;

/// What to break totals down by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupBy {
    /// The draw command.
    Kind,
    /// Views in the view mask.
    ViewCount,
    /// The bound pipeline.
    Pipeline,
    /// The frame.
    Frame,
    /// The state groups the draws' flushes emitted (see [`Report::state_groups`]).
    StateGroup,
    /// The render pass instance (dynamic rendering included; a secondary's rows in
    /// the pass it ran in).
    Pass,
    /// The debug-label region, nested labels as a path (`a/b/c`).
    Label,
}

/// The group of rows outside every render pass.
pub const OUTSIDE_PASSES: &str = "(outside render passes)";
/// The group of rows under no debug label.
pub const NO_LABEL: &str = "(no label)";

impl GroupBy {
    fn key(self, row: &DrawRow, place: DrawPlace, names: &PlaceNames) -> String {
        match self {
            GroupBy::Kind => kind_name(row.kind()).to_string(),
            GroupBy::ViewCount => format!("{:02} views", row.view_count()),
            GroupBy::Pipeline => format!("pipeline {:#x}", row.pipeline()),
            GroupBy::Frame => frame_key(row.frame()),
            GroupBy::StateGroup => String::new(),
            GroupBy::Pass => names.pass(place.pass()),
            GroupBy::Label => names.label(place.label()),
        }
    }
}

/// The names of a results file's pass instances and label paths, gathered as its
/// chunks are read (each named in the chunk of the first row that ran in it).
#[derive(Debug, Default)]
pub struct PlaceNames {
    passes: HashMap<u32, (u32, String)>,
    labels: HashMap<u32, String>,
}

impl PlaceNames {
    /// Takes the names chunk `chunk` gives.
    pub fn add(&mut self, chunk: &trace_format::results::ResultsChunk) {
        for (id, frame, name) in chunk.pass_names() {
            self.passes.insert(id, (frame, name));
        }
        for (id, path) in chunk.label_names() {
            self.labels.insert(id, path);
        }
    }

    /// Pass instance `id`'s group: its frame, its number and what it renders, so that
    /// groups sort in the order the passes ran.
    pub fn pass(&self, id: u32) -> String {
        match (id, self.passes.get(&id)) {
            (0, _) => OUTSIDE_PASSES.to_string(),
            (_, Some((frame, name))) => format!("{} pass {id:04} {name}", frame_key(*frame)),
            (_, None) => format!("pass {id:04}"),
        }
    }

    /// Label path `id`'s group.
    pub fn label(&self, id: u32) -> String {
        match (id, self.labels.get(&id)) {
            (0, _) => NO_LABEL.to_string(),
            (_, Some(path)) => path.clone(),
            (_, None) => format!("label {id}"),
        }
    }
}

/// A frame's group name.
fn frame_key(frame: u32) -> String {
    format!("frame {frame:06}")
}

/// Totals of one group.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupTotals {
    /// Draws in the group.
    pub draws: u64,
    /// Sums per metric, in [`Metric::ALL`] order.
    pub sums: [u64; Metric::ALL.len()],
}

/// One of the costliest draws.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TopDraw {
    /// The metric's value.
    pub value: u64,
    /// Its sequence number in the trace (for `macroscope dump`).
    pub seq: u64,
    /// Its frame.
    pub frame: u32,
    /// Its draw command.
    pub kind: String,
    /// Its view mask.
    pub view_mask: u32,
}

/// Everything `report` prints.
pub struct Report {
    /// The run's metadata.
    pub run: Option<RunInfoT>,
    /// Draw rows read.
    pub draws: u64,
    /// Submit rows read.
    pub submits: u64,
    /// One histogram per metric, in [`Metric::ALL`] order.
    pub histograms: Vec<Histogram<u64>>,
    /// Totals per group.
    pub groups: BTreeMap<String, GroupTotals>,
    /// The costliest draws by the chosen metric, costliest first.
    pub top: Vec<TopDraw>,
    /// Calls the replay skipped.
    pub skipped: Vec<SkippedCall>,
    /// Totals per frame, for the per-frame plot (every row: draws and other commands).
    pub frames: BTreeMap<u32, GroupTotals>,
    /// Draws per frame (draw rows only).
    pub frame_draws: BTreeMap<u32, u64>,
    /// Totals per view count, for the view-count plot.
    pub view_counts: BTreeMap<u8, GroupTotals>,
    /// What the replay covered (frames, recorded and executed commands), where the
    /// file says.
    pub totals: Option<RunTotalsT>,
    /// Per state group ([`STATE_GROUPS`] order), then the draw macro's own share: what
    /// every draw's flush emitted.
    pub state_groups: [StateGroupTotals; STATE_GROUP_ROWS.len()],
    /// Whether the file holds state costs (files from before them do not).
    pub has_state: bool,
    /// Rows whose call the GPU model could not finish, and the first one's reason.
    pub failed_rows: (u64, Option<String>),
    /// Rows of other commands than draws (dispatches, transfers, clears, barriers):
    /// counted in the groups and frames, not in the draws' histograms and top list.
    pub other_rows: u64,
    /// Draws that repeat the draw before them in their frame: the same command and
    /// pipeline, the same counts, and the same cost in every state group — the same
    /// work pushed again (a candidate for instancing or merging).
    pub repeated_draws: u64,
}

/// What makes two draws the same work for [`Report::repeated_draws`].
#[derive(Clone, Copy, PartialEq, Eq)]
struct DrawWork {
    frame: u32,
    kind: u8,
    pipeline: u64,
    counts: [u32; 4],
    groups: [[u32; 3]; STATE_GROUPS.len()],
}

/// One metric's spread over a run's frames.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameSpread {
    /// What is summed per frame: "draws", or a metric's name.
    pub name: &'static str,
    /// The mean per frame.
    pub mean: f64,
    /// The median frame's value.
    pub p50: u64,
    /// The 90th percentile.
    pub p90: u64,
    /// The costliest frame's value, and that frame.
    pub max: (u64, u32),
}

/// The metrics [`Report::frame_spreads`] sums per frame: what the model pushed, and
/// the host time the model took.
const FRAME_METRICS: [Metric; 4] = [
    Metric::Methods,
    Metric::PushbufDwords,
    Metric::MmeInstructions,
    Metric::MmeNs,
];

/// What one state group cost over all draws.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateGroupTotals {
    /// Draws whose flush emitted something of it.
    pub draws: u64,
    /// Methods.
    pub methods: u64,
    /// Push-buffer dwords.
    pub dwords: u64,
    /// MME instructions its macros ran.
    pub mme_instructions: u64,
}

impl StateGroupTotals {
    fn add(&mut self, methods: u64, dwords: u64, mme_instructions: u64) {
        if methods > 0 || dwords > 0 {
            self.draws += 1;
        }
        self.methods += methods;
        self.dwords += dwords;
        self.mme_instructions += mme_instructions;
    }
}

/// The names of [`Report::state_groups`]' rows.
pub const STATE_GROUP_ROWS: [&str; STATE_GROUPS.len() + 1] = [
    STATE_GROUPS[0],
    STATE_GROUPS[1],
    STATE_GROUPS[2],
    STATE_GROUPS[3],
    STATE_GROUPS[4],
    STATE_GROUPS[5],
    STATE_GROUPS[6],
    STATE_GROUPS[7],
    "draw macro",
];

/// The row of [`STATE_GROUP_ROWS`] that is the draw macro's own share.
const DRAW_MACRO_ROW: usize = STATE_GROUPS.len();

impl Report {
    /// Whether a frame number is past the program's last frame: rows of the calls
    /// after its last frame boundary (teardown).
    pub fn is_teardown(&self, frame: u32) -> bool {
        self.totals
            .as_ref()
            .is_some_and(|t| t.frames > 0 && u64::from(frame) >= t.frames)
    }
}

fn add(g: &mut GroupTotals, row: &Row) {
    g.draws += 1;
    for (sum, m) in g.sums.iter_mut().zip(Metric::ALL) {
        *sum += m.of(row);
    }
}

impl Report {
    /// Reads `path` once and builds the report.
    pub fn build(
        path: &Path,
        group_by: GroupBy,
        top_n: usize,
        top_metric: Metric,
    ) -> Result<Report, AnalyzeError> {
        let mut histograms: Vec<Histogram<u64>> = Metric::ALL
            .iter()
            // 1 to 2^62 at three significant digits: a fixed size, so recording never resizes.
            .map(|_| {
                Histogram::new_with_bounds(1, 1 << 62, 3)
                    .map_err(|e| AnalyzeError::Histogram(e.to_string()))
            })
            .collect::<Result<_, _>>()?;
        let mut report = Report {
            run: None,
            draws: 0,
            submits: 0,
            histograms: Vec::new(),
            groups: BTreeMap::new(),
            top: Vec::new(),
            skipped: Vec::new(),
            frames: BTreeMap::new(),
            frame_draws: BTreeMap::new(),
            view_counts: BTreeMap::new(),
            totals: None,
            state_groups: [StateGroupTotals::default(); STATE_GROUP_ROWS.len()],
            has_state: false,
            failed_rows: (0, None),
            other_rows: 0,
            repeated_draws: 0,
        };
        let mut previous_draw: Option<DrawWork> = None;
        let mut top: BinaryHeap<Reverse<TopDraw>> = BinaryHeap::with_capacity(top_n + 1);
        let mut group_key_cache: Option<(u64, String)> = None;
        let mut names = PlaceNames::default();
        for chunk in ResultsReader::open_with(path, &ReadOptions::parallel())? {
            let chunk = chunk?;
            if let Some(run) = chunk.batch().run() {
                report.run = Some(run.unpack());
            }
            names.add(&chunk);
            report.skipped.extend(chunk.skipped_calls());
            report.totals = chunk.totals().or(report.totals.take());
            report.submits += chunk.submits().count() as u64;
            report.has_state |=
                chunk.batch().draw_states().is_some() || chunk.batch().draw_bind_states().is_some();
            for (_, error) in chunk.draw_errors() {
                report.failed_rows.0 += 1;
                report.failed_rows.1.get_or_insert(error);
            }
            for (i, row) in chunk.rows().enumerate() {
                let row = &row;
                if !is_draw_kind(row.kind()) {
                    // Dispatches, transfers, clears and barriers: in the groups and the
                    // frames' totals, not in the draws' histograms and top list.
                    report.other_rows += 1;
                    if group_by != GroupBy::StateGroup {
                        let key = group_by.key(row, chunk.draw_place(i), &names);
                        add(report.groups.entry(key).or_default(), row);
                    }
                    add(report.frames.entry(row.frame()).or_default(), row);
                    continue;
                }
                report.draws += 1;
                let [mut state_methods, mut state_dwords, mut state_mme] = [0u64; 3];
                let costs = state_group_costs(&chunk.draw_state(i));
                let work = DrawWork {
                    frame: row.frame(),
                    kind: row.kind().0,
                    pipeline: row.pipeline(),
                    counts: [
                        row.methods(),
                        row.pushbuf_dwords(),
                        row.mme_instructions(),
                        row.hw_draws(),
                    ],
                    groups: costs.map(|c| [c.methods, c.dwords, c.mme]),
                };
                if previous_draw == Some(work) {
                    report.repeated_draws += 1;
                }
                previous_draw = Some(work);
                for (g, c) in costs.iter().enumerate() {
                    let [m, d, x] = [c.methods, c.dwords, c.mme].map(u64::from);
                    report.state_groups[g].add(m, d, x);
                    state_methods += m;
                    state_dwords += d;
                    state_mme += x;
                }
                report.state_groups[DRAW_MACRO_ROW].add(
                    u64::from(row.methods()).saturating_sub(state_methods),
                    u64::from(row.pushbuf_dwords()).saturating_sub(state_dwords),
                    u64::from(row.mme_instructions()).saturating_sub(state_mme),
                );
                for (h, m) in histograms.iter_mut().zip(Metric::ALL) {
                    h.saturating_record(m.of(row));
                }
                // Rows of a group tend to come together: reuse the last key.
                let place = chunk.draw_place(i);
                let raw = group_raw_key(group_by, row, place);
                let key = match &group_key_cache {
                    Some((k, s)) if *k == raw => s.clone(),
                    _ => {
                        let s = group_by.key(row, place, &names);
                        group_key_cache = Some((raw, s.clone()));
                        s
                    }
                };
                if group_by != GroupBy::StateGroup {
                    add(report.groups.entry(key).or_default(), row);
                }
                add(report.frames.entry(row.frame()).or_default(), row);
                *report.frame_draws.entry(row.frame()).or_default() += 1;
                add(report.view_counts.entry(row.view_count()).or_default(), row);
                if top_n > 0 {
                    let value = top_metric.of(row);
                    if top.len() < top_n || top.peek().is_some_and(|Reverse(t)| value > t.value) {
                        top.push(Reverse(TopDraw {
                            value,
                            seq: row.seq(),
                            frame: row.frame(),
                            kind: kind_name(row.kind()).to_string(),
                            view_mask: row.view_mask(),
                        }));
                        if top.len() > top_n {
                            top.pop();
                        }
                    }
                }
            }
        }
        report.histograms = histograms;
        if group_by == GroupBy::Frame {
            report.fold_teardown_group();
        }
        let mut top: Vec<TopDraw> = top.into_iter().map(|Reverse(t)| t).collect();
        top.sort_by(|a, b| b.value.cmp(&a.value).then(a.seq.cmp(&b.seq)));
        report.top = top;
        Ok(report)
    }

    /// Puts the frame groups past the program's last frame into one `teardown` group.
    fn fold_teardown_group(&mut self) {
        let teardown: Vec<u32> = self
            .frames
            .keys()
            .copied()
            .filter(|f| self.is_teardown(*f))
            .collect();
        for frame in teardown {
            if let Some(g) = self.groups.remove(&frame_key(frame)) {
                let t = self.groups.entry("teardown".to_string()).or_default();
                t.draws += g.draws;
                t.sums.iter_mut().zip(g.sums).for_each(|(a, b)| *a += b);
            }
        }
    }

    /// Per frame of the program (teardown left out): its draws, and what the model
    /// pushed for all its rows (draws and other commands), each frame's sum spread over
    /// the frames — the frame's cost by the model's counts. Empty for a run of fewer
    /// than two frames.
    pub fn frame_spreads(&self) -> Vec<FrameSpread> {
        let frames: Vec<(u32, &GroupTotals)> = self
            .frames
            .iter()
            .filter(|(f, _)| !self.is_teardown(**f))
            .map(|(f, g)| (*f, g))
            .collect();
        if frames.len() < 2 {
            return Vec::new();
        }
        let spread = |name: &'static str, value: &dyn Fn(u32, &GroupTotals) -> u64| {
            let mut values: Vec<(u64, u32)> =
                frames.iter().map(|(f, g)| (value(*f, g), *f)).collect();
            let mean = values.iter().map(|v| v.0 as f64).sum::<f64>() / values.len() as f64;
            // The costliest frame, the earliest of equals.
            let max = values
                .iter()
                .copied()
                .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
                .unwrap_or_default();
            values.sort_unstable();
            let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize].0;
            FrameSpread {
                name,
                mean,
                p50: at(0.5),
                p90: at(0.9),
                max,
            }
        };
        let draws = |f: u32, _: &GroupTotals| self.frame_draws.get(&f).copied().unwrap_or(0);
        let mut spreads = vec![spread("draws", &draws)];
        for metric in FRAME_METRICS {
            let i = Metric::ALL.iter().position(|m| *m == metric).unwrap_or(0);
            spreads.push(spread(metric.name(), &move |_, g: &GroupTotals| g.sums[i]));
        }
        spreads
    }

    /// The histogram of `metric`.
    pub fn histogram(&self, metric: Metric) -> &Histogram<u64> {
        let i = Metric::ALL.iter().position(|m| *m == metric).unwrap_or(0);
        &self.histograms[i]
    }
}

fn group_raw_key(group_by: GroupBy, row: &DrawRow, place: DrawPlace) -> u64 {
    match group_by {
        GroupBy::Pass => place.pass().into(),
        GroupBy::Label => place.label().into(),
        GroupBy::Kind => row.kind().0.into(),
        GroupBy::ViewCount => row.view_count().into(),
        GroupBy::Pipeline => row.pipeline(),
        GroupBy::Frame => row.frame().into(),
        GroupBy::StateGroup => 0,
    }
}

/// The percentiles `report` shows.
pub const PERCENTILES: [(f64, &str); 5] = [
    (0.5, "p50"),
    (0.9, "p90"),
    (0.99, "p99"),
    (0.999, "p99.9"),
    (1.0, "max"),
];
