//! Input assembly and tessellation.

use super::{Dirty, DynamicState, StateBit};
use crate::class;
use crate::push::{PushBuffer, SUBC_3D};

/// Mirrors nvk_flush_ia_state's primitive restart. The topology takes no method here in
/// this model: the draw macros take the BEGIN word as a parameter (the 2023 layout the
/// seeds describe), where NVK today keeps it in the `DRAW_BEGIN` scratch register.
pub(super) fn flush_ia_state(p: &mut PushBuffer, d: Dirty, s: &DynamicState) {
    if d.has(StateBit::IaPrimitiveRestartEnable) {
        p.immd_or_mthd(
            SUBC_3D,
            class::SET_DA_PRIMITIVE_RESTART,
            u32::from(s.primitive_restart_enable),
        );
    }
}

/// Mirrors nvk_flush_ts_state's patch size (the domain origin's `SET_TESS_PARAMS` macro
/// is not modelled yet).
pub(super) fn flush_ts_state(p: &mut PushBuffer, d: Dirty, s: &DynamicState) {
    if d.has(StateBit::TsPatchControlPoints) {
        // The hardware takes no 0: at least 1 when dirty but never set.
        p.immd_or_mthd(SUBC_3D, class::SET_PATCH, s.patch_control_points.max(1));
    }
}
