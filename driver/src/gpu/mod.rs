//! The GPU model: a front end that executes push buffers.
//!
//! It decodes method headers and writes, keeps the 3D state the driver relies on (the
//! shadowed value of every method, MME shadow scratch included; the selected constant
//! buffer; the RT layer; BEGIN's instance counting), loads macros through the MME RAM
//! methods and runs `CALL_MME_MACRO` on the simulator of its class's MME, reads indirect
//! data from its [`Memory`], and records every draw the hardware would start and every
//! report or semaphore write. Unknown methods are counted, not fatal.

mod channel;
mod effectful;
mod memo;
mod memory;

pub use channel::Channel;
use channel::ChannelState;
pub use memory::Memory;

use effectful::{Effect, EFFECTS, PLAIN};
use memo::{MacroMemo, Recorder};

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::class::{self, InstanceId, Report, ReportSemaphoreD, SemaphoreOperation, StructureSize};
use crate::mme::{fermi, tu104, Arch, Machine, RunError, RunErrorKind, RunStats, DEFAULT_BUDGET};
use crate::nvk::{root, Scratch};
use crate::push::{self, ParseError};

/// A draw the hardware started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HwDraw {
    /// Index-buffer draw (else vertex-array).
    pub indexed: bool,
    /// The render-target layer (`SET_RT_LAYER`).
    pub layer: u32,
    /// `draw.view_index` read back from the root descriptor table.
    pub view_index: u32,
    /// The layer a fragment shader's input attachment reads: the view index under
    /// multiview (NVK lowers it so), else the RT layer.
    pub input_attachment_layer: u32,
    /// Vertex or index count.
    pub count: u32,
    /// First vertex or first index.
    pub first: u32,
    /// Which instance (from `BEGIN.INSTANCE_ID`).
    pub instance: u32,
    /// `SET_GLOBAL_BASE_VERTEX_INDEX`.
    pub base_vertex: u32,
    /// `SET_GLOBAL_BASE_INSTANCE_INDEX`.
    pub base_instance: u32,
    /// `draw.draw_id` from the root table.
    pub draw_id: u32,
    /// The BEGIN word (topology and flags).
    pub begin: u32,
}

/// A report or semaphore write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportWrite {
    /// Where.
    pub addr: u64,
    /// The 32-bit payload (one word) or the 64-bit value (four words).
    pub value: u64,
    /// Four words (value and timestamp) rather than one.
    pub four_words: bool,
}

/// What one macro call cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MacroRun {
    /// The macro.
    pub id: u16,
    /// Instructions the simulator executed.
    pub instructions: u64,
    /// Methods the macro emitted.
    pub methods: u64,
    /// Host nanoseconds from the macro's first `SET_RT_LAYER` (its first view) to its end:
    /// the time the multiview loop took; 0 for a macro that selected no layer.
    pub view_loop_ns: u64,
}

/// Totals since the model was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Methods written by push buffers.
    pub push_methods: u64,
    /// Methods written by macros.
    pub macro_methods: u64,
    /// Macro instructions executed.
    pub mme_instructions: u64,
    /// Macro calls.
    pub macro_calls: u64,
    /// Hardware draws started.
    pub hw_draws: u64,
    /// Report and semaphore writes.
    pub reports: u64,
}

/// What executing one push buffer cost, as the replayer reports it per draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExecCost {
    /// Macro instructions executed.
    pub mme_instructions: u64,
    /// Methods executed: written by the push buffer and emitted by macros.
    pub methods: u64,
    /// Methods the macros emitted.
    pub macro_methods: u64,
    /// Draws the hardware started.
    pub hw_draws: u64,
    /// Report and semaphore writes.
    pub reports: u64,
}

impl ExecCost {
    /// Adds what another execution cost.
    pub fn add(&mut self, other: ExecCost) {
        self.mme_instructions += other.mme_instructions;
        self.methods += other.methods;
        self.macro_methods += other.macro_methods;
        self.hw_draws += other.hw_draws;
        self.reports += other.reports;
    }
}

