//! The objects a replay rebuilds from the trace: memory placed in the GPU model's
//! address space, buffers and images bound into it, image views and framebuffers,
//! render passes with their attachments and subpasses, pipelines with their topology,
//! query pools.

use crate::handles::HandleMap;
use crate::swapchain::SwapchainInfo;

use driver::class::PrimitiveOp;
use driver::nvk::image::{Image, ViewRange};
use driver::nvk::meta::{implied_resolve_mode, NumericType};
use driver::nvk::rendering::{
    ColorAttachment, DepthStencilAspects, DepthStencilAttachment, RenderArea,
};
use driver::nvk::state::PipelineGroups;
use driver::nvk::RenderingInfo;
use driver::nvk::{MemoryNeeds, QueryPool, QueryType};

/// Where replayed allocations start in the model's address space.
const HEAP_BASE: u64 = 0x10_0000_0000;
/// Where the images of swapchains are placed: apart from the program's own memory, as
/// NVK's WSI allocates them itself.
const SWAPCHAIN_BASE: u64 = 0x80_0000_0000;

/// A graphics pipeline as the driver model needs it.
#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline {
    /// BEGIN's topology.
    pub topology: PrimitiveOp,
    /// `VkPrimitiveTopology`.
    pub vk_topology: u32,
    /// `VkPipelineRenderingCreateInfo.viewMask`.
    pub view_mask: u32,
    /// A bit per colour attachment format `VkPipelineRenderingCreateInfo` gives (not
    /// `VK_FORMAT_UNDEFINED`); `None` for a render-pass pipeline.
    pub rp_attachments: Option<u32>,
    /// Whether its rendering has colour and depth/stencil attachments (from
    /// `VkPipelineRenderingCreateInfo`'s formats or its subpass); `None` when the
    /// trace does not say.
    pub attachments: Option<RenderAttachments>,
    /// The `VkDynamicState`s it leaves to commands.
    pub dynamic_states: driver::nvk::state::DynamicStates,
    /// Its shaders, by stage (vertex ... fragment).
    pub shaders: [Option<std::sync::Arc<driver::nvk::shader::Shader>>; 5],
    /// The parts of a graphics pipeline it defines itself ([`PipelinePart`] bits):
    /// all of them for a complete pipeline, fewer for a library.
    pub parts: u32,
    /// Its static state values; `None` when the trace predates their recording.
    pub state: Option<Box<driver::nvk::state::DynamicState>>,
}

/// The kinds of attachment a pipeline's rendering has (Mesa's `rp.attachments`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderAttachments {
    /// A colour attachment.
    pub color: bool,
    /// A depth or stencil attachment.
    pub depth_stencil: bool,
}

/// `VkDynamicState` VK_DYNAMIC_STATE_RASTERIZER_DISCARD_ENABLE.
const DYNAMIC_RASTERIZER_DISCARD_ENABLE: u32 = 1_000_377_001;

impl Pipeline {
    /// The state groups it holds, as Mesa's vk_graphics_pipeline_state_fill decides:
    /// tessellation with tessellation shaders; viewport, multisampling, depth/stencil
    /// and blending only where it may rasterize, the last two only for a rendering
    /// with such attachments (every group where the trace does not say).
    pub fn groups(&self) -> PipelineGroups {
        let rasterization = !self
            .state
            .as_ref()
            .is_some_and(|s| s.rasterizer_discard_enable)
            || self
                .dynamic_states
                .contains(DYNAMIC_RASTERIZER_DISCARD_ENABLE);
        let attachments = self.attachments.unwrap_or(RenderAttachments {
            color: true,
            depth_stencil: true,
        });
        PipelineGroups {
            tessellation: self.shaders[1].is_some() || self.shaders[2].is_some(),
            rasterization,
            depth_stencil: attachments.depth_stencil,
            color_blend: attachments.color,
        }
    }
}

/// The parts of a graphics pipeline a library may hold
/// (`VkGraphicsPipelineLibraryFlagBitsEXT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum PipelinePart {
    /// Vertex input and input assembly: the topology.
    VertexInput = 0x1,
    /// The vertex, tessellation and geometry shaders and rasterization.
    PreRasterization = 0x2,
    /// The fragment shader, depth/stencil and multisampling.
    FragmentShader = 0x4,
    /// Colour blending and the attachments' formats.
    FragmentOutput = 0x8,
}

impl PipelinePart {
    /// Every part: what a complete pipeline defines.
    pub const ALL: u32 = 0xf;

    /// The parts, one by one.
    pub const EACH: [PipelinePart; 4] = [
        PipelinePart::VertexInput,
        PipelinePart::PreRasterization,
        PipelinePart::FragmentShader,
        PipelinePart::FragmentOutput,
    ];

    /// The parts a pipeline recorded with `library_parts` and `has_libraries` defines
    /// itself: its `VkGraphicsPipelineLibraryCreateInfoEXT` flags, else every part
    /// (those its libraries hold are then taken from them).
    pub fn own(library_parts: u32, has_libraries: bool) -> u32 {
        match (library_parts, has_libraries) {
            (0, false) => Self::ALL,
            (parts, _) => parts & Self::ALL,
        }
    }
}

impl Pipeline {
    /// Whether it defines `part` itself.
    fn defines(&self, part: PipelinePart) -> bool {
        self.parts & part as u32 != 0
    }

    /// The pipeline linked from `self` (its own parts) and `libraries`, as
    /// `vk_graphics_pipeline_state_fill` merges them: each part (and its static state)
    /// from whichever defines it (the pipeline first), its shaders slot by slot, the
    /// dynamic states of all.
    pub fn link<'a>(mut self, libraries: impl IntoIterator<Item = &'a Pipeline>) -> Pipeline {
        for lib in libraries {
            for part in PipelinePart::EACH {
                if lib.defines(part) && !self.defines(part) {
                    if let (Some(mine), Some(theirs)) = (&mut self.state, &lib.state) {
                        crate::pipeline_state::take_part(mine, theirs, part);
                    }
                }
            }
            if lib.state.is_none() {
                self.state = None;
            }
            if lib.defines(PipelinePart::VertexInput) && !self.defines(PipelinePart::VertexInput) {
                self.topology = lib.topology;
                self.vk_topology = lib.vk_topology;
            }
            if lib.defines(PipelinePart::FragmentOutput)
                && !self.defines(PipelinePart::FragmentOutput)
            {
                self.rp_attachments = lib.rp_attachments;
                self.attachments = lib.attachments;
            }
            self.view_mask |= lib.view_mask;
            for (mine, theirs) in self.shaders.iter_mut().zip(&lib.shaders) {
                if mine.is_none() {
                    mine.clone_from(theirs);
                }
            }
            for state in lib.dynamic_states.as_slice() {
                self.dynamic_states.add(*state);
            }
            self.parts |= lib.parts;
        }
        self
    }
}

/// Events placed in one block of the model's memory.
const EVENTS_PER_BLOCK: usize = 4096;

/// The format taken for a view the trace never created: `VK_FORMAT_B8G8R8A8_UNORM`.
const FALLBACK_FORMAT: u32 = 44;

/// `VK_ATTACHMENT_UNUSED`.
pub const ATTACHMENT_UNUSED: u32 = u32::MAX;
/// `VK_ATTACHMENT_LOAD_OP_LOAD`.
pub const LOAD_OP_LOAD: u32 = 0;
/// `VK_ATTACHMENT_LOAD_OP_CLEAR`.
pub const LOAD_OP_CLEAR: u32 = 1;
/// `VK_ATTACHMENT_STORE_OP_STORE`.
pub const STORE_OP_STORE: u32 = 0;

/// A render pass attachment's description.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PassAttachment {
    /// `VkFormat`.
    pub format: u32,
    /// `VkAttachmentLoadOp` of colour or depth.
    pub load_op: u32,
    /// `VkAttachmentStoreOp` of colour or depth.
    pub store_op: u32,
    /// `VkAttachmentLoadOp` of stencil.
    pub stencil_load_op: u32,
    /// `VkImageLayout` it starts the pass in.
    pub initial_layout: u32,
    /// `VkImageLayout` it ends the pass in.
    pub final_layout: u32,
    /// Its stencil aspect's initial and final layouts where the program named them
    /// (`VkAttachmentDescriptionStencilLayout`).
    pub own_stencil_layouts: Option<(u32, u32)>,
}

