//! Vertex input.

use super::{Dirty, DynamicState, StateBit};
use crate::class;
use crate::nvk::Macro;
use crate::push::{PushBuffer, SUBC_3D};

/// A `SET_VERTEX_ATTRIBUTE_A` word: the stream and offset as given; the component
/// widths and numerical type come from NVK's format table (`nvk_get_va_format`), which
/// this model does not carry: a 32-bit float RGBA layout stands in for every format.
/// Every real format has non-zero widths, so the word never fits an immediate, as
/// here: the method count and size are NVK's.
fn attribute_word(binding: u32, offset: u32) -> u32 {
    const WIDTHS_R32_G32_B32_A32: u32 = 0x01;
    const TYPE_FLOAT: u32 = 0x7;
    (binding & 0x1f)
        | ((offset & 0x3fff) << 7)
        | (WIDTHS_R32_G32_B32_A32 << 21)
        | (TYPE_FLOAT << 27)
}

/// Mirrors nvk_flush_vi_state: the enabled streams through `SET_VB_ENABLES`, each
/// attribute's format and each binding's instancing and divisor, each stride through
/// `SET_VB_STRIDE`.
pub(super) fn flush_vi_state(p: &mut PushBuffer, d: Dirty, s: &DynamicState) {
    let vi = &s.vertex_input;
    let call = |p: &mut PushBuffer, m: Macro, data: u32| {
        p.inc_once(SUBC_3D, class::call_mme_macro(m.id()), &[data]);
    };
    if d.has(StateBit::ViBindingsValid) {
        call(p, Macro::SetVbEnables, vi.bindings_valid());
    }
    if d.any(&[StateBit::Vi, StateBit::ViBindingsValid]) {
        for a in &vi.attributes {
            let mthd = class::SET_VERTEX_ATTRIBUTE_A + 4 * (a.location.min(31) as u16);
            p.immd_or_mthd(SUBC_3D, mthd, attribute_word(a.binding, a.offset));
        }
        for b in &vi.bindings {
            let i = b.binding.min(31) as u16;
            p.immd_or_mthd(
                SUBC_3D,
                class::SET_VERTEX_STREAM_INSTANCE_A + 4 * i,
                u32::from(b.input_rate == 1),
            );
            p.immd_or_mthd(
                SUBC_3D,
                class::SET_VERTEX_STREAM_A_FREQUENCY + 16 * i,
                b.divisor,
            );
        }
    }
    if d.any(&[StateBit::ViBindingsValid, StateBit::ViBindingStrides]) {
        for b in &vi.bindings {
            call(
                p,
                Macro::SetVbStride,
                ((b.binding & 0x1f) << 16) | (b.stride & 0xfff),
            );
        }
    }
}
