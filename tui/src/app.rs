//! The browser's state and what each key does to it. Drawing is in `view`.

use std::path::Path;

use analyzer::Metric;
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};
use trace_format::generated::results::DrawRow;
use trace_format::results::RowState;
use trace_format::Row;

use crate::filter::{host_ns, Filter};
use crate::index::{FrameSummary, Index, IndexBuilder};
use crate::inspect::Inspector;
use crate::store::RowStore;
use crate::TuiError;

/// One results file being browsed.
pub struct Source {
    /// `A` for the results, `B` for the baseline.
    pub label: char,
    /// Its index, growing in the background.
    pub index: IndexBuilder,
    /// Its rows.
    pub store: RowStore,
}

impl Source {
    fn open(label: char, path: &Path) -> Result<Self, TuiError> {
        Ok(Source {
            label,
            index: IndexBuilder::start(path)?,
            store: RowStore::open(path)?,
        })
    }

    /// Row `row`, if indexed and readable.
    pub fn row(&mut self, row: u64) -> Option<Row> {
        let index = self.index.get();
        self.store.row(&index, row)
    }

    /// What row `row`'s state flush emitted, if indexed and readable.
    pub fn state(&mut self, row: u64) -> Option<RowState> {
        let index = self.index.get();
        self.store.state(&index, row)
    }
}

impl Source {
    /// Why row `row`'s call could not be finished (a macro past its budget...), if so.
    pub fn error(&mut self, row: u64) -> Option<String> {
        let index = self.index.get();
        self.store.error(&index, row)
    }

    /// The render pass instance and label path row `row` ran in, as `report --by pass`
    /// and `--by label` name them.
    pub fn place(&mut self, row: u64) -> Option<(String, String)> {
        let index = self.index.get();
        let place = self.store.place(&index, row)?;
        Some((
            index.places.pass(place.pass()),
            index.places.label(place.label()),
        ))
    }
}

/// The panes, in Tab order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    /// Cost per frame.
    Frames,
    /// The selected frame's submits.
    Submits,
    /// The selected frame's draws.
    Draws,
    /// The selected draw's breakdown and method stream.
    Detail,
    /// The chosen metric's histogram.
    Histogram,
}

impl Pane {
    const ORDER: [Pane; 5] = [
        Pane::Frames,
        Pane::Submits,
        Pane::Draws,
        Pane::Detail,
        Pane::Histogram,
    ];

    fn step(self, forward: bool) -> Pane {
        let i = Self::ORDER.iter().position(|p| *p == self).unwrap_or(0);
        let n = Self::ORDER.len();
        Self::ORDER[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }]
    }
}

/// Which numbers are shown when there is a baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The results.
    A,
    /// The baseline.
    B,
    /// The results minus the baseline.
    Delta,
}

/// The draw table's sort columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// Execution order.
    Order,
    /// Sequence number in the trace.
    Seq,
    /// Draw command.
    Kind,
    /// Views.
    Views,
    /// Instances.
    Instances,
    /// MME instructions.
    Mme,
    /// Push-buffer dwords.
    Dwords,
    /// Host time (encode + execute).
    HostNs,
    /// The chosen metric's change against the baseline.
    Delta,
}

impl SortKey {
    /// The column's name in the status line.
    pub fn name(self) -> &'static str {
        match self {
            SortKey::Order => "order",
            SortKey::Seq => "seq",
            SortKey::Kind => "kind",
            SortKey::Views => "views",
            SortKey::Instances => "instances",
            SortKey::Mme => "mme",
            SortKey::Dwords => "dwords",
            SortKey::HostNs => "host ns",
            SortKey::Delta => "Δ metric",
        }
    }
}

/// The draw rows of the selected frame, filtered and sorted.
#[derive(Clone, Debug)]
pub enum RowSet {
    /// Consecutive rows, in execution order.
    Range {
        /// First row.
        first: u64,
        /// Rows.
        len: u64,
    },
    /// Rows picked and ordered.
    List(Vec<u64>),
}

