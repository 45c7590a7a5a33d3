//! What a macro runs against: its parameters, the 3D state it reads, the methods it
//! writes, and GPU memory for indirect reads. Simulators, the reference interpreter,
//! the GPU model and tests each plug in their own.

use std::collections::{BTreeMap, VecDeque};

use crate::class;

/// The surroundings of a running macro.
pub trait Machine {
    /// The next parameter from the push buffer (`CALL_MME_MACRO` / `CALL_MME_DATA`);
    /// `None` when there are no more.
    fn param(&mut self) -> Option<u32>;
    /// The shadowed state of method `mthd` (a byte address), shadow scratch included.
    fn state(&mut self, mthd: u16) -> u32;
    /// A method write the macro emits.
    fn mthd(&mut self, mthd: u16, data: u32);
    /// A dword of GPU memory, for `MME_DMA_READ_FIFOED`; `None` when unmapped.
    fn read_u32(&mut self, addr: u64) -> Option<u32>;
}

/// A self-contained [`Machine`]: parameters, a shadow-state array updated by every
/// method write, the log of method writes, and sparse memory.
#[derive(Clone, Debug, Default)]
pub struct RecordingMachine {
    params: VecDeque<u32>,
    state: BTreeMap<u16, u32>,
    /// Every method write, in order.
    pub methods: Vec<(u16, u32)>,
    memory: BTreeMap<u64, u32>,
}

impl RecordingMachine {
    /// A machine that hands out `params` in order.
    pub fn new(params: &[u32]) -> Self {
        RecordingMachine {
            params: params.iter().copied().collect(),
            ..Default::default()
        }
    }

    /// Sets the shadowed state of `mthd`.
    pub fn set_state(&mut self, mthd: u16, value: u32) {
        self.state.insert(mthd, value);
    }

    /// Sets shadow scratch slot `slot`.
    pub fn set_scratch(&mut self, slot: u16, value: u32) {
        self.set_state(class::SET_MME_SHADOW_SCRATCH + 4 * slot, value);
    }

    /// Writes `words` to memory at `addr`.
    pub fn write_memory(&mut self, addr: u64, words: &[u32]) {
        for (i, w) in words.iter().enumerate() {
            self.memory.insert(addr + 4 * i as u64, *w);
        }
    }

    /// Parameters not consumed.
    pub fn params_left(&self) -> usize {
        self.params.len()
    }
}

impl Machine for RecordingMachine {
    fn param(&mut self) -> Option<u32> {
        self.params.pop_front()
    }

    fn state(&mut self, mthd: u16) -> u32 {
        self.state.get(&mthd).copied().unwrap_or(0)
    }

    fn mthd(&mut self, mthd: u16, data: u32) {
        self.state.insert(mthd, data);
        self.methods.push((mthd, data));
    }

    fn read_u32(&mut self, addr: u64) -> Option<u32> {
        self.memory.get(&addr).copied()
    }
}