impl PassAttachment {
    /// The layout its stencil aspect starts the pass in (`vk_att_desc_stencil_layout`):
    /// the one the program named for it, else the initial layout, where the format has
    /// stencil; else undefined.
    pub fn initial_stencil_layout(&self) -> u32 {
        let layout = self
            .own_stencil_layouts
            .map_or(self.initial_layout, |l| l.0);
        stencil_layout_of(self.format, layout)
    }

    /// The layout its stencil aspect ends the pass in, likewise.
    pub fn final_stencil_layout(&self) -> u32 {
        let layout = self.own_stencil_layouts.map_or(self.final_layout, |l| l.1);
        stencil_layout_of(self.format, layout)
    }
}

/// `VK_IMAGE_LAYOUT_ATTACHMENT_FEEDBACK_LOOP_OPTIMAL_EXT`.
pub const LAYOUT_FEEDBACK_LOOP: u32 = 1_000_339_000;

/// Whether `format` has a stencil aspect (`VK_FORMAT_S8_UINT` through
/// `VK_FORMAT_D32_SFLOAT_S8_UINT`).
pub fn format_has_stencil(format: u32) -> bool {
    matches!(format, 127..=130)
}

/// Whether `format` has a depth aspect (`VK_FORMAT_D16_UNORM` through
/// `VK_FORMAT_D32_SFLOAT_S8_UINT`, but for `VK_FORMAT_S8_UINT`).
pub fn format_has_depth(format: u32) -> bool {
    matches!(format, 124..=126 | 128..=130)
}

/// The layout a reference or description gives the stencil aspect of `format` when
/// it names no separate one (`vk_att_ref_stencil_layout`, `vk_att_desc_stencil_layout`).
fn stencil_layout_of(format: u32, layout: u32) -> u32 {
    if format_has_stencil(format) {
        layout
    } else {
        0
    }
}

/// A subpass dependency (`VkSubpassDependency(2)`): stage and access masks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct Dependency {
    pub src_subpass: u32,
    pub dst_subpass: u32,
    pub src_stages: u64,
    pub dst_stages: u64,
    pub src_access: u64,
    pub dst_access: u64,
}

/// A subpass: the attachments it renders to, by index into the pass's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Subpass {
    /// Its view mask; 0 without multiview.
    pub view_mask: u32,
    /// Colour attachments ([`ATTACHMENT_UNUSED`] where unused).
    pub colors: Vec<u32>,
    /// The attachment each colour attachment resolves to, where it resolves.
    pub resolves: Vec<Option<u32>>,
    /// The depth/stencil attachment.
    pub depth_stencil: Option<u32>,
    /// The attachment the depth/stencil attachment resolves to
    /// (`VkSubpassDescriptionDepthStencilResolve`), and how its depth and stencil
    /// resolve (`VkResolveModeFlagBits`, 0 for none).
    pub depth_stencil_resolve: Option<(u32, u32, u32)>,
    /// Every attachment it refers to with the layouts it wants it in: inputs,
    /// colours, resolves, then depth/stencil (Mesa's `vk_subpass` order).
    pub references: Vec<AttachmentUse>,
    /// It reads its depth/stencil attachment as an input attachment: Mesa's common
    /// code gives the pipelines made for it
    /// `VK_PIPELINE_CREATE_DEPTH_STENCIL_ATTACHMENT_FEEDBACK_LOOP_BIT_EXT`
    /// (`vk_subpass::pipeline_flags`).
    pub depth_stencil_feedback_loop: bool,
}

/// How a subpass uses an attachment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AttachmentRole {
    /// An input attachment.
    #[default]
    Input,
    /// A colour attachment.
    Color,
    /// A colour attachment's resolve target.
    Resolve,
    /// The depth/stencil attachment.
    DepthStencil,
    /// The depth/stencil attachment's resolve target.
    DepthStencilResolve,
}

/// A subpass's reference to an attachment as Mesa's common render-pass code keeps it
/// (`vk_subpass_attachment`): the layout its colour or depth aspect is wanted in and
/// the one its stencil aspect is (`VK_IMAGE_LAYOUT_UNDEFINED` for formats without
/// stencil).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AttachmentUse {
    /// Index into the pass's attachments.
    pub attachment: u32,
    /// How the subpass uses it.
    pub role: AttachmentRole,
    /// `VkImageLayout` of its colour or depth aspect.
    pub layout: u32,
    /// `VkImageLayout` of its stencil aspect.
    pub stencil_layout: u32,
}

impl Subpass {
    /// Its views, 1 (view 0) without multiview, as Mesa's common code counts them.
    fn views(&self) -> u32 {
        self.view_mask.max(1)
    }

    /// Whether it refers to attachment `a` in any role.
    fn refers_to(&self, a: u32) -> bool {
        self.references.iter().any(|r| r.attachment == a)
    }
}

/// What Mesa's common render-pass code loads as a subpass begins (`begin_subpass`),
/// from the views of each attachment that earlier subpasses loaded
/// (`vk_attachment_state::views_loaded`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubpassLoads {
    /// For each colour attachment, whether its load op applies: none of the subpass's
    /// views of it was loaded before (else it is loaded).
    pub colors_fresh: Vec<bool>,
    /// Whether the depth/stencil attachment's load ops apply.
    pub depth_stencil_fresh: bool,
    /// The attachments whose views the subpass refers to but its rendering does not
    /// load, loaded here with a clear, and the views cleared: `load_attachment`'s
    /// rendering of the attachment alone, before the subpass's own. A multiview
    /// subpass's new views of an attachment an earlier subpass drew are; an input
    /// attachment first used as input alone would be, but the spec keeps its load op
    /// from clearing (`VUID-VkSubpassDescription-loadOp-00846`).
    pub cleared_alone: Vec<(u32, u32)>,
}

/// A render pass as the driver model needs it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderPass {
    /// The attachments.
    pub attachments: Vec<PassAttachment>,
    /// The subpasses.
    pub subpasses: Vec<Subpass>,
    /// The subpass dependencies.
    pub dependencies: Vec<Dependency>,
}

impl RenderPass {
    /// What subpass `index` loads (`begin_subpass`): each attachment's views are
    /// loaded once, by the first subpass that refers to them. A colour or
    /// depth/stencil attachment none of whose views here was loaded before takes its
    /// load op in the subpass's rendering; a resolve target counts as loaded by its
    /// resolve (a depth/stencil one where it resolves every aspect the attachment has);
    /// any other view not loaded yet (a view a multiview subpass adds) is loaded on its
    /// own, by a rendering that clears it where its load op clears (`load_attachment`).
    pub fn loads(&self, index: usize) -> SubpassLoads {
        let mut loaded = vec![0u32; self.attachments.len()];
        let mut plan = SubpassLoads::default();
        for (i, subpass) in self.subpasses.iter().enumerate().take(index + 1) {
            let views = subpass.views();
            let mut load_fresh = |a: u32| match loaded.get_mut(a as usize) {
                Some(l) if *l & views == 0 => {
                    *l |= views;
                    true
                }
                _ => false,
            };
            let colors_fresh: Vec<bool> = subpass.colors.iter().map(|&a| load_fresh(a)).collect();
            let depth_stencil_fresh = subpass.depth_stencil.is_some_and(&mut load_fresh);
            let mut mark = |a: u32| {
                if let Some(l) = loaded.get_mut(a as usize) {
                    *l |= views;
                }
            };
            for &to in subpass.resolves.iter().flatten() {
                mark(to);
            }
            if let (Some(ds), Some((to, depth, stencil))) =
                (subpass.depth_stencil, subpass.depth_stencil_resolve)
            {
                let format_of = |a: u32| self.attachments.get(a as usize).map_or(0, |d| d.format);
                let (ds_format, to_format) = (format_of(ds), format_of(to));
                let resolves_depth = depth != 0 && format_has_depth(to_format);
                let resolves_stencil = stencil != 0 && format_has_stencil(to_format);
                if resolves_depth == format_has_depth(ds_format)
                    && resolves_stencil == format_has_stencil(ds_format)
                {
                    mark(to);
                }
            }
            let mut cleared_alone = Vec::new();
            for r in &subpass.references {
                let (Some(l), Some(desc)) = (
                    loaded.get_mut(r.attachment as usize),
                    self.attachments.get(r.attachment as usize),
                ) else {
                    continue;
                };
                let fresh = views & !*l;
                if fresh == 0 {
                    continue;
                }
                *l |= fresh;
                // Colour or depth: every format but stencil alone.
                let clears_main = (format_has_depth(desc.format)
                    || !format_has_stencil(desc.format))
                    && desc.load_op == LOAD_OP_CLEAR;
                let clears_stencil =
                    format_has_stencil(desc.format) && desc.stencil_load_op == LOAD_OP_CLEAR;
                if clears_main || clears_stencil {
                    cleared_alone.push((r.attachment, fresh));
                }
            }
            if i == index {
                plan = SubpassLoads {
                    colors_fresh,
                    depth_stencil_fresh,
                    cleared_alone,
                };
            }
        }
        plan
    }

