//! Depth and stencil.

use super::{fui, Dirty, DynamicState, StateBit, StencilOps};
use crate::class;
use crate::push::{PushBuffer, SUBC_3D};

/// `VkCompareOp` as the 3D class's OGL comparison (`0x200 | op`).
fn compare_op(op: u32) -> u32 {
    0x200 | (op & 7)
}

/// `VkStencilOp` as the 3D class's D3D stencil operation (`op + 1`).
fn stencil_op(op: u32) -> u32 {
    (op & 7) + 1
}

fn stencil_words(ops: StencilOps) -> [u32; 4] {
    [
        stencil_op(ops.fail),
        stencil_op(ops.depth_fail),
        stencil_op(ops.pass),
        compare_op(ops.compare),
    ]
}

/// Mirrors nvk_flush_ds_state. The tests and writes are enabled only where the render
/// pass has a depth or stencil attachment; this model takes it that it does.
pub(super) fn flush_ds_state(p: &mut PushBuffer, d: Dirty, s: &DynamicState) {
    let immd = |p: &mut PushBuffer, mthd, v| p.immd_or_mthd(SUBC_3D, mthd, v);
    if d.has(StateBit::DsDepthTestEnable) {
        immd(p, class::SET_DEPTH_TEST, u32::from(s.depth_test_enable));
    }
    if d.has(StateBit::DsDepthWriteEnable) {
        immd(p, class::SET_DEPTH_WRITE, u32::from(s.depth_write_enable));
    }
    if d.has(StateBit::DsDepthCompareOp) {
        immd(p, class::SET_DEPTH_FUNC, compare_op(s.depth_compare_op));
    }
    if d.has(StateBit::DsDepthBoundsTestEnable) {
        let e = u32::from(s.depth_bounds_test_enable);
        immd(p, class::SET_DEPTH_BOUNDS_TEST, e);
    }
    if d.has(StateBit::DsDepthBoundsTestBounds) {
        let (min, max) = s.depth_bounds;
        p.inc(SUBC_3D, class::SET_DEPTH_BOUNDS_MIN, &[fui(min), fui(max)]);
    }
    if d.has(StateBit::DsStencilTestEnable) {
        immd(p, class::SET_STENCIL_TEST, u32::from(s.stencil_test_enable));
    }
    if d.has(StateBit::DsStencilOp) {
        let front = stencil_words(s.stencil_ops.front);
        let back = stencil_words(s.stencil_ops.back);
        p.inc(SUBC_3D, class::SET_STENCIL_OP_FAIL, &front);
        p.inc(SUBC_3D, class::SET_BACK_STENCIL_OP_FAIL, &back);
    }
    if d.has(StateBit::DsStencilCompareMask) {
        let m = s.stencil_compare_mask;
        immd(p, class::SET_STENCIL_FUNC_MASK, m.front);
        immd(p, class::SET_BACK_STENCIL_FUNC_MASK, m.back);
    }
    if d.has(StateBit::DsStencilWriteMask) {
        let m = s.stencil_write_mask;
        immd(p, class::SET_STENCIL_MASK, m.front);
        immd(p, class::SET_BACK_STENCIL_MASK, m.back);
    }
    if d.has(StateBit::DsStencilReference) {
        let r = s.stencil_reference;
        immd(p, class::SET_STENCIL_FUNC_REF, r.front);
        immd(p, class::SET_BACK_STENCIL_FUNC_REF, r.back);
    }
}