impl RowSet {
    /// Rows in the set.
    pub fn len(&self) -> usize {
        match self {
            RowSet::Range { len, .. } => *len as usize,
            RowSet::List(rows) => rows.len(),
        }
    }

    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The row at `pos`.
    pub fn get(&self, pos: usize) -> Option<u64> {
        match self {
            RowSet::Range { first, len } => (pos < *len as usize).then(|| first + pos as u64),
            RowSet::List(rows) => rows.get(pos).copied(),
        }
    }
}

/// What the row set was built from; a change rebuilds it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct RowsKey {
    source: char,
    repetition: u16,
    frame: u32,
    draws: u64,
    filter: String,
    sort: (SortKey, bool),
    metric: Metric,
}

/// Screen areas of the last drawing, for the mouse.
#[derive(Clone, Copy, Debug, Default)]
pub struct Areas {
    /// The frames pane.
    pub frames: Rect,
    /// The submits pane.
    pub submits: Rect,
    /// The draws pane.
    pub draws: Rect,
    /// The detail pane.
    pub detail: Rect,
    /// The histogram pane.
    pub histogram: Rect,
}

/// A frame's matching between two traces: the (repetition, frame) it is of, A's rows'
/// counterparts in B (offsets in the frame), and how many of B's rows have none.
type FrameMatch = ((u16, u32), Vec<Option<u64>>, u64);

/// The browser.
pub struct App {
    /// The results.
    pub a: Source,
    /// The baseline.
    pub b: Option<Source>,
    /// Which numbers are shown.
    pub mode: Mode,
    /// The pane keys go to.
    pub focus: Pane,
    /// The metric of frame bars, histogram and `c`.
    pub metric: Metric,
    /// The repetition shown.
    pub repetition: u16,
    /// The selected frame's number.
    pub frame: u32,
    /// Sort column and whether descending.
    pub sort: (SortKey, bool),
    /// The filter applied.
    pub filter: Filter,
    /// The filter being typed, while `/` is open.
    pub editing: Option<String>,
    /// A message for the status line.
    pub message: Option<String>,
    /// Whether the help is open.
    pub help: bool,
    /// Whether the submits pane shows the frame's render passes and label regions
    /// instead (`t`).
    pub regions: bool,
    /// The selected frame's rows.
    pub rows: RowSet,
    rows_key: Option<RowsKey>,
    /// Position of the selected draw in `rows`.
    pub selected: usize,
    /// Position of the first draw shown.
    pub top: usize,
    /// The selected submit of the frame.
    pub submit: usize,
    /// First line of the detail pane shown.
    pub detail_scroll: u16,
    /// Method streams traced on demand.
    pub inspector: Inspector,
    /// Where panes were last drawn.
    pub areas: Areas,
    /// Whether to quit.
    pub quit: bool,
    /// Whether A and B were replayed from different traces: their rows are matched by
    /// what they draw, not by position.
    different_traces: bool,
    /// For the selected frame of two different traces: A's rows' counterparts in B.
    frame_match: Option<FrameMatch>,
}

impl App {
    /// Opens `results` (and `baseline`) and starts indexing them. Waits for the first
    /// chunk of each, so the first screen has rows on it.
    pub fn open(results: &Path, baseline: Option<&Path>) -> Result<App, TuiError> {
        let a = Source::open('A', results)?;
        let b = baseline.map(|p| Source::open('B', p)).transpose()?;
        a.index.wait_for_chunks(1);
        if let Some(b) = &b {
            b.index.wait_for_chunks(1);
        }
        let first_frame = a.index.get().frames.first().map_or(0, |f| f.frame);
        let mut app = App {
            a,
            b,
            mode: Mode::A,
            focus: Pane::Draws,
            metric: Metric::MmeInstructions,
            repetition: 0,
            frame: first_frame,
            sort: (SortKey::Order, false),
            filter: Filter::none(),
            editing: None,
            message: None,
            help: false,
            regions: false,
            rows: RowSet::Range { first: 0, len: 0 },
            rows_key: None,
            selected: 0,
            top: 0,
            submit: 0,
            detail_scroll: 0,
            inspector: Inspector::default(),
            areas: Areas::default(),
            quit: false,
            different_traces: false,
            frame_match: None,
        };
        app.message = app.baseline_warning();
        app.different_traces = app.message.is_some();
        app.refresh_rows();
        Ok(app)
    }