    /// Whether attachment `a`'s store op applies in subpass `index`: no later subpass
    /// refers to it in any of this one's views (`vk_subpass_attachment::last_subpass`);
    /// else it is stored for the next.
    fn stores_here(&self, a: u32, index: usize) -> bool {
        let Some(subpass) = self.subpasses.get(index) else {
            return true;
        };
        let later = self
            .subpasses
            .iter()
            .skip(index + 1)
            .filter(|s| s.refers_to(a))
            .fold(0, |views, s| views | s.views());
        later & subpass.views() == 0
    }
}

/// Every object the replay tracks, by the trace's handle ids.
#[derive(Debug, Default)]
pub struct Objects {
    next_addr: u64,
    memories: HandleMap<u64>,
    /// Each allocation's size.
    memory_sizes: HandleMap<u64>,
    /// Buffers placed in memory of their own, by the allocation the trace bound them
    /// to (see [`Objects::bind_buffer`]).
    mirrors: HandleMap<Vec<Mirror>>,
    buffers: HandleMap<u64>,
    /// Each buffer's size and what it needs of its memory on NVK.
    buffer_made: HandleMap<MadeBuffer>,
    events: HandleMap<u64>,
    event_block: u64,
    images: HandleMap<Image>,
    image_views: HandleMap<(u64, ViewRange)>,
    framebuffers: HandleMap<Framebuffer>,
    /// Render passes.
    pub render_passes: HandleMap<RenderPass>,
    /// Graphics pipelines.
    pub pipelines: HandleMap<Pipeline>,
    /// Compute pipelines' invocations a workgroup (their shaders' workgroup sizes).
    pub compute_pipelines: HandleMap<u32>,
    /// Query pools, placed in GPU memory.
    pub query_pools: HandleMap<QueryPool>,
    /// Swapchains, and the images each handed out.
    swapchains: HandleMap<(SwapchainInfo, Vec<u64>)>,
    /// Where the next swapchain image is placed.
    next_swapchain_addr: u64,
}

/// What vkCreateBuffer made: the buffer's size, and what it needs of its memory on NVK.
#[derive(Clone, Copy, Debug)]
struct MadeBuffer {
    size: u64,
    needs: MemoryNeeds,
}

/// A buffer bound to memory of its own because NVK's needs do not fit the place the
/// trace bound it to: the captured range it stands for, and where it lies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mirror {
    /// The buffer.
    pub buffer: u64,
    /// Its captured offset in the allocation.
    pub offset: u64,
    /// Bytes of the allocation it follows from there.
    pub len: u64,
    /// Its own address.
    pub addr: u64,
}

/// `VkObjectType` values of the objects [`Objects`] keeps.
/// The `VkObjectType` values of the objects a `DestroyObject` record names that the
/// replay keeps.
pub(crate) mod object_type {
    pub const DEVICE_MEMORY: u32 = 8;
    pub const BUFFER: u32 = 9;
    pub const IMAGE: u32 = 10;
    pub const EVENT: u32 = 11;
    pub const QUERY_POOL: u32 = 12;
    pub const IMAGE_VIEW: u32 = 14;
    pub const RENDER_PASS: u32 = 18;
    pub const PIPELINE: u32 = 19;
    pub const DESCRIPTOR_POOL: u32 = 22;
    pub const FRAMEBUFFER: u32 = 24;
    pub const COMMAND_POOL: u32 = 25;
    pub const SWAPCHAIN_KHR: u32 = 1_000_001_000;
}

/// A bit per colour attachment whose format is not `VK_FORMAT_UNDEFINED` (Mesa's
/// `rp.attachments` colour bits for a dynamic-rendering pipeline).
pub fn attachment_mask(formats: impl IntoIterator<Item = u32>) -> u32 {
    formats
        .into_iter()
        .take(32)
        .enumerate()
        .filter(|(_, f)| *f != 0)
        .fold(0, |m, (i, _)| m | 1 << i)
}

/// A framebuffer: its attachments' views and its size.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Framebuffer {
    /// The image views, by attachment index.
    pub views: Vec<u64>,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Layers.
    pub layers: u32,
}

impl Objects {
    fn place(&mut self, size: u64) -> u64 {
        if self.next_addr == 0 {
            self.next_addr = HEAP_BASE;
        }
        let addr = self.next_addr;
        // 64 KiB-aligned, with a guard gap.
        self.next_addr = self
            .next_addr
            .wrapping_add(size.saturating_add(0x1_ffff) & !0xffff);
        addr
    }

    /// vkAllocateMemory.
    pub fn allocate_memory(&mut self, memory: u64, size: u64) {
        let addr = self.place(size.min(1 << 40));
        self.memories.insert(memory, addr);
        self.memory_sizes.insert(memory, size);
        self.mirrors.remove(&memory);
    }

    /// The GPU address of `offset` in `memory`.
    pub fn memory_addr(&self, memory: u64, offset: u64) -> Option<u64> {
        self.memories
            .get(&memory)
            .map(|base| base.wrapping_add(offset))
    }

    /// vkBindBufferMemory, as a replay on NVK binds it (`replay --device`,
    /// `device::memory::Memory::place`): at its captured place when what NVK needs of
    /// it fits there (nvk_BindBufferMemory2: the memory's address plus the offset),
    /// else in memory of its own, placed anew, that follows what the program writes to
    /// its captured range. The capturing driver may have asked less: lavapipe aligns
    /// uniform buffers to 16 bytes, NVK before Turing to 256, so a buffer that fills
    /// its allocation on lavapipe overruns it on NVK. Returns such a buffer's mirror,
    /// whose captured range's contents so far the caller copies to its address.
    pub fn bind_buffer(&mut self, buffer: u64, memory: u64, offset: u64) -> Option<Mirror> {
        let base = self.memory_addr(memory, offset)?;
        let allocation = self.memory_sizes.get(&memory).copied().unwrap_or(0);
        let needs = self.buffer_made.get(&buffer).map(|made| made.needs);
        if needs.is_none_or(|needs| needs.fit_at(offset, allocation)) {
            self.buffers.insert(buffer, base);
            return None;
        }
        let size = needs.map_or(0, |n| n.size);
        let mirror = Mirror {
            buffer,
            offset,
            len: size.min(allocation.saturating_sub(offset)),
            addr: self.place(size.min(1 << 40)),
        };
        self.buffers.insert(buffer, mirror.addr);
        self.mirrors.entry(memory).or_default().push(mirror);
        Some(mirror)
    }

    /// The buffers bound to memory of their own that follow `memory`'s contents.
    pub fn mirrors(&self, memory: u64) -> &[Mirror] {
        self.mirrors.get(&memory).map_or(&[], Vec::as_slice)
    }

    /// vkCreateBuffer: a buffer of `size` bytes that needs `needs` of its memory on
    /// NVK ([`driver::nvk::Device::buffer_memory_needs`]).
    pub fn create_buffer(&mut self, buffer: u64, size: u64, needs: MemoryNeeds) {
        self.buffer_made.insert(buffer, MadeBuffer { size, needs });
    }

