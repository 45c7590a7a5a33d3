//! The dynamic graphics state, as NVK keeps it: every value a pipeline or a
//! `vkCmdSet*` command sets, a dirty bit per value, and the flush that turns the dirty
//! values into 3D-class methods when a draw needs them.
//!
//! Data flows: setters ([`GraphicsState::set_viewports`] and the rest, mirroring Mesa's
//! `vk_cmd_set_*`) store a value and mark it dirty only when it differs from the one
//! held, so an unchanged state costs nothing; [`GraphicsState::flush`] (NVK's
//! `nvk_cmd_flush_gfx_dynamic_state`) runs each group's flush in NVK's order — vertex
//! input, input assembly, tessellation, viewport, rasterizer, multisample, depth and
//! stencil, colour blend — each pushing methods for its dirty bits only, then clears
//! them. What each group wrote is counted per [`StateGroup`], so a draw's cost can be
//! split by the state it flushed.

mod cb;
mod ds;
mod ia;
mod ms;
mod rs;
mod vi;
mod vp;

use crate::chipset::classes::TURING_A;
use crate::mme::{AluOp, Builder, Cmp, Value};
use crate::nvk::Scratch;
use crate::push::{self, PushBuffer};

pub(crate) use cb::set_write_mask;
pub(crate) use ia::set_tess_params;
pub use ia::val_mask;
pub(crate) use ms::{push_sample_layout, set_anti_alias};
pub(crate) use vp::{set_viewport_min_max_z, set_z_clamp};

/// The most viewports and scissors NVK exposes (`NVK_MAX_VIEWPORTS`).
pub const MAX_VIEWPORTS: usize = 16;
/// The most colour attachments (`NVK_MAX_RTS`).
pub const MAX_RTS: usize = 8;

/// A value of the dynamic state, as Mesa's `MESA_VK_DYNAMIC_*` names them: each has a
/// dirty bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum StateBit {
    ViBindingsValid,
    Vi,
    ViBindingStrides,
    IaPrimitiveTopology,
    IaPrimitiveRestartEnable,
    TsPatchControlPoints,
    TsDomainOrigin,
    VpViewportCount,
    VpViewports,
    VpScissorCount,
    VpScissors,
    VpDepthClipNegativeOneToOne,
    RsRasterizerDiscardEnable,
    RsDepthClampEnable,
    RsDepthClipEnable,
    RsPolygonMode,
    RsCullMode,
    RsFrontFace,
    RsProvokingVertex,
    RsDepthBiasEnable,
    RsDepthBiasFactors,
    RsLineWidth,
    RsLineMode,
    RsLineStippleEnable,
    RsLineStipple,
    RsRasterizationStream,
    MsSampleMask,
    MsAlphaToCoverageEnable,
    MsAlphaToOneEnable,
    DsDepthTestEnable,
    DsDepthWriteEnable,
    DsDepthCompareOp,
    DsDepthBoundsTestEnable,
    DsDepthBoundsTestBounds,
    DsStencilTestEnable,
    DsStencilOp,
    DsStencilCompareMask,
    DsStencilWriteMask,
    DsStencilReference,
    CbLogicOpEnable,
    CbLogicOp,
    CbBlendEnables,
    CbBlendEquations,
    CbWriteMasks,
    CbColorWriteEnables,
    CbBlendConstants,
    MsRasterizationSamples,
    MsSampleLocations,
    MsSampleLocationsEnable,
    RsConservativeMode,
    RsExtraPrimitiveOverestimationSize,
    Fsr,
    ColorAttachmentMap,
    RpAttachments,
}

impl StateBit {
    /// Every bit.
    pub const ALL: [StateBit; 54] = [
        StateBit::ViBindingsValid,
        StateBit::Vi,
        StateBit::ViBindingStrides,
        StateBit::IaPrimitiveTopology,
        StateBit::IaPrimitiveRestartEnable,
        StateBit::TsPatchControlPoints,
        StateBit::TsDomainOrigin,
        StateBit::VpViewportCount,
        StateBit::VpViewports,
        StateBit::VpScissorCount,
        StateBit::VpScissors,
        StateBit::VpDepthClipNegativeOneToOne,
        StateBit::RsRasterizerDiscardEnable,
        StateBit::RsDepthClampEnable,
        StateBit::RsDepthClipEnable,
        StateBit::RsPolygonMode,
        StateBit::RsCullMode,
        StateBit::RsFrontFace,
        StateBit::RsProvokingVertex,
        StateBit::RsDepthBiasEnable,
        StateBit::RsDepthBiasFactors,
        StateBit::RsLineWidth,
        StateBit::RsLineMode,
        StateBit::RsLineStippleEnable,
        StateBit::RsLineStipple,
        StateBit::RsRasterizationStream,
        StateBit::MsSampleMask,
        StateBit::MsAlphaToCoverageEnable,
        StateBit::MsAlphaToOneEnable,
        StateBit::DsDepthTestEnable,
        StateBit::DsDepthWriteEnable,
        StateBit::DsDepthCompareOp,
        StateBit::DsDepthBoundsTestEnable,
        StateBit::DsDepthBoundsTestBounds,
        StateBit::DsStencilTestEnable,
        StateBit::DsStencilOp,
        StateBit::DsStencilCompareMask,
        StateBit::DsStencilWriteMask,
        StateBit::DsStencilReference,
        StateBit::CbLogicOpEnable,
        StateBit::CbLogicOp,
        StateBit::CbBlendEnables,
        StateBit::CbBlendEquations,
        StateBit::CbWriteMasks,
        StateBit::CbColorWriteEnables,
        StateBit::CbBlendConstants,
        StateBit::MsRasterizationSamples,
        StateBit::MsSampleLocations,
        StateBit::MsSampleLocationsEnable,
        StateBit::RsConservativeMode,
        StateBit::RsExtraPrimitiveOverestimationSize,
        StateBit::Fsr,
        StateBit::ColorAttachmentMap,
        StateBit::RpAttachments,
    ];

