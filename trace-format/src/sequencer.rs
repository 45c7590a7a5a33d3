//! Merging records that several threads encoded into the trace's one gapless order.
//!
//! A recording thread puts each record in its own [`RecordBlock`] with an order key, and
//! blocks reach the sequencer when they fill up or when someone collects them. Two
//! kinds of calls make the keys, from one counter of *numbered* calls shared by every
//! thread:
//!
//! - a numbered call (object creation and destruction, submits, anything that may order
//!   against another thread) takes the counter's value `n` with an atomic increment:
//!   key [`numbered_key`]`(n)` = 2n + 2, so the numbered calls are gapless among
//!   themselves;
//! - a command recorded into a command buffer reads the counter, `l`, without writing
//!   it: key [`command_key`]`(l)` = 2l + 1, after every numbered call that happened before
//!   it and before every numbered call that happens after it. Commands of one key from
//!   different threads go to different command buffers, so their order between threads
//!   does not matter (the capture layer makes a command numbered when its command
//!   buffer was last recorded on another thread).
//!
//! A thread's keys never go down, so each block is in order. The sequencer merges the
//! blocks by key and gives records their gapless sequence numbers as it appends them.
//! What it may append is bounded twice: by [`Sequencer::release`] (a collection that
//! read the counter at `c` has handed over every command recorded before it, and every
//! numbered call below `c` that had taken its number inside a block; a command that
//! reads `c` after it may still come, and takes its place after those of its key
//! already appended, which is as good a place), and by the next numbered call not yet
//! seen (a numbered call may reach it after the collection, from a thread that
//! took its number outside any block). The caller bounds the wait by collecting every
//! thread's block (see `capture-layer/src/recorder.rs`: at submits, presents, the end of
//! capture, and when [`Sequencer::held_bytes`] grows past a limit).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::error::{Error, ErrorKind, Location};

/// The error of numbered call `key` seen a second time.
fn twice(path: &std::path::Path, key: u64) -> Error {
    Error::new(
        path,
        Location::File,
        ErrorKind::Unsupported(format!("numbered call {} recorded twice", key / 2 - 1)),
    )
}
use crate::record_block::{MalformedRecord, RecordBlock, RecordBody};
use crate::{Result, TraceWriter, WriterStats};

/// The order key of the numbered call that took number `n`.
pub fn numbered_key(n: u64) -> u64 {
    2 * n + 2
}

/// The order key of a command recorded when `l` numbered calls had taken their numbers.
pub fn command_key(l: u64) -> u64 {
    2 * l + 1
}

/// Whether `key` is a command's ([`command_key`]), not a numbered call's
/// ([`numbered_key`]): many records share it, and admitting one admits them all.
#[inline(always)]
pub(crate) fn is_command_key(key: u64) -> bool {
    key % 2 == 1
}

/// Puts the records of many blocks into one [`TraceWriter`] in key order.
pub struct Sequencer {
    writer: TraceWriter,
    /// Blocks with records not yet appended; `None` marks a free slot.
    blocks: Vec<Option<RecordBlock>>,
    /// Free slots of `blocks`.
    free: Vec<usize>,
    /// Each held block's next record's key, the block's arrival and its slot, smallest
    /// first: with several threads recording, their records interleave, and the next one
    /// is found here in O(log blocks) rather than by a look at every block. Of equal
    /// keys the earlier block's go first: one thread's blocks arrive in its order.
    heads: BinaryHeap<Reverse<(u64, u64, usize)>>,
    /// Blocks added so far.
    arrivals: u64,
    held_bytes: usize,
    /// The largest key that may be appended ([`release`](Self::release)).
    released: u64,
    /// The number of the next numbered call to append.
    next_numbered: u64,
    /// Blocks whose every record was appended, for the caller to reuse.
    spent: Vec<RecordBlock>,
}

impl Sequencer {
    /// A sequencer appending to `writer`; it appends nothing until records are released.
    pub fn new(writer: TraceWriter) -> Self {
        Sequencer {
            writer,
            blocks: Vec::new(),
            free: Vec::new(),
            heads: BinaryHeap::new(),
            arrivals: 0,
            held_bytes: 0,
            released: 0,
            next_numbered: 0,
            spent: Vec::new(),
        }
    }

    /// The trace being written.
    pub fn writer(&mut self) -> &mut TraceWriter {
        &mut self.writer
    }

    /// Takes `block`'s records and appends every record that is next in order. One
    /// thread's blocks must come in the order it filled them (its records of one key
    /// stay in that order).
    pub fn add(&mut self, block: RecordBlock) -> Result<()> {
        let Some(first) = block
            .peek_key()
            .map_err(|e| malformed(self.writer.path(), e))?
        else {
            return Ok(());
        };
        self.held_bytes += block.len_bytes();
        let slot = match self.free.pop() {
            Some(slot) => {
                self.blocks[slot] = Some(block);
                slot
            }
            None => {
                self.blocks.push(Some(block));
                self.blocks.len() - 1
            }
        };
        self.arrivals += 1;
        self.heads.push(Reverse((first, self.arrivals, slot)));
        self.drain()
    }

