//! The replay loop: stream the trace, rebuild objects, record command buffers, and at
//! each submit encode and execute them on the GPU model, one command at a time, timing
//! each and writing a row per draw and per submit.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
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
use trace_format::generated::results::{self, DrawRow, MmeArch, RunInfoT, RunTotalsT, SubmitRow};
use trace_format::generated::trace::{Call, Record};
use trace_format::names;
use trace_format::results::{GroupCost, RowState};
use trace_format::{ReadOptions, ResultsWriter, SkippedCall, TraceReader, WriterOptions};

use crate::clock;
use crate::commands::{self, BlitRegion, Cmd, DrawArgs, ImageOp, RenderingCmd, WorkArgs};
use crate::execute;
use crate::generic;
use crate::handles::HandleMap;
use crate::inspect::DrawInspection;
use crate::objects::{self, Objects, Pipeline, PipelinePart, RenderPass};
use crate::pass_barriers::PassBarriers;
use driver::nvk::image::{Image, TargetFormat, ViewRange};
use driver::nvk::meta::{BlitPush, MetaBlit};
use driver::nvk::rendering::{
    ColorAttachment, DepthStencilAttachment, RenderArea, RENDERING_RESUMING,
};
use driver::nvk::RenderingInfo;

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
    let mut run = RunInfoT::default();
    run.tool_version = Some(env!("CARGO_PKG_VERSION").to_string());
    run.chipset = options.chipset.id;
    run.gpu = Some(options.chipset.describe());
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
    let mut skipped = BTreeMap::new();
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
    /// Takes a row, with the words the CPU wrote into GPU memory for it, and why its
    /// call could not be finished where it could not.
    fn row(
        &mut self,
        row: DrawRow,
        state: RowState,
        memory_words: u32,
        error: Option<&str>,
        gpu_ns: u64,
    ) -> Result<(), trace_format::Error>;
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
    ) -> Result<(), trace_format::Error> {
        self.push_timed_row(row, state, memory_words, error, gpu_ns)
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
    ) -> Result<(), trace_format::Error> {
        Ok(())
    }

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
    objects: Objects,
    shaders: Shaders,
    layouts: Layouts,
    /// Descriptor update templates' entries, by the trace's handle.
    templates: crate::device::templates::Templates,
    recording: HandleMap<Vec<Cmd>>,
    /// How each command buffer began (what a secondary inherits).
    begins: HandleMap<SecondaryBegin>,
    /// The rendering the secondary about to run resumes, right after it begins.
    resume: Option<RenderingInfo>,
    skipped: BTreeMap<String, (u64, bool)>,
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
    fingerprint: u64,
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
            | Call::CreateDevice
            | Call::DestroyDevice
            | Call::GetDeviceQueue
            | Call::MapMemory
            | Call::UnmapMemory
            | Call::FlushMappedMemoryRanges
            | Call::CreateCommandPool
            | Call::AllocateCommandBuffers
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
            objects: Objects::default(),
            shaders: Shaders::default(),
            layouts: Layouts::default(),
            templates: Default::default(),
            recording: HandleMap::default(),
            begins: HandleMap::default(),
            resume: None,
            skipped: BTreeMap::new(),
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
            fingerprint: Fnv::default().0,
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
        // Skipped calls come by the thousand: allocate the name only the first time.
        match self.skipped.get_mut(name) {
            Some(entry) => entry.0 += 1,
            None => {
                self.skipped.insert(name.to_string(), (1, needed));
            }
        }
    }

    pub(crate) fn run(
        &mut self,
        trace: &Path,
        sink: &mut dyn RowSink,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(), ReplayError> {
        let reader = TraceReader::open_with(trace, &self.options.read)?;
        let total = reader.container().file_len();
        for chunk in reader {
            let chunk = chunk?;
            self.frame = chunk.header().first_frame;
            for record in chunk.records() {
                self.record(&record, sink)?;
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
            Some(c) => c.command().is_some_and(names::is_recorded_command),
            None => names::is_recorded_command(&names::call_name(record.call_type())),
        };
        let skips = self.skips;
        self.current_seq = record.envelope().seq();
        self.take(record, sink)?;
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
                    self.objects.free_memory(c.memory());
                }
            }
            Call::DestroyObject => {
                if let Some(c) = record.call_as_destroy_object() {
                    self.objects.destroy(c.object_type(), c.handle());
                }
            }
            Call::MemoryContents => {
                if let Some(c) = record.call_as_memory_contents() {
                    match self.objects.memory_addr(c.memory(), c.offset()) {
                        Some(addr) => {
                            let bytes = c.data().map(|d| d.bytes()).unwrap_or(&[]);
                            self.gpu.state.memory.write_bytes(addr, bytes);
                        }
                        None => self.skip("memory contents (memory never allocated)", true),
                    }
                }
            }
            Call::CreateBuffer => {
                if let Some(c) = record.call_as_create_buffer() {
                    self.objects.create_buffer(c.buffer(), c.size());
                }
            }
            Call::BindBufferMemory => {
                if let Some(c) = record.call_as_bind_buffer_memory() {
                    self.objects.bind_buffer(c.buffer(), c.memory(), c.offset());
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
                    // VK_IMAGE_TILING_LINEAR, VK_IMAGE_TYPE_3D.
                    let three_d = c.image_type() == 2;
                    let image = Image {
                        format: c.format(),
                        extent,
                        array_layers: c.array_layers(),
                        mip_levels: c.mip_levels(),
                        samples: c.samples(),
                        linear: c.tiling() == 1,
                        three_d,
                        views_2d: Image::views_2d_for(c.flags(), c.usage(), three_d, c.format()),
                        addr: 0,
                    };
                    self.objects.create_image(c.image(), image);
                }
            }
            Call::BindImageMemory => {
                if let Some(c) = record.call_as_bind_image_memory() {
                    self.objects.bind_image(c.image(), c.memory(), c.offset());
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
                    self.layouts
                        .create_pipeline_layout(c.pipeline_layout(), sets);
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
                            })
                            .collect();
                        let shaders = self.shaders.pipeline_shaders(
                            &stages,
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
                            dynamic_states: p
                                .dynamic_states()
                                .map(|d| d.iter().collect())
                                .unwrap_or_default(),
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
                    self.recording
                        .entry(c.command_buffer())
                        .or_default()
                        .clear();
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
                    self.submit(record.envelope().seq(), &cbs, sink)?;
                }
            }
            Call::VulkanCall => {
                if let Some(c) = record.call_as_vulkan_call() {
                    self.take_generic(record.envelope().seq(), &c);
                }
            }
            _ if not_needed(call) => self.skip(&names::record_name(record).0, false),
            _ => match commands::from_record(record) {
                Some((cb, cmd)) => self.recording.entry(cb).or_default().push(cmd),
                None => self.skip(&names::call_name(call), true),
            },
        }
        Ok(())
    }

    /// A command recorded generically: decoded and recorded into its command buffer
    /// when the model executes it, else counted as skipped with the reason.
    fn take_generic(&mut self, seq: u64, call: &trace_format::generated::trace::VulkanCall<'_>) {
        let name = call.command().unwrap_or("vkUnknownCommand");
        if self.take_swapchain_call(name, call) {
            return;
        }
        if name == "vkAllocateDescriptorSets" {
            // The sets it made: the output array, 8 bytes a handle.
            let params: Vec<_> = call
                .params()
                .map(|p| p.iter().collect())
                .unwrap_or_default();
            let ids = params
                .get(2)
                .and_then(|p| p.bytes())
                .map_or(&[][..], |b| b.bytes());
            let sets: Vec<u64> = (0..ids.len() / 8)
                .map(|i| swapchain::handle_at(ids, i))
                .collect();
            self.objects.allocate_descriptor_sets(&sets);
            return self.skip(name, false);
        }
        if name == "vkCreateDescriptorUpdateTemplate"
            || name == "vkCreateDescriptorUpdateTemplateKHR"
        {
            let params: Vec<_> = call
                .params()
                .map(|p| p.iter().collect())
                .unwrap_or_default();
            if let Some((id, entries)) = crate::device::templates::created(&params) {
                self.templates.insert(id, entries);
            }
            return self.skip(name, false);
        }
        match generic::decode_setup(call) {
            Ok(Some(GenericSetup::CreateDescriptorSetLayout(c))) => {
                return self.layouts.create_set_layout(&c);
            }
            Ok(None) => {}
            Err(e) => return self.skip(&format!("{name} (does not decode: {e})"), false),
        }
        match generic::decode(call) {
            Ok(Some(cmd)) => {
                let cb = cmd.command_buffer();
                let ubos = match &cmd {
                    GenericCmd::CmdPushDescriptorSetKHR(c) if c.pipeline_bind_point == 0 => {
                        Some(Cmd::PushUbos {
                            set: c.set,
                            ubos: self.written_ubos(c),
                        })
                    }
                    GenericCmd::CmdPushDescriptorSetWithTemplateKHR(c) => Some(Cmd::PushUbos {
                        set: c.set,
                        ubos: {
                            // The update's data as recorded (sparse: each run at its
                            // offset); the decoded command holds it only whole.
                            let data = call
                                .params()
                                .and_then(|p| p.iter().nth(4))
                                .and_then(|p| crate::device::templates::recorded_data(p).ok())
                                .unwrap_or_default();
                            self.template_ubos(c, &data)
                        },
                    }),
                    _ => None,
                };
                let recorded = if let Some(args) = WorkArgs::of_generic(&cmd) {
                    Cmd::Work { seq, args }
                } else if let Some(typed) = commands::typed_of_generic(&cmd) {
                    typed
                } else if execute::is_modelled(&cmd) {
                    Cmd::Generic(Box::new(cmd))
                } else {
                    // A command buffer command the model does not execute yet.
                    return self.skip(name, true);
                };
                let list = self.recording.entry(cb).or_default();
                list.push(recorded);
                list.extend(ubos);
            }
            // No decoder: not a command buffer command (setup, sync, queries of the
            // device), which changes nothing the model executes.
            Ok(None) => self.skip(name, names::is_recorded_command(name)),
            Err(e) => self.skip(&format!("{name} (does not decode: {e})"), true),
        }
    }

    /// The uniform buffers a push of descriptor writes names (vkCmdPushDescriptorSetKHR):
    /// each descriptor's byte offset in the set, the buffer's address and its range, as
    /// a template push's are found.
    fn written_ubos(
        &self,
        c: &crate::generated::decode::CmdPushDescriptorSetKHR,
    ) -> Vec<(u32, u64, u32)> {
        const UNIFORM_BUFFER: u32 = 6;
        let Some(layout) = self.layouts.set(c.layout, c.set) else {
            return Vec::new();
        };
        let align = self.device.min_cbuf_alignment();
        let mut ubos = Vec::new();
        for (w, nested) in c.descriptor_writes.iter().zip(&c.descriptor_writes_nested) {
            if w.descriptor_type != UNIFORM_BUFFER {
                continue;
            }
            let Some((place, stride)) = layout.binding_place(w.dst_binding, align) else {
                continue;
            };
            for (i, info) in nested.p_buffer_info.iter().enumerate().take(64) {
                let element = w.dst_array_element.saturating_add(i as u32);
                let desc = place.saturating_add(stride.saturating_mul(element));
                ubos.push(self.ubo(desc, info.buffer, info.offset, info.range));
            }
        }
        ubos
    }

    /// One uniform buffer descriptor: its byte offset in the set, and the buffer's
    /// address and range from `offset` (`VK_WHOLE_SIZE`: to the buffer's end); a
    /// buffer never bound names nothing (address and range 0).
    fn ubo(&self, desc: u32, buffer: u64, offset: u64, range: u64) -> (u32, u64, u32) {
        let (addr, rest) = self.objects.buffer_range(buffer, offset);
        let range = if range == u64::MAX {
            rest
        } else {
            range.min(u64::from(u32::MAX)) as u32
        };
        (desc, addr, if addr == 0 { 0 } else { range })
    }

    /// The uniform buffers a template push names: each descriptor's byte offset in the
    /// set (its binding's place in the set layout), the buffer's address from the
    /// descriptor's `VkDescriptorBufferInfo` in the update's data, and its range
    /// (`VK_WHOLE_SIZE`: to the buffer's end). Mirrors what nvk_push_descriptor_set
    /// writes for them (write_ubo_desc).
    fn template_ubos(
        &self,
        c: &crate::generated::decode::CmdPushDescriptorSetWithTemplateKHR,
        data: &[u8],
    ) -> Vec<(u32, u64, u32)> {
        const UNIFORM_BUFFER: i32 = 6;
        let (Some(entries), Some(layout)) = (
            self.templates.get(&c.descriptor_update_template),
            self.layouts.set(c.layout, c.set),
        ) else {
            return Vec::new();
        };
        let align = self.device.min_cbuf_alignment();
        let long = |at: usize| {
            data.get(at..at + 8)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_le_bytes)
        };
        let mut ubos = Vec::new();
        for e in entries.iter().filter(|e| e.ty.as_raw() == UNIFORM_BUFFER) {
            let Some((place, stride)) = layout.binding_place(e.binding, align) else {
                continue;
            };
            for i in 0..e.count.min(64) {
                let at = e.offset.saturating_add(e.stride.saturating_mul(i as usize));
                let (Some(buffer), Some(offset), Some(range)) =
                    (long(at), long(at + 8), long(at + 16))
                else {
                    break;
                };
                let element = e.array_element.saturating_add(i);
                let desc = place.saturating_add(stride.saturating_mul(element));
                ubos.push(self.ubo(desc, buffer, offset, range));
            }
        }
        ubos
    }

    /// The swapchain calls, which say what images a program renders to: true when
    /// `call` was one.
    fn take_swapchain_call(
        &mut self,
        name: &str,
        call: &trace_format::generated::trace::VulkanCall<'_>,
    ) -> bool {
        let params: Vec<_> = call
            .params()
            .map(|p| p.iter().collect())
            .unwrap_or_default();
        let value = |i: usize| params.get(i).map_or(0, |p| p.value());
        let bytes = |i: usize| {
            params
                .get(i)
                .and_then(|p| p.bytes())
                .map_or(&[][..], |b| b.bytes())
        };
        match name {
            "vkCreateSwapchainKHR" => match SwapchainInfo::of_bytes(bytes(1)) {
                Some(info) => {
                    let handle = swapchain::handle_at(bytes(3), 0);
                    self.objects.create_swapchain(handle, info);
                }
                None => self.skip(
                    "vkCreateSwapchainKHR (a short VkSwapchainCreateInfoKHR)",
                    false,
                ),
            },
            "vkGetSwapchainImagesKHR" => {
                let ids = bytes(3);
                let images: Vec<u64> = (0..ids.len() / 8)
                    .map(|i| swapchain::handle_at(ids, i))
                    .collect();
                self.objects.swapchain_images(value(1), &images);
            }
            "vkDestroySwapchainKHR" => self.objects.destroy_swapchain(value(1)),
            "vkCreateComputePipelines" => {
                // VkComputePipelineCreateInfo is 96 bytes; its stage's module at 48.
                const INFO_BYTES: usize = 96;
                const MODULE_AT: usize = 48;
                let (infos, handles) = (bytes(3), bytes(5));
                for (i, info) in infos.chunks_exact(INFO_BYTES).enumerate() {
                    let module = swapchain::handle_at(&info[MODULE_AT..MODULE_AT + 8], 0);
                    let size = self.shaders.workgroup_size(module).unwrap_or([0; 3]);
                    let invocations = size.iter().fold(1u32, |n, d| n.saturating_mul(*d));
                    self.objects
                        .compute_pipelines
                        .insert(swapchain::handle_at(handles, i), invocations);
                }
            }
            _ => return false,
        }
        true
    }

    fn submit(
        &mut self,
        seq: u64,
        command_buffers: &[u64],
        sink: &mut dyn RowSink,
    ) -> Result<(), ReplayError> {
        if self
            .options
            .frames
            .is_some_and(|(first, last)| !(first..=last).contains(&self.frame))
        {
            return Ok(());
        }
        let submit = self.submits as u32;
        let mut totals = SubmitTotals::default();
        let mut listed = HashSet::new();
        for cb in command_buffers {
            if !listed.insert(*cb) {
                // Legal only with SIMULTANEOUS_USE, and rare: run once, so that a
                // submit's work stays bounded by the command buffers it holds.
                self.skip(
                    "vkQueueSubmit (a command buffer listed again: run once)",
                    true,
                );
                continue;
            }
            // Taken out while it runs, then put back: it may be submitted again.
            let cmds = self.recording.remove(cb).unwrap_or_default();
            let device = self.device.clone();
            let mut enc = CommandEncoder::new(&device);
            // Binds after a command buffer's last draw belong to no draw.
            self.pending = Pending::default();
            let result = self.execute(&mut enc, &cmds, submit, &mut totals, sink, 0);
            self.recording.insert(*cb, cmds);
            result?;
        }
        self.submits += 1;
        self.teardown_submits += 1;
        let row = SubmitRow::new(
            seq,
            self.frame as u32,
            submit,
            self.repetition,
            totals.draws,
            totals.hw_draws,
            totals.mme_instructions,
            totals.methods,
            totals.dwords,
            totals.queries,
            totals.zero_queries,
            totals.encode_ns,
            totals.mme_ns,
            totals.multiview_ns,
            totals.query_ns,
        );
        sink.submit(row)?;
        Ok(())
    }

    fn execute(
        &mut self,
        enc: &mut CommandEncoder<'_>,
        cmds: &[Cmd],
        submit: u32,
        totals: &mut SubmitTotals,
        sink: &mut dyn RowSink,
        depth: u32,
    ) -> Result<(), ReplayError> {
        enc.begin_command_buffer(depth == 0);
        if let Some(info) = self.resume.take() {
            enc.begin_rendering(&info);
        }
        self.execute_untimed(enc, totals)?;
        let mut pipeline = 0u64;
        let mut active_pass: Option<ActivePass> = None;
        for cmd in cmds {
            // Only draws' and queries' host times are reported; the rest go untimed.
            let timed = matches!(
                cmd,
                Cmd::Draw { .. }
                    | Cmd::Work { .. }
                    | Cmd::EndQuery { .. }
                    | Cmd::WriteTimestamp { .. }
            );
            let t0 = timed.then(clock::now);
            let mut recorded = None;
            let mut draw: Option<DrawShape> = None;
            match cmd {
                Cmd::BeginRenderPass {
                    render_pass,
                    framebuffer,
                    area,
                    clear_values,
                } => {
                    let pass = self
                        .objects
                        .render_passes
                        .get(render_pass)
                        .cloned()
                        .unwrap_or_default();
                    let info =
                        self.objects
                            .subpass_rendering(&pass, *framebuffer, 0, *area, clear_values);
                    let whole = self.objects.covers_views(*framebuffer, area);
                    let mut barriers = PassBarriers::begin(&pass, &whole);
                    if let Some(b) = barriers.begin_subpass(&pass, 0) {
                        enc.pipeline_barrier(&b);
                    }
                    enc.begin_rendering(&info);
                    active_pass = Some(ActivePass {
                        pass,
                        framebuffer: *framebuffer,
                        subpass: 0,
                        area: *area,
                        clear_values: clear_values.clone(),
                        barriers,
                    });
                }
                Cmd::NextSubpass => {
                    enc.end_rendering();
                    if let Some(a) = &mut active_pass {
                        if let Some(b) = a.barriers.end_subpass(&a.pass, a.subpass) {
                            enc.pipeline_barrier(&b);
                        }
                        a.subpass += 1;
                        if let Some(b) = a.barriers.begin_subpass(&a.pass, a.subpass) {
                            enc.pipeline_barrier(&b);
                        }
                        let info = self.objects.subpass_rendering(
                            &a.pass,
                            a.framebuffer,
                            a.subpass,
                            a.area,
                            &a.clear_values,
                        );
                        enc.begin_rendering(&info);
                    }
                }
                Cmd::EndRenderPass => {
                    enc.end_rendering();
                    if let Some(mut a) = active_pass.take() {
                        if let Some(b) = a.barriers.end_subpass(&a.pass, a.subpass) {
                            enc.pipeline_barrier(&b);
                        }
                        if let Some(b) = a.barriers.end(&a.pass) {
                            enc.pipeline_barrier(&b);
                        }
                    }
                }
                Cmd::BeginRendering(r) => {
                    let info = self.rendering_info(r);
                    enc.begin_rendering(&info);
                }
                Cmd::EndRendering => {
                    enc.end_rendering();
                }
                Cmd::BeginConditionalRendering {
                    buffer,
                    offset,
                    inverted,
                } => {
                    let addr = self.objects.buffer_addr(*buffer, *offset).unwrap_or(0);
                    let scratch = self.objects.scratch();
                    enc.begin_conditional_rendering(addr, *inverted, scratch);
                }
                Cmd::EndConditionalRendering => {
                    enc.end_conditional_rendering();
                }
                Cmd::BindPipeline {
                    bind_point,
                    pipeline: p,
                } if *bind_point != 0 => {
                    // 0 where the shader's workgroup size is unknown: the encoder
                    // takes a stand-in.
                    let size = self.objects.compute_pipelines.get(p).copied();
                    enc.bind_compute_pipeline(size.unwrap_or(0));
                }
                Cmd::BindPipeline { pipeline: p, .. } => {
                    pipeline = *p;
                    if let Some(bound) = self.objects.pipelines.get(p) {
                        enc.bind_graphics_shaders(&bound.shaders);
                        let state = enc.state_mut();
                        match &bound.state {
                            Some(values) => state.bind_pipeline_with_state(
                                *p,
                                &bound.dynamic_states,
                                values,
                                bound.groups(),
                            ),
                            None => {
                                state.bind_pipeline(*p, &bound.dynamic_states, bound.groups());
                                state.set_topology(bound.vk_topology);
                            }
                        }
                        if let Some(mask) = bound.rp_attachments {
                            state.set_rp_attachments(mask);
                        }
                    }
                }
                Cmd::PushConstants {
                    stages,
                    offset,
                    data,
                } => {
                    // Compute's go to the compute root table, uploaded at dispatch.
                    if stages & VK_SHADER_STAGE_ALL_GRAPHICS != 0 {
                        enc.push_constants(*offset, data);
                    }
                }
                Cmd::BindVertexBuffers {
                    first_binding,
                    buffers,
                    offsets,
                } => {
                    let ranges: Vec<(u64, u32)> = buffers
                        .iter()
                        .zip(offsets)
                        .map(|(b, o)| self.objects.buffer_range(*b, *o))
                        .collect();
                    enc.bind_vertex_buffers(*first_binding, &ranges);
                }
                Cmd::BindIndexBuffer {
                    buffer,
                    offset,
                    index_type,
                } => {
                    let (addr, size) = self.objects.buffer_range(*buffer, *offset);
                    enc.bind_index_buffer(addr, size, *index_type);
                }
                Cmd::BindDescriptorSets {
                    bind_point,
                    layout,
                    first_set,
                    sets,
                    dynamic_offsets,
                } => {
                    // Compute descriptors live in the compute root table, uploaded
                    // whole at each dispatch: binding them pushes nothing.
                    if *bind_point == 0 {
                        let counts = self
                            .layouts
                            .dynamic_buffers(*layout, *first_set, sets.len());
                        let bytes = self.layouts.descriptor_bytes(
                            *layout,
                            *first_set,
                            sets.len(),
                            self.device.min_cbuf_alignment(),
                        );
                        let sets: smallvec::SmallVec<[u64; 4]> = sets
                            .iter()
                            .map(|s| self.objects.descriptor_set_address(*s))
                            .collect();
                        enc.bind_descriptor_sets(
                            *first_set,
                            &sets,
                            dynamic_offsets,
                            counts.as_deref(),
                            bytes.as_deref(),
                        );
                    }
                }
                Cmd::SetTopology { topology } => {
                    enc.state_mut().set_topology(*topology);
                }
                Cmd::PushUbos { set, ubos } => {
                    enc.push_descriptor_ubos(*set, ubos);
                }
                Cmd::Generic(cmd) => {
                    execute::execute(enc, cmd, &mut self.objects, &self.gpu.state.memory)
                }
                Cmd::UpdateBuffer {
                    buffer,
                    offset,
                    data,
                } => match self.objects.buffer_addr(*buffer, *offset) {
                    Some(addr) => {
                        enc.update_buffer(addr, data.len().min(u32::MAX as usize) as u32);
                        // The copy's effect, for later indirect reads.
                        self.gpu.state.memory.write_bytes(addr, data);
                    }
                    None => self.skip("vkCmdUpdateBuffer (buffer never bound)", true),
                },
                Cmd::Draw { seq, kind, args } => draw = self.encode_draw(enc, *seq, *kind, args),
                Cmd::Work { seq, args } => draw = Some(self.encode_work(enc, *seq, args)),
                Cmd::BeginQuery { pool, query, index } => {
                    if let Some(p) = self.query_pool(*pool, *query, 1, "vkCmdBeginQuery") {
                        enc.begin_query_indexed(&p, *query, *index);
                    }
                }
                Cmd::EndQuery { pool, query, index } => {
                    if let Some(p) = self.query_pool(*pool, *query, 1, "vkCmdEndQuery") {
                        recorded = Some(enc.end_query_indexed(&p, *query, *index));
                    }
                }
                Cmd::WriteTimestamp {
                    pool,
                    query,
                    stages,
                } => {
                    if let Some(p) = self.query_pool(*pool, *query, 1, "vkCmdWriteTimestamp") {
                        recorded = Some(enc.write_timestamp(&p, *query, *stages));
                    }
                }
                Cmd::ResetQueryPool { pool, first, count } => {
                    if let Some(p) = self.query_pool(*pool, *first, *count, "vkCmdResetQueryPool") {
                        enc.reset_query_pool(&p, *first, *count);
                    }
                }
                Cmd::CopyQueryPoolResults {
                    pool,
                    first,
                    count,
                    flags,
                    ..
                } => {
                    if let Some(p) =
                        self.query_pool(*pool, *first, *count, "vkCmdCopyQueryPoolResults")
                    {
                        enc.copy_query_pool_results(&p, *first, *count, *flags);
                    }
                }
                Cmd::ExecuteCommands { command_buffers } => {
                    // NVK encodes a secondary on its own (its state starts unknown)
                    // and chains its pushes; the primary's state is unknown after.
                    if depth < 4 {
                        let (view_mask, colors) = enc.rendering();
                        for cb in command_buffers {
                            let secondary = self.recording.remove(cb).unwrap_or_default();
                            let device = self.device.clone();
                            let mut sec = CommandEncoder::new(&device);
                            self.begin_secondary(&mut sec, *cb, view_mask, colors);
                            let result =
                                self.execute(&mut sec, &secondary, submit, totals, sink, depth + 1);
                            self.recording.insert(*cb, secondary);
                            result?;
                        }
                        enc.invalidate_state();
                    }
                }
            }
            if draw.is_none() && recorded.is_none() && enc.push_is_empty() {
                // A bind or state change that pushed nothing (NVK defers most to the
                // next draw's flush): nothing to execute, count or log.
                continue;
            }
            let t1 = t0.map(|_| clock::now());
            let words = enc.take_push();
            let seq = draw.as_ref().map_or(0, |d: &DrawShape| d.seq);
            // The watched draw's stream begins with the root table updates before it.
            let next_is_watched = self
                .watch
                .as_ref()
                .is_some_and(|w| w.ordinal == self.draws && w.found.is_none());
            let logged = next_is_watched && (draw.is_some() || cmd.bind_group().is_some());
            let paused = if logged {
                self.gpu.state.method_log.get_or_insert_with(Vec::new);
                None
            } else {
                self.gpu.state.method_log.take()
            };
            let budget = match &draw {
                Some(d) => draw_budget(d, enc.view_mask(), self.options.mme_budget),
                None => self.options.mme_budget.min(DEFAULT_BUDGET),
            };
            self.gpu.set_macro_budget(budget);
            // Most replays have no runaway draw: no lookup per command then.
            let runaway = if seq == 0 || self.runaway.is_empty() {
                None
            } else {
                self.runaway.get(&seq)
            };
            let (cost, failure) = match runaway {
                Some(message) => {
                    let message = message.clone();
                    self.count_failure(BUDGET_EXCEEDED, seq, &message);
                    (ExecCost::default(), Some(message))
                }
                _ => {
                    let (cost, outcome) = match &mut draw {
                        // A draw's groups run one by one, so that what the macros a
                        // group calls emit counts in that group.
                        Some(d) if names::is_draw_kind(d.kind) => {
                            execute_draw(&mut self.gpu, words.words(), &mut d.state)
                        }
                        _ => self.gpu.execute_partial(words.words()),
                    };
                    let failure = outcome.err().map(|e| {
                        let at = if seq != 0 { seq } else { self.current_seq };
                        let message = self.fail(at, &e);
                        if seq != 0 && failure_reason(&e) == BUDGET_EXCEEDED {
                            self.runaway.insert(seq, message.clone());
                        }
                        message
                    });
                    (cost, failure)
                }
            };
            if paused.is_some() {
                self.gpu.state.method_log = paused;
            }
            if let Some(tape) = &mut self.tape {
                tape.command(words.words(), cmd.bind_group(), draw.as_ref());
            }
            if let Some(group) = cmd.bind_group() {
                self.pending
                    .cost
                    .add_group(group, cost.methods as u32, words.len() as u32);
                self.pending.cost.add_mme(group, cost.mme_instructions);
                self.pending.mme_instructions += cost.mme_instructions;
            }
            let pending = if draw.is_some() {
                std::mem::take(&mut self.pending)
            } else {
                Pending::default()
            };
            let pending_methods = u64::from(pending.cost.total_methods());
            let pending_dwords = u64::from(pending.cost.total_dwords());
            // The row carries the binds and the flush together.
            let row_state = draw.as_ref().map(|d| {
                let mut state = d.state;
                for (i, group) in StateGroup::ALL.iter().enumerate() {
                    state.add_group(*group, pending.cost.methods[i], pending.cost.dwords[i]);
                    state.add_mme(*group, pending.cost.mme_instructions[i].into());
                }
                state
            });
            let mme_instructions = cost.mme_instructions + pending.mme_instructions;
            if logged && draw.is_some() {
                let methods = self.gpu.state.method_log.take().unwrap_or_default();
                if let Some(w) = &mut self.watch {
                    w.found = Some(DrawInspection {
                        seq,
                        binds: pending.cost,
                        state: draw.as_ref().map(|d| d.state).unwrap_or_default(),
                        view_mask: enc.view_mask(),
                        dwords: words.len() as u64 + pending_dwords,
                        mme_instructions,
                        methods,
                    });
                }
            }
            let (encode_ns, exec_ns) = match (t0, t1) {
                (Some(t0), Some(t1)) => (
                    clock::ns_between(t0, t1),
                    clock::ns_between(t1, clock::now()),
                ),
                _ => (0, 0),
            };
            totals.methods += cost.methods;
            totals.dwords += words.len() as u64;
            totals.mme_instructions += cost.mme_instructions;
            self.mme_instructions += cost.mme_instructions;
            if let Some(r) = recorded {
                totals.queries += r.queries;
                totals.zero_queries += r.zero_queries;
                totals.query_ns += encode_ns + exec_ns;
            }
            if let Some(d) = draw {
                let view_mask = enc.view_mask();
                let multiview_ns = self.gpu.last_macro.map_or(0, |m| m.view_loop_ns);
                let row = DrawRow::new(
                    d.seq,
                    pipeline,
                    self.frame as u32,
                    submit,
                    self.repetition,
                    d.kind,
                    view_mask.count_ones() as u8,
                    view_mask,
                    d.instance_count,
                    d.element_count,
                    d.indirect_draw_count,
                    mme_instructions.min(u64::from(u32::MAX)) as u32,
                    (cost.methods + pending_methods).min(u64::from(u32::MAX)) as u32,
                    (words.len() as u64 + pending_dwords).min(u64::from(u32::MAX)) as u32,
                    cost.hw_draws as u32,
                    0,
                    0,
                    encode_ns,
                    exec_ns,
                    multiview_ns,
                    0,
                );
                let state = draw_state(&row_state.unwrap_or_default());
                let gpu_ns = self.gpu_ns(d.seq);
                sink.row(row, state, d.memory_words, failure.as_deref(), gpu_ns)?;
                totals.draws += 1;
                totals.hw_draws += cost.hw_draws as u32;
                totals.encode_ns += encode_ns;
                totals.mme_ns += exec_ns;
                totals.multiview_ns += multiview_ns;
                self.draws += 1;
                if is_compute_kind(d.kind) {
                    self.dispatches += 1;
                }
                if is_clear_kind(d.kind) {
                    self.clears += 1;
                }
                if d.kind == results::DrawKind::PipelineBarrier {
                    self.barriers += 1;
                }
                self.hw_draws += cost.hw_draws;
                let mut f = Fnv(self.fingerprint);
                for v in [
                    d.seq,
                    mme_instructions,
                    cost.methods + pending_methods,
                    words.len() as u64 + pending_dwords,
                    cost.hw_draws,
                ] {
                    f.u64(v);
                }
                self.fingerprint = f.0;
            }
            enc.recycle_push(words);
        }
        Ok(())
    }

    /// Executes what `enc` holds that belongs to no row (a command buffer's beginning),
    /// into the submit's totals.
    fn execute_untimed(
        &mut self,
        enc: &mut CommandEncoder<'_>,
        totals: &mut SubmitTotals,
    ) -> Result<(), ReplayError> {
        let words = enc.take_push();
        if let Some(tape) = &mut self.tape {
            tape.push(words.words(), TapeLabel::Other);
        }
        let cost = self
            .gpu
            .execute_measured(words.words())
            .map_err(|source| ReplayError::Gpu {
                seq: self.current_seq,
                source,
            })?;
        totals.methods += cost.methods;
        totals.dwords += words.len() as u64;
        totals.mme_instructions += cost.mme_instructions;
        self.mme_instructions += cost.mme_instructions;
        enc.recycle_push(words);
        Ok(())
    }

    /// Encodes work other than a draw: a dispatch, a transfer (NVK 25.0.7 records
    /// buffer copies, fills, image copies and copies between buffers and images on
    /// the copy engine: nvk_cmd_copy.c), a blit or resolve through the meta path, a
    /// clear or a barrier.
    fn encode_work(
        &mut self,
        enc: &mut CommandEncoder<'_>,
        seq: u64,
        args: &WorkArgs,
    ) -> DrawShape {
        let memory = &self.gpu.state.memory;
        let shape = |kind, elements: u64, count: u32, r: Recorded| DrawShape {
            seq,
            kind,
            instance_count: 1,
            element_count: elements.min(u64::from(u32::MAX)) as u32,
            indirect_draw_count: count,
            state: r.state,
            memory_words: r.memory_words,
        };
        // A copy-engine transfer's row: its launches as elements, its regions as
        // the commands it made.
        let transfer = |kind, regions: usize, r: Recorded| {
            shape(kind, u64::from(r.launches), regions as u32, r)
        };
        match args {
            WorkArgs::Direct(groups) => {
                let r = enc.dispatch(*groups);
                let n = groups
                    .iter()
                    .fold(1u64, |n, g| n.saturating_mul(u64::from(*g)));
                shape(results::DrawKind::Dispatch, n, 1, r)
            }
            WorkArgs::Indirect { buffer, offset } => {
                let addr = self.objects.buffer_addr(*buffer, *offset).unwrap_or(0);
                let groups = (0..3).fold(1u64, |n, i| {
                    n.saturating_mul(u64::from(memory.read_u32(addr.wrapping_add(4 * i))))
                });
                let r = enc.dispatch_indirect(addr, memory);
                shape(results::DrawKind::DispatchIndirect, groups, 1, r)
            }
            WorkArgs::CopyBuffer { src, dst, regions } => {
                let src = self.objects.buffer_addr(*src, 0).unwrap_or(0);
                let dst = self.objects.buffer_addr(*dst, 0).unwrap_or(0);
                let mut total = Recorded::default();
                for [src_offset, dst_offset, size] in regions {
                    total.add(enc.copy_buffer(
                        src.wrapping_add(*src_offset),
                        dst.wrapping_add(*dst_offset),
                        *size,
                    ));
                }
                transfer(results::DrawKind::CopyBuffer, regions.len(), total)
            }
            WorkArgs::FillBuffer {
                buffer,
                offset,
                size,
                data,
            } => {
                // VK_WHOLE_SIZE: to the buffer's end, rounded down to whole words
                // (vk_buffer_range).
                let (addr, rest) = self.objects.buffer_range(*buffer, *offset);
                let size = if *size == u64::MAX {
                    u64::from(rest) & !3
                } else {
                    *size
                };
                let r = enc.fill_buffer(addr, size, *data);
                transfer(results::DrawKind::FillBuffer, 1, r)
            }
            WorkArgs::BufferImageCopy {
                to_image,
                buffer,
                image,
                regions,
            } => {
                let addr = self.objects.buffer_addr(*buffer, 0).unwrap_or(0);
                let image = self.image_or_stand_in(*image);
                let r = enc.copy_buffer_image(&image, addr, regions, *to_image);
                let kind = if *to_image {
                    results::DrawKind::CopyBufferToImage
                } else {
                    results::DrawKind::CopyImageToBuffer
                };
                transfer(kind, regions.len(), r)
            }
            WorkArgs::ImageCopy { src, dst, regions } => {
                let (src, dst) = (self.image_or_stand_in(*src), self.image_or_stand_in(*dst));
                let r = enc.copy_image(&src, &dst, regions);
                transfer(results::DrawKind::CopyImage, regions.len(), r)
            }
            WorkArgs::ImageTransfer {
                op,
                src,
                dst,
                regions,
            } => {
                let r = self.image_transfer(enc, *src, *dst, regions);
                let kind = match op {
                    ImageOp::BlitImage => results::DrawKind::BlitImage,
                    ImageOp::ResolveImage => results::DrawKind::ResolveImage,
                };
                shape(kind, 0, regions.len() as u32, r)
            }
            WorkArgs::PipelineBarrier(barriers) => {
                let r = enc.pipeline_barrier(barriers);
                shape(results::DrawKind::PipelineBarrier, 0, 0, r)
            }
            WorkArgs::ClearAttachments { attachments, rects } => {
                let r = enc.clear_attachments(attachments, rects);
                shape(results::DrawKind::ClearAttachments, 0, 0, r)
            }
            WorkArgs::ClearImage {
                image,
                depth_stencil,
                value,
                ranges,
            } => {
                let r = self.clear_image(enc, *image, *depth_stencil, *value, ranges);
                let kind = if *depth_stencil {
                    results::DrawKind::ClearDepthStencilImage
                } else {
                    results::DrawKind::ClearColorImage
                };
                shape(kind, 0, 0, r)
            }
        }
    }

    /// The image `handle` names, or a 1×1 B8G8R8A8 stand-in for one the trace never
    /// created.
    fn image_or_stand_in(&self, handle: u64) -> Image {
        self.objects
            .image(handle)
            .unwrap_or(Image::stand_in(44, [1, 1, 1]))
    }

    /// An image blit or resolve as NVK 25.0.7 records it (nvk_CmdBlitImage2,
    /// nvk_CmdResolveImage2: vk_meta_blit_image and vk_meta_resolve_image inside the
    /// meta bracket): for each region, where each destination pixel reads in the
    /// source (compute_off_scale on each axis; a 3D source's slices, else the layers'
    /// distance), then a pass of do_blit for the destination's colour or depth and,
    /// apart, one for its stencil.
    fn image_transfer(
        &self,
        enc: &mut CommandEncoder<'_>,
        src: u64,
        dst: u64,
        regions: &[BlitRegion],
    ) -> Recorded {
        const DEPTH: u32 = 0x2;
        const STENCIL: u32 = 0x4;
        let src_image = self.image_or_stand_in(src);
        let dst_image = self.image_or_stand_in(dst);
        let mut total = Recorded::default();
        total.add(enc.meta_begin_gfx());
        for r in regions {
            let level_size =
                |axis: usize| (src_image.extent[axis] >> r.src.mip_level.min(31)).max(1);
            let coord = |v: i32| v.max(0) as u32;
            let axis = |a: usize| {
                BlitPush::off_scale(
                    level_size(a),
                    [coord(r.src_offsets[0][a]), coord(r.src_offsets[1][a])],
                    [coord(r.dst_offsets[0][a]), coord(r.dst_offsets[1][a])],
                )
            };
            let ((x, x_off, x_scale), (y, y_off, y_scale)) = (axis(0), axis(1));
            let mut push = BlitPush {
                xy: [x_off, y_off, x_scale, y_scale],
                ..BlitPush::default()
            };
            let (first_layer, layers) = if src_image.three_d {
                let (z, z_off, z_scale) = axis(2);
                push.z = [z_off, z_scale];
                (z[0], z[1].saturating_sub(z[0]))
            } else {
                push.arr_delta = r.dst.base_array_layer.wrapping_sub(r.src.base_array_layer) as i32;
                let layers = if r.dst.layer_count == u32::MAX {
                    dst_image
                        .array_layers
                        .saturating_sub(r.dst.base_array_layer)
                        .max(1)
                } else {
                    r.dst.layer_count
                };
                (0, layers)
            };
            let view = ViewRange {
                format: dst_image.format,
                base_mip_level: r.dst.mip_level,
                base_array_layer: r.dst.base_array_layer,
            };
            let area = RenderArea {
                x: x[0] as i32,
                y: y[0] as i32,
                width: x[1] - x[0],
                height: y[1] - y[0],
            };
            // do_blit's passes: colour or depth first, stencil alone after.
            let aspects = r.dst.aspects;
            let mut passes = vec![aspects & !STENCIL];
            if aspects & STENCIL != 0 {
                passes.push(STENCIL);
            }
            for pass in passes.into_iter().filter(|p| *p != 0) {
                let stencil_as_discard = pass == STENCIL;
                let mut info = RenderingInfo {
                    area,
                    layer_count: first_layer + layers,
                    ..RenderingInfo::default()
                };
                if TargetFormat::of_vk(dst_image.format).depth_stencil {
                    info.depth_stencil = Some(DepthStencilAttachment {
                        image: dst_image,
                        view,
                        depth_clear: None,
                        // The stencil written bit by bit starts cleared.
                        stencil_clear: stencil_as_discard.then_some(0),
                        resolve: false,
                    });
                } else {
                    info.colors = vec![Some(ColorAttachment {
                        image: dst_image,
                        view,
                        clear: None,
                        resolve: false,
                        loads: false,
                        stores: true,
                    })];
                }
                total.add(enc.meta_blit(&MetaBlit {
                    rendering: info,
                    layers,
                    push,
                    writes_depth: pass & DEPTH != 0,
                    stencil_as_discard,
                }));
            }
        }
        total.add(enc.meta_end_gfx());
        total
    }

    /// vkCmdClearColorImage and vkCmdClearDepthStencilImage as nvk_cmd_clear.c's
    /// clear_image does them: for every range and mip level, a rendering of the level
    /// with the image as its only attachment, loaded with CLEAR, begun and ended. An
    /// image the trace never created is taken as a 1×1 one of its kind.
    fn clear_image(
        &self,
        enc: &mut CommandEncoder<'_>,
        image: u64,
        depth_stencil: bool,
        value: [u32; 4],
        ranges: &[[u32; 5]],
    ) -> Recorded {
        let desc = self.objects.image(image).unwrap_or(Image::stand_in(
            if depth_stencil { 126 } else { 44 },
            [1, 1, 1],
        ));
        let mut total = Recorded::default();
        for &[aspects, base_level, levels, base_layer, layers] in ranges {
            // VK_REMAINING_MIP_LEVELS and VK_REMAINING_ARRAY_LAYERS.
            let levels = if levels == u32::MAX {
                16
            } else {
                levels.min(16)
            };
            let layers = if layers == u32::MAX {
                desc.array_layers.saturating_sub(base_layer).max(1)
            } else {
                layers
            };
            for level in base_level..base_level.saturating_add(levels) {
                let (w, h) = (desc.extent[0] >> level, desc.extent[1] >> level);
                if w == 0 && h == 0 {
                    break;
                }
                let view = ViewRange {
                    format: desc.format,
                    base_mip_level: level,
                    base_array_layer: base_layer,
                };
                let mut info = RenderingInfo {
                    area: RenderArea {
                        x: 0,
                        y: 0,
                        width: w.max(1),
                        height: h.max(1),
                    },
                    layer_count: layers,
                    ..RenderingInfo::default()
                };
                if depth_stencil {
                    info.depth_stencil = Some(DepthStencilAttachment {
                        image: desc,
                        view,
                        depth_clear: (aspects & 2 != 0).then_some(value[0]),
                        stencil_clear: (aspects & 4 != 0).then_some(value[1]),
                        resolve: false,
                    });
                } else {
                    info.colors = vec![Some(ColorAttachment {
                        image: desc,
                        view,
                        clear: Some(value),
                        resolve: false,
                        loads: false,
                        stores: true,
                    })];
                }
                for r in [enc.begin_rendering(&info), enc.end_rendering()] {
                    total.dwords += r.dwords;
                }
            }
        }
        total
    }

    /// The driver model's rendering info for a recorded vkCmdBeginRendering.
    /// How secondary `cb` begins, as nvk_cmd_buffer_begin_graphics does: one that
    /// continues a render pass whose framebuffer it names resumes that subpass's
    /// rendering over the whole framebuffer (Mesa's
    /// vk_get_command_buffer_inheritance_as_rendering_resume: every attachment loaded,
    /// nothing cleared), pushed right after it begins; one that continues a rendering
    /// without a framebuffer takes the rendering's view mask and attachment count,
    /// pushing nothing; any other starts with no rendering. A secondary whose beginning
    /// the trace does not hold is taken to continue the rendering it is executed in
    /// (`view_mask`, `colors`).
    fn begin_secondary(
        &mut self,
        sec: &mut CommandEncoder<'_>,
        cb: u64,
        view_mask: u32,
        colors: u32,
    ) {
        let Some(begin) = self.begins.get(&cb).copied() else {
            return sec.inherit_rendering(view_mask, colors);
        };
        if !begin.continues_render_pass {
            return;
        }
        let pass = self.objects.render_passes.get(&begin.render_pass);
        match (pass, self.objects.framebuffer_area(begin.framebuffer)) {
            (Some(pass), Some((area, layers))) => {
                let mut info = self.objects.subpass_rendering(
                    pass,
                    begin.framebuffer,
                    begin.subpass as usize,
                    area,
                    &[],
                );
                info.flags |= RENDERING_RESUMING;
                if info.view_mask == 0 {
                    info.layer_count = layers;
                }
                self.resume = Some(info);
            }
            (pass, _) => {
                let subpass = pass.and_then(|p| p.subpasses.get(begin.subpass as usize));
                let colors = subpass.map_or(colors, |s| s.colors.len() as u32);
                let view_mask = match begin.view_mask {
                    0 => subpass.map_or(view_mask, |s| s.view_mask),
                    m => m,
                };
                sec.inherit_rendering(view_mask, colors);
            }
        }
    }

    fn rendering_info(&self, r: &RenderingCmd) -> RenderingInfo {
        let colors = r
            .colors
            .iter()
            .map(|a| {
                let (image, view) = self.objects.view_target(a.view, &r.area)?;
                Some(ColorAttachment {
                    image,
                    view,
                    clear: (a.load_op == objects::LOAD_OP_CLEAR).then_some(a.clear),
                    resolve: a.resolve_mode != 0,
                    loads: a.load_op == objects::LOAD_OP_LOAD,
                    stores: a.store_op == objects::STORE_OP_STORE,
                })
            })
            .collect();
        // One image holds both aspects; the depth view if there is one.
        let ds_view = if r.depth.view != 0 {
            r.depth.view
        } else {
            r.stencil.view
        };
        let depth_stencil = self
            .objects
            .view_target(ds_view, &r.area)
            .map(|(image, view)| DepthStencilAttachment {
                image,
                view,
                depth_clear: (r.depth.view != 0 && r.depth.load_op == objects::LOAD_OP_CLEAR)
                    .then_some(r.depth.clear[0]),
                stencil_clear: (r.stencil.view != 0 && r.stencil.load_op == objects::LOAD_OP_CLEAR)
                    .then_some(r.stencil.clear[1]),
                resolve: r.depth.resolve_mode != 0 || r.stencil.resolve_mode != 0,
            });
        RenderingInfo {
            flags: r.flags,
            area: r.area,
            layer_count: r.layer_count,
            view_mask: r.view_mask,
            colors,
            depth_stencil,
        }
    }

    /// Encodes one draw; `None` when it cannot be (an unbound indirect buffer).
    fn encode_draw(
        &mut self,
        enc: &mut CommandEncoder<'_>,
        seq: u64,
        kind: DrawKind,
        args: &DrawArgs,
    ) -> Option<DrawShape> {
        let memory = &self.gpu.state.memory;
        let shape = |instance_count, element_count, indirect_draw_count, r: Recorded| DrawShape {
            seq,
            kind: results_kind(kind),
            instance_count,
            element_count,
            indirect_draw_count,
            state: r.state,
            memory_words: r.memory_words,
        };
        match *args {
            DrawArgs::Direct {
                vertex_count,
                instance_count,
                first_vertex,
                first_instance,
            } => {
                let r = enc.draw(vertex_count, instance_count, first_vertex, first_instance);
                Some(shape(instance_count, vertex_count, 1, r))
            }
            DrawArgs::Indexed {
                index_count,
                instance_count,
                first_index,
                vertex_offset,
                first_instance,
            } => {
                let r = enc.draw_indexed(
                    index_count,
                    instance_count,
                    first_index,
                    vertex_offset,
                    first_instance,
                );
                Some(shape(instance_count, index_count, 1, r))
            }
            DrawArgs::Indirect {
                buffer,
                offset,
                draw_count,
                stride,
                count,
            } => {
                let Some(addr) = self.objects.buffer_addr(buffer, offset) else {
                    self.skip("indirect draw from an unbound buffer", true);
                    return None;
                };
                let count_addr = match count {
                    Some((b, o)) => match self.objects.buffer_addr(b, o) {
                        Some(a) => Some(a),
                        None => {
                            self.skip("indirect count from an unbound buffer", true);
                            return None;
                        }
                    },
                    None => None,
                };
                let draws = count_addr.map_or(draw_count, |a| memory.read_u32(a).min(draw_count));
                if self.options.arch() == Arch::Fermi {
                    // Before Turing the commands are the macro's parameters: one word
                    // at least one instruction, so a call with more than the budget
                    // allows cannot finish; beyond a bound, they are not gathered.
                    let per_draw = if kind.indexed() { 5 } else { 4 };
                    let words = u64::from(draws) * u64::from((stride / 4).max(per_draw));
                    if words > self.options.mme_budget.min(MAX_INDIRECT_PARAM_WORDS) {
                        self.skip(
                            "indirect draw with more parameter words than a macro call may run",
                            true,
                        );
                        return None;
                    }
                }
                let element_count = memory.read_u32(addr);
                let instance_count = memory.read_u32(addr.wrapping_add(4));
                let r = enc.draw_indirect(
                    kind,
                    IndirectArgs {
                        addr,
                        draw_count,
                        stride,
                        count_addr,
                    },
                    memory,
                );
                Some(shape(instance_count, element_count, draws, r))
            }
            DrawArgs::ByteCount {
                instance_count,
                first_instance,
                counter_buffer,
                counter_buffer_offset,
                counter_offset,
                vertex_stride,
            } => {
                let Some(addr) = self
                    .objects
                    .buffer_addr(counter_buffer, counter_buffer_offset)
                else {
                    self.skip("byte-count draw from an unbound counter buffer", true);
                    return None;
                };
                let bytes = memory.read_u32(addr).saturating_sub(counter_offset);
                let vertices = bytes.checked_div(vertex_stride).unwrap_or(0);
                let r = enc.draw_indirect_byte_count(
                    instance_count,
                    first_instance,
                    addr,
                    counter_offset,
                    vertex_stride,
                    memory,
                );
                Some(shape(instance_count, vertices, 1, r))
            }
        }
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