    /// The bits [`GraphicsState::bind_pipeline`] does not take as changed: the colour
    /// attachment map comes from the rendering (`VkRenderingAttachmentLocationInfoKHR`);
    /// the rasterization samples are taken as the rendering's (the trace does not
    /// record a pipeline's multisample state) and the render pass's attachments as set
    /// by [`GraphicsState::set_rp_attachments`]; sample locations, conservative
    /// rasterization and fragment shading rate take Vulkan's defaults (the trace does
    /// not record the structures that would set them), each dirty only if that
    /// differs from what is held, as Mesa's `vk_cmd_set_dynamic_graphics_state`
    /// compares.
    const NOT_TAKEN_AS_CHANGED: [StateBit; 8] = [
        StateBit::ColorAttachmentMap,
        StateBit::MsRasterizationSamples,
        StateBit::RpAttachments,
        StateBit::MsSampleLocations,
        StateBit::MsSampleLocationsEnable,
        StateBit::RsConservativeMode,
        StateBit::RsExtraPrimitiveOverestimationSize,
        StateBit::Fsr,
    ];

    fn mask(self) -> u64 {
        1 << self as u32
    }

    /// Every `VkDynamicState` whose bits this model holds.
    pub const VK_DYNAMIC_STATES: [u32; 51] = [
        0,
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        1_000_259_000,
        1_000_267_000,
        1_000_267_001,
        1_000_267_002,
        1_000_267_003,
        1_000_267_004,
        1_000_267_005,
        1_000_352_000,
        1_000_267_006,
        1_000_267_007,
        1_000_267_008,
        1_000_267_009,
        1_000_267_010,
        1_000_267_011,
        1_000_377_000,
        1_000_455_002,
        1_000_377_001,
        1_000_377_002,
        1_000_377_003,
        1_000_377_004,
        1_000_455_003,
        1_000_455_004,
        1_000_455_006,
        1_000_455_007,
        1_000_455_008,
        1_000_455_009,
        1_000_455_010,
        1_000_455_011,
        1_000_455_012,
        1_000_381_000,
        1_000_455_013,
        1_000_455_016,
        1_000_455_020,
        1_000_455_021,
        1_000_455_022,
        1_000_455_019,
        1_000_455_005,
        1_000_143_000,
        1_000_455_017,
        1_000_455_014,
        1_000_455_015,
        1_000_226_000,
    ];

    /// The bits a `VkDynamicState` makes dynamic in a pipeline (none for the states this
    /// model does not hold).
    pub fn of_vk_dynamic_state(state: u32) -> &'static [StateBit] {
        use StateBit::*;
        match state {
            0 => &[VpViewports],
            1 => &[VpScissors],
            2 => &[RsLineWidth],
            3 => &[RsDepthBiasFactors],
            4 => &[CbBlendConstants],
            5 => &[DsDepthBoundsTestBounds],
            6 => &[DsStencilCompareMask],
            7 => &[DsStencilWriteMask],
            8 => &[DsStencilReference],
            1_000_259_000 => &[RsLineStipple],
            1_000_267_000 => &[RsCullMode],
            1_000_267_001 => &[RsFrontFace],
            1_000_267_002 => &[IaPrimitiveTopology],
            1_000_267_003 => &[VpViewportCount, VpViewports],
            1_000_267_004 => &[VpScissorCount, VpScissors],
            1_000_267_005 => &[ViBindingStrides],
            1_000_352_000 => &[ViBindingsValid, Vi, ViBindingStrides],
            1_000_267_006 => &[DsDepthTestEnable],
            1_000_267_007 => &[DsDepthWriteEnable],
            1_000_267_008 => &[DsDepthCompareOp],
            1_000_267_009 => &[DsDepthBoundsTestEnable],
            1_000_267_010 => &[DsStencilTestEnable],
            1_000_267_011 => &[DsStencilOp],
            1_000_377_000 => &[TsPatchControlPoints],
            1_000_455_002 => &[TsDomainOrigin],
            1_000_377_001 => &[RsRasterizerDiscardEnable],
            1_000_377_002 => &[RsDepthBiasEnable],
            1_000_377_003 => &[CbLogicOp],
            1_000_377_004 => &[IaPrimitiveRestartEnable],
            1_000_455_003 => &[RsDepthClampEnable],
            1_000_455_004 => &[RsPolygonMode],
            1_000_455_006 => &[MsSampleMask],
            1_000_455_007 => &[MsAlphaToCoverageEnable],
            1_000_455_008 => &[MsAlphaToOneEnable],
            1_000_455_009 => &[CbLogicOpEnable],
            1_000_455_010 => &[CbBlendEnables],
            1_000_455_011 => &[CbBlendEquations],
            1_000_455_012 => &[CbWriteMasks],
            1_000_381_000 => &[CbColorWriteEnables],
            1_000_455_013 => &[RsRasterizationStream],
            1_000_455_016 => &[RsDepthClipEnable],
            1_000_455_020 => &[RsLineMode],
            1_000_455_021 => &[RsLineStippleEnable],
            1_000_455_022 => &[VpDepthClipNegativeOneToOne],
            1_000_455_019 => &[RsProvokingVertex],
            1_000_455_005 => &[MsRasterizationSamples],
            1_000_143_000 => &[MsSampleLocations],
            1_000_455_017 => &[MsSampleLocationsEnable],
            1_000_455_014 => &[RsConservativeMode],
            1_000_455_015 => &[RsExtraPrimitiveOverestimationSize],
            1_000_226_000 => &[Fsr],
            _ => &[],
        }
    }
}

/// Dirty bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dirty(u64);

impl Dirty {
    /// Every bit set.
    pub fn all() -> Self {
        Dirty(StateBit::ALL.iter().fold(0, |m, b| m | b.mask()))
    }

    /// Whether `bit` is set.
    pub fn has(self, bit: StateBit) -> bool {
        self.0 & bit.mask() != 0
    }

    /// Whether any of `bits` is set.
    pub fn any(self, bits: &[StateBit]) -> bool {
        bits.iter().any(|b| self.has(*b))
    }

    /// Sets `bit`.
    pub fn set(&mut self, bit: StateBit) {
        self.0 |= bit.mask();
    }

    /// Whether no bit is set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// One vertex attribute (`VkVertexInputAttributeDescription2EXT`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct VertexAttribute {
    pub location: u32,
    pub binding: u32,
    pub format: u32,
    pub offset: u32,
}

/// One vertex binding (`VkVertexInputBindingDescription2EXT`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct VertexBinding {
    pub binding: u32,
    pub stride: u32,
    /// `VkVertexInputRate`: 0 per vertex, 1 per instance.
    pub input_rate: u32,
    pub divisor: u32,
}

