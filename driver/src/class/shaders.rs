//! Shader programs and their per-stage state (`clc597.h`): what binding a shader
//! pushes in NVK (`nvk_shader_fill_push`, replayed by `nvk_cmd_flush_gfx_shaders`).

/// `0x2000 /* SET_PIPELINE_SHADER(0) */`: pipeline slot `j`'s enable 0 and type 7:4,
/// at `+ 64·j`; REGISTER_COUNT (+0xc), BINDING (+0x10), PROGRAM_ADDRESS_A (+0x14)
/// and B (+0x18) follow in the slot.
pub const SET_PIPELINE_SHADER: u16 = 0x2000;
/// Bytes between pipeline slots.
pub const PIPELINE_SLOT_STRIDE: u16 = 64;
/// `0x200c /* SET_PIPELINE_REGISTER_COUNT(0) */`.
pub const SET_PIPELINE_REGISTER_COUNT: u16 = 0x200c;
/// `0x2010 /* SET_PIPELINE_BINDING(0) */`: the constant-buffer group the slot reads.
pub const SET_PIPELINE_BINDING: u16 = 0x2010;
/// `0x2004 /* SET_PIPELINE_PROGRAM(0) */` (before VOLTA_A): the program's offset in
/// the program region (`SET_PROGRAM_REGION_A`/`_B`).
pub const SET_PIPELINE_PROGRAM: u16 = 0x2004;
/// `0x2014 /* SET_PIPELINE_PROGRAM_ADDRESS_A(0) */` (VOLTA_A and later): address
/// high; B (+4) low.
pub const SET_PIPELINE_PROGRAM_ADDRESS_A: u16 = 0x2014;
/// `0x2018 /* SET_PIPELINE_PROGRAM_ADDRESS_B(0) */`.
pub const SET_PIPELINE_PROGRAM_ADDRESS_B: u16 = 0x2018;
/// `0x0210 /* SET_API_MANDATED_EARLY_Z */`: enable 0.
pub const SET_API_MANDATED_EARLY_Z: u16 = 0x0210;
/// `0x0360 /* SET_SUBTILING_PERF_KNOB_A */`: register file 7:0, pixel output buffer
/// 15:8, triangle RAM 23:16, quads 31:24 (fractions per subtile); B follows.
pub const SET_SUBTILING_PERF_KNOB_A: u16 = 0x0360;
/// `0x0364 /* SET_SUBTILING_PERF_KNOB_B */`.
pub const SET_SUBTILING_PERF_KNOB_B: u16 = 0x0364;
/// `0x0f1c /* SET_POST_Z_PS_IMASK */` (MAXWELL_B and later): enable 0.
pub const SET_POST_Z_PS_IMASK: u16 = 0x0f1c;
/// `0x1510 /* SET_USER_CLIP_ENABLE */`: plane `i` at bit `i`.
pub const SET_USER_CLIP_ENABLE: u16 = 0x1510;
/// `0x1940 /* SET_USER_CLIP_OP */`: plane `i` culls (1) or clips (0), bit `4·i`.
pub const SET_USER_CLIP_OP: u16 = 0x1940;
/// `0x196c /* SET_ZCULL_BOUNDS */`: z-min unbounded 0, z-max unbounded 4.
pub const SET_ZCULL_BOUNDS: u16 = 0x196c;
/// `0x0700 /* SET_STREAM_OUT_CONTROL_STREAM(0) */`: buffer `j`'s stream, then
/// COMPONENT_COUNT (+4) and STRIDE (+8), at `+ 16·j`.
pub const SET_STREAM_OUT_CONTROL_STREAM: u16 = 0x0700;
/// `0x2800 /* SET_STREAM_OUT_LAYOUT_SELECT(0, 0) */`: buffer `i`'s 32 dwords of packed
/// attribute indices at `+ 128·i`.
pub const SET_STREAM_OUT_LAYOUT_SELECT: u16 = 0x2800;
/// `0x02cc /* SET_VARIABLE_PIXEL_RATE_SHADING_TABLE_SELECT */` (AMPERE_B and later):
/// source 0 (the constant, or the shader's table index), the constant 7:4.
pub const SET_VARIABLE_PIXEL_RATE_SHADING_TABLE_SELECT: u16 = 0x02cc;
/// `0x2a00 /* SET_VARIABLE_PIXEL_RATE_SHADING_CONTROL(0) */` (TURING_A and later):
/// viewport `j`'s enable 0 at `+ 16·j`, sixteen of them.
pub const SET_VARIABLE_PIXEL_RATE_SHADING_CONTROL: u16 = 0x2a00;

/// `SET_PIPELINE_SHADER`'s type field: vertex 1, tessellation init (control) 2,
/// tessellation 3, geometry 4, pixel 5.
pub const fn pipeline_shader(enable: bool, ty: u32) -> u32 {
    (ty << 4) | enable as u32
}

/// The name of a method this module defines, for disassembly.
pub fn method_name(mthd: u16) -> Option<&'static str> {
    if (SET_PIPELINE_SHADER..SET_PIPELINE_SHADER + 6 * PIPELINE_SLOT_STRIDE).contains(&mthd) {
        return match (mthd - SET_PIPELINE_SHADER) % PIPELINE_SLOT_STRIDE {
            0x00 => Some("SET_PIPELINE_SHADER(j)"),
            0x04 => Some("SET_PIPELINE_PROGRAM(j)"),
            0x0c => Some("SET_PIPELINE_REGISTER_COUNT(j)"),
            0x10 => Some("SET_PIPELINE_BINDING(j)"),
            0x14 => Some("SET_PIPELINE_PROGRAM_ADDRESS_A(j)"),
            0x18 => Some("SET_PIPELINE_PROGRAM_ADDRESS_B(j)"),
            _ => None,
        };
    }
    if (SET_STREAM_OUT_CONTROL_STREAM..SET_STREAM_OUT_CONTROL_STREAM + 64).contains(&mthd) {
        return match (mthd - SET_STREAM_OUT_CONTROL_STREAM) % 16 {
            0 => Some("SET_STREAM_OUT_CONTROL_STREAM(j)"),
            4 => Some("SET_STREAM_OUT_CONTROL_COMPONENT_COUNT(j)"),
            8 => Some("SET_STREAM_OUT_CONTROL_STRIDE(j)"),
            _ => None,
        };
    }
    if (SET_STREAM_OUT_LAYOUT_SELECT..SET_STREAM_OUT_LAYOUT_SELECT + 4 * 128).contains(&mthd) {
        return Some("SET_STREAM_OUT_LAYOUT_SELECT(i,j)");
    }
    if (SET_VARIABLE_PIXEL_RATE_SHADING_CONTROL..SET_VARIABLE_PIXEL_RATE_SHADING_CONTROL + 256)
        .contains(&mthd)
    {
        return Some("SET_VARIABLE_PIXEL_RATE_SHADING_CONTROL(j)");
    }
    Some(match mthd {
        SET_API_MANDATED_EARLY_Z => "SET_API_MANDATED_EARLY_Z",
        SET_SUBTILING_PERF_KNOB_A => "SET_SUBTILING_PERF_KNOB_A",
        SET_SUBTILING_PERF_KNOB_B => "SET_SUBTILING_PERF_KNOB_B",
        SET_POST_Z_PS_IMASK => "SET_POST_Z_PS_IMASK",
        SET_USER_CLIP_ENABLE => "SET_USER_CLIP_ENABLE",
        SET_USER_CLIP_OP => "SET_USER_CLIP_OP",
        SET_ZCULL_BOUNDS => "SET_ZCULL_BOUNDS",
        _ => return None,
    })
}