/// Why execution stopped.
///
/// Each variant's message already says its cause, so none is also a `source`: a
/// chain printed cause by cause says each once.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// The push buffer is malformed.
    #[error("push buffer: {0}")]
    Push(ParseError),
    /// A macro failed.
    #[error(transparent)]
    Macro(#[from] RunError),
    /// A macro was called that was never loaded, or its words do not decode.
    #[error("macro {}: {problem}", macro_name(*id))]
    BadMacro {
        /// The macro id.
        id: u16,
        /// What is wrong.
        problem: String,
    },
    /// A macro's writes (reports, constant-buffer loads) reached more fresh memory
    /// than one call may ([`MAX_FRESH_PAGES_PER_CALL`]).
    #[error(
        "macro {}: its writes reached more than {} MiB of memory never written before \
         ({refused} dwords not written)",
        macro_name(*id),
        MAX_FRESH_PAGES_PER_CALL * 4 / 1024
    )]
    FreshMemory {
        /// The macro id.
        id: u16,
        /// Dwords refused.
        refused: u64,
    },
}

/// Pages of 4 KiB that one macro call's writes may make in memory never written
/// before: NVK's macros write a few reports and root-table words; a hostile one
/// looping over addresses would otherwise take memory without bound.
pub const MAX_FRESH_PAGES_PER_CALL: usize = 4096;

/// Methods [`GpuState::method_log`] keeps at most: a macro running to its budget may
/// emit a hundred million.
pub const MAX_LOGGED_METHODS: usize = 1 << 20;

impl From<ParseError> for GpuError {
    fn from(e: ParseError) -> Self {
        GpuError::Push(e)
    }
}

/// A macro's name for people: NVK's (`draw`) where the id is one of the model's
/// macros, its number otherwise.
pub fn macro_name(id: u16) -> String {
    crate::nvk::Macro::ALL
        .iter()
        .find(|m| m.id() == id)
        .map_or_else(|| format!("macro {id}"), |m| m.name().to_string())
}

enum Executable {
    Turing(tu104::Sim),
    Fermi(fermi::Sim),
}

impl Executable {
    /// Runs the macro on its simulator against `m`.
    fn run(&self, m: &mut impl Machine, budget: u64) -> Result<RunStats, RunError> {
        match self {
            Executable::Turing(sim) => sim.run(m, budget),
            Executable::Fermi(sim) => sim.run(m, budget),
        }
    }
}

/// The instruction and start-address RAMs, and the macros decoded from them.
struct MacroStore {
    arch: Arch,
    ram: Vec<u32>,
    ram_ptr: usize,
    starts: BTreeMap<u16, usize>,
    start_ptr: u16,
    /// Decoded macros by id, filled on first call.
    decoded: Vec<Option<Arc<Executable>>>,
}

impl MacroStore {
    /// Instruction RAM size in words (NVK's MME RAM is a few thousand words).
    const RAM_WORDS: usize = 0x4000;

    /// The methods that load the macro RAM and start addresses: four in a row, told
    /// apart from every other method by one range check at each write.
    const LOADS: std::ops::RangeInclusive<u16> =
        class::LOAD_MME_INSTRUCTION_RAM_POINTER..=class::LOAD_MME_START_ADDRESS_RAM;

    /// Takes `data` written to `mthd` when it loads the macro RAM or a start address;
    /// whether it did.
    #[inline(always)]
    fn method(&mut self, mthd: u16, data: u32) -> bool {
        Self::LOADS.contains(&mthd) && self.load(mthd, data)
    }

    /// [`MacroStore::method`] for the four loading methods.
    #[inline(never)]
    fn load(&mut self, mthd: u16, data: u32) -> bool {
        match mthd {
            class::LOAD_MME_INSTRUCTION_RAM_POINTER => self.ram_ptr = data as usize,
            class::LOAD_MME_INSTRUCTION_RAM => {
                if self.ram_ptr < Self::RAM_WORDS {
                    if self.ram.len() <= self.ram_ptr {
                        self.ram.resize(self.ram_ptr + 1, 0);
                    }
                    self.ram[self.ram_ptr] = data;
                    self.ram_ptr += 1;
                    self.decoded.clear();
                }
            }
            class::LOAD_MME_START_ADDRESS_RAM_POINTER => self.start_ptr = data as u16,
            class::LOAD_MME_START_ADDRESS_RAM => {
                self.starts.insert(self.start_ptr, data as usize);
                self.start_ptr = self.start_ptr.wrapping_add(1);
                self.decoded.clear();
            }
            _ => return false,
        }
        true
    }