/// The vertex input state (Mesa's `vk_vertex_input_state` and the binding strides).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct VertexInput {
    pub attributes: Vec<VertexAttribute>,
    pub bindings: Vec<VertexBinding>,
}

impl VertexInput {
    /// A bit per binding in use.
    pub fn bindings_valid(&self) -> u32 {
        bindings_valid(&self.bindings)
    }
}

/// A bit per binding of `bindings`.
pub(crate) fn bindings_valid(bindings: &[VertexBinding]) -> u32 {
    bindings
        .iter()
        .fold(0, |m, b| m | 1u32.checked_shl(b.binding).unwrap_or(0))
}

/// `VkViewport`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[allow(missing_docs)]
pub struct Viewport {
    pub x: f32,
    pub y: f32,
    pub width: f32,
    pub height: f32,
    pub min_depth: f32,
    pub max_depth: f32,
}

/// `VkRect2D`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

/// One face's `VkStencilOpState` operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct StencilOps {
    pub fail: u32,
    pub pass: u32,
    pub depth_fail: u32,
    pub compare: u32,
}

/// One colour attachment's `VkColorBlendEquationEXT`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct BlendEquation {
    pub src_color_blend_factor: u32,
    pub dst_color_blend_factor: u32,
    pub color_blend_op: u32,
    pub src_alpha_blend_factor: u32,
    pub dst_alpha_blend_factor: u32,
    pub alpha_blend_op: u32,
}

/// Front and back values of a stencil setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct Faces<T> {
    pub front: T,
    pub back: T,
}

/// The values, with Vulkan's defaults (Mesa's `vk_default_dynamic_graphics_state`
/// where they are not zero).
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub struct DynamicState {
    pub vertex_input: VertexInput,
    pub topology: u32,
    pub primitive_restart_enable: bool,
    pub patch_control_points: u32,
    /// `VkTessellationDomainOrigin`: 0 upper left, 1 lower left.
    pub domain_origin: u32,
    pub viewports: Vec<Viewport>,
    pub scissors: Vec<Rect>,
    pub depth_clip_negative_one_to_one: bool,
    pub rasterizer_discard_enable: bool,
    pub depth_clamp_enable: bool,
    /// `None`: follows depth clamp (`VK_EXT_depth_clip_enable` not used).
    pub depth_clip_enable: Option<bool>,
    pub polygon_mode: u32,
    pub cull_mode: u32,
    pub front_face: u32,
    pub provoking_vertex: u32,
    pub depth_bias_enable: bool,
    /// Constant, clamp, slope.
    pub depth_bias: [f32; 3],
    pub line_width: f32,
    pub line_mode: u32,
    pub line_stipple_enable: bool,
    /// Factor, pattern.
    pub line_stipple: (u32, u16),
    pub rasterization_stream: u32,
    pub sample_mask: u32,
    pub alpha_to_coverage_enable: bool,
    pub alpha_to_one_enable: bool,
    pub depth_test_enable: bool,
    pub depth_write_enable: bool,
    pub depth_compare_op: u32,
    pub depth_bounds_test_enable: bool,
    pub depth_bounds: (f32, f32),
    pub stencil_test_enable: bool,
    pub stencil_ops: Faces<StencilOps>,
    pub stencil_compare_mask: Faces<u32>,
    pub stencil_write_mask: Faces<u32>,
    pub stencil_reference: Faces<u32>,
    pub logic_op_enable: bool,
    pub logic_op: u32,
    pub blend_enables: [bool; MAX_RTS],
    pub blend_equations: [BlendEquation; MAX_RTS],
    /// Each attachment's `VkColorComponentFlags`.
    pub write_masks: [u32; MAX_RTS],
    /// A bit per attachment whose writes are enabled.
    pub color_write_enables: u32,
    pub blend_constants: [f32; 4],
    /// `VkSampleCountFlagBits` of the rasterization (0 while unknown).
    pub rasterization_samples: u32,
    pub sample_locations_enable: bool,
    /// The custom sample locations (`vkCmdSetSampleLocationsEXT`).
    pub sample_locations: SampleLocations,
    /// `VkConservativeRasterizationModeEXT`: 0 disabled, 1 over-, 2 underestimate.
    pub conservative_mode: u32,
    pub extra_primitive_overestimation_size: f32,
    /// `vkCmdSetFragmentShadingRateKHR`'s fragment size and two combiner operations.
    pub fragment_shading_rate: ((u32, u32), [u32; 2]),
    /// Each colour attachment's location, [`ATTACHMENT_UNUSED`] where it has none
    /// (Mesa's `cal.color_map`).
    pub color_map: [u8; MAX_RTS],
    /// A bit per colour attachment the bound pipeline's render pass has (Mesa's
    /// `rp.attachments`, colour bits).
    pub rp_attachments: u32,
}

/// A colour attachment without a location in [`DynamicState::color_map`]
/// (`MESA_VK_ATTACHMENT_UNUSED`).
pub const ATTACHMENT_UNUSED: u8 = 0xff;

/// `VkSampleLocationsInfoEXT`: the locations of a pixel grid, `per_pixel` a pixel,
/// each in `[0, 1)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SampleLocations {
    /// Samples a pixel.
    pub per_pixel: u32,
    /// The grid's width and height in pixels.
    pub grid: (u32, u32),
    /// The locations, row by row, `per_pixel` a pixel.
    pub locations: Vec<(f32, f32)>,
}

