//! The trace being written: one per process, fed by every thread without a shared lock
//! on the hot path.
//!
//! Every recorded call takes its place in the trace's one total order inside the hook,
//! before it returns to the program, by an order key ([`trace_format::sequencer`]):
//! a *numbered* call (creation, destruction, submits, anything that may order against
//! another thread) takes the next value of one atomic counter; a command recorded into
//! a command buffer only reads it, so threads recording at once share no written cache
//! line (a command buffer that changes threads mid-recording makes its next command
//! numbered, [`crate::command_buffers`]). The calling thread encodes the record into its
//! own block (entered without a fence of its own where the collectors can fence for it,
//! see [`crate::owned_cell`]) and, when
//! the block fills, hands it to the merger thread ([`crate::merger`]) before it leaves
//! the block, and takes an emptied one from its pool.
//!
//! Submits, presents, the end of capture and a merger holding too much *collect* every
//! thread's block: the collector reads the counter at `c` first, then takes each block
//! (waiting for an encoding under way); a thread that enters after that reads `c` or
//! more. So every numbered call below `c` and every command recorded before the
//! collection is then handed over, before the collector's release of `c`, which lets
//! the merger write them. Collections take one
//! lock, so their releases arrive in order after their blocks. The trace writer
//! compresses and writes on its own threads.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use flatbuffers::{FlatBufferBuilder, UnionWIPOffset, WIPOffset};
use trace_format::direct::DirectField;
use trace_format::generated::trace::{Call, CallT};
use trace_format::record_block::{RecordBlock, RecordEncoder};
use trace_format::sequencer::{command_key, numbered_key, Sequencer};
use trace_format::trace::CallMeta;

use crate::command_buffers::{self, OwnCache};
use crate::merger::{self, BlockSender, Merger};
use crate::owned_cell::OwnedCell;
use trace_format::{TraceWriter, WriterOptions};

use crate::cache_line::CacheLine;
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
static STATUS: CacheLine<AtomicU8> = CacheLine(AtomicU8::new(NOT_STARTED));
/// The next numbered call's number: read by every command, written by numbered calls
/// only, alone on its lines.
static SEQ: CacheLine<AtomicU64> = CacheLine(AtomicU64::new(0));
/// Held by a collection from reading [`SEQ`] until its release is sent.
static COLLECTING: Mutex<()> = Mutex::new(());
/// The frame being recorded (for the frame window).
static FRAME: CacheLine<AtomicU64> = CacheLine(AtomicU64::new(0));
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
    /// The command buffers this thread recorded last.
    own: OwnCache,
}

/// A thread reads the clock at every call but commands, and at every
/// `CLOCK_EVERY`th command: reading it costs more than the rest of recording a
/// command on a virtual machine (about 30 ns on the NVIDIA machine), and the commands
/// between readings are tens of microseconds apart at most. Those commands carry the
/// last reading.
const CLOCK_EVERY: u32 = 64;

/// How a call takes its place in the trace's order.
#[derive(Clone, Copy)]
enum Order {
    /// By the next number of the shared counter.
    Numbered,
    /// After the numbered calls before it, in its command buffer's order (the raw
    /// handle).
    Command(u64),
}

