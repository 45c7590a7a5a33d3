//! Tracing a draw's method stream on demand, on a background thread, by a
//! [`DrawTracer`] the caller provides (the CLI's replays the trace the results came from
//! up to that draw, through the driver model: the browser itself knows no driver).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;

use trace_format::generated::results::RunInfoT;

/// Consecutive writes of one method, in a draw's method stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MethodRun {
    /// The method's name, or its offset in hex.
    pub name: String,
    /// Whether a macro emitted it (as opposed to the push buffer).
    pub from_macro: bool,
    /// Consecutive writes.
    pub count: u32,
}

/// A draw's method stream, as a tracer found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracedDraw {
    /// The draw's sequence number in the trace.
    pub seq: u64,
    /// MME instructions its macro executed.
    pub mme_instructions: u64,
    /// The stream, consecutive writes of a method folded together.
    pub runs: Vec<MethodRun>,
}

impl TracedDraw {
    /// Methods written from the push buffer and emitted by macros.
    pub fn method_counts(&self) -> (u64, u64) {
        self.runs.iter().fold((0, 0), |(pushed, emitted), r| {
            if r.from_macro {
                (pushed, emitted + u64::from(r.count))
            } else {
                (pushed + u64::from(r.count), emitted)
            }
        })
    }
}

/// Traces one draw of a trace through a driver.
pub trait DrawTracer: Send + Sync {
    /// The method stream of the draw that wrote row `ordinal` of repetition 0 of the
    /// results `run` describes, replayed from `trace`.
    fn trace(&self, trace: &Path, run: &RunInfoT, ordinal: u64) -> Result<TracedDraw, String>;
}

/// Where a draw's method stream stands.
#[derive(Clone, Debug)]
pub enum Inspection {
    /// Being traced.
    Running,
    /// Traced.
    Done(TracedDraw),
    /// Could not be traced, and why.
    Failed(String),
}

/// Method streams by (source label, row), traced on background threads.
pub struct Inspector {
    tracer: Option<Arc<dyn DrawTracer>>,
    results: HashMap<(char, u64), Inspection>,
    sender: Sender<((char, u64), Inspection)>,
    receiver: Receiver<((char, u64), Inspection)>,
}

impl Default for Inspector {
    fn default() -> Self {
        let (sender, receiver) = channel();
        Inspector {
            tracer: None,
            results: HashMap::new(),
            sender,
            receiver,
        }
    }
}

impl Inspector {
    /// Traces draws with `tracer`.
    pub fn set_tracer(&mut self, tracer: Arc<dyn DrawTracer>) {
        self.tracer = Some(tracer);
    }

    /// The state of row `row` of source `source`, if it was asked for.
    pub fn get(&self, source: char, row: u64) -> Option<&Inspection> {
        self.results.get(&(source, row))
    }

    /// Whether a trace is running.
    pub fn running(&self) -> bool {
        self.results
            .values()
            .any(|i| matches!(i, Inspection::Running))
    }

    /// Picks up finished traces; true when one arrived.
    pub fn poll(&mut self) -> bool {
        let mut any = false;
        while let Ok((key, result)) = self.receiver.try_recv() {
            self.results.insert(key, result);
            any = true;
        }
        any
    }

    /// Starts tracing the draw at row `row` of `source`, the `ordinal`-th draw of its
    /// repetition with sequence number `seq`, from the trace `run` names.
    pub fn start(
        &mut self,
        source: char,
        row: u64,
        ordinal: u64,
        seq: u64,
        run: &RunInfoT,
        results_path: &Path,
    ) {
        let key = (source, row);
        if matches!(
            self.results.get(&key),
            Some(Inspection::Running | Inspection::Done(_))
        ) {
            return;
        }
        let trace = match find_trace(run, results_path) {
            Ok(trace) => trace,
            Err(e) => {
                self.results.insert(key, Inspection::Failed(e));
                return;
            }
        };
        let Some(tracer) = self.tracer.clone() else {
            let why = "no driver model to trace with here".to_string();
            self.results.insert(key, Inspection::Failed(why));
            return;
        };
        let run = run.clone();
        self.results.insert(key, Inspection::Running);
        let sender = self.sender.clone();
        let spawned = std::thread::Builder::new()
            .name("inspect-draw".into())
            .spawn(move || {
                let result = match tracer.trace(&trace, &run, ordinal) {
                    Ok(found) if found.seq == seq => Inspection::Done(found),
                    Ok(found) => Inspection::Failed(format!(
                        "{} does not match these results: its draw {ordinal} is call #{}, not #{seq}",
                        trace.display(),
                        found.seq
                    )),
                    Err(e) => Inspection::Failed(e),
                };
                let _ = sender.send((key, result));
            });
        if let Err(e) = spawned {
            self.results
                .insert(key, Inspection::Failed(format!("cannot start: {e}")));
        }
    }
}

/// The trace a results file was replayed from: its recorded path, or that path taken
/// relative to the results file's folder.
fn find_trace(run: &RunInfoT, results_path: &Path) -> Result<PathBuf, String> {
    let Some(recorded) = run.trace_path.as_deref().filter(|p| !p.is_empty()) else {
        return Err("the results do not name their trace".into());
    };
    let recorded = PathBuf::from(recorded);
    if recorded.is_file() {
        return Ok(recorded);
    }
    if let Some(beside) = results_path
        .parent()
        .zip(recorded.file_name())
        .map(|(dir, name)| dir.join(name))
        .filter(|p| p.is_file())
    {
        return Ok(beside);
    }
    Err(format!(
        "the trace {} is not there: the method stream is traced from it",
        recorded.display()
    ))
}
