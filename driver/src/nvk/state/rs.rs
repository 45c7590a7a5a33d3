//! The rasterizer.

use super::{fui, Dirty, DynamicState, StateBit};
use crate::class;
use crate::push::{PushBuffer, SUBC_3D};

/// `SET_VIEWPORT_CLIP_CONTROL` as NVK packs it on VOLTA_A and later, for a depth
/// attachment of a fixed-point format (the trace does not say the format; a float one
/// changes only the zero-one clamp).
fn viewport_clip_control(z_clamp: bool, z_clip: bool) -> u32 {
    let z_clamp_zero_one = true;
    let min_z_zero_max_z_one = u32::from(!z_clamp && z_clamp_zero_one);
    let z_clip_range = if z_clamp || !z_clamp_zero_one {
        if z_clamp {
            1 // MIN_Z_MAX_Z
        } else {
            3 // MINUS_INF_PLUS_INF
        }
    } else {
        0 // USE_FIELD_MIN_Z_ZERO_MAX_Z_ONE
    };
    let pixel_min_max_z_clamp = (1 << 3) | (1 << 4);
    let geometry_clip = if z_clip { 3 } else { 2 }; // FRUSTUM_XYZ_CLIP / FRUSTUM_XY_CLIP
    let guardband_z = if z_clip { 2 } else { 1 }; // SCALE_1 / SCALE_256
    min_z_zero_max_z_one
        | (guardband_z << 1)
        | pixel_min_max_z_clamp
        | (geometry_clip << 11)
        | (z_clip_range << 16)
}

/// Mirrors nvk_flush_rs_state (VOLTA_A and later; conservative rasterization is not
/// modelled).
pub(super) fn flush_rs_state(p: &mut PushBuffer, d: Dirty, s: &DynamicState) {
    if d.has(StateBit::RsRasterizerDiscardEnable) {
        let enable = u32::from(!s.rasterizer_discard_enable);
        p.immd_or_mthd(SUBC_3D, class::SET_RASTER_ENABLE, enable);
    }
    if d.any(&[StateBit::RsDepthClipEnable, StateBit::RsDepthClampEnable]) {
        // Without VK_EXT_depth_clip_enable, depth clips unless it is clamped.
        let z_clip = s.depth_clip_enable.unwrap_or(!s.depth_clamp_enable);
        let control = viewport_clip_control(s.depth_clamp_enable, z_clip);
        p.immd_or_mthd(SUBC_3D, class::SET_VIEWPORT_CLIP_CONTROL, control);
    }
    if d.has(StateBit::RsPolygonMode) {
        // VK_POLYGON_MODE_FILL 0, LINE 1, POINT 2 against FILL 0x1b02, LINE 0x1b01, POINT 0x1b00.
        let mode = 0x1b00 | (2u32.saturating_sub(s.polygon_mode.min(2)));
        p.inc(SUBC_3D, class::SET_FRONT_POLYGON_MODE, &[mode, mode]);
    }
    if d.has(StateBit::RsCullMode) {
        p.immd_or_mthd(SUBC_3D, class::OGL_SET_CULL, u32::from(s.cull_mode != 0));
        if s.cull_mode != 0 {
            let face = match s.cull_mode {
                1 => 0x404, // FRONT
                2 => 0x405, // BACK
                _ => 0x408, // FRONT_AND_BACK
            };
            p.immd_or_mthd(SUBC_3D, class::OGL_SET_CULL_FACE, face);
        }
    }
    if d.has(StateBit::RsFrontFace) {
        // GL's sense is the reverse of Vulkan's: CCW (0) is 0x901, CW (1) 0x900.
        let face = 0x900 | (1 - s.front_face.min(1));
        p.immd_or_mthd(SUBC_3D, class::OGL_SET_FRONT_FACE, face);
    }
    if d.has(StateBit::RsProvokingVertex) {
        p.immd_or_mthd(SUBC_3D, class::SET_PROVOKING_VERTEX, s.provoking_vertex);
    }
    if d.has(StateBit::RsDepthBiasEnable) {
        let e = u32::from(s.depth_bias_enable);
        p.inc(SUBC_3D, class::SET_POLY_OFFSET_POINT, &[e, e, e]);
    }
    if d.has(StateBit::RsDepthBiasFactors) {
        // VK_DEPTH_BIAS_REPRESENTATION_LEAST_REPRESENTABLE_VALUE_FORMAT: format-dependent.
        p.immd_or_mthd(SUBC_3D, class::SET_DEPTH_BIAS_CONTROL, 1);
        let [constant, clamp, slope] = s.depth_bias;
        p.immd_or_mthd(SUBC_3D, class::SET_DEPTH_BIAS, fui(constant));
        p.immd_or_mthd(SUBC_3D, class::SET_SLOPE_SCALE_DEPTH_BIAS, fui(slope));
        p.immd_or_mthd(SUBC_3D, class::SET_DEPTH_BIAS_CLAMP, fui(clamp));
    }
    if d.has(StateBit::RsLineWidth) {
        let w = fui(s.line_width);
        p.inc(SUBC_3D, class::SET_LINE_WIDTH_FLOAT, &[w, w]);
    }
    if d.has(StateBit::RsLineMode) {
        // DEFAULT 0 and RECTANGULAR 1: neither; BRESENHAM 2: override; SMOOTH 3: both.
        let (multisample_override, anti_aliased) = match s.line_mode {
            2 => (1, 0),
            3 => (1, 1),
            _ => (0, 0),
        };
        p.immd_or_mthd(
            SUBC_3D,
            class::SET_LINE_MULTISAMPLE_OVERRIDE,
            multisample_override,
        );
        p.immd_or_mthd(SUBC_3D, class::SET_ANTI_ALIASED_LINE, anti_aliased);
    }
    if d.has(StateBit::RsLineStippleEnable) {
        let e = u32::from(s.line_stipple_enable);
        p.immd_or_mthd(SUBC_3D, class::SET_LINE_STIPPLE, e);
    }
    if d.has(StateBit::RsLineStipple) {
        let (factor, pattern) = s.line_stipple;
        let factor = factor.clamp(1, 256) - 1;
        let parameters = factor | (u32::from(pattern) << 8);
        p.immd_or_mthd(SUBC_3D, class::SET_LINE_STIPPLE_PARAMETERS, parameters);
    }
    if d.has(StateBit::RsRasterizationStream) {
        p.immd_or_mthd(SUBC_3D, class::SET_RASTER_INPUT, s.rasterization_stream);
    }
}
