//! Render targets, the surface clip, conditional rendering and transform-feedback
//! buffers (`clc597.h`): what beginning a render pass, dynamic rendering or transform
//! feedback binds.

/// `0x0800 /* SET_COLOR_TARGET_A(0) */`: target `j`'s nine methods (A, B, WIDTH,
/// HEIGHT, FORMAT, MEMORY, THIRD_DIMENSION, ARRAY_PITCH, LAYER) at `+ 64·j`.
pub const SET_COLOR_TARGET_A: u16 = 0x0800;
/// Methods NVK writes per colour target after `SET_COLOR_TARGET_A(j)`, itself included.
pub const COLOR_TARGET_METHODS: usize = 9;
/// `0x0ff4 /* SET_SURFACE_CLIP_HORIZONTAL */`: x 15:0, width 31:16; VERTICAL (y,
/// height) follows.
pub const SET_SURFACE_CLIP_HORIZONTAL: u16 = 0x0ff4;
/// `0x0fe0 /* SET_ZT_A */`: address high; B, FORMAT, BLOCK_SIZE, ARRAY_PITCH follow.
pub const SET_ZT_A: u16 = 0x0fe0;
/// `0x1208 /* SET_ZT_SPARSE */` (MAXWELL_B and later): enable 0.
pub const SET_ZT_SPARSE: u16 = 0x1208;
/// `0x1228 /* SET_ZT_SIZE_A */`: width; B (height) and C (third dimension 15:0,
/// control 16) follow.
pub const SET_ZT_SIZE_A: u16 = 0x1228;
/// `0x1538 /* SET_ZT_SELECT */`: the number of depth targets, 0 or 1.
pub const SET_ZT_SELECT: u16 = 0x1538;
/// `0x179c /* SET_ZT_LAYER */`: the first layer.
pub const SET_ZT_LAYER: u16 = 0x179c;
/// `0x19cc /* SET_Z_COMPRESSION */`: enable 0.
pub const SET_Z_COMPRESSION: u16 = 0x19cc;
/// `0x19e0 /* SET_COLOR_COMPRESSION(0) */`: target `i` at `+ 4·i`, enable 0.
pub const SET_COLOR_COMPRESSION: u16 = 0x19e0;
/// `0x15d0 /* SET_ANTI_ALIAS */`: the samples mode in 3:0.
pub const SET_ANTI_ALIAS: u16 = 0x15d0;
/// `0x1338 /* INVALIDATE_TEXTURE_DATA_CACHE */`: lines 0 (ALL 0).
pub const INVALIDATE_TEXTURE_DATA_CACHE: u16 = 0x1338;
/// `0x1550 /* SET_RENDER_ENABLE_A */`: the predicate's address high; B (low, 16-byte
/// aligned) and C (mode 2:0) follow. The compute class has the same three methods.
pub const SET_RENDER_ENABLE_A: u16 = 0x1550;
/// `0x1944 /* SET_RENDER_ENABLE_OVERRIDE */`: mode 1:0.
pub const SET_RENDER_ENABLE_OVERRIDE: u16 = 0x1944;

/// `0x0380 /* SET_STREAM_OUT_BUFFER_ENABLE(0) */`: transform-feedback buffer `j`'s
/// ENABLE, ADDRESS_A, ADDRESS_B, SIZE and LOAD_WRITE_POINTER at `+ 32·j`.
pub const SET_STREAM_OUT_BUFFER_ENABLE: u16 = 0x0380;
/// `0x0390 /* SET_STREAM_OUT_BUFFER_LOAD_WRITE_POINTER(0) */`.
pub const SET_STREAM_OUT_BUFFER_LOAD_WRITE_POINTER: u16 = 0x0390;
/// `0x0744 /* SET_STREAM_OUTPUT */`: enable 0.
pub const SET_STREAM_OUTPUT: u16 = 0x0744;

/// `SET_STREAM_OUT_BUFFER_ENABLE(j)`.
pub const fn set_stream_out_buffer_enable(j: u16) -> u16 {
    SET_STREAM_OUT_BUFFER_ENABLE + 32 * j
}

/// `SET_COLOR_TARGET_A(j)`.
pub const fn set_color_target_a(j: u16) -> u16 {
    SET_COLOR_TARGET_A + 64 * j
}

/// `SET_COLOR_COMPRESSION(i)`.
pub const fn set_color_compression(i: u16) -> u16 {
    SET_COLOR_COMPRESSION + 4 * i
}

