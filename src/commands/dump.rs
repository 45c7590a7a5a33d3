//! `macroscope dump`: every record of a trace, as text lines or JSON objects (one per
//! line), optionally for a range of frames found through the footer index.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use serde_json::Value;
use trace_format::generated::trace::{Call, VulkanCall};
use trace_format::generic_params::ParamList;
use trace_format::{ReadOptions, TraceReader};

use super::FrameRange;
use trace_format::names;

/// Arguments of `macroscope dump`.
#[derive(clap::Args)]
pub struct Args {
    /// A trace file (.mscope).
    pub(crate) file: PathBuf,
    /// One JSON object per record, with every field in full.
    #[arg(long)]
    json: bool,
    /// Only these frames, e.g. `10-20`, `10-` or `10`.
    #[arg(long)]
    frames: Option<FrameRange>,
}

/// Arrays longer than this are summarized in text mode.
const TEXT_ARRAY_LIMIT: usize = 16;

/// Prints the records.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let mut reader = TraceReader::open_with(&args.file, &ReadOptions::parallel())?;
    if let Some(range) = args.frames {
        reader.seek_to_frame(range.first)?;
    }
    let mut out = BufWriter::new(io::stdout().lock());
    'chunks: for chunk in reader {
        let chunk = chunk?;
        // A chunk may hold several frames: count its frame boundaries.
        let mut next_frame = chunk.header().first_frame;
        for record in chunk.records() {
            let frame = next_frame;
            if record.call_type() == Call::FrameBoundary {
                next_frame += 1;
            }
            if args.frames.is_some_and(|r| frame > r.last) {
                break 'chunks;
            }
            if args.frames.is_some_and(|r| frame < r.first) {
                continue;
            }
            let envelope = record.envelope();
            let mut value = serde_json::to_value(record)?;
            let mut call = value
                .get_mut("call")
                .map(Value::take)
                .unwrap_or(Value::Null);
            if let Some(generic) = record.call_as_vulkan_call() {
                unpack_params(&generic, &mut call);
            }
            let (name, _) = names::record_name(&record);
            if args.json {
                let line = serde_json::json!({
                    "seq": envelope.seq(),
                    "frame": frame,
                    "thread_id": envelope.thread_id(),
                    "timestamp_ns": envelope.timestamp_ns(),
                    "result": envelope.result(),
                    "call": name,
                    "args": call,
                });
                writeln!(out, "{line}")?;
            } else {
                writeln!(
                    out,
                    "#{} frame {} thread {} +{}ns {} {} -> {}",
                    envelope.seq(),
                    frame,
                    envelope.thread_id(),
                    envelope.timestamp_ns(),
                    name,
                    summarize(call),
                    envelope.result()
                )?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// A generic record as the tables it stands for, however it was stored: its command by
/// name (`command`, where the record may give its number), its packed parameters as
/// `params` (or, where they do not read, the error that says why).
fn unpack_params(call: &VulkanCall<'_>, json: &mut Value) {
    let Some(object) = json.as_object_mut() else {
        return;
    };
    object.remove("command_id");
    if let Some(name) = trace_format::names::generic_command(call) {
        object.insert("command".into(), Value::String(name.into()));
    }
    if object.remove("packed").is_none() {
        return;
    }
    let params = match ParamList::of(call) {
        Ok(params) => serde_json::to_value(params).unwrap_or(Value::Null),
        Err(e) => Value::String(e.to_string()),
    };
    object.insert("params".into(), params);
}

/// The call's arguments as compact JSON, long arrays replaced by their length.
fn summarize(mut call: Value) -> Value {
    fn shorten(v: &mut Value) {
        match v {
            Value::Array(items) if items.len() > TEXT_ARRAY_LIMIT => {
                *v = Value::String(format!("<{} items>", items.len()));
            }
            Value::Array(items) => items.iter_mut().for_each(shorten),
            Value::Object(map) => map.values_mut().for_each(shorten),
            _ => {}
        }
    }
    shorten(&mut call);
    call
}
