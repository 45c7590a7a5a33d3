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

use crate::record_block::RecordBlock;
use crate::{Result, TraceWriter, WriterStats};

/// Puts the records of many blocks into one [`TraceWriter`] in sequence order.
pub struct Sequencer {
    writer: TraceWriter,
    /// Blocks with records not yet appended.
    blocks: Vec<RecordBlock>,
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
        if block.is_empty() {
            return Ok(());
        }
        self.held_bytes += block.len_bytes();
        self.blocks.push(block);
        self.drain()
    }

    /// Bytes of blocks held, waiting for a record that comes before theirs.
    pub fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// Appends records while the next sequence number is at the head of a held block.
    fn drain(&mut self) -> Result<()> {
        loop {
            let next = self.writer.next_seq();
            let Some(i) = self.blocks.iter().position(|b| b.peek_seq() == Some(next)) else {
                return Ok(());
            };
            let block = &mut self.blocks[i];
            // A block's records ascend: take the run that continues the order.
            while let Some(record) = block.pop() {
                self.writer.append_encoded(record)?;
                if block.peek_seq() != Some(self.writer.next_seq()) {
                    break;
                }
            }
            if block.is_empty() {
                let block = self.blocks.swap_remove(i);
                self.held_bytes -= block.len_bytes();
                self.spent.push(block);
            }
        }
    }

    /// The blocks whose every record has been appended since the last call, to be
    /// reused (their memory is kept; [`RecordBlock::clear`] empties them).
    pub fn take_spent(&mut self) -> Vec<RecordBlock> {
        std::mem::take(&mut self.spent)
    }

    /// The sequence numbers missing before the first held record: what the trace waits
    /// for. `None` when nothing is held.
    pub fn waiting_for(&self) -> Option<(u64, u64)> {
        let first = self.blocks.iter().filter_map(RecordBlock::peek_seq).min()?;
        Some((self.writer.next_seq(), first))
    }

    /// Finishes the trace. Records still held behind a gap that no block filled
    /// (see [`waiting_for`](Self::waiting_for)) are not written.
    pub fn finish(self) -> Result<WriterStats> {
        self.writer.finish()
    }
}
