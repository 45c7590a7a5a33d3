//! The replay loop: stream the trace, rebuild objects, record command buffers, and at
//! each submit encode and execute them on the GPU model, one command at a time, timing
//! each and writing a row per draw and per submit.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::generic::{GenericCmd, GenericSetup};
use crate::layouts::Layouts;
use crate::shaders::{Shaders, StageInfo};
use crate::swapchain::{self, SwapchainInfo};
use driver::chipset::Chipset;
use driver::gpu::{ExecCost, Gpu, GpuError};
use driver::mme::Arch;
use driver::mme::{RunError, RunErrorKind, DEFAULT_BUDGET};
use driver::nvk::state::{StateCost, StateGroup};
use driver::nvk::{
    CommandEncoder, Device, DeviceError, DrawKind, IndirectArgs, QueryPool, Recorded,
};
use driver::spirv::specialize::SpecializationEntry;
use trace_format::direct::DirectField;
use trace_format::direct_records::{ChunkRecord, DirectRecord};
use trace_format::generated::results::{
    self, DrawPlace, DrawRow, MmeArch, RunInfoT, RunTotalsT, SubmitRow,
};
use trace_format::generated::trace::{Call, Record};
use trace_format::names;
use trace_format::results::{GroupCost, RowState};
use trace_format::{ReadOptions, ResultsWriter, SkippedCall, TraceReader, WriterOptions};

mod channels;
mod draw;
mod generic_memo;
mod places;
mod push_templates;
mod recordings;
mod records;
mod skips;
mod submit;
mod transfer;

use crate::clock;
use crate::commands::{self, BlitRegion, Cmd, DrawArgs, ImageOp, RenderingCmd, WorkArgs};
use crate::direct_commands::Fields;
use crate::execute;
use crate::generic;
use crate::generic::read::Params;
use crate::handles::HandleMap;
use crate::inspect::DrawInspection;
use crate::objects::{self, object_type, Objects, Pipeline, PipelinePart, RenderPass};
use crate::pass_barriers::PassBarriers;
use driver::nvk::image::{Image, ImageType, TargetFormat, ViewRange};
use driver::nvk::meta::{
    implied_resolve_mode, BlitPush, MetaBlit, MetaFragment, NumericType, SamplerDim,
    RESOLVE_SAMPLE_ZERO,
};
use driver::nvk::rendering::{
    ColorAttachment, DepthStencilAspects, DepthStencilAttachment, RenderArea, RENDERING_RESUMING,
};
use driver::nvk::RenderingInfo;
use places::{NewPlace, Places};

/// How to replay.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// The GPU the model drives: its classes and its MME.
    pub chipset: Chipset,
    /// Only submits in these frames (inclusive) are executed; objects are always rebuilt.
    pub frames: Option<(u64, u64)>,
    /// Replays of the whole trace; counts must agree across them.
    pub repeat: u32,
    /// Threads reading the trace ahead.
    pub read: ReadOptions,
    /// The most MME instructions one call may run ([`DEFAULT_MME_BUDGET`]); a draw's
    /// own budget follows the hardware draws it asks for, up to this.
    pub mme_budget: u64,
    /// Whether a macro call that repeats one seen before (the same macro, parameters and
    /// state read) replays what that run emitted instead of being simulated again; the
    /// results are the same either way ([`driver::gpu::Gpu::set_macro_memo`]).
    pub remember_macro_runs: bool,
}

/// The default ceiling on one call's MME instructions: about a quarter of a billion,
/// seconds of simulation, far past any draw a program issues short of billions of
/// instances.
pub const DEFAULT_MME_BUDGET: u64 = 1 << 28;

impl ReplayOptions {
    /// The MME the chipset runs.
    pub fn arch(&self) -> Arch {
        self.chipset.arch()
    }
}

/// The GPU a results file's run was replayed on: its chipset, or in files written
/// before the chipset was recorded the representative GPU of its MME.
pub fn run_chipset(run: &RunInfoT) -> Chipset {
    Chipset::find(run.chipset).unwrap_or_else(|| {
        Chipset::for_arch(match run.mme_arch {
            MmeArch::Fermi => Arch::Fermi,
            _ => Arch::Turing,
        })
    })
}

/// A draw's MME budget: this much for the call's own work...
const DRAW_BUDGET_BASE: u64 = 100_000;
/// ...and this much per hardware draw it asks for (instances × views × commands; the
/// instance loop runs about a dozen instructions a hardware draw).
const DRAW_BUDGET_PER_HW_DRAW: u64 = 256;

/// Calls the GPU model could not finish, by why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FailedCalls {
    /// The kind of failure (`past its instruction budget`, ...).
    pub reason: String,
    /// How many calls failed so.
    pub count: u64,
    /// The first one's sequence number (for a command, its submit's when it failed at
    /// the submit) and the whole message.
    pub first: (u64, String),
}

/// Why a replay stopped.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The trace (or writing the results) failed.
    #[error(transparent)]
    Format(#[from] trace_format::Error),
    /// The driver model could not be set up.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The GPU model stopped on a call.
    #[error("call #{seq}: {source}")]
    Gpu {
        /// The call's sequence number.
        seq: u64,
        /// Why.
        source: GpuError,
    },
    /// The trace has fewer draws than the one asked for.
    #[error("the trace replays fewer than {} draws", ordinal + 1)]
    NoSuchDraw {
        /// The draw's position among the replay's draws, from 0.
        ordinal: u64,
    },
    /// A repetition counted differently from the first.
    #[error("repetition {repetition} gave other counts than repetition 0: the replay is not deterministic")]
    CountsDiffer {
        /// The repetition.
        repetition: u32,
    },
}

/// A call the replay needed and the driver model could not execute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmodelled {
    /// The record's sequence number (for a command skipped when its command buffer
    /// was submitted, the submit's).
    pub seq: u64,
    /// The command, with the reason where there is one.
    pub name: String,
}

/// What a replay did.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Frames the program rendered: the trace's frame boundaries. Calls after the
    /// last one are teardown, not a frame.
    pub frames: u64,
    /// Submits after the last frame boundary (teardown), among `submits`.
    pub teardown_submits: u64,
    /// `vkCmd*` calls the trace records.
    pub recorded_commands: u64,
    /// Of those, the ones the driver model executed.
    pub executed_commands: u64,
    /// API draws executed (per repetition).
    pub draws: u64,
    /// Compute rows executed (per repetition): dispatches, and the transfers NVK
    /// records as dispatches.
    pub dispatches: u64,
    /// Clear rows executed (per repetition): vkCmdClearAttachments and the image
    /// clears.
    pub clears: u64,
    /// Pipeline barrier rows executed (per repetition).
    pub barriers: u64,
    /// Hardware draws started (per repetition).
    pub hw_draws: u64,
    /// MME instructions executed (per repetition).
    pub mme_instructions: u64,
    /// Of those, the ones the rows carry (what `report` and `compare` sum); the rest
    /// ran where no row follows: render-pass set-up, binds after the last draw.
    pub row_mme_instructions: u64,
    /// Submits executed (per repetition).
    pub submits: u64,
    /// Calls not executed: not needed, or needed but not modelled.
    pub skipped: Vec<SkippedCall>,
    /// The first call the replay needed and the model could not execute, for
    /// `replay --strict`.
    pub first_unmodelled: Option<Unmodelled>,
    /// Calls the GPU model could not finish (their rows say so), by why.
    pub failed: Vec<FailedCalls>,
    /// Wall time of the whole replay.
    pub wall: Duration,
}