/// `SET_COLOR_TARGET_MEMORY`'s layout bit (12): pitch rather than block linear.
pub const COLOR_TARGET_MEMORY_LAYOUT_PITCH: u32 = 1 << 12;
/// `SET_COLOR_TARGET_MEMORY`'s third-dimension control (16): depth rather than layers.
pub const COLOR_TARGET_MEMORY_THIRD_DIMENSION_IS_DEPTH: u32 = 1 << 16;
/// `SET_COLOR_TARGET_FORMAT_V_DISABLED`.
pub const COLOR_TARGET_FORMAT_DISABLED: u32 = 0;

/// `SET_RENDER_ENABLE_C`'s modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum RenderEnableMode {
    /// `MODE_TRUE`: always render.
    True = 1,
    /// `MODE_RENDER_IF_EQUAL`: render when the two words at the address are equal.
    RenderIfEqual = 3,
    /// `MODE_RENDER_IF_NOT_EQUAL`.
    RenderIfNotEqual = 4,
}

/// `SET_RENDER_ENABLE_OVERRIDE`'s modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum RenderEnableOverride {
    /// `MODE_USE_RENDER_ENABLE`: follow the predicate.
    UseRenderEnable = 0,
    /// `MODE_ALWAYS_RENDER`.
    AlwaysRender = 1,
}

/// The class header's name of a render-target method.
pub fn method_name(mthd: u16) -> Option<&'static str> {
    const COLOR_TARGET: [&str; COLOR_TARGET_METHODS] = [
        "SET_COLOR_TARGET_A(j)",
        "SET_COLOR_TARGET_B(j)",
        "SET_COLOR_TARGET_WIDTH(j)",
        "SET_COLOR_TARGET_HEIGHT(j)",
        "SET_COLOR_TARGET_FORMAT(j)",
        "SET_COLOR_TARGET_MEMORY(j)",
        "SET_COLOR_TARGET_THIRD_DIMENSION(j)",
        "SET_COLOR_TARGET_ARRAY_PITCH(j)",
        "SET_COLOR_TARGET_LAYER(j)",
    ];
    if (SET_COLOR_TARGET_A..set_color_target_a(8)).contains(&mthd) {
        return COLOR_TARGET
            .get(usize::from((mthd - SET_COLOR_TARGET_A) % 64 / 4))
            .copied();
    }
    if (SET_STREAM_OUT_BUFFER_ENABLE..set_stream_out_buffer_enable(4)).contains(&mthd) {
        const XFB: [&str; 5] = [
            "SET_STREAM_OUT_BUFFER_ENABLE(j)",
            "SET_STREAM_OUT_BUFFER_ADDRESS_A(j)",
            "SET_STREAM_OUT_BUFFER_ADDRESS_B(j)",
            "SET_STREAM_OUT_BUFFER_SIZE(j)",
            "SET_STREAM_OUT_BUFFER_LOAD_WRITE_POINTER(j)",
        ];
        return XFB
            .get(usize::from((mthd - SET_STREAM_OUT_BUFFER_ENABLE) % 32 / 4))
            .copied();
    }
    if (SET_COLOR_COMPRESSION..set_color_compression(8)).contains(&mthd) {
        return Some("SET_COLOR_COMPRESSION(i)");
    }
    Some(match mthd {
        SET_SURFACE_CLIP_HORIZONTAL => "SET_SURFACE_CLIP_HORIZONTAL",
        0x0ff8 => "SET_SURFACE_CLIP_VERTICAL",
        SET_ZT_A => "SET_ZT_A",
        0x0fe4 => "SET_ZT_B",
        0x0fe8 => "SET_ZT_FORMAT",
        0x0fec => "SET_ZT_BLOCK_SIZE",
        0x0ff0 => "SET_ZT_ARRAY_PITCH",
        SET_ZT_SPARSE => "SET_ZT_SPARSE",
        SET_ZT_SIZE_A => "SET_ZT_SIZE_A",
        0x122c => "SET_ZT_SIZE_B",
        0x1230 => "SET_ZT_SIZE_C",
        SET_ZT_SELECT => "SET_ZT_SELECT",
        SET_ZT_LAYER => "SET_ZT_LAYER",
        SET_Z_COMPRESSION => "SET_Z_COMPRESSION",
        SET_ANTI_ALIAS => "SET_ANTI_ALIAS",
        INVALIDATE_TEXTURE_DATA_CACHE => "INVALIDATE_TEXTURE_DATA_CACHE",
        SET_RENDER_ENABLE_A => "SET_RENDER_ENABLE_A",
        0x1554 => "SET_RENDER_ENABLE_B",
        0x1558 => "SET_RENDER_ENABLE_C",
        SET_RENDER_ENABLE_OVERRIDE => "SET_RENDER_ENABLE_OVERRIDE",
        SET_STREAM_OUTPUT => "SET_STREAM_OUTPUT",
        _ => return None,
    })
}
