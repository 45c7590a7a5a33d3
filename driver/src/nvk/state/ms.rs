//! Multisampling.

use super::{Dirty, DynamicState, StateBit};
use crate::class;
use crate::push::{PushBuffer, SUBC_3D};

/// Mirrors nvk_flush_ms_state's alpha-to-coverage/one and sample mask (the sample
/// layout and locations follow the render pass's sample count, which the trace does
/// not give this model: not modelled).
pub(super) fn flush_ms_state(p: &mut PushBuffer, d: Dirty, s: &DynamicState) {
    if d.any(&[
        StateBit::MsAlphaToCoverageEnable,
        StateBit::MsAlphaToOneEnable,
    ]) {
        let control =
            u32::from(s.alpha_to_coverage_enable) | (u32::from(s.alpha_to_one_enable) << 4);
        p.immd_or_mthd(SUBC_3D, class::SET_ANTI_ALIAS_ALPHA_CONTROL, control);
    }
    if d.has(StateBit::MsSampleMask) {
        let m = s.sample_mask & 0xffff;
        p.inc(SUBC_3D, class::SET_SAMPLE_MASK_X0_Y0, &[m, m, m, m]);
    }
}