    /// How a frame of the shown file reads: `frame 3`, or `teardown`.
    pub fn frame_label(&mut self, frame: u32) -> String {
        self.shown().index.get().frame_label(frame)
    }

    /// The source whose rows the table shows.
    pub fn shown(&mut self) -> &mut Source {
        match (&mut self.b, self.mode) {
            (Some(b), Mode::B) => b,
            _ => &mut self.a,
        }
    }

    /// The shown source's label.
    pub fn shown_label(&self) -> char {
        match (&self.b, self.mode) {
            (Some(b), Mode::B) => b.label,
            _ => self.a.label,
        }
    }

    /// A warning when the baseline was replayed from another trace.
    fn baseline_warning(&self) -> Option<String> {
        let b = self.b.as_ref()?;
        let hash = |s: &Source| {
            s.index
                .get()
                .run
                .as_ref()
                .and_then(|r| r.trace_hash.clone())
        };
        let (ha, hb) = (hash(&self.a)?, hash(b)?);
        (trace_format::results::same_trace(&ha, &hb) == Some(false)).then(|| {
            "A and B were replayed from different traces: draws are matched by what they draw"
                .to_string()
        })
    }

    /// Background work to pick up; true when the screen should be redrawn.
    pub fn tick(&mut self) -> bool {
        let mut changed = self.inspector.poll();
        let busy = |s: &Source| !s.index.get().done;
        if busy(&self.a) || self.b.as_ref().is_some_and(busy) {
            changed = true;
        }
        if changed {
            self.refresh_rows();
        }
        changed
    }

    /// Whether indexing or an inspection is still running.
    pub fn busy(&self) -> bool {
        let busy = |s: &Source| !s.index.get().done;
        busy(&self.a) || self.b.as_ref().is_some_and(busy) || self.inspector.running()
    }

    /// Rebuilds the row set if what it depends on changed.
    pub fn refresh_rows(&mut self) {
        let (repetition, frame, metric, sort) =
            (self.repetition, self.frame, self.metric, self.sort);
        let filter = self.filter.clone();
        let source = self.shown_label();
        let summary = self.shown().index.get().frame(repetition, frame).cloned();
        let draws = summary.as_ref().map_or(0, |f| f.draws);
        let key = RowsKey {
            source,
            repetition,
            frame,
            draws,
            filter: filter.text().to_string(),
            sort,
            metric,
        };
        if self.rows_key.as_ref() == Some(&key) {
            return;
        }
        let first = summary.as_ref().map_or(0, |f| f.first_row);
        self.rows = if filter.is_empty() && sort.0 == SortKey::Order && !sort.1 {
            RowSet::Range { first, len: draws }
        } else {
            self.build_list(first, draws, &filter)
        };
        self.rows_key = Some(key);
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
    }

    fn build_list(&mut self, first: u64, draws: u64, filter: &Filter) -> RowSet {
        let (sort, descending) = self.sort;
        let metric = self.metric;
        let rows = {
            let source = self.shown();
            let index = source.index.get();
            source.store.rows(&index, first, draws)
        };
        let baseline = if sort == SortKey::Delta {
            self.baseline_rows_at(first, rows.len() as u64)
        } else {
            Vec::new()
        };
        let mut keyed: Vec<(i128, u64)> = rows
            .iter()
            .enumerate()
            .filter(|(_, row)| filter.matches(row))
            .map(|(i, row)| {
                let key = match sort {
                    SortKey::Order => i as i128,
                    SortKey::Seq => row.seq().into(),
                    SortKey::Kind => row.kind().0.into(),
                    SortKey::Views => row.view_count().into(),
                    SortKey::Instances => row.instance_count().into(),
                    SortKey::Mme => row.mme_instructions().into(),
                    SortKey::Dwords => row.pushbuf_dwords().into(),
                    SortKey::HostNs => host_ns(row).into(),
                    SortKey::Delta => baseline
                        .get(i)
                        .map_or(0, |b| i128::from(metric.of(row)) - i128::from(metric.of(b))),
                };
                (key, first + i as u64)
            })
            .collect();
        // Stable, so ties keep execution order.
        if descending {
            keyed.sort_by_key(|x| std::cmp::Reverse(x.0));
        } else {
            keyed.sort_by_key(|x| x.0);
        }
        RowSet::List(keyed.into_iter().map(|(_, row)| row).collect())
    }

