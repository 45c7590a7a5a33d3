//! The trace being written: one per process, fed by every thread without a shared lock
//! on the hot path.
//!
//! A recorded call takes its place in the trace's one total order from an atomic
//! sequence counter, inside the hook, before the call returns to the program: whatever
//! the program orders after a call (a handle passed to another thread, a command buffer
//! submitted after it was ended) gets a later number. The calling thread encodes the
//! record into its own block (entered without a locked instruction of its own, see
//! [`crate::owned_cell`]) and, when the block fills, hands it to the merger thread
//! ([`crate::merger`]) through a bounded queue and takes an emptied one from its pool.
//! The merger appends records by number. Submits, presents, the end of capture and a
//! merger holding too much collect every thread's block: every number below the
//! counter's value at the collection is then handed over (a thread takes its number
//! inside its block; a call that stepped back for the collection follows in its thread's
//! next block), so the trace is gapless up to it. The trace writer
//! compresses and writes on its own threads.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use flatbuffers::{FlatBufferBuilder, UnionWIPOffset, WIPOffset};
use trace_format::direct::DirectField;
use trace_format::generated::trace::{Call, CallT};
use trace_format::record_block::{RecordBlock, RecordEncoder};
use trace_format::sequencer::Sequencer;
use trace_format::trace::CallMeta;

use crate::merger::{self, BlockSender, Merger};
use crate::owned_cell::OwnedCell;
use trace_format::{TraceWriter, WriterOptions};

use crate::clock;
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

const NOT_STARTED: u8 = 0;
const RECORDING: u8 = 1;
const STOPPED: u8 = 2;

/// Whether the trace is open: read by every call without a lock.
static STATUS: AtomicU8 = AtomicU8::new(NOT_STARTED);
/// The next sequence number.
static SEQ: AtomicU64 = AtomicU64::new(0);
/// The frame being recorded (for the frame window).
static FRAME: AtomicU64 = AtomicU64::new(0);
/// The merger thread, while the trace is open. Its lock orders frame ends, the end of
/// capture and stops; recording threads never take it.
static SHARED: Mutex<Option<Merger>> = Mutex::new(None);
/// Hands blocks to the merger thread (set when the trace opens).
static SENDER: OnceLock<BlockSender> = OnceLock::new();
/// Every recording thread's block, for collection.
static THREADS: Mutex<Vec<Arc<OwnedCell<ThreadBlock>>>> = Mutex::new(Vec::new());
static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// A block is handed to the merger when it holds this many bytes.
const BLOCK_BYTES: usize = 64 * 1024;
/// The room a new block is made with: a full block's bytes and the record that fills it.
const BLOCK_CAPACITY: usize = BLOCK_BYTES + 16 * 1024;

/// What one thread records into.
#[derive(Default)]
struct ThreadBlock {
    encoder: RecordEncoder,
    block: RecordBlock,
    /// The thread's id in the trace.
    thread_id: u64,
    /// The clock's last reading on this thread.
    clock_ns: u64,
    /// Commands recorded since that reading.
    commands_since_clock: u32,
}

/// A thread reads the clock at every call but commands, and at every
/// `CLOCK_EVERY`th command: reading it costs more than the rest of recording a
/// command on a virtual machine, and the commands between readings are microseconds
/// apart. Those commands carry the last reading.
const CLOCK_EVERY: u32 = 16;

impl ThreadBlock {
    /// The envelope of a call of `scope` made now, with result `result`.
    fn meta(&mut self, scope: Scope, result: i32) -> CallMeta {
        if scope != Scope::Command || self.commands_since_clock == 0 {
            self.clock_ns = clock::now_ns();
        }
        if scope == Scope::Command {
            self.commands_since_clock = (self.commands_since_clock + 1) % CLOCK_EVERY;
        }
        CallMeta {
            thread_id: self.thread_id,
            timestamp_ns: self.clock_ns,
            result,
        }
    }
}

/// The calling thread's block, registered for collection while the thread lives.
struct LocalBlock(Arc<OwnedCell<ThreadBlock>>);

impl LocalBlock {
    fn register() -> Self {
        let block = Arc::new(OwnedCell::new(ThreadBlock {
            thread_id: thread_id(),
            block: merger::fresh_block(BLOCK_CAPACITY),
            ..ThreadBlock::default()
        }));
        lock(&THREADS).push(Arc::clone(&block));
        LocalBlock(block)
    }
}

impl Drop for LocalBlock {
    /// A thread that ends hands over what it recorded.
    fn drop(&mut self) {
        let block = std::mem::take(&mut self.0.collect().block);
        lock(&THREADS).retain(|b| !Arc::ptr_eq(b, &self.0));
        hand_over(block);
    }
}

