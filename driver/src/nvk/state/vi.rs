//! Vertex input.

use super::*;
use crate::class;
use crate::nvk::Macro;
use crate::push::{PushBuffer, SUBC_3D};

/// `SET_VERTEX_ATTRIBUTE_A.COMPONENT_BIT_WIDTHS` values (`clc597.h`).
mod widths {
    pub const R32_G32_B32_A32: u32 = 0x01;
    pub const R32_G32_B32: u32 = 0x02;
    pub const R16_G16_B16_A16: u32 = 0x03;
    pub const R32_G32: u32 = 0x04;
    pub const R16_G16_B16: u32 = 0x05;
    pub const R8_G8_B8_A8: u32 = 0x0a;
    pub const R16_G16: u32 = 0x0f;
    pub const R32: u32 = 0x12;
    pub const R8_G8_B8: u32 = 0x13;
    pub const R8_G8: u32 = 0x18;
    pub const R16: u32 = 0x1b;
    pub const R8: u32 = 0x1d;
    pub const A2B10G10R10: u32 = 0x30;
    pub const B10G11R11: u32 = 0x31;
}

/// `SET_VERTEX_ATTRIBUTE_A.NUMERICAL_TYPE` values, in the order of Vulkan's UNORM,
/// SNORM, USCALED, SSCALED, UINT, SINT formats (`NUM_UNORM` 2, `NUM_SNORM` 1, ...).
const TYPES_UNORM_TO_SINT: [u32; 6] = [2, 1, 5, 6, 4, 3];
/// `NUM_FLOAT`.
const TYPE_FLOAT: u32 = 7;

/// A vertex format's component widths, R/B swap and numerical type, as NVK's
/// `nvk_get_va_format` table gives them, by `VkFormat` number; `None` for a format
/// that table lacks.
pub fn va_format(format: u32) -> Option<(u32, bool, u32)> {
    use widths::*;
    // Runs of formats that share widths: (first VkFormat, widths, swap R and B, count
    // of UNORM..SINT variants, then whether an SFLOAT follows).
    let normalized: [(u32, u32, bool, bool); 13] = [
        (9, R8, false, false),           // R8_UNORM..R8_SINT
        (16, R8_G8, false, false),       // R8G8_*
        (23, R8_G8_B8, false, false),    // R8G8B8_*
        (30, R8_G8_B8, true, false),     // B8G8R8_*
        (37, R8_G8_B8_A8, false, false), // R8G8B8A8_*
        (44, R8_G8_B8_A8, true, false),  // B8G8R8A8_*
        (51, R8_G8_B8_A8, false, false), // A8B8G8R8_*_PACK32
        (58, A2B10G10R10, true, false),  // A2R10G10B10_*_PACK32
        (64, A2B10G10R10, false, false), // A2B10G10R10_*_PACK32
        (70, R16, false, true),          // R16_*, R16_SFLOAT
        (77, R16_G16, false, true),
        (84, R16_G16_B16, false, true),
        (91, R16_G16_B16_A16, false, true),
    ];
    for (first, w, swap, float) in normalized {
        let i = format.checked_sub(first)? as usize;
        if i < 6 {
            return Some((w, swap, TYPES_UNORM_TO_SINT[i]));
        }
        if float && i == 6 {
            return Some((w, swap, TYPE_FLOAT));
        }
        // The 8-bit runs have an SRGB variant the table lacks.
        if i < 7 {
            return None;
        }
    }
    // R32.. R32G32B32A32: UINT, SINT, SFLOAT each.
    if (98..=109).contains(&format) {
        let w = [R32, R32_G32, R32_G32_B32, R32_G32_B32_A32][((format - 98) / 3) as usize];
        let t = [4, 3, TYPE_FLOAT][((format - 98) % 3) as usize];
        return Some((w, false, t));
    }
    (format == 122).then_some((B10G11R11, false, TYPE_FLOAT))
}