    /// Macro `id`, decoded on its first call.
    fn get(&mut self, id: u16) -> Result<&Executable, GpuError> {
        let slot = usize::from(id);
        if self.decoded.len() <= slot {
            self.decoded.resize_with(slot + 1, || None);
        }
        match &mut self.decoded[slot] {
            Some(exe) => Ok(exe),
            empty => Ok(empty.insert(decode_macro(self.arch, &self.ram, &self.starts, id)?)),
        }
    }
}

/// Macros decoded and compiled before in this process, by architecture, id (the name a
/// run error gives) and instruction words: every pass of a replay, every trace of a
/// `macroscope ci` run and both sides of a `verify` upload the same NVK macros, and
/// compiling one for its simulator costs tens of thousands of instructions, where
/// finding it here compares its words.
mod compiled {
    use std::sync::{Arc, Mutex, PoisonError};

    use super::Executable;
    use crate::mme::Arch;

    /// Macros kept at most: NVK uploads under thirty; a trace that loads other macros
    /// again and again has the rest compiled each time, not kept.
    const MAX_KEPT: usize = 256;

    type Kept = Vec<(Arch, u16, Box<[u32]>, Arc<Executable>)>;
    static KEPT: Mutex<Kept> = Mutex::new(Vec::new());

    /// Macro `id` of `words` on `arch`, compiled by `compile` unless it was before.
    pub(super) fn get_or_compile<E>(
        arch: Arch,
        id: u16,
        words: &[u32],
        compile: impl FnOnce() -> Result<Executable, E>,
    ) -> Result<Arc<Executable>, E> {
        let found = |kept: &Kept| {
            kept.iter()
                .find(|(a, i, w, _)| *a == arch && *i == id && **w == *words)
                .map(|(_, _, _, exe)| Arc::clone(exe))
        };
        if let Some(exe) = found(&KEPT.lock().unwrap_or_else(PoisonError::into_inner)) {
            return Ok(exe);
        }
        let exe = Arc::new(compile()?);
        let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() < MAX_KEPT && found(&kept).is_none() {
            kept.push((arch, id, words.into(), Arc::clone(&exe)));
        }
        Ok(exe)
    }
}

/// Runs macro `id` on its simulator against `state`, recording the run into `memo`
/// where that is worth it.
fn run_macro(
    exe: &Executable,
    state: &mut GpuState,
    memo: Option<&mut MacroMemo>,
    id: u16,
    budget: u64,
) -> Result<RunStats, RunError> {
    let Some(memo) = memo.filter(|m| m.recording(id)) else {
        return exe.run(state, budget);
    };
    let mut rec = Recorder::new(state);
    let stats = exe.run(&mut rec, budget)?;
    memo.remember(id, &rec, stats.instructions);
    Ok(stats)
}

/// Decodes macro `id` from the instruction RAM: it runs from its start address to the
/// next macro's start (or the end of the RAM).
fn decode_macro(
    arch: Arch,
    ram: &[u32],
    starts: &BTreeMap<u16, usize>,
    id: u16,
) -> Result<Arc<Executable>, GpuError> {
    let bad = |problem: String| GpuError::BadMacro { id, problem };
    let start = *starts
        .get(&id)
        .ok_or_else(|| bad("was never loaded".into()))?;
    let end = starts
        .values()
        .copied()
        .filter(|s| *s > start)
        .min()
        .unwrap_or(ram.len());
    let words = ram.get(start..end.max(start)).unwrap_or(&[]);
    compiled::get_or_compile(arch, id, words, || {
        let name = macro_name(id);
        Ok(match arch {
            Arch::Turing => Executable::Turing(
                tu104::Sim::new(&name, &words[..words.len() / 3 * 3])
                    .map_err(|e| bad(e.to_string()))?,
            ),
            Arch::Fermi => {
                Executable::Fermi(fermi::Sim::new(&name, words).map_err(|e| bad(e.to_string()))?)
            }
        })
    })
}

