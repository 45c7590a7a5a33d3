//! Merging records that several threads encoded into the trace's one gapless order.
//!
//! Each thread takes a sequence number at its call (an atomic counter shared by all)
//! and encodes the record into its own [`RecordBlock`]; blocks reach the sequencer when
//! they fill up or when someone collects them. The sequencer appends records to the
//! trace strictly by sequence number: the next number may be in any block it holds, or
//! in one it has not been given yet (a thread still encoding it, or holding it in a
//! block not yet full). It appends what it can and keeps the rest; the caller bounds the
//! wait by collecting every thread's block (see `capture-layer/src/recorder.rs`: at
//! submits, presents, the end of capture, and when [`Sequencer::held_bytes`] grows past
//! a limit).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::record_block::RecordBlock;
use crate::{Result, TraceWriter, WriterStats};

/// Puts the records of many blocks into one [`TraceWriter`] in sequence order.
pub struct Sequencer {
    writer: TraceWriter,
    /// Blocks with records not yet appended; `None` marks a free slot.
    blocks: Vec<Option<RecordBlock>>,
    /// Free slots of `blocks`.
    free: Vec<usize>,
    /// Each held block's first record's number and its slot, smallest first: with
    /// several threads recording, their numbers interleave call by call, and the next
    /// record is found here in O(log blocks) rather than by a look at every block.
    heads: BinaryHeap<Reverse<(u64, usize)>>,
    held_bytes: usize,
    /// Blocks whose every record was appended, for the caller to reuse.
    spent: Vec<RecordBlock>,
}

impl Sequencer {
    /// A sequencer appending to `writer`, whose next sequence number comes first.
    pub fn new(writer: TraceWriter) -> Self {
        Sequencer {
            writer,
            blocks: Vec::new(),
            free: Vec::new(),
            heads: BinaryHeap::new(),
            held_bytes: 0,
            spent: Vec::new(),
        }
    }

    /// The trace being written.
    pub fn writer(&mut self) -> &mut TraceWriter {
        &mut self.writer
    }

    /// Takes `block`'s records and appends every record that is next in order.
    pub fn add(&mut self, block: RecordBlock) -> Result<()> {
        let Some(first) = block.peek_seq() else {
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
        self.heads.push(Reverse((first, slot)));
        self.drain()
    }

    /// Bytes of blocks held, waiting for a record that comes before theirs.
    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// Appends records while the next sequence number is at the head of a held block.
    fn drain(&mut self) -> Result<()> {
        while let Some(&Reverse((first, slot))) = self.heads.peek() {
            if first != self.writer.next_seq() {
                return Ok(());
            }
            self.heads.pop();
            let Some(block) = self.blocks[slot].as_mut() else {
                continue;
            };
            // A block's records ascend: take the run that continues the order.
            while let Some(record) = block.pop() {
                self.writer.append_encoded(record)?;
                if block.peek_seq() != Some(self.writer.next_seq()) {
                    break;
                }
            }
            match block.peek_seq() {
                Some(next) => self.heads.push(Reverse((next, slot))),
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

    /// The sequence numbers missing before the first held record: what the trace waits
    /// for. `None` when nothing is held.
    pub fn waiting_for(&self) -> Option<(u64, u64)> {
        let Reverse((first, _)) = self.heads.peek()?;
        Some((self.writer.next_seq(), *first))
    }

    /// Finishes the trace. Records still held behind a gap that no block filled
    /// (see [`waiting_for`](Self::waiting_for)) are not written.
    pub fn finish(self) -> Result<WriterStats> {
        self.writer.finish()
    }
}