    /// Where A's rows of the selected frame are in B's, by offset in the frame: the
    /// same offset for two replays of one trace; for two traces, the longest common
    /// subsequence of what the rows draw (computed once a frame).
    fn counterpart(&mut self, offset: u64) -> Option<u64> {
        if !self.different_traces {
            return Some(offset);
        }
        let key = (self.repetition, self.frame);
        if self.frame_match.as_ref().map(|m| m.0) != Some(key) {
            let a_index = self.a.index.get();
            let a_frame = a_index.frame(key.0, key.1)?;
            let a_rows = self
                .a
                .store
                .rows(&a_index, a_frame.first_row, a_frame.draws);
            let b = self.b.as_mut()?;
            let b_index = b.index.get();
            let b_frame = b_index.frame(key.0, key.1)?;
            let b_rows = b.store.rows(&b_index, b_frame.first_row, b_frame.draws);
            let matched = analyzer::changes::match_rows(&a_rows, &b_rows);
            let used = matched.iter().flatten().count() as u64;
            let removed = (b_rows.len() as u64).saturating_sub(used);
            let offsets = matched.into_iter().map(|m| m.map(|j| j as u64)).collect();
            self.frame_match = Some((key, offsets, removed));
        }
        self.frame_match
            .as_ref()
            .and_then(|m| m.1.get(offset as usize).copied().flatten())
    }

    /// For two different traces: how many of the selected frame's B rows match none of
    /// A's (removed draws).
    pub fn removed_in_frame(&mut self) -> Option<u64> {
        if !self.different_traces || self.b.is_none() {
            return None;
        }
        let _ = self.counterpart(0);
        self.frame_match.as_ref().map(|m| m.2)
    }

    /// The baseline's rows matching A's rows `first..first + count` of the selected frame
    /// (a default row where A's has no counterpart).
    fn baseline_rows_at(&mut self, first: u64, count: u64) -> Vec<Row> {
        let (repetition, frame) = (self.repetition, self.frame);
        let a_first = self
            .a
            .index
            .get()
            .frame(repetition, frame)
            .map_or(0, |f| f.first_row);
        let offsets: Vec<Option<u64>> = (first..first + count)
            .map(|g| self.counterpart(g.saturating_sub(a_first)))
            .collect();
        let Some(b) = &mut self.b else {
            return Vec::new();
        };
        let index = b.index.get();
        let Some(bf) = index.frame(repetition, frame) else {
            return Vec::new();
        };
        offsets
            .into_iter()
            .map(|o| {
                o.filter(|o| *o < bf.draws)
                    .and_then(|o| b.store.row(&index, bf.first_row + o))
                    .unwrap_or_default()
            })
            .collect()
    }

    /// The baseline row matching A's row `row`: at the same position with the same
    /// sequence number (one trace), or its counterpart by what it draws (two traces).
    /// `None` for a draw only A has.
    pub fn baseline_row(&mut self, row: &DrawRow, global: u64) -> Option<Row> {
        let (repetition, frame) = (self.repetition, self.frame);
        let a_first = self.a.index.get().frame(repetition, frame)?.first_row;
        let offset = self.counterpart(global.checked_sub(a_first)?)?;
        let different = self.different_traces;
        let b = self.b.as_mut()?;
        let index = b.index.get();
        let bf = index.frame(repetition, frame)?;
        if offset >= bf.draws {
            return None;
        }
        let other = b.store.row(&index, bf.first_row + offset)?;
        (different || other.seq() == row.seq()).then_some(other)
    }

