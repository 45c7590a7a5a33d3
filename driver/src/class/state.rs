//! 3D-class methods of the graphics state NVK's `nvk_flush_*_state` functions set:
//! viewports and scissors, the rasterizer, depth and stencil, colour blending, input
//! assembly and multisampling. Offsets from NVIDIA's class header for TURING_A
//! (`clc597.h`; the same in every 3D class from Fermi on unless noted). Arrays take their
//! index through the `const fn`s below.

/// `0x0320 /* SET_TESSELLATION_PARAMETERS */`: domain 3:0, spacing 7:4, output
/// primitives 11:8.
pub const SET_TESSELLATION_PARAMETERS: u16 = 0x0320;
/// `0x0754 /* SET_HYBRID_ANTI_ALIAS_CONTROL */`: passes 3:0, centroid 4 (per
/// fragment 0, per pass 1).
pub const SET_HYBRID_ANTI_ALIAS_CONTROL: u16 = 0x0754;
/// `0x037c /* SET_RASTER_ENABLE */`: 0 discards every primitive before rasterization.
pub const SET_RASTER_ENABLE: u16 = 0x037c;
/// `0x0740 /* SET_RASTER_INPUT */`: the transform-feedback stream that is rasterized.
pub const SET_RASTER_INPUT: u16 = 0x0740;