    /// The address and size of `buffer` from `offset` (to its end, as VK_WHOLE_SIZE
    /// binds it), or a null range when it is not bound to memory.
    pub fn buffer_range(&self, buffer: u64, offset: u64) -> (u64, u32) {
        match self.buffer_addr(buffer, offset) {
            Some(addr) => {
                let size = self.buffer_made.get(&buffer).map_or(0, |made| made.size);
                (
                    addr,
                    size.saturating_sub(offset).min(u64::from(u32::MAX)) as u32,
                )
            }
            None => (0, 0),
        }
    }

    /// The address and range a `VkDescriptorBufferInfo` names: `range` bytes of `buffer`
    /// from `offset` (`VK_WHOLE_SIZE`: to the buffer's end); nothing for a null buffer
    /// (a null descriptor) or one not bound to memory. Mirrors nvk_buffer_addr_range.
    pub fn buffer_info_range(&self, buffer: u64, offset: u64, range: u64) -> (u64, u32) {
        if buffer == 0 {
            return (0, 0);
        }
        let (addr, rest) = self.buffer_range(buffer, offset);
        let range = if range == u64::MAX {
            rest
        } else {
            range.min(u64::from(u32::MAX)) as u32
        };
        (addr, if addr == 0 { 0 } else { range })
    }

    /// The GPU address of `offset` in `buffer`, if it is bound (wrapping, as GPU
    /// addresses do: an offset past the buffer is the GPU model's to reject).
    pub fn buffer_addr(&self, buffer: u64, offset: u64) -> Option<u64> {
        self.buffers
            .get(&buffer)
            .map(|base| base.wrapping_add(offset))
    }

    /// The GPU address of `event`'s word: 16 bytes each, placed the first time an
    /// event is used (vkCreateEvent is not recorded as a typed record).
    pub fn event_addr(&mut self, event: u64) -> u64 {
        if let Some(addr) = self.events.get(&event) {
            return *addr;
        }
        if self.events.len() % EVENTS_PER_BLOCK == 0 {
            self.event_block = self.place(EVENTS_PER_BLOCK as u64 * 16);
        }
        let addr = self.event_block + (self.events.len() % EVENTS_PER_BLOCK) as u64 * 16;
        self.events.insert(event, addr);
        addr
    }

    /// A `vkDestroy*` of an object of `VkObjectType` `kind`: the handle names nothing
    /// until an object is made with it again (drivers hand freed handles out again,
    /// and a swapchain image may come back with a destroyed image's handle). Device
    /// memory goes through [`Objects::free_memory`], whose ranges the caller releases.
    pub fn destroy(&mut self, kind: u32, handle: u64) {
        match kind {
            object_type::BUFFER => {
                self.buffers.remove(&handle);
                self.buffer_made.remove(&handle);
                for mirrors in self.mirrors.values_mut() {
                    mirrors.retain(|m| m.buffer != handle);
                }
            }
            object_type::IMAGE => {
                self.images.remove(&handle);
            }
            object_type::EVENT => {
                // Its word stays placed: events are placed in blocks, never freed.
                self.events.remove(&handle);
            }
            object_type::QUERY_POOL => {
                self.query_pools.remove(&handle);
            }
            object_type::IMAGE_VIEW => {
                self.image_views.remove(&handle);
            }
            object_type::RENDER_PASS => {
                self.render_passes.remove(&handle);
            }
            object_type::PIPELINE => {
                self.pipelines.remove(&handle);
            }
            object_type::FRAMEBUFFER => {
                self.framebuffers.remove(&handle);
            }
            object_type::SWAPCHAIN_KHR => self.destroy_swapchain(handle),
            _ => {}
        }
    }

    /// vkFreeMemory: the allocation goes, with the buffers that mirror it. Returns the
    /// GPU ranges they held, each through the end of its last page: [`Objects::place`]
    /// gives every allocation room of its own, 64 KiB-aligned with a gap after it, so
    /// those pages hold nothing else.
    pub fn free_memory(&mut self, memory: u64) -> Vec<(u64, u64)> {
        let size = self.memory_sizes.remove(&memory).unwrap_or(0);
        let own = self.memories.remove(&memory).map(|addr| (addr, size));
        let mirrors = self.mirrors.remove(&memory).unwrap_or_default();
        let to_page_end = |(addr, len): (u64, u64)| (addr, len.min(1 << 40).next_multiple_of(4096));
        own.into_iter()
            .chain(mirrors.iter().map(|m| (m.addr, m.len)))
            .map(to_page_end)
            .collect()
    }

    /// vkCreateSwapchainKHR.
    pub fn create_swapchain(&mut self, swapchain: u64, info: SwapchainInfo) {
        self.destroy_swapchain(swapchain);
        self.swapchains.insert(swapchain, (info, Vec::new()));
    }

    /// vkGetSwapchainImagesKHR: each image the program is handed is an image of the
    /// swapchain's format, extent and layers (NVK's WSI makes them optimally tiled,
    /// single-sampled, one level), placed in memory of its own. An image handed out
    /// before keeps its place.
    pub fn swapchain_images(&mut self, swapchain: u64, images: &[u64]) {
        let Some((info, known)) = self.swapchains.get(&swapchain).cloned() else {
            return;
        };
        let layers = info.layers.max(1);
        for &image in images.iter().filter(|i| **i != 0) {
            if known.contains(&image) && self.images.contains_key(&image) {
                continue;
            }
            let mut desc = Image::stand_in(info.format, [info.extent[0], info.extent[1], 1]);
            desc.array_layers = layers;
            let bytes = u64::from(info.extent[0])
                .saturating_mul(u64::from(info.extent[1]))
                .saturating_mul(u64::from(layers))
                .saturating_mul(16);
            if self.next_swapchain_addr == 0 {
                self.next_swapchain_addr = SWAPCHAIN_BASE;
            }
            desc.addr = self.next_swapchain_addr;
            self.next_swapchain_addr = self
                .next_swapchain_addr
                .wrapping_add(bytes.min(1 << 36).saturating_add(0x1_ffff) & !0xffff);
            self.images.insert(image, desc);
            if let Some((_, list)) = self.swapchains.get_mut(&swapchain) {
                if !list.contains(&image) {
                    list.push(image);
                }
            }
        }
    }

    /// vkDestroySwapchainKHR: its images go with it.
    pub fn destroy_swapchain(&mut self, swapchain: u64) {
        if let Some((_, images)) = self.swapchains.remove(&swapchain) {
            for image in images {
                self.images.remove(&image);
            }
        }
    }

    /// vkCreateImage.
    pub fn create_image(&mut self, image: u64, desc: Image) {
        self.images.insert(image, desc);
    }

    /// What the trace said of `image`.
    pub fn image(&self, image: u64) -> Option<Image> {
        self.images.get(&image).copied()
    }

    /// vkBindImageMemory, on a GPU of 3D class `eng3d`. A block-linear image is mapped
    /// at an address range of its own, as NVK maps every image whose NIL layout has a
    /// PTE kind (nvk_image's per-plane `va`, bound to the memory in
    /// nvk_image_plane_bind): two images bound at one place of one memory, one after
    /// the other, are two addresses on NVK's side. A linear image is the memory's
    /// address at the offset where what NVK needs of it fits there
    /// ([`Image::linear_memory_needs`]); else, as a replay on NVK binds it
    /// (`device::memory::Memory::place`), it is in memory of its own, placed anew. The
    /// capturing driver may have asked less: lavapipe's linear rows are closer than
    /// NVK's 128 bytes, and GTK 4 places a small texture in what lavapipe asked.
    pub fn bind_image(&mut self, image: u64, memory: u64, offset: u64, eng3d: u16) {
        let Some(addr) = self.memory_addr(memory, offset) else {
            return;
        };
        let Some(desc) = self.images.get(&image).copied() else {
            return;
        };
        let addr = if desc.linear {
            let needs = desc.linear_memory_needs(eng3d);
            let allocation = self.memory_sizes.get(&memory).copied().unwrap_or(0);
            match needs.fit_at(offset, allocation) {
                true => addr,
                false => self.place(needs.size.clamp(1, 1 << 40)),
            }
        } else {
            let layers = u64::from(desc.array_layers.max(1));
            let bytes = u64::from(desc.level(0).array_stride).saturating_mul(layers);
            self.place(bytes.clamp(1, 1 << 40))
        };
        if let Some(desc) = self.images.get_mut(&image) {
            desc.addr = addr;
        }
    }

