//! The rasterizer.

use super::*;
use crate::chipset::classes::{MAXWELL_B, VOLTA_A};
use crate::class;
use crate::nvk::Macro;
use crate::push::{PushBuffer, SUBC_3D};

/// `SET_VIEWPORT_CLIP_CONTROL` as NVK packs it: depth clamped to [0, 1] unless the
/// depth attachment has a float format (`z_clamp_zero_one`; the model takes
/// `depthClampZeroOne` as not enabled); the Z clip range field exists from VOLTA_A.
fn viewport_clip_control(eng3d: u16, z_clamp: bool, z_clip: bool, float_depth: bool) -> u32 {
    let z_clamp_zero_one = !float_depth;
    let min_z_zero_max_z_one = u32::from(!z_clamp && z_clamp_zero_one);
    let z_clip_range = if eng3d >= VOLTA_A && (z_clamp || !z_clamp_zero_one) {
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

/// Mirrors nvk_flush_rs_state (before VOLTA_A the Z clamp also goes to the
/// `SET_Z_CLAMP` macro; conservative rasterization is not
/// modelled).
pub(super) fn flush_rs_state(
    p: &mut PushBuffer,
    d: Dirty,
    s: &DynamicState,
    eng3d: u16,
    float_depth: bool,
) {
    if d.has(StateBit::RsRasterizerDiscardEnable) {
        let enable = u32::from(!s.rasterizer_discard_enable);
        p.immd_or_mthd(SUBC_3D, class::SET_RASTER_ENABLE, enable);
    }
    if d.any(&[StateBit::RsDepthClipEnable, StateBit::RsDepthClampEnable]) {
        // Without VK_EXT_depth_clip_enable, depth clips unless it is clamped.
        let z_clip = s.depth_clip_enable.unwrap_or(!s.depth_clamp_enable);
        let control = viewport_clip_control(eng3d, s.depth_clamp_enable, z_clip, float_depth);
        p.immd_or_mthd(SUBC_3D, class::SET_VIEWPORT_CLIP_CONTROL, control);
        if eng3d < VOLTA_A {
            // No Z clip range field: the macro smashes the viewports' clip Z instead.
            p.inc_once(
                SUBC_3D,
                class::call_mme_macro(Macro::SetZClamp.id()),
                &[u32::from(s.depth_clamp_enable)],
            );
        }
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
    // Before MAXWELL_B there is no conservative rasterization to set.
    if eng3d >= MAXWELL_B
        && d.any(&[
            StateBit::RsConservativeMode,
            StateBit::RsExtraPrimitiveOverestimationSize,
        ])
    {
        flush_conservative(p, s, eng3d);
    }
}

/// Conservative rasterization (MAXWELL_B and later): disabled is one method;
/// otherwise, from VOLTA_A, `SET_CONSERVATIVE_RASTER_CONTROL` (the extra primitive
/// bloat in quarter pixels, at most 3; underestimation copies the inner coverage to
/// the outer; pre-snap modes; a 512 uncertainty region) — before it the
/// `SET_CONSERVATIVE_RASTER_STATE` macro with the bloat in bits 24:23 — then the
/// enable. Mirrors nvk_flush_rs_state's conservative-mode part.
fn flush_conservative(p: &mut PushBuffer, s: &DynamicState, eng3d: u16) {
    if s.conservative_mode == 0 {
        p.immd_or_mthd(SUBC_3D, class::SET_CONSERVATIVE_RASTER, 0);
        return;
    }
    // MIN2(3, size * 4), truncated to an integer as NVK's uint32_t does.
    let bloat = (s.extra_primitive_overestimation_size * 4.0).clamp(0.0, 3.0) as u32;
    let underestimate = u32::from(s.conservative_mode == 2);
    if eng3d >= VOLTA_A {
        let control = bloat | (underestimate << 4) | (1 << 8) | (1 << 12) | (3 << 16);
        p.immd_or_mthd(SUBC_3D, class::SET_CONSERVATIVE_RASTER_CONTROL, control);
    } else {
        p.inc_once(
            SUBC_3D,
            class::call_mme_macro(Macro::SetConservativeRasterState.id()),
            &[bloat << 23],
        );
    }
    p.immd_or_mthd(SUBC_3D, class::SET_CONSERVATIVE_RASTER, 1);
}

/// `VkFragmentShadingRateCombinerOpKHR` applied to two log2 rates (width, height).
/// Mirrors nvk_combine_fs_log2_rates.
fn combine_log2_rates(op: u32, a: (u32, u32), b: (u32, u32)) -> (u32, u32) {
    match op {
        1 => b,                            // REPLACE
        2 => (a.0.min(b.0), a.1.min(b.1)), // MIN
        3 => (a.0.max(b.0), a.1.max(b.1)), // MAX
        4 => (a.0 + b.0, a.1 + b.1),       // MUL
        _ => a,                            // KEEP
    }
}

/// A log2 fragment size as the hardware's shading rate (`PS_X1_PER_*_RASTER_PIXELS`),
/// each side clamped to 4 and the rates it lacks (1x4, 4x1…) taken as the next one it
/// has. Mirrors vk_to_nvc597_shading_rate_log2.
fn shading_rate(log2: (u32, u32)) -> u32 {
    const RATES: [u32; 16] = [5, 7, 7, 7, 6, 8, 0xa, 0xa, 6, 9, 0xb, 0xb, 6, 9, 0xb, 0xb];
    let (w, h) = (log2.0.min(2), log2.1.min(2));
    RATES[((w << 2) | h) as usize]
}

/// Fragment shading rate (TURING_A): disabled, the `SET_SHADING_RATE_CONTROL` macro
/// turns it off; otherwise each of the 16 primitive rates gets its 16 attachment
/// rates (`SET_VARIABLE_PIXEL_RATE_SHADING_INDEX_TO_RATE_A/B(j)`, combined as the two
/// combiner operations say), then the macro turns it on. Mirrors nvk_flush_fsr_state.
pub(super) fn flush_fsr_state(p: &mut PushBuffer, d: Dirty, s: &DynamicState) {
    if !d.has(StateBit::Fsr) {
        return;
    }
    let ((width, height), ops) = s.fragment_shading_rate;
    let disabled = (width, height) == (1, 1) && ops == [0, 0];
    let call = class::call_mme_macro(Macro::SetShadingRateControl.id());
    if disabled {
        p.inc_once(SUBC_3D, call, &[val_mask(0, 1)]);
        return;
    }
    let state = (width.max(1).ilog2(), height.max(1).ilog2());
    for prim in 0..16u32 {
        let prim_rate = combine_log2_rates(ops[0], state, ((prim >> 2) & 3, prim & 3));
        let rates: [u32; 16] = std::array::from_fn(|att| {
            let att = att as u32;
            shading_rate(combine_log2_rates(
                ops[1],
                prim_rate,
                ((att >> 2) & 3, att & 3),
            ))
        });
        let pack = |r: &[u32]| r.iter().enumerate().fold(0, |w, (i, v)| w | v << (4 * i));
        p.inc(
            SUBC_3D,
            class::set_variable_pixel_rate_shading_index_to_rate_a(prim as u16),
            &[pack(&rates[..8]), pack(&rates[8..])],
        );
    }
    p.inc_once(SUBC_3D, call, &[val_mask(1, 1)]);
}

/// The rasterizer's dynamic state: the `vkCmdSet*` calls and the pipeline's
/// static values land here before a flush pushes them.
impl GraphicsState {
    /// vkCmdSetConservativeRasterizationModeEXT.
    pub fn set_conservative_mode(&mut self, mode: u32) {
        set(
            &mut self.marks,
            StateBit::RsConservativeMode,
            &mut self.dynamic.conservative_mode,
            mode,
        );
    }

    /// vkCmdSetExtraPrimitiveOverestimationSizeEXT.
    pub fn set_extra_primitive_overestimation_size(&mut self, size: f32) {
        set(
            &mut self.marks,
            StateBit::RsExtraPrimitiveOverestimationSize,
            &mut self.dynamic.extra_primitive_overestimation_size,
            size,
        );
    }

    /// vkCmdSetFragmentShadingRateKHR: the fragment size and the two combiner
    /// operations.
    pub fn set_fragment_shading_rate(&mut self, size: (u32, u32), combiner_ops: [u32; 2]) {
        set(
            &mut self.marks,
            StateBit::Fsr,
            &mut self.dynamic.fragment_shading_rate,
            (size, combiner_ops),
        );
    }

    /// vkCmdSetRasterizerDiscardEnable.
    pub fn set_rasterizer_discard_enable(&mut self, enable: bool) {
        set(
            &mut self.marks,
            StateBit::RsRasterizerDiscardEnable,
            &mut self.dynamic.rasterizer_discard_enable,
            enable,
        );
    }

    /// vkCmdSetDepthClampEnableEXT.
    pub fn set_depth_clamp_enable(&mut self, enable: bool) {
        set(
            &mut self.marks,
            StateBit::RsDepthClampEnable,
            &mut self.dynamic.depth_clamp_enable,
            enable,
        );
    }

    /// vkCmdSetDepthClipEnableEXT.
    pub fn set_depth_clip_enable(&mut self, enable: bool) {
        set(
            &mut self.marks,
            StateBit::RsDepthClipEnable,
            &mut self.dynamic.depth_clip_enable,
            Some(enable),
        );
    }

    /// vkCmdSetPolygonModeEXT.
    pub fn set_polygon_mode(&mut self, mode: u32) {
        set(
            &mut self.marks,
            StateBit::RsPolygonMode,
            &mut self.dynamic.polygon_mode,
            mode,
        );
    }

    /// vkCmdSetCullMode.
    pub fn set_cull_mode(&mut self, mode: u32) {
        set(
            &mut self.marks,
            StateBit::RsCullMode,
            &mut self.dynamic.cull_mode,
            mode,
        );
    }

    /// vkCmdSetFrontFace.
    pub fn set_front_face(&mut self, face: u32) {
        set(
            &mut self.marks,
            StateBit::RsFrontFace,
            &mut self.dynamic.front_face,
            face,
        );
    }

    /// vkCmdSetProvokingVertexModeEXT.
    pub fn set_provoking_vertex(&mut self, mode: u32) {
        set(
            &mut self.marks,
            StateBit::RsProvokingVertex,
            &mut self.dynamic.provoking_vertex,
            mode,
        );
    }

    /// vkCmdSetDepthBiasEnable.
    pub fn set_depth_bias_enable(&mut self, enable: bool) {
        set(
            &mut self.marks,
            StateBit::RsDepthBiasEnable,
            &mut self.dynamic.depth_bias_enable,
            enable,
        );
    }

    /// vkCmdSetDepthBias: constant factor, clamp, slope factor.
    pub fn set_depth_bias(&mut self, constant: f32, clamp: f32, slope: f32) {
        set(
            &mut self.marks,
            StateBit::RsDepthBiasFactors,
            &mut self.dynamic.depth_bias,
            [constant, clamp, slope],
        );
    }

    /// vkCmdSetLineWidth.
    pub fn set_line_width(&mut self, width: f32) {
        set(
            &mut self.marks,
            StateBit::RsLineWidth,
            &mut self.dynamic.line_width,
            width,
        );
    }

    /// vkCmdSetLineRasterizationModeEXT.
    pub fn set_line_mode(&mut self, mode: u32) {
        set(
            &mut self.marks,
            StateBit::RsLineMode,
            &mut self.dynamic.line_mode,
            mode,
        );
    }

    /// vkCmdSetLineStippleEnableEXT.
    pub fn set_line_stipple_enable(&mut self, enable: bool) {
        set(
            &mut self.marks,
            StateBit::RsLineStippleEnable,
            &mut self.dynamic.line_stipple_enable,
            enable,
        );
    }

    /// vkCmdSetLineStipple: factor and pattern.
    pub fn set_line_stipple(&mut self, factor: u32, pattern: u16) {
        set(
            &mut self.marks,
            StateBit::RsLineStipple,
            &mut self.dynamic.line_stipple,
            (factor, pattern),
        );
    }

    /// vkCmdSetRasterizationStreamEXT.
    pub fn set_rasterization_stream(&mut self, stream: u32) {
        set(
            &mut self.marks,
            StateBit::RsRasterizationStream,
            &mut self.dynamic.rasterization_stream,
            stream,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{viewport_clip_control, VOLTA_A};

    #[test]
    fn depth_is_clamped_to_zero_one_only_for_a_fixed_point_attachment() {
        // What NVK 25.0.7 pushed without depth clamp, depth clipping: a D24 or no
        // depth attachment (Zink's programs), and a D32_SFLOAT one (vkmark).
        assert_eq!(viewport_clip_control(VOLTA_A, false, true, false), 0x181d);
        assert_eq!(viewport_clip_control(VOLTA_A, false, true, true), 0x3_181c);
        // Clamped: the clip range is the viewport's Z range either way.
        assert_eq!(viewport_clip_control(VOLTA_A, true, false, true) >> 16, 1);
    }
}