/// `0x0a00 /* SET_VIEWPORT_SCALE_X(0) */`; viewport `j` at `+ 32·j`, followed by
/// SCALE_Y, SCALE_Z, OFFSET_X, OFFSET_Y, OFFSET_Z and COORDINATE_SWIZZLE.
pub const SET_VIEWPORT_SCALE_X: u16 = 0x0a00;
/// `0x0a18 /* SET_VIEWPORT_COORDINATE_SWIZZLE(0) */` (MAXWELL_B and later).
pub const SET_VIEWPORT_COORDINATE_SWIZZLE: u16 = 0x0a18;
/// `0x0c00 /* SET_VIEWPORT_CLIP_HORIZONTAL(0) */`; viewport `j` at `+ 16·j`, followed by
/// CLIP_VERTICAL, CLIP_MIN_Z and CLIP_MAX_Z.
pub const SET_VIEWPORT_CLIP_HORIZONTAL: u16 = 0x0c00;
/// `0x0d7c /* SET_VIEWPORT_Z_CLIP */`: 0 −w to +w, 1 zero to +w.
pub const SET_VIEWPORT_Z_CLIP: u16 = 0x0d7c;
/// `0x0dac /* SET_FRONT_POLYGON_MODE */`; BACK_POLYGON_MODE follows.
pub const SET_FRONT_POLYGON_MODE: u16 = 0x0dac;
/// `0x0dc0 /* SET_POLY_OFFSET_POINT */`; POLY_OFFSET_LINE and POLY_OFFSET_FILL follow.
pub const SET_POLY_OFFSET_POINT: u16 = 0x0dc0;
/// `0x0dcc /* SET_PATCH */`: control points per patch.
pub const SET_PATCH: u16 = 0x0dcc;
/// `0x0e00 /* SET_SCISSOR_ENABLE(0) */`; scissor `j` at `+ 16·j`, followed by
/// SCISSOR_HORIZONTAL and SCISSOR_VERTICAL.
pub const SET_SCISSOR_ENABLE: u16 = 0x0e00;
/// `0x0f54 /* SET_BACK_STENCIL_FUNC_REF */`.
pub const SET_BACK_STENCIL_FUNC_REF: u16 = 0x0f54;
/// `0x0f58 /* SET_BACK_STENCIL_MASK */`.
pub const SET_BACK_STENCIL_MASK: u16 = 0x0f58;
/// `0x0f5c /* SET_BACK_STENCIL_FUNC_MASK */`.
pub const SET_BACK_STENCIL_FUNC_MASK: u16 = 0x0f5c;
/// `0x0f9c /* SET_DEPTH_BOUNDS_MIN */`; DEPTH_BOUNDS_MAX follows.
pub const SET_DEPTH_BOUNDS_MIN: u16 = 0x0f9c;
/// `0x0fbc /* SET_SAMPLE_MASK_X0_Y0 */`; X1_Y0, X0_Y1 and X1_Y1 follow.
pub const SET_SAMPLE_MASK_X0_Y0: u16 = 0x0fbc;
/// `0x1110 /* SET_DEPTH_BIAS_CONTROL */`: whether the bias unit depends on the depth format.
pub const SET_DEPTH_BIAS_CONTROL: u16 = 0x1110;
/// `0x12cc /* SET_DEPTH_TEST */`.
pub const SET_DEPTH_TEST: u16 = 0x12cc;
/// `0x12e8 /* SET_DEPTH_WRITE */`.
pub const SET_DEPTH_WRITE: u16 = 0x12e8;
/// `0x130c /* SET_DEPTH_FUNC */`: `0x200 | VkCompareOp` (the OGL encodings).
pub const SET_DEPTH_FUNC: u16 = 0x130c;
/// `0x131c /* SET_BLEND_CONST_RED */`; GREEN, BLUE and ALPHA follow.
pub const SET_BLEND_CONST_RED: u16 = 0x131c;
/// `0x1360 /* SET_BLEND(0) */`: blending enabled for colour target `i` at `+ 4·i`.
pub const SET_BLEND: u16 = 0x1360;
/// `0x1380 /* SET_STENCIL_TEST */`.
pub const SET_STENCIL_TEST: u16 = 0x1380;
/// `0x1384 /* SET_STENCIL_OP_FAIL */`; OP_ZFAIL, OP_ZPASS and FUNC follow.
pub const SET_STENCIL_OP_FAIL: u16 = 0x1384;
/// `0x1394 /* SET_STENCIL_FUNC_REF */`.
pub const SET_STENCIL_FUNC_REF: u16 = 0x1394;
/// `0x1398 /* SET_STENCIL_FUNC_MASK */`.
pub const SET_STENCIL_FUNC_MASK: u16 = 0x1398;
/// `0x139c /* SET_STENCIL_MASK */`.
pub const SET_STENCIL_MASK: u16 = 0x139c;
/// `0x13b0 /* SET_LINE_WIDTH_FLOAT */`; ALIASED_LINE_WIDTH_FLOAT follows.
pub const SET_LINE_WIDTH_FLOAT: u16 = 0x13b0;
/// `0x1418 /* SET_LINE_MULTISAMPLE_OVERRIDE */`.
pub const SET_LINE_MULTISAMPLE_OVERRIDE: u16 = 0x1418;
/// `0x153c /* SET_ANTI_ALIAS_ALPHA_CONTROL */`: alpha to coverage bit 0, alpha to one bit 4.
pub const SET_ANTI_ALIAS_ALPHA_CONTROL: u16 = 0x153c;
/// `0x156c /* SET_SLOPE_SCALE_DEPTH_BIAS */`.
pub const SET_SLOPE_SCALE_DEPTH_BIAS: u16 = 0x156c;
/// `0x1570 /* SET_ANTI_ALIASED_LINE */`.
pub const SET_ANTI_ALIASED_LINE: u16 = 0x1570;
/// `0x1598 /* SET_BACK_STENCIL_OP_FAIL */`; OP_ZFAIL, OP_ZPASS and FUNC follow.
pub const SET_BACK_STENCIL_OP_FAIL: u16 = 0x1598;
/// `0x15bc /* SET_DEPTH_BIAS */`.
pub const SET_DEPTH_BIAS: u16 = 0x15bc;
/// `0x1644 /* SET_DA_PRIMITIVE_RESTART */`; DA_PRIMITIVE_RESTART_INDEX follows.
pub const SET_DA_PRIMITIVE_RESTART: u16 = 0x1644;
/// `0x166c /* SET_LINE_STIPPLE */`.
pub const SET_LINE_STIPPLE: u16 = 0x166c;
/// `0x1680 /* SET_LINE_STIPPLE_PARAMETERS */`: factor − 1 in 7:0, pattern in 23:8.
pub const SET_LINE_STIPPLE_PARAMETERS: u16 = 0x1680;
/// `0x1684 /* SET_PROVOKING_VERTEX */`: 0 first, 1 last.
pub const SET_PROVOKING_VERTEX: u16 = 0x1684;
/// `0x187c /* SET_DEPTH_BIAS_CLAMP */`.
pub const SET_DEPTH_BIAS_CLAMP: u16 = 0x187c;
/// `0x1918 /* OGL_SET_CULL */`.
pub const OGL_SET_CULL: u16 = 0x1918;
/// `0x191c /* OGL_SET_FRONT_FACE */`: CW 0x900, CCW 0x901 (GL's sense, so Vulkan's reversed).
pub const OGL_SET_FRONT_FACE: u16 = 0x191c;
/// `0x1920 /* OGL_SET_CULL_FACE */`: FRONT 0x404, BACK 0x405, FRONT_AND_BACK 0x408.
pub const OGL_SET_CULL_FACE: u16 = 0x1920;
/// `0x193c /* SET_VIEWPORT_CLIP_CONTROL */` (VOLTA_A's layout).
pub const SET_VIEWPORT_CLIP_CONTROL: u16 = 0x193c;
/// `0x19bc /* SET_DEPTH_BOUNDS_TEST */`.
pub const SET_DEPTH_BOUNDS_TEST: u16 = 0x19bc;
/// `0x19c4 /* SET_LOGIC_OP */`.
pub const SET_LOGIC_OP: u16 = 0x19c4;
/// `0x19c8 /* SET_LOGIC_OP_FUNC */`: `0x1500 | VkLogicOp`.
pub const SET_LOGIC_OP_FUNC: u16 = 0x19c8;
/// `0x1e00 /* SET_BLEND_PER_TARGET_SEPARATE_FOR_ALPHA(0) */`; target `j` at `+ 32·j`,
/// followed by COLOR_OP, COLOR_SOURCE_COEFF, COLOR_DEST_COEFF, ALPHA_OP,
/// ALPHA_SOURCE_COEFF and ALPHA_DEST_COEFF.
pub const SET_BLEND_PER_TARGET_SEPARATE_FOR_ALPHA: u16 = 0x1e00;