/// The 3D state and everything the methods write.
pub struct GpuState {
    /// GPU memory.
    pub memory: Memory,
    /// What the channel running holds ([`Channel`]).
    channel: ChannelState,
    clock: u64,
    /// Every draw started, in order, while `record_draws` is on (tests inspect them;
    /// a replay counts them only, so that memory does not grow with hardware draws).
    pub draws: Vec<HwDraw>,
    /// Whether each hardware draw and report is kept in `draws` and `reports` (on by
    /// default).
    pub record_draws: bool,
    /// Every report or semaphore write, in order, while `record_draws` is on.
    pub reports: Vec<ReportWrite>,
    /// Running totals.
    pub counters: Counters,
    /// When set, every method executed is appended here, pushed and macro-emitted, up
    /// to [`MAX_LOGGED_METHODS`]; those past it are counted in `unlogged_methods`.
    pub method_log: Option<Vec<LoggedMethod>>,
    /// Methods executed while `method_log` was full.
    pub unlogged_methods: u64,
}

/// One method write, as [`GpuState::method_log`] records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoggedMethod {
    /// The subchannel, which names the class ([`push::SUBC_3D`] and so on).
    pub subc: u8,
    /// Method offset.
    pub mthd: u16,
    /// Its data.
    pub data: u32,
    /// Whether a macro emitted it (as opposed to the push buffer).
    pub from_macro: bool,
}

/// The GPU: its state and its macros.
pub struct Gpu {
    /// The state.
    pub state: GpuState,
    macros: MacroStore,
    /// The macro called whose parameters are still coming.
    pending_call: Option<u16>,
    /// The last macro call's cost.
    pub last_macro: Option<MacroRun>,
    budget: u64,
    /// Remembered macro runs; `None` when every call is simulated.
    memo: Option<MacroMemo>,
}

impl Gpu {
    /// A GPU whose 3D class runs the `arch` MME.
    pub fn new(arch: Arch) -> Self {
        let Channel {
            state: channel,
            macros,
            pending_call,
            memo,
        } = Channel::new(arch, true);
        Gpu {
            state: GpuState {
                memory: Memory::new(),
                channel,
                clock: 0,
                draws: Vec::new(),
                record_draws: true,
                reports: Vec::new(),
                unlogged_methods: 0,
                counters: Counters::default(),
                method_log: None,
            },
            macros,
            pending_call,
            last_macro: None,
            budget: DEFAULT_BUDGET,
            memo,
        }
    }

    /// Macro calls replayed from a remembered run rather than simulated, since the model
    /// was made.
    pub fn remembered_calls(&self) -> u64 {
        self.memo.as_ref().map_or(0, MacroMemo::hits)
    }

    /// Whether a macro call that repeats one seen before (the same macro, parameters and
    /// state it reads) replays the methods it emitted rather than running the simulator
    /// again (on by default; the outcome is the same either way, see [`memo`]).
    pub fn set_macro_memo(&mut self, on: bool) {
        self.memo = on.then(MacroMemo::new);
    }

    /// The MME instruction set.
    pub fn arch(&self) -> Arch {
        self.macros.arch
    }

    /// Caps the instructions one macro call may run.
    pub fn set_macro_budget(&mut self, budget: u64) {
        self.budget = budget;
    }

    /// Executes a push buffer and returns what it cost.
    pub fn execute_measured(&mut self, words: &[u32]) -> Result<ExecCost, GpuError> {
        let (cost, outcome) = self.execute_partial(words);
        outcome.map(|()| cost)
    }

    /// Executes a push buffer; returns what it cost, also when it stopped on an error
    /// (then the cost of what ran before it stopped, a macro past its budget counting
    /// the budget's instructions), and how it ended.
    pub fn execute_partial(&mut self, words: &[u32]) -> (ExecCost, Result<(), GpuError>) {
        let before = self.state.counters;
        let outcome = self.execute(words);
        if outcome.is_err() {
            // A macro that failed leaves its parameters and call behind.
            self.pending_call = None;
        }
        let after = self.state.counters;
        let cost = ExecCost {
            mme_instructions: after.mme_instructions - before.mme_instructions,
            methods: (after.push_methods + after.macro_methods)
                - (before.push_methods + before.macro_methods),
            macro_methods: after.macro_methods - before.macro_methods,
            hw_draws: after.hw_draws - before.hw_draws,
            reports: after.reports - before.reports,
        };
        (cost, outcome)
    }

