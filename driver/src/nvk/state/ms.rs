//! Multisampling.

use super::*;
use crate::chipset::classes::MAXWELL_B;
use crate::class;
use crate::mme::{Builder, Cmp, Value};
use crate::nvk::{root, Macro, Scratch};
use crate::push::{PushBuffer, SUBC_3D};

/// Mirrors nvk_flush_ms_state: the sample layout when the rendering has no attachment
/// to take it from (`render_samples` 0), alpha to coverage/one, the sample locations
/// (the root table's `draw.sample_locations` and, MAXWELL_B and later,
/// `SET_ANTI_ALIAS_SAMPLE_POSITIONS`), then the sample mask.
pub(super) fn flush_ms_state(
    p: &mut PushBuffer,
    d: Dirty,
    s: &DynamicState,
    eng3d: u16,
    render_samples: u32,
) {
    if d.has(StateBit::MsRasterizationSamples) && render_samples == 0 {
        // At least one sample: rasterizer discard may leave the count unset.
        push_sample_layout(p, eng3d, s.rasterization_samples.max(1));
    }
    if d.any(&[
        StateBit::MsAlphaToCoverageEnable,
        StateBit::MsAlphaToOneEnable,
    ]) {
        let control =
            u32::from(s.alpha_to_coverage_enable) | (u32::from(s.alpha_to_one_enable) << 4);
        p.immd_or_mthd(SUBC_3D, class::SET_ANTI_ALIAS_ALPHA_CONTROL, control);
    }
    if d.any(&[
        StateBit::MsRasterizationSamples,
        StateBit::MsSampleLocations,
        StateBit::MsSampleLocationsEnable,
    ]) {
        flush_sample_locations(p, s, eng3d);
    }
    if d.has(StateBit::MsSampleMask) {
        let m = s.sample_mask & 0xffff;
        p.inc(SUBC_3D, class::SET_SAMPLE_MASK_X0_Y0, &[m, m, m, m]);
    }
}

/// Vulkan's standard sample locations for a sample count (one pixel), the
/// `vk_standard_sample_locations_state` NVK falls back to.
fn standard_sample_locations(samples: u32) -> &'static [(f32, f32)] {
    const ONE: [(f32, f32); 1] = [(0.5, 0.5)];
    const TWO: [(f32, f32); 2] = [(0.75, 0.75), (0.25, 0.25)];
    const FOUR: [(f32, f32); 4] = [
        (0.375, 0.125),
        (0.875, 0.375),
        (0.125, 0.625),
        (0.625, 0.875),
    ];
    const EIGHT: [(f32, f32); 8] = [
        (0.5625, 0.3125),
        (0.4375, 0.6875),
        (0.8125, 0.5625),
        (0.3125, 0.1875),
        (0.1875, 0.8125),
        (0.0625, 0.4375),
        (0.6875, 0.9375),
        (0.9375, 0.0625),
    ];
    match samples {
        2 => &TWO,
        4 => &FOUR,
        s if s >= 8 => &EIGHT,
        _ => &ONE,
    }
}

/// A location as NAK's `nak_sample_location`: X in 3:0 and Y in 7:4, sixteenths of a
/// pixel clamped to 15.
fn nak_sample_location((x, y): (f32, f32)) -> u32 {
    let u4 = |v: f32| (v * 16.0).clamp(0.0, 15.0) as u32;
    u4(x) | (u4(y) << 4)
}

