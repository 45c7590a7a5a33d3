//! Viewports and scissors.

use super::*;
use crate::chipset::classes::{MAXWELL_B, VOLTA_A};
use crate::class;
use crate::mme::{AluOp, Builder, Cmp, Value};
use crate::nvk::{Macro, Scratch};
use crate::push::{PushBuffer, SUBC_3D};

/// The largest scissor coordinate (`nvk_image_max_dimension` for 2D images).
const SCISSOR_MAX: i64 = 0x8000;

/// Mirrors nvk_flush_vp_state: from VOLTA_A the clip min/max Z are methods, before it
/// the `SET_VIEWPORT_MIN_MAX_Z` macro sets them (minding the Z clamp); from MAXWELL_B
/// the coordinate swizzle is set.
pub(super) fn flush_vp_state(p: &mut PushBuffer, d: Dirty, s: &DynamicState, eng3d: u16) {
    // Nothing to do for the viewport count.
    if d.any(&[StateBit::VpViewports, StateBit::VpDepthClipNegativeOneToOne]) {
        for (i, vp) in s.viewports.iter().enumerate() {
            let i = i as u16;
            let minus_one = s.depth_clip_negative_one_to_one;
            let (o_z, p_z) = if minus_one {
                (
                    (vp.max_depth + vp.min_depth) * 0.5,
                    (vp.max_depth - vp.min_depth) * 0.5,
                )
            } else {
                (vp.min_depth, vp.max_depth - vp.min_depth)
            };
            p.inc(
                SUBC_3D,
                class::set_viewport_scale_x(i),
                &[
                    fui(0.5 * vp.width),
                    fui(0.5 * vp.height),
                    fui(p_z),
                    fui(vp.x + 0.5 * vp.width),
                    fui(vp.y + 0.5 * vp.height),
                    fui(o_z),
                ],
            );
            let clamp = |v: f32| v.clamp(0.0, 65535.0) as u32;
            let (xmin, xmax) = (clamp(vp.x), clamp(vp.x + vp.width));
            let (ymin, ymax) = (
                clamp(vp.y.min(vp.y + vp.height)),
                clamp(vp.y.max(vp.y + vp.height)),
            );
            let clip = [
                xmin | (xmax.saturating_sub(xmin) << 16),
                ymin | (ymax.saturating_sub(ymin) << 16),
            ];
            let (zmin, zmax) = (
                fui(vp.min_depth.min(vp.max_depth)),
                fui(vp.min_depth.max(vp.max_depth)),
            );
            if eng3d >= VOLTA_A {
                p.inc(
                    SUBC_3D,
                    class::set_viewport_clip_horizontal(i),
                    &[clip[0], clip[1], zmin, zmax],
                );
            } else {
                p.inc(SUBC_3D, class::set_viewport_clip_horizontal(i), &clip);
                p.inc_once(
                    SUBC_3D,
                    class::call_mme_macro(Macro::SetViewportMinMaxZ.id()),
                    &[u32::from(i), zmin, zmax],
                );
            }
            if eng3d >= MAXWELL_B {
                p.immd_or_mthd(
                    SUBC_3D,
                    class::set_viewport_coordinate_swizzle(i),
                    class::VIEWPORT_SWIZZLE_IDENTITY,
                );
            }
        }
    }
    if d.has(StateBit::VpDepthClipNegativeOneToOne) {
        // RANGE_NEGATIVE_W_TO_POSITIVE_W is 0, RANGE_ZERO_TO_POSITIVE_W 1.
        let range = u32::from(!s.depth_clip_negative_one_to_one);
        p.immd_or_mthd(SUBC_3D, class::SET_VIEWPORT_Z_CLIP, range);
    }
    if d.has(StateBit::VpScissorCount) {
        for i in s.scissors.len()..MAX_VIEWPORTS {
            p.immd_or_mthd(SUBC_3D, class::set_scissor_enable(i as u16), 0);
        }
    }
    if d.has(StateBit::VpScissors) {
        for (i, r) in s.scissors.iter().enumerate() {
            let clamp = |v: i64| v.clamp(0, SCISSOR_MAX) as u32;
            let xmin = clamp(i64::from(r.x));
            let xmax = clamp(i64::from(r.x) + i64::from(r.width));
            let ymin = clamp(i64::from(r.y));
            let ymax = clamp(i64::from(r.y) + i64::from(r.height));
            p.inc(
                SUBC_3D,
                class::set_scissor_enable(i as u16),
                &[1, xmin | (xmax << 16), ymin | (ymax << 16)],
            );
        }
    }
}

/// `SET_VIEWPORT_CLIP_MIN_Z(0)`; MAX_Z follows; viewport `j` at `+ 16·j`.
const VIEWPORT_CLIP_MIN_Z: u16 = 0x0c08;
/// `-INFINITY` and `+INFINITY` as floats' bits.
const MINUS_INF: u32 = 0xff80_0000;
const PLUS_INF: u32 = 0x7f80_0000;

