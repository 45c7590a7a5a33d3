//! The command encoder: Vulkan commands into a push buffer.
//!
//! Every command returns what it [`Recorded`]: the push-buffer dwords it wrote and the
//! queries it emitted, for the replayer's per-draw costs.

use super::cbuf::ShaderState;
use super::descriptors::DescriptorState;
use super::dispatch::ComputeState;
use super::query::{QueryPool, QueryType};
use super::rendering::RenderingEnd;
use super::state::{identity_locations, FlushContext, GraphicsState, StateCost, StateGroup};
use super::{Device, Macro, Scratch};
use crate::chipset::classes::MAXWELL_COMPUTE_B;
use crate::chipset::Chipset;
use crate::class::{
    self, PipelineLocation, Report, ReportSemaphoreD, SemaphoreOperation, StructureSize,
};
use crate::gpu::Memory;
use crate::mme::Arch;
use crate::push::{PushBuffer, SUBC_3D, SUBC_COMPUTE, SUBC_COPY};

/// The seven draw commands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DrawKind {
    /// vkCmdDraw
    Draw,
    /// vkCmdDrawIndexed
    DrawIndexed,
    /// vkCmdDrawIndirect
    DrawIndirect,
    /// vkCmdDrawIndexedIndirect
    DrawIndexedIndirect,
    /// vkCmdDrawIndirectCount
    DrawIndirectCount,
    /// vkCmdDrawIndexedIndirectCount
    DrawIndexedIndirectCount,
    /// vkCmdDrawIndirectByteCountEXT
    DrawIndirectByteCount,
}

impl DrawKind {
    /// Every draw command.
    pub const ALL: [DrawKind; 7] = [
        DrawKind::Draw,
        DrawKind::DrawIndexed,
        DrawKind::DrawIndirect,
        DrawKind::DrawIndexedIndirect,
        DrawKind::DrawIndirectCount,
        DrawKind::DrawIndexedIndirectCount,
        DrawKind::DrawIndirectByteCount,
    ];

    /// The macro that executes it.
    pub fn macro_(self) -> Macro {
        match self {
            DrawKind::Draw => Macro::Draw,
            DrawKind::DrawIndexed => Macro::DrawIndexed,
            DrawKind::DrawIndirect => Macro::DrawIndirect,
            DrawKind::DrawIndexedIndirect => Macro::DrawIndexedIndirect,
            DrawKind::DrawIndirectCount => Macro::DrawIndirectCount,
            DrawKind::DrawIndexedIndirectCount => Macro::DrawIndexedIndirectCount,
            DrawKind::DrawIndirectByteCount => Macro::XfbDrawIndirect,
        }
    }

    /// Whether it draws from an index buffer.
    pub fn indexed(self) -> bool {
        matches!(
            self,
            DrawKind::DrawIndexed
                | DrawKind::DrawIndexedIndirect
                | DrawKind::DrawIndexedIndirectCount
        )
    }
}

/// Where an indirect draw's commands are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndirectArgs {
    /// Address of the first command.
    pub addr: u64,
    /// Commands (the maximum, for the count variants).
    pub draw_count: u32,
    /// Bytes between commands.
    pub stride: u32,
    /// Address of the draw count (the count variants).
    pub count_addr: Option<u64>,
}

/// NVK's pipeline statistics in `VkQueryPipelineStatisticFlagBits` order
/// (nvk_3d_stat_queries): each bit's pipeline location and report, or `None` for
/// compute invocations, which `WRITE_CS_INVOCATIONS` writes from scratch.
const STATISTICS: [(u32, Option<(PipelineLocation, Report)>); 11] = [
    (
        0,
        Some((PipelineLocation::DataAssembler, Report::DaVerticesGenerated)),
    ),
    (
        1,
        Some((
            PipelineLocation::DataAssembler,
            Report::DaPrimitivesGenerated,
        )),
    ),
    (
        2,
        Some((PipelineLocation::VertexShader, Report::VsInvocations)),
    ),
    (
        3,
        Some((PipelineLocation::GeometryShader, Report::GsInvocations)),
    ),
    (
        4,
        Some((
            PipelineLocation::GeometryShader,
            Report::GsPrimitivesGenerated,
        )),
    ),
    (5, Some((PipelineLocation::Vpc, Report::ClipperInvocations))),
    (
        6,
        Some((PipelineLocation::Vpc, Report::ClipperPrimitivesGenerated)),
    ),
    (
        7,
        Some((PipelineLocation::PixelShader, Report::PsInvocations)),
    ),
    (
        8,
        Some((PipelineLocation::TessellationInit, Report::TiInvocations)),
    ),
    (
        9,
        Some((PipelineLocation::Tessellation, Report::TsInvocations)),
    ),
    (10, None),
];

