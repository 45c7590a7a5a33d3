//! Depth and stencil.

use super::*;
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

/// Mirrors nvk_flush_ds_state. The depth tests and writes are enabled only where the
/// rendering has a depth attachment, the stencil test only where it has a stencil
/// attachment (the last argument: whether it has each).
pub(super) fn flush_ds_state(
    p: &mut PushBuffer,
    d: Dirty,
    s: &DynamicState,
    (depth, stencil): (bool, bool),
) {
    let immd = |p: &mut PushBuffer, mthd, v| p.immd_or_mthd(SUBC_3D, mthd, v);
    if d.has(StateBit::DsDepthTestEnable) {
        immd(
            p,
            class::SET_DEPTH_TEST,
            u32::from(s.depth_test_enable && depth),
        );
    }
    if d.has(StateBit::DsDepthWriteEnable) {
        immd(
            p,
            class::SET_DEPTH_WRITE,
            u32::from(s.depth_write_enable && depth),
        );
    }
    if d.has(StateBit::DsDepthCompareOp) {
        immd(p, class::SET_DEPTH_FUNC, compare_op(s.depth_compare_op));
    }
    if d.has(StateBit::DsDepthBoundsTestEnable) {
        let e = u32::from(s.depth_bounds_test_enable && depth);
        immd(p, class::SET_DEPTH_BOUNDS_TEST, e);
    }
    if d.has(StateBit::DsDepthBoundsTestBounds) {
        let (min, max) = s.depth_bounds;
        p.inc(SUBC_3D, class::SET_DEPTH_BOUNDS_MIN, &[fui(min), fui(max)]);
    }
    if d.has(StateBit::DsStencilTestEnable) {
        immd(
            p,
            class::SET_STENCIL_TEST,
            u32::from(s.stencil_test_enable && stencil),
        );
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

/// The depth and stencil's dynamic state: the `vkCmdSet*` calls and the pipeline's
/// static values land here before a flush pushes them.
impl GraphicsState {
    /// vkCmdSetDepthTestEnable.
    pub fn set_depth_test_enable(&mut self, enable: bool) {
        set(
            &mut self.marks,
            StateBit::DsDepthTestEnable,
            &mut self.dynamic.depth_test_enable,
            enable,
        );
    }

    /// vkCmdSetDepthWriteEnable.
    pub fn set_depth_write_enable(&mut self, enable: bool) {
        set(
            &mut self.marks,
            StateBit::DsDepthWriteEnable,
            &mut self.dynamic.depth_write_enable,
            enable,
        );
    }

    /// vkCmdSetDepthCompareOp.
    pub fn set_depth_compare_op(&mut self, op: u32) {
        set(
            &mut self.marks,
            StateBit::DsDepthCompareOp,
            &mut self.dynamic.depth_compare_op,
            op,
        );
    }

    /// vkCmdSetDepthBoundsTestEnable.
    pub fn set_depth_bounds_test_enable(&mut self, enable: bool) {
        set(
            &mut self.marks,
            StateBit::DsDepthBoundsTestEnable,
            &mut self.dynamic.depth_bounds_test_enable,
            enable,
        );
    }

    /// vkCmdSetDepthBounds.
    pub fn set_depth_bounds(&mut self, min: f32, max: f32) {
        set(
            &mut self.marks,
            StateBit::DsDepthBoundsTestBounds,
            &mut self.dynamic.depth_bounds,
            (min, max),
        );
    }

    /// vkCmdSetStencilTestEnable.
    pub fn set_stencil_test_enable(&mut self, enable: bool) {
        set(
            &mut self.marks,
            StateBit::DsStencilTestEnable,
            &mut self.dynamic.stencil_test_enable,
            enable,
        );
    }

    /// The faces a `VkStencilFaceFlags` names: front (bit 0), back (bit 1).
    fn faces<T: Copy>(current: Faces<T>, face_mask: u32, value: T) -> Faces<T> {
        Faces {
            front: if face_mask & 1 != 0 {
                value
            } else {
                current.front
            },
            back: if face_mask & 2 != 0 {
                value
            } else {
                current.back
            },
        }
    }

    /// vkCmdSetStencilOp.
    pub fn set_stencil_op(&mut self, face_mask: u32, ops: StencilOps) {
        let value = Self::faces(self.dynamic.stencil_ops, face_mask, ops);
        set(
            &mut self.marks,
            StateBit::DsStencilOp,
            &mut self.dynamic.stencil_ops,
            value,
        );
    }

    /// vkCmdSetStencilCompareMask. Mesa keeps stencil masks and references in 8 bits
    /// (`vk_stencil_test_face_state`): a mask of 0xffffffff is 0xff.
    pub fn set_stencil_compare_mask(&mut self, face_mask: u32, mask: u32) {
        let value = Self::faces(self.dynamic.stencil_compare_mask, face_mask, mask & 0xff);
        set(
            &mut self.marks,
            StateBit::DsStencilCompareMask,
            &mut self.dynamic.stencil_compare_mask,
            value,
        );
    }

    /// vkCmdSetStencilWriteMask, in 8 bits as the compare mask.
    pub fn set_stencil_write_mask(&mut self, face_mask: u32, mask: u32) {
        let value = Self::faces(self.dynamic.stencil_write_mask, face_mask, mask & 0xff);
        set(
            &mut self.marks,
            StateBit::DsStencilWriteMask,
            &mut self.dynamic.stencil_write_mask,
            value,
        );
    }

    /// vkCmdSetStencilReference, in 8 bits as the compare mask.
    pub fn set_stencil_reference(&mut self, face_mask: u32, reference: u32) {
        let value = Self::faces(self.dynamic.stencil_reference, face_mask, reference & 0xff);
        set(
            &mut self.marks,
            StateBit::DsStencilReference,
            &mut self.dynamic.stencil_reference,
            value,
        );
    }
}