/// `0x0238 /* SET_INDEX_BUFFER_SIZE_A */` (TURING_A): size bits 39:32; `_B` follows.
pub const SET_INDEX_BUFFER_SIZE_A: u16 = 0x0238;
/// `0x0600 /* SET_VERTEX_STREAM_SIZE_A(0) */` (TURING_A): stream `j` at `+ 8·j`, `_B` after.
pub const SET_VERTEX_STREAM_SIZE_A: u16 = 0x0600;
/// `0x1648 /* SET_DA_PRIMITIVE_RESTART_INDEX */`.
pub const SET_DA_PRIMITIVE_RESTART_INDEX: u16 = 0x1648;
/// `0x17c8 /* SET_INDEX_BUFFER_A */`: address bits 39:32; B (low), and before Turing
/// C and D (the limit address), follow.
pub const SET_INDEX_BUFFER_A: u16 = 0x17c8;
/// `0x17d8 /* SET_INDEX_BUFFER_E */`: index size (one byte 0, two 1, four 2).
pub const SET_INDEX_BUFFER_E: u16 = 0x17d8;
/// `0x1c04 /* SET_VERTEX_STREAM_A_LOCATION_A(0) */`: stream `j` at `+ 16·j`; `_B` follows.
pub const SET_VERTEX_STREAM_A_LOCATION_A: u16 = 0x1c04;
/// `0x1f00 /* SET_VERTEX_STREAM_LIMIT_A_A(0) */` (before Turing, `clc397.h`): stream `j`
/// at `+ 8·j`; `_B` follows.
pub const SET_VERTEX_STREAM_LIMIT_A_A: u16 = 0x1f00;

/// `0x1160 /* SET_VERTEX_ATTRIBUTE_A(0) */`: attribute `i` at `+ 4·i` (stream 4:0,
/// offset 20:7, component bit widths 26:21, numerical type 29:27, swap R and B 31).
pub const SET_VERTEX_ATTRIBUTE_A: u16 = 0x1160;
/// `0x1880 /* SET_VERTEX_STREAM_INSTANCE_A(0) */`: per-instance stream `i` at `+ 4·i`.
pub const SET_VERTEX_STREAM_INSTANCE_A: u16 = 0x1880;
/// `0x1c00 /* SET_VERTEX_STREAM_A_FORMAT(0) */`: stream `j` at `+ 16·j` (stride 11:0,
/// enable 12).
pub const SET_VERTEX_STREAM_A_FORMAT: u16 = 0x1c00;
/// `0x1c0c /* SET_VERTEX_STREAM_A_FREQUENCY(0) */`: stream `j` at `+ 16·j`.
pub const SET_VERTEX_STREAM_A_FREQUENCY: u16 = 0x1c0c;

/// `0x0050 /* NV906F_SET_REFERENCE */`: a channel (host) method NVK sends on the 3D
/// subchannel to wait for the MME's data reads to drain.
pub const SET_REFERENCE: u16 = 0x0050;
/// `0x0110 /* WAIT_FOR_IDLE */`.
pub const WAIT_FOR_IDLE: u16 = 0x0110;
/// `0x021c /* INVALIDATE_SHADER_CACHES */` (3D and compute classes): instruction 0,
/// data 4, flush data 2, constant 12.
pub const INVALIDATE_SHADER_CACHES: u16 = 0x021c;
/// `0x0298 /* INVALIDATE_SKED_CACHES */` (compute class, MAXWELL_COMPUTE_B and later).
pub const INVALIDATE_SKED_CACHES: u16 = 0x0298;
/// `0x056c /* MME_DMA_SYSMEMBAR */` (TURING_A).
pub const MME_DMA_SYSMEMBAR: u16 = 0x056c;
/// `0x0da4 /* INVALIDATE_SHADER_CACHES_NO_WFI */`: global data 4, constant 12.
pub const INVALIDATE_SHADER_CACHES_NO_WFI: u16 = 0x0da4;
/// `0x1288 /* INVALIDATE_TEXTURE_DATA_CACHE_NO_WFI */`: lines 0 (ALL 0).
pub const INVALIDATE_TEXTURE_DATA_CACHE_NO_WFI: u16 = 0x1288;