thread_local!(static LOCAL: LocalBlock = LocalBlock::register());

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

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
    let mut shared = lock(&SHARED);
    if STATUS.load(Ordering::Acquire) != NOT_STARTED {
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
    let hooks = merger::Hooks {
        collect,
        stop: stop_from_merger,
    };
    let opened = TraceWriter::create(&s.file, &options)
        .map_err(|e| e.to_string())
        .and_then(|writer| Merger::spawn(Sequencer::new(writer), hooks).map_err(|e| e.to_string()));
    match opened {
        Ok(merger) => {
            log(
                LogLevel::Info,
                &format!("capturing into {}", s.file.display()),
            );
            clock::start();
            let _ = SENDER.set(merger.sender());
            *shared = Some(merger);
            STATUS.store(RECORDING, Ordering::Release);
            register_exit_hook();
        }
        Err(e) => {
            log(LogLevel::Error, &format!("capture disabled: {e}"));
            STATUS.store(STOPPED, Ordering::Release);
        }
    }
}

/// Whether calls are being recorded (for work that only recording needs).
pub fn recording() -> bool {
    STATUS.load(Ordering::Acquire) == RECORDING
}

/// The envelope of a call made now, with result `result`.
fn meta(result: i32) -> CallMeta {
    CallMeta {
        thread_id: thread_id(),
        timestamp_ns: clock::now_ns(),
        result,
    }
}

/// Records the call `build` makes, if `scope` is wanted now. `build` runs first, outside
/// any lock; the call takes its place in the order when it is encoded. Any failure (or a
/// panic in `build`) stops capture with one log line; the program runs on.
pub fn record(scope: Scope, result: i32, build: impl FnOnce() -> Option<CallT>) {
    if !recording() || !wanted(scope) {
        return;
    }
    let call = match catch_unwind(AssertUnwindSafe(build)) {
        Ok(Some(call)) => call,
        Ok(None) => return,
        Err(_) => return stop("capture stopped: an internal error while encoding a call"),
    };
    let call_type = call.call_type();
    if call_type == Call::NONE {
        return stop("capture stopped: an internal error: a call without a type");
    }
    record_with(scope, result, |fbb| {
        let offset = call
            .pack(fbb)
            .expect("a call other than NONE packs to a table");
        (call_type, offset)
    });
}

