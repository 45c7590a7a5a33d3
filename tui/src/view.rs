//! Drawing the browser: frames, submits, draws, the selected draw, the histogram and a
//! status line. Only the rows on screen are read from the file.

use analyzer::report::PERCENTILES;
use analyzer::Metric;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Bar, BarChart, BarGroup, Block, Borders, Cell, Clear, Paragraph, Row, Table,
};
use ratatui::Frame;
use trace_format::results::{state_group_costs, STATE_GROUPS};

use crate::app::{App, Mode, Pane};
use crate::filter::{field_names, host_ns};
use crate::format;
use crate::index::FrameSummary;
use crate::inspect::Inspection;

const REGRESSED: Color = Color::Red;
const IMPROVED: Color = Color::Green;
const ACCENT: Color = Color::Yellow;

/// Widths of the draw table's columns.
const COLUMNS: [u16; 11] = [8, 4, 29, 6, 5, 5, 7, 7, 6, 4, 10];
/// Width of the draw table's Δ column, shown comparing.
const DELTA_COLUMN: u16 = 12;
/// The draw table's width: columns, the gaps between them and the borders.
const TABLE_WIDTH: u16 = {
    let mut sum = 0;
    let mut i = 0;
    while i < COLUMNS.len() {
        sum += COLUMNS[i];
        i += 1;
    }
    sum + COLUMNS.len() as u16 - 1 + 2
};

fn mask_label(mask: u32) -> String {
    match mask {
        0 => "-".to_string(),
        m if m < 1 << 8 => format!("{m:b}"),
        m => format!("{m:#x}"),
    }
}

fn pane_block(app: &App, pane: Pane, title: String) -> Block<'static> {
    let style = if app.focus == pane {
        Style::default().fg(ACCENT)
    } else {
        Style::default().fg(Color::DarkGray)
    };
    Block::default()
        .borders(Borders::ALL)
        .border_style(style)
        .title(Span::styled(
            title,
            Style::default().add_modifier(Modifier::BOLD),
        ))
}

fn delta_style(a: u64, b: u64) -> Style {
    match a.cmp(&b) {
        std::cmp::Ordering::Greater => Style::default().fg(REGRESSED),
        std::cmp::Ordering::Less => Style::default().fg(IMPROVED),
        std::cmp::Ordering::Equal => Style::default(),
    }
}

impl App {
    /// Draws the whole screen.
    pub fn draw(&mut self, frame: &mut Frame<'_>) {
        let area = frame.area();
        if area.width < 60 || area.height < 24 {
            let text = "macroscope tui needs a terminal of at least 60×24; q quits";
            frame.render_widget(
                Paragraph::new(text).wrap(ratatui::widgets::Wrap { trim: true }),
                area,
            );
            return;
        }
        let [frames, middle, histogram, status] = Layout::default()
            .direction(Direction::Vertical)
            .constraints([
                Constraint::Length(7),
                Constraint::Min(8),
                Constraint::Length(9),
                Constraint::Length(1),
            ])
            .areas(area);
        let table_width = TABLE_WIDTH
            + if self.mode == Mode::Delta {
                DELTA_COLUMN + 1
            } else {
                0
            };
        let [left, detail] = Layout::default()
            .direction(Direction::Horizontal)
            .constraints([
                Constraint::Length(table_width.min(middle.width.saturating_sub(30))),
                Constraint::Fill(1),
            ])
            .areas(middle);
        let summary = self.frame_summaries();
        // The frame's passes and labels, when shown: laid out once, sized and drawn.
        let regions = self.regions.then(|| self.region_lines(summary.0.as_ref()));
        let submits = match &regions {
            Some(lines) => lines.len().min(12) as u16,
            None => summary.0.as_ref().map_or(0, |f| f.submits.len()) as u16,
        };
        let [submits_area, draws] = Layout::default()
            .direction(Direction::Vertical)
            .constraints([
                Constraint::Length((submits + 3).clamp(3, if self.regions { 14 } else { 8 })),
                Constraint::Min(4),
            ])
            .areas(left);
        self.areas = crate::app::Areas {
            frames,
            submits: submits_area,
            draws,
            detail,
            histogram,
        };
        self.draw_frames(frame, frames);
        match &regions {
            Some(lines) => self.draw_regions(frame, submits_area, lines),
            None => self.draw_submits(frame, submits_area, summary.0.as_ref()),
        }
        self.draw_table(frame, draws, summary.0.as_ref());
        self.draw_detail(frame, detail);
        self.draw_histogram(frame, histogram);
        self.draw_status(frame, status);
        if self.help {
            draw_help(frame, area);
        }
    }