    /// The frames of the shown source's repetition.
    pub fn frames(&mut self) -> Vec<FrameSummary> {
        let repetition = self.repetition;
        self.shown().index.get().frames_of(repetition).to_vec()
    }

    /// The selected draw: its global row and the row.
    pub fn selected_row(&mut self) -> Option<(u64, Row)> {
        let global = self.rows.get(self.selected)?;
        let row = self.shown().row(global)?;
        Some((global, row))
    }

    /// Handles a key.
    pub fn key(&mut self, key: KeyEvent) {
        if key.kind == KeyEventKind::Release {
            return;
        }
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            self.quit = true;
            return;
        }
        if let Some(text) = &mut self.editing {
            match key.code {
                KeyCode::Enter => {
                    let text = text.clone();
                    self.editing = None;
                    self.apply_filter(&text);
                    self.refresh_rows();
                }
                KeyCode::Esc => self.editing = None,
                KeyCode::Backspace => {
                    text.pop();
                }
                KeyCode::Char(c) => text.push(c),
                _ => {}
            }
            return;
        }
        if self.help {
            self.help = !matches!(key.code, KeyCode::Char('?' | 'q') | KeyCode::Esc);
            return;
        }
        self.message = None;
        match key.code {
            KeyCode::Char('q') | KeyCode::Esc => self.quit = true,
            KeyCode::Char('?') => self.help = true,
            KeyCode::Tab => self.focus = self.focus.step(true),
            KeyCode::BackTab => self.focus = self.focus.step(false),
            KeyCode::Char('/') => self.editing = Some(self.filter.text().to_string()),
            KeyCode::Char('s') => self.next_sort(),
            KeyCode::Char('S') => self.sort.1 = !self.sort.1,
            KeyCode::Char('m') => self.step_metric(true),
            KeyCode::Char('M') => self.step_metric(false),
            KeyCode::Char('b') => self.next_mode(),
            KeyCode::Char('r') => self.next_repetition(),
            KeyCode::Char('c') => self.costliest(),
            KeyCode::Char('t') => self.regions = !self.regions,
            KeyCode::Enter => self.inspect_selected(),
            KeyCode::Char('n') | KeyCode::Char(']') => self.step_frame(1),
            KeyCode::Char('p') | KeyCode::Char('[') => self.step_frame(-1),
            KeyCode::Left | KeyCode::Char('h') => self.horizontal(-1),
            KeyCode::Right | KeyCode::Char('l') => self.horizontal(1),
            KeyCode::Up | KeyCode::Char('k') => self.vertical(-1),
            KeyCode::Down | KeyCode::Char('j') => self.vertical(1),
            KeyCode::PageUp => self.vertical(-self.page()),
            KeyCode::PageDown => self.vertical(self.page()),
            KeyCode::Home | KeyCode::Char('g') => self.vertical(i64::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => self.vertical(i64::MAX / 2),
            _ => {}
        }
        self.refresh_rows();
    }

    /// Handles the mouse: the wheel scrolls the pane under the pointer.
    pub fn mouse(&mut self, event: MouseEvent) {
        let step: i64 = match event.kind {
            MouseEventKind::ScrollUp => -3,
            MouseEventKind::ScrollDown => 3,
            _ => return,
        };
        let at = Position::new(event.column, event.row);
        let areas = self.areas;
        let pane = [
            (areas.frames, Pane::Frames),
            (areas.submits, Pane::Submits),
            (areas.draws, Pane::Draws),
            (areas.detail, Pane::Detail),
            (areas.histogram, Pane::Histogram),
        ]
        .into_iter()
        .find(|(r, _)| r.contains(at))
        .map(|(_, p)| p);
        if let Some(pane) = pane {
            let focus = std::mem::replace(&mut self.focus, pane);
            if pane == Pane::Frames {
                self.step_frame(step.signum());
            } else {
                self.vertical(step);
            }
            self.focus = focus;
            self.refresh_rows();
        }
    }