/// Records the call `build` writes straight into the calling thread's encoder: the fast
/// path for the commands a program issues by the thousand, with no allocation and no
/// shared lock per call. As [`record`] otherwise.
pub fn record_with<F>(scope: Scope, result: i32, build: F)
where
    F: FnOnce(&mut FlatBufferBuilder<'static>) -> (Call, WIPOffset<UnionWIPOffset>),
{
    record_into(scope, result, |encoder, block, seq, meta| {
        block.push(encoder.encode(seq, meta, build));
    });
}

/// Records a call of `call_type` whose table holds `fields`, laid out straight into the
/// calling thread's block without a flatbuffers builder (see [`trace_format::direct`]):
/// the fastest path, for calls of scalars and scalar arrays. As [`record`] otherwise.
#[inline(always)]
pub fn record_direct(scope: Scope, result: i32, call_type: Call, fields: &[DirectField<'_>]) {
    record_into(scope, result, |_, block, seq, meta| {
        block.push_direct(seq, meta, call_type, fields);
    });
}

/// Takes a sequence number for a call made now and has `push` put its record into the
/// calling thread's block, if `scope` is wanted now.
#[inline(always)]
fn record_into<P>(scope: Scope, result: i32, push: P)
where
    P: FnOnce(&mut RecordEncoder, &mut RecordBlock, u64, CallMeta),
{
    if !recording() || !wanted(scope) {
        return;
    }
    let mut push = Some(push);
    let outcome = LOCAL.try_with(|local| {
        let (mut guard, seq) = local.0.enter(|| SEQ.fetch_add(1, Ordering::SeqCst));
        let meta = guard.meta(scope, result);
        let ThreadBlock { encoder, block, .. } = &mut *guard;
        let encoded = catch_unwind(AssertUnwindSafe(|| {
            if let Some(push) = push.take() {
                push(encoder, block, seq, meta);
            }
        }));
        let full = block.len_bytes() >= BLOCK_BYTES;
        let block = full.then(|| std::mem::replace(block, merger::fresh_block(BLOCK_CAPACITY)));
        drop(guard);
        (encoded.is_ok(), block)
    });
    match outcome {
        Ok((true, Some(block))) => hand_over(block),
        Ok((true, None)) => {}
        Ok((false, _)) => stop("capture stopped: an internal error while encoding a call"),
        // The thread is ending and its block is gone: its record goes over alone.
        Err(_) => {
            if let Some(push) = push {
                record_alone(meta(result), push);
            }
        }
    }
}

/// Takes a sequence number and hands over the call `push` encodes in a block of its
/// own: for a thread whose block is gone (during its end), and for frame boundaries.
fn record_alone<P>(meta: CallMeta, push: P)
where
    P: FnOnce(&mut RecordEncoder, &mut RecordBlock, u64, CallMeta),
{
    let mut block = RecordBlock::new();
    let seq = SEQ.fetch_add(1, Ordering::SeqCst);
    match catch_unwind(AssertUnwindSafe(|| {
        push(&mut RecordEncoder::new(), &mut block, seq, meta);
    })) {
        Ok(()) => hand_over(block),
        Err(_) => stop("capture stopped: an internal error while encoding a call"),
    }
}

/// Hands a block to the merger thread (waiting while its queue is full).
fn hand_over(block: RecordBlock) {
    if let Some(sender) = SENDER.get() {
        sender.send(block);
    }
}

/// Takes every thread's block, leaving each an emptied one. Every sequence number taken
/// before this starts is then in the blocks returned or handed over already (a thread
/// takes its number inside its block, so a collection waits for an encoding under way),
/// but for a call that stepped back for the collection: its record goes into its
/// thread's next block, and the merger waits for it.
fn collect() -> Vec<RecordBlock> {
    let threads: Vec<_> = lock(&THREADS).clone();
    let mut blocks = Vec::with_capacity(threads.len());
    for thread in threads {
        let mut guard = thread.collect();
        if guard.block.len_bytes() > 0 {
            let block = std::mem::replace(&mut guard.block, merger::fresh_block(BLOCK_CAPACITY));
            drop(guard);
            blocks.push(block);
        }
    }
    blocks
}

/// Hands every thread's block to the merger: at submits, so that the trace is brought
/// up to date with every call recorded so far, on every thread.
pub fn sync() {
    if recording() {
        hand_over_all();
    }
}

/// Hands every thread's block to the merger.
fn hand_over_all() {
    for block in collect() {
        hand_over(block);
    }
}

/// Whether `scope` is recorded now, given the frame window.
fn wanted(scope: Scope) -> bool {
    let frame = FRAME.load(Ordering::Relaxed);
    match (scope, settings().frames) {
        (_, None) | (Scope::Setup, _) => true,
        (Scope::Command, Some((_, last))) => frame <= last,
        (Scope::Frame, Some((first, last))) => (first..=last).contains(&frame),
    }
}

/// Ends the frame in progress (at a present): a frame-boundary record after every call
/// recorded so far on any thread; past the window's last frame, the trace is finished.
pub fn end_frame() {
    let mut shared = lock(&SHARED);
    if shared.is_none() || !recording() {
        return;
    }
    // Frame numbers and sequence numbers of boundaries ascend together: both are taken
    // under the shared lock.
    let frame = FRAME.load(Ordering::Relaxed);
    record_alone(meta(0), |_, block, seq, meta| {
        block.push_direct(seq, meta, Call::FrameBoundary, &[DirectField::U64(frame)]);
    });
    sync();
    FRAME.store(frame + 1, Ordering::Relaxed);
    if settings().frames.is_some_and(|(_, last)| frame + 1 > last) {
        finish_locked(&mut shared);
    }
}

/// Finishes the trace (footer and all); later calls are not recorded.
pub fn finish() {
    finish_locked(&mut lock(&SHARED));
}

fn finish_locked(shared: &mut Option<Merger>) {
    let Some(merger) = shared.take() else {
        return;
    };
    STATUS.store(STOPPED, Ordering::Release);
    // The merger collects every thread's block itself once it has merged its queue.
    match merger.finish() {
        Some(Ok(done)) => log(
            LogLevel::Info,
            &format!(
                "trace finished: {} calls, {} frames, {} bytes in {}",
                done.records - done.frames,
                done.frames,
                done.stats.file_bytes,
                settings().file.display()
            ),
        ),
        Some(Err(e)) => log(LogLevel::Error, &format!("finishing the trace failed: {e}")),
        // The merger stopped after an error and said so.
        None => {}
    }
}

/// Stops capture after an error, keeping what was written.
fn stop(why: &str) {
    stop_locked(&mut lock(&SHARED), why);
}

/// Stops capture after an error, keeping what was written: the trace is finished so
/// every call recorded so far stays readable.
fn stop_locked(shared: &mut Option<Merger>, why: &str) {
    if STATUS.swap(STOPPED, Ordering::AcqRel) == STOPPED {
        return;
    }
    log(
        LogLevel::Error,
        &format!("{why}; the program runs on without capture"),
    );
    // One line says why: finishing after a write error (a full disk) fails the same
    // way, and the chunks written so far stay readable without a footer.
    if let Some(merger) = shared.take() {
        let _ = merger.finish();
    }
}

/// Stops capture after an error on the merger thread, which finishes the trace itself
/// (it must not wait on the shared lock: a thread holding it may wait on the merger).
fn stop_from_merger(why: &str) {
    if STATUS.swap(STOPPED, Ordering::AcqRel) != STOPPED {
        log(
            LogLevel::Error,
            &format!("{why}; the program runs on without capture"),
        );
    }
}

/// Runs `f`, turning a panic into a stop of capture rather than an unwind into the
/// program (which would abort it).
pub fn guard(f: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(f)).is_err() {
        stop("capture stopped: an internal error");
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