impl ThreadBlock {
    /// The order key of a call made now (inside the block, after the owner's fence).
    #[inline(always)]
    fn key(&mut self, order: Order) -> u64 {
        match order {
            Order::Command(cb) if self.own.recorded_here(cb, self.thread_id) => {
                command_key(SEQ.load(Ordering::SeqCst))
            }
            _ => numbered_key(SEQ.fetch_add(1, Ordering::SeqCst)),
        }
    }

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
    /// A thread that ends hands over what it recorded (before it leaves the list a
    /// collection looks at, so the block is on its way before any later release).
    fn drop(&mut self) {
        let mut guard = self.0.collect();
        hand_over(std::mem::take(&mut guard.block));
        drop(guard);
        lock(&THREADS).retain(|b| !Arc::ptr_eq(b, &self.0));
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

/// Where this process's trace goes, once capture has started.
static TRACE_PATH: OnceLock<PathBuf> = OnceLock::new();

/// Where this process's trace goes: the file named, or the one beside it where another
/// process writes that ([`crate::trace_file`]).
pub fn trace_path() -> &'static Path {
    TRACE_PATH.get().map_or(&settings().file, |p| p)
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
        collect: hand_over_all,
        stop: stop_from_merger,
    };
    let opened = || -> Result<_, String> {
        let claimed =
            crate::trace_file::claim(&s.file).map_err(|e| format!("{}: {e}", s.file.display()))?;
        let writer = TraceWriter::create_in(claimed.file, &claimed.path, &options)
            .map_err(|e| e.to_string())?;
        let merger = Merger::spawn(Sequencer::new(writer), hooks).map_err(|e| e.to_string())?;
        Ok((claimed.path, claimed.beside, merger))
    };
    match opened() {
        Ok((path, beside, merger)) => {
            match beside {
                // Said whatever the log level: the trace is not where it was asked for.
                true => eprintln!(
                    "macroscope-capture: another process of this program has taken {}: process {} captures into {}",
                    s.file.display(),
                    std::process::id(),
                    path.display()
                ),
                false => log(LogLevel::Info, &format!("capturing into {}", path.display())),
            }
            let _ = TRACE_PATH.set(path);
            clock::start();
            crate::asymmetric_fence::start(|said| log(LogLevel::Info, said));
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

/// Whether capture is over: its trace finished (the frame window passed, or the
/// program ended it) or stopped after an error. Nothing is recorded from then on.
pub fn over() -> bool {
    STATUS.load(Ordering::Acquire) == STOPPED
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
    record_built(scope, Order::Numbered, result, build);
}

/// Records the command `build` makes, recorded into the command buffer
/// `command_buffer` (its raw handle): it takes its place by its command buffer, without
/// writing the shared counter. As [`record`] otherwise.
pub fn record_command(command_buffer: u64, build: impl FnOnce() -> Option<CallT>) {
    record_built(Scope::Command, Order::Command(command_buffer), 0, build);
}

/// Whether a call of `scope` made now is recorded (for work that only its record needs).
pub fn wants(scope: Scope) -> bool {
    recording() && wanted(scope)
}

/// What `build` makes, for a record; `None`, with capture stopped and one log line,
/// when it panics (the program runs on).
pub fn built<T>(build: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(build)) {
        Ok(made) => Some(made),
        Err(_) => {
            stop("capture stopped: an internal error while encoding a call");
            None
        }
    }
}

/// Records the call `build` makes, taking its place as `order` says.
fn record_built(scope: Scope, order: Order, result: i32, build: impl FnOnce() -> Option<CallT>) {
    if !wants(scope) {
        return;
    }
    let Some(Some(call)) = built(build) else {
        return;
    };
    let call_type = call.call_type();
    if call_type == Call::NONE {
        return stop("capture stopped: an internal error: a call without a type");
    }
    record_into(scope, order, result, |encoder, block, key, meta| {
        block.push(encoder.encode(key, meta, |fbb| {
            let offset = call
                .pack(fbb)
                .expect("a call other than NONE packs to a table");
            (call_type, offset)
        }));
    });
}

/// Records the call `build` writes straight into the calling thread's encoder: the fast
/// path for the commands a program issues by the thousand, with no allocation and no
/// shared lock per call. As [`record`] otherwise.
pub fn record_with<F>(scope: Scope, result: i32, build: F)
where
    F: FnOnce(&mut FlatBufferBuilder<'static>) -> (Call, WIPOffset<UnionWIPOffset>),
{
    record_into(
        scope,
        Order::Numbered,
        result,
        |encoder, block, key, meta| {
            block.push(encoder.encode(key, meta, build));
        },
    );
}

/// Records a call of `call_type` whose table holds `fields`, laid out straight into the
/// calling thread's block without a flatbuffers builder (see [`trace_format::direct`]):
/// the fastest path, for calls of scalars and scalar arrays. As [`record`] otherwise.
#[inline(always)]
pub fn record_direct(scope: Scope, result: i32, call_type: Call, fields: &[DirectField<'_>]) {
    record_into(
        scope,
        Order::Numbered,
        result,
        #[inline(always)]
        |_, block, key, meta| {
            block.push_direct(key, meta, call_type, fields);
        },
    );
}

/// Records a command of `call_type` recorded into `command_buffer` (its raw handle)
/// whose table holds the fields `fields` gives, as [`record_direct`] lays them out, in
/// its command buffer's order as [`record_command`] takes it: the path of the commands
/// programs issue by the thousand. Each hook's `fields` is a closure of its own, so
/// each hook gets its own copy of this path, inlined, with its list of fields known:
/// the record is written by straight stores. The recording closure is inlined too:
/// as a call of its own, its captures went through the stack and each field's kind
/// was looked at again (vkCmdDraw: 257 instructions in the layer, 150 inlined, by
/// callgrind under lavapipe).
#[inline(always)]
pub fn record_command_direct<'a, const N: usize>(
    command_buffer: u64,
    call_type: Call,
    fields: impl FnOnce() -> [DirectField<'a>; N],
) {
    let order = Order::Command(command_buffer);
    record_into(
        Scope::Command,
        order,
        0,
        #[inline(always)]
        |_, block, key, meta| {
            block.push_direct(key, meta, call_type, &fields());
        },
    );
}

/// `vkBeginCommandBuffer` on this thread: the commands it records into
/// `command_buffer` take their place by it from now on.
pub fn command_buffer_begun(command_buffer: u64) {
    if recording() {
        command_buffers::begun(command_buffer, thread_id());
    }
}

/// Takes an order key for a call made now and has `push` put its record into the
/// calling thread's block, if `scope` is wanted now. A full block goes to the merger
/// before the thread leaves it; the thread then waits while the merger is too far
/// behind.
#[inline(always)]
fn record_into<P>(scope: Scope, order: Order, result: i32, push: P)
where
    P: FnOnce(&mut RecordEncoder, &mut RecordBlock, u64, CallMeta),
{
    if !wanted_now(scope) {
        return;
    }
    let mut push = Some(push);
    let outcome = LOCAL.try_with(|local| {
        let mut guard = local.0.enter();
        let key = guard.key(order);
        let meta = guard.meta(scope, result);
        let ThreadBlock { encoder, block, .. } = &mut *guard;
        let encoded = catch_unwind(AssertUnwindSafe(|| {
            if let Some(push) = push.take() {
                push(encoder, block, key, meta);
            }
        }));
        let full = block.len_bytes() >= BLOCK_BYTES;
        if full {
            hand_over_full(block);
        }
        drop(guard);
        (encoded.is_ok(), full)
    });
    match outcome {
        Ok((true, true)) => merger::wait_for_room(),
        Ok((true, false)) => {}
        Ok((false, _)) => stop("capture stopped: an internal error while encoding a call"),
        // The thread is ending and its block is gone: its record goes over alone.
        Err(_) => {
            if let Some(push) = push {
                record_alone(meta(result), push);
            }
        }
    }
}

/// Takes a number and hands over the call `push` encodes in a block of its own (a
/// numbered call, whatever it is): for a thread whose block is gone (during its end).
/// The merger waits for its number if a release overtakes it.
fn record_alone<P>(meta: CallMeta, push: P)
where
    P: FnOnce(&mut RecordEncoder, &mut RecordBlock, u64, CallMeta),
{
    let mut block = RecordBlock::new();
    let key = numbered_key(SEQ.fetch_add(1, Ordering::SeqCst));
    match catch_unwind(AssertUnwindSafe(|| {
        push(&mut RecordEncoder::new(), &mut block, key, meta);
    })) {
        Ok(()) => {
            hand_over(block);
            merger::wait_for_room();
        }
        Err(_) => stop("capture stopped: an internal error while encoding a call"),
    }
}

/// Hands the calling thread's full block to the merger, leaving it a fresh one: out of
/// the recording path, which then keeps fewer values on the stack (a command's hook
/// saved and restored them at every call).
#[cold]
#[inline(never)]
fn hand_over_full(block: &mut RecordBlock) {
    hand_over(std::mem::replace(
        block,
        merger::fresh_block(BLOCK_CAPACITY),
    ));
}

/// Hands a block to the merger thread (without waiting: see [`merger::wait_for_room`]).
fn hand_over(block: RecordBlock) {
    if let Some(sender) = SENDER.get() {
        sender.send(block);
    }
}

/// The least time between two collections at submits and frame ends: a program that
/// submits and presents a thousand times a second would otherwise wake the merger
/// thread as often, for a few hundred bytes each time (on a CPU the program's rendering
/// fills, each wake-up costs it more than the bytes do).
const COLLECTION_INTERVAL_NS: u64 = 4_000_000;

/// When the last collection started ([`clock::now_ns`]).
static LAST_COLLECTION_NS: CacheLine<AtomicU64> = CacheLine(AtomicU64::new(0));

/// At submits and frame ends: hands every thread's block to the merger where the last
/// collection is [`COLLECTION_INTERVAL_NS`] old, so that the trace is brought up to
/// date with every call recorded so far, on every thread, that often.
pub fn sync() {
    if !recording() {
        return;
    }
    let now = clock::now_ns();
    let last = LAST_COLLECTION_NS.load(Ordering::Relaxed);
    if now.saturating_sub(last) >= COLLECTION_INTERVAL_NS {
        hand_over_all();
    }
}

/// Collects every thread's block, leaving each an emptied one, and hands them to the
/// merger, then releases what they complete: every record keyed below the counter's
/// value read first (see the module's notes).
fn hand_over_all() {
    let _one_at_a_time = lock(&COLLECTING);
    LAST_COLLECTION_NS.store(clock::now_ns(), Ordering::Relaxed);
    let counter = SEQ.load(Ordering::SeqCst);
    let threads: Vec<_> = lock(&THREADS).clone();
    let cells: Vec<&OwnedCell<ThreadBlock>> = threads.iter().map(|t| &**t).collect();
    for mut guard in OwnedCell::collect_all(&cells) {
        if guard.block.len_bytes() > 0 {
            let emptied = merger::fresh_block(BLOCK_CAPACITY);
            hand_over(std::mem::replace(&mut guard.block, emptied));
        }
    }
    if let Some(sender) = SENDER.get() {
        sender.release(counter);
    }
}

/// Whether a call of `scope` made now is recorded, on the recording path: a command
/// needs only capture to be on, since capture ends before the frame count passes the
/// window's last frame ([`end_frame`]) and commands are wanted up to it. That is one
/// load a command where the window's check took a dozen instructions.
#[inline(always)]
fn wanted_now(scope: Scope) -> bool {
    match scope {
        Scope::Command => recording(),
        _ => recording() && wanted(scope),
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

/// The number of the frame the program is in now (frame boundaries so far).
pub fn frame() -> u64 {
    FRAME.load(Ordering::Relaxed)
}

/// How many recorded frames came before the one the program is in: its number counted
/// from the first frame of the window (`MACROSCOPE_CAPTURE_FRAMES`), or from the start.
pub fn frames_recorded() -> u64 {
    let first = settings().frames.map_or(0, |(first, _)| first);
    frame().saturating_sub(first)
}

/// Whether the frame the program is in is recorded (capture is on and the frame lies in
/// its window).
pub fn recording_frame() -> bool {
    recording() && wanted(Scope::Frame)
}

/// Whether the capture finishes at the end of the frame the program is in (its last
/// frame, as `MACROSCOPE_CAPTURE_FRAMES` says): what is still to be recorded of it must
/// be recorded before [`end_frame`].
pub fn last_frame_now() -> bool {
    recording()
        && settings()
            .frames
            .is_some_and(|(_, last)| FRAME.load(Ordering::Relaxed) + 1 > last)
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
    // The boundary goes into the presenting thread's block like any numbered call, to
    // the merger with the next collection: handed over alone, it woke the merger thread
    // at every present (vkcube on lavapipe: a thousand times a second).
    let frame = FRAME.load(Ordering::Relaxed);
    record_into(Scope::Setup, Order::Numbered, 0, |_, block, key, meta| {
        block.push_direct(key, meta, Call::FrameBoundary, &[DirectField::U64(frame)]);
    });
    sync();
    let window_ends = settings().frames.is_some_and(|(_, last)| frame + 1 > last);
    if window_ends {
        // Capture ends before the count passes the window: a command is recorded
        // while capture is on (`wanted_now`).
        finish_locked(&mut shared);
    }
    FRAME.store(frame + 1, Ordering::Relaxed);
    if window_ends {
        drop(shared);
        if settings().quit {
            crate::quit::end_program();
        }
    }
}

/// Sends every call recorded so far to the file (the chunk holding the last of them
/// closed and on its way through compression), the trace staying open for more: the
/// program destroyed its last instance, and may make another (a GL driver or a toolkit
/// probing the device first, then rendering on an instance of its own). The footer is
/// written when the process exits (`register_exit_hook`) or the frame window ends; a
/// process killed before that leaves a trace that reads to its last chunk, this one.
pub fn flush() {
    let shared = lock(&SHARED);
    let Some(merger) = shared.as_ref() else {
        return;
    };
    hand_over_all();
    // A failed write stops capture with the merger's one line.
    let _ = merger.flush();
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
    let finishing = Instant::now();
    match merger.finish() {
        Some(Ok(done)) => {
            log(
                LogLevel::Info,
                &format!(
                    "trace finished: {} calls, {} frames, {} bytes in {}",
                    done.records - done.frames,
                    done.frames,
                    done.stats.file_bytes,
                    trace_path().display()
                ),
            );
            log(LogLevel::Info, &cost_line(&done, finishing.elapsed()));
        }
        Some(Err(e)) => log(LogLevel::Error, &format!("finishing the trace failed: {e}")),
        // The merger stopped after an error and said so.
        None => {}
    }
}

/// Where capture's own work went, for the log: what ran beside the program (merging,
/// compressing) and what made its threads wait (a full queue to the merger, the end of
/// capture that `finishing` took).
fn cost_line(done: &merger::Finished, finishing: Duration) -> String {
    let seconds = |d: Duration| d.as_secs_f64();
    let (waits, waited) = done.hand_over_waits;
    format!(
        "capture's cost: merging {:.3} s, compressing {:.3} s on {} thread(s) ({:.3} s \
         waiting for them); the program's threads waited {:.3} s for the merger ({waits} \
         times) and {:.3} s for the end of capture",
        seconds(done.merging),
        seconds(done.stats.compressing),
        compression_threads(),
        seconds(done.stats.queue_waits),
        seconds(waited),
        seconds(finishing),
    )
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

/// Finishes the trace when the process exits normally, or is interrupted by a signal
/// it leaves at its default action ([`crate::interrupt`]).
fn register_exit_hook() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        // SAFETY: `finish_at_exit` is a plain function that only takes the lock.
        unsafe { atexit(finish_at_exit) };
        crate::interrupt::watch();
    });
}