    fn page(&self) -> i64 {
        i64::from(self.areas.draws.height.saturating_sub(3).max(1))
    }

    fn horizontal(&mut self, step: i64) {
        match self.focus {
            Pane::Frames | Pane::Submits | Pane::Draws => self.step_frame(step),
            Pane::Histogram => self.step_metric(step > 0),
            Pane::Detail => {}
        }
    }

    fn vertical(&mut self, step: i64) {
        match self.focus {
            Pane::Frames => self.step_frame(step),
            Pane::Submits => self.step_submit(step),
            Pane::Draws => {
                let last = self.rows.len().saturating_sub(1) as i64;
                self.selected = (self.selected as i64 + step).clamp(0, last) as usize;
            }
            Pane::Detail => {
                self.detail_scroll = (i64::from(self.detail_scroll) + step).clamp(0, 10_000) as u16
            }
            Pane::Histogram => self.step_metric(step > 0),
        }
    }

    /// Moves `step` frames along the shown source's frames.
    fn step_frame(&mut self, step: i64) {
        let frames = self.frames();
        if frames.is_empty() {
            return;
        }
        let pos = frames.partition_point(|f| f.frame < self.frame) as i64;
        let pos = (pos + step).clamp(0, frames.len() as i64 - 1) as usize;
        self.select_frame(frames[pos].frame);
    }

    fn select_frame(&mut self, frame: u32) {
        if frame != self.frame {
            self.frame = frame;
            self.selected = 0;
            self.top = 0;
            self.submit = 0;
            self.detail_scroll = 0;
        }
    }

    fn step_submit(&mut self, step: i64) {
        let Some(frame) = self.frames().into_iter().find(|f| f.frame == self.frame) else {
            return;
        };
        if frame.submits.is_empty() {
            return;
        }
        let last = frame.submits.len() as i64 - 1;
        self.submit = (self.submit as i64 + step).clamp(0, last) as usize;
        let number = frame.submits[self.submit].submit();
        // Select the submit's first draw.
        self.refresh_rows();
        for pos in 0..self.rows.len() {
            let Some(global) = self.rows.get(pos) else {
                break;
            };
            if self
                .shown()
                .row(global)
                .is_some_and(|r| r.submit() == number)
            {
                self.selected = pos;
                break;
            }
        }
    }