impl Default for DynamicState {
    fn default() -> Self {
        DynamicState {
            vertex_input: VertexInput::default(),
            topology: 3, // VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST
            primitive_restart_enable: false,
            patch_control_points: 0,
            domain_origin: 0,
            viewports: Vec::new(),
            scissors: Vec::new(),
            depth_clip_negative_one_to_one: false,
            rasterizer_discard_enable: false,
            depth_clamp_enable: false,
            depth_clip_enable: None,
            polygon_mode: 0,
            cull_mode: 0,
            front_face: 0,
            provoking_vertex: 0,
            depth_bias_enable: false,
            depth_bias: [0.0; 3],
            line_width: 1.0,
            line_mode: 0,
            line_stipple_enable: false,
            // Mesa's default: no stipple factor or pattern.
            line_stipple: (0, 0),
            rasterization_stream: 0,
            sample_mask: 0xffff_ffff,
            alpha_to_coverage_enable: false,
            alpha_to_one_enable: false,
            depth_test_enable: false,
            depth_write_enable: false,
            depth_compare_op: 0,
            depth_bounds_test_enable: false,
            depth_bounds: (0.0, 1.0),
            stencil_test_enable: false,
            stencil_ops: Faces::default(),
            stencil_compare_mask: Faces::default(),
            stencil_write_mask: Faces::default(),
            stencil_reference: Faces::default(),
            logic_op_enable: false,
            logic_op: 0,
            blend_enables: [false; MAX_RTS],
            blend_equations: [BlendEquation::default(); MAX_RTS],
            write_masks: [0xf; MAX_RTS],
            color_write_enables: 0xff,
            blend_constants: [0.0; 4],
            rasterization_samples: 1,
            sample_locations_enable: false,
            sample_locations: SampleLocations::default(),
            conservative_mode: 0,
            extra_primitive_overestimation_size: 0.0,
            fragment_shading_rate: ((1, 1), [0, 0]),
            // Mesa's default: every attachment at its own location.
            color_map: identity_color_map(MAX_RTS as u32),
            rp_attachments: (1 << MAX_RTS) - 1,
        }
    }
}

/// The attachment map a rendering with `count` colour attachments starts with: each
/// attachment at its own location (vk_cmd_set_rendering_attachment_locations with no
/// locations given).
pub fn identity_color_map(count: u32) -> [u8; MAX_RTS] {
    std::array::from_fn(|a| {
        if (a as u32) < count {
            a as u8
        } else {
            ATTACHMENT_UNUSED
        }
    })
}

/// Each of `count` attachments at its own location.
pub fn identity_locations(count: u32) -> Vec<Option<u32>> {
    (0..count.min(MAX_RTS as u32)).map(Some).collect()
}

/// What a flush needs from outside the dynamic state: the rendering in progress and
/// the GPU generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushContext {
    /// The rendering's colour attachment count (the blend state is per attachment).
    pub color_attachments: u32,
    /// The rendering's sample count from its attachments; 0 when it has none (NVK's
    /// `render->samples`: then the draw sets the sample layout).
    pub render_samples: u32,
    /// The 3D class (NVK's `cls_eng3d`): what each generation pushes differs.
    pub eng3d: u16,
    /// Whether the rendering's depth attachment has a float depth format (the
    /// rasterizer then leaves depth unclamped to [0, 1]).
    pub float_depth: bool,
    /// Whether the rendering has a depth attachment: NVK enables the depth tests and
    /// writes only then.
    pub depth_attachment: bool,
    /// Whether the rendering has a stencil attachment: NVK enables the stencil test
    /// only then.
    pub stencil_attachment: bool,
}

/// The groups a draw's state cost is split into, as results show them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StateGroup {
    /// Vertex input, input assembly and tessellation (`nvk_flush_vi/ia/ts_state`).
    VertexInput,
    /// Viewports and scissors (`nvk_flush_vp_state`).
    Viewport,
    /// The rasterizer and multisampling (`nvk_flush_rs/ms_state`).
    Rasterizer,
    /// Depth and stencil (`nvk_flush_ds_state`).
    DepthStencil,
    /// Colour blending and logic ops (`nvk_flush_cb_state`).
    Blend,
    /// Root descriptor table updates: descriptor sets, dynamic buffers and push
    /// constants. NVK pushes them when they are bound; results count them with the
    /// draw that follows.
    Descriptors,
    /// The shaders bound since the previous draw (`nvk_cmd_flush_gfx_shaders`).
    Shaders,
    /// Constant buffers rebound for the shaders (`nvk_cmd_flush_gfx_cbufs`).
    ConstantBuffers,
}

impl StateGroup {
    /// Every group, in flush order.
    pub const ALL: [StateGroup; 8] = [
        StateGroup::VertexInput,
        StateGroup::Viewport,
        StateGroup::Rasterizer,
        StateGroup::DepthStencil,
        StateGroup::Blend,
        StateGroup::Descriptors,
        StateGroup::Shaders,
        StateGroup::ConstantBuffers,
    ];

    /// The groups in the order a draw's words hold them: the push descriptor sets, the
    /// dynamic state, the shaders, the constant buffers (nvk_cmd_flush_gfx_state's
    /// order), then the draw's own call. Each group's words start headers of their own.
    pub const FLUSH_ORDER: [StateGroup; 8] = [
        StateGroup::Descriptors,
        StateGroup::VertexInput,
        StateGroup::Viewport,
        StateGroup::Rasterizer,
        StateGroup::DepthStencil,
        StateGroup::Blend,
        StateGroup::Shaders,
        StateGroup::ConstantBuffers,
    ];

    /// Its index in [`StateGroup::ALL`]: its place in the declaration, which `ALL`
    /// follows (a search through `ALL` cost every group's cost of every draw a loop).
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its name in results and reports.
    pub fn name(self) -> &'static str {
        match self {
            StateGroup::VertexInput => "vertex-input",
            StateGroup::Viewport => "viewport",
            StateGroup::Rasterizer => "rasterizer",
            StateGroup::DepthStencil => "depth-stencil",
            StateGroup::Blend => "blend",
            StateGroup::Descriptors => "descriptors",
            StateGroup::Shaders => "shaders",
            StateGroup::ConstantBuffers => "constant-buffers",
        }
    }
}

/// What one flush wrote, per group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateCost {
    /// Methods written, in [`StateGroup::ALL`] order.
    pub methods: [u32; 8],
    /// Push-buffer dwords written, likewise.
    pub dwords: [u32; 8],
    /// MME instructions the group's macros ran, likewise: filled in by whoever executes
    /// the words (the encoder cannot know), zero until then.
    pub mme_instructions: [u32; 8],
}

impl StateCost {
    /// Dwords over every group.
    pub fn total_dwords(&self) -> u32 {
        self.dwords.iter().sum()
    }

    /// Methods over every group.
    pub fn total_methods(&self) -> u32 {
        self.methods.iter().sum()
    }

    /// Adds to `group` the methods and dwords `p` took since `before`, a mark taken
    /// with [`PushBuffer::mark`] (the words written since, as [`push::method_count`]
    /// counts them, counted as they were written).
    pub fn add_since(&mut self, group: StateGroup, p: &PushBuffer, before: push::Mark) {
        let now = p.mark();
        self.add_group(
            group,
            (now.methods - before.methods) as u32,
            (now.dwords - before.dwords) as u32,
        );
    }

