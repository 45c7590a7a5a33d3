//! Viewports and scissors.

use super::{fui, Dirty, DynamicState, StateBit, MAX_VIEWPORTS};
use crate::class;
use crate::push::{PushBuffer, SUBC_3D};

/// The largest scissor coordinate (`nvk_image_max_dimension` for 2D images).
const SCISSOR_MAX: i64 = 0x8000;

/// Mirrors nvk_flush_vp_state (VOLTA_A and later: clip min/max Z are methods, not the
/// `SET_VIEWPORT_MIN_MAX_Z` macro; the coordinate swizzle is set).
pub(super) fn flush_vp_state(p: &mut PushBuffer, d: Dirty, s: &DynamicState) {
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
            p.inc(
                SUBC_3D,
                class::set_viewport_clip_horizontal(i),
                &[
                    xmin | (xmax.saturating_sub(xmin) << 16),
                    ymin | (ymax.saturating_sub(ymin) << 16),
                    fui(vp.min_depth.min(vp.max_depth)),
                    fui(vp.min_depth.max(vp.max_depth)),
                ],
            );
            p.immd_or_mthd(
                SUBC_3D,
                class::set_viewport_coordinate_swizzle(i),
                class::VIEWPORT_SWIZZLE_IDENTITY,
            );
        }
    }
    if d.has(StateBit::VpDepthClipNegativeOneToOne) {
        let range = u32::from(s.depth_clip_negative_one_to_one);
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