    fn step_metric(&mut self, forward: bool) {
        let all = Metric::ALL;
        let i = all.iter().position(|m| *m == self.metric).unwrap_or(0);
        let n = all.len();
        self.metric = all[if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        }];
    }

    fn next_sort(&mut self) {
        let mut keys = vec![
            SortKey::Order,
            SortKey::Seq,
            SortKey::Kind,
            SortKey::Views,
            SortKey::Instances,
            SortKey::Mme,
            SortKey::Dwords,
            SortKey::HostNs,
        ];
        if self.b.is_some() {
            keys.push(SortKey::Delta);
        }
        let i = keys.iter().position(|k| *k == self.sort.0).unwrap_or(0);
        let key = keys[(i + 1) % keys.len()];
        // Costs sort costliest first; names and positions ascending.
        let descending = !matches!(key, SortKey::Order | SortKey::Seq | SortKey::Kind);
        self.sort = (key, descending);
        self.selected = 0;
        self.top = 0;
    }

    fn next_mode(&mut self) {
        if self.b.is_none() {
            self.message = Some("no baseline: start with --baseline BASE.msr".into());
            return;
        }
        self.mode = match self.mode {
            Mode::A => Mode::B,
            Mode::B => Mode::Delta,
            Mode::Delta => Mode::A,
        };
    }

    fn next_repetition(&mut self) {
        let reps = self.shown().index.get().repetitions();
        self.repetition = (self.repetition + 1) % reps.max(1);
        self.selected = 0;
        self.top = 0;
    }

    fn apply_filter(&mut self, text: &str) {
        match Filter::parse(text) {
            Ok(filter) => {
                self.filter = filter;
                self.selected = 0;
                self.top = 0;
            }
            Err(e) => self.message = Some(format!("filter: {e}")),
        }
    }

    /// The metric's value for a frame as the mode shows it: A's or B's sum, or A − B.
    pub fn frame_value(&self, a: Option<&FrameSummary>, b: Option<&FrameSummary>) -> i128 {
        let sum = |f: Option<&FrameSummary>| f.map_or(0, |f| i128::from(f.sum(self.metric)));
        match self.mode {
            Mode::A => sum(a),
            Mode::B => sum(b),
            Mode::Delta => sum(a) - sum(b),
        }
    }

    /// Selects the costliest frame by the metric (the largest change, comparing) and in
    /// it the costliest draw.
    fn costliest(&mut self) {
        let repetition = self.repetition;
        let a_frames = self.a.index.get().frames_of(repetition).to_vec();
        let b_frames = self
            .b
            .as_ref()
            .map(|b| b.index.get().frames_of(repetition).to_vec())
            .unwrap_or_default();
        let find_b = |frame: u32| b_frames.iter().find(|f| f.frame == frame);
        let frames: Vec<u32> = match self.mode {
            Mode::B => b_frames.iter().map(|f| f.frame).collect(),
            _ => a_frames.iter().map(|f| f.frame).collect(),
        };
        let best = frames.into_iter().max_by_key(|&frame| {
            let a = a_frames.iter().find(|f| f.frame == frame);
            (self.frame_value(a, find_b(frame)), std::cmp::Reverse(frame))
        });
        let Some(frame) = best else {
            return;
        };
        self.select_frame(frame);
        self.refresh_rows();
        let metric = self.metric;
        let mut best: Option<(i128, usize)> = None;
        for pos in 0..self.rows.len() {
            let Some((global, row)) = self
                .rows
                .get(pos)
                .and_then(|g| Some((g, self.shown().row(g)?)))
            else {
                break;
            };
            let mut value = i128::from(metric.of(&row));
            if self.mode == Mode::Delta {
                value -= self
                    .baseline_row(&row, global)
                    .map_or(0, |b| i128::from(metric.of(&b)));
            }
            if best.is_none_or(|(v, _)| value > v) {
                best = Some((value, pos));
            }
        }
        if let Some((_, pos)) = best {
            self.selected = pos;
            self.focus = Pane::Draws;
        }
    }

    /// Starts tracing the selected draw's method stream through the driver model.
    fn inspect_selected(&mut self) {
        let Some((global, row)) = self.selected_row() else {
            return;
        };
        let repetition = self.repetition;
        let source = self.shown_label();
        let (run, rep_first, path) = {
            let s = self.shown();
            let index = s.index.get();
            let first = index
                .frames_of(repetition)
                .first()
                .map_or(0, |f| f.first_row);
            (index.run.clone(), first, index.path.clone())
        };
        let Some(run) = run else {
            self.message = Some("the results name no trace".into());
            return;
        };
        self.inspector
            .start(source, global, global - rep_first, row.seq(), &run, &path);
        self.focus = Pane::Detail;
        self.detail_scroll = 0;
    }

    /// Positions the table window so the selection shows in `height` rows.
    pub fn scroll_to_selection(&mut self, height: usize) {
        let height = height.max(1);
        if self.selected < self.top {
            self.top = self.selected;
        } else if self.selected >= self.top + height {
            self.top = self.selected + 1 - height;
        }
        let max_top = self.rows.len().saturating_sub(height);
        self.top = self.top.min(max_top.max(self.top.min(self.selected)));
    }

    /// The index of the shown source, for drawing.
    pub fn with_index<T>(&mut self, f: impl FnOnce(&Index) -> T) -> T {
        let source = self.shown();
        let index = source.index.get();
        f(&index)
    }
}