    /// vkCreateImageView.
    pub fn create_image_view(&mut self, view: u64, image: u64, range: ViewRange) {
        self.image_views.insert(view, (image, range));
    }

    /// vkCreateFramebuffer: its attachments' views.
    pub fn create_framebuffer(&mut self, framebuffer: u64, fb: Framebuffer) {
        self.framebuffers.insert(framebuffer, fb);
    }

    /// A framebuffer's whole area and its layers, as a secondary command buffer that
    /// continues a render pass resumes it.
    pub fn framebuffer_area(&self, framebuffer: u64) -> Option<(RenderArea, u32)> {
        self.framebuffers.get(&framebuffer).map(|fb| {
            let area = RenderArea {
                x: 0,
                y: 0,
                width: fb.width,
                height: fb.height,
            };
            (area, fb.layers.max(1))
        })
    }

    /// The image and subresource `view` shows, for a rendering of `area`. An image the
    /// trace never created (a swapchain's) is taken as a single-sampled, optimally
    /// tiled image of the view's format covering the render area, at address 0.
    pub fn view_target(&self, view: u64, area: &RenderArea) -> Option<(Image, ViewRange)> {
        if view == 0 {
            return None;
        }
        let (image, range) = self.image_views.get(&view).copied().unwrap_or((
            0,
            ViewRange {
                format: FALLBACK_FORMAT,
                ..ViewRange::default()
            },
        ));
        let image = self.images.get(&image).copied().unwrap_or(Image::stand_in(
            range.format,
            [
                (area.x.max(0) as u32).saturating_add(area.width).max(1),
                (area.y.max(0) as u32).saturating_add(area.height).max(1),
                1,
            ],
        ));
        Some((image, range))
    }

    /// Whether `area` covers each attachment's view of `framebuffer` whole (its mip
    /// level's extent, from the origin): where it does, Mesa's common render-pass code
    /// lets a cleared attachment leave its initial layout inside the rendering.
    pub fn covers_views(&self, framebuffer: u64, area: &RenderArea) -> Vec<bool> {
        let Some(fb) = self.framebuffers.get(&framebuffer) else {
            return Vec::new();
        };
        fb.views
            .iter()
            .map(|view| {
                let Some((image, range)) = self.view_target(*view, area) else {
                    return false;
                };
                let level = |e: u32| (e >> range.base_mip_level.min(31)).max(1);
                area.x == 0
                    && area.y == 0
                    && area.width == level(image.extent[0])
                    && area.height == level(image.extent[1])
            })
            .collect()
    }

    /// The rendering Mesa's common render-pass code begins for subpass `index` of
    /// `pass` on `framebuffer`: the subpass's attachments, each loaded with its load
    /// op where the pass first uses it (and loaded otherwise), stored with its store
    /// op where the pass last uses it (and stored otherwise).
    pub fn subpass_rendering(
        &self,
        pass: &RenderPass,
        framebuffer: u64,
        index: usize,
        area: RenderArea,
        clear_values: &[[u32; 4]],
    ) -> RenderingInfo {
        let loads = pass.loads(index);
        self.rendering_loading(pass, &loads, framebuffer, index, area, clear_values)
    }

    /// What subpass `index` of `pass` begins with on `framebuffer`: the renderings that
    /// clear attachments alone (`attachment_clears`), then its own
    /// ([`Objects::subpass_rendering`]), as `begin_subpass` makes them.
    pub fn subpass_begin(
        &self,
        pass: &RenderPass,
        framebuffer: u64,
        index: usize,
        area: RenderArea,
        clear_values: &[[u32; 4]],
    ) -> (Vec<RenderingInfo>, RenderingInfo) {
        let loads = pass.loads(index);
        (
            self.attachment_clears(pass, &loads, framebuffer, area, clear_values),
            self.rendering_loading(pass, &loads, framebuffer, index, area, clear_values),
        )
    }

    /// [`Objects::subpass_rendering`], the subpass loading as `loads` says.
    fn rendering_loading(
        &self,
        pass: &RenderPass,
        loads: &SubpassLoads,
        framebuffer: u64,
        index: usize,
        area: RenderArea,
        clear_values: &[[u32; 4]],
    ) -> RenderingInfo {
        let Some(subpass) = pass.subpasses.get(index) else {
            return RenderingInfo::views(0);
        };
        let views = self.framebuffers.get(&framebuffer).map(|fb| &fb.views);
        let last_here = |a: u32| pass.stores_here(a, index);
        let clear_of = |a: u32, op: u32, fresh: bool| {
            (op == LOAD_OP_CLEAR && fresh)
                .then(|| clear_values.get(a as usize).copied().unwrap_or_default())
        };
        let target = |a: u32| {
            let view = views.and_then(|v| v.get(a as usize)).copied()?;
            self.view_target(view, &area)
        };
        let resolve_of = |i: usize| subpass.resolves.get(i).copied().flatten();
        let colors = subpass
            .colors
            .iter()
            .enumerate()
            .map(|(i, &a)| {
                let desc = pass.attachments.get(a as usize)?;
                let (image, view) = target(a)?;
                let fresh = loads.colors_fresh.get(i).copied().unwrap_or(false);
                Some(ColorAttachment {
                    image,
                    view,
                    clear: clear_of(a, desc.load_op, fresh),
                    resolve_mode: match resolve_of(i) {
                        Some(_) => implied_resolve_mode(
                            NumericType::of_vk(desc.format) == NumericType::Float,
                        ),
                        None => 0,
                    },
                    resolve_to: resolve_of(i).and_then(target),
                    loads: !fresh || desc.load_op == LOAD_OP_LOAD,
                    stores: !last_here(a) || desc.store_op == STORE_OP_STORE,
                })
            })
            .collect();
        // The modes of the depth/stencil resolve, each where its target has the aspect.
        let resolve_aspects = subpass.depth_stencil_resolve.map(|(to, depth, stencil)| {
            let format = pass.attachments.get(to as usize).map_or(0, |d| d.format);
            (
                if format_has_depth(format) { depth } else { 0 },
                if format_has_stencil(format) {
                    stencil
                } else {
                    0
                },
            )
        });
        let depth_stencil = subpass.depth_stencil.and_then(|a| {
            let desc = pass.attachments.get(a as usize)?;
            let (image, view) = target(a)?;
            Some(DepthStencilAttachment {
                image,
                view,
                depth_clear: clear_of(a, desc.load_op, loads.depth_stencil_fresh).map(|v| v[0]),
                stencil_clear: clear_of(a, desc.stencil_load_op, loads.depth_stencil_fresh)
                    .map(|v| v[1]),
                // Each aspect the resolve target has resolves by its mode
                // (begin_subpass), both into the target's view.
                depth_resolve_mode: resolve_aspects.map_or(0, |(depth, _)| depth),
                stencil_resolve_mode: resolve_aspects.map_or(0, |(_, stencil)| stencil),
                resolve_to: subpass
                    .depth_stencil_resolve
                    .and_then(|(to, _, _)| target(to)),
                aspects: DepthStencilAspects::of_format(desc.format),
            })
        });
        // The framebuffer's layers, or one under multiview (begin_subpass).
        let is_multiview = pass.subpasses.iter().any(|s| s.view_mask != 0);
        let layer_count = match self.framebuffers.get(&framebuffer) {
            Some(fb) if !is_multiview => fb.layers.max(1),
            _ => 1,
        };
        RenderingInfo {
            flags: 0,
            area,
            layer_count,
            view_mask: subpass.view_mask,
            colors,
            depth_stencil,
        }
    }