/// GPU times of draws replayed on a device, by (pass over the frames, submit record,
/// draw record): one per execution of the draw in that submit, in order. Repetition
/// `r` of the model's replay takes pass `r`'s.
pub type GpuTimes = HashMap<(u32, u64, u64), Vec<u64>>;

/// Replays `trace` into the results file `out`. `progress` hears `(bytes read, file size)`.
/// On an error the rows written so far are finished into a readable file.
pub fn replay(
    trace: &Path,
    out: &Path,
    options: &ReplayOptions,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Summary, ReplayError> {
    replay_with_gpu_times(trace, out, options, None, progress)
}

/// [`replay`], with each draw row's GPU time from a device replay of the same trace.
pub fn replay_with_gpu_times(
    trace: &Path,
    out: &Path,
    options: &ReplayOptions,
    gpu_times: Option<&GpuTimes>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Summary, ReplayError> {
    let start = Instant::now();
    clock::start_measuring();
    let mut run = RunInfoT::default();
    run.tool_version = Some(env!("CARGO_PKG_VERSION").to_string());
    run.chipset = options.chipset.id;
    run.gpu = Some(options.chipset.describe());
    run.nvk = Some(driver::nvk::MODELLED_NVK.to_string());
    run.mme_arch = match options.arch() {
        Arch::Turing => MmeArch::Turing,
        Arch::Fermi => MmeArch::Fermi,
    };
    run.trace_path = Some(trace.display().to_string());
    run.trace_hash = Some(file_hash(trace)?);
    run.repetitions = options.repeat.max(1);
    run.frames_first = options.frames.map_or(0, |f| f.0);
    run.frames_last = options.frames.map_or(u64::MAX, |f| f.1);
    // zstd's fastest level: results compress well at any level, and the compressor
    // runs beside the replay for every row it writes.
    let writing = WriterOptions {
        compression_level: 1,
        ..WriterOptions::default()
    };
    let mut writer = ResultsWriter::create(out, run, &writing)?;
    let mut summary = Summary::default();
    let mut skipped = skips::Skips::default();
    let mut first_fingerprint = None;
    let mut outcome = Ok(());
    for repetition in 0..options.repeat.max(1) {
        let mut pass = Pass::new(options, repetition as u16)?;
        pass.gpu_times = gpu_times;
        let result = pass.run(trace, &mut writer, progress);
        skipped = pass.skipped;
        if let Err(e) = result {
            outcome = Err(e);
            break;
        }
        summary.frames = pass.frames;
        summary.teardown_submits = pass.teardown_submits;
        summary.recorded_commands = pass.recorded_commands;
        summary.executed_commands = pass.recorded_commands - pass.skipped_commands;
        summary.first_unmodelled = pass.first_unmodelled.take();
        summary.failed = pass.failed.values().cloned().collect();
        summary.draws = pass.draws - pass.dispatches - pass.clears - pass.barriers;
        summary.dispatches = pass.dispatches;
        summary.clears = pass.clears;
        summary.barriers = pass.barriers;
        summary.hw_draws = pass.hw_draws;
        summary.mme_instructions = pass.mme_instructions;
        summary.row_mme_instructions = pass.row_mme_instructions;
        summary.submits = pass.submits;
        match first_fingerprint {
            None => first_fingerprint = Some(pass.fingerprint),
            Some(f) if f != pass.fingerprint => {
                outcome = Err(ReplayError::CountsDiffer {
                    repetition: u32::from(pass.repetition),
                });
                break;
            }
            Some(_) => {}
        }
    }
    // By name, as a reader looks them up.
    let skipped: BTreeMap<String, (u64, bool)> = skipped.into_counts().collect();
    summary.skipped = skipped
        .into_iter()
        .map(|(name, (count, needed))| SkippedCall {
            name,
            count,
            needed,
        })
        .collect();
    let mut totals = RunTotalsT::default();
    totals.frames = summary.frames;
    totals.recorded_commands = summary.recorded_commands;
    totals.executed_commands = summary.executed_commands;
    writer.set_totals(totals);
    writer.finish(&summary.skipped)?;
    summary.wall = start.elapsed();
    outcome.map(|()| summary)
}

/// The trace file's digest, `crc32:CRC:LENGTH` (CRC-32 of its bytes, hex, and its length
/// in bytes): what tells two results files replayed from the same trace. Earlier
/// versions wrote `fnv1a64:…`; [`trace_format::results::same_trace`] does not compare
/// digests of different kinds.
fn file_hash(path: &Path) -> Result<String, trace_format::Error> {
    use std::io::Read;
    let io = |e| {
        trace_format::Error::new(
            path,
            trace_format::Location::File,
            trace_format::ErrorKind::Io(e),
        )
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut crc = crc32fast::Hasher::new();
    let mut len = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        crc.update(&buf[..n]);
        len += n as u64;
    }
    Ok(format!("crc32:{:08x}:{len}", crc.finalize()))
}

/// The repetition fingerprint: FNV's prime applied a word at a time over each draw's
/// counts.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    /// Mixes in a whole word at once: each step is a bijection of both the state and
    /// the word, so a single differing word always changes the result.
    fn u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(0x0100_0000_01b3).rotate_left(23);
    }
}

/// Where replay rows go.
pub(crate) trait RowSink {
    /// Takes a row, with the words the CPU wrote into GPU memory for it, why its
    /// call could not be finished where it could not, and where in the frame it ran.
    fn row(
        &mut self,
        row: DrawRow,
        state: RowState,
        memory_words: u32,
        error: Option<&str>,
        gpu_ns: u64,
        place: DrawPlace,
    ) -> Result<(), trace_format::Error>;
    /// Takes the name of a pass instance or label path rows will name.
    fn name(&mut self, place: NewPlace);
    /// Takes a submit row.
    fn submit(&mut self, row: SubmitRow) -> Result<(), trace_format::Error>;
}

impl RowSink for ResultsWriter {
    fn row(
        &mut self,
        row: DrawRow,
        state: RowState,
        memory_words: u32,
        error: Option<&str>,
        gpu_ns: u64,
        place: DrawPlace,
    ) -> Result<(), trace_format::Error> {
        self.push_placed_row(row, state, memory_words, error, gpu_ns, place)
    }