/// `0x0f90 /* SET_SINGLE_CT_WRITE_CONTROL */`: 1 when every target takes target 0's
/// write mask.
pub const SET_SINGLE_CT_WRITE_CONTROL: u16 = 0x0f90;
/// `0x1a00 /* SET_CT_WRITE(0) */`: target `i`'s write mask at `+ 4·i` (R 0, G 4, B 8,
/// A 12).
pub const SET_CT_WRITE: u16 = 0x1a00;

/// `0x0124 /* SET_MME_SHADOW_RAM_CONTROL */`: mode 1:0 (track 0, track with filter 1,
/// passthrough 2, replay 3).
pub const SET_MME_SHADOW_RAM_CONTROL: u16 = 0x0124;
/// `0x0d68 /* SET_STATISTICS_COUNTER */`: each pipeline statistic's enable.
pub const SET_STATISTICS_COUNTER: u16 = 0x0d68;
/// `0x0100 /* NO_OPERATION */`.
pub const NO_OPERATION: u16 = 0x0100;
/// `0x2310 /* SET_FALCON04 */`: hands the firmware's falcon a private-register write
/// (value and mask in the scratch slots before it); the falcon answers in scratch.
pub const SET_FALCON04: u16 = 0x2310;
/// `0x0010 /* NV906F_SEMAPHOREA */`: a channel (host) semaphore, sent on the 3D
/// subchannel: address high, then B (low >> 2), C (payload), D (operation).
pub const HOST_SEMAPHORE_A: u16 = 0x0010;
/// `NV906F_SEMAPHORED` for an acquire that waits until the word is at least the
/// payload: `OPERATION_ACQ_GEQ` (4), `ACQUIRE_SWITCH_ENABLED` (12), `RELEASE_SIZE_4BYTE`
/// (24).
pub const HOST_SEMAPHORE_ACQ_GEQ_SWITCH_4BYTE: u32 = 4 | (1 << 12) | (1 << 24);
/// `NV906F_SEMAPHORED` for an acquire that waits until the word equals the payload:
/// `OPERATION_ACQUIRE` (1), `ACQUIRE_SWITCH_ENABLED` (12), `RELEASE_SIZE_4BYTE` (24).
pub const HOST_SEMAPHORE_ACQUIRE_SWITCH_4BYTE: u32 = 1 | (1 << 12) | (1 << 24);
/// `0x1424 /* INVALIDATE_SAMPLER_CACHE_NO_WFI */` (3D and compute): lines 0 (ALL 0);
/// on the 3D class `INVALIDATE_TEXTURE_HEADER_CACHE_NO_WFI` follows at `0x1428`.
pub const INVALIDATE_SAMPLER_CACHE_NO_WFI: u16 = 0x1424;
/// `0x0244 /* INVALIDATE_TEXTURE_HEADER_CACHE_NO_WFI */` on the compute class.
pub const COMPUTE_INVALIDATE_TEXTURE_HEADER_CACHE_NO_WFI: u16 = 0x0244;
/// `0x02b4 /* SEND_PCAS_A */` (compute class): launches the QMD at this address
/// shifted right by 8.
pub const SEND_PCAS_A: u16 = 0x02b4;
/// `0x02bc /* SEND_SIGNALING_PCAS_B */` (compute class): invalidate 0, schedule 1.
pub const SEND_SIGNALING_PCAS_B: u16 = 0x02bc;
/// `0x02c0 /* SEND_SIGNALING_PCAS2_B */` (compute class, AMPERE_COMPUTE_A and later):
/// the action 3:0.
pub const SEND_SIGNALING_PCAS2_B: u16 = 0x02c0;

/// `0x0d6c /* SET_CLEAR_RECT_HORIZONTAL */`: xmin 15:0, xmax 31:16; VERTICAL follows.
pub const SET_CLEAR_RECT_HORIZONTAL: u16 = 0x0d6c;
/// `0x0d80 /* SET_COLOR_CLEAR_VALUE(0) */`: four words.
pub const SET_COLOR_CLEAR_VALUE: u16 = 0x0d80;
/// `0x0d90 /* SET_Z_CLEAR_VALUE */`.
pub const SET_Z_CLEAR_VALUE: u16 = 0x0d90;
/// `0x0da0 /* SET_STENCIL_CLEAR_VALUE */`.
pub const SET_STENCIL_CLEAR_VALUE: u16 = 0x0da0;
/// `0x10f8 /* SET_CLEAR_SURFACE_CONTROL */`: respect stencil mask 0, use clear rect 4,
/// use scissor 0 8, use viewport clip 0 12.
pub const SET_CLEAR_SURFACE_CONTROL: u16 = 0x10f8;
/// `0x19d0 /* CLEAR_SURFACE */`: Z 0, stencil 1, R/G/B/A 2–5, MRT select 9:6, RT array
/// index 25:10. Writing it clears.
pub const CLEAR_SURFACE: u16 = 0x19d0;

