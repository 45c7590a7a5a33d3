//! The thread that merges the recording threads' blocks into the trace.
//!
//! Recording threads hand their full blocks over through a queue without waiting (a
//! thread hands its block over before it leaves it, so a collection that follows finds
//! the block on its way: see `recorder.rs`), and then wait while too many blocks are in
//! flight ([`wait_for_room`]: back-pressure keeps the layer's memory bounded whatever
//! the program records). The merge by order key ([`Sequencer`]) and the copy into the
//! open chunk run here (the chunk's layout, compact records expanded, on the
//! compression thread that takes it), not on the program's threads. Emptied blocks go
//! back to a pool the recording threads take from, so a thread's next block is already
//! allocated and its pages already touched.
//!
//! Records are written once a collection releases them. When the sequencer holds too
//! many bytes (threads recording long without a submit), this thread collects every
//! recording thread's block itself. Any error stops capture with one log line; what
//! was written stays readable.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender, TryRecvError};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use trace_format::record_block::RecordBlock;
use trace_format::sequencer::Sequencer;
use trace_format::{Result, WriterStats};

/// Blocks that may be in flight before a handing thread waits.
const QUEUE_BLOCKS: usize = 64;
/// Every thread's block is collected when the sequencer holds this many bytes not yet
/// released.
const HELD_BYTES_LIMIT: usize = 8 * 1024 * 1024;
/// The most bytes of emptied blocks kept for reuse.
const POOL_BYTES: usize = 8 << 20;
/// A block that grew past this (it took a large record: mapped memory's contents) is
/// freed rather than pooled.
const POOL_MAX_CAPACITY: usize = 2 << 20;

/// What the merger thread is told.
enum Message {
    /// Records to merge.
    Block(RecordBlock),
    /// A collection that read the numbered-call counter at this value has handed over
    /// every record made before it ([`Sequencer::release`]).
    Release(u64),
    /// End the open chunk, so that every record merged so far goes to the file, and say
    /// how it went; the trace stays open.
    Flush(SyncSender<Result<()>>),
    /// Finish the trace and say how it went.
    Finish(SyncSender<Result<Finished>>),
    /// Nothing came for [`QUIET_FLUSH`] (made by this thread's own wait, never sent):
    /// what the program recorded since the last look goes to the file.
    Quiet,
}

/// A finished trace's totals, and where capture spent its time off the program's
/// threads (or made them wait).
pub struct Finished {
    /// What the container writer counted.
    pub stats: WriterStats,
    /// Records written.
    pub records: u64,
    /// Frames ended.
    pub frames: u64,
    /// Time the merger thread spent merging (and collecting) rather than waiting.
    pub merging: Duration,
    /// Times a program's thread waited to hand a block over (the queue full), and how
    /// long in all.
    pub hand_over_waits: (u64, Duration),
}

/// Hand-overs that found too many blocks in flight, and the nanoseconds they waited in
/// all.
static HAND_OVER_WAITS: AtomicU64 = AtomicU64::new(0);
static HAND_OVER_WAIT_NS: AtomicU64 = AtomicU64::new(0);

/// Blocks handed over and not yet taken by the merger, and the handing threads waiting
/// for that to fall.
struct InFlight {
    blocks: AtomicUsize,
    waiting: AtomicUsize,
    /// Set when the merger thread has ended: nobody waits any more.
    closed: AtomicBool,
    lock: Mutex<()>,
    room: Condvar,
}

static IN_FLIGHT: InFlight = InFlight {
    blocks: AtomicUsize::new(0),
    waiting: AtomicUsize::new(0),
    closed: AtomicBool::new(false),
    lock: Mutex::new(()),
    room: Condvar::new(),
};

impl InFlight {
    /// The merger took a block: wakes the waiting threads once there is room.
    fn taken(&self) {
        let before = self.blocks.fetch_sub(1, Ordering::AcqRel);
        if before <= QUEUE_BLOCKS + 1 && self.waiting.load(Ordering::Acquire) > 0 {
            self.wake();
        }
    }

    /// The merger thread ended.
    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.wake();
    }

    fn wake(&self) {
        let _held = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.room.notify_all();
    }

    fn full(&self) -> bool {
        self.blocks.load(Ordering::Acquire) > QUEUE_BLOCKS && !self.closed.load(Ordering::Acquire)
    }
}