    /// The renderings Mesa's common render-pass code makes, before a subpass's own, of
    /// each attachment whose views the subpass clears outside its rendering
    /// ([`SubpassLoads::cleared_alone`]): the attachment alone, as the colour or the
    /// depth/stencil attachment, loaded by its load ops and stored (`load_attachment`).
    fn attachment_clears(
        &self,
        pass: &RenderPass,
        loads: &SubpassLoads,
        framebuffer: u64,
        area: RenderArea,
        clear_values: &[[u32; 4]],
    ) -> Vec<RenderingInfo> {
        let Some(fb) = self.framebuffers.get(&framebuffer) else {
            return Vec::new();
        };
        let is_multiview = pass.subpasses.iter().any(|s| s.view_mask != 0);
        loads
            .cleared_alone
            .iter()
            .filter_map(|&(a, views)| {
                let desc = pass.attachments.get(a as usize)?;
                let (image, view) = self.view_target(*fb.views.get(a as usize)?, &area)?;
                let clear = clear_values.get(a as usize).copied().unwrap_or_default();
                let cleared = |op: u32| (op == LOAD_OP_CLEAR).then_some(clear);
                let mut info = RenderingInfo {
                    flags: 0,
                    area,
                    layer_count: if is_multiview { 1 } else { fb.layers.max(1) },
                    view_mask: if is_multiview { views } else { 0 },
                    colors: Vec::new(),
                    depth_stencil: None,
                };
                if format_has_depth(desc.format) || format_has_stencil(desc.format) {
                    info.depth_stencil = Some(DepthStencilAttachment {
                        image,
                        view,
                        depth_clear: cleared(desc.load_op).map(|v| v[0]),
                        stencil_clear: cleared(desc.stencil_load_op).map(|v| v[1]),
                        depth_resolve_mode: 0,
                        stencil_resolve_mode: 0,
                        resolve_to: None,
                        aspects: DepthStencilAspects::of_format(desc.format),
                    });
                } else {
                    info.colors.push(Some(ColorAttachment {
                        image,
                        view,
                        clear: cleared(desc.load_op),
                        resolve_mode: 0,
                        resolve_to: None,
                        loads: desc.load_op == LOAD_OP_LOAD,
                        stores: true,
                    }));
                }
                Some(info)
            })
            .collect()
    }

    /// vkCreateQueryPool.
    pub fn create_query_pool(&mut self, pool: u64, query_type: u32, count: u32, statistics: u32) {
        // A type NVK does not support is taken as occlusion.
        let kind = QueryType::of_vk(query_type, statistics).unwrap_or(QueryType::Occlusion);
        let count = count.min(1 << 20);
        let mut query_pool = QueryPool {
            addr: 0,
            kind,
            count,
        };
        query_pool.addr = self.place(query_pool.size());
        self.query_pools.insert(pool, query_pool);
    }
}

/// A subpass's attachment references as Mesa's common code keeps them
/// (`vk_common_CreateRenderPass2`): inputs, colours, resolves, depth/stencil, then its
/// resolve target, each with its stencil layout (the one the program named, else its
/// layout, where the format has stencil: `vk_att_ref_stencil_layout`), and an
/// attachment read as input while written as colour or as depth/stencil (a
/// self-dependency) wanted in `VK_IMAGE_LAYOUT_ATTACHMENT_FEEDBACK_LOOP_OPTIMAL_EXT`
/// by both references; and whether the depth/stencil attachment is so read.
fn subpass_references(
    s: &trace_format::generated::trace::SubpassDescription<'_>,
    attachments: &[PassAttachment],
) -> (Vec<AttachmentUse>, bool) {
    let format_of = |a: u32| attachments.get(a as usize).map_or(0, |d| d.format);
    // The stencil layouts the record holds, one a reference in the order above.
    let named: Vec<u32> = s
        .stencil_layouts()
        .map(|l| l.iter().collect())
        .unwrap_or_default();
    let mut next = 0;
    let mut use_of = |r: &trace_format::generated::trace::AttachmentReference, role| {
        let stencil = named.get(next).copied().unwrap_or(r.layout());
        next += 1;
        AttachmentUse {
            attachment: r.attachment(),
            role,
            layout: r.layout(),
            stencil_layout: stencil_layout_of(format_of(r.attachment()), stencil),
        }
    };
    let mut inputs: Vec<AttachmentUse> = Vec::new();
    // The aspects each input reads: a version-2 reference names them, a version-1
    // one reads every aspect of its format (`translate_references`).
    let mut input_reads_depth = Vec::new();
    let mut input_reads_stencil = Vec::new();
    for r in s.input_attachments().into_iter().flatten() {
        inputs.push(use_of(r, AttachmentRole::Input));
        let format = format_of(r.attachment());
        let (depth, stencil) = match r.aspect_mask() {
            0 => (format_has_depth(format), format_has_stencil(format)),
            m => (m & 0x2 != 0, m & 0x4 != 0),
        };
        input_reads_depth.push(depth);
        input_reads_stencil.push(stencil);
    }
    let mut colors: Vec<AttachmentUse> = Vec::new();
    for r in s.color_attachments().into_iter().flatten() {
        colors.push(use_of(r, AttachmentRole::Color));
    }
    let mut resolves: Vec<AttachmentUse> = Vec::new();
    for r in s.resolve_attachments().into_iter().flatten() {
        resolves.push(use_of(r, AttachmentRole::Resolve));
    }
    let mut depth_stencil = s
        .depth_stencil_attachment()
        .map(|r| use_of(r, AttachmentRole::DepthStencil));
    let depth_stencil_resolve = s
        .depth_stencil_resolve_attachment()
        .map(|r| use_of(r, AttachmentRole::DepthStencilResolve));
    let mut depth_stencil_feedback_loop = false;
    for (i, input) in inputs.iter_mut().enumerate() {
        if input.attachment == ATTACHMENT_UNUSED {
            continue;
        }
        for color in colors
            .iter_mut()
            .filter(|c| c.attachment == input.attachment)
        {
            input.layout = LAYOUT_FEEDBACK_LOOP;
            color.layout = LAYOUT_FEEDBACK_LOOP;
        }
        if let Some(ds) = depth_stencil
            .as_mut()
            .filter(|ds| ds.attachment == input.attachment)
        {
            depth_stencil_feedback_loop |= input_reads_depth[i] || input_reads_stencil[i];
            if input_reads_depth[i] {
                input.layout = LAYOUT_FEEDBACK_LOOP;
                ds.layout = LAYOUT_FEEDBACK_LOOP;
            }
            if input_reads_stencil[i] {
                input.stencil_layout = LAYOUT_FEEDBACK_LOOP;
                ds.stencil_layout = LAYOUT_FEEDBACK_LOOP;
            }
        }
    }
    let references = inputs
        .into_iter()
        .chain(colors)
        .chain(resolves)
        .chain(depth_stencil)
        .chain(depth_stencil_resolve)
        .filter(|r| r.attachment != ATTACHMENT_UNUSED)
        .collect();
    (references, depth_stencil_feedback_loop)
}