    fn name(&mut self, place: NewPlace) {
        match place {
            NewPlace::Pass { id, frame, name } => self.name_pass(id, frame, &name),
            NewPlace::Label { id, path } => self.name_label(id, &path),
        }
    }

    fn submit(&mut self, row: SubmitRow) -> Result<(), trace_format::Error> {
        self.push_submit(row)
    }
}

/// Drops every row: for passes that only watch.
pub(crate) struct Discard;

impl RowSink for Discard {
    fn row(
        &mut self,
        _: DrawRow,
        _: RowState,
        _: u32,
        _: Option<&str>,
        _: u64,
        _: DrawPlace,
    ) -> Result<(), trace_format::Error> {
        Ok(())
    }

    fn name(&mut self, _: NewPlace) {}

    fn submit(&mut self, _: SubmitRow) -> Result<(), trace_format::Error> {
        Ok(())
    }
}

/// A draw a pass is asked to capture the method stream of.
pub(crate) struct Watch {
    /// Its position among the pass's draw rows, from 0.
    pub ordinal: u64,
    /// What was captured, once the draw ran.
    pub found: Option<DrawInspection>,
}

/// One replay of the whole trace.
pub(crate) struct Pass<'o> {
    options: &'o ReplayOptions,
    repetition: u16,
    device: Device,
    gpu: Gpu,
    /// The push buffer of the command buffer executed last, emptied: the next one
    /// writes into its allocation rather than growing a new one from nothing.
    spare_push: driver::push::PushBuffer,
    objects: Objects,
    shaders: Shaders,
    layouts: Layouts,
    /// The channel each queue's submits run on.
    pub(crate) channels: channels::Channels,
    /// NVK's set-up of a queue's channel, run on each channel made.
    channel_setup: Vec<u32>,
    /// The set layouts' sizes for the last descriptor set bind's pipeline layout.
    bound_sets: crate::layouts::BoundSetsMemo,
    /// Each descriptor set's layout and dynamic buffers.
    descriptor_sets: crate::descriptor_sets::DescriptorSets,
    /// Descriptor update templates, and where their uniform buffers go.
    push_templates: push_templates::PushTemplates,
    recording: recordings::Recordings,
    /// Generically recorded commands taken in this pass, by name and parameters.
    generic_memo: generic_memo::GenericMemo,
    /// How each command buffer began (what a secondary inherits).
    begins: HandleMap<SecondaryBegin>,
    /// The rendering the secondary about to run resumes, right after it begins.
    resume: Option<RenderingInfo>,
    /// Calls skipped, by name (or name and reason): how many, and whether the model
    /// needed them.
    skipped: skips::Skips,
    /// What binds pushed since the last draw, for the next one.
    pending: Pending,
    /// Calls skipped so far, of every name.
    skips: u64,
    frame: u64,
    /// Frame boundaries seen.
    frames: u64,
    /// Submits since the last frame boundary: teardown, once the trace ends.
    teardown_submits: u64,
    recorded_commands: u64,
    skipped_commands: u64,
    submits: u64,
    /// The record being taken.
    current_seq: u64,
    /// GPU times from a device replay, and how many of each draw's were taken.
    gpu_times: Option<&'o GpuTimes>,
    gpu_taken: HashMap<(u32, u64, u64), usize>,
    /// The first call the replay needed and could not model.
    first_unmodelled: Option<Unmodelled>,
    /// Calls the GPU model could not finish, by kind of failure.
    failed: BTreeMap<&'static str, FailedCalls>,
    /// Draws (by sequence number) that ran past their budget: a later submit of their
    /// command buffer marks them failed again without running them, so a trace's work
    /// stays bounded by what it holds.
    runaway: HandleMap<String>,
    /// Rows written: draws and compute rows (the watch's ordinal).
    draws: u64,
    dispatches: u64,
    clears: u64,
    barriers: u64,
    hw_draws: u64,
    mme_instructions: u64,
    row_mme_instructions: u64,
    fingerprint: u64,
    /// The pass instance and label region rows run in.
    places: Places,
    /// A draw to capture the method stream of.
    pub watch: Option<Watch>,
    /// When set, every word the pass pushes is kept here, with each draw's place
    /// (`macroscope verify`).
    pub tape: Option<Tape>,
}

/// The words a pass pushed after the channel set-up, in the order they ran, each run
/// of them labelled with what pushed it (`macroscope verify`).
#[derive(Debug, Default)]
pub struct Tape {
    /// Every word pushed.
    pub words: Vec<u32>,
    /// Consecutive runs of `words`: where each ends, and what pushed it.
    pub spans: Vec<(usize, TapeLabel)>,
    /// Where the channel the words run on changed: the first word on the channel, and
    /// the channel's number (channels are numbered as the pass makes them, the one
    /// set up before the trace 0). Empty while every word ran on the first; a change
    /// no word ran after may be followed by another at the same word.
    pub channels: Vec<(usize, u32)>,
}

/// What pushed a run of a [`Tape`]'s words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TapeLabel {
    /// A state group: a bind command's words, or the group's part of a draw's flush.
    Group(StateGroup),
    /// A draw's own call (after its flush), or a dispatch, clear or barrier row's words.
    Row {
        /// The row's record.
        seq: u64,
        /// Its kind.
        kind: results::DrawKind,
    },
    /// Any other command (renderings, queries, copies, a command buffer's start).
    Other,
}

impl Tape {
    /// The words from now on run on channel `number` (`verify` collapses changes at
    /// one place into the last).
    fn channel(&mut self, number: u32) {
        self.channels.push((self.words.len(), number));
    }

    fn push(&mut self, words: &[u32], label: TapeLabel) {
        if words.is_empty() {
            return;
        }
        self.words.extend_from_slice(words);
        self.spans.push((self.words.len(), label));
    }

    /// Appends what one command pushed: a draw's flush split by group in
    /// [`StateGroup::FLUSH_ORDER`], then its call.
    fn command(&mut self, words: &[u32], bind: Option<StateGroup>, row: Option<&DrawShape>) {
        let Some(d) = row else {
            self.push(words, bind.map_or(TapeLabel::Other, TapeLabel::Group));
            return;
        };
        let mut at = 0usize;
        if names::is_draw_kind(d.kind) {
            for group in StateGroup::FLUSH_ORDER {
                let len = (d.state.dwords[group.index()] as usize).min(words.len() - at);
                self.push(&words[at..at + len], TapeLabel::Group(group));
                at += len;
            }
        }
        let label = TapeLabel::Row {
            seq: d.seq,
            kind: d.kind,
        };
        self.push(&words[at..], label);
    }
}