    /// Adds `instructions` MME instructions to `group`.
    pub fn add_mme(&mut self, group: StateGroup, instructions: u64) {
        let i = group.index();
        self.mme_instructions[i] =
            self.mme_instructions[i].saturating_add(instructions.min(u64::from(u32::MAX)) as u32);
    }

    /// Adds `methods` and `dwords` to `group`.
    pub fn add_group(&mut self, group: StateGroup, methods: u32, dwords: u32) {
        let i = group.index();
        self.methods[i] += methods;
        self.dwords[i] += dwords;
    }
}

/// The state groups a graphics pipeline holds, as Mesa's
/// vk_graphics_pipeline_state_fill decides them: binding the pipeline sets (Mesa's
/// `set` bits, so the next draw flushes them) the states of these groups it keeps
/// static, and leaves the others as they are. Vertex input, input assembly,
/// rasterization and fragment shading rate are always held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PipelineGroups {
    /// Tessellation: it has tessellation shaders.
    pub tessellation: bool,
    /// Viewport and multisampling: it may rasterize (rasterizer discard off or
    /// dynamic).
    pub rasterization: bool,
    /// Depth and stencil: it may rasterize and its rendering has a depth or stencil
    /// attachment.
    pub depth_stencil: bool,
    /// Colour blending: it may rasterize and its rendering has a colour attachment.
    pub color_blend: bool,
}

impl PipelineGroups {
    /// Every group: what a pipeline whose groups the trace cannot tell is taken to
    /// hold.
    pub const ALL: PipelineGroups = PipelineGroups {
        tessellation: true,
        rasterization: true,
        depth_stencil: true,
        color_blend: true,
    };

    /// Whether a pipeline holding these groups holds `bit`'s state.
    pub fn holds(self, bit: StateBit) -> bool {
        use StateBit::*;
        match bit {
            TsPatchControlPoints | TsDomainOrigin => self.tessellation,
            VpViewportCount
            | VpViewports
            | VpScissorCount
            | VpScissors
            | VpDepthClipNegativeOneToOne
            | MsRasterizationSamples
            | MsSampleMask
            | MsAlphaToCoverageEnable
            | MsAlphaToOneEnable
            | MsSampleLocations
            | MsSampleLocationsEnable => self.rasterization,
            DsDepthTestEnable
            | DsDepthWriteEnable
            | DsDepthCompareOp
            | DsDepthBoundsTestEnable
            | DsDepthBoundsTestBounds
            | DsStencilTestEnable
            | DsStencilOp
            | DsStencilCompareMask
            | DsStencilWriteMask
            | DsStencilReference => self.rasterization && self.depth_stencil,
            CbLogicOpEnable | CbLogicOp | CbBlendEnables | CbBlendEquations | CbWriteMasks
            | CbColorWriteEnables | CbBlendConstants => self.rasterization && self.color_blend,
            _ => true,
        }
    }
}

/// Which values were set since the command buffer began and which changed since the
/// last flush: Mesa's `vk_dynamic_graphics_state` `set` and `dirty` bitsets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Marks {
    set: Dirty,
    dirty: Dirty,
}

impl Marks {
    /// Marks `bit` set and dirty.
    fn mark(&mut self, bit: StateBit) {
        self.set.set(bit);
        self.dirty.set(bit);
    }

    /// Marks `bit` set and dirty when it was never set or `changed` (Mesa's
    /// `SET_DYN_VALUE` test).
    fn mark_if(&mut self, bit: StateBit, changed: bool) {
        if changed || !self.set.has(bit) {
            self.mark(bit);
        }
    }
}

/// The graphics state of one command buffer.
#[derive(Clone, Debug)]
pub struct GraphicsState {
    /// The values.
    pub dynamic: DynamicState,
    marks: Marks,
    /// The bound pipeline, and the bits it made dynamic.
    pipeline: Option<(u64, Dirty)>,
}

impl Default for GraphicsState {
    fn default() -> Self {
        Self::new()
    }
}

/// A pipeline's `VkDynamicState`s, with the state bits they leave to commands worked
/// out as they are added: a pipeline is bound again and again, and each bind reads the
/// bits. Mesa, too, works them out once, when the pipeline is made
/// (vk_graphics_pipeline_state_fill through vk_get_dynamic_graphics_states).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DynamicStates {
    states: Vec<u32>,
    bits: Dirty,
}

impl DynamicStates {
    /// The states `states`, each once.
    pub fn new(states: impl IntoIterator<Item = u32>) -> Self {
        let mut dynamic = Self::default();
        for state in states {
            dynamic.add(state);
        }
        dynamic
    }

    /// Adds `state`, unless it is there already.
    pub fn add(&mut self, state: u32) {
        if self.contains(state) {
            return;
        }
        self.states.push(state);
        for bit in StateBit::of_vk_dynamic_state(state) {
            self.bits.set(*bit);
        }
    }

    /// Whether `state` is one of them.
    pub fn contains(&self, state: u32) -> bool {
        self.states.contains(&state)
    }

    /// The states, in the order they were added.
    pub fn as_slice(&self) -> &[u32] {
        &self.states
    }

    /// The state bits they leave to commands.
    pub fn bits(&self) -> Dirty {
        self.bits
    }
}

/// Stores `value` in `field` and marks `bit` set and dirty when it was never set or
/// differs (Mesa's `SET_DYN_VALUE`).
fn set<T: PartialEq>(marks: &mut Marks, bit: StateBit, field: &mut T, value: T) {
    if *field != value || !marks.set.has(bit) {
        *field = value;
        marks.mark(bit);
    }
}

impl GraphicsState {
    /// A new command buffer's state: Mesa's defaults, nothing set and nothing dirty, as
    /// vk_command_buffer_reset leaves it (vk_dynamic_graphics_state_clear): a value is
    /// flushed only once something sets it or a rendering dirties it, so what no
    /// pipeline or command sets stays as the channel has it.
    pub fn new() -> Self {
        GraphicsState {
            dynamic: DynamicState::default(),
            marks: Marks::default(),
            pipeline: None,
        }
    }