/// What a command wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    /// Push-buffer dwords written.
    pub dwords: usize,
    /// Queries emitted.
    pub queries: u32,
    /// Zero queries emitted for the other views of a multiview query.
    pub zero_queries: u32,
    /// Of `dwords`, what the graphics-state flush before a draw wrote, by group.
    pub state: StateCost,
    /// Words the command had written into GPU memory by the CPU (a dispatch's root
    /// table and QMD).
    pub memory_words: u32,
    /// Copy-engine transfers launched (`LAUNCH_DMA`s that move data).
    pub launches: u32,
}

impl Recorded {
    /// Adds what `other` recorded after this (its dwords, queries, memory words and
    /// launches; the state flush is a draw's and stays this one's).
    pub fn add(&mut self, other: Recorded) {
        self.dwords += other.dwords;
        self.queries += other.queries;
        self.zero_queries += other.zero_queries;
        self.memory_words += other.memory_words;
        self.launches += other.launches;
    }
}

/// Encodes one command buffer.
pub struct CommandEncoder<'d> {
    device: &'d Device,
    pub(super) push: PushBuffer,
    pub(super) view_mask: u32,
    pub(super) rendering_end: RenderingEnd,
    pub(super) compute: ComputeState,
    state: GraphicsState,
    color_attachments: u32,
    /// The rendering's sample count from its attachments, 0 with none (NVK's
    /// `render->samples`).
    pub(super) render_samples: u32,
    pub(super) descriptors: DescriptorState,
    pub(super) shaders: ShaderState,
    /// Whether the rendering's depth attachment has a float depth format
    /// (`vk_format_has_float_depth` of NVK's `render->depth_att.vk_format`).
    pub(super) float_depth: bool,
    /// Which of the depth and stencil attachments the rendering has (NVK's
    /// `render->depth_att` and `render->stencil_att` formats set).
    pub(super) ds_aspects: super::rendering::DepthStencilAspects,
    /// Vertex buffer 0's range, for the meta path to bind again (NVK's `vb0`).
    pub(super) vb0: (u64, u32),
    /// What the meta path saved, between nvk_meta_begin and nvk_meta_end.
    pub(super) meta_saved: Option<Box<super::meta::MetaSave>>,
}

impl<'d> CommandEncoder<'d> {
    /// An empty command buffer for `device`.
    pub fn new(device: &'d Device) -> Self {
        CommandEncoder {
            device,
            push: PushBuffer::new(),
            view_mask: 0,
            rendering_end: RenderingEnd::default(),
            compute: ComputeState::default(),
            state: GraphicsState::new(),
            color_attachments: 1,
            render_samples: 0,
            descriptors: DescriptorState::default(),
            shaders: ShaderState::default(),
            float_depth: false,
            ds_aspects: Default::default(),
            vb0: (0, 0),
            meta_saved: None,
        }
    }

    /// vkBeginCommandBuffer. Mirrors nvk_BeginCommandBuffer: a copy-engine NOP so
    /// there is something to submit, then for a primary command buffer the compute
    /// class's SKED (from MAXWELL_COMPUTE_B), sampler and texture-header cache
    /// invalidations
    /// (nvk_cmd_buffer_begin_compute) and the 3D class's sampler, texture-header and
    /// constant cache invalidations (nvk_cmd_buffer_begin_graphics).
    pub fn begin_command_buffer(&mut self, primary: bool) -> Recorded {
        let before = self.push.len();
        // Every graphics stage's slot is pushed at the first draw, an empty one
        // disabled (nvk_cmd_buffer_begin_graphics leaves `shaders_dirty` all set).
        self.mark_all_shaders_dirty();
        self.push.mthd(SUBC_COPY, class::copy::NOP, 0);
        if primary {
            if self.chipset().compute >= MAXWELL_COMPUTE_B {
                self.push
                    .immd_or_mthd(SUBC_COMPUTE, class::INVALIDATE_SKED_CACHES, 0);
            }
            self.push
                .immd_or_mthd(SUBC_COMPUTE, class::INVALIDATE_SAMPLER_CACHE_NO_WFI, 0);
            self.push.immd_or_mthd(
                SUBC_COMPUTE,
                class::COMPUTE_INVALIDATE_TEXTURE_HEADER_CACHE_NO_WFI,
                0,
            );
            self.push
                .inc(SUBC_3D, class::INVALIDATE_SAMPLER_CACHE_NO_WFI, &[0, 0]);
            // CONSTANT (bit 12).
            self.push
                .immd_or_mthd(SUBC_3D, class::INVALIDATE_SHADER_CACHES_NO_WFI, 1 << 12);
        }
        self.recorded(before)
    }

