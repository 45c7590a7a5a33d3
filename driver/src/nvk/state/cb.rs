//! Colour blending.

use super::{fui, Dirty, DynamicState, StateBit, MAX_RTS};
use crate::class;
use crate::push::{PushBuffer, SUBC_3D};

/// `VkBlendOp` (the core five) as the 3D class's OGL blend operation.
fn blend_op(op: u32) -> u32 {
    match op {
        1 => 0x800a, // SUBTRACT
        2 => 0x800b, // REVERSE_SUBTRACT
        3 => 0x8007, // MIN
        4 => 0x8008, // MAX
        _ => 0x8006, // ADD
    }
}

/// `VkBlendFactor` as the 3D class's OGL blend coefficient.
fn blend_factor(factor: u32) -> u32 {
    const FACTORS: [u32; 19] = [
        0x4000, 0x4001, 0x4300, 0x4301, 0x4306, 0x4307, 0x4302, 0x4303, 0x4304, 0x4305, 0xc001,
        0xc002, 0xc003, 0xc004, 0x4308, 0xc900, 0xc901, 0xc902, 0xc903,
    ];
    FACTORS.get(factor as usize).copied().unwrap_or(0x4000)
}

/// Mirrors nvk_flush_cb_state for `attachments` colour attachments (the write masks'
/// `SET_WRITE_MASK` macro and the attachment location map are not modelled yet).
pub(super) fn flush_cb_state(p: &mut PushBuffer, d: Dirty, s: &DynamicState, attachments: u32) {
    let attachments = (attachments as usize).min(MAX_RTS);
    if d.has(StateBit::CbLogicOpEnable) {
        p.immd_or_mthd(SUBC_3D, class::SET_LOGIC_OP, u32::from(s.logic_op_enable));
    }
    if d.has(StateBit::CbLogicOp) {
        p.immd_or_mthd(
            SUBC_3D,
            class::SET_LOGIC_OP_FUNC,
            0x1500 | (s.logic_op & 0xf),
        );
    }
    if d.has(StateBit::CbBlendEnables) {
        for (a, enable) in s.blend_enables.iter().take(attachments).enumerate() {
            p.immd_or_mthd(SUBC_3D, class::set_blend(a as u16), u32::from(*enable));
        }
    }
    if d.has(StateBit::CbBlendEquations) {
        for (a, e) in s.blend_equations.iter().take(attachments).enumerate() {
            p.inc(
                SUBC_3D,
                class::set_blend_per_target(a as u16),
                &[
                    1, // separate for alpha
                    blend_op(e.color_blend_op),
                    blend_factor(e.src_color_blend_factor),
                    blend_factor(e.dst_color_blend_factor),
                    blend_op(e.alpha_blend_op),
                    blend_factor(e.src_alpha_blend_factor),
                    blend_factor(e.dst_alpha_blend_factor),
                ],
            );
        }
    }
    if d.has(StateBit::CbBlendConstants) {
        let c = s.blend_constants.map(fui);
        p.inc(SUBC_3D, class::SET_BLEND_CONST_RED, &c);
    }
}