    /// The dirty bits.
    pub fn dirty(&self) -> Dirty {
        self.marks.dirty
    }

    /// vkCmdBindPipeline for graphics, with the pipeline's static state values: each
    /// state of the `groups` it holds that it does not make dynamic is set to its
    /// value, and is dirty where it was never set or differs from what is held (Mesa's
    /// `vk_cmd_set_dynamic_graphics_state`, which copies the pipeline's state over the
    /// command buffer's and marks what changed). Binding the same pipeline again
    /// changes nothing.
    pub fn bind_pipeline_with_state(
        &mut self,
        pipeline: u64,
        dynamic_states: &DynamicStates,
        state: &DynamicState,
        groups: PipelineGroups,
    ) {
        if self.pipeline.map(|(p, _)| p) == Some(pipeline) {
            return;
        }
        let dynamic = dynamic_states.bits();
        self.apply_static(state, dynamic, groups);
        self.pipeline = Some((pipeline, dynamic));
    }

    /// vkCmdBindPipeline of one of vk_meta's internal pipelines (`pipeline`, the id the
    /// model gives them all), with its static state: applied at every bind, as
    /// `vk_cmd_set_dynamic_graphics_state` applies it, for one id stands for several
    /// pipelines (a blit's colour, depth and stencil passes each bind their own).
    pub fn bind_internal_pipeline(
        &mut self,
        pipeline: u64,
        dynamic_states: &DynamicStates,
        state: &DynamicState,
        groups: PipelineGroups,
    ) {
        let dynamic = dynamic_states.bits();
        self.apply_static(state, dynamic, groups);
        self.pipeline = Some((pipeline, dynamic));
    }

    /// Each state of `groups` that `dynamic` leaves static set to its value in `s`.
    fn apply_static(&mut self, s: &DynamicState, dynamic: Dirty, groups: PipelineGroups) {
        let keeps = |bit: StateBit| !dynamic.has(bit) && groups.holds(bit);
        if keeps(StateBit::Vi) {
            let mut bindings = s.vertex_input.bindings.clone();
            if !keeps(StateBit::ViBindingStrides) {
                // The strides come from vkCmdBindVertexBuffers2: keep those held.
                for b in &mut bindings {
                    b.stride = self
                        .dynamic
                        .vertex_input
                        .bindings
                        .iter()
                        .find(|h| h.binding == b.binding)
                        .map_or(b.stride, |h| h.stride);
                }
            }
            self.set_vertex_input_if_changed(&bindings, &s.vertex_input.attributes);
        }
        if keeps(StateBit::IaPrimitiveTopology) {
            self.set_topology(s.topology);
        }
        if keeps(StateBit::IaPrimitiveRestartEnable) {
            self.set_primitive_restart_enable(s.primitive_restart_enable);
        }
        if keeps(StateBit::TsPatchControlPoints) {
            self.set_patch_control_points(s.patch_control_points);
        }
        if keeps(StateBit::TsDomainOrigin) {
            self.set_domain_origin(s.domain_origin);
        }
        if keeps(StateBit::VpViewports) && keeps(StateBit::VpViewportCount) {
            self.set_viewports_with_count(&s.viewports);
        } else if keeps(StateBit::VpViewportCount) {
            // A static count with dynamic viewports: the trace holds no count, taken
            // as the one vkCmdSetViewport gives (set, so flushed, the first time).
            self.marks.mark_if(StateBit::VpViewportCount, false);
        }
        if keeps(StateBit::VpScissors) && keeps(StateBit::VpScissorCount) {
            self.set_scissors_with_count(&s.scissors);
        } else if keeps(StateBit::VpScissorCount) {
            self.marks.mark_if(StateBit::VpScissorCount, false);
        }
        if keeps(StateBit::VpDepthClipNegativeOneToOne) {
            self.set_depth_clip_negative_one_to_one(s.depth_clip_negative_one_to_one);
        }
        if keeps(StateBit::RsRasterizerDiscardEnable) {
            self.set_rasterizer_discard_enable(s.rasterizer_discard_enable);
        }
        if keeps(StateBit::RsDepthClampEnable) {
            self.set_depth_clamp_enable(s.depth_clamp_enable);
        }
        if keeps(StateBit::RsDepthClipEnable) {
            set(
                &mut self.marks,
                StateBit::RsDepthClipEnable,
                &mut self.dynamic.depth_clip_enable,
                s.depth_clip_enable,
            );
        }
        if keeps(StateBit::RsPolygonMode) {
            self.set_polygon_mode(s.polygon_mode);
        }
        if keeps(StateBit::RsCullMode) {
            self.set_cull_mode(s.cull_mode);
        }
        if keeps(StateBit::RsFrontFace) {
            self.set_front_face(s.front_face);
        }
        if keeps(StateBit::RsProvokingVertex) {
            self.set_provoking_vertex(s.provoking_vertex);
        }
        if keeps(StateBit::RsDepthBiasEnable) {
            self.set_depth_bias_enable(s.depth_bias_enable);
        }
        if keeps(StateBit::RsDepthBiasFactors) {
            let [constant, clamp, slope] = s.depth_bias;
            self.set_depth_bias(constant, clamp, slope);
        }
        if keeps(StateBit::RsLineWidth) {
            self.set_line_width(s.line_width);
        }
        if keeps(StateBit::RsLineMode) {
            self.set_line_mode(s.line_mode);
        }
        if keeps(StateBit::RsLineStippleEnable) {
            self.set_line_stipple_enable(s.line_stipple_enable);
        }
        if keeps(StateBit::RsLineStipple) {
            self.set_line_stipple(s.line_stipple.0, s.line_stipple.1);
        }
        if keeps(StateBit::RsRasterizationStream) {
            self.set_rasterization_stream(s.rasterization_stream);
        }
        if keeps(StateBit::RsConservativeMode) {
            self.set_conservative_mode(s.conservative_mode);
        }
        if keeps(StateBit::RsExtraPrimitiveOverestimationSize) {
            self.set_extra_primitive_overestimation_size(s.extra_primitive_overestimation_size);
        }
        if keeps(StateBit::MsRasterizationSamples) && s.rasterization_samples != 0 {
            self.set_rasterization_samples(s.rasterization_samples);
        }
        if keeps(StateBit::MsSampleMask) {
            self.set_sample_mask(s.sample_mask);
        }
        if keeps(StateBit::MsAlphaToCoverageEnable) {
            self.set_alpha_to_coverage_enable(s.alpha_to_coverage_enable);
        }
        if keeps(StateBit::MsAlphaToOneEnable) {
            self.set_alpha_to_one_enable(s.alpha_to_one_enable);
        }
        if keeps(StateBit::MsSampleLocationsEnable) {
            self.set_sample_locations_enable(s.sample_locations_enable);
        }
        if keeps(StateBit::MsSampleLocations) {
            self.set_sample_locations(s.sample_locations.clone());
        }
        if keeps(StateBit::DsDepthTestEnable) {
            self.set_depth_test_enable(s.depth_test_enable);
        }
        if keeps(StateBit::DsDepthWriteEnable) {
            self.set_depth_write_enable(s.depth_write_enable);
        }
        if keeps(StateBit::DsDepthCompareOp) {
            self.set_depth_compare_op(s.depth_compare_op);
        }
        if keeps(StateBit::DsDepthBoundsTestEnable) {
            self.set_depth_bounds_test_enable(s.depth_bounds_test_enable);
        }
        if keeps(StateBit::DsDepthBoundsTestBounds) {
            self.set_depth_bounds(s.depth_bounds.0, s.depth_bounds.1);
        }
        if keeps(StateBit::DsStencilTestEnable) {
            self.set_stencil_test_enable(s.stencil_test_enable);
        }
        // vkCmdSetStencil*'s face masks: front 1, back 2.
        let faces = [
            (
                1,
                s.stencil_ops.front,
                s.stencil_compare_mask.front,
                s.stencil_write_mask.front,
                s.stencil_reference.front,
            ),
            (
                2,
                s.stencil_ops.back,
                s.stencil_compare_mask.back,
                s.stencil_write_mask.back,
                s.stencil_reference.back,
            ),
        ];
        for (face, ops, compare, write, reference) in faces {
            if keeps(StateBit::DsStencilOp) {
                self.set_stencil_op(face, ops);
            }
            if keeps(StateBit::DsStencilCompareMask) {
                self.set_stencil_compare_mask(face, compare);
            }
            if keeps(StateBit::DsStencilWriteMask) {
                self.set_stencil_write_mask(face, write);
            }
            if keeps(StateBit::DsStencilReference) {
                self.set_stencil_reference(face, reference);
            }
        }
        if keeps(StateBit::CbLogicOpEnable) {
            self.set_logic_op_enable(s.logic_op_enable);
        }
        if keeps(StateBit::CbLogicOp) {
            self.set_logic_op(s.logic_op);
        }
        if keeps(StateBit::CbBlendEnables) {
            self.set_blend_enables(0, &s.blend_enables);
        }
        if keeps(StateBit::CbBlendEquations) {
            self.set_blend_equations(0, &s.blend_equations);
        }
        if keeps(StateBit::CbWriteMasks) {
            self.set_write_masks(0, &s.write_masks);
        }
        if keeps(StateBit::CbColorWriteEnables) {
            let enables: Vec<bool> = (0..MAX_RTS)
                .map(|i| s.color_write_enables & 1 << i != 0)
                .collect();
            self.set_color_write_enables(&enables);
        }
        if keeps(StateBit::CbBlendConstants) {
            self.set_blend_constants(s.blend_constants);
        }
        if keeps(StateBit::Fsr) {
            let (size, ops) = s.fragment_shading_rate;
            self.set_fragment_shading_rate(size, ops);
        }
    }

