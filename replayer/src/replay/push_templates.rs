//! Template pushes of uniform buffers (`vkCmdPushDescriptorSetWithTemplateKHR`): where
//! each uniform buffer descriptor a template writes lies in the update's data and in
//! the pushed set, worked out once per template, pipeline layout and set.
//!
//! A GL program through Zink pushes its uniform buffers with one template before
//! nearly every draw, always the same few templates into the same layouts; only the
//! data (the buffers and their offsets) changes from push to push. NVK writes each
//! descriptor at its binding's place in the set layout (nvk_push_descriptor_set,
//! write_ubo_desc); the places depend on the template's entries and the set layout
//! alone, so they are kept until a template, set layout or pipeline layout is made.

use std::collections::HashMap;

use crate::device::templates::{Entry, RecordedRuns};
use crate::layouts::Layouts;

/// `VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER`.
const UNIFORM_BUFFER: i32 = 6;

/// Descriptors of one template entry a push reads at most.
const MAX_DESCRIPTORS_AN_ENTRY: u32 = 64;

/// One uniform buffer descriptor a template writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct UboSlot {
    /// The template entry it belongs to (its index in the template).
    entry: usize,
    /// Where its `VkDescriptorBufferInfo` starts in the update's data.
    data_at: usize,
    /// Its byte offset in the set (its binding's place, its element's stride).
    desc: u32,
}

/// Key of the places worked out: the template, the pipeline layout and the set.
type PlacesKey = (u64, u64, u32);

/// The descriptor update templates a trace made, and where their uniform buffers go.
#[derive(Default)]
pub(crate) struct PushTemplates {
    /// Every template's entries, by the trace's handle.
    entries: HashMap<u64, Vec<Entry>, foldhash::fast::RandomState>,
    /// The uniform buffer slots of each template pushed into each layout's set so far.
    places: HashMap<PlacesKey, Vec<UboSlot>, foldhash::fast::RandomState>,
    /// The layouts' generation the places were worked out against.
    layouts_generation: u64,
}

impl PushTemplates {
    /// vkCreateDescriptorUpdateTemplate: its entries (a handle made again replaces
    /// them).
    pub(crate) fn create(&mut self, template: u64, entries: Vec<Entry>) {
        self.entries.insert(template, entries);
        self.places.clear();
    }

    /// Template `template`'s entries, if the trace made it.
    pub(crate) fn entries(&self, template: u64) -> Option<&[Entry]> {
        self.entries.get(&template).map(Vec::as_slice)
    }

    /// The uniform buffers a template push names, each as its byte offset in the set
    /// and the `(buffer, offset, range)` of its `VkDescriptorBufferInfo` in the data
    /// (`ubo` makes each one what the caller keeps). A descriptor whose info reaches
    /// past the data ends its entry. Nothing when the trace holds no such template or
    /// layout. Mirrors the descriptors nvk_push_descriptor_set writes for them.
    pub(crate) fn ubos<T>(
        &mut self,
        (template, layout, set): PlacesKey,
        layouts: &Layouts,
        min_cbuf_alignment: u32,
        data: &RecordedRuns<'_>,
        mut ubo: impl FnMut(u32, u64, u64, u64) -> T,
    ) -> Vec<T> {
        if self.layouts_generation != layouts.generation() {
            self.places.clear();
            self.layouts_generation = layouts.generation();
        }
        let key = (template, layout, set);
        if !self.places.contains_key(&key) {
            let Some(slots) = self.slots(key, layouts, min_cbuf_alignment) else {
                return Vec::new();
            };
            self.places.insert(key, slots);
        }
        let Some(slots) = self.places.get(&key) else {
            return Vec::new();
        };
        let mut ubos = Vec::with_capacity(slots.len());
        let mut ended = None;
        for slot in slots {
            if ended == Some(slot.entry) {
                continue;
            }
            // The descriptor's VkDescriptorBufferInfo: buffer, offset, range.
            let Some([buffer, offset, range]) = data.u64s_at::<3>(slot.data_at) else {
                ended = Some(slot.entry);
                continue;
            };
            ubos.push(ubo(slot.desc, buffer, offset, range));
        }
        ubos
    }