/// The root table's eight sample locations (a byte each) and the hardware's sixteen
/// positions of a 2x2 pixel quad. Mirrors nvk_flush_ms_state's sample-locations part:
/// the custom locations when enabled, else the standard ones for the rasterization
/// samples; the root table written as nvk_descriptor_state_set_root_array does for
/// graphics (nvk_cmd_flush_gfx_root_desc).
fn flush_sample_locations(p: &mut PushBuffer, s: &DynamicState, eng3d: u16) {
    // The custom locations, or the standard ones (one pixel's, borrowed).
    let (per_pixel, grid, locations) =
        if s.sample_locations_enable && s.sample_locations.per_pixel > 0 {
            let sl = &s.sample_locations;
            (sl.per_pixel, sl.grid, &sl.locations[..])
        } else {
            let standard = standard_sample_locations(s.rasterization_samples.max(1));
            (standard.len() as u32, (1, 1), standard)
        };
    let per_pixel = per_pixel.clamp(1, 8) as usize;
    let location = |i: usize| locations.get(i).copied().unwrap_or((0.5, 0.5));
    let bytes: [u32; 8] = std::array::from_fn(|i| {
        if i < per_pixel {
            nak_sample_location(location(i))
        } else {
            0
        }
    });
    let word = |b: &[u32]| b.iter().enumerate().fold(0, |w, (i, v)| w | v << (8 * i));
    p.inc_once_with(
        SUBC_3D,
        class::LOAD_CONSTANT_BUFFER_OFFSET,
        root::DRAW_SAMPLE_LOCATIONS,
        &[word(&bytes[..4]), word(&bytes[4..])],
    );
    if eng3d < MAXWELL_B {
        // Programmable sample positions come with MAXWELL_B.
        return;
    }
    let (grid_w, grid_h) = (grid.0.max(1) as usize, grid.1.max(1) as usize);
    let positions: [u32; 16] = std::array::from_fn(|n| {
        let (sample, pixel) = (n % per_pixel, n / per_pixel);
        let (x, y) = ((pixel % 2) % grid_w, (pixel / 2) % grid_h);
        nak_sample_location(location((x + y * grid_w) * per_pixel + sample))
    });
    let words: [u32; 4] = std::array::from_fn(|i| word(&positions[i * 4..i * 4 + 4]));
    p.inc(SUBC_3D, class::SET_ANTI_ALIAS_SAMPLE_POSITIONS, &words);
}

/// `SET_ANTI_ALIAS`'s samples mode and the two- and four-pass sample masks NVK keeps
/// in scratch for a sample count (NIL's sample layout for it: 2X1_D3D for 2, 2X2 for
/// 4, 4X2_D3D for 8; before MAXWELL_B eight samples map otherwise, and NVK takes the
/// four-pass masks the hardware shows).
fn sample_layout(eng3d: u16, samples: u32) -> (u32, [u32; 4], [u32; 4]) {
    match samples {
        2 => (5, [0; 4], [0; 4]),
        4 => (2, [0x000a_0005, 0x000a_0005, 0, 0], [0; 4]),
        s if s >= 8 => (
            4,
            [0x003a_00c5, 0x003a_00c5, 0x003a_003a, 0x00c5_00c5],
            if eng3d >= MAXWELL_B {
                [0x0012_0081, 0x0028_0044, 0x0028_0012, 0x0081_0044]
            } else {
                [0x0000_0012, 0x0028_0044, 0, 0x0081_0000]
            },
        ),
        _ => (0, [0; 4], [0; 4]),
    }
}

/// Mirrors nvk_cmd_set_sample_layout: the samples mode, the sample masks of two- and
/// four-pass sample shading into scratch, then the `SET_ANTI_ALIAS` macro with the
/// sample count.
pub(crate) fn push_sample_layout(p: &mut PushBuffer, eng3d: u16, samples: u32) {
    let (mode, two_pass, four_pass) = sample_layout(eng3d, samples);
    p.immd_or_mthd(SUBC_3D, class::SET_ANTI_ALIAS, mode);
    p.inc(
        SUBC_3D,
        class::set_mme_shadow_scratch(Scratch::SampleMasks2Pass0 as u16),
        &two_pass,
    );
    p.inc(
        SUBC_3D,
        class::set_mme_shadow_scratch(Scratch::SampleMasks4Pass0 as u16),
        &four_pass,
    );
    let samples_log2 = samples.max(1).ilog2().min(4);
    p.inc_once(
        SUBC_3D,
        class::call_mme_macro(Macro::SetAntiAlias.id()),
        &[val_mask(samples_log2 << 4, 0xf0)],
    );
}