    /// vkCmdBindPipeline for graphics when the trace holds no static state values for
    /// the pipeline (traces made before they were recorded), only which states it
    /// makes dynamic: binding another pipeline is taken to change every state of its
    /// `groups` it keeps static (marked dirty, its values placeholders), and binding the same one
    /// again to change nothing. The methods and their count are NVK's; the values they
    /// carry for static state are not the pipeline's.
    pub fn bind_pipeline(
        &mut self,
        pipeline: u64,
        dynamic_states: &DynamicStates,
        groups: PipelineGroups,
    ) {
        if self.pipeline.map(|(p, _)| p) == Some(pipeline) {
            return;
        }
        let dynamic = dynamic_states.bits();
        for bit in StateBit::ALL {
            if !dynamic.has(bit)
                && groups.holds(bit)
                && !StateBit::NOT_TAKEN_AS_CHANGED.contains(&bit)
            {
                self.marks.mark(bit);
            }
        }
        let defaults = DynamicState::default();
        if !dynamic.has(StateBit::MsSampleLocationsEnable) {
            self.set_sample_locations_enable(defaults.sample_locations_enable);
        }
        if !dynamic.has(StateBit::MsSampleLocations) {
            self.set_sample_locations(defaults.sample_locations);
        }
        if !dynamic.has(StateBit::RsConservativeMode) {
            self.set_conservative_mode(defaults.conservative_mode);
        }
        if !dynamic.has(StateBit::RsExtraPrimitiveOverestimationSize) {
            self.set_extra_primitive_overestimation_size(
                defaults.extra_primitive_overestimation_size,
            );
        }
        if !dynamic.has(StateBit::Fsr) {
            let (size, ops) = defaults.fragment_shading_rate;
            self.set_fragment_shading_rate(size, ops);
        }
        self.pipeline = Some((pipeline, dynamic));
    }

    /// Every set state dirty again, values kept: after NVK's meta path, which restores
    /// the application's dynamic state with its `set` bits copied over its `dirty` ones
    /// (nvk_meta_end).
    pub fn invalidate(&mut self) {
        self.marks.dirty = self.marks.set;
    }

    /// Every state dirty, values and `set` bits kept, the pipeline forgotten: after
    /// vkCmdExecuteCommands (nvk_cmd_invalidate_graphics_state calls
    /// vk_dynamic_graphics_state_dirty_all).
    pub fn dirty_all(&mut self) {
        self.marks.dirty = Dirty::all();
        self.pipeline = None;
    }