/// Waits, after handing a block over, while too many blocks are in flight: never inside
/// a recording block, so a collection never waits on it.
pub fn wait_for_room() {
    if !IN_FLIGHT.full() {
        return;
    }
    let start = Instant::now();
    IN_FLIGHT.waiting.fetch_add(1, Ordering::AcqRel);
    let mut held = IN_FLIGHT.lock.lock().unwrap_or_else(|e| e.into_inner());
    while IN_FLIGHT.full() {
        // The timeout covers a wake-up between the look and the wait.
        held = match IN_FLIGHT.room.wait_timeout(held, Duration::from_millis(1)) {
            Ok((held, _)) => held,
            Err(e) => e.into_inner().0,
        };
    }
    drop(held);
    IN_FLIGHT.waiting.fetch_sub(1, Ordering::AcqRel);
    let waited = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
    HAND_OVER_WAITS.fetch_add(1, Ordering::Relaxed);
    HAND_OVER_WAIT_NS.fetch_add(waited, Ordering::Relaxed);
}

/// What the merger needs from the recorder: every recording thread's block, and how to
/// stop capture after an error.
pub struct Hooks {
    /// Collects every recording thread's block: hands them over, then a release.
    pub collect: fn(),
    /// Stops capture with this reason (the merger finishes the trace itself).
    pub stop: fn(&str),
}

/// The merger thread and the queue to it.
pub struct Merger {
    queue: Sender<Message>,
    thread: Option<JoinHandle<()>>,
}

/// Blocks emptied by the merger, for the recording threads.
struct Pool {
    blocks: Vec<RecordBlock>,
    /// Their capacities together.
    bytes: usize,
}

static POOL: Mutex<Pool> = Mutex::new(Pool {
    blocks: Vec::new(),
    bytes: 0,
});

fn pool() -> MutexGuard<'static, Pool> {
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// An empty block for a recording thread: one the merger emptied, or a new one with
/// room for `bytes`.
pub fn fresh_block(bytes: usize) -> RecordBlock {
    let mut pool = pool();
    match pool.blocks.pop() {
        Some(block) => {
            pool.bytes -= block.capacity_bytes();
            block
        }
        None => {
            drop(pool);
            RecordBlock::with_capacity(bytes)
        }
    }
}

/// Keeps `blocks` (emptied) for reuse, as many as the pool takes.
fn recycle(blocks: Vec<RecordBlock>) {
    let mut pool = pool();
    for mut block in blocks {
        let capacity = block.capacity_bytes();
        if capacity <= POOL_MAX_CAPACITY && pool.bytes + capacity <= POOL_BYTES {
            block.clear();
            pool.bytes += capacity;
            pool.blocks.push(block);
        }
    }
}

impl Merger {
    /// Starts the merger thread, appending to `sequencer`.
    pub fn spawn(sequencer: Sequencer, hooks: Hooks) -> std::io::Result<Self> {
        let (queue, messages) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("macroscope-merge".into())
            .spawn(move || {
                run(sequencer, &messages, &hooks);
                IN_FLIGHT.close();
            })?;
        Ok(Merger {
            queue,
            thread: Some(thread),
        })
    }

    /// A handle recording threads hand blocks over with.
    pub fn sender(&self) -> BlockSender {
        BlockSender(self.queue.clone())
    }

    /// Merges what was handed over before this call and ends the open chunk there,
    /// handing it to compression, which writes it; waits until the chunk is handed over.
    /// `None` when the thread had already stopped (after an error it reported).
    pub fn flush(&self) -> Option<Result<()>> {
        let (reply, answer) = mpsc::sync_channel(1);
        self.queue.send(Message::Flush(reply)).ok()?;
        answer.recv().ok()
    }

    /// Merges what was handed over, finishes the trace and waits for the thread. `None`
    /// when the thread had already stopped (after an error it reported).
    pub fn finish(mut self) -> Option<Result<Finished>> {
        let (reply, answer) = mpsc::sync_channel(1);
        let outcome = match self.queue.send(Message::Finish(reply)) {
            Ok(()) => answer.recv().ok(),
            Err(_) => None,
        };
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        outcome
    }
}

