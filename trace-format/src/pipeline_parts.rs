//! Vulkan values both the capture layer and the GFXReconstruct importer read a graphics
//! pipeline's create info by: the parts a pipeline library defines, and the dynamic
//! states that leave a static state unrecorded.

/// `VK_GRAPHICS_PIPELINE_LIBRARY_VERTEX_INPUT_INTERFACE_BIT_EXT`.
pub const VERTEX_INPUT_INTERFACE: u32 = 0x1;
/// `VK_GRAPHICS_PIPELINE_LIBRARY_PRE_RASTERIZATION_SHADERS_BIT_EXT`.
pub const PRE_RASTERIZATION_SHADERS: u32 = 0x2;
/// `VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_SHADER_BIT_EXT`.
pub const FRAGMENT_SHADER: u32 = 0x4;
/// `VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_OUTPUT_INTERFACE_BIT_EXT`.
pub const FRAGMENT_OUTPUT_INTERFACE: u32 = 0x8;

/// `VkDynamicState` values whose static state a pipeline's record leaves out.
pub mod dynamic {
    /// `VK_DYNAMIC_STATE_VIEWPORT`.
    pub const VIEWPORT: u32 = 0;
    /// `VK_DYNAMIC_STATE_SCISSOR`.
    pub const SCISSOR: u32 = 1;
    /// `VK_DYNAMIC_STATE_VIEWPORT_WITH_COUNT`.
    pub const VIEWPORT_WITH_COUNT: u32 = 1_000_267_003;
    /// `VK_DYNAMIC_STATE_SCISSOR_WITH_COUNT`.
    pub const SCISSOR_WITH_COUNT: u32 = 1_000_267_004;
    /// `VK_DYNAMIC_STATE_VERTEX_INPUT_EXT`.
    pub const VERTEX_INPUT: u32 = 1_000_352_000;
    /// `VK_DYNAMIC_STATE_SAMPLE_MASK_EXT`.
    pub const SAMPLE_MASK: u32 = 1_000_455_009;
    /// `VK_DYNAMIC_STATE_COLOR_BLEND_ENABLE_EXT`.
    pub const COLOR_BLEND_ENABLE: u32 = 1_000_455_010;
    /// `VK_DYNAMIC_STATE_COLOR_BLEND_EQUATION_EXT`.
    pub const COLOR_BLEND_EQUATION: u32 = 1_000_455_011;
    /// `VK_DYNAMIC_STATE_COLOR_WRITE_MASK_EXT`.
    pub const COLOR_WRITE_MASK: u32 = 1_000_455_012;
}