    /// Beginning rendering marks the states that depend on the attachments dirty:
    /// colour write enables, blend enables and equations and write masks (the colour
    /// attachment count), the depth and stencil test enables (the depth/stencil
    /// format), the rasterization samples (the sample layout is set at the draw when
    /// the rendering has no attachment), the colour attachment map, and depth clamp
    /// and clip. Mirrors nvk_cmd_buffer_dirty_render_pass.
    pub fn dirty_render_pass(&mut self) {
        for bit in [
            StateBit::CbColorWriteEnables,
            StateBit::CbBlendEnables,
            StateBit::CbBlendEquations,
            StateBit::CbWriteMasks,
            StateBit::DsDepthTestEnable,
            StateBit::DsDepthWriteEnable,
            StateBit::DsDepthBoundsTestEnable,
            StateBit::DsStencilTestEnable,
            StateBit::RsDepthClampEnable,
            StateBit::RsDepthClipEnable,
            StateBit::MsRasterizationSamples,
            StateBit::ColorAttachmentMap,
        ] {
            self.marks.dirty.set(bit);
        }
    }

    /// The colour attachment locations of a rendering: `locations[a]` for attachment
    /// `a` (`None`: no location), the attachments past them without one. Mirrors
    /// vk_cmd_set_rendering_attachment_locations (which vkCmdBeginRendering calls with
    /// each attachment at its own location).
    pub fn set_color_attachment_locations(&mut self, locations: &[Option<u32>]) {
        // Attachments past the ones given keep their locations, as
        // vk_cmd_set_rendering_attachment_locations leaves them.
        let old = self.dynamic.color_map;
        let map = std::array::from_fn(|a| match locations.get(a) {
            Some(Some(l)) if (*l as usize) < MAX_RTS => *l as u8,
            Some(_) => ATTACHMENT_UNUSED,
            None => old[a],
        });
        set(
            &mut self.marks,
            StateBit::ColorAttachmentMap,
            &mut self.dynamic.color_map,
            map,
        );
    }

    /// The colour attachments of the bound pipeline's render pass, a bit each (from
    /// `VkPipelineRenderingCreateInfo`'s formats: Mesa's `rp.attachments`).
    pub fn set_rp_attachments(&mut self, mask: u32) {
        set(
            &mut self.marks,
            StateBit::RpAttachments,
            &mut self.dynamic.rp_attachments,
            mask,
        );
    }

    /// Pushes the methods of every dirty value and clears the dirty bits; returns what
    /// each group wrote, for the rendering `ctx` describes.
    ///
    /// Mirrors nvk_cmd_flush_gfx_dynamic_state: nvk_flush_vi_state,
    /// nvk_flush_ia_state, nvk_flush_ts_state, nvk_flush_vp_state,
    /// nvk_flush_rs_state, nvk_flush_fsr_state, nvk_flush_ms_state,
    /// nvk_flush_ds_state, nvk_flush_cb_state.
    pub fn flush(&mut self, p: &mut PushBuffer, ctx: FlushContext) -> StateCost {
        let mut cost = StateCost::default();
        if self.marks.dirty.is_empty() {
            return cost;
        }
        let (d, dyn_) = (self.marks.dirty, &self.dynamic);
        let mut group = |group: StateGroup, p: &mut PushBuffer, f: &dyn Fn(&mut PushBuffer)| {
            p.close_header();
            let before = p.mark();
            f(p);
            cost.add_since(group, p, before);
        };
        group(StateGroup::VertexInput, p, &|p| {
            vi::flush_vi_state(p, d, dyn_);
            ia::flush_ia_state(p, d, dyn_);
            ia::flush_ts_state(p, d, dyn_);
        });
        group(StateGroup::Viewport, p, &|p| {
            vp::flush_vp_state(p, d, dyn_, ctx.eng3d)
        });
        group(StateGroup::Rasterizer, p, &|p| {
            rs::flush_rs_state(p, d, dyn_, ctx.eng3d, ctx.float_depth);
            if ctx.eng3d >= TURING_A {
                rs::flush_fsr_state(p, d, dyn_);
            }
            ms::flush_ms_state(p, d, dyn_, ctx.eng3d, ctx.render_samples);
        });
        group(StateGroup::DepthStencil, p, &|p| {
            ds::flush_ds_state(p, d, dyn_, (ctx.depth_attachment, ctx.stencil_attachment))
        });
        group(StateGroup::Blend, p, &|p| {
            cb::flush_cb_state(p, d, dyn_, ctx.color_attachments)
        });
        self.marks.dirty = Dirty::default();
        cost
    }
}

/// The masked-state macros' common shape (nvk_mme_set_tess_params,
/// nvk_mme_set_anti_alias, nvk_mme_set_shading_rate_control): loads one masked value,
/// merges it into scratch `slot` ([`set_masked`]), and when that changes the value,
/// stores it and runs `changed` with it. Returns the merged value's register, still
/// allocated unless `changed` freed it.
pub(crate) fn on_masked_scratch_change(
    b: &mut Builder,
    slot: Scratch,
    changed: impl FnOnce(&mut Builder, Value),
) -> Value {
    let value_mask = b.load();
    let old = b.load_scratch(slot as u16);
    let new = set_masked(b, old, value_mask);
    b.free_reg(value_mask);
    b.if_(Cmp::Ne, new, old, |b| {
        b.free_reg(old);
        b.store_scratch(slot as u16, new);
        changed(b, new);
    });
    new
}

/// `old` with the bits the high half of `value_mask` selects replaced from its low
/// half, in a new register (the masked macros' update). Mirrors nvk_mme_set_masked.
fn set_masked(b: &mut Builder, old: Value, value_mask: Value) -> Value {
    let mask = b.merge(Value::Zero, value_mask, 0, 16, 16);
    let new = b.and_not(old, mask);
    // The mask's register takes `value_mask & mask`, then joins the kept bits.
    b.alu_to(AluOp::And, mask, value_mask, mask);
    b.alu_to(AluOp::Or, new, new, mask);
    b.free_reg(mask);
    new
}

/// A float's bits, as NVK's `fui`.
fn fui(f: f32) -> u32 {
    f.to_bits()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_group_is_counted_at_its_place_in_all() {
        for (i, group) in StateGroup::ALL.iter().enumerate() {
            assert_eq!(group.index(), i, "{}", group.name());
            let mut cost = StateCost::default();
            cost.add_group(*group, 3, 5);
            cost.add_mme(*group, 7);
            assert_eq!(
                (cost.methods[i], cost.dwords[i], cost.mme_instructions[i]),
                (3, 5, 7)
            );
            assert_eq!((cost.total_methods(), cost.total_dwords()), (3, 5));
        }
    }
}