/// The `SET_ANTI_ALIAS` macro: one masked value of the anti-aliasing state (minimum
/// sample shading's log2 reciprocal in 3:0, the sample count's log2 in 7:4). When it
/// changes: `SET_HYBRID_ANTI_ALIAS_CONTROL` with the passes (`samples >> rcp`, at
/// least 1) and the centroid mode, then the root table's sample masks — every sample
/// alone with one sample a pass, all of them with one pass, else the masks kept in
/// scratch for two or four passes. Mirrors nvk_mme_set_anti_alias.
pub(crate) fn set_anti_alias(b: &mut Builder) {
    on_masked_scratch_change(b, Scratch::AntiAlias, |b, anti_alias| {
        let rcp_mss_log2 = b.merge(Value::Zero, anti_alias, 0, 4, 0);
        let samples_log2 = b.merge(Value::Zero, anti_alias, 0, 4, 4);
        b.free_reg(anti_alias);
        let passes_log2 = b.sub(samples_log2, rcp_mss_log2);
        b.free_reg(rcp_mss_log2);
        // At least one pass: a negative difference becomes 0.
        let negative = b.srl(passes_log2, Value::Imm(31));
        b.if_(Cmp::Ne, negative, Value::Zero, |b| {
            b.mov_to(passes_log2, Value::Zero)
        });
        b.free_reg(negative);
        let control = b.mov(Value::Zero); // CENTROID_PER_FRAGMENT
        b.if_(Cmp::Ne, passes_log2, Value::Zero, |b| {
            b.mov_to(control, Value::Imm(1 << 4)); // CENTROID_PER_PASS
        });
        let passes = b.sll(Value::Imm(1), passes_log2);
        b.merge_to(control, control, passes, 0, 4, 0);
        b.free_reg(passes);
        b.mthd(class::SET_HYBRID_ANTI_ALIAS_CONTROL);
        b.emit(control);
        b.free_reg(control);
        b.mthd(class::LOAD_CONSTANT_BUFFER_OFFSET);
        b.emit(Value::Imm(root::DRAW_SAMPLE_MASKS));
        b.mthd(class::load_constant_buffer(0));
        let per_pass_log2 = b.sub(samples_log2, passes_log2);
        b.free_reg(samples_log2);
        b.if_(Cmp::Eq, per_pass_log2, Value::Zero, |b| {
            // One sample a pass: each pass's mask is its sample alone, two a word.
            for i in (0..8).step_by(2) {
                b.emit(Value::Imm((1 << i) | (1 << (i + 1)) << 16));
            }
        });
        b.if_(Cmp::Ne, per_pass_log2, Value::Zero, |b| {
            b.if_(Cmp::Eq, passes_log2, Value::Zero, |b| {
                for _ in 0..4 {
                    b.emit(Value::Imm(u32::MAX));
                }
            });
            for (passes, first) in [
                (1, Scratch::SampleMasks2Pass0),
                (2, Scratch::SampleMasks4Pass0),
            ] {
                b.if_(Cmp::Eq, passes_log2, Value::Imm(passes), |b| {
                    for i in 0..4 {
                        let m = b.load_scratch(first as u16 + i);
                        b.emit(m);
                        b.free_reg(m);
                    }
                });
            }
        });
        b.free_reg(per_pass_log2);
        b.free_reg(passes_log2);
    });
}

/// The multisampling's dynamic state: the `vkCmdSet*` calls and the pipeline's
/// static values land here before a flush pushes them.
impl GraphicsState {
    /// vkCmdSetRasterizationSamplesEXT.
    pub fn set_rasterization_samples(&mut self, samples: u32) {
        set(
            &mut self.marks,
            StateBit::MsRasterizationSamples,
            &mut self.dynamic.rasterization_samples,
            samples,
        );
    }

    /// vkCmdSetSampleLocationsEnableEXT.
    pub fn set_sample_locations_enable(&mut self, enable: bool) {
        set(
            &mut self.marks,
            StateBit::MsSampleLocationsEnable,
            &mut self.dynamic.sample_locations_enable,
            enable,
        );
    }

    /// vkCmdSetSampleLocationsEXT.
    pub fn set_sample_locations(&mut self, locations: SampleLocations) {
        set(
            &mut self.marks,
            StateBit::MsSampleLocations,
            &mut self.dynamic.sample_locations,
            locations,
        );
    }

    /// vkCmdSetSampleMaskEXT (the first word of the mask).
    pub fn set_sample_mask(&mut self, mask: u32) {
        set(
            &mut self.marks,
            StateBit::MsSampleMask,
            &mut self.dynamic.sample_mask,
            mask,
        );
    }

    /// vkCmdSetAlphaToCoverageEnableEXT.
    pub fn set_alpha_to_coverage_enable(&mut self, enable: bool) {
        set(
            &mut self.marks,
            StateBit::MsAlphaToCoverageEnable,
            &mut self.dynamic.alpha_to_coverage_enable,
            enable,
        );
    }

    /// vkCmdSetAlphaToOneEnableEXT.
    pub fn set_alpha_to_one_enable(&mut self, enable: bool) {
        set(
            &mut self.marks,
            StateBit::MsAlphaToOneEnable,
            &mut self.dynamic.alpha_to_one_enable,
            enable,
        );
    }
}