/// A render pass from its vkCreateRenderPass(2) record.
pub fn render_pass(c: &trace_format::generated::trace::CreateRenderPass<'_>) -> RenderPass {
    let mut attachments: Vec<PassAttachment> = c
        .attachments()
        .into_iter()
        .flatten()
        .map(|a| PassAttachment {
            format: a.format(),
            load_op: a.load_op(),
            store_op: a.store_op(),
            stencil_load_op: a.stencil_load_op(),
            initial_layout: a.initial_layout(),
            final_layout: a.final_layout(),
            own_stencil_layouts: None,
        })
        .collect();
    // Two a attachment where the record holds them (VkAttachmentDescriptionStencilLayout).
    if let Some(layouts) = c.stencil_layouts() {
        let layouts: Vec<u32> = layouts.iter().collect();
        if layouts.len() == 2 * attachments.len() {
            for (a, l) in attachments.iter_mut().zip(layouts.chunks_exact(2)) {
                a.own_stencil_layouts = Some((l[0], l[1]));
            }
        }
    }
    let subpasses = c
        .subpasses()
        .into_iter()
        .flatten()
        .map(|s| {
            let resolves: Vec<Option<u32>> = s
                .resolve_attachments()
                .into_iter()
                .flatten()
                .map(|r| Some(r.attachment()).filter(|&a| a != ATTACHMENT_UNUSED))
                .collect();
            let (references, depth_stencil_feedback_loop) = subpass_references(&s, &attachments);
            Subpass {
                view_mask: s.view_mask(),
                colors: s
                    .color_attachments()
                    .into_iter()
                    .flatten()
                    .map(|r| r.attachment())
                    .collect(),
                resolves,
                depth_stencil: s
                    .depth_stencil_attachment()
                    .map(|r| r.attachment())
                    .filter(|a| *a != ATTACHMENT_UNUSED),
                depth_stencil_resolve: s
                    .depth_stencil_resolve_attachment()
                    .map(|r| r.attachment())
                    .filter(|a| *a != ATTACHMENT_UNUSED)
                    .map(|a| (a, s.depth_resolve_mode(), s.stencil_resolve_mode())),
                references,
                depth_stencil_feedback_loop,
            }
        })
        .collect();
    let dependencies = c
        .dependencies()
        .into_iter()
        .flatten()
        .map(|d| Dependency {
            src_subpass: d.src_subpass(),
            dst_subpass: d.dst_subpass(),
            src_stages: d.src_stage_mask(),
            dst_stages: d.dst_stage_mask(),
            src_access: d.src_access_mask(),
            dst_access: d.dst_access_mask(),
        })
        .collect();
    RenderPass {
        attachments,
        subpasses,
        dependencies,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pass's record as the layer writes it: a colour attachment (format 44) and a
    /// depth/stencil one (130, D32_SFLOAT_S8_UINT), both kept in their layouts, one
    /// subpass that reads both as input attachments while it draws to them;
    /// `input_aspects` is the depth/stencil input's aspect mask (0 in a version-1
    /// pass: every aspect of its format).
    fn feedback_pass(version: u8, input_aspects: u32) -> RenderPass {
        use trace_format::generated::trace::{
            AttachmentDescriptionT, AttachmentReferenceT, CreateRenderPass, CreateRenderPassT,
            SubpassDescriptionT,
        };
        const GENERAL: u32 = 1;
        const DEPTH_STENCIL: u32 = 3;
        let attachment = |format, layout| AttachmentDescriptionT {
            flags: 0,
            format,
            samples: 1,
            load_op: 0,
            store_op: 0,
            stencil_load_op: 0,
            stencil_store_op: 0,
            initial_layout: layout,
            final_layout: layout,
        };
        let reference = |attachment, layout, aspect_mask| AttachmentReferenceT {
            attachment,
            layout,
            aspect_mask,
        };
        let mut subpass = SubpassDescriptionT::default();
        subpass.input_attachments = Some(vec![
            reference(0, GENERAL, 0),
            reference(1, GENERAL, input_aspects),
        ]);
        subpass.color_attachments = Some(vec![reference(0, GENERAL, 0)]);
        subpass.depth_stencil_attachment = Some(reference(1, DEPTH_STENCIL, 0));
        let mut record = CreateRenderPassT::default();
        record.version = version;
        record.attachments = Some(vec![
            attachment(44, GENERAL),
            attachment(130, DEPTH_STENCIL),
        ]);
        record.subpasses = Some(vec![subpass]);
        let mut fbb = flatbuffers::FlatBufferBuilder::new();
        let packed = record.pack(&mut fbb);
        fbb.finish(packed, None);
        render_pass(&flatbuffers::root::<CreateRenderPass>(fbb.finished_data()).unwrap())
    }

    /// Mesa's common code (vk_common_CreateRenderPass2) wants an attachment read as
    /// input while drawn to in the feedback-loop layout, in both references, and for
    /// depth/stencil only in the aspects the input reads; the pass's pipelines then
    /// take the depth/stencil feedback-loop flag into their fragment shader's key.
    #[test]
    fn attachments_read_as_input_while_drawn_to_are_wanted_in_the_feedback_loop_layout() {
        let v1 = feedback_pass(1, 0);
        let subpass = &v1.subpasses[0];
        let f = LAYOUT_FEEDBACK_LOOP;
        let wanted: Vec<(u32, AttachmentRole, u32, u32)> = subpass
            .references
            .iter()
            .map(|r| (r.attachment, r.role, r.layout, r.stencil_layout))
            .collect();
        assert_eq!(
            wanted,
            [
                (0, AttachmentRole::Input, f, 0),
                (1, AttachmentRole::Input, f, f),
                (0, AttachmentRole::Color, f, 0),
                (1, AttachmentRole::DepthStencil, f, f),
            ]
        );
        assert!(subpass.depth_stencil_feedback_loop);
        // A version-2 input of the stencil aspect alone: depth stays as written.
        let v2 = feedback_pass(2, 0x4);
        let ds = v2.subpasses[0].references[3];
        assert_eq!((ds.layout, ds.stencil_layout), (3, f));
        assert!(v2.subpasses[0].depth_stencil_feedback_loop);
        // The colour aspect of a depth/stencil attachment is no aspect of it: nothing
        // read, nothing moved.
        let v2 = feedback_pass(2, 0x1);
        let ds = v2.subpasses[0].references[3];
        assert_eq!((ds.layout, ds.stencil_layout), (3, 3));
        assert!(!v2.subpasses[0].depth_stencil_feedback_loop);
    }
    use driver::mme::Arch;

    fn part_of(parts: u32, vk_topology: u32, dynamic_states: &[u32]) -> Pipeline {
        Pipeline {
            topology: PrimitiveOp::of_vk(vk_topology),
            vk_topology,
            view_mask: 0,
            rp_attachments: (parts & PipelinePart::FragmentOutput as u32 != 0).then_some(0b11),
            attachments: None,
            dynamic_states: driver::nvk::state::DynamicStates::new(dynamic_states.iter().copied()),
            shaders: Default::default(),
            parts,
            state: None,
        }
    }

    /// A subpass of a test pass: its view mask, inputs, colours and colour resolves.
    type TestSubpass<'a> = (u32, &'a [u32], &'a [u32], &'a [Option<u32>]);

    /// A pass of colour attachments (format 37, R8G8B8A8_UNORM) loaded by `load_ops`,
    /// with `subpasses`.
    fn colour_pass(load_ops: &[u32], subpasses: &[TestSubpass<'_>]) -> RenderPass {
        let attachments = load_ops
            .iter()
            .map(|&load_op| PassAttachment {
                format: 37,
                load_op,
                ..PassAttachment::default()
            })
            .collect();
        let subpasses = subpasses
            .iter()
            .map(|&(view_mask, inputs, colors, resolves)| {
                let refer = |a: &u32, role| AttachmentUse {
                    attachment: *a,
                    role,
                    ..AttachmentUse::default()
                };
                let references = inputs
                    .iter()
                    .map(|a| refer(a, AttachmentRole::Input))
                    .chain(colors.iter().map(|a| refer(a, AttachmentRole::Color)))
                    .chain(
                        resolves
                            .iter()
                            .flatten()
                            .map(|a| refer(a, AttachmentRole::Resolve)),
                    )
                    .collect();
                Subpass {
                    view_mask,
                    colors: colors.to_vec(),
                    resolves: resolves.to_vec(),
                    references,
                    ..Subpass::default()
                }
            })
            .collect();
        RenderPass {
            attachments,
            subpasses,
            dependencies: Vec::new(),
        }
    }

    #[test]
    fn an_attachment_read_as_input_first_is_loaded_there_and_not_cleared_after() {
        // Subpass 0 draws to 0 reading 1; subpass 1 draws to 1 reading 0. Attachment
        // 1's load op would clear, but subpass 0 loaded its view, which it only reads
        // (with nothing to clear: the spec keeps an input's first load op from it).
        const DONT_CARE: u32 = 2;
        let pass = colour_pass(
            &[LOAD_OP_CLEAR, DONT_CARE],
            &[(0, &[1], &[0], &[]), (0, &[0], &[1], &[])],
        );
        let first = pass.loads(0);
        assert_eq!(first.colors_fresh, [true]);
        assert!(first.cleared_alone.is_empty());
        let second = pass.loads(1);
        assert_eq!(second.colors_fresh, [false], "loaded in subpass 0");
        assert!(second.cleared_alone.is_empty());
        // Attachment 0 is read after subpass 0: stored there whatever its store op.
        assert!(!pass.stores_here(0, 0));
        assert!(pass.stores_here(1, 1) && pass.stores_here(0, 1));
    }

    #[test]
    fn a_resolve_target_counts_as_loaded_and_new_views_are_cleared_alone() {
        // Subpass 0 resolves 0 into 1; subpass 1 draws to 1, which the resolve loaded.
        let pass = colour_pass(
            &[LOAD_OP_CLEAR, LOAD_OP_CLEAR],
            &[(0, &[], &[0], &[Some(1)]), (0, &[], &[1], &[])],
        );
        assert_eq!(pass.loads(1).colors_fresh, [false]);
        // Multiview: view 0 drawn first, then views 0 and 1. The second subpass loads
        // the attachment (view 0 was loaded), and view 1 is cleared alone before it.
        let views = colour_pass(
            &[LOAD_OP_CLEAR],
            &[(0b01, &[], &[0], &[]), (0b11, &[], &[0], &[])],
        );
        let second = views.loads(1);
        assert_eq!(second.colors_fresh, [false]);
        assert_eq!(second.cleared_alone, [(0, 0b10)]);
    }

    #[test]
    fn a_linked_pipeline_takes_each_part_from_the_library_defining_it() {
        const LINE_STRIP: u32 = 2;
        const POINT_LIST: u32 = 0;
        // The shaders' library says POINT_LIST (its ignored input assembly); the
        // vertex input library says LINE_STRIP.
        let vertex_input = part_of(PipelinePart::VertexInput as u32, LINE_STRIP, &[0]);
        let shaders = part_of(0x2 | 0x4, POINT_LIST, &[0, 1]);
        let output = part_of(PipelinePart::FragmentOutput as u32, POINT_LIST, &[4]);
        let linked = part_of(PipelinePart::own(0, true), POINT_LIST, &[]).link([
            &shaders,
            &vertex_input,
            &output,
        ]);
        assert_eq!(linked.vk_topology, LINE_STRIP);
        assert_eq!(linked.topology, PrimitiveOp::LineStrip);
        assert_eq!(linked.rp_attachments, Some(0b11));
        assert_eq!(linked.dynamic_states.as_slice(), [0, 1, 4]);
        assert_eq!(linked.parts, PipelinePart::ALL);
        // A pipeline with no libraries defines every part itself.
        assert_eq!(PipelinePart::own(0, false), PipelinePart::ALL);
    }

    #[test]
    fn block_linear_images_bound_at_one_place_one_after_another_are_two_addresses() {
        let mut objects = Objects::default();
        objects.allocate_memory(1, 1 << 20);
        let tiled = Image::stand_in(37, [128, 128, 1]);
        let linear = Image {
            linear: true,
            ..tiled
        };
        for (image, desc) in [(10, tiled), (11, tiled), (20, linear), (21, linear)] {
            objects.create_image(image, desc);
            objects.bind_image(image, 1, 0x1000, driver::chipset::classes::TURING_A);
        }
        let addr = |image| objects.image(image).map(|i| i.addr);
        // NVK maps each block-linear image on its own; a linear one is the memory's.
        assert_ne!(addr(10), addr(11));
        assert_eq!(addr(20), objects.memory_addr(1, 0x1000));
        assert_eq!(addr(20), addr(21));
    }

    /// A linear texture of 14 × 23 RGBA8 texels placed in what lavapipe asked for it:
    /// NVK's rows are 128 bytes apart (2,944 bytes in all), so where the allocation
    /// holds fewer it lies in memory of its own, as a replay on NVK binds it, and two
    /// such textures bound at one place are two addresses; on Kepler the rows are 256
    /// bytes apart.
    #[test]
    fn a_linear_image_that_overruns_its_place_on_nvk_gets_memory_of_its_own() {
        use driver::chipset::classes::{KEPLER_A, TURING_A};
        const RGBA8_UNORM: u32 = 37;
        let texture = Image {
            linear: true,
            ..Image::stand_in(RGBA8_UNORM, [14, 23, 1])
        };
        let needs = texture.linear_memory_needs(TURING_A);
        assert_eq!((needs.size, needs.alignment), (128 * 23, 128));
        let kepler = texture.linear_memory_needs(KEPLER_A);
        assert_eq!((kepler.size, kepler.alignment), (256 * 23, 256));

        let mut objects = Objects::default();
        // Lavapipe's 16-byte-aligned rows: 64 × 23 = 1,472 bytes, at 0x800 of 0x1000.
        objects.allocate_memory(1, 0x1000);
        objects.allocate_memory(2, 0x10000);
        for (image, memory) in [(30, 1), (31, 1), (32, 2)] {
            objects.create_image(image, texture);
            objects.bind_image(image, memory, 0x800, TURING_A);
        }
        let addr = |image| objects.image(image).map(|i| i.addr);
        assert_ne!(addr(30), objects.memory_addr(1, 0x800));
        assert_ne!(addr(30), addr(31));
        // Where it fits, it is the memory's address at the offset.
        assert_eq!(addr(32), objects.memory_addr(2, 0x800));
    }

    /// Two buffers Zink binds at the start of one allocation share its address where
    /// NVK's needs fit (Turing), and each gets memory of its own where they do not
    /// (Volta aligns uniform buffers to 256 bytes), as the replay on NVK binds them;
    /// what the program writes to the allocation reaches them there.
    #[test]
    fn buffers_that_overrun_their_allocation_on_nvk_get_memory_of_their_own() {
        const UNIFORM: u32 = 0x10;
        for (arch, shared) in [(Arch::Turing, true), (Arch::Fermi, false)] {
            let device = driver::nvk::Device::for_arch(arch);
            let mut objects = Objects::default();
            objects.allocate_memory(0x700, 2_250_048);
            for buffer in [0xb0, 0xb1] {
                let needs = device.buffer_memory_needs(2_250_048, UNIFORM, 0);
                objects.create_buffer(buffer, 2_250_048, needs);
            }
            let mirrors = [
                objects.bind_buffer(0xb0, 0x700, 0),
                objects.bind_buffer(0xb1, 0x700, 0),
            ];
            let (a, b) = (objects.buffer_addr(0xb0, 0), objects.buffer_addr(0xb1, 0));
            assert_eq!(a == b, shared, "{arch:?}");
            assert_eq!(mirrors.iter().all(Option::is_none), shared, "{arch:?}");
            if shared {
                assert_eq!(a, objects.memory_addr(0x700, 0));
                continue;
            }
            let m = mirrors[1].expect("a mirror");
            assert_eq!((m.buffer, m.offset, m.len), (0xb1, 0, 2_250_048));
            assert_eq!(objects.mirrors(0x700).len(), 2);
            // Destroying a buffer ends its mirror; freeing the memory ends them all.
            objects.destroy(9, 0xb0);
            assert_eq!(objects.mirrors(0x700), &[m]);
            objects.free_memory(0x700);
            assert!(objects.mirrors(0x700).is_empty());
        }
    }

    /// A buffer bound off its alignment on NVK is moved too; one that fits stays.
    #[test]
    fn a_buffer_bound_off_nvks_alignment_is_placed_apart() {
        let mut objects = Objects::default();
        objects.allocate_memory(0x700, 1 << 20);
        let needs = MemoryNeeds {
            size: 256,
            alignment: 256,
        };
        objects.create_buffer(0xb0, 256, needs);
        objects.create_buffer(0xb1, 256, needs);
        assert!(objects.bind_buffer(0xb0, 0x700, 512).is_none());
        assert_eq!(
            objects.buffer_addr(0xb0, 0),
            objects.memory_addr(0x700, 512)
        );
        let m = objects.bind_buffer(0xb1, 0x700, 64).expect("moved");
        assert_eq!(objects.buffer_addr(0xb1, 0), Some(m.addr));
        assert_ne!(Some(m.addr), objects.memory_addr(0x700, 64));
    }
}