    /// Executes a push buffer, header by header ([`push::runs`]). With a method log,
    /// each write as it comes (the log sees every one); without, a run at a time
    /// ([`execute_run`](Self::execute_run)).
    pub fn execute(&mut self, words: &[u32]) -> Result<(), GpuError> {
        if self.state.method_log.is_some() {
            for run in push::runs(words) {
                let run = run?;
                let subc = run.header.subc();
                run.try_for_each_write(|mthd, data| self.write(subc, mthd, data))?;
            }
        } else {
            for run in push::runs(words) {
                self.execute_run(&run?)?;
            }
        }
        match self.pending_call {
            Some(_) => self.flush_call(),
            None => Ok(()),
        }
    }

    /// Executes one run of a push buffer, leaving the model as its writes one by one
    /// do. Another class's run is counted (as [`write`](Self::write) counts each of its
    /// writes); a run of root-table words (an increment-once header at
    /// `LOAD_CONSTANT_BUFFER_OFFSET`, as NVK writes the root table) goes to memory in
    /// one copy, a macro call (an increment-once header at its `CALL_MME_MACRO`)
    /// takes its parameters in one copy (a draw storm is made of these two), and a run
    /// of plain stores ([`plain_stores`](Self::plain_stores)) is done at once.
    #[inline(always)]
    fn execute_run(&mut self, run: &push::MethodRun<'_>) -> Result<(), GpuError> {
        let (subc, mthd) = (run.header.subc(), run.header.mthd());
        if subc != push::SUBC_3D {
            // Other classes' methods (copy, compute) are counted, not executed.
            self.state.counters.push_methods += run.len() as u64;
            return Ok(());
        }
        if run.kind == push::HeaderKind::IncrementOnce {
            if let Some((&first, rest)) = run.data.split_first() {
                if mthd == class::LOAD_CONSTANT_BUFFER_OFFSET {
                    self.write(subc, mthd, first)?;
                    self.state.load_constant_buffer_run(rest);
                    return Ok(());
                }
                if matches!(class::macro_call_method(mthd), Some((_, true))) {
                    // A whole macro call: its first word starts it, the rest are its
                    // parameters (what `write` does word by word).
                    self.write(subc, mthd, first)?;
                    self.state.counters.push_methods += rest.len() as u64;
                    self.state.channel.params.extend_from_slice(rest);
                    return Ok(());
                }
            }
        }
        if self.plain_stores(run)? {
            return Ok(());
        }
        run.try_for_each_write(
            #[inline(always)]
            |mthd, data| self.write(subc, mthd, data),
        )
    }

    /// A 3D-class run whose writes only set shadows ([`PLAIN`] methods, or none at
    /// all), done at once with no write looked at alone, leaving the shadows and
    /// counters as its writes one by one leave them (the first ends a pending macro
    /// call, as any 3D write does). Most of NVK's headers are such runs: immediates and
    /// short incrementing runs to state methods (83 % of DDNet's, its blits'). Whether
    /// `run` was one. Only without a method log, which sees each write.
    #[inline(always)]
    fn plain_stores(&mut self, run: &push::MethodRun<'_>) -> Result<bool, GpuError> {
        let writes = run.len();
        if writes == 0 {
            return Ok(true);
        }
        let index = usize::from(run.header.mthd() >> 2);
        let plain = match run.kind {
            push::HeaderKind::Immediate | push::HeaderKind::NonIncrementing => PLAIN.all(index, 1),
            push::HeaderKind::Incrementing => PLAIN.all(index, writes),
            push::HeaderKind::IncrementOnce => PLAIN.all(index, writes.min(2)),
        };
        if !plain {
            return Ok(false);
        }
        if self.pending_call.is_some() {
            self.flush_call()?;
        }
        self.state.counters.push_methods += writes as u64;
        let shadow = &mut self.state.channel.shadow;
        match run.kind {
            push::HeaderKind::Immediate => shadow[index] = run.header.count(),
            push::HeaderKind::Incrementing => {
                shadow[index..index + writes].copy_from_slice(run.data);
            }
            push::HeaderKind::NonIncrementing => shadow[index] = run.data[writes - 1],
            push::HeaderKind::IncrementOnce => {
                shadow[index] = run.data[0];
                if writes > 1 {
                    shadow[index + 1] = run.data[writes - 1];
                }
            }
        }
        Ok(true)
    }