    /// The selected frame's summary in A (or the shown source) and in B.
    fn frame_summaries(&mut self) -> (Option<FrameSummary>, Option<FrameSummary>) {
        let (rep, f) = (self.repetition, self.frame);
        let shown = self.with_index(|i| i.frame(rep, f).cloned());
        let b = self
            .b
            .as_ref()
            .and_then(|b| b.index.get().frame(rep, f).cloned());
        (shown, b)
    }

    fn draw_frames(&mut self, frame: &mut Frame<'_>, area: Rect) {
        let rep = self.repetition;
        let a_frames = self.a.index.get().frames_of(rep).to_vec();
        let b_frames = self
            .b
            .as_ref()
            .map(|b| b.index.get().frames_of(rep).to_vec())
            .unwrap_or_default();
        let frames = if self.mode == Mode::B {
            &b_frames
        } else {
            &a_frames
        };
        let metric = self.metric;
        let title = format!(
            " Frames · {} per frame{} ",
            metric.name(),
            match self.mode {
                Mode::A if self.b.is_some() => " · A",
                Mode::A => "",
                Mode::B => " · B (baseline)",
                Mode::Delta => " · A − B",
            }
        );
        let block = pane_block(self, Pane::Frames, title);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if frames.is_empty() || inner.height < 2 {
            frame.render_widget(Paragraph::new("no frames indexed yet"), inner);
            return;
        }
        let find = |list: &[FrameSummary], n: u32| {
            list.binary_search_by_key(&n, |f| f.frame)
                .ok()
                .map(|i| list[i].clone())
        };
        let width = usize::from(inner.width);
        let column = (width / frames.len()).clamp(1, 6);
        // Wide columns keep a gap so neighbouring frames read apart.
        let bar = if column >= 3 { column - 1 } else { column };
        let visible = (width / column).max(1);
        let selected = frames.partition_point(|f| f.frame < self.frame);
        let start = selected
            .saturating_sub(visible / 2)
            .min(frames.len().saturating_sub(visible));
        let window = &frames[start..(start + visible).min(frames.len())];
        let values: Vec<i128> = window
            .iter()
            .map(|f| {
                self.frame_value(
                    find(&a_frames, f.frame).as_ref(),
                    find(&b_frames, f.frame).as_ref(),
                )
            })
            .collect();
        let peak = values
            .iter()
            .map(|v| v.unsigned_abs())
            .max()
            .unwrap_or(0)
            .max(1);
        let bar_rows = inner.height - 1;
        let levels = u128::from(bar_rows) * 8;
        let blocks = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];
        let mut lines: Vec<Line> = (0..bar_rows).map(|_| Line::default()).collect();
        for (f, value) in window.iter().zip(&values) {
            let height = (value.unsigned_abs() * levels).div_ceil(peak);
            let style = self.frame_style(
                f,
                find(&a_frames, f.frame),
                find(&b_frames, f.frame),
                *value,
            );
            for (r, line) in lines.iter_mut().enumerate() {
                let floor = u128::from(bar_rows - 1 - r as u16) * 8;
                let eighths = height.saturating_sub(floor).min(8) as usize;
                line.spans
                    .push(Span::styled(blocks[eighths].repeat(bar), style));
                if bar < column {
                    line.spans.push(Span::raw(" "));
                }
            }
        }
        let (a_sel, b_sel) = (find(&a_frames, self.frame), find(&b_frames, self.frame));
        let value = self.frame_value(a_sel.as_ref(), b_sel.as_ref());
        let draws = frames
            .get(selected)
            .filter(|f| f.frame == self.frame)
            .map_or(0, |f| f.draws);
        let mut caption = format!(
            "{} of {} · {} rows · {} {}",
            self.frame_label(self.frame),
            frames.len(),
            format::count(draws),
            metric.name(),
            signed(value, metric.is_timing()),
        );
        if let (Some(a), Some(b), true) = (&a_sel, &b_sel, self.mode == Mode::A) {
            caption.push_str(&format!(
                " · vs B {}",
                format::delta(a.sum(metric), b.sum(metric), metric.is_timing())
            ));
        }
        lines.push(Line::from(caption));
        frame.render_widget(Paragraph::new(lines), inner);
    }

    fn frame_style(
        &self,
        f: &FrameSummary,
        a: Option<FrameSummary>,
        b: Option<FrameSummary>,
        value: i128,
    ) -> Style {
        let base = match (self.mode, a, b) {
            (Mode::Delta, _, _) if value > 0 => Style::default().fg(REGRESSED),
            (Mode::Delta, _, _) if value < 0 => Style::default().fg(IMPROVED),
            (Mode::A, Some(a), Some(b)) => {
                match format::percent(a.sum(self.metric), b.sum(self.metric)) {
                    Some(p) if p > 1.0 => Style::default().fg(REGRESSED),
                    Some(p) if p < -1.0 => Style::default().fg(IMPROVED),
                    _ => Style::default().fg(Color::Cyan),
                }
            }
            _ => Style::default().fg(Color::Cyan),
        };
        if f.frame == self.frame {
            base.fg(ACCENT).add_modifier(Modifier::BOLD)
        } else {
            base
        }
    }

    /// The frame's render passes, each with the label regions its rows ran under
    /// beneath it, as lines of text: the name, then rows and the metric's sum.
    fn region_lines(&mut self, summary: Option<&FrameSummary>) -> Vec<(String, u64, u64)> {
        let Some(f) = summary else {
            return Vec::new();
        };
        let metric = self.metric;
        self.with_index(|index| {
            let mut lines: Vec<(String, u64, u64)> = Vec::new();
            // Passes in the order they began, their regions beneath them.
            let mut passes: Vec<u32> = Vec::new();
            for r in &f.regions {
                if !passes.contains(&r.place.pass()) {
                    passes.push(r.place.pass());
                }
            }
            for pass in passes {
                let regions: Vec<_> = f
                    .regions
                    .iter()
                    .filter(|r| r.place.pass() == pass)
                    .collect();
                let rows = regions.iter().map(|r| r.rows).sum();
                let sum = regions.iter().map(|r| r.sum(metric)).sum();
                lines.push((index.places.pass(pass), rows, sum));
                if regions.len() > 1 || regions.iter().any(|r| r.place.label() != 0) {
                    for r in regions {
                        let label = index.places.label(r.place.label());
                        lines.push((format!("  {label}"), r.rows, r.sum(metric)));
                    }
                }
            }
            lines
        })
    }

    fn draw_regions(&mut self, frame: &mut Frame<'_>, area: Rect, lines: &[(String, u64, u64)]) {
        let label = self.frame_label(self.frame);
        let title = format!(
            " Passes and labels of {label} · {} (t: submits) ",
            self.metric.name()
        );
        let block = pane_block(self, Pane::Submits, title);
        let height = usize::from(area.height.saturating_sub(3)).max(1);
        let start = self.submit.min(lines.len().saturating_sub(height));
        let header = Row::new(["pass / label", "rows", self.metric.name()])
            .style(Style::default().add_modifier(Modifier::BOLD));
        let rows: Vec<Row> = lines
            .iter()
            .skip(start)
            .take(height)
            .map(|(name, rows, sum)| {
                Row::new([name.clone(), format::count(*rows), format::count(*sum)])
            })
            .collect();
        let widths = [
            Constraint::Fill(1),
            Constraint::Length(9),
            Constraint::Length(14),
        ];
        frame.render_widget(Table::new(rows, widths).header(header).block(block), area);
    }

    fn draw_submits(&mut self, frame: &mut Frame<'_>, area: Rect, summary: Option<&FrameSummary>) {
        let submits = summary.map_or(&[][..], |f| f.submits.as_slice());
        let label = self.frame_label(self.frame);
        let title = format!(" Submits of {label} ({}) ", submits.len());
        let block = pane_block(self, Pane::Submits, title);
        let header = Row::new([
            "submit", "seq", "draws", "hw draws", "mme", "dwords", "queries", "host ns",
        ])
        .style(Style::default().add_modifier(Modifier::BOLD));
        let height = usize::from(area.height.saturating_sub(3)).max(1);
        let start = self.submit.saturating_sub(height - 1);
        let rows: Vec<Row> = submits
            .iter()
            .enumerate()
            .skip(start)
            .take(height)
            .map(|(i, s)| {
                let row = Row::new([
                    s.submit().to_string(),
                    s.seq().to_string(),
                    format::count(s.draws().into()),
                    format::count(s.hw_draws().into()),
                    format::count(s.mme_instructions()),
                    format::count(s.pushbuf_dwords()),
                    format::count(s.queries().into()),
                    format::nanos(s.encode_ns() + s.mme_ns()),
                ]);
                if i == self.submit && self.focus == Pane::Submits {
                    row.style(Style::default().add_modifier(Modifier::REVERSED))
                } else {
                    row
                }
            })
            .collect();
        let widths = [
            Constraint::Length(7),
            Constraint::Length(10),
            Constraint::Length(9),
            Constraint::Length(9),
            Constraint::Length(11),
            Constraint::Length(11),
            Constraint::Length(8),
            Constraint::Length(10),
        ];
        frame.render_widget(Table::new(rows, widths).header(header).block(block), area);
    }

    fn draw_table(&mut self, frame: &mut Frame<'_>, area: Rect, summary: Option<&FrameSummary>) {
        let delta = self.mode == Mode::Delta;
        let sort = format!(
            "{}{}",
            self.sort.0.name(),
            if self.sort.1 { " ↓" } else { " ↑" }
        );
        let filter = if self.filter.is_empty() {
            String::new()
        } else {
            format!(" · filter `{}`", self.filter.text())
        };
        let total = summary.map_or(0, |f| f.draws);
        let label = self.frame_label(self.frame);
        // Two different traces: the baseline's draws that match none of A's.
        let removed = match self.removed_in_frame() {
            Some(n) if delta && n > 0 => format!(" · {n} only in B"),
            _ => String::new(),
        };
        let title = format!(
            " Rows of {label} · {} of {} · sort {sort}{filter}{removed} ",
            format::count(self.rows.len() as u64),
            format::count(total),
        );
        let block = pane_block(self, Pane::Draws, title);
        let height = usize::from(area.height.saturating_sub(3)).max(1);
        self.scroll_to_selection(height);
        let metric = self.metric;
        let mut cells = vec![
            "seq", "sub", "kind", "mask", "views", "inst", "elems", "mme", "dwords", "hw",
            "host ns",
        ];
        if delta {
            cells.push("Δ metric");
        }
        let header = Row::new(cells).style(Style::default().add_modifier(Modifier::BOLD));
        let mut rows = Vec::with_capacity(height);
        for pos in self.top..(self.top + height).min(self.rows.len()) {
            let Some(global) = self.rows.get(pos) else {
                break;
            };
            let Some(row) = self.shown().row(global) else {
                break;
            };
            let baseline = if delta {
                self.baseline_row(&row, global)
            } else {
                None
            };
            // A row whose call failed is marked by its kind: `!` and the failure colour.
            let failed = self.shown().error(global).is_some();
            let kind = analyzer::metrics::kind_name(row.kind());
            let mut cells = vec![
                Cell::from(row.seq().to_string()),
                Cell::from(row.submit().to_string()),
                if failed {
                    Cell::from(format!("!{kind}")).style(Style::default().fg(REGRESSED))
                } else {
                    Cell::from(kind)
                },
                Cell::from(mask_label(row.view_mask())),
                Cell::from(row.view_count().to_string()),
                Cell::from(format::count(row.instance_count().into())),
                Cell::from(format::count(row.element_count().into())),
                Cell::from(format::count(row.mme_instructions().into())),
                Cell::from(format::count(row.pushbuf_dwords().into())),
                Cell::from(row.hw_draws().to_string()),
                Cell::from(format::nanos(host_ns(&row))),
            ];
            if delta {
                cells.push(match baseline {
                    Some(b) => {
                        let (x, y) = (metric.of(&row), metric.of(&b));
                        Cell::from(signed(i128::from(x) - i128::from(y), metric.is_timing()))
                            .style(delta_style(x, y))
                    }
                    // A draw B has not: inserted since the baseline.
                    None => Cell::from("added").style(Style::default().fg(REGRESSED)),
                });
            }
            let mut r = Row::new(cells);
            if pos == self.selected {
                r = r.style(Style::default().add_modifier(Modifier::REVERSED));
            }
            rows.push(r);
        }
        let mut widths: Vec<Constraint> = COLUMNS.iter().map(|w| Constraint::Length(*w)).collect();
        if delta {
            widths.push(Constraint::Length(DELTA_COLUMN));
        }
        frame.render_widget(Table::new(rows, widths).header(header).block(block), area);
    }

    fn draw_detail(&mut self, frame: &mut Frame<'_>, area: Rect) {
        let label = self.shown_label();
        let selected = self.selected_row();
        // Draws are draws; the other commands' rows go by their command's name, as
        // `report` counts them apart.
        let title = match &selected {
            Some((_, row)) if trace_format::names::is_draw_kind(row.kind()) => {
                format!(" Draw #{} ", row.seq())
            }
            Some((_, row)) => format!(
                " {} #{} ",
                trace_format::names::row_kind_name(row.kind()),
                row.seq()
            ),
            None => " Draw ".to_string(),
        };
        let block = pane_block(self, Pane::Detail, title);
        let Some((global, row)) = selected else {
            frame.render_widget(Paragraph::new("no draw selected").block(block), area);
            return;
        };
        let baseline = if self.b.is_some() && self.mode != Mode::B {
            self.baseline_row(&row, global)
        } else {
            None
        };
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let mut lines = vec![
            Line::from(format!(
                "{} · {} · submit {} · pipeline {:#x}",
                analyzer::metrics::kind_name(row.kind()),
                self.frame_label(row.frame()),
                row.submit(),
                row.pipeline()
            )),
            Line::from(format!(
                "views {} (mask {}) · instances {} · elements {} · indirect draws {}",
                row.view_count(),
                mask_label(row.view_mask()),
                format::count(row.instance_count().into()),
                format::count(row.element_count().into()),
                row.indirect_draw_count()
            )),
        ];
        if let Some((pass, label)) = self.shown().place(global) {
            lines.push(Line::from(format!("in {pass} · label {label}")));
        }
        if let Some(error) = self.shown().error(global) {
            lines.push(Line::from(Span::styled(
                format!("failed: {error} (counts are what ran before)"),
                Style::default().fg(REGRESSED).add_modifier(Modifier::BOLD),
            )));
        }
        lines.push(Line::from(Span::styled("counts", bold)));
        let counts: [(&str, u64, Option<u64>); 6] = [
            (
                "MME instructions",
                row.mme_instructions().into(),
                baseline.map(|b| b.mme_instructions().into()),
            ),
            (
                "methods",
                row.methods().into(),
                baseline.map(|b| b.methods().into()),
            ),
            (
                "push dwords",
                row.pushbuf_dwords().into(),
                baseline.map(|b| b.pushbuf_dwords().into()),
            ),
            (
                "hardware draws",
                row.hw_draws().into(),
                baseline.map(|b| b.hw_draws().into()),
            ),
            (
                "queries",
                row.queries().into(),
                baseline.map(|b| b.queries().into()),
            ),
            (
                "zero queries",
                row.zero_queries().into(),
                baseline.map(|b| b.zero_queries().into()),
            ),
        ];
        for (name, value, base) in counts {
            lines.push(value_line(name, value, base, false));
        }
        // The state the draw's flush emitted, by group (the rest is the draw macro's).
        let state = self.shown().state(global).unwrap_or_default();
        let groups = state_group_costs(&state);
        if groups.iter().any(|c| c.methods > 0) {
            lines.push(Line::from(Span::styled(
                "state flushed (methods / dwords / MME instructions)",
                bold,
            )));
            for (name, c) in STATE_GROUPS.iter().zip(groups) {
                if c.methods > 0 {
                    lines.push(Line::from(format!(
                        "  {name:<24} {:>6} / {} / {}",
                        c.methods, c.dwords, c.mme
                    )));
                }
            }
        }
        lines.push(Line::from(Span::styled("host time", bold)));
        let times: [(&str, u64, Option<u64>); 4] = [
            ("encode", row.encode_ns(), baseline.map(|b| b.encode_ns())),
            ("execute (MME)", row.mme_ns(), baseline.map(|b| b.mme_ns())),
            (
                "  multiview loop",
                row.multiview_ns(),
                baseline.map(|b| b.multiview_ns()),
            ),
            ("queries", row.query_ns(), baseline.map(|b| b.query_ns())),
        ];
        let peak = times.iter().map(|t| t.1).max().unwrap_or(0).max(1);
        for (name, value, base) in times {
            let mut line = value_line(name, value, base, true);
            let width = (value * 12).div_ceil(peak) as usize;
            line.spans.push(Span::styled(
                format!(" {}", "■".repeat(width)),
                Style::default().fg(Color::Cyan),
            ));
            lines.push(line);
        }
        lines.push(Line::from(Span::styled("method stream", bold)));
        match self.inspector.get(label, global) {
            None => lines.push(Line::from("Enter traces it through the driver model")),
            Some(Inspection::Running) => {
                lines.push(Line::from("tracing the draw through the driver model…"))
            }
            Some(Inspection::Failed(why)) => {
                lines.push(Line::styled(why.clone(), Style::default().fg(REGRESSED)))
            }
            Some(Inspection::Done(found)) => {
                let (pushed, emitted) = found.method_counts();
                lines.push(Line::from(format!(
                    "{} methods: {pushed} pushed, {emitted} from the macro ({} MME instructions)",
                    pushed + emitted,
                    format::count(found.mme_instructions)
                )));
                for run in &found.runs {
                    let source = if run.from_macro { "macro" } else { "push " };
                    let style = if run.from_macro {
                        Style::default().fg(Color::Magenta)
                    } else {
                        Style::default()
                    };
                    lines.push(Line::styled(
                        format!("{source} {} ×{}", run.name, run.count),
                        style,
                    ));
                }
            }
        }
        let paragraph = Paragraph::new(lines)
            .block(block)
            .wrap(ratatui::widgets::Wrap { trim: false })
            .scroll((self.detail_scroll, 0));
        frame.render_widget(paragraph, area);
    }

    fn draw_histogram(&mut self, frame: &mut Frame<'_>, area: Rect) {
        let metric = self.metric;
        let title = format!(
            " Histogram · {} ({}) · all draws ",
            metric.name(),
            metric.unit()
        );
        let block = pane_block(self, Pane::Histogram, title);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let (percentiles, buckets) = self.with_index(|i| summarize(i.histogram(metric)));
        let b_percentiles = match (&self.b, self.mode) {
            (Some(b), Mode::Delta | Mode::A) => Some(summarize(b.index.get().histogram(metric)).0),
            _ => None,
        };
        let mut spans = Vec::new();
        for (i, (name, value)) in percentiles.iter().enumerate() {
            spans.push(Span::styled(
                format!("{name} "),
                Style::default().add_modifier(Modifier::BOLD),
            ));
            spans.push(Span::raw(format::value(*value, metric.is_timing())));
            if let Some(b) = b_percentiles.as_ref().and_then(|b| b.get(i)) {
                spans.push(Span::styled(
                    format!(" ({})", format::delta(*value, b.1, metric.is_timing())),
                    delta_style(*value, b.1),
                ));
            }
            spans.push(Span::raw("   "));
        }
        let [line, chart] = Layout::default()
            .direction(Direction::Vertical)
            .constraints([Constraint::Length(1), Constraint::Min(1)])
            .areas(inner);
        frame.render_widget(Paragraph::new(Line::from(spans)), line);
        let bars: Vec<Bar> = buckets
            .iter()
            .map(|(low, count)| {
                Bar::default()
                    .value(*count)
                    .label(Line::from(format!("≥{}", format::short(*low))))
                    .text_value(format::short(*count))
            })
            .collect();
        let chart_widget = BarChart::default()
            .data(BarGroup::default().bars(&bars))
            .bar_width(6)
            .bar_gap(1)
            .bar_style(Style::default().fg(Color::Cyan))
            .value_style(Style::default().fg(Color::Black).bg(Color::Cyan));
        frame.render_widget(chart_widget, chart);
    }

    fn draw_status(&mut self, frame: &mut Frame<'_>, area: Rect) {
        if let Some(text) = &self.editing {
            let line = Line::from(vec![
                Span::styled("filter: ", Style::default().fg(ACCENT)),
                Span::raw(text.clone()),
                Span::styled("▏", Style::default().fg(ACCENT)),
                Span::styled(
                    "   Enter applies · Esc cancels · e.g. `indexed views>=2 mme>100`",
                    Style::default().fg(Color::DarkGray),
                ),
            ]);
            frame.render_widget(Paragraph::new(line), area);
            return;
        }
        let mut spans = vec![Span::styled(
            format!(" {} ", self.shown_label()),
            Style::default().fg(Color::Black).bg(ACCENT),
        )];
        let (path, rows, progress, error, coverage, gpu) = self.with_index(|i| {
            let progress = if i.done {
                None
            } else {
                Some(i.chunks_total.map_or(0, |t| i.chunks_read * 100 / t.max(1)))
            };
            let coverage = i
                .totals
                .as_ref()
                .filter(|t| t.recorded_commands > 0)
                .map(|t| t.executed_commands as f64 * 100.0 / t.recorded_commands as f64);
            (
                i.path.display().to_string(),
                i.rows,
                progress,
                i.error.clone(),
                coverage,
                // The chip's name (`TU102`) of the GPU description: the status bar is short.
                i.run
                    .as_ref()
                    .and_then(|r| r.gpu.as_deref())
                    .and_then(|g| g.split_whitespace().next())
                    .map(str::to_string),
            )
        });
        spans.push(Span::raw(format!(" {path} · {} rows", format::count(rows))));
        if let Some(gpu) = gpu {
            // The GPU the model drove (replay --chipset).
            spans.push(Span::raw(format!(" · {gpu}")));
        }
        if let Some(share) = coverage {
            spans.push(Span::raw(format!(" · {share:.1}% of vkCmd* modelled")));
        }
        if let Some(p) = progress {
            spans.push(Span::styled(
                format!(" · indexing {p}%"),
                Style::default().fg(ACCENT),
            ));
        }
        let reps = self.with_index(|i| i.repetitions());
        if reps > 1 {
            spans.push(Span::raw(format!(
                " · repetition {}/{}",
                self.repetition, reps
            )));
        }
        spans.push(Span::raw(format!(" · metric {}", self.metric.name())));
        let message = self
            .message
            .clone()
            .or(error)
            .or_else(|| self.shown().store.error.clone());
        match message {
            Some(m) => spans.push(Span::styled(
                format!(" · {m}"),
                Style::default().fg(REGRESSED),
            )),
            None => spans.push(Span::styled(
                " · ? help · q quit",
                Style::default().fg(Color::DarkGray),
            )),
        }
        frame.render_widget(Paragraph::new(Line::from(spans)), area);
    }
}