/// Hands blocks to the merger thread.
#[derive(Clone)]
pub struct BlockSender(Sender<Message>);

impl BlockSender {
    /// Queues `block` for merging, without waiting (the caller waits for room with
    /// [`wait_for_room`] once it has left its block). A block handed over after the
    /// merger stopped is dropped: capture has stopped then.
    pub fn send(&self, block: RecordBlock) {
        if block.is_empty() {
            return;
        }
        IN_FLIGHT.blocks.fetch_add(1, Ordering::AcqRel);
        if self.0.send(Message::Block(block)).is_err() {
            IN_FLIGHT.blocks.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Tells the merger that a collection that read the numbered-call counter at
    /// `counter` has handed over every record made before it.
    pub fn release(&self, counter: u64) {
        let _ = self.0.send(Message::Release(counter));
    }
}

/// The merger thread: merges blocks until told to finish or an error stops it.
fn run(mut sequencer: Sequencer, messages: &Receiver<Message>, hooks: &Hooks) {
    let mut merging = Duration::ZERO;
    // A collection this thread asked for and whose release has not come yet.
    let mut collecting = false;
    // A quiet spell's collection whose release ends the open chunk.
    let mut flush_at_release = false;
    let mut pace = Duration::ZERO;
    while let Some(message) = next_message(messages, &mut pace) {
        match message {
            Message::Block(_) | Message::Release(_) => {
                let start = Instant::now();
                let release = matches!(message, Message::Release(_));
                let mut merged = merge(&mut sequencer, message, hooks, &mut collecting);
                if release && flush_at_release && merged.is_ok() {
                    flush_at_release = false;
                    merged = sequencer.writer().end_chunk();
                }
                merging += start.elapsed();
                if let Err(e) = merged {
                    return give_up(sequencer, hooks, &e);
                }
            }
            Message::Quiet => {
                // The program has been quiet (drawing on demand and waiting for input,
                // loading, or hung): what it recorded goes to the file, as it would at
                // its next frames, so that a program killed now leaves it. Its threads'
                // blocks and their release come back through the queue.
                if !flush_at_release {
                    flush_at_release = true;
                    (hooks.collect)();
                }
            }
            Message::Flush(reply) => {
                let flushed = sequencer.writer().end_chunk();
                let failed = flushed.as_ref().err().map(|e| e.to_string());
                let _ = reply.send(flushed);
                if let Some(e) = failed {
                    return give_up(sequencer, hooks, &e);
                }
            }
            Message::Finish(reply) => {
                let _ = reply.send(finish(sequencer, messages, hooks, merging));
                return;
            }
        }
    }
    // Every sender is gone without a finish: write what was merged, as a process
    // killed now would leave it.
    let _ = sequencer.finish();
}

/// Stops capture after `error`: one line says why, and the chunks written so far stay
/// readable.
fn give_up(sequencer: Sequencer, hooks: &Hooks, error: &dyn std::fmt::Display) {
    (hooks.stop)(&format!("capture stopped: {error}"));
    let _ = sequencer.finish();
}

/// How soon the merger looks at its queue again after finding it empty, while blocks
/// keep coming.
const POLL: Duration = Duration::from_micros(100);
/// The longest it sleeps between looks: each quiet look doubles the sleep up to this.
const POLL_MAX: Duration = Duration::from_millis(1);
/// How long the queue stays empty before the merger blocks on it.
const PARK_AFTER: Duration = Duration::from_millis(5);
/// How long the merger waits, blocked, before it sends what the program recorded since
/// to the file ([`Message::Quiet`]): a program that draws a few frames and then waits
/// (a viewer drawing on demand, a menu waiting for input) or hangs would otherwise keep
/// them in memory, its frames sharing a chunk that only a later frame or its exit
/// closes, and lose them all when it is killed (F3D and Emilia Pinball, killed after a
/// minute, left traces of no record). A look a second costs an idle program nothing it
/// notices.
const QUIET_FLUSH: Duration = Duration::from_secs(1);

/// The next message, `None` once every sender is gone. While blocks keep coming the
/// merger polls the queue, so a recording thread handing a block over finds nobody to
/// wake (a wake-up is a system call on the program's thread: on the NVIDIA machine the
/// storm scene made ~14 K of them a run). The longer the queue stays empty the longer
/// it sleeps between looks (a program handing over one block a frame would otherwise
/// have it wake every 100 µs all run long, on a core the program renders with); after
/// [`PARK_AFTER`] of quiet it blocks. The first look comes after half the last wait
/// (`pace`, kept here), from [`POLL`] to [`POLL_MAX`]: where blocks come only with the
/// collections at submits and presents, 4 ms apart at most (vkcube on lavapipe), the
/// merger looks four times between two where it looked seven. A message already queued
/// (a collection's release right behind its blocks) is taken without a wait and leaves
/// the pace as it was.
fn next_message(messages: &Receiver<Message>, pace: &mut Duration) -> Option<Message> {
    match messages.try_recv() {
        Ok(message) => return Some(message),
        Err(TryRecvError::Disconnected) => return None,
        Err(TryRecvError::Empty) => {}
    }
    let began = Instant::now();
    let message = poll(messages, (*pace / 2).clamp(POLL, POLL_MAX));
    *pace = began.elapsed();
    message
}

/// The next message, looked for after `first` and at doubling intervals up to
/// [`POLL_MAX`], then, after [`PARK_AFTER`] of quiet, waited for: for [`QUIET_FLUSH`]
/// at most, after which it is [`Message::Quiet`].
fn poll(messages: &Receiver<Message>, first: Duration) -> Option<Message> {
    let mut quiet = Duration::ZERO;
    let mut sleep = first;
    loop {
        std::thread::sleep(sleep);
        quiet += sleep;
        sleep = (sleep * 2).min(POLL_MAX);
        match messages.try_recv() {
            Ok(message) => return Some(message),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) if quiet < PARK_AFTER => {}
            Err(TryRecvError::Empty) => {
                return match messages.recv_timeout(QUIET_FLUSH) {
                    Ok(message) => Some(message),
                    Err(RecvTimeoutError::Timeout) => Some(Message::Quiet),
                    Err(RecvTimeoutError::Disconnected) => None,
                };
            }
        }
    }
}

/// Merges a block or applies a release; collects every thread's block when too much
/// waits for one (once: until that collection's release arrives).
fn merge(
    sequencer: &mut Sequencer,
    message: Message,
    hooks: &Hooks,
    collecting: &mut bool,
) -> Result<()> {
    match message {
        Message::Block(block) => {
            IN_FLIGHT.taken();
            sequencer.add(block)?;
            if sequencer.held_bytes() > HELD_BYTES_LIMIT && !*collecting {
                // The blocks and the release come back through the queue, after every
                // block handed over before them.
                *collecting = true;
                (hooks.collect)();
            }
        }
        Message::Release(counter) => {
            *collecting = false;
            sequencer.release(counter)?;
        }
        Message::Flush(_) | Message::Finish(_) | Message::Quiet => {}
    }
    recycle(sequencer.take_spent());
    Ok(())
}

/// Finishes the trace once every block handed over is merged: collects every thread's
/// block, merges what the queue holds, and writes every record but those behind a
/// numbered call that never arrived.
fn finish(
    mut sequencer: Sequencer,
    messages: &Receiver<Message>,
    hooks: &Hooks,
    merging: Duration,
) -> Result<Finished> {
    (hooks.collect)();
    let mut collecting = true;
    while let Ok(message) = messages.try_recv() {
        merge(&mut sequencer, message, hooks, &mut collecting)?;
    }
    sequencer.release_all()?;
    if let Some((missing, held)) = sequencer.waiting_for() {
        crate::recorder::log(
            crate::settings::LogLevel::Error,
            &format!(
                "numbered call {missing} never arrived; the trace ends before it \
                 ({held} later records not written)"
            ),
        );
    }
    let (records, frames) = {
        let writer = sequencer.writer();
        (writer.next_seq(), writer.frame())
    };
    let stats = sequencer.finish()?;
    Ok(Finished {
        stats,
        records,
        frames,
        merging,
        hand_over_waits: (
            HAND_OVER_WAITS.load(Ordering::Relaxed),
            Duration::from_nanos(HAND_OVER_WAIT_NS.load(Ordering::Relaxed)),
        ),
    })
}
