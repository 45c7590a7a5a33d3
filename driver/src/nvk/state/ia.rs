//! Input assembly and tessellation.

use super::*;
use crate::class::{self, Begin, InstanceId, PrimitiveOp};
use crate::mme::{Builder, Cmp, Value};
use crate::nvk::{Macro, Scratch};
use crate::push::{PushBuffer, SUBC_3D};

/// `nak_ts_prims`: the output primitives a lower-left origin flips.
const PRIMS_TRIANGLES_CW: u32 = 2;
const PRIMS_TRIANGLES_CCW: u32 = 3;

/// A value and the mask of its bits as NVK's masked macros take them
/// (`nvk_mme_val_mask`: mask in the high half).
pub fn val_mask(value: u32, mask: u32) -> u32 {
    (mask << 16) | (value & mask & 0xffff)
}

/// The `SET_TESS_PARAMS` macro: one masked value of the tessellation parameters
/// (domain, spacing, primitives; the lower-left origin at bit 12). When they change,
/// stores them and writes `SET_TESSELLATION_PARAMETERS`, flipping the triangles'
/// winding for a lower-left origin. Mirrors nvk_mme_set_tess_params.
pub(crate) fn set_tess_params(b: &mut Builder) {
    // As on_masked_scratch_change, but NVK keeps the old value's register taken.
    let value_mask = b.load();
    let old = b.load_scratch(Scratch::TessParams as u16);
    let params = super::set_masked(b, old, value_mask);
    b.free_reg(value_mask);
    b.if_(Cmp::Ne, params, old, |b| {
        b.store_scratch(Scratch::TessParams as u16, params);
        let lower_left = b.merge(Value::Zero, params, 0, 1, 12);
        b.merge_to(params, Value::Zero, params, 0, 12, 0);
        b.if_(Cmp::Ne, lower_left, Value::Zero, |b| {
            let prims = b.merge(Value::Zero, params, 0, 4, 8);
            b.if_(Cmp::Eq, prims, Value::Imm(PRIMS_TRIANGLES_CW), |b| {
                b.merge_to(params, params, Value::Imm(PRIMS_TRIANGLES_CCW), 8, 4, 0);
            });
            b.if_(Cmp::Eq, prims, Value::Imm(PRIMS_TRIANGLES_CCW), |b| {
                b.merge_to(params, params, Value::Imm(PRIMS_TRIANGLES_CW), 8, 4, 0);
            });
            b.free_reg(prims);
        });
        b.free_reg(lower_left);
        b.mthd(class::SET_TESSELLATION_PARAMETERS);
        b.emit(params);
    });
    b.free_reg(params);
    b.free_reg(old);
}

/// Mirrors nvk_flush_ia_state: a changed topology becomes the BEGIN word the draw
/// macros start every instance with, kept in the `DRAW_BEGIN` scratch slot (first
/// primitive and instance, normal split); then primitive restart.
pub(super) fn flush_ia_state(p: &mut PushBuffer, d: Dirty, s: &DynamicState) {
    if d.has(StateBit::IaPrimitiveTopology) {
        let begin = Begin {
            op: PrimitiveOp::of_vk(s.topology),
            primitive_id_first: true,
            instance_id: InstanceId::First,
        };
        p.mthd(
            SUBC_3D,
            class::set_mme_shadow_scratch(Scratch::DrawBegin as u16),
            begin.pack(),
        );
    }
    if d.has(StateBit::IaPrimitiveRestartEnable) {
        p.immd_or_mthd(
            SUBC_3D,
            class::SET_DA_PRIMITIVE_RESTART,
            u32::from(s.primitive_restart_enable),
        );
    }
}

/// Mirrors nvk_flush_ts_state: the patch size, and the domain origin through the
/// `SET_TESS_PARAMS` macro (its bit 12 alone).
pub(super) fn flush_ts_state(p: &mut PushBuffer, d: Dirty, s: &DynamicState) {
    if d.has(StateBit::TsPatchControlPoints) {
        // The hardware takes no 0: at least 1 when dirty but never set.
        p.immd_or_mthd(SUBC_3D, class::SET_PATCH, s.patch_control_points.max(1));
    }
    if d.has(StateBit::TsDomainOrigin) {
        // VK_TESSELLATION_DOMAIN_ORIGIN_LOWER_LEFT is 1.
        let lower_left = u32::from(s.domain_origin == 1) << 12;
        p.inc_once(
            SUBC_3D,
            class::call_mme_macro(Macro::SetTessParams.id()),
            &[val_mask(lower_left, 1 << 12)],
        );
    }
}

/// The input assembly and tessellation's dynamic state: the `vkCmdSet*` calls and the pipeline's
/// static values land here before a flush pushes them.
impl GraphicsState {
    /// vkCmdSetPrimitiveTopology (and a pipeline's topology).
    pub fn set_topology(&mut self, topology: u32) {
        set(
            &mut self.marks,
            StateBit::IaPrimitiveTopology,
            &mut self.dynamic.topology,
            topology,
        );
    }

    /// vkCmdSetPrimitiveRestartEnable.
    pub fn set_primitive_restart_enable(&mut self, enable: bool) {
        set(
            &mut self.marks,
            StateBit::IaPrimitiveRestartEnable,
            &mut self.dynamic.primitive_restart_enable,
            enable,
        );
    }

    /// vkCmdSetPatchControlPointsEXT.
    pub fn set_patch_control_points(&mut self, points: u32) {
        set(
            &mut self.marks,
            StateBit::TsPatchControlPoints,
            &mut self.dynamic.patch_control_points,
            points,
        );
    }

    /// vkCmdSetTessellationDomainOriginEXT.
    pub fn set_domain_origin(&mut self, origin: u32) {
        set(
            &mut self.marks,
            StateBit::TsDomainOrigin,
            &mut self.dynamic.domain_origin,
            origin,
        );
    }
}
