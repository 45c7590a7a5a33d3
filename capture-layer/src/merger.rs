//! The thread that merges the recording threads' blocks into the trace.
//!
//! Recording threads hand their full blocks over through a bounded queue and go on: the
//! merge by sequence number ([`Sequencer`]) and the copy into the open chunk run here
//! (the chunk's layout, compact records expanded, on the compression thread that takes
//! it), not on the program's threads, and no lock is shared by every recording thread. A full queue makes the handing thread wait (back-pressure: the
//! layer's memory stays bounded whatever the program records). Emptied blocks go back to
//! a pool the recording threads take from, so a thread's next block is already
//! allocated and its pages already touched.
//!
//! When the sequencer holds too many bytes waiting for an earlier record (a thread that
//! went quiet with records in its block), this thread collects every recording thread's
//! block itself. Any error stops capture with one log line; what was written stays
//! readable.

use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};
use std::sync::{Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use trace_format::record_block::RecordBlock;
use trace_format::sequencer::Sequencer;
use trace_format::{Result, WriterStats};

/// Blocks that may wait in the queue before a handing thread waits.
const QUEUE_BLOCKS: usize = 64;
/// Every thread's block is collected when the sequencer holds this many bytes waiting
/// for an earlier record.
const HELD_BYTES_LIMIT: usize = 16 * 1024 * 1024;
/// The most bytes of emptied blocks kept for reuse.
const POOL_BYTES: usize = 8 << 20;
/// A block that grew past this (it took a large record: mapped memory's contents) is
/// freed rather than pooled.
const POOL_MAX_CAPACITY: usize = 2 << 20;

/// What the merger thread is told.
enum Message {
    /// Records to merge.
    Block(RecordBlock),
    /// Finish the trace and say how it went.
    Finish(SyncSender<Result<Finished>>),
}

/// A finished trace's totals.
pub struct Finished {
    /// What the container writer counted.
    pub stats: WriterStats,
    /// Records written.
    pub records: u64,
    /// Frames ended.
    pub frames: u64,
}

/// What the merger needs from the recorder: every recording thread's block, and how to
/// stop capture after an error.
pub struct Hooks {
    /// Takes every recording thread's block.
    pub collect: fn() -> Vec<RecordBlock>,
    /// Stops capture with this reason (the merger finishes the trace itself).
    pub stop: fn(&str),
}

/// The merger thread and the queue to it.
pub struct Merger {
    queue: SyncSender<Message>,
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
        let (queue, messages) = mpsc::sync_channel(QUEUE_BLOCKS);
        let thread = std::thread::Builder::new()
            .name("macroscope-merge".into())
            .spawn(move || run(sequencer, &messages, &hooks))?;
        Ok(Merger {
            queue,
            thread: Some(thread),
        })
    }

    /// A handle recording threads hand blocks over with.
    pub fn sender(&self) -> BlockSender {
        BlockSender(self.queue.clone())
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
pub struct BlockSender(SyncSender<Message>);

impl BlockSender {
    /// Queues `block` for merging (waiting while the queue is full). A block handed
    /// over after the merger stopped is dropped: capture has stopped then.
    pub fn send(&self, block: RecordBlock) {
        if !block.is_empty() {
            let _ = self.0.send(Message::Block(block));
        }
    }
}

/// The merger thread: merges blocks until told to finish or an error stops it.
fn run(mut sequencer: Sequencer, messages: &Receiver<Message>, hooks: &Hooks) {
    while let Some(message) = next_message(messages) {
        match message {
            Message::Block(block) => {
                if let Err(e) = merge(&mut sequencer, block, hooks) {
                    (hooks.stop)(&format!("capture stopped: {e}"));
                    // One line says why; the chunks written so far stay readable.
                    let _ = sequencer.finish();
                    return;
                }
            }
            Message::Finish(reply) => {
                let _ = reply.send(finish(sequencer, hooks));
                return;
            }
        }
    }
    // Every sender is gone without a finish: write what was merged, as a process
    // killed now would leave it.
    let _ = sequencer.finish();
}

/// How often the merger looks at its queue while blocks keep coming.
const POLL: Duration = Duration::from_micros(100);
/// How long the queue stays empty before the merger blocks on it.
const PARK_AFTER: Duration = Duration::from_millis(5);

/// The next message, `None` once every sender is gone. While blocks keep coming the
/// merger polls the queue, so a recording thread handing a block over finds nobody to
/// wake (a wake-up is a system call on the program's thread: on the NVIDIA machine the
/// storm scene made ~14 K of them a run); after [`PARK_AFTER`] of quiet it blocks.
fn next_message(messages: &Receiver<Message>) -> Option<Message> {
    let mut quiet = Duration::ZERO;
    loop {
        match messages.try_recv() {
            Ok(message) => return Some(message),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) if quiet < PARK_AFTER => {
                std::thread::sleep(POLL);
                quiet += POLL;
            }
            Err(TryRecvError::Empty) => return messages.recv().ok(),
        }
    }
}

/// Merges `block`; collects every thread's block when too much waits on a gap.
fn merge(sequencer: &mut Sequencer, block: RecordBlock, hooks: &Hooks) -> Result<()> {
    sequencer.add(block)?;
    if sequencer.held_bytes() > HELD_BYTES_LIMIT {
        for block in (hooks.collect)() {
            sequencer.add(block)?;
        }
    }
    recycle(sequencer.take_spent());
    Ok(())
}

/// Finishes the trace once every block handed over is merged.
fn finish(mut sequencer: Sequencer, hooks: &Hooks) -> Result<Finished> {
    for block in (hooks.collect)() {
        sequencer.add(block)?;
    }
    if let Some((next, first)) = sequencer.waiting_for() {
        crate::recorder::log(
            crate::settings::LogLevel::Error,
            &format!(
                "records {next} to {} never arrived; the trace ends before them",
                first - 1
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
    })
}
