//! Clears inside rendering: vkCmdClearAttachments as NVK does it (`nvk_cmd_clear.c`),
//! a `CLEAR_SURFACE` per attachment and rectangle through the `CLEAR` macro, which
//! repeats it for every view of the view mask, or every layer without one.

use super::encoder::{CommandEncoder, Recorded};
use super::{Macro, Scratch};
use crate::class;
use crate::mme::{AluOp, Builder, Cmp, Value};
use crate::push::SUBC_3D;

/// `CLEAR_SURFACE`'s RT array index advances by one layer at bit 10.
const ARRAY_INDEX_ONE: u32 = 1 << 10;

/// The `CLEAR` macro: `payload`, then (without a view mask) `layer_count`. Clears
/// each view of the view mask, or `layer_count` layers from the payload's. Mirrors
/// nvk_mme_clear.
pub fn clear(b: &mut Builder) {
    let payload = b.load();
    let view_mask = b.load_scratch(Scratch::ViewMask as u16);
    b.if_(Cmp::Ne, view_mask, Value::Zero, |b| {
        let bit = b.mov(Value::Imm(1));
        b.loop_(Value::Imm(32), |b| {
            let set = b.and(view_mask, bit);
            b.if_(Cmp::Ne, set, Value::Zero, |b| {
                b.mthd(class::CLEAR_SURFACE);
                b.emit(payload);
            });
            b.free_reg(set);
            b.add_to(payload, payload, Value::Imm(ARRAY_INDEX_ONE));
            b.alu_to(AluOp::Sll, bit, bit, Value::Imm(1));
        });
        b.free_reg(bit);
    });
    b.if_(Cmp::Eq, view_mask, Value::Zero, |b| {
        let layers = b.load();
        // Mesa's mme_loop: a layer count of 0 clears one layer, as NVK's macro does.
        b.hw_loop(layers, |b| {
            b.mthd(class::CLEAR_SURFACE);
            b.emit(payload);
            b.add_to(payload, payload, Value::Imm(ARRAY_INDEX_ONE));
        });
        b.free_reg(layers);
    });
    b.free_reg(payload);
    b.free_reg(view_mask);
}

/// One `VkClearAttachment`: its aspects, colour attachment and clear value (as four
/// words; depth as a float's bits in the first, stencil in the second).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct ClearAttachment {
    pub aspect_mask: u32,
    pub color_attachment: u32,
    pub value: [u32; 4],
}

/// One `VkClearRect`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct ClearRect {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
    pub base_array_layer: u32,
    pub layer_count: u32,
}

const ASPECT_COLOR: u32 = 1;
const ASPECT_DEPTH: u32 = 2;
const ASPECT_STENCIL: u32 = 4;

impl CommandEncoder<'_> {
    /// vkCmdClearAttachments. Mirrors nvk_CmdClearAttachments (discard rectangles, which
    /// make NVK stash the window clip, are not modelled).
    pub fn clear_attachments(
        &mut self,
        attachments: &[ClearAttachment],
        rects: &[ClearRect],
    ) -> Recorded {
        let before = self.push.len();
        // USE_CLEAR_RECT.
        self.push
            .immd_or_mthd(SUBC_3D, class::SET_CLEAR_SURFACE_CONTROL, 1 << 4);
        let (mut depth, mut stencil) = (false, false);
        for a in attachments {
            if a.aspect_mask & ASPECT_DEPTH != 0 {
                self.push
                    .immd_or_mthd(SUBC_3D, class::SET_Z_CLEAR_VALUE, a.value[0]);
                depth = true;
            }
            if a.aspect_mask & ASPECT_STENCIL != 0 {
                self.push
                    .immd_or_mthd(SUBC_3D, class::SET_STENCIL_CLEAR_VALUE, a.value[1] & 0xff);
                stencil = true;
            }
        }
        for a in attachments {
            if a.aspect_mask != ASPECT_COLOR || a.color_attachment == u32::MAX {
                continue;
            }
            self.push
                .inc(SUBC_3D, class::SET_COLOR_CLEAR_VALUE, &a.value);
            self.clear_rects(Some(a.color_attachment), depth, stencil, rects);
            // Depth and stencil are cleared once.
            depth = false;
            stencil = false;
        }
        if depth || stencil {
            self.clear_rects(None, depth, stencil, rects);
        }
        self.recorded(before)
    }

    /// Mirrors emit_clear_rects: the rectangle, then `CLEAR` with the payload (and the
    /// layer count without a view mask).
    fn clear_rects(&mut self, color: Option<u32>, depth: bool, stencil: bool, rects: &[ClearRect]) {
        for r in rects {
            let x_max = (r.x as u32).wrapping_add(r.width);
            let y_max = (r.y as u32).wrapping_add(r.height);
            self.push.inc(
                SUBC_3D,
                class::SET_CLEAR_RECT_HORIZONTAL,
                &[
                    (r.x as u32 & 0xffff) | (x_max << 16),
                    (r.y as u32 & 0xffff) | (y_max << 16),
                ],
            );
            let rgba = if color.is_some() { 0xf << 2 } else { 0 };
            let payload = u32::from(depth)
                | (u32::from(stencil) << 1)
                | rgba
                | ((color.unwrap_or(0) & 0xf) << 6)
                | ((r.base_array_layer & 0xffff) << 10);
            let call = class::call_mme_macro(Macro::Clear.id());
            if self.view_mask() == 0 {
                self.push.inc_once(SUBC_3D, call, &[payload, r.layer_count]);
            } else {
                self.push.inc_once(SUBC_3D, call, &[payload]);
            }
        }
    }
}
