//! Macro calls remembered by what they read, so that a call seen before is not simulated
//! again.
//!
//! A macro run is a pure function of its parameters, the shadowed state it reads and the
//! memory it reads through `MME_DMA_READ_FIFOED` (NVK's `bind_cbuf_desc` reads the
//! descriptor so): the simulators keep nothing between calls. A recorded run keeps its
//! parameters, each state word it read before writing it and each memory dword it read
//! (with the values it read) and the methods it emitted, in order. A later call with the
//! same parameters whose state and memory hold the same values at those places would read
//! the same values at every step (a word the run wrote first reads what the run wrote,
//! the same on the same path), take the same path and emit the same methods. Memory is
//! the exception to "the same path writes the same places": a constant-buffer load lands
//! where the model's constant-buffer offset points, which is not among what a run reads;
//! so a run that reads memory after anything wrote memory during it is not remembered.
//! For a remembered run the model replays the emitted methods
//! through [`GpuState::mthd`] (so every side effect of a method, from constant-buffer
//! loads to draws and reports, happens as it would) and counts the recorded instructions.
//!
//! Storm-shaped command streams call the same few macros with the same parameters
//! thousands of times a frame; there a call costs a lookup, a few compares and its
//! methods. Memory stays bounded: the table is cleared when it holds
//! [`MacroMemo::MAX_ENTRIES`] runs, and runs longer than [`MacroMemo::MAX_EMITS`]
//! methods (a 32-view loop) are simulated each time. A run is noted only up to those
//! bounds: past them the [`Recorder`] stops noting and the run is not remembered, so a
//! macro that emits millions of methods within its budget takes no memory for them.
//! A macro whose calls rarely repeat stops being recorded after a trial, so a stream
//! of unique calls pays little for it.

use std::collections::HashMap;

use crate::mme::Machine;

use super::GpuState;

/// A remembered run of one macro.
struct Run {
    id: u16,
    params: Box<[u32]>,
    /// State words (shadow indices) read before the run wrote them, and what they held.
    reads: Box<[(u16, u32)]>,
    /// Memory dwords read, and what they held.
    memory_reads: Box<[(u64, u32)]>,
    /// The methods emitted, in order.
    emits: Box<[(u16, u32)]>,
    instructions: u64,
}

/// How often a macro's calls were found remembered: a macro whose calls do not repeat
/// is no longer recorded.
#[derive(Clone, Copy, Default)]
struct Usage {
    calls: u32,
    hits: u32,
}

impl Usage {
    /// Calls a macro is recorded for before its hit rate decides.
    const TRIAL: u32 = 64;

    fn worth_recording(self) -> bool {
        self.calls < Self::TRIAL || self.hits * 4 >= self.calls
    }

    fn count(&mut self, hit: bool) {
        if self.calls == u32::MAX {
            *self = Usage::default();
        }
        self.calls += 1;
        self.hits += u32::from(hit);
    }
}

/// Remembered macro runs, by macro id and parameters.
pub(super) struct MacroMemo {
    runs: HashMap<u64, Vec<Run>, foldhash::fast::RandomState>,
    entries: usize,
    usage: Vec<Usage>,
    hits: u64,
}

impl MacroMemo {
    /// Remembered runs at most; the table is cleared when it is full.
    pub(super) const MAX_ENTRIES: usize = 4096;
    /// Methods a remembered run emits at most.
    pub(super) const MAX_EMITS: usize = 256;
    /// State words a remembered run reads at most.
    const MAX_READS: usize = 64;
    /// Runs kept for one macro and parameter list (differing in the state they read).
    const MAX_VARIANTS: usize = 4;

    pub(super) fn new() -> Self {
        MacroMemo {
            runs: HashMap::default(),
            entries: 0,
            usage: Vec::new(),
            hits: 0,
        }
    }

    /// Forgets every remembered run, as when the macros they ran are loaded again
    /// (the count of hits and each macro's rate stay).
    pub(super) fn forget(&mut self) {
        if self.entries > 0 {
            self.runs.clear();
            self.entries = 0;
        }
    }

    /// Calls replayed from a remembered run so far.
    pub(super) fn hits(&self) -> u64 {
        self.hits
    }

    /// The table key of a call of macro `id` with `params`: a multiply-and-rotate
    /// fold of its words (the table hashes the key again; a key shared by two calls
    /// only costs a compare, as each run keeps its id and parameters).
    fn key(id: u16, params: &[u32]) -> u64 {
        const K: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut h = (u64::from(id) << 32 | params.len() as u64).wrapping_mul(K);
        for &p in params {
            h = (h ^ u64::from(p)).wrapping_mul(K).rotate_left(29);
        }
        h
    }

    /// Replays a remembered run of macro `id` on the pending parameters whose reads
    /// match `state`, if there is one within `budget`; returns its instruction count.
    pub(super) fn replay(&mut self, id: u16, state: &mut GpuState, budget: u64) -> Option<u64> {
        let params = state.channel.params.as_slice();
        let key = Self::key(id, params);
        let run = self
            .runs
            .get(&key)
            .and_then(|runs| runs.iter().find(|r| r.replays(id, state, budget)));
        usage_of(&mut self.usage, id).count(run.is_some());
        let run = run?;
        self.hits += 1;
        state.channel.params_loaded = state.channel.params.len();
        state.macro_methods_again(&run.emits);
        Some(run.instructions)
    }