    /// Where the uniform buffers of `template` go in `set` of pipeline layout
    /// `layout`: each entry of that type whose binding the set layout places, each of
    /// its descriptors (at most [`MAX_DESCRIPTORS_AN_ENTRY`]). `None` when the trace
    /// holds no such template or layout.
    fn slots(
        &self,
        (template, layout, set): PlacesKey,
        layouts: &Layouts,
        min_cbuf_alignment: u32,
    ) -> Option<Vec<UboSlot>> {
        let entries = self.entries.get(&template)?;
        let set_layout = layouts.set(layout, set)?;
        let mut slots = Vec::new();
        for (index, e) in entries.iter().enumerate() {
            if e.ty.as_raw() != UNIFORM_BUFFER {
                continue;
            }
            let Some((place, stride)) = set_layout.binding_place(e.binding, min_cbuf_alignment)
            else {
                continue;
            };
            for i in 0..e.count.min(MAX_DESCRIPTORS_AN_ENTRY) {
                let element = e.array_element.saturating_add(i);
                slots.push(UboSlot {
                    entry: index,
                    data_at: e.offset.saturating_add(e.stride.saturating_mul(i as usize)),
                    desc: place.saturating_add(stride.saturating_mul(element)),
                });
            }
        }
        Some(slots)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generated::decode::{
        CreateDescriptorSetLayout, DescriptorSetLayoutCreateInfoNested,
    };
    use crate::layouts::tests::binding;
    use ash::vk;
    use trace_format::generated::trace::VulkanParamT;
    use trace_format::generic_params::{self, ParamList};

    const SET_LAYOUT: u64 = 0x51;
    const PIPELINE_LAYOUT: u64 = 0x77;
    const TEMPLATE: u64 = 0x99;

    /// A set layout of `(binding, descriptor type, count)`s, made as the trace makes it.
    fn make_set_layout(layouts: &mut Layouts, bindings: &[(u32, u32, u32)]) {
        layouts.create_set_layout(&CreateDescriptorSetLayout {
            device: 1,
            create_info: Vec::new(),
            create_info_nested: vec![DescriptorSetLayoutCreateInfoNested {
                p_bindings: bindings
                    .iter()
                    .map(|&(number, ty, count)| binding(number, ty, count))
                    .collect(),
            }],
            allocator: Vec::new(),
            allocator_nested: Vec::new(),
            set_layout: vec![SET_LAYOUT],
        });
    }

    fn ubo_entry(binding: u32, count: u32, offset: usize) -> Entry {
        Entry {
            binding,
            array_element: 0,
            count,
            ty: vk::DescriptorType::UNIFORM_BUFFER,
            offset,
            stride: 24,
        }
    }

    /// The pushes' data: a `VkDescriptorBufferInfo` (buffer, offset, range) at each of
    /// `infos`' offsets, as the layer records it (one run each).
    fn data(infos: &[(usize, [u64; 3])]) -> VulkanParamT {
        let mut data = VulkanParamT::default();
        data.nested = Some(
            infos
                .iter()
                .map(|&(at, words)| {
                    let mut run = VulkanParamT::default();
                    run.value = at as u64;
                    run.bytes = Some(words.iter().flat_map(|w| w.to_le_bytes()).collect());
                    run
                })
                .collect(),
        );
        data
    }

    /// What a push of `data` names: (place in the set, buffer, offset, range) each.
    fn pushed(
        templates: &mut PushTemplates,
        layouts: &Layouts,
        data: &VulkanParamT,
    ) -> Vec<(u32, u64, u64, u64)> {
        let bytes = generic_params::packed(std::slice::from_ref(data));
        let params = ParamList::packed(&bytes).unwrap();
        let runs = RecordedRuns::of(params.get(0).unwrap()).unwrap();
        templates.ubos(
            (TEMPLATE, PIPELINE_LAYOUT, 0),
            layouts,
            64,
            &runs,
            |desc, buffer, offset, range| (desc, buffer, offset, range),
        )
    }

    #[test]
    fn each_uniform_buffer_goes_to_its_bindings_place_and_follows_a_layout_made_again() {
        let mut layouts = Layouts::default();
        // A sampler at binding 0 (4 bytes), uniform buffers at 1 (two) and 2.
        make_set_layout(&mut layouts, &[(0, 1, 1), (1, 6, 2), (2, 6, 1)]);
        layouts.create_pipeline_layout(PIPELINE_LAYOUT, vec![SET_LAYOUT], Vec::new());
        let mut templates = PushTemplates::default();
        templates.create(TEMPLATE, vec![ubo_entry(2, 1, 0), ubo_entry(1, 2, 100)]);
        let push = data(&[
            (0, [0xa, 0, 256]),
            (100, [0xb, 16, 64]),
            (124, [0xc, 32, u64::MAX]),
        ]);
        let expected = vec![
            (48, 0xa, 0, 256),
            (16, 0xb, 16, 64),
            (32, 0xc, 32, u64::MAX),
        ];
        assert_eq!(pushed(&mut templates, &layouts, &push), expected);
        // Asked again, the same (from the places kept).
        assert_eq!(pushed(&mut templates, &layouts, &push), expected);

        // The set layout made again under the same handle, binding 1 first: the places
        // follow it.
        make_set_layout(&mut layouts, &[(1, 6, 2), (2, 6, 1)]);
        assert_eq!(
            pushed(&mut templates, &layouts, &push),
            vec![(32, 0xa, 0, 256), (0, 0xb, 16, 64), (16, 0xc, 32, u64::MAX)]
        );
        // The template made again: one buffer.
        templates.create(TEMPLATE, vec![ubo_entry(1, 1, 100)]);
        assert_eq!(
            pushed(&mut templates, &layouts, &push),
            vec![(0, 0xb, 16, 64)]
        );
    }

    #[test]
    fn a_descriptor_past_the_data_ends_its_entry_only() {
        let mut layouts = Layouts::default();
        make_set_layout(&mut layouts, &[(0, 6, 3), (1, 6, 1)]);
        layouts.create_pipeline_layout(PIPELINE_LAYOUT, vec![SET_LAYOUT], Vec::new());
        let mut templates = PushTemplates::default();
        // Binding 0's three descriptors at 200, 224, 248 (the data ends at 248); binding
        // 1's at 0.
        templates.create(TEMPLATE, vec![ubo_entry(0, 3, 200), ubo_entry(1, 1, 0)]);
        let push = data(&[(200, [1, 2, 3]), (224, [4, 5, 6]), (0, [7, 8, 9])]);
        assert_eq!(
            pushed(&mut templates, &layouts, &push),
            vec![(0, 1, 2, 3), (16, 4, 5, 6), (48, 7, 8, 9)]
        );
        // A template or layout the trace does not hold names nothing.
        let unknown = PushTemplates::default().ubos(
            (TEMPLATE, PIPELINE_LAYOUT, 0),
            &layouts,
            64,
            &RecordedRuns::of(
                ParamList::packed(&generic_params::packed(&[push]))
                    .unwrap()
                    .get(0)
                    .unwrap(),
            )
            .unwrap(),
            |desc, _, _, _| desc,
        );
        assert!(unknown.is_empty());
    }
}
