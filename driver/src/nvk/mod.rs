//! NVK's command encoding: what a Vulkan command buffer becomes on an NVIDIA GPU.
//!
//! [`Device`] holds the GPU generation and uploads every [`Macro`] through the MME RAM
//! methods. A [`CommandEncoder`] turns Vulkan commands into a push buffer: draws become
//! `CALL_MME_MACRO` with their parameters, dynamic rendering (render passes reach it as
//! one rendering a subpass) binds the targets and sets the view mask in shadow scratch
//! for the macros to loop over, queries become report
//! semaphores. The [`gpu`](crate::gpu) model executes the result.

mod bind;
mod cbuf;
pub mod clear;
pub mod copy_queries;
mod descriptors;
mod device;
pub mod dispatch;
mod draw;
mod encoder;
pub mod events;
pub mod format;
pub mod image;
mod macros;
pub mod meta;
mod priv_reg;
pub mod query;
pub mod rendering;
pub mod root;
pub mod shader;
pub mod state;
mod sync;
pub mod transfer;
mod xfb;

pub use cbuf::ShaderState;

/// The NVK release the model follows (Mesa's version; Debian trixie's build of it is
/// the oracle `macroscope verify` runs by default).
pub const MODELLED_NVK: &str = "25.0.7";

/// The model's command-buffer upload memory: push descriptor sets (from
/// 0x1_0002_0000), compute root tables and QMDs (from 0x1_0040_0000),
/// vkCmdUpdateBuffer's data (from 0x1_0080_0000) and conditional rendering's copied
/// predicate (at 0x1_00c0_0000). Like NVK's upload memory it is
/// streamed, an address standing for no object: NVK places each upload anew.
pub const UPLOAD_MEMORY: std::ops::Range<u64> = 0x1_0002_0000..0x1_0100_0000;
pub use descriptors::{BufferDescriptor, DescriptorState, DynamicBuffer};
pub use device::{upload_macro, Device, DeviceError, MemoryNeeds};
pub use encoder::{CommandEncoder, DrawKind, IndirectArgs, Recorded};
pub use macros::{lengthen_for_tests, Macro};
pub use query::{QueryPool, QueryType};
pub use rendering::RenderingInfo;
pub use sync::{access, stage, Barrier};

/// The shadow scratch slots NVK's macros use (`SET_MME_SHADOW_SCRATCH(i)`), numbered
/// as NVK 25.0.7's `enum nvk_mme_scratch` numbers them (slot 0 is where the
/// firmware's falcon answers). The slots the model's own macros use that NVK 25.0.7
/// does not have follow NVK's last (`Z_CLAMP`, 62).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scratch {
    /// Compute shader invocations, high word.
    CsInvocationsHi = 1,
    /// Compute shader invocations, low word.
    CsInvocationsLo = 2,
    /// The BEGIN word of the draw in progress.
    DrawBegin = 3,
    /// Draws an indirect command makes.
    DrawCount = 4,
    /// Padding dwords between spliced indirect commands.
    DrawPadDw = 5,
    /// The draw index (gl_DrawID).
    DrawIdx = 6,
    /// The subpass's view mask.
    ViewMask = 7,
    /// High word of a zero page's address: pre-Turing binds an empty vertex or index
    /// buffer there (NVK's `ZERO_ADDR_HI`).
    ZeroAddrHi = 25,
    /// Low word of the zero page's address (`ZERO_ADDR_LO`).
    ZeroAddrLo = 26,
    /// The vertex streams enabled (`VB_ENABLES`), for `SET_VB_ENABLES` to change only
    /// the streams whose bit changed.
    VbEnables = 11,
    /// The tessellation parameters last set, with the lower-left origin at bit 12
    /// (`TESS_PARAMS`).
    TessParams = 12,
    /// The anti-aliasing state: minimum sample shading's log2 reciprocal in 3:0, the
    /// sample count's log2 in 7:4 (`ANTI_ALIAS`).
    AntiAlias = 21,
    /// The sample masks of two-pass sample shading, two samples a slot
    /// (`SAMPLE_MASKS_2PASS_0..3`).
    SampleMasks2Pass0 = 13,
    /// The sample masks of four-pass sample shading (`SAMPLE_MASKS_4PASS_0..3`).
    SampleMasks4Pass0 = 17,
    /// Whether depth clamping is on (`Z_CLAMP`), for the pre-Volta Z clamp macros.
    ZClamp = 62,
    /// What the firmware's falcon answers a private-register write through
    /// (`FALCON_0..2`).
    Falcon0 = 0,
    /// The conservative-rasterization state last set (`CONSERVATIVE_RASTER_STATE`).
    ConservativeRasterState = 10,
    /// High word of constant buffer 0's address (`CB0_ADDR_HI`); the low word follows.
    Cb0AddrHi = 23,
    /// Low word (`CB0_ADDR_LO`).
    Cb0AddrLo = 24,
    /// The first vertex last written to `draw.base_vertex` (`CB0_FIRST_VERTEX`): the
    /// draw macros write the root table only when it changes.
    Cb0FirstVertex = 27,
    /// The draw index last written to `draw.draw_index` (`CB0_DRAW_INDEX`).
    Cb0DrawIndex = 28,
    /// The view index last written to `draw.view_index` (`CB0_VIEW_INDEX`).
    Cb0ViewIndex = 29,
    /// Viewport 0's min Z (`VIEWPORT0_MIN_Z`); its max Z follows, then viewport 1's...
    /// two slots a viewport, sixteen viewports.
    Viewport0MinZ = 30,
    /// The shading-rate control last set (`SHADING_RATE_CONTROL`): bit 0 the
    /// application's enable, bit 1 clear when sample shading needs every sample.
    ShadingRateControl = 22,
}

/// The largest view count NVK exposes (`maxMultiviewViewCount`): the view mask is 32 bits.
pub const MAX_MULTIVIEW_VIEW_COUNT: u32 = 32;