    /// A secondary command buffer begun inside a render pass takes the rendering's view
    /// mask and attachment count from its inheritance info, pushing nothing (NVK's
    /// nvk_cmd_buffer_begin_graphics for `RENDER_PASS_CONTINUE` without a framebuffer:
    /// the inherited sample count, taken as one, and each attachment at its own
    /// location, all of it dirty).
    pub fn inherit_rendering(&mut self, view_mask: u32, color_attachments: u32) {
        self.view_mask = view_mask;
        self.set_color_attachments(color_attachments);
        self.render_samples = 1;
        self.state.dirty_render_pass();
    }

    /// What the encoder knows of the rendering in progress: its view mask and colour
    /// attachment count.
    pub fn rendering(&self) -> (u32, u32) {
        (self.view_mask, self.color_attachments)
    }

    /// After vkCmdExecuteCommands every state the primary tracks is unknown: all of it
    /// is dirty (its values kept, as Mesa keeps them), descriptors and the compute state forgotten, the rendering kept.
    /// Mirrors nvk_cmd_invalidate_graphics_state and nvk_cmd_invalidate_compute_state.
    pub fn invalidate_state(&mut self) {
        self.state.dirty_all();
        self.descriptors = DescriptorState::default();
        self.compute = ComputeState::default();
        self.forget_shaders();
    }

    /// The push buffer so far.
    pub fn push(&self) -> &PushBuffer {
        &self.push
    }

    /// The finished push buffer.
    pub fn finish(self) -> PushBuffer {
        self.push
    }

    /// Whether nothing was written since the last [`take_push`](Self::take_push).
    pub fn push_is_empty(&self) -> bool {
        self.push.is_empty()
    }

    /// Takes the words written so far, leaving an empty buffer (and no open header) for
    /// what follows: a replay executes each command's words on their own.
    pub fn take_push(&mut self) -> PushBuffer {
        std::mem::take(&mut self.push)
    }

    /// Hands a taken buffer back to be reused (emptied) if nothing was written since.
    pub fn recycle_push(&mut self, mut push: PushBuffer) {
        if self.push.is_empty() {
            push.clear();
            self.push = push;
        }
    }

    /// The view mask in effect.
    pub fn view_mask(&self) -> u32 {
        self.view_mask
    }

    /// The device's MME generation.
    pub(super) fn device_arch(&self) -> Arch {
        self.device.arch()
    }

