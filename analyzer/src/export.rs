//! `export`: results as CSV, JSON Lines, Chrome/Perfetto trace-event JSON, or the rows'
//! counts as text ([`crate::counts`]).
//!
//! The Perfetto export lays each submit's draws end to end on its own track (one
//! process per repetition): a slice per draw, with `encode` and `execute` nested in it
//! and `multiview loop` inside `execute`. Times are host time in the replay.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use serde_json::json;
use trace_format::generated::results::{DrawPlace, DrawRow};
use trace_format::{ReadOptions, ResultsReader};

use crate::metrics::kind_name;
use crate::report::PlaceNames;
use crate::AnalyzeError;

/// An export format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values with a header row.
    Csv,
    /// One JSON object per draw, one per line.
    Json,
    /// Chrome trace-event JSON, which ui.perfetto.dev opens.
    Perfetto,
    /// Every row's counts as text, runs of equal rows folded ([`crate::counts`]).
    Counts,
}

const CSV_HEADER: &str = "seq,frame,submit,repetition,kind,pipeline,view_mask,view_count,instance_count,element_count,indirect_draw_count,mme_instructions,methods,pushbuf_dwords,hw_draws,encode_ns,execute_ns,multiview_ns,pass,label";

/// A row's render pass instance and label region as the report names them.
fn place_of(names: &PlaceNames, place: DrawPlace) -> (String, String) {
    (names.pass(place.pass()), names.label(place.label()))
}

/// `field` as one CSV field: quoted when it holds a comma, a quote or a line break.
fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

fn json_row(r: &DrawRow, (pass, label): &(String, String)) -> serde_json::Value {
    json!({
        "seq": r.seq(), "frame": r.frame(), "submit": r.submit(), "repetition": r.repetition(),
        "kind": kind_name(r.kind()), "pipeline": r.pipeline(), "view_mask": r.view_mask(),
        "view_count": r.view_count(), "instance_count": r.instance_count(),
        "element_count": r.element_count(), "indirect_draw_count": r.indirect_draw_count(),
        "mme_instructions": r.mme_instructions(), "methods": r.methods(),
        "pushbuf_dwords": r.pushbuf_dwords(), "hw_draws": r.hw_draws(),
        "encode_ns": r.encode_ns(), "execute_ns": r.mme_ns(), "multiview_ns": r.multiview_ns(),
        "pass": pass, "label": label,
    })
}

/// Writes `path`'s draw rows to `out`; returns how many.
pub fn export(path: &Path, format: Format, out: &mut dyn Write) -> Result<u64, AnalyzeError> {
    if format == Format::Counts {
        let rows = crate::counts::export_counts(path, out)?;
        out.flush()?;
        return Ok(rows);
    }
    let mut rows = 0u64;
    let mut perfetto = Perfetto::default();
    match format {
        Format::Csv => writeln!(out, "{CSV_HEADER}")?,
        Format::Json | Format::Counts => {}
        Format::Perfetto => write!(out, "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[")?,
    }
    let mut names = PlaceNames::default();
    for chunk in ResultsReader::open_with(path, &ReadOptions::parallel())? {
        let chunk = chunk?;
        names.add(&chunk);
        for (i, r) in chunk.draws().enumerate() {
            rows += 1;
            let place = place_of(&names, chunk.draw_place(i));
            match format {
                Format::Csv => writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    r.seq(),
                    r.frame(),
                    r.submit(),
                    r.repetition(),
                    kind_name(r.kind()),
                    r.pipeline(),
                    r.view_mask(),
                    r.view_count(),
                    r.instance_count(),
                    r.element_count(),
                    r.indirect_draw_count(),
                    r.mme_instructions(),
                    r.methods(),
                    r.pushbuf_dwords(),
                    r.hw_draws(),
                    r.encode_ns(),
                    r.mme_ns(),
                    r.multiview_ns(),
                    csv_field(&place.0),
                    csv_field(&place.1)
                )?,
                Format::Json => writeln!(out, "{}", json_row(r, &place))?,
                Format::Perfetto => perfetto.draw(out, r, &place)?,
                Format::Counts => {}
            }
        }
    }
    if format == Format::Perfetto {
        write!(out, "]}}")?;
    }
    out.flush()?;
    Ok(rows)
}

/// Perfetto export state: which tracks are named, where each track's time is.
#[derive(Default)]
struct Perfetto {
    tracks: HashSet<(u16, u32)>,
    cursor: std::collections::HashMap<(u16, u32), u64>,
    started: bool,
}

impl Perfetto {
    fn event(&mut self, out: &mut dyn Write, event: serde_json::Value) -> std::io::Result<()> {
        if self.started {
            write!(out, ",")?;
        }
        self.started = true;
        write!(out, "{event}")
    }

    fn draw(
        &mut self,
        out: &mut dyn Write,
        r: &DrawRow,
        place: &(String, String),
    ) -> std::io::Result<()> {
        let (pid, tid) = (u32::from(r.repetition()) + 1, r.submit());
        if self.tracks.insert((r.repetition(), tid)) {
            self.event(out, json!({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": format!("repetition {}", r.repetition())}}))?;
            self.event(out, json!({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": format!("submit {tid}")}}))?;
        }
        let at = self.cursor.entry((r.repetition(), tid)).or_default();
        let start = *at;
        let (encode, execute) = (r.encode_ns(), r.mme_ns());
        *at += encode + execute;
        let us = |ns: u64| ns as f64 / 1000.0;
        let name = format!("{} #{}", kind_name(r.kind()), r.seq());
        self.event(
            out,
            json!({"ph": "X", "cat": "draw", "name": name, "pid": pid, "tid": tid, "ts": us(start), "dur": us(encode + execute), "args": json_row(r, place)}),
        )?;
        self.event(out, json!({"ph": "X", "cat": "encode", "name": "encode", "pid": pid, "tid": tid, "ts": us(start), "dur": us(encode)}))?;
        self.event(out, json!({"ph": "X", "cat": "execute", "name": "execute", "pid": pid, "tid": tid, "ts": us(start + encode), "dur": us(execute)}))?;
        let mv = r.multiview_ns().min(execute);
        if mv > 0 {
            let ts = start + encode + execute - mv;
            self.event(out, json!({"ph": "X", "cat": "multiview", "name": "multiview loop", "pid": pid, "tid": tid, "ts": us(ts), "dur": us(mv)}))?;
        }
        Ok(())
    }
}

/// The format called `name`.
pub fn format_from_name(name: &str) -> Option<Format> {
    match name {
        "csv" => Some(Format::Csv),
        "json" => Some(Format::Json),
        "perfetto" => Some(Format::Perfetto),
        "counts" => Some(Format::Counts),
        _ => None,
    }
}