    /// Executes one method write of a push buffer.
    #[inline(always)]
    fn write(&mut self, subc: u8, mthd: u16, data: u32) -> Result<(), GpuError> {
        self.state.counters.push_methods += 1;
        if self.state.method_log.is_some() {
            self.state.log_method(LoggedMethod {
                subc,
                mthd,
                data,
                from_macro: false,
            });
        }
        // Other classes' methods (copy, compute) are counted, not executed.
        if subc != push::SUBC_3D {
            return Ok(());
        }
        if let Some((id, starts)) = class::macro_call_method(mthd) {
            if starts {
                if self.pending_call.is_some() {
                    self.flush_call()?;
                }
                self.pending_call = Some(id);
                self.state.channel.params.clear();
                self.state.channel.params_loaded = 0;
                self.state.channel.params.push(data);
            } else if self.pending_call == Some(id) {
                self.state.channel.params.push(data);
            }
            return Ok(());
        }
        if self.pending_call.is_some() {
            self.flush_call()?;
        }
        if self.macros.method(mthd, data) {
            // A macro loaded again runs its new words: what its old ones did is no
            // longer what a call does.
            if let Some(memo) = &mut self.memo {
                memo.forget();
            }
        } else {
            self.state.method(mthd, data);
        }
        Ok(())
    }

    fn flush_call(&mut self) -> Result<(), GpuError> {
        let Some(id) = self.pending_call.take() else {
            return Ok(());
        };
        // The parameters were gathered into the channel's `params` as they came.
        let state = &mut self.state;
        state.channel.in_macro = true;
        state.channel.first_layer_at = None;
        let methods_before = state.counters.macro_methods;
        let refused_before = state.memory.refused_writes();
        state.memory.limit_fresh_pages(MAX_FRESH_PAGES_PER_CALL);
        let remembered = self
            .memo
            .as_mut()
            .and_then(|memo| memo.replay(id, state, self.budget));
        let result = match remembered {
            Some(instructions) => Ok(RunStats { instructions }),
            None => run_macro(
                self.macros.get(id)?,
                state,
                self.memo.as_mut(),
                id,
                self.budget,
            ),
        };
        state.channel.in_macro = false;
        state.memory.unlimit_fresh_pages();
        let refused = state.memory.refused_writes() - refused_before;
        if refused > 0 {
            return Err(GpuError::FreshMemory { id, refused });
        }
        let view_loop_ns = state
            .channel
            .first_layer_at
            .take()
            .map_or(0, |t| t.elapsed().as_nanos() as u64);
        if let Err(RunError {
            kind: RunErrorKind::BudgetExceeded { budget },
            ..
        }) = &result
        {
            state.counters.mme_instructions += budget;
        }
        let stats = result?;
        state.counters.mme_instructions += stats.instructions;
        state.counters.macro_calls += 1;
        self.last_macro = Some(MacroRun {
            id,
            instructions: stats.instructions,
            methods: state.counters.macro_methods - methods_before,
            view_loop_ns,
        });
        Ok(())
    }
}

impl GpuState {
    /// Forgets the recorded draws and reports (memory and state stay).
    pub fn clear_records(&mut self) {
        self.draws.clear();
        self.reports.clear();
    }

    /// The shadowed value of `mthd`.
    pub fn shadow(&self, mthd: u16) -> u32 {
        self.channel.shadow[usize::from(mthd >> 2) & 0xfff]
    }

    /// The value of shadow scratch `slot`.
    pub fn scratch(&self, slot: Scratch) -> u32 {
        self.shadow(class::set_mme_shadow_scratch(slot as u16))
    }

    /// Executes one method write: its shadow, then what [`GpuState::effect`] does for
    /// the few methods that do more.
    pub fn method(&mut self, mthd: u16, data: u32) {
        if self.channel.in_macro && self.method_log.is_some() {
            self.log_method(LoggedMethod {
                subc: push::SUBC_3D,
                mthd,
                data,
                from_macro: true,
            });
        }
        self.store(mthd, data);
    }

    /// A method write without the log: its shadow, and its effect where it has one.
    #[inline(always)]
    fn store(&mut self, mthd: u16, data: u32) {
        let index = usize::from(mthd >> 2) & 0xfff;
        self.channel.shadow[index] = data;
        if EFFECTS.of(index) != Effect::None {
            self.effect(mthd, data);
        }
    }