/// `0x121c /* SET_CT_SELECT */`: target count 3:0, then the colour target each
/// location writes, three bits each from bit 4 (TARGET0 6:4 … TARGET7 27:25).
pub const SET_CT_SELECT: u16 = 0x121c;
/// `0x11e0 /* SET_ANTI_ALIAS_SAMPLE_POSITIONS(0) */` (MAXWELL_B and later): four words,
/// each four samples' positions in 1/16 pixel (X 3:0, Y 7:4, and so on).
pub const SET_ANTI_ALIAS_SAMPLE_POSITIONS: u16 = 0x11e0;
/// `0x1148 /* SET_CONSERVATIVE_RASTER */` (MAXWELL_B and later): enable 0.
pub const SET_CONSERVATIVE_RASTER: u16 = 0x1148;
/// `0x0230 /* SET_CONSERVATIVE_RASTER_CONTROL */` (VOLTA_A and later): extra primitive
/// bloat 3:0, copy inner to outer 4, triangle snap mode 10:8, line and point snap mode
/// 14:12, uncertainty region size 19:16.
pub const SET_CONSERVATIVE_RASTER_CONTROL: u16 = 0x0230;
/// `0x2a04 /* SET_VARIABLE_PIXEL_RATE_SHADING_INDEX_TO_RATE_A(0) */` (TURING_A): shading
/// rate index `j`'s rates for attachment rates 0–7, four bits each, at `+ 16·j`;
/// `_B(j)` (rates 8–15) follows at `+ 4`.
pub const SET_VARIABLE_PIXEL_RATE_SHADING_INDEX_TO_RATE_A: u16 = 0x2a04;
/// `0x12a8 /* SET_SHADING_RATE_INDEX_SURFACE_ADDRESS_A(0) */` (TURING_A): the
/// fragment-shading-rate attachment; ADDRESS_B, SIZE_A, SIZE_B, LAYER, ARRAY_PITCH,
/// BLOCK_SIZE and ALLOCATED_SIZE follow (eight methods).
pub const SET_SHADING_RATE_INDEX_SURFACE_ADDRESS_A: u16 = 0x12a8;

/// `SET_VARIABLE_PIXEL_RATE_SHADING_INDEX_TO_RATE_A(j)`.
pub const fn set_variable_pixel_rate_shading_index_to_rate_a(j: u16) -> u16 {
    SET_VARIABLE_PIXEL_RATE_SHADING_INDEX_TO_RATE_A + 16 * j
}

/// `SET_VIEWPORT_SCALE_X(j)`.
pub const fn set_viewport_scale_x(j: u16) -> u16 {
    SET_VIEWPORT_SCALE_X + 32 * j
}

/// `SET_VIEWPORT_COORDINATE_SWIZZLE(j)`.
pub const fn set_viewport_coordinate_swizzle(j: u16) -> u16 {
    SET_VIEWPORT_COORDINATE_SWIZZLE + 32 * j
}

/// `SET_VIEWPORT_CLIP_HORIZONTAL(j)`.
pub const fn set_viewport_clip_horizontal(j: u16) -> u16 {
    SET_VIEWPORT_CLIP_HORIZONTAL + 16 * j
}

/// `SET_SCISSOR_ENABLE(j)`.
pub const fn set_scissor_enable(j: u16) -> u16 {
    SET_SCISSOR_ENABLE + 16 * j
}

/// `SET_BLEND(i)`.
pub const fn set_blend(i: u16) -> u16 {
    SET_BLEND + 4 * i
}

/// `SET_BLEND_PER_TARGET_SEPARATE_FOR_ALPHA(j)`.
pub const fn set_blend_per_target(j: u16) -> u16 {
    SET_BLEND_PER_TARGET_SEPARATE_FOR_ALPHA + 32 * j
}

/// The viewport swizzle NVK sets: X, Y, Z and W to themselves (POS_X 0, POS_Y 2,
/// POS_Z 4, POS_W 6 in 2:0, 6:4, 10:8, 14:12).
pub const VIEWPORT_SWIZZLE_IDENTITY: u32 = (2 << 4) | (4 << 8) | (6 << 12);

