//! The MME's parameter stream and its memory-read path (Turing's
//! `MME_DMA_READ_FIFOED`).
//!
//! A macro sets `SET_MME_MEM_ADDRESS_A/B` and `MME_DMA_READ_FIFOED` with method writes,
//! then executes the read-fifoed barrier; from then on its parameter loads return the
//! dwords read from memory before any further push-buffer parameters. NVK's indirect
//! draws read their `VkDraw*IndirectCommand`s this way. The simulators and the
//! reference interpreter share this one implementation.

use std::collections::VecDeque;

use crate::class;

use super::machine::Machine;

/// Why the memory read failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnmappedRead {
    /// The address that could not be read.
    pub addr: u64,
}

/// Parameters for a running macro: fifoed memory reads first, then the push buffer.
#[derive(Clone, Debug, Default)]
pub struct ParamStream {
    fifo: VecDeque<u32>,
    mem_addr_hi: u32,
    mem_addr_lo: u32,
    fifoed_count: u32,
}

impl ParamStream {
    /// The next parameter, or `None` when both sources are exhausted.
    pub fn next(&mut self, machine: &mut impl Machine) -> Option<u32> {
        self.fifo.pop_front().or_else(|| machine.param())
    }

    /// Observes a method write the macro emitted (before it reaches the machine).
    pub fn observe(&mut self, mthd: u16, data: u32) {
        match mthd {
            class::SET_MME_MEM_ADDRESS_A => self.mem_addr_hi = data & 0xff,
            class::SET_MME_MEM_ADDRESS_B => self.mem_addr_lo = data,
            class::MME_DMA_READ_FIFOED => self.fifoed_count = data,
            _ => {}
        }
    }

    /// The read-fifoed barrier: reads the requested dwords into the stream.
    pub fn barrier(&mut self, machine: &mut impl Machine) -> Result<(), UnmappedRead> {
        let base = (u64::from(self.mem_addr_hi) << 32) | u64::from(self.mem_addr_lo);
        for i in 0..self.fifoed_count {
            let addr = base + 4 * u64::from(i);
            let word = machine.read_u32(addr).ok_or(UnmappedRead { addr })?;
            self.fifo.push_back(word);
        }
        self.fifoed_count = 0;
        Ok(())
    }
}