    /// The methods a remembered macro run emitted, written again in order, leaving the
    /// model as [`Machine::mthd`] of each leaves it (`MacroMemo::replay`). With no
    /// method log to feed, the count goes up once and each write is its shadow and, for
    /// the few methods with one, its effect: a storm replays millions of these.
    fn macro_methods_again(&mut self, emits: &[(u16, u32)]) {
        if self.method_log.is_some() {
            for &(mthd, data) in emits {
                self.mthd(mthd, data);
            }
            return;
        }
        self.counters.macro_methods += emits.len() as u64;
        for &(mthd, data) in emits {
            self.store(mthd, data);
        }
    }

    /// What writing `data` to `mthd` does beyond setting its shadow (which is set
    /// already); whether it did anything. Only the methods with an effect in
    /// [`EFFECTS`] come here (kept out of line, so that a plain method write stays a
    /// store and a look-up), and each goes straight to its action. Methods are dword
    /// addresses below 0x4000: any other value (which neither a push buffer nor a
    /// macro makes) acts on nothing.
    #[inline(never)]
    fn effect(&mut self, mthd: u16, data: u32) -> bool {
        if mthd & !0x3ffc != 0 {
            return false;
        }
        match EFFECTS.of(usize::from(mthd >> 2)) {
            Effect::CbSize => self.channel.cb_size = data & 0x1ffff,
            Effect::CbAddress => {
                self.channel.cb_addr =
                    (u64::from(self.shadow(class::SET_CONSTANT_BUFFER_SELECTOR_B) & 0xff) << 32)
                        | u64::from(self.shadow(class::SET_CONSTANT_BUFFER_SELECTOR_C));
            }
            Effect::CbOffset => self.channel.cb_offset = data & 0xffff,
            Effect::CbLoad => {
                if self.channel.cb_offset + 4 <= self.channel.cb_size {
                    self.memory.write_u32(
                        self.channel.cb_addr + u64::from(self.channel.cb_offset),
                        data,
                    );
                }
                self.channel.cb_offset += 4;
            }
            // Valid, shader slot 0: NVK binds the root descriptor table there.
            Effect::BindGroupCb if data & 1 != 0 && (data >> 4) & 0x1f == 0 => {
                self.channel.root_addr = self.channel.cb_addr;
            }
            Effect::RtLayer => {
                self.channel.rt_layer = data & 0xffff;
                if self.channel.in_macro && self.channel.first_layer_at.is_none() {
                    self.channel.first_layer_at = Some(std::time::Instant::now());
                }
            }
            Effect::Begin => {
                self.channel.begin = data;
                self.channel.instance = match class::Begin::instance_id_of(data) {
                    x if x == InstanceId::First as u32 => 0,
                    x if x == InstanceId::Subsequent as u32 => self.channel.instance + 1,
                    _ => self.channel.instance,
                };
            }
            Effect::DrawVertexArray => {
                self.start_draw(false, self.shadow(class::SET_VERTEX_ARRAY_START), data)
            }
            Effect::DrawIndexBuffer => {
                self.start_draw(true, self.shadow(class::SET_INDEX_BUFFER_F), data)
            }
            Effect::DrawAuto => {
                // The hardware's division of the byte count.
                let start = self.shadow(class::SET_DRAW_AUTO_START);
                let stride = self.shadow(class::SET_DRAW_AUTO_STRIDE);
                let count = data.saturating_sub(start).checked_div(stride).unwrap_or(0);
                self.start_draw(false, 0, count)
            }
            Effect::ZpassPixelCount => self.channel.zpass_enabled = data != 0,
            // The firmware's falcon does the private-register write and answers 1.
            Effect::Falcon04 => {
                self.channel.shadow
                    [usize::from(class::set_mme_shadow_scratch(Scratch::Falcon0 as u16) >> 2)] = 1;
            }
            Effect::ReportSemaphore => self.report(data),
            // The rest (draw parameters, report addresses, MME memory reads, no-ops and
            // the state methods) is what the shadow keeps; so is a bind of another
            // slot than the root table's.
            Effect::None | Effect::BindGroupCb => return false,
        }
        true
    }