/// Totals of one submit.
#[derive(Default)]
struct SubmitTotals {
    draws: u32,
    hw_draws: u32,
    mme_instructions: u64,
    methods: u64,
    dwords: u64,
    queries: u32,
    zero_queries: u32,
    encode_ns: u64,
    mme_ns: u64,
    multiview_ns: u64,
    query_ns: u64,
}

/// The MME budget of `d` under `view_mask`: a base plus a share per hardware draw it
/// asks for (views × instances × commands; an indirect draw's first command's instances
/// stand for all), at most `ceiling`.
fn draw_budget(d: &DrawShape, view_mask: u32, ceiling: u64) -> u64 {
    let hw_draws = u64::from(view_mask.count_ones().max(1))
        * u64::from(d.instance_count.max(1))
        * u64::from(d.indirect_draw_count.max(1));
    DRAW_BUDGET_BASE
        .saturating_add(hw_draws.saturating_mul(DRAW_BUDGET_PER_HW_DRAW))
        .min(ceiling)
}

/// Whether rows of `kind` are compute work or transfers (dispatches, and the copies,
/// blits and resolves NVK records as dispatches or meta draws).
fn is_compute_kind(kind: results::DrawKind) -> bool {
    matches!(
        kind,
        results::DrawKind::Dispatch
            | results::DrawKind::DispatchIndirect
            | results::DrawKind::CopyBuffer
            | results::DrawKind::FillBuffer
            | results::DrawKind::CopyImage
            | results::DrawKind::CopyBufferToImage
            | results::DrawKind::CopyImageToBuffer
            | results::DrawKind::BlitImage
            | results::DrawKind::ResolveImage
    )
}

/// Whether rows of `kind` are clears.
fn is_clear_kind(kind: results::DrawKind) -> bool {
    matches!(
        kind,
        results::DrawKind::ClearAttachments
            | results::DrawKind::ClearColorImage
            | results::DrawKind::ClearDepthStencilImage
    )
}

/// `VK_SHADER_STAGE_ALL_GRAPHICS`.
const VK_SHADER_STAGE_ALL_GRAPHICS: u32 = 0x1f;

/// The render pass a command buffer is inside: Mesa's common render-pass code begins
/// one rendering per subpass.
struct ActivePass {
    pass: RenderPass,
    framebuffer: u64,
    subpass: usize,
    area: RenderArea,
    clear_values: Vec<[u32; 4]>,
    /// The attachments' layouts and the barriers Mesa's common code records.
    barriers: PassBarriers,
}

/// The calls a replay does not need: they change nothing the driver model executes.
fn not_needed(call: Call) -> bool {
    matches!(
        call,
        Call::CreateInstance
            | Call::DestroyInstance
            | Call::PhysicalDeviceInfo
            | Call::MapMemory
            | Call::UnmapMemory
            | Call::FlushMappedMemoryRanges
            | Call::CreateCommandPool
            | Call::EndCommandBuffer
            | Call::ResetCommandBuffer
            | Call::QueuePresent
            | Call::FrameChecksum
    )
}

/// The most parameter words a pre-Turing indirect draw's macro call gathers from
/// memory (64 MiB of them).
const MAX_INDIRECT_PARAM_WORDS: u64 = 1 << 24;

/// Why a call failed, as `replay` counts failures.
const BUDGET_EXCEEDED: &str = "past its instruction budget";

fn failure_reason(error: &GpuError) -> &'static str {
    match error {
        GpuError::Macro(RunError {
            kind: RunErrorKind::BudgetExceeded { .. },
            ..
        }) => BUDGET_EXCEEDED,
        GpuError::Macro(_) => "a macro failed",
        GpuError::Push(_) => "a malformed push buffer",
        GpuError::BadMacro { .. } => "a macro that is not loaded",
        GpuError::FreshMemory { .. } => "a macro writing past its memory bound",
    }
}

impl<'o> Pass<'o> {
    /// The next GPU time of draw `seq` in the submit being executed (0 without one).
    fn gpu_ns(&mut self, seq: u64) -> u64 {
        let Some(times) = self.gpu_times else {
            return 0;
        };
        let key = (u32::from(self.repetition), self.current_seq, seq);
        let taken = self.gpu_taken.entry(key).or_default();
        let ns = times
            .get(&key)
            .and_then(|t| t.get(*taken))
            .copied()
            .unwrap_or(0);
        *taken += 1;
        ns
    }

    pub(crate) fn new(options: &'o ReplayOptions, repetition: u16) -> Result<Self, ReplayError> {
        let device = Device::for_chipset(options.chipset);
        let mut gpu = Gpu::new(options.arch());
        gpu.set_macro_memo(options.remember_macro_runs);
        // Rows need the count of hardware draws, not a record of each.
        gpu.state.record_draws = false;
        let init = device.init_push()?;
        gpu.execute(init.words())
            .map_err(|source| ReplayError::Gpu { seq: 0, source })?;
        Ok(Pass {
            options,
            repetition,
            device,
            gpu,
            spare_push: driver::push::PushBuffer::new(),
            objects: Objects::default(),
            shaders: Shaders::default(),
            layouts: Layouts::default(),
            channels: channels::Channels::new(),
            channel_setup: init.words().to_vec(),
            bound_sets: Default::default(),
            descriptor_sets: Default::default(),
            push_templates: Default::default(),
            recording: recordings::Recordings::default(),
            generic_memo: generic_memo::GenericMemo::default(),
            begins: HandleMap::default(),
            resume: None,
            skipped: skips::Skips::default(),
            pending: Pending::default(),
            skips: 0,
            frame: 0,
            frames: 0,
            teardown_submits: 0,
            recorded_commands: 0,
            skipped_commands: 0,
            submits: 0,
            current_seq: 0,
            gpu_times: None,
            gpu_taken: HashMap::new(),
            first_unmodelled: None,
            failed: BTreeMap::new(),
            runaway: HandleMap::default(),
            draws: 0,
            dispatches: 0,
            clears: 0,
            barriers: 0,
            hw_draws: 0,
            mme_instructions: 0,
            row_mme_instructions: 0,
            fingerprint: Fnv::default().0,
            places: Places::default(),
            watch: None,
            tape: None,
        })
    }

    /// Records a call the GPU model could not finish; returns the message for its row.
    fn fail(&mut self, seq: u64, error: &GpuError) -> String {
        let message = error.to_string();
        self.count_failure(failure_reason(error), seq, &message);
        message
    }

    fn count_failure(&mut self, reason: &'static str, seq: u64, message: &str) {
        let entry = self.failed.entry(reason).or_insert_with(|| FailedCalls {
            reason: reason.to_string(),
            count: 0,
            first: (seq, message.to_string()),
        });
        entry.count += 1;
    }

