//! Tracing a draw's method stream on demand: a background replay of the trace the
//! results came from, up to that draw, through the same driver model.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};

use driver::mme::Arch;
use replayer::{inspect_draw, DrawInspection, ReplayOptions};
use trace_format::generated::results::{MmeArch, RunInfoT};
use trace_format::ReadOptions;

/// Where a draw's method stream stands.
#[derive(Clone, Debug)]
pub enum Inspection {
    /// Being traced.
    Running,
    /// Traced.
    Done(DrawInspection),
    /// Could not be traced, and why.
    Failed(String),
}

/// Method streams by (source label, row), traced on background threads.
pub struct Inspector {
    results: HashMap<(char, u64), Inspection>,
    sender: Sender<((char, u64), Inspection)>,
    receiver: Receiver<((char, u64), Inspection)>,
}

impl Default for Inspector {
    fn default() -> Self {
        let (sender, receiver) = channel();
        Inspector {
            results: HashMap::new(),
            sender,
            receiver,
        }
    }
}

impl Inspector {
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
        let options = ReplayOptions {
            arch: match run.mme_arch {
                MmeArch::Fermi => Arch::Fermi,
                _ => Arch::Turing,
            },
            frames: (run.frames_first != 0 || run.frames_last != u64::MAX)
                .then_some((run.frames_first, run.frames_last)),
            repeat: 1,
            read: ReadOptions::parallel(),
        };
        self.results.insert(key, Inspection::Running);
        let sender = self.sender.clone();
        let spawned = std::thread::Builder::new()
            .name("inspect-draw".into())
            .spawn(move || {
                let result = match inspect_draw(&trace, &options, ordinal) {
                    Ok(found) if found.seq == seq => Inspection::Done(found),
                    Ok(found) => Inspection::Failed(format!(
                        "{} does not match these results: its draw {ordinal} is call #{}, not #{seq}",
                        trace.display(),
                        found.seq
                    )),
                    Err(e) => Inspection::Failed(format!("{}: {e}", trace.display())),
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