    /// `data` written to `LOAD_CONSTANT_BUFFER` one word after another from a push
    /// buffer (no macro runs, no method log): what [`GpuState::method`] does for each,
    /// the words that fit the selected constant buffer copied in one go.
    fn load_constant_buffer_run(&mut self, data: &[u32]) {
        let Some(&last) = data.last() else {
            return;
        };
        self.counters.push_methods += data.len() as u64;
        self.channel.shadow[usize::from(class::load_constant_buffer(0) >> 2) & 0xfff] = last;
        let room = match self.channel.cb_offset + 4 <= self.channel.cb_size {
            true => ((self.channel.cb_size - self.channel.cb_offset) / 4) as usize,
            false => 0,
        };
        let fit = &data[..data.len().min(room)];
        self.memory.write_words(
            self.channel.cb_addr + u64::from(self.channel.cb_offset),
            fit,
        );
        self.channel.cb_offset += 4 * data.len() as u32;
    }

    fn start_draw(&mut self, indexed: bool, first: u32, count: u32) {
        self.counters.hw_draws += 1;
        if self.channel.zpass_enabled {
            // The model's pixel counter: every vertex a fragment.
            self.channel.zpass_count += u64::from(count);
        }
        if !self.record_draws {
            return;
        }
        let view_index = self
            .memory
            .read_u32(self.channel.root_addr + u64::from(root::DRAW_VIEW_INDEX));
        let multiview = self.scratch(Scratch::ViewMask) != 0;
        self.draws.push(HwDraw {
            indexed,
            layer: self.channel.rt_layer,
            view_index,
            input_attachment_layer: if multiview {
                view_index
            } else {
                self.channel.rt_layer
            },
            count,
            first,
            instance: self.channel.instance,
            base_vertex: self.shadow(class::SET_GLOBAL_BASE_VERTEX_INDEX),
            base_instance: self.shadow(class::SET_GLOBAL_BASE_INSTANCE_INDEX),
            draw_id: self
                .memory
                .read_u32(self.channel.root_addr + u64::from(root::DRAW_ID)),
            begin: self.channel.begin,
        });
    }

    /// Appends to the method log while it has room, else counts the method.
    fn log_method(&mut self, method: LoggedMethod) {
        match &mut self.method_log {
            Some(log) if log.len() < MAX_LOGGED_METHODS => log.push(method),
            Some(_) => self.unlogged_methods += 1,
            None => {}
        }
    }

    /// Counts a report write, and keeps it while `record_draws` is on.
    fn keep_report(&mut self, report: ReportWrite) {
        self.counters.reports += 1;
        if self.record_draws {
            self.reports.push(report);
        }
    }

    fn report(&mut self, word: u32) {
        let addr = (u64::from(self.shadow(class::SET_REPORT_SEMAPHORE_A) & 0xff) << 32)
            | u64::from(self.shadow(class::SET_REPORT_SEMAPHORE_B));
        let payload = self.shadow(class::SET_REPORT_SEMAPHORE_C);
        // A word that names no operation the class has writes nothing.
        let Some(d) = ReportSemaphoreD::unpack(word) else {
            return;
        };
        if d.operation == SemaphoreOperation::Acquire || d.operation == SemaphoreOperation::Trap {
            return;
        }
        self.clock += 1000;
        match d.structure_size {
            StructureSize::OneWord => {
                self.memory.write_u32(addr, payload);
                self.keep_report(ReportWrite {
                    addr,
                    value: u64::from(payload),
                    four_words: false,
                });
            }
            StructureSize::FourWords => {
                let value = match d.report {
                    Report::ZpassPixelCnt64 => self.channel.zpass_count,
                    Report::None => u64::from(payload),
                    // The model's pipeline statistics: counted draws.
                    _ => self.counters.hw_draws,
                };
                self.memory.write_u64(addr, value);
                self.memory.write_u64(addr + 8, self.clock);
                self.keep_report(ReportWrite {
                    addr,
                    value,
                    four_words: true,
                });
            }
        }
    }
}

impl Machine for GpuState {
    fn param(&mut self) -> Option<u32> {
        let p = self.channel.params.get(self.channel.params_loaded).copied();
        self.channel.params_loaded += usize::from(p.is_some());
        p
    }

    fn state(&mut self, mthd: u16) -> u32 {
        self.shadow(mthd)
    }

    fn mthd(&mut self, mthd: u16, data: u32) {
        self.counters.macro_methods += 1;
        self.method(mthd, data);
    }

    fn read_u32(&mut self, addr: u64) -> Option<u32> {
        Some(self.memory.read_u32(addr))
    }
}