/// The class header's name of a graphics-state method, array methods with their
/// index as `(j)`.
pub fn method_name(mthd: u16) -> Option<&'static str> {
    const VIEWPORT: [&str; 7] = [
        "SET_VIEWPORT_SCALE_X(j)",
        "SET_VIEWPORT_SCALE_Y(j)",
        "SET_VIEWPORT_SCALE_Z(j)",
        "SET_VIEWPORT_OFFSET_X(j)",
        "SET_VIEWPORT_OFFSET_Y(j)",
        "SET_VIEWPORT_OFFSET_Z(j)",
        "SET_VIEWPORT_COORDINATE_SWIZZLE(j)",
    ];
    const CLIP: [&str; 4] = [
        "SET_VIEWPORT_CLIP_HORIZONTAL(j)",
        "SET_VIEWPORT_CLIP_VERTICAL(j)",
        "SET_VIEWPORT_CLIP_MIN_Z(j)",
        "SET_VIEWPORT_CLIP_MAX_Z(j)",
    ];
    const SCISSOR: [&str; 3] = [
        "SET_SCISSOR_ENABLE(j)",
        "SET_SCISSOR_HORIZONTAL(j)",
        "SET_SCISSOR_VERTICAL(j)",
    ];
    const BLEND_PER_TARGET: [&str; 7] = [
        "SET_BLEND_PER_TARGET_SEPARATE_FOR_ALPHA(j)",
        "SET_BLEND_PER_TARGET_COLOR_OP(j)",
        "SET_BLEND_PER_TARGET_COLOR_SOURCE_COEFF(j)",
        "SET_BLEND_PER_TARGET_COLOR_DEST_COEFF(j)",
        "SET_BLEND_PER_TARGET_ALPHA_OP(j)",
        "SET_BLEND_PER_TARGET_ALPHA_SOURCE_COEFF(j)",
        "SET_BLEND_PER_TARGET_ALPHA_DEST_COEFF(j)",
    ];
    let in_array = |base: u16, stride: u16, count: u16, names: &[&'static str]| {
        (base..base + stride * count)
            .contains(&mthd)
            .then(|| names.get(usize::from((mthd - base) % stride / 4)).copied())
            .flatten()
    };
    if let Some(name) = in_array(SET_VIEWPORT_SCALE_X, 32, 16, &VIEWPORT)
        .or_else(|| in_array(SET_VIEWPORT_CLIP_HORIZONTAL, 16, 16, &CLIP))
        .or_else(|| in_array(SET_SCISSOR_ENABLE, 16, 16, &SCISSOR))
        .or_else(|| {
            in_array(
                SET_BLEND_PER_TARGET_SEPARATE_FOR_ALPHA,
                32,
                8,
                &BLEND_PER_TARGET,
            )
        })
        .or_else(|| in_array(SET_BLEND, 4, 8, &["SET_BLEND(i)"]))
        .or_else(|| {
            in_array(
                SET_ANTI_ALIAS_SAMPLE_POSITIONS,
                4,
                4,
                &["SET_ANTI_ALIAS_SAMPLE_POSITIONS(i)"],
            )
        })
        .or_else(|| {
            in_array(
                SET_VARIABLE_PIXEL_RATE_SHADING_INDEX_TO_RATE_A,
                16,
                16,
                &[
                    "SET_VARIABLE_PIXEL_RATE_SHADING_INDEX_TO_RATE_A(j)",
                    "SET_VARIABLE_PIXEL_RATE_SHADING_INDEX_TO_RATE_B(j)",
                ],
            )
        })
        .or_else(|| {
            in_array(
                SET_SHADING_RATE_INDEX_SURFACE_ADDRESS_A,
                32,
                1,
                &[
                    "SET_SHADING_RATE_INDEX_SURFACE_ADDRESS_A(j)",
                    "SET_SHADING_RATE_INDEX_SURFACE_ADDRESS_B(j)",
                    "SET_SHADING_RATE_INDEX_SURFACE_SIZE_A(j)",
                    "SET_SHADING_RATE_INDEX_SURFACE_SIZE_B(j)",
                    "SET_SHADING_RATE_INDEX_SURFACE_LAYER(j)",
                    "SET_SHADING_RATE_INDEX_SURFACE_ARRAY_PITCH(j)",
                    "SET_SHADING_RATE_INDEX_SURFACE_BLOCK_SIZE(j)",
                    "SET_SHADING_RATE_INDEX_SURFACE_ALLOCATED_SIZE(j)",
                ],
            )
        })
    {
        return Some(name);
    }
    let streams = |base: u16, stride: u16, names: &[&'static str]| {
        (base..base + stride * 32)
            .contains(&mthd)
            .then(|| names.get(usize::from((mthd - base) % stride / 4)).copied())
            .flatten()
    };
    if let Some(name) = streams(
        SET_VERTEX_STREAM_SIZE_A,
        8,
        &["SET_VERTEX_STREAM_SIZE_A(j)", "SET_VERTEX_STREAM_SIZE_B(j)"],
    )
    .or_else(|| {
        streams(
            0x1c00,
            16,
            &[
                "SET_VERTEX_STREAM_A_FORMAT(j)",
                "SET_VERTEX_STREAM_A_LOCATION_A(j)",
                "SET_VERTEX_STREAM_A_LOCATION_B(j)",
                "SET_VERTEX_STREAM_A_FREQUENCY(j)",
            ],
        )
    })
    .or_else(|| {
        streams(
            SET_VERTEX_STREAM_LIMIT_A_A,
            8,
            &[
                "SET_VERTEX_STREAM_LIMIT_A_A(j)",
                "SET_VERTEX_STREAM_LIMIT_A_B(j)",
            ],
        )
    }) {
        return Some(name);
    }
    if let Some(name) = in_array(
        SET_VERTEX_ATTRIBUTE_A,
        4,
        32,
        &["SET_VERTEX_ATTRIBUTE_A(i)"],
    )
    .or_else(|| {
        in_array(
            SET_VERTEX_STREAM_INSTANCE_A,
            4,
            32,
            &["SET_VERTEX_STREAM_INSTANCE_A(i)"],
        )
    }) {
        return Some(name);
    }
    if let Some(name) = in_array(SET_CT_WRITE, 4, 8, &["SET_CT_WRITE(i)"]) {
        return Some(name);
    }
    Some(match mthd {
        SET_SINGLE_CT_WRITE_CONTROL => "SET_SINGLE_CT_WRITE_CONTROL",
        SET_CLEAR_RECT_HORIZONTAL => "SET_CLEAR_RECT_HORIZONTAL",
        0x0d70 => "SET_CLEAR_RECT_VERTICAL",
        SET_COLOR_CLEAR_VALUE => "SET_COLOR_CLEAR_VALUE(0)",
        0x0d84..=0x0d8c => "SET_COLOR_CLEAR_VALUE(i)",
        SET_Z_CLEAR_VALUE => "SET_Z_CLEAR_VALUE",
        SET_STENCIL_CLEAR_VALUE => "SET_STENCIL_CLEAR_VALUE",
        SET_CLEAR_SURFACE_CONTROL => "SET_CLEAR_SURFACE_CONTROL",
        CLEAR_SURFACE => "CLEAR_SURFACE",
        SET_TESSELLATION_PARAMETERS => "SET_TESSELLATION_PARAMETERS",
        SET_HYBRID_ANTI_ALIAS_CONTROL => "SET_HYBRID_ANTI_ALIAS_CONTROL",
        SET_REFERENCE => "SET_REFERENCE",
        NO_OPERATION => "NO_OPERATION",
        SET_MME_SHADOW_RAM_CONTROL => "SET_MME_SHADOW_RAM_CONTROL",
        SET_STATISTICS_COUNTER => "SET_STATISTICS_COUNTER",
        SET_FALCON04 => "SET_FALCON04",
        WAIT_FOR_IDLE => "WAIT_FOR_IDLE",
        INVALIDATE_SHADER_CACHES => "INVALIDATE_SHADER_CACHES",
        MME_DMA_SYSMEMBAR => "MME_DMA_SYSMEMBAR",
        INVALIDATE_SHADER_CACHES_NO_WFI => "INVALIDATE_SHADER_CACHES_NO_WFI",
        INVALIDATE_TEXTURE_DATA_CACHE_NO_WFI => "INVALIDATE_TEXTURE_DATA_CACHE_NO_WFI",
        SET_INDEX_BUFFER_SIZE_A => "SET_INDEX_BUFFER_SIZE_A",
        0x023c => "SET_INDEX_BUFFER_SIZE_B",
        SET_DA_PRIMITIVE_RESTART_INDEX => "SET_DA_PRIMITIVE_RESTART_INDEX",
        SET_INDEX_BUFFER_A => "SET_INDEX_BUFFER_A",
        0x17cc => "SET_INDEX_BUFFER_B",
        0x17d0 => "SET_INDEX_BUFFER_C",
        0x17d4 => "SET_INDEX_BUFFER_D",
        SET_INDEX_BUFFER_E => "SET_INDEX_BUFFER_E",
        SET_RASTER_ENABLE => "SET_RASTER_ENABLE",
        SET_RASTER_INPUT => "SET_RASTER_INPUT",
        SET_CT_SELECT => "SET_CT_SELECT",
        SET_CONSERVATIVE_RASTER => "SET_CONSERVATIVE_RASTER",
        SET_CONSERVATIVE_RASTER_CONTROL => "SET_CONSERVATIVE_RASTER_CONTROL",
        SET_VIEWPORT_Z_CLIP => "SET_VIEWPORT_Z_CLIP",
        SET_FRONT_POLYGON_MODE => "SET_FRONT_POLYGON_MODE",
        0x0db0 => "SET_BACK_POLYGON_MODE",
        SET_POLY_OFFSET_POINT => "SET_POLY_OFFSET_POINT",
        0x0dc4 => "SET_POLY_OFFSET_LINE",
        0x0dc8 => "SET_POLY_OFFSET_FILL",
        SET_PATCH => "SET_PATCH",
        SET_BACK_STENCIL_FUNC_REF => "SET_BACK_STENCIL_FUNC_REF",
        SET_BACK_STENCIL_MASK => "SET_BACK_STENCIL_MASK",
        SET_BACK_STENCIL_FUNC_MASK => "SET_BACK_STENCIL_FUNC_MASK",
        SET_DEPTH_BOUNDS_MIN => "SET_DEPTH_BOUNDS_MIN",
        0x0fa0 => "SET_DEPTH_BOUNDS_MAX",
        SET_SAMPLE_MASK_X0_Y0 => "SET_SAMPLE_MASK_X0_Y0",
        0x0fc0 => "SET_SAMPLE_MASK_X1_Y0",
        0x0fc4 => "SET_SAMPLE_MASK_X0_Y1",
        0x0fc8 => "SET_SAMPLE_MASK_X1_Y1",
        SET_DEPTH_BIAS_CONTROL => "SET_DEPTH_BIAS_CONTROL",
        SET_DEPTH_TEST => "SET_DEPTH_TEST",
        SET_DEPTH_WRITE => "SET_DEPTH_WRITE",
        SET_DEPTH_FUNC => "SET_DEPTH_FUNC",
        SET_BLEND_CONST_RED => "SET_BLEND_CONST_RED",
        0x1320 => "SET_BLEND_CONST_GREEN",
        0x1324 => "SET_BLEND_CONST_BLUE",
        0x1328 => "SET_BLEND_CONST_ALPHA",
        SET_STENCIL_TEST => "SET_STENCIL_TEST",
        SET_STENCIL_OP_FAIL => "SET_STENCIL_OP_FAIL",
        0x1388 => "SET_STENCIL_OP_ZFAIL",
        0x138c => "SET_STENCIL_OP_ZPASS",
        0x1390 => "SET_STENCIL_FUNC",
        SET_STENCIL_FUNC_REF => "SET_STENCIL_FUNC_REF",
        SET_STENCIL_FUNC_MASK => "SET_STENCIL_FUNC_MASK",
        SET_STENCIL_MASK => "SET_STENCIL_MASK",
        SET_LINE_WIDTH_FLOAT => "SET_LINE_WIDTH_FLOAT",
        0x13b4 => "SET_ALIASED_LINE_WIDTH_FLOAT",
        SET_LINE_MULTISAMPLE_OVERRIDE => "SET_LINE_MULTISAMPLE_OVERRIDE",
        SET_ANTI_ALIAS_ALPHA_CONTROL => "SET_ANTI_ALIAS_ALPHA_CONTROL",
        SET_SLOPE_SCALE_DEPTH_BIAS => "SET_SLOPE_SCALE_DEPTH_BIAS",
        SET_ANTI_ALIASED_LINE => "SET_ANTI_ALIASED_LINE",
        SET_BACK_STENCIL_OP_FAIL => "SET_BACK_STENCIL_OP_FAIL",
        0x159c => "SET_BACK_STENCIL_OP_ZFAIL",
        0x15a0 => "SET_BACK_STENCIL_OP_ZPASS",
        0x15a4 => "SET_BACK_STENCIL_FUNC",
        SET_DEPTH_BIAS => "SET_DEPTH_BIAS",
        SET_DA_PRIMITIVE_RESTART => "SET_DA_PRIMITIVE_RESTART",
        SET_LINE_STIPPLE => "SET_LINE_STIPPLE",
        SET_LINE_STIPPLE_PARAMETERS => "SET_LINE_STIPPLE_PARAMETERS",
        SET_PROVOKING_VERTEX => "SET_PROVOKING_VERTEX",
        SET_DEPTH_BIAS_CLAMP => "SET_DEPTH_BIAS_CLAMP",
        OGL_SET_CULL => "OGL_SET_CULL",
        OGL_SET_FRONT_FACE => "OGL_SET_FRONT_FACE",
        OGL_SET_CULL_FACE => "OGL_SET_CULL_FACE",
        SET_VIEWPORT_CLIP_CONTROL => "SET_VIEWPORT_CLIP_CONTROL",
        SET_DEPTH_BOUNDS_TEST => "SET_DEPTH_BOUNDS_TEST",
        SET_LOGIC_OP => "SET_LOGIC_OP",
        SET_LOGIC_OP_FUNC => "SET_LOGIC_OP_FUNC",
        _ => return None,
    })
}