    /// The pool a query command names, if queries `first..first + count` are in it;
    /// else the call is skipped with why.
    fn query_pool(&mut self, pool: u64, first: u32, count: u32, name: &str) -> Option<QueryPool> {
        match self.objects.query_pools.get(&pool).copied() {
            Some(p) if p.holds(first, count) => Some(p),
            Some(_) => {
                self.skip(&format!("{name} (queries past the pool)"), true);
                None
            }
            None => {
                self.skip(&format!("{name} (pool never created)"), true);
                None
            }
        }
    }

    /// The kinds of attachment pipeline `p` renders to: its
    /// `VkPipelineRenderingCreateInfo`'s formats, or its render pass's subpass.
    fn pipeline_attachments(
        &self,
        p: &trace_format::generated::trace::GraphicsPipeline<'_>,
    ) -> Option<objects::RenderAttachments> {
        if p.render_pass() == 0 {
            let r = p.rendering();
            return Some(objects::RenderAttachments {
                color: r.is_some_and(|r| {
                    r.color_attachment_formats()
                        .is_some_and(|f| f.iter().any(|f| f != 0))
                }),
                depth_stencil: r.is_some_and(|r| {
                    r.depth_attachment_format() != 0 || r.stencil_attachment_format() != 0
                }),
            });
        }
        let pass = self.objects.render_passes.get(&p.render_pass())?;
        let subpass = pass.subpasses.get(p.subpass() as usize)?;
        Some(objects::RenderAttachments {
            color: subpass
                .colors
                .iter()
                .any(|a| *a != objects::ATTACHMENT_UNUSED),
            depth_stencil: subpass.depth_stencil.is_some(),
        })
    }

    /// What of pipeline `p`'s creation its shaders' keys depend on, beside its stages
    /// (see [`crate::shaders::Shaders::pipeline_shaders`]).
    fn pipeline_compile(
        &self,
        p: &trace_format::generated::trace::GraphicsPipeline<'_>,
    ) -> crate::shaders::PipelineCompile {
        // VK_PIPELINE_CREATE_LIBRARY_BIT_KHR, and
        // VK_GRAPHICS_PIPELINE_LIBRARY_PRE_RASTERIZATION_SHADERS_BIT_EXT.
        let library = p.flags() & 0x800 != 0;
        let rasterization = !library || p.library_parts() & 0x2 != 0;
        let subpass = match p.render_pass() {
            0 => None,
            pass => self
                .objects
                .render_passes
                .get(&pass)
                .and_then(|rp| rp.subpasses.get(p.subpass() as usize)),
        };
        let view_mask = match subpass {
            None if p.render_pass() == 0 => p.rendering().map_or(0, |r| r.view_mask()),
            None => 0,
            Some(s) => s.view_mask,
        };
        // The render pass's flags count where the pipeline defines its fragment output
        // (VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_OUTPUT_INTERFACE_BIT_EXT), as
        // vk_graphics_pipeline_state_fill takes them (vk_get_pipeline_rendering_flags).
        let fragment_output = !library || p.library_parts() & 0x8 != 0;
        let pass_feedback_loop =
            fragment_output && subpass.is_some_and(|s| s.depth_stencil_feedback_loop);
        crate::shaders::PipelineCompile {
            pipeline: p.pipeline(),
            flags: p.flags(),
            libraries: p.libraries().into_iter().flatten().collect(),
            fragment_state: crate::shaders::FragmentState {
                // VK_CONSERVATIVE_RASTERIZATION_MODE_UNDERESTIMATE_EXT.
                underestimate: !rasterization
                    || p.state().is_some_and(|s| s.conservative_mode() == 2),
                // VK_PIPELINE_CREATE_DEPTH_STENCIL_ATTACHMENT_FEEDBACK_LOOP_BIT_EXT.
                depth_stencil_feedback_loop: p.flags() & 0x0400_0000 != 0 || pass_feedback_loop,
                multiview: view_mask != 0,
            },
        }
    }

    /// `pipeline` linked from the libraries its record names; a library the trace
    /// never created is counted as a skip (the first one's sequence number is kept),
    /// and the pipeline keeps what the others give.
    fn link_libraries(
        &mut self,
        pipeline: Pipeline,
        libraries: impl IntoIterator<Item = u64>,
    ) -> Pipeline {
        let mut found = Vec::new();
        for handle in libraries {
            match self.objects.pipelines.get(&handle) {
                Some(lib) => found.push(lib.clone()),
                // One reason for every such handle: a hostile trace's thousands of
                // made-up handles stay one entry.
                None => self.skip(
                    "vkCreateGraphicsPipelines (a pipeline library the trace never created)",
                    true,
                ),
            }
        }
        if found.is_empty() {
            return pipeline;
        }
        pipeline.link(&found)
    }

    fn skip(&mut self, name: &str, needed: bool) {
        self.skips += 1;
        if needed && self.first_unmodelled.is_none() {
            self.first_unmodelled = Some(Unmodelled {
                seq: self.current_seq,
                name: name.to_string(),
            });
        }
        self.skipped.count(name, needed);
    }