    /// Lets every record with a key up to [`command_key`]`(c)` be appended: a collection
    /// that read the numbered-call counter at `c` has handed over (given to
    /// [`add`](Self::add) before this) every numbered call below `c` and every command
    /// recorded before it. Commands of key `command_key(c)` recorded after it may still
    /// come; they follow those appended, as their order allows. Appends what it can.
    pub fn release(&mut self, c: u64) -> Result<()> {
        self.released = self.released.max(command_key(c));
        self.drain()
    }

    /// Lets every record be appended (at the end of capture): only a numbered call that
    /// never arrived holds the rest back.
    pub fn release_all(&mut self) -> Result<()> {
        self.released = u64::MAX;
        self.drain()
    }

    /// Bytes of blocks held, waiting for a record that comes before theirs.
    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// The largest key that may be appended now: released, and not past a numbered
    /// call not yet seen (from the two fields, so that it is read while a held block is
    /// borrowed).
    fn limit(released: u64, next_numbered: u64) -> u64 {
        released.min(numbered_key(next_numbered))
    }

    /// Appends records, smallest key first, while the smallest is within the limit.
    fn drain(&mut self) -> Result<()> {
        while let Some(&Reverse((key, arrival, slot))) = self.heads.peek() {
            if key > Self::limit(self.released, self.next_numbered) {
                return Ok(());
            }
            self.heads.pop();
            let Some(block) = self.blocks[slot].as_mut() else {
                continue;
            };
            // Take the run of this block that comes before every other block's next.
            let others = self
                .heads
                .peek()
                .map_or((u64::MAX, 0), |Reverse((k, a, _))| (*k, *a));
            let mut admission = Admission {
                released: self.released,
                next_numbered: self.next_numbered,
                others,
                arrival,
                repeated: None,
            };
            loop {
                // Each record read once: taken while admitted.
                let record = block
                    .pop_if(|key| admission.admit(key))
                    .map_err(|e| malformed(self.writer.path(), e))?;
                self.next_numbered = admission.next_numbered;
                let Some(record) = record else {
                    break;
                };
                // A compact record sets the thread and timestamp that the records after
                // it in the block carry over (a finished one does not).
                let compact = matches!(record.body, RecordBody::Compact { .. });
                let boundary = record.frame_boundary;
                self.writer.append_encoded(record)?;
                if !compact || boundary || self.writer.chunk_is_empty() {
                    continue;
                }
                // The records after it that may follow it go whole, not one by one:
                // what they carry over from the record before holds as much here.
                let run = block
                    .take_run(self.writer.chunk_room(), |key| admission.admit(key))
                    .map_err(|e| malformed(self.writer.path(), e))?;
                self.next_numbered = admission.next_numbered;
                self.writer.append_run(&run)?;
            }
            if let Some(key) = admission.repeated {
                return Err(twice(self.writer.path(), key));
            }
            match block
                .peek_key()
                .map_err(|e| malformed(self.writer.path(), e))?
            {
                Some(next) => self.heads.push(Reverse((next, arrival, slot))),
                None => {
                    if let Some(block) = self.blocks[slot].take() {
                        self.held_bytes -= block.len_bytes();
                        self.spent.push(block);
                    }
                    self.free.push(slot);
                }
            }
        }
        Ok(())
    }

    /// The blocks whose every record has been appended since the last call, to be
    /// reused (their memory is kept; [`RecordBlock::clear`] empties them).
    pub fn take_spent(&mut self) -> Vec<RecordBlock> {
        std::mem::take(&mut self.spent)
    }

    /// What the trace waits for while records are held after everything was released:
    /// the number of the numbered call not yet seen, and how many records wait behind
    /// it. `None` when nothing is held or only unreleased commands are.
    pub fn waiting_for(&self) -> Option<(u64, usize)> {
        let Reverse((first, _, _)) = self.heads.peek()?;
        if *first <= self.released {
            let held = self.blocks.iter().flatten().map(RecordBlock::len).sum();
            Some((self.next_numbered, held))
        } else {
            None
        }
    }

    /// Finishes the trace. Records still held (see [`waiting_for`](Self::waiting_for))
    /// are not written.
    pub fn finish(self) -> Result<WriterStats> {
        self.writer.finish()
    }
}

/// Which of a block's records may go into the trace now: those within the limit of what
/// was released and the numbered calls seen, ahead of every other block's next record,
/// a numbered call only as the next one (another is a repeat, noted in `repeated`).
struct Admission {
    released: u64,
    next_numbered: u64,
    /// The other blocks' next record: its order key and arrival.
    others: (u64, u64),
    /// This block's arrival, which orders its records among equal keys.
    arrival: u64,
    /// A numbered call's key met again after its call was written.
    repeated: Option<u64>,
}

impl Admission {
    /// Whether the record with order key `key` goes next; a numbered call admitted
    /// moves the numbering on.
    #[inline]
    fn admit(&mut self, key: u64) -> bool {
        if key > Sequencer::limit(self.released, self.next_numbered)
            || (key, self.arrival) > self.others
        {
            return false;
        }
        if !is_command_key(key) {
            if key != numbered_key(self.next_numbered) {
                self.repeated = Some(key);
                return false;
            }
            self.next_numbered += 1;
        }
        true
    }
}

/// A block's record that does not read back, as an error of the trace at `path`.
fn malformed(path: &std::path::Path, e: MalformedRecord) -> Error {
    Error::new(path, Location::File, ErrorKind::Unsupported(e.to_string()))
}