/// The `SET_VIEWPORT_MIN_MAX_Z` macro (pre-Volta classes, where
/// `SET_VIEWPORT_CLIP_CONTROL` has no Z clip range): a viewport's index, min and max Z,
/// kept in scratch, and written as its clip range while Z clamping is on. Mirrors
/// nvk_mme_set_viewport_min_max_z.
pub(crate) fn set_viewport_min_max_z(b: &mut Builder) {
    let vp = b.load();
    let min_z = b.load();
    let max_z = b.load();
    // Two scratch slots a viewport.
    b.alu_to(AluOp::Sll, vp, vp, Value::Imm(1));
    b.mthd_arr(
        class::set_mme_shadow_scratch(Scratch::Viewport0MinZ as u16),
        vp,
    );
    b.emit(min_z);
    b.emit(max_z);
    let z_clamp = b.load_scratch(Scratch::ZClamp as u16);
    b.if_(Cmp::Ne, z_clamp, Value::Zero, |b| {
        // Four methods a viewport.
        b.alu_to(AluOp::Sll, vp, vp, Value::Imm(1));
        b.mthd_arr(VIEWPORT_CLIP_MIN_Z, vp);
        b.emit(min_z);
        b.emit(max_z);
    });
    for v in [z_clamp, vp, min_z, max_z] {
        b.free_reg(v);
    }
}

/// The `SET_Z_CLAMP` macro (pre-Volta classes): when the clamp changes, every
/// viewport's clip range becomes its kept min and max Z (clamp on) or ±∞ (clamp off).
/// Mirrors nvk_mme_set_z_clamp.
pub(crate) fn set_z_clamp(b: &mut Builder) {
    let z_clamp = b.load();
    let old = b.load_scratch(Scratch::ZClamp as u16);
    b.if_(Cmp::Ne, z_clamp, old, |b| {
        b.store_scratch(Scratch::ZClamp as u16, z_clamp);
        b.if_(Cmp::Ne, z_clamp, Value::Zero, |b| {
            let i2 = b.mov(Value::Zero);
            b.while_(Cmp::Ne, i2, Value::Imm(MAX_VIEWPORTS as u32 * 2), |b| {
                let min_z = b.state_arr(
                    class::set_mme_shadow_scratch(Scratch::Viewport0MinZ as u16),
                    i2,
                );
                let max_z = b.state_arr(
                    class::set_mme_shadow_scratch(Scratch::Viewport0MinZ as u16 + 1),
                    i2,
                );
                let i4 = b.sll(i2, Value::Imm(1));
                b.mthd_arr(VIEWPORT_CLIP_MIN_Z, i4);
                b.emit(min_z);
                b.emit(max_z);
                for v in [i4, min_z, max_z] {
                    b.free_reg(v);
                }
                b.add_to(i2, i2, Value::Imm(2));
            });
            b.free_reg(i2);
        });
        b.if_(Cmp::Eq, z_clamp, Value::Zero, |b| {
            let i4 = b.mov(Value::Zero);
            b.while_(Cmp::Ne, i4, Value::Imm(MAX_VIEWPORTS as u32 * 4), |b| {
                b.mthd_arr(VIEWPORT_CLIP_MIN_Z, i4);
                b.emit(Value::Imm(MINUS_INF));
                b.emit(Value::Imm(PLUS_INF));
                b.add_to(i4, i4, Value::Imm(4));
            });
            b.free_reg(i4);
        });
    });
    b.free_reg(old);
    b.free_reg(z_clamp);
}

/// The viewports and scissors's dynamic state: the `vkCmdSet*` calls and the pipeline's
/// static values land here before a flush pushes them.
impl GraphicsState {
    /// vkCmdSetViewport: `viewports` from `first`.
    pub fn set_viewports(&mut self, first: u32, viewports: &[Viewport]) {
        let first = (first as usize).min(MAX_VIEWPORTS);
        let end = (first + viewports.len()).min(MAX_VIEWPORTS);
        let mut all = self.dynamic.viewports.clone();
        if all.len() < end {
            all.resize(end, Viewport::default());
        }
        all[first..end].copy_from_slice(&viewports[..end - first]);
        set(
            &mut self.marks,
            StateBit::VpViewports,
            &mut self.dynamic.viewports,
            all,
        );
    }

    /// vkCmdSetViewportWithCount.
    pub fn set_viewports_with_count(&mut self, viewports: &[Viewport]) {
        let viewports = &viewports[..viewports.len().min(MAX_VIEWPORTS)];
        let count_changed = self.dynamic.viewports.len() != viewports.len();
        self.marks.mark_if(StateBit::VpViewportCount, count_changed);
        set(
            &mut self.marks,
            StateBit::VpViewports,
            &mut self.dynamic.viewports,
            viewports.to_vec(),
        );
    }

    /// vkCmdSetScissor: `scissors` from `first`.
    pub fn set_scissors(&mut self, first: u32, scissors: &[Rect]) {
        let first = (first as usize).min(MAX_VIEWPORTS);
        let end = (first + scissors.len()).min(MAX_VIEWPORTS);
        let mut all = self.dynamic.scissors.clone();
        if all.len() < end {
            all.resize(end, Rect::default());
        }
        all[first..end].copy_from_slice(&scissors[..end - first]);
        set(
            &mut self.marks,
            StateBit::VpScissors,
            &mut self.dynamic.scissors,
            all,
        );
    }

    /// vkCmdSetScissorWithCount.
    pub fn set_scissors_with_count(&mut self, scissors: &[Rect]) {
        let scissors = &scissors[..scissors.len().min(MAX_VIEWPORTS)];
        let count_changed = self.dynamic.scissors.len() != scissors.len();
        self.marks.mark_if(StateBit::VpScissorCount, count_changed);
        set(
            &mut self.marks,
            StateBit::VpScissors,
            &mut self.dynamic.scissors,
            scissors.to_vec(),
        );
    }

    /// vkCmdSetDepthClipNegativeOneToOneEXT.
    pub fn set_depth_clip_negative_one_to_one(&mut self, enable: bool) {
        set(
            &mut self.marks,
            StateBit::VpDepthClipNegativeOneToOne,
            &mut self.dynamic.depth_clip_negative_one_to_one,
            enable,
        );
    }
}
