//! Colour blending.

use super::*;
use crate::class;
use crate::mme::{AluOp, Builder, Cmp, Value};
use crate::nvk::Macro;
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

/// Mirrors nvk_flush_cb_state for `attachments` colour attachments.
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
    if d.any(&[
        StateBit::CbWriteMasks,
        StateBit::CbColorWriteEnables,
        StateBit::RpAttachments,
        StateBit::ColorAttachmentMap,
    ]) {
        // Each attachment's four bits: enabled, its own mask, present in the
        // pipeline's render pass, and mapped to a location.
        let mut mask = 0u32;
        for a in 0..attachments {
            let bit = 1 << a;
            if s.color_write_enables & bit != 0
                && s.rp_attachments & bit != 0
                && s.color_map[a] != ATTACHMENT_UNUSED
            {
                mask |= (s.write_masks[a] & 0xf) << (4 * a);
            }
        }
        p.inc_once(
            SUBC_3D,
            class::call_mme_macro(Macro::SetWriteMask.id()),
            &[attachments as u32, mask],
        );
    }
    if d.has(StateBit::ColorAttachmentMap) {
        p.immd_or_mthd(SUBC_3D, class::SET_CT_SELECT, ct_select(&s.color_map));
    }
    if d.has(StateBit::CbBlendConstants) {
        let c = s.blend_constants.map(fui);
        p.inc(SUBC_3D, class::SET_BLEND_CONST_RED, &c);
    }
}

/// `SET_CT_SELECT` for a colour attachment map: each location's colour target (the
/// attachment mapped there; a location no attachment maps to takes the first
/// attachment not yet used, which BeginRendering bound as a real or a null target),
/// and the count up to the last location used. Mirrors nvk_flush_cb_state's
/// `COLOR_ATTACHMENT_MAP` part.
fn ct_select(color_map: &[u8; MAX_RTS]) -> u32 {
    let mut location_target = [None; MAX_RTS];
    let mut used = 0u32;
    let mut max_location = 0;
    for (a, location) in color_map.iter().enumerate() {
        if *location == ATTACHMENT_UNUSED {
            continue;
        }
        used |= 1 << a;
        let l = usize::from(*location).min(MAX_RTS - 1);
        location_target[l] = Some(a as u32);
        max_location = max_location.max(l as u32);
    }
    let mut word = max_location + 1;
    for (l, target) in location_target.iter().enumerate() {
        let target = target.unwrap_or_else(|| {
            let a = (!used).trailing_zeros().min(MAX_RTS as u32 - 1);
            used |= 1 << a;
            a
        });
        word |= target << (4 + 3 * l);
    }
    word
}

/// The `SET_WRITE_MASK` macro: `count, mask` (four bits per attachment). Writes each
/// attachment's `SET_CT_WRITE` with its four bits spread to bits 0, 4, 8 and 12, then
/// `SET_SINGLE_CT_WRITE_CONTROL`. Mirrors nvk_mme_set_write_mask, including its test
/// for a common mask (`mask + 0xf` against the first attachment's bits).
pub(crate) fn set_write_mask(b: &mut Builder) {
    let count = b.load();
    let mask = b.load();
    let common = b.mov(Value::Imm(1));
    let first = b.and(mask, Value::Imm(0xf));
    let i = b.mov(Value::Zero);
    b.while_(Cmp::Ne, i, count, |b| {
        let val = b.merge(Value::Zero, mask, 0, 1, 0);
        b.merge_to(val, val, mask, 4, 1, 1);
        b.merge_to(val, val, mask, 8, 1, 2);
        b.merge_to(val, val, mask, 12, 1, 3);
        b.mthd_arr(class::SET_CT_WRITE, i);
        b.emit(val);
        b.free_reg(val);
        let temp = b.add(mask, Value::Imm(0xf));
        b.if_(Cmp::Ne, first, temp, |b| b.mov_to(common, Value::Zero));
        b.free_reg(temp);
        b.alu_to(AluOp::Srl, mask, mask, Value::Imm(4));
        b.add_to(i, i, Value::Imm(1));
    });
    b.mthd(class::SET_SINGLE_CT_WRITE_CONTROL);
    b.emit(common);
    for v in [count, mask, common, first, i] {
        b.free_reg(v);
    }
}

/// The colour blending's dynamic state: the `vkCmdSet*` calls and the pipeline's
/// static values land here before a flush pushes them.
impl GraphicsState {
    /// vkCmdSetLogicOpEnableEXT.
    pub fn set_logic_op_enable(&mut self, enable: bool) {
        set(
            &mut self.marks,
            StateBit::CbLogicOpEnable,
            &mut self.dynamic.logic_op_enable,
            enable,
        );
    }

    /// vkCmdSetLogicOpEXT.
    pub fn set_logic_op(&mut self, op: u32) {
        set(
            &mut self.marks,
            StateBit::CbLogicOp,
            &mut self.dynamic.logic_op,
            op,
        );
    }

    /// vkCmdSetColorBlendEnableEXT: `enables` from attachment `first`.
    pub fn set_blend_enables(&mut self, first: u32, enables: &[bool]) {
        let mut all = self.dynamic.blend_enables;
        for (i, e) in enables.iter().enumerate() {
            if let Some(slot) = all.get_mut(first as usize + i) {
                *slot = *e;
            }
        }
        set(
            &mut self.marks,
            StateBit::CbBlendEnables,
            &mut self.dynamic.blend_enables,
            all,
        );
    }

    /// vkCmdSetColorBlendEquationEXT: `equations` from attachment `first`.
    pub fn set_blend_equations(&mut self, first: u32, equations: &[BlendEquation]) {
        let mut all = self.dynamic.blend_equations;
        for (i, e) in equations.iter().enumerate() {
            if let Some(slot) = all.get_mut(first as usize + i) {
                *slot = *e;
            }
        }
        set(
            &mut self.marks,
            StateBit::CbBlendEquations,
            &mut self.dynamic.blend_equations,
            all,
        );
    }

    /// vkCmdSetColorWriteMaskEXT: `masks` from attachment `first`.
    pub fn set_write_masks(&mut self, first: u32, masks: &[u32]) {
        let mut all = self.dynamic.write_masks;
        for (i, m) in masks.iter().enumerate() {
            if let Some(slot) = all.get_mut(first as usize + i) {
                *slot = *m & 0xf;
            }
        }
        set(
            &mut self.marks,
            StateBit::CbWriteMasks,
            &mut self.dynamic.write_masks,
            all,
        );
    }

    /// vkCmdSetColorWriteEnableEXT: one flag per attachment from the first.
    pub fn set_color_write_enables(&mut self, enables: &[bool]) {
        let bits = enables
            .iter()
            .take(MAX_RTS)
            .enumerate()
            .fold(0, |m, (i, e)| m | (u32::from(*e) << i));
        set(
            &mut self.marks,
            StateBit::CbColorWriteEnables,
            &mut self.dynamic.color_write_enables,
            bits,
        );
    }

    /// vkCmdSetBlendConstants.
    pub fn set_blend_constants(&mut self, constants: [f32; 4]) {
        set(
            &mut self.marks,
            StateBit::CbBlendConstants,
            &mut self.dynamic.blend_constants,
            constants,
        );
    }
}
