//! The trace being written: one per process, shared by every thread. A lock gives every
//! call its place in one total order; the calling thread only encodes, and the trace
//! writer compresses and writes on its own thread.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use flatbuffers::{FlatBufferBuilder, UnionWIPOffset, WIPOffset};
use trace_format::generated::trace::CallT;
use trace_format::trace::CallMeta;
use trace_format::{TraceWriter, WriterOptions};

use crate::settings::{LogLevel, Settings};

/// When a call is worth recording, given the frame window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Creating, binding, filling or destroying objects: always, since frames in the
    /// window may use objects made before it.
    Setup,
    /// Recording command buffers: until the window ends, since a command buffer
    /// recorded before the window may be submitted in it.
    Command,
    /// Submits and presents: only in the window.
    Frame,
}

struct Recorder {
    writer: TraceWriter,
    start: Instant,
    frames: Option<(u64, u64)>,
    frame: u64,
    calls: u64,
}

enum State {
    NotStarted,
    Recording(Box<Recorder>),
    Stopped,
}

static STATE: Mutex<State> = Mutex::new(State::NotStarted);
static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// The layer's settings, read from the environment at first use.
pub fn settings() -> &'static Settings {
    SETTINGS.get_or_init(|| {
        let (settings, problems) = Settings::from_env();
        for p in problems {
            eprintln!("macroscope-capture: {p}");
        }
        settings
    })
}

/// Writes a log line at `level`.
pub fn log(level: LogLevel, message: &str) {
    if level <= settings().log {
        eprintln!("macroscope-capture: {message}");
    }
}

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

fn thread_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    thread_local!(static ID: u64 = NEXT.fetch_add(1, Ordering::Relaxed));
    ID.with(|id| *id)
}

/// How long frames may share one chunk.
const CHUNK_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(1);

/// Threads compressing the trace: one core in four of the machine's, leaving the rest
/// to the program, from one to four.
fn compression_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| (n.get() / 4).clamp(1, 4))
}

/// Opens the trace, unless it is open or capture stopped.
pub fn start() {
    let mut state = state();
    if !matches!(*state, State::NotStarted) {
        return;
    }
    let s = settings();
    let options = WriterOptions {
        compression_level: s.compression_level,
        // Small frames share a chunk (zstd sees what repeats between them); a program
        // killed mid-capture loses at most the last second.
        chunk_max_age: Some(CHUNK_MAX_AGE),
        compression_threads: compression_threads(),
        ..WriterOptions::default()
    };
    match TraceWriter::create(&s.file, &options) {
        Ok(writer) => {
            log(
                LogLevel::Info,
                &format!("capturing into {}", s.file.display()),
            );
            *state = State::Recording(Box::new(Recorder {
                writer,
                start: Instant::now(),
                frames: s.frames,
                frame: 0,
                calls: 0,
            }));
            register_exit_hook();
        }
        Err(e) => {
            log(LogLevel::Error, &format!("capture disabled: {e}"));
            *state = State::Stopped;
        }
    }
}

/// Whether calls are being recorded (for work that only recording needs).
pub fn recording() -> bool {
    matches!(*state(), State::Recording(_))
}

/// Records the call `build` makes, if `scope` is wanted now. `build` runs under the
/// lock, so calls land in the trace in the order they were made. Any failure (or a
/// panic in `build`) stops capture with one log line; the program runs on.
pub fn record(scope: Scope, result: i32, build: impl FnOnce() -> Option<CallT>) {
    let mut state = state();
    let State::Recording(r) = &mut *state else {
        return;
    };
    if !wanted(r, scope) {
        return;
    }
    let meta = CallMeta {
        thread_id: thread_id(),
        timestamp_ns: r.start.elapsed().as_nanos() as u64,
        result,
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| match build() {
        Some(call) => r.writer.append(meta, &call).map(|_| ()),
        None => Ok(()),
    }));
    match outcome {
        Ok(Ok(())) => r.calls += 1,
        Ok(Err(e)) => stop(&mut state, &format!("capture stopped: {e}")),
        Err(_) => stop(
            &mut state,
            "capture stopped: an internal error while encoding a call",
        ),
    }
}