    /// Whether calls of macro `id` are worth recording.
    pub(super) fn recording(&self, id: u16) -> bool {
        let usage = self.usage.get(usize::from(id)).copied();
        usage.unwrap_or_default().worth_recording()
    }

    /// Remembers a finished run of macro `id`.
    pub(super) fn remember(&mut self, id: u16, rec: &Recorder<'_>, instructions: u64) {
        let params = rec.state.channel.params.as_slice();
        if rec.unrememberable || rec.past_bounds {
            return;
        }
        if self.entries >= Self::MAX_ENTRIES {
            self.runs.clear();
            self.entries = 0;
        }
        let key = Self::key(id, params);
        let runs = self.runs.entry(key).or_default();
        if runs.len() >= Self::MAX_VARIANTS {
            runs.remove(0);
            self.entries -= 1;
        }
        runs.push(Run {
            id,
            params: params.into(),
            reads: rec.reads.as_slice().into(),
            memory_reads: rec.memory_reads.as_slice().into(),
            emits: rec.emits.as_slice().into(),
            instructions,
        });
        self.entries += 1;
    }
}

impl Run {
    /// Whether this run is what a call of macro `id` on `state`'s pending parameters
    /// does, within `budget`: the same macro and parameters, and every state word and
    /// memory dword it read holding what it read.
    #[inline(always)]
    fn replays(&self, id: u16, state: &GpuState, budget: u64) -> bool {
        self.id == id
            && self.instructions <= budget
            && *self.params == *state.channel.params
            && self
                .reads
                .iter()
                .all(|&(i, v)| state.channel.shadow[usize::from(i)] == v)
            && self
                .memory_reads
                .iter()
                .all(|&(a, v)| state.memory.read_u32(a) == v)
    }
}

/// Macro `id`'s entry in `usage`.
fn usage_of(usage: &mut Vec<Usage>, id: u16) -> &mut Usage {
    let slot = usize::from(id);
    if usage.len() <= slot {
        usage.resize(slot + 1, Usage::default());
    }
    &mut usage[slot]
}

/// A [`Machine`] that runs a macro against the GPU state and notes what a
/// [`MacroMemo`] needs to remember the run.
pub(super) struct Recorder<'a> {
    pub(super) state: &'a mut GpuState,
    reads: Vec<(u16, u32)>,
    memory_reads: Vec<(u64, u32)>,
    emits: Vec<(u16, u32)>,
    /// Memory's write count when the run began.
    memory_writes: u64,
    /// The run read memory after something wrote it during the run.
    unrememberable: bool,
    /// The run emitted or read more than a remembered run may: nothing more is noted.
    past_bounds: bool,
}

impl<'a> Recorder<'a> {
    pub(super) fn new(state: &'a mut GpuState) -> Self {
        Recorder {
            memory_writes: state.memory.writes(),
            state,
            reads: Vec::new(),
            memory_reads: Vec::new(),
            emits: Vec::new(),
            unrememberable: false,
            past_bounds: false,
        }
    }

    /// Stops noting the run once it holds more than a remembered run may, and lets
    /// what it noted go.
    fn check_bounds(&mut self) {
        if self.emits.len() > MacroMemo::MAX_EMITS
            || self.reads.len() + self.memory_reads.len() > MacroMemo::MAX_READS
        {
            self.past_bounds = true;
            self.reads = Vec::new();
            self.memory_reads = Vec::new();
            self.emits = Vec::new();
        }
    }
}

/// The shadow index of a method.
fn shadow_index(mthd: u16) -> u16 {
    (mthd >> 2) & 0xfff
}

impl Machine for Recorder<'_> {
    fn param(&mut self) -> Option<u32> {
        self.state.param()
    }

    fn state(&mut self, mthd: u16) -> u32 {
        let value = self.state.state(mthd);
        if self.past_bounds {
            return value;
        }
        let index = shadow_index(mthd);
        let seen = self.reads.iter().any(|&(i, _)| i == index)
            || self.emits.iter().any(|&(m, _)| shadow_index(m) == index);
        if !seen {
            self.reads.push((index, value));
            self.check_bounds();
        }
        value
    }

    fn mthd(&mut self, mthd: u16, data: u32) {
        if !self.past_bounds {
            self.emits.push((mthd, data));
            self.check_bounds();
        }
        self.state.mthd(mthd, data);
    }

    fn read_u32(&mut self, addr: u64) -> Option<u32> {
        let value = self.state.read_u32(addr);
        if self.state.memory.writes() != self.memory_writes {
            self.unrememberable = true;
        } else if let (Some(v), false) = (value, self.past_bounds) {
            self.memory_reads.push((addr, v));
            self.check_bounds();
        }
        value
    }
}