/// A `SET_VERTEX_ATTRIBUTE_A` word: the stream, the offset and the format's widths,
/// type and R/B swap ([`va_format`]); a format NVK's table lacks takes 32-bit float
/// RGBA. Every format's word is too wide for an immediate, as NVK's is.
fn attribute_word(binding: u32, offset: u32, format: u32) -> u32 {
    let (w, swap, t) = va_format(format).unwrap_or((widths::R32_G32_B32_A32, false, TYPE_FLOAT));
    (binding & 0x1f) | ((offset & 0x3fff) << 7) | (w << 21) | (t << 27) | (u32::from(swap) << 31)
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
            p.immd_or_mthd(SUBC_3D, mthd, attribute_word(a.binding, a.offset, a.format));
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

/// The vertex input's dynamic state: the `vkCmdSet*` calls and the pipeline's
/// static values land here before a flush pushes them.
impl GraphicsState {
    /// vkCmdSetVertexInputEXT: the bindings and attributes replace the current ones.
    /// Mirrors vk_common_CmdSetVertexInputEXT (Mesa 25.0.7): the valid bindings are
    /// dirty when they changed, the attributes and bindings and the strides always.
    pub fn set_vertex_input(&mut self, bindings: &[VertexBinding], attributes: &[VertexAttribute]) {
        self.replace_vertex_input(bindings, attributes);
        self.marks.mark(StateBit::Vi);
        self.marks.mark(StateBit::ViBindingStrides);
    }

    /// A pipeline's vertex input: each part dirty when it changed, as Mesa's
    /// vk_dynamic_graphics_state_copy makes it.
    pub(super) fn set_vertex_input_if_changed(
        &mut self,
        bindings: &[VertexBinding],
        attributes: &[VertexAttribute],
    ) {
        self.replace_vertex_input(bindings, attributes);
    }

    /// Replaces the vertex input, marking what changed dirty (Mesa's `SET_DYN_*` for
    /// each part). Compared where it is held, and copied into the held vectors only
    /// when it changed: Zink sets the vertex input before nearly every draw, mostly
    /// to what it was.
    fn replace_vertex_input(&mut self, bindings: &[VertexBinding], attributes: &[VertexAttribute]) {
        // Mesa holds them by binding and by location (`vk_vertex_input_state`), so
        // they are compared and flushed in that order whatever order the program gave
        // them in (bgfx gives its attributes out of location order).
        let (sorted_bindings, sorted_attributes);
        let bindings = if bindings.is_sorted_by_key(|b| b.binding) {
            bindings
        } else {
            sorted_bindings = sorted_by_key(bindings, |b| b.binding);
            &sorted_bindings
        };
        let attributes = if attributes.is_sorted_by_key(|a| a.location) {
            attributes
        } else {
            sorted_attributes = sorted_by_key(attributes, |a| a.location);
            &sorted_attributes
        };
        let old = &self.dynamic.vertex_input;
        let valid_changed = old.bindings_valid() != super::bindings_valid(bindings);
        let strides_changed = !old
            .bindings
            .iter()
            .map(|b| b.stride)
            .eq(bindings.iter().map(|b| b.stride));
        self.marks.mark_if(StateBit::ViBindingsValid, valid_changed);
        self.marks
            .mark_if(StateBit::ViBindingStrides, strides_changed);
        let changed = old.bindings != bindings || old.attributes != attributes;
        if changed || !self.marks.set.has(StateBit::Vi) {
            let held = &mut self.dynamic.vertex_input;
            held.bindings.clear();
            held.bindings.extend_from_slice(bindings);
            held.attributes.clear();
            held.attributes.extend_from_slice(attributes);
            self.marks.mark(StateBit::Vi);
        }
    }
}

/// `items` in ascending order of `key`.
fn sorted_by_key<T: Clone>(items: &[T], key: impl Fn(&T) -> u32) -> Vec<T> {
    let mut sorted = items.to_vec();
    sorted.sort_by_key(key);
    sorted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertex_formats_take_nvk_s_widths_and_types() {
        // VK_FORMAT_R32G32B32_SFLOAT, R8G8B8A8_UNORM, B8G8R8A8_UINT, R16G16_SFLOAT,
        // R8_SRGB (not in NVK's table), A2R10G10B10_SNORM_PACK32.
        assert_eq!(
            va_format(106),
            Some((widths::R32_G32_B32, false, TYPE_FLOAT))
        );
        assert_eq!(va_format(37), Some((widths::R8_G8_B8_A8, false, 2)));
        assert_eq!(va_format(48), Some((widths::R8_G8_B8_A8, true, 4)));
        assert_eq!(va_format(83), Some((widths::R16_G16, false, TYPE_FLOAT)));
        assert_eq!(va_format(15), None);
        assert_eq!(va_format(59), Some((widths::A2B10G10R10, true, 1)));
        assert_eq!(va_format(100), Some((widths::R32, false, TYPE_FLOAT)));
        // gears' vec3 position at offset 0 of stream 0, as NVK pushes it.
        assert_eq!(attribute_word(0, 0, 106), 0x3840_0000);
    }
}