/// Records the call `build` writes straight into the trace's builder: the fast path for
/// the commands a program issues by the thousand, with no allocation per call. As
/// [`record`] otherwise.
pub fn record_with<F>(scope: Scope, result: i32, build: F)
where
    F: FnOnce(
        &mut FlatBufferBuilder<'static>,
    ) -> (
        trace_format::generated::trace::Call,
        WIPOffset<UnionWIPOffset>,
    ),
{
    let mut state = state();
    let State::Recording(r) = &mut *state else {
        return;
    };
    if !wanted(r, scope) {
        return;
    }
    let meta = CallMeta {
        thread_id: thread_id(),
        timestamp_ns: r.start.elapsed().as_nanos() as u64,
        result,
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| r.writer.append_with(meta, build)));
    match outcome {
        Ok(Ok(_)) => r.calls += 1,
        Ok(Err(e)) => stop(&mut state, &format!("capture stopped: {e}")),
        Err(_) => stop(
            &mut state,
            "capture stopped: an internal error while encoding a call",
        ),
    }
}

/// Whether `scope` is recorded now, given the frame window.
fn wanted(r: &Recorder, scope: Scope) -> bool {
    match (scope, r.frames) {
        (_, None) | (Scope::Setup, _) => true,
        (Scope::Command, Some((_, last))) => r.frame <= last,
        (Scope::Frame, Some((first, last))) => (first..=last).contains(&r.frame),
    }
}

/// Ends the frame in progress (at a present); past the window's last frame, the trace
/// is finished.
pub fn end_frame() {
    let mut state = state();
    let State::Recording(r) = &mut *state else {
        return;
    };
    let meta = CallMeta {
        thread_id: thread_id(),
        timestamp_ns: r.start.elapsed().as_nanos() as u64,
        result: 0,
    };
    if let Err(e) = r.writer.end_frame(meta) {
        stop(&mut state, &format!("capture stopped: {e}"));
        return;
    }
    r.frame += 1;
    if r.frames.is_some_and(|(_, last)| r.frame > last) {
        finish_locked(&mut state);
    }
}

/// Finishes the trace (footer and all); later calls are not recorded.
pub fn finish() {
    finish_locked(&mut state());
}

fn finish_locked(state: &mut State) {
    if let State::Recording(r) = std::mem::replace(state, State::Stopped) {
        let (frame, calls) = (r.frame, r.calls);
        match r.writer.finish() {
            Ok(stats) => log(
                LogLevel::Info,
                &format!(
                    "trace finished: {} calls, {} frames, {} bytes in {}",
                    calls,
                    frame,
                    stats.file_bytes,
                    settings().file.display()
                ),
            ),
            Err(e) => log(LogLevel::Error, &format!("finishing the trace failed: {e}")),
        }
    }
}

/// Stops capture after an error, keeping what was written: the writer is finished so
/// every call recorded so far stays readable.
fn stop(state: &mut State, why: &str) {
    log(
        LogLevel::Error,
        &format!("{why}; the program runs on without capture"),
    );
    // One line says why: finishing after a write error (a full disk) fails the same
    // way, and the chunks written so far stay readable without a footer.
    if let State::Recording(r) = std::mem::replace(state, State::Stopped) {
        let _ = r.writer.finish();
    }
}

/// Runs `f`, turning a panic into a stop of capture rather than an unwind into the
/// program (which would abort it).
pub fn guard(f: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        stop(&mut state(), "capture stopped: an internal error");
    }
}

extern "C" {
    fn atexit(callback: extern "C" fn()) -> i32;
}

extern "C" fn finish_at_exit() {
    finish();
}

/// Finishes the trace when the process exits normally without destroying its instance.
fn register_exit_hook() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        // SAFETY: `finish_at_exit` is a plain function that only takes the lock.
        unsafe { atexit(finish_at_exit) };
    });
}