    pub(crate) fn run(
        &mut self,
        trace: &Path,
        sink: &mut dyn RowSink,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(), ReplayError> {
        // The draws, binds and generic calls that make up most of a frame are read
        // straight from their compact records, not laid out as tables first.
        let read = ReadOptions {
            direct: crate::direct_commands::DIRECT_CALLS,
            ..self.options.read
        };
        let reader = TraceReader::open_with(trace, &read)?;
        let total = reader.container().file_len();
        for chunk in reader {
            let chunk = chunk?;
            self.frame = chunk.header().first_frame;
            for entry in chunk.entries() {
                match entry {
                    ChunkRecord::Table(record) => self.record(&record, sink)?,
                    ChunkRecord::Direct(record) => self.record_direct(&record)?,
                }
                if self.watch.as_ref().is_some_and(|w| w.found.is_some()) {
                    return Ok(());
                }
            }
            progress(
                chunk.offset() + u64::from(chunk.header().compressed_len),
                total,
            );
        }
        Ok(())
    }

    /// Takes one record, counting the `vkCmd*` calls among them and those skipped.
    fn record(&mut self, record: &Record<'_>, sink: &mut dyn RowSink) -> Result<(), ReplayError> {
        let is_command = match record.call_as_vulkan_call() {
            Some(c) => names::generic_command(&c).is_some_and(names::is_recorded_command),
            None => names::is_recorded_command_call(record.call_type()),
        };
        self.counted(record.envelope().seq(), is_command, |pass| {
            pass.take(record, sink)
        })
    }

    /// Takes one record read straight from its compact form (a call of
    /// [`crate::direct_commands::DIRECT_CALLS`]), as [`Pass::record`] takes its table.
    #[inline(always)]
    fn record_direct(&mut self, record: &DirectRecord<'_>) -> Result<(), ReplayError> {
        let (seq, call) = (record.seq, record.call());
        match call {
            Call::VulkanCall => return self.record_generic(record),
            Call::MemoryContents => {
                let mut fields = record.field_cursor();
                let memory = fields.u64().unwrap_or(0);
                let offset = fields.u64().unwrap_or(0);
                let bytes = crate::direct_commands::bytes_of(fields.next_field());
                return self.counted(seq, false, |pass| {
                    pass.memory_contents(memory, offset, bytes.as_deref().unwrap_or(&[]));
                    Ok(())
                });
            }
            _ => {}
        }
        self.counted(seq, names::is_recorded_command_call(call), |pass| {
            match crate::direct_commands::from_direct(seq, call, record.field_cursor()) {
                Some((cb, cmd)) => pass.recording_of(cb).push(cmd),
                None => pass.skip(&names::call_name(call), true),
            }
            Ok(())
        })
    }

    /// Takes a compact `VulkanCall` record: its command's name (traces before format 5),
    /// its parameters as tables (never in a compact record), its packed parameters, its
    /// command's number (format 5 on). A command taken before with the same parameters
    /// does what it did then ([`generic_memo`]).
    fn record_generic(&mut self, record: &DirectRecord<'_>) -> Result<(), ReplayError> {
        let seq = record.seq;
        let mut fields = record.field_cursor();
        let stored_name = fields.str();
        let _tables = fields.next_field();
        let packed = fields.next_field();
        let name = stored_name
            .or_else(|| names::command_of_id(fields.u32().unwrap_or(0)))
            .unwrap_or("vkUnknownCommand");
        let is_command = names::is_recorded_command(name);
        if !is_command && !records::setup_is_read(name) {
            return self.counted(seq, false, |pass| {
                pass.skip(name, false);
                Ok(())
            });
        }
        let bytes = crate::direct_commands::bytes_of(packed).unwrap_or_default();
        let absent = matches!(packed, DirectField::Absent);
        let asked = (is_command && !absent && generic_memo::GenericMemo::may_keep(name))
            .then(|| self.generic_memo.ask(name, &bytes))
            .flatten();
        if let Some(asked) = asked {
            if let Some(taken) = self.generic_memo.find(asked, name, &bytes, seq) {
                return self.counted(seq, true, |pass| {
                    pass.take_again(name, taken);
                    Ok(())
                });
            }
        }
        let mut params = Params::new();
        let gathered = match absent {
            true => Ok(()),
            false => generic::read::gather_packed(&bytes, &mut params),
        };
        self.counted(seq, is_command, |pass| {
            match (asked, &gathered) {
                (Some(asked), Ok(())) => {
                    if let Some(taken) = pass.take_generic_command(seq, name, &params, true) {
                        pass.generic_memo.keep(asked, name, &bytes, taken);
                    }
                }
                _ => pass.take_generic(seq, name, gathered.as_ref().map(|()| &params[..])),
            }
            Ok(())
        })
    }

    /// Takes what the program wrote through a mapping (a `MemoryContents` record):
    /// `bytes` at `offset` of `memory`, into the model's memory and the buffers that
    /// mirror it.
    fn memory_contents(&mut self, memory: u64, offset: u64, bytes: &[u8]) {
        match self.objects.memory_addr(memory, offset) {
            Some(addr) => {
                self.gpu.state.memory.write_bytes(addr, bytes);
                self.write_mirrors(memory, offset, bytes);
            }
            None => self.skip("memory contents (memory never allocated)", true),
        }
    }

    /// vkFreeMemory: the allocation goes, and what it held in the model's memory reads
    /// as nothing again, its pages making the next ones: a program that allocates anew
    /// as it goes replays in the room of what it holds at once.
    fn free_memory(&mut self, memory: u64) {
        for (addr, len) in self.objects.free_memory(memory) {
            self.gpu.state.memory.release(addr, len);
        }
    }

    /// Writes what the program wrote at `offset` of `memory` to the buffers bound to
    /// memory of their own that follow that range, as a replay on NVK mirrors it.
    fn write_mirrors(&mut self, memory: u64, offset: u64, bytes: &[u8]) {
        let end = offset.saturating_add(bytes.len() as u64);
        for m in self.objects.mirrors(memory) {
            let (from, to) = (offset.max(m.offset), end.min(m.offset + m.len));
            if from < to {
                let part = &bytes[(from - offset) as usize..(to - offset) as usize];
                self.gpu
                    .state
                    .memory
                    .write_bytes(m.addr + (from - m.offset), part);
            }
        }
    }

    /// The commands recorded so far into command buffer `cb`.
    fn recording_of(&mut self, cb: u64) -> &mut Vec<Cmd> {
        self.recording.of(cb)
    }

    /// A submit (record `seq`) to `queue`: the GPU runs that queue's channel, and the
    /// tape notes where the channel changed.
    fn run_channel_of(&mut self, seq: u64, queue: u64) -> Result<(), ReplayError> {
        let switched = self
            .channels
            .submit_to(queue, &mut self.gpu, &self.channel_setup)
            .map_err(|source| ReplayError::Gpu { seq, source })?;
        if let (Some(number), Some(tape)) = (switched, &mut self.tape) {
            tape.channel(number);
        }
        Ok(())
    }

    /// Command buffer `cb` is freed: what it held and how it began go.
    fn free_command_buffer(&mut self, cb: u64) {
        self.recording.free(cb);
        self.begins.remove(&cb);
    }

    /// Runs `take` for the record of sequence number `seq`, counting it among the
    /// `vkCmd*` calls recorded when `is_command`, and among those skipped when it was.
    fn counted(
        &mut self,
        seq: u64,
        is_command: bool,
        take: impl FnOnce(&mut Self) -> Result<(), ReplayError>,
    ) -> Result<(), ReplayError> {
        let skips = self.skips;
        self.current_seq = seq;
        take(self)?;
        if is_command {
            self.recorded_commands += 1;
            if self.skips != skips {
                self.skipped_commands += 1;
            }
        }
        Ok(())
    }

    fn take(&mut self, record: &Record<'_>, sink: &mut dyn RowSink) -> Result<(), ReplayError> {
        let call = record.call_type();
        match call {
            Call::FrameBoundary => {
                self.frames += 1;
                // The records after it belong to the next frame (a chunk may hold
                // several).
                self.frame += 1;
                // Submits count as teardown until a frame boundary follows them.
                self.teardown_submits = 0;
                self.skip(&names::call_name(call), false);
            }
            Call::AllocateMemory => {
                if let Some(c) = record.call_as_allocate_memory() {
                    self.objects.allocate_memory(c.memory(), c.size());
                }
            }
            Call::FreeMemory => {
                if let Some(c) = record.call_as_free_memory() {
                    self.free_memory(c.memory());
                }
            }
            Call::DestroyObject => {
                if let Some(c) = record.call_as_destroy_object() {
                    if c.object_type() == object_type::DEVICE_MEMORY {
                        self.free_memory(c.handle());
                    }
                    self.objects.destroy(c.object_type(), c.handle());
                    match c.object_type() {
                        object_type::PIPELINE => self.shaders.destroy_pipeline(c.handle()),
                        // A pool's command buffers go with it.
                        object_type::COMMAND_POOL => {
                            for cb in self.recording.in_pool(c.handle()) {
                                self.free_command_buffer(cb);
                            }
                        }
                        // So do a descriptor pool's sets.
                        object_type::DESCRIPTOR_POOL => self.descriptor_sets.free_pool(c.handle()),
                        _ => {}
                    }
                }
            }
            Call::GetDeviceQueue => {
                if let Some(c) = record.call_as_get_device_queue() {
                    self.channels.queue_got(&c);
                }
                self.skip(&names::record_name(record).0, false);
            }
            Call::CreateDevice => {
                if let Some(c) = record.call_as_create_device() {
                    self.channels.device_made(record.envelope().seq(), &c);
                }
                self.skip(&names::record_name(record).0, false);
            }
            Call::DestroyDevice => {
                if let Some(c) = record.call_as_destroy_device() {
                    let seq = record.envelope().seq();
                    let fresh = self
                        .channels
                        .device_destroyed(c.device(), &mut self.gpu, &self.channel_setup)
                        .map_err(|source| ReplayError::Gpu { seq, source })?;
                    if let (Some(number), Some(tape)) = (fresh, &mut self.tape) {
                        tape.channel(number);
                    }
                }
                self.skip(&names::record_name(record).0, false);
            }
            Call::AllocateCommandBuffers => {
                if let Some(c) = record.call_as_allocate_command_buffers() {
                    let cbs = c.command_buffers().into_iter().flatten();
                    self.recording.allocated(c.command_pool(), cbs);
                }
                // Counted among the skipped set-up calls, as ever: it records no command.
                self.skip(&names::record_name(record).0, false);
            }
            Call::MemoryContents => {
                if let Some(c) = record.call_as_memory_contents() {
                    let bytes = c.data().map(|d| d.bytes()).unwrap_or(&[]);
                    self.memory_contents(c.memory(), c.offset(), bytes);
                }
            }
            Call::CreateBuffer => {
                if let Some(c) = record.call_as_create_buffer() {
                    let needs = self
                        .device
                        .buffer_memory_needs(c.size(), c.usage(), c.flags());
                    self.objects.create_buffer(c.buffer(), c.size(), needs);
                }
            }
            Call::BindBufferMemory => {
                if let Some(c) = record.call_as_bind_buffer_memory() {
                    let mirror = self.objects.bind_buffer(c.buffer(), c.memory(), c.offset());
                    if let Some((m, from)) =
                        mirror.zip(self.objects.memory_addr(c.memory(), c.offset()))
                    {
                        self.gpu.state.memory.copy(from, m.addr, m.len);
                    }
                }
            }
            Call::CreateRenderPass => {
                if let Some(c) = record.call_as_create_render_pass() {
                    self.objects
                        .render_passes
                        .insert(c.render_pass(), objects::render_pass(&c));
                }
            }
            Call::CreateImage => {
                if let Some(c) = record.call_as_create_image() {
                    let extent = c
                        .extent()
                        .map_or([1, 1, 1], |e| [e.width(), e.height(), e.depth()]);
                    let image_type = ImageType::of_vk(c.image_type());
                    let three_d = image_type == ImageType::D3;
                    let image = Image {
                        format: c.format(),
                        extent,
                        array_layers: c.array_layers(),
                        mip_levels: c.mip_levels(),
                        samples: c.samples(),
                        // VK_IMAGE_TILING_LINEAR.
                        linear: c.tiling() == 1,
                        image_type,
                        views_2d: Image::views_2d_for(c.flags(), c.usage(), three_d, c.format()),
                        addr: 0,
                    };
                    self.objects.create_image(c.image(), image);
                }
            }
            Call::BindImageMemory => {
                if let Some(c) = record.call_as_bind_image_memory() {
                    self.objects.bind_image(
                        c.image(),
                        c.memory(),
                        c.offset(),
                        self.options.chipset.eng3d,
                    );
                }
            }
            Call::CreateImageView => {
                if let Some(c) = record.call_as_create_image_view() {
                    let range = ViewRange {
                        format: c.format(),
                        base_mip_level: c.base_mip_level(),
                        base_array_layer: c.base_array_layer(),
                    };
                    self.objects
                        .create_image_view(c.image_view(), c.image(), range);
                }
            }
            Call::CreateFramebuffer => {
                if let Some(c) = record.call_as_create_framebuffer() {
                    let fb = objects::Framebuffer {
                        views: c
                            .attachments()
                            .map(|a| a.iter().collect())
                            .unwrap_or_default(),
                        width: c.width(),
                        height: c.height(),
                        layers: c.layers(),
                    };
                    self.objects.create_framebuffer(c.framebuffer(), fb);
                }
            }
            Call::CreatePipelineLayout => {
                if let Some(c) = record.call_as_create_pipeline_layout() {
                    let sets = c
                        .set_layouts()
                        .map(|v| v.iter().collect())
                        .unwrap_or_default();
                    let push_ranges = c
                        .push_constant_ranges()
                        .iter()
                        .flatten()
                        .map(|r| (r.stage_flags(), r.offset(), r.size()))
                        .collect();
                    self.layouts
                        .create_pipeline_layout(c.pipeline_layout(), sets, push_ranges);
                }
            }
            Call::CreateShaderModule => {
                if let Some(c) = record.call_as_create_shader_module() {
                    let code: Vec<u32> = c.code().map(|w| w.iter().collect()).unwrap_or_default();
                    self.shaders.create_module(c.shader_module(), &code);
                }
            }
            Call::CreateGraphicsPipelines => {
                if let Some(c) = record.call_as_create_graphics_pipelines() {
                    for p in c.pipelines().into_iter().flatten() {
                        let stages: Vec<StageInfo<'_>> = p
                            .stages()
                            .into_iter()
                            .flatten()
                            .map(|s| StageInfo {
                                stage: s.stage(),
                                module: s.module(),
                                entry: s.entry_point().unwrap_or("main"),
                                specialization: s
                                    .specialization_data()
                                    .map_or(&[][..], |d| d.bytes()),
                                specialization_map: s
                                    .specialization_entries()
                                    .into_iter()
                                    .flatten()
                                    .map(|e| SpecializationEntry {
                                        constant_id: e.constant_id(),
                                        offset: e.offset(),
                                        size: e.size(),
                                    })
                                    .collect(),
                            })
                            .collect();
                        let compile = self.pipeline_compile(&p);
                        let shaders = self.shaders.pipeline_shaders(
                            &stages,
                            &compile,
                            self.options.chipset,
                            p.layout(),
                            &self.layouts,
                        );
                        let pipeline = Pipeline {
                            shaders,
                            topology: driver::class::PrimitiveOp::of_vk(p.topology()),
                            vk_topology: p.topology(),
                            view_mask: p.rendering().map_or(0, |r| r.view_mask()),
                            rp_attachments: p.rendering().filter(|_| p.render_pass() == 0).map(
                                |r| {
                                    objects::attachment_mask(
                                        r.color_attachment_formats().into_iter().flatten(),
                                    )
                                },
                            ),
                            attachments: self.pipeline_attachments(&p),
                            dynamic_states: driver::nvk::state::DynamicStates::new(
                                p.dynamic_states().into_iter().flatten(),
                            ),
                            parts: PipelinePart::own(
                                p.library_parts(),
                                p.libraries().is_some_and(|l| !l.is_empty()),
                            ),
                            state: crate::pipeline_state::static_state(&p).map(Box::new),
                        };
                        let pipeline =
                            self.link_libraries(pipeline, p.libraries().into_iter().flatten());
                        self.objects.pipelines.insert(p.pipeline(), pipeline);
                    }
                }
            }
            Call::CreateQueryPool => {
                if let Some(c) = record.call_as_create_query_pool() {
                    self.objects.create_query_pool(
                        c.query_pool(),
                        c.query_type(),
                        c.query_count(),
                        c.pipeline_statistics(),
                    );
                }
            }
            Call::BeginCommandBuffer => {
                if let Some(c) = record.call_as_begin_command_buffer() {
                    // Recorded anew; the commands' room is kept for the next recording.
                    self.recording_of(c.command_buffer()).clear();
                    let begin = SecondaryBegin::of(&c);
                    self.begins.insert(c.command_buffer(), begin);
                }
            }
            Call::QueueSubmit => {
                if let Some(c) = record.call_as_queue_submit() {
                    let cbs: Vec<u64> = c
                        .submits()
                        .into_iter()
                        .flatten()
                        .flat_map(|s| s.command_buffers().into_iter().flatten())
                        .collect();
                    self.run_channel_of(record.envelope().seq(), c.queue())?;
                    self.submit(record.envelope().seq(), &cbs, sink)?;
                }
            }
            Call::VulkanCall => {
                if let Some(c) = record.call_as_vulkan_call() {
                    let name = names::generic_command(&c).unwrap_or("vkUnknownCommand");
                    let params = generic::read::params_of(&c);
                    self.take_generic(record.envelope().seq(), name, params.as_deref());
                }
            }
            _ if not_needed(call) => self.skip(&names::record_name(record).0, false),
            _ => match commands::from_record(record) {
                Some((cb, cmd)) => self.recording_of(cb).push(cmd),
                None => self.skip(&names::call_name(call), true),
            },
        }
        Ok(())
    }
}

/// What binds pushed since the last draw (NVK pushes them when they are recorded):
/// counted with the next draw's row.
/// What a command buffer's vkBeginCommandBuffer says a secondary inherits.
#[derive(Clone, Copy, Debug, Default)]
struct SecondaryBegin {
    /// `VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT`.
    continues_render_pass: bool,
    render_pass: u64,
    subpass: u32,
    framebuffer: u64,
    /// `VkCommandBufferInheritanceRenderingInfo::viewMask`.
    view_mask: u32,
}

impl SecondaryBegin {
    fn of(c: &trace_format::generated::trace::BeginCommandBuffer<'_>) -> Self {
        const RENDER_PASS_CONTINUE: u32 = 0x2;
        let inheritance = c.inheritance();
        SecondaryBegin {
            continues_render_pass: c.flags() & RENDER_PASS_CONTINUE != 0,
            render_pass: inheritance.map_or(0, |i| i.render_pass()),
            subpass: inheritance.map_or(0, |i| i.subpass()),
            framebuffer: inheritance.map_or(0, |i| i.framebuffer()),
            view_mask: inheritance.map_or(0, |i| i.rendering_view_mask()),
        }
    }
}

#[derive(Default)]
struct Pending {
    cost: StateCost,
    mme_instructions: u64,
}

/// A flush's cost as the results file holds it.
fn draw_state(cost: &StateCost) -> RowState {
    RowState::from_groups(std::array::from_fn(|i| GroupCost {
        methods: cost.methods[i],
        dwords: cost.dwords[i],
        mme: cost.mme_instructions[i],
    }))
}

/// Executes a draw's words group by group as the encoder laid them out
/// ([`StateGroup::FLUSH_ORDER`], then the draw's own call), and replaces each group's
/// method count in `state` with the methods it executed (pushed and emitted by the
/// macros it called) and records the MME instructions its macros ran. Returns the
/// whole cost and how it ended.
fn execute_draw(
    gpu: &mut Gpu,
    words: &[u32],
    state: &mut StateCost,
) -> (ExecCost, Result<(), GpuError>) {
    let mut total = ExecCost::default();
    let mut at = 0usize;
    for group in StateGroup::FLUSH_ORDER {
        let i = group.index();
        let len = state.dwords[i] as usize;
        let Some(segment) = words.get(at..at + len) else {
            break;
        };
        at += len;
        if segment.is_empty() {
            continue;
        }
        let (cost, outcome) = gpu.execute_partial(segment);
        total.add(cost);
        state.methods[i] = cost.methods as u32;
        state.mme_instructions[i] = cost.mme_instructions.min(u64::from(u32::MAX)) as u32;
        if outcome.is_err() {
            return (total, outcome);
        }
    }
    let (cost, outcome) = gpu.execute_partial(words.get(at..).unwrap_or(&[]));
    total.add(cost);
    (total, outcome)
}

/// What a draw row needs to know about the API draw.
struct DrawShape {
    seq: u64,
    kind: results::DrawKind,
    instance_count: u32,
    element_count: u32,
    indirect_draw_count: u32,
    /// What the state flush before it wrote, by group.
    state: StateCost,
    /// Words the CPU wrote into GPU memory for it.
    memory_words: u32,
}

fn results_kind(kind: DrawKind) -> results::DrawKind {
    match kind {
        DrawKind::Draw => results::DrawKind::Draw,
        DrawKind::DrawIndexed => results::DrawKind::DrawIndexed,
        DrawKind::DrawIndirect => results::DrawKind::DrawIndirect,
        DrawKind::DrawIndexedIndirect => results::DrawKind::DrawIndexedIndirect,
        DrawKind::DrawIndirectCount => results::DrawKind::DrawIndirectCount,
        DrawKind::DrawIndexedIndirectCount => results::DrawKind::DrawIndexedIndirectCount,
        DrawKind::DrawIndirectByteCount => results::DrawKind::DrawIndirectByteCount,
    }
}