    /// The device the command buffer is recorded for.
    pub(super) fn device(&self) -> &'d Device {
        self.device
    }

    /// The device's chipset: its classes (NVK's `pdev->info`).
    pub(super) fn chipset(&self) -> Chipset {
        self.device.chipset
    }

    /// The device's constant-buffer alignment (nvk_min_cbuf_alignment).
    pub(super) fn device_min_cbuf_alignment(&self) -> u32 {
        self.device.min_cbuf_alignment()
    }

    /// Whether uniform buffer descriptors are bindless constant buffers
    /// (nvk_use_bindless_cbuf).
    pub(super) fn device_uses_bindless_cbuf(&self) -> bool {
        self.device.uses_bindless_cbuf()
    }

    /// The graphics state, for the `vkCmdSet*` commands and pipeline binds to set.
    pub fn state_mut(&mut self) -> &mut GraphicsState {
        &mut self.state
    }

    /// The colour attachments of the render pass or rendering in progress (the blend
    /// state is flushed per attachment).
    ///
    /// Each attachment is mapped to its own location, as vkCmdBeginRendering does
    /// (vk_cmd_set_rendering_attachment_locations): a different count is a different
    /// map, and the next draw selects the targets again (`SET_CT_SELECT`).
    pub fn set_color_attachments(&mut self, count: u32) {
        self.color_attachments = count;
        self.state
            .set_color_attachment_locations(&identity_locations(count));
    }

    /// Flushes what a draw needs before it. Mirrors nvk_cmd_flush_gfx_state: the push
    /// descriptor sets, the dirty dynamic state, the shaders bound since the last
    /// draw, then the constant buffers they read that changed.
    fn flush_gfx_state(&mut self) -> StateCost {
        // Each group's words start headers of their own (see `StateGroup::FLUSH_ORDER`).
        self.push.close_header();
        let before = self.push.mark();
        self.flush_push_descriptors();
        let mut cost = StateCost::default();
        cost.add_since(StateGroup::Descriptors, &self.push, before);
        let ctx = FlushContext {
            color_attachments: self.color_attachments,
            render_samples: self.render_samples,
            eng3d: self.device.eng3d(),
            float_depth: self.float_depth,
            depth_attachment: self.ds_aspects.depth,
            stencil_attachment: self.ds_aspects.stencil,
        };
        let flushed = self.state.flush(&mut self.push, ctx);
        for (i, group) in StateGroup::ALL.iter().enumerate() {
            cost.add_group(*group, flushed.methods[i], flushed.dwords[i]);
        }
        self.push.close_header();
        let before = self.push.mark();
        self.flush_gfx_shaders();
        cost.add_since(StateGroup::Shaders, &self.push, before);
        self.push.close_header();
        let before = self.push.mark();
        self.flush_gfx_cbufs();
        cost.add_since(StateGroup::ConstantBuffers, &self.push, before);
        cost
    }

    pub(super) fn recorded(&self, before: usize) -> Recorded {
        Recorded {
            dwords: self.push.len() - before,
            ..Recorded::default()
        }
    }

    /// The view mask into shadow scratch, for the draw, clear and query macros to loop
    /// over.
    pub(super) fn set_view_mask(&mut self, mask: u32) {
        self.view_mask = mask;
        self.push.immd_or_mthd(
            SUBC_3D,
            class::set_mme_shadow_scratch(Scratch::ViewMask as u16),
            mask,
        );
    }

    fn call(&mut self, m: Macro, params: &[u32]) {
        self.push
            .inc_once(SUBC_3D, class::call_mme_macro(m.id()), params);
    }

    /// vkCmdDraw.
    pub fn draw(
        &mut self,
        vertex_count: u32,
        instance_count: u32,
        first_vertex: u32,
        first_instance: u32,
    ) -> Recorded {
        let before = self.push.len();
        let state = self.flush_gfx_state();
        let params = [
            0,
            vertex_count,
            instance_count,
            first_vertex,
            first_instance,
        ];
        self.call(Macro::Draw, &params);
        Recorded {
            state,
            ..self.recorded(before)
        }
    }

    /// vkCmdDrawIndexed.
    pub fn draw_indexed(
        &mut self,
        index_count: u32,
        instance_count: u32,
        first_index: u32,
        vertex_offset: i32,
        first_instance: u32,
    ) -> Recorded {
        let before = self.push.len();
        let state = self.flush_gfx_state();
        let params = [
            0,
            index_count,
            instance_count,
            first_index,
            vertex_offset as u32,
            first_instance,
        ];
        self.call(Macro::DrawIndexed, &params);
        Recorded {
            state,
            ..self.recorded(before)
        }
    }

    /// The indirect draws. Turing reads the commands (and count) from memory in the
    /// macro; before Turing the encoder splices them into the push buffer, reading
    /// `memory` as the hardware would at execution.
    pub fn draw_indirect(
        &mut self,
        kind: DrawKind,
        args: IndirectArgs,
        memory: &Memory,
    ) -> Recorded {
        let before = self.push.len();
        let state = self.flush_gfx_state();
        let m = kind.macro_();
        match self.device.arch() {
            Arch::Turing => {
                let mut params = vec![(args.addr >> 32) as u32, args.addr as u32];
                match args.count_addr {
                    Some(count_addr) => params.extend([
                        (count_addr >> 32) as u32,
                        count_addr as u32,
                        args.draw_count,
                    ]),
                    None => params.push(args.draw_count),
                }
                params.push(args.stride);
                self.call(m, &params);
            }
            Arch::Fermi => {
                let per_draw = if kind.indexed() { 5 } else { 4 };
                let count = match args.count_addr {
                    Some(addr) => memory.read_u32(addr).min(args.draw_count),
                    None => args.draw_count,
                };
                let stride_dw = (args.stride / 4).max(per_draw);
                let pad = stride_dw - per_draw;
                let mut params = vec![count, pad];
                for d in 0..count {
                    let at = args.addr + u64::from(d) * u64::from(stride_dw) * 4;
                    params.extend((0..stride_dw).map(|i| memory.read_u32(at + 4 * u64::from(i))));
                }
                self.call(m, &params);
            }
        }
        Recorded {
            state,
            ..self.recorded(before)
        }
    }

    /// vkCmdDrawIndirectByteCountEXT.
    pub fn draw_indirect_byte_count(
        &mut self,
        instance_count: u32,
        first_instance: u32,
        counter_addr: u64,
        counter_offset: u32,
        vertex_stride: u32,
        memory: &Memory,
    ) -> Recorded {
        let before = self.push.len();
        let state = self.flush_gfx_state();
        self.push
            .immd_or_mthd(SUBC_3D, class::SET_DRAW_AUTO_START, counter_offset);
        self.push
            .immd_or_mthd(SUBC_3D, class::SET_DRAW_AUTO_STRIDE, vertex_stride);
        let mut params = vec![instance_count, first_instance];
        match self.device.arch() {
            Arch::Turing => params.extend([(counter_addr >> 32) as u32, counter_addr as u32]),
            Arch::Fermi => params.push(memory.read_u32(counter_addr)),
        }
        self.call(Macro::XfbDrawIndirect, &params);
        Recorded {
            state,
            ..self.recorded(before)
        }
    }

    /// One report-semaphore write: address, payload, operation.
    fn semaphore(&mut self, addr: u64, payload: u32, d: ReportSemaphoreD) {
        self.push.mthds(
            SUBC_3D,
            class::SET_REPORT_SEMAPHORE_A,
            &[(addr >> 32) as u32, addr as u32, payload, d.pack()],
        );
    }

    fn report(&mut self, addr: u64, report: Report) {
        self.report_at(addr, report, PipelineLocation::All, 0, 0);
    }

    /// A four-word report of `report` at `location`, with `payload` and `sub_report`
    /// (the stream or buffer, bits 7:5), the flush before it skipped, as NVK's query
    /// reports are.
    fn report_at(
        &mut self,
        addr: u64,
        report: Report,
        location: PipelineLocation,
        payload: u32,
        sub_report: u32,
    ) {
        let d = ReportSemaphoreD {
            operation: SemaphoreOperation::ReportOnly,
            flush_disable: true,
            release_after_writes: false,
            pipeline_location: location,
            report,
            structure_size: StructureSize::FourWords,
        };
        self.push.mthds(
            SUBC_3D,
            class::SET_REPORT_SEMAPHORE_A,
            &[
                (addr >> 32) as u32,
                addr as u32,
                payload,
                d.pack() | ((sub_report & 7) << 5),
            ],
        );
    }

    fn release_word(&mut self, addr: u64, value: u32) {
        let d = ReportSemaphoreD {
            operation: SemaphoreOperation::Release,
            flush_disable: false,
            release_after_writes: true,
            pipeline_location: PipelineLocation::All,
            report: Report::None,
            structure_size: StructureSize::OneWord,
        };
        self.semaphore(addr, value, d);
    }

    /// Mirrors nvk_cmd_begin_end_query: a query's reports, at its begin (`end` 0) or
    /// end (`end` 1); `index` is the stream of the indexed queries.
    fn query_reports(&mut self, pool: &QueryPool, q: u32, index: u32, end: u32) {
        match pool.kind {
            QueryType::Occlusion => {
                self.push
                    .immd(SUBC_3D, class::SET_ZPASS_PIXEL_COUNT, u32::from(end == 0));
                self.report(pool.report_addr(q, end), Report::ZpassPixelCnt64);
            }
            QueryType::Timestamp => self.report(pool.report_addr(q, 0), Report::None),
            QueryType::PipelineStatistics(flags) => {
                let enabled = STATISTICS.iter().filter(|(bit, _)| flags & (1 << bit) != 0);
                for (i, (_, stat)) in enabled.enumerate() {
                    let addr = pool.report_addr(q, 2 * i as u32 + end);
                    match stat {
                        Some((location, report)) => {
                            self.report_at(addr, *report, *location, 0, 0);
                        }
                        None => self.push.inc_once(
                            SUBC_3D,
                            class::call_mme_macro(Macro::WriteCsInvocations.id()),
                            &[(addr >> 32) as u32, addr as u32],
                        ),
                    }
                }
            }
            QueryType::TransformFeedbackStream => {
                let reports = [
                    Report::StreamingPrimitivesSucceeded,
                    Report::StreamingPrimitivesNeeded,
                ];
                for (i, report) in reports.into_iter().enumerate() {
                    let addr = pool.report_addr(q, 2 * i as u32 + end);
                    self.report_at(addr, report, PipelineLocation::StreamingOutput, 0, index);
                }
            }
            QueryType::PrimitivesGenerated => self.report_at(
                pool.report_addr(q, end),
                Report::VtgPrimitivesOut,
                PipelineLocation::StreamingOutput,
                1,
                index,
            ),
        }
    }

    /// vkCmdBeginQuery.
    pub fn begin_query(&mut self, pool: &QueryPool, q: u32) -> Recorded {
        self.begin_query_indexed(pool, q, 0)
    }

    /// vkCmdBeginQueryIndexedEXT: `index` is the stream of a transform-feedback or
    /// primitives-generated query. Mirrors nvk_CmdBeginQueryIndexedEXT.
    pub fn begin_query_indexed(&mut self, pool: &QueryPool, q: u32, index: u32) -> Recorded {
        let before = self.push.len();
        self.query_reports(pool, q, index, 0);
        self.recorded(before)
    }

    /// vkCmdEndQuery: the end report, availability, and under multiview the other
    /// views' queries.
    pub fn end_query(&mut self, pool: &QueryPool, q: u32) -> Recorded {
        self.end_query_indexed(pool, q, 0)
    }

    /// vkCmdEndQueryIndexedEXT. Mirrors nvk_CmdEndQueryIndexedEXT.
    pub fn end_query_indexed(&mut self, pool: &QueryPool, q: u32, index: u32) -> Recorded {
        let before = self.push.len();
        self.query_reports(pool, q, index, 1);
        self.make_available(pool, q);
        let zero_queries = self.zero_other_views(pool, q);
        Recorded {
            queries: 1,
            zero_queries,
            ..self.recorded(before)
        }
    }

    /// vkCmdWriteTimestamp after `stages`: a report at the stages' pipeline location
    /// (its flush kept), then availability without a flush. Mirrors
    /// nvk_CmdWriteTimestamp2.
    pub fn write_timestamp(&mut self, pool: &QueryPool, q: u32, stages: u64) -> Recorded {
        let before = self.push.len();
        let d = ReportSemaphoreD {
            operation: SemaphoreOperation::ReportOnly,
            flush_disable: false,
            release_after_writes: false,
            pipeline_location: super::events::pipeline_location(stages),
            report: Report::None,
            structure_size: StructureSize::FourWords,
        };
        self.semaphore(pool.report_addr(q, 0), 0, d);
        self.release_word(pool.available_addr(q), 1);
        let zero_queries = self.zero_other_views(pool, q);
        Recorded {
            queries: 1,
            zero_queries,
            ..self.recorded(before)
        }
    }

    fn make_available(&mut self, pool: &QueryPool, q: u32) {
        self.push.immd(SUBC_3D, class::FLUSH_PENDING_WRITES, 0);
        self.release_word(pool.available_addr(q), 1);
    }

    /// Under a view mask of N views a query takes N consecutive slots: the first holds
    /// the result; the others are made available. Mirrors NVK 25.0.7's
    /// emit_zero_queries, which writes only their availability (their reports keep
    /// what vkCmdResetQueryPool left, zeros).
    fn zero_other_views(&mut self, pool: &QueryPool, q: u32) -> u32 {
        let views = self.view_mask.count_ones();
        for extra in 1..views {
            self.release_word(pool.available_addr(q + extra), 1);
        }
        views.saturating_sub(1)
    }

    /// vkCmdCopyQueryPoolResults as NVK's MME path did it: one Turing macro call per
    /// query (see `copy_queries`), which writes the results the model's memory holds.
    /// `None` before Turing, where an MME cannot read memory. NVK today copies with a
    /// compute shader instead ([`CommandEncoder::copy_query_pool_results`]).
    pub fn copy_query_pool_results_mme(
        &mut self,
        pool: &QueryPool,
        first: u32,
        count: u32,
        dst: u64,
        stride: u64,
        flags: u32,
    ) -> Option<Recorded> {
        if !Macro::CopyQueryResults.available_on(self.device.arch()) {
            return None;
        }
        let before = self.push.len();
        let (pairs, values) = match pool.kind {
            QueryType::Timestamp => (0, 1),
            _ => (pool.reports_per_query() / 2, pool.reports_per_query() / 2),
        };
        let size = if flags & super::copy_queries::RESULT_64_BIT != 0 {
            8
        } else {
            4
        };
        for (i, q) in (first..first.saturating_add(count).min(pool.count)).enumerate() {
            let at = dst + stride * i as u64;
            let avail_at = at + size * u64::from(values);
            let avail = pool.available_addr(q);
            let report = pool.report_addr(q, 0);
            let params = [
                (avail >> 32) as u32,
                avail as u32,
                (report >> 32) as u32,
                report as u32,
                (at >> 32) as u32,
                at as u32,
                (avail_at >> 32) as u32,
                avail_at as u32,
                flags,
                pairs,
            ];
            self.call(Macro::CopyQueryResults, &params);
        }
        Some(self.recorded(before))
    }

    /// vkCmdCopyQueryPoolResults. Mirrors nvk_CmdCopyQueryPoolResults: with
    /// `VK_QUERY_RESULT_WAIT_BIT`, a host semaphore acquire per query (waiting for its
    /// availability word to reach 1), then nvk_meta_copy_query_pool_results, NVK's
    /// copy shader dispatched over the queries, 32 a workgroup, on every generation.
    /// The shader's writes are not modelled (the model runs no shaders).
    pub fn copy_query_pool_results(
        &mut self,
        pool: &QueryPool,
        first: u32,
        count: u32,
        flags: u32,
    ) -> Recorded {
        let before = self.push.len();
        if flags & super::copy_queries::RESULT_WAIT != 0 {
            for q in first..first.saturating_add(count).min(pool.count) {
                self.host_acquire(
                    pool.available_addr(q),
                    1,
                    class::HOST_SEMAPHORE_ACQ_GEQ_SWITCH_4BYTE,
                );
            }
        }
        let recorded = self.dispatch_internal([count.div_ceil(32).max(1), 1, 1]);
        Recorded {
            memory_words: recorded.memory_words,
            ..self.recorded(before)
        }
    }

    /// vkCmdResetQueryPool: availability released as 0, then waited on. Mirrors
    /// nvk_CmdResetQueryPool.
    pub fn reset_query_pool(&mut self, pool: &QueryPool, first: u32, count: u32) -> Recorded {
        let before = self.push.len();
        let queries = first..first.saturating_add(count).min(pool.count);
        for q in queries.clone() {
            self.release_word(pool.available_addr(q), 0);
        }
        // Then a channel semaphore waits on each word, so that no later write overtakes
        // the reset.
        for q in queries {
            self.host_acquire(
                pool.available_addr(q),
                0,
                class::HOST_SEMAPHORE_ACQUIRE_SWITCH_4BYTE,
            );
        }
        self.recorded(before)
    }

    /// A channel (host) semaphore acquire of the word at `addr` against `payload`,
    /// sent on the 3D subchannel (`NV906F_SEMAPHOREA..D`, `d` its operation word).
    fn host_acquire(&mut self, addr: u64, payload: u32, d: u32) {
        self.push.inc(
            SUBC_3D,
            class::HOST_SEMAPHORE_A,
            &[(addr >> 32) as u32, (addr as u32) >> 2, payload, d],
        );
    }
}