/// A metric line: name, value, and with a baseline, B's value and the change.
fn value_line(name: &str, value: u64, base: Option<u64>, timing: bool) -> Line<'static> {
    let mut spans = vec![
        Span::raw(format!("  {name:<17}")),
        Span::raw(format!("{:>12}", format::value(value, timing))),
    ];
    if let Some(b) = base {
        spans.push(Span::styled(
            format!(
                "  B {} {}",
                format::value(b, timing),
                format::delta(value, b, timing)
            ),
            delta_style(value, b),
        ));
    }
    Line::from(spans)
}

fn signed(value: i128, timing: bool) -> String {
    let magnitude = u64::try_from(value.unsigned_abs()).unwrap_or(u64::MAX);
    let body = format::value(magnitude, timing);
    if value < 0 {
        format!("-{body}")
    } else {
        body
    }
}

/// Percentiles, and counts per power-of-two bucket from the lowest to the highest
/// non-empty one.
type Summary = (Vec<(&'static str, u64)>, Vec<(u64, u64)>);

fn summarize(h: Option<&hdrhistogram::Histogram<u64>>) -> Summary {
    let Some(h) = h.filter(|h| !h.is_empty()) else {
        return (Vec::new(), Vec::new());
    };
    let percentiles = PERCENTILES
        .iter()
        .map(|(q, name)| (*name, h.value_at_quantile(*q)))
        .collect();
    let mut counts = [0u64; 65];
    for v in h.iter_recorded() {
        let value = v.value_iterated_to();
        let bucket = (64 - value.leading_zeros()) as usize;
        counts[bucket] += v.count_at_value();
    }
    let first = counts.iter().position(|c| *c > 0).unwrap_or(0);
    let last = counts.iter().rposition(|c| *c > 0).unwrap_or(0);
    let buckets = (first..=last)
        .map(|b| (if b == 0 { 0 } else { 1u64 << (b - 1) }, counts[b]))
        .collect();
    (percentiles, buckets)
}

fn draw_help(frame: &mut Frame<'_>, area: Rect) {
    let width = 72.min(area.width);
    let height = 27.min(area.height);
    let popup = Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    );
    let fields: Vec<_> = field_names().collect();
    let text = vec![
        Line::from("Tab / Shift-Tab   next / previous pane"),
        Line::from("←→ h l  [ ] n p   previous / next frame"),
        Line::from("↑↓ j k            move in the pane (draws, submits, detail)"),
        Line::from("PgUp PgDn g G     page, first, last"),
        Line::from("c                 costliest frame, then its costliest draw"),
        Line::from("Enter             trace the selected draw's method stream"),
        Line::from("/                 filter draws: kind words and comparisons,"),
        Line::from("                  e.g. `indexed views>=2 mme>100 submit=0`"),
        Line::from(format!("                  fields: {}", fields.join(" "))),
        Line::from("s / S             next sort column / reverse it"),
        Line::from("m / M             next / previous metric"),
        Line::from("b                 with a baseline: A, B, A − B"),
        Line::from("r                 next repetition"),
        Line::from("t                 the frame's render passes and labels / its submits"),
        Line::from("mouse wheel       scroll the pane under the pointer"),
        Line::from("q  Esc  Ctrl-C    quit"),
        Line::from(""),
        Line::from(format!(
            "metrics: {}",
            Metric::ALL
                .iter()
                .map(|m| m.name())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Line::from("red: costlier than the baseline; green: cheaper"),
        Line::from(""),
        Line::from("? or Esc closes this help"),
    ];
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(text)
            .wrap(ratatui::widgets::Wrap { trim: false })
            .block(Block::default().borders(Borders::ALL).title(" Keys ")),
        popup,
    );
}
