//! Descriptor set layouts and pipeline layouts, as far as NVK's command stream depends
//! on them: which uniform buffers are dynamic (bound from the root table's dynamic
//! buffers, with their index there) or inline blocks (read from the set itself), and
//! how many dynamic buffers each set has (where the next set's start in the root
//! table). `vkCreateDescriptorSetLayout` is recorded generically and decoded by the
//! generated `decode_setup`; `vkCreatePipelineLayout` is a typed record.

use crate::handles::HandleMap;
use std::hash::{Hash, Hasher};

use driver::nvk::shader::UniformBufferKind;

use crate::generated::decode::CreateDescriptorSetLayout;
use smallvec::SmallVec;

/// `VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC`.
const UNIFORM_BUFFER_DYNAMIC: u32 = 8;
/// `VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC`.
const STORAGE_BUFFER_DYNAMIC: u32 = 9;
/// `VK_DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK`.
const INLINE_UNIFORM_BLOCK: u32 = 1_000_138_000;

/// The most bindings a set layout is read with (NVK's limits are far below).
const MAX_BINDINGS: usize = 4096;

/// One set layout: its bindings' types and counts, by binding number.
/// One binding's descriptors in a set: where they start, their stride, and where the
/// set's descriptor bytes end after them.
struct Place {
    binding: u32,
    offset: u32,
    stride: u32,
    end: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetLayout {
    /// `(binding, descriptor type, descriptor count)`, sorted by binding.
    bindings: Vec<(u32, u32, u32)>,
}

impl SetLayout {
    fn is_dynamic(ty: u32) -> bool {
        matches!(ty, UNIFORM_BUFFER_DYNAMIC | STORAGE_BUFFER_DYNAMIC)
    }

    /// The bytes of descriptors a set of this layout holds in its pool, before the
    /// device's alignment: each binding's descriptors at their stride, each binding
    /// aligned to its descriptor's alignment (nvk_CreateDescriptorSetLayout's
    /// `non_variable_descriptor_buffer_size`, with the strides of
    /// nvk_descriptor_stride_align_for_type in NVK 25.0). `min_cbuf_alignment` aligns
    /// inline uniform blocks.
    pub fn descriptor_bytes(&self, min_cbuf_alignment: u32) -> u32 {
        self.places(min_cbuf_alignment)
            .last()
            .map_or(0, |place| place.end)
    }

    /// Where binding `binding`'s descriptors start in a set of this layout, and their
    /// stride (nvk_descriptor_set_binding_layout's `offset` and `stride`).
    pub fn binding_place(&self, binding: u32, min_cbuf_alignment: u32) -> Option<(u32, u32)> {
        self.places(min_cbuf_alignment)
            .find(|place| place.binding == binding)
            .map(|place| (place.offset, place.stride))
    }

    /// Each binding that takes descriptor bytes, in the layout's order, with its offset
    /// and stride and where the set's bytes end after it, as
    /// nvk_CreateDescriptorSetLayout lays them out.
    fn places(&self, min_cbuf_alignment: u32) -> impl Iterator<Item = Place> + '_ {
        let mut size = 0u32;
        self.bindings
            .iter()
            .filter_map(move |&(binding, ty, count)| {
                if count == 0 {
                    return None;
                }
                let (stride, align): (u32, u32) = match ty {
                    // Sampler, combined image sampler, sampled image, storage image,
                    // texel buffers, input attachment: a 4-byte image (and sampler) index.
                    0..=5 | 10 => (4, 4),
                    // Uniform and storage buffers: an address, a size and a zero word.
                    6 | 7 => (16, 16),
                    // Dynamic buffers live in the root table.
                    UNIFORM_BUFFER_DYNAMIC | STORAGE_BUFFER_DYNAMIC => (0, 0),
                    // Inline uniform block: its count is bytes.
                    INLINE_UNIFORM_BLOCK => (1, min_cbuf_alignment.max(1)),
                    // Mutable and other types: the largest descriptor.
                    _ => (16, 16),
                };
                if stride == 0 {
                    return None;
                }
                let offset = size.div_ceil(align).saturating_mul(align);
                size = offset.saturating_add(stride.saturating_mul(count));
                Some(Place {
                    binding,
                    offset,
                    stride,
                    end: size,
                })
            })
    }

    /// Binding `binding`'s first dynamic buffer among the set's (NVK's
    /// `dynamic_buffer_index`: bindings in number order) and its kind, when the binding
    /// holds dynamic buffers.
    pub fn dynamic_index(&self, binding: u32) -> Option<(u32, DynamicKind)> {
        let mut index = 0u32;
        for &(b, ty, count) in &self.bindings {
            if b == binding {
                return DynamicKind::of(ty).map(|kind| (index, kind));
            }
            if Self::is_dynamic(ty) {
                index = index.saturating_add(count);
            }
        }
        None
    }

    /// The kind of each of the set's dynamic buffers, in their order (NVK's
    /// `dynamic_ubos` bits).
    pub fn dynamic_kinds(&self) -> impl Iterator<Item = DynamicKind> + '_ {
        self.bindings
            .iter()
            .filter_map(|&(_, ty, count)| Some((DynamicKind::of(ty)?, count as usize)))
            .flat_map(|(kind, count)| std::iter::repeat_n(kind, count))
    }

    /// Dynamic buffers the set holds (`dynamic_buffer_count`).
    pub fn dynamic_buffers(&self) -> u32 {
        self.bindings
            .iter()
            .filter(|(_, ty, _)| Self::is_dynamic(*ty))
            .fold(0u32, |n, (_, _, count)| n.saturating_add(*count))
    }

    /// How a uniform buffer at `binding` is bound: dynamic ones with their index among
    /// the set's dynamic buffers (NVK's `dynamic_buffer_index`: bindings in number
    /// order), inline blocks from the set, the others through their descriptor at its
    /// place in the set (laid out with `min_cbuf_alignment`).
    pub fn uniform_buffer(&self, binding: u32, min_cbuf_alignment: u32) -> UniformBufferKind {
        let Some(&(_, ty, _)) = self.bindings.iter().find(|(b, _, _)| *b == binding) else {
            return UniformBufferKind::Descriptor;
        };
        match (ty, self.dynamic_index(binding)) {
            (_, Some((index, DynamicKind::Uniform))) => UniformBufferKind::Dynamic { index },
            (INLINE_UNIFORM_BLOCK, _) => UniformBufferKind::Inline,
            _ => self
                .binding_place(binding, min_cbuf_alignment)
                .map_or(UniformBufferKind::Descriptor, |(offset, stride)| {
                    UniformBufferKind::Placed { offset, stride }
                }),
        }
    }
}

/// What a dynamic buffer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DynamicKind {
    /// `VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC`.
    Uniform,
    /// `VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC`.
    Storage,
}

impl DynamicKind {
    /// The kind of a binding of descriptor type `ty`, if dynamic.
    fn of(ty: u32) -> Option<DynamicKind> {
        match ty {
            UNIFORM_BUFFER_DYNAMIC => Some(DynamicKind::Uniform),
            STORAGE_BUFFER_DYNAMIC => Some(DynamicKind::Storage),
            _ => None,
        }
    }
}

/// The layouts the trace created.
#[derive(Debug, Default)]
pub struct Layouts {
    sets: HandleMap<SetLayout>,
    pipelines: HandleMap<Vec<u64>>,
    /// Each pipeline layout's push constant ranges (stage flags, offset, size), in the
    /// order the program gave them.
    push_ranges: HandleMap<Vec<(u32, u32, u32)>>,
    /// Layouts made so far: what was worked out from them holds while it is unchanged.
    generation: u64,
}

impl Layouts {
    /// vkCreateDescriptorSetLayout, decoded.
    pub fn create_set_layout(&mut self, c: &CreateDescriptorSetLayout) {
        let Some(&handle) = c.set_layout.first() else {
            return;
        };
        let mut bindings: Vec<(u32, u32, u32)> = c
            .create_info_nested
            .first()
            .map(|n| {
                n.p_bindings
                    .iter()
                    .take(MAX_BINDINGS)
                    .map(|b| (b.binding, b.descriptor_type, b.descriptor_count))
                    .collect()
            })
            .unwrap_or_default();
        bindings.sort_unstable();
        self.sets.insert(handle, SetLayout { bindings });
        self.generation += 1;
    }

    /// vkCreatePipelineLayout: its set layouts, set by set, and its push constant
    /// ranges (stage flags, offset, size) in the order given.
    pub fn create_pipeline_layout(
        &mut self,
        handle: u64,
        set_layouts: Vec<u64>,
        push_ranges: Vec<(u32, u32, u32)>,
    ) {
        self.pipelines.insert(handle, set_layouts);
        self.push_ranges.insert(handle, push_ranges);
        self.generation += 1;
    }

    /// How many layouts have been made: what was worked out from the layouts while this
    /// was the same still holds.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// What in pipeline layout `layout` a shader's compile depends on, as a hash: its
    /// set layouts' bindings and its push constant ranges, as
    /// `vk_graphics_pipeline_compile_shaders` hashes the set layouts' BLAKE3s and the
    /// layout's `push_ranges` into `layout_blake3` (two layouts alike hash alike; one
    /// the trace does not hold hashes as no sets and no ranges).
    pub fn content_hash(&self, layout: u64) -> u64 {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for set in self.pipelines.get(&layout).into_iter().flatten() {
            self.sets.get(set).map(|l| &l.bindings).hash(&mut hasher);
        }
        self.push_ranges.get(&layout).hash(&mut hasher);
        hasher.finish()
    }

    /// Set layout `handle`, if the trace holds it.
    pub fn set_layout(&self, handle: u64) -> Option<&SetLayout> {
        self.sets.get(&handle)
    }

    /// Set `set`'s layout in pipeline layout `layout`, if the trace holds both.
    pub fn set(&self, layout: u64, set: u32) -> Option<&SetLayout> {
        let handle = *self.pipelines.get(&layout)?.get(set as usize)?;
        self.sets.get(&handle)
    }

    /// The descriptor bytes of each of `count` sets from `first`, in pipeline layout
    /// `layout` ([`SetLayout::descriptor_bytes`]); `None` when the trace does not hold
    /// the layouts.
    pub fn descriptor_bytes(
        &self,
        layout: u64,
        first: u32,
        count: usize,
        min_cbuf_alignment: u32,
    ) -> Option<SmallVec<[u32; 4]>> {
        let sets = self.pipelines.get(&layout)?;
        (0..count)
            .map(|i| {
                let handle = sets.get(first as usize + i)?;
                Some(self.sets.get(handle)?.descriptor_bytes(min_cbuf_alignment))
            })
            .collect()
    }

    /// The dynamic buffers of each of `count` sets from `first`, in pipeline layout
    /// `layout`; `None` when the trace does not hold the layouts.
    pub fn dynamic_buffers(
        &self,
        layout: u64,
        first: u32,
        count: usize,
    ) -> Option<SmallVec<[u32; 4]>> {
        let sets = self.pipelines.get(&layout)?;
        let mut counts = SmallVec::with_capacity(count);
        for i in 0..count {
            let handle = *sets.get(first as usize + i)?;
            counts.push(self.sets.get(&handle)?.dynamic_buffers());
        }
        Some(counts)
    }
}

/// What binding sets of a pipeline layout takes from its set layouts: each set's dynamic
/// buffers and descriptor bytes ([`Layouts::dynamic_buffers`],
/// [`Layouts::descriptor_bytes`]); `None` where the trace does not hold the layouts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BoundSets {
    /// Each set's dynamic buffers.
    pub dynamic_counts: Option<SmallVec<[u32; 4]>>,
    /// Each set's descriptor bytes, before the device's alignment.
    pub descriptor_bytes: Option<SmallVec<[u32; 4]>>,
}

/// The [`BoundSets`] of the last bind, kept while the layouts stay as they were: a
/// program binds sets of one pipeline layout draw after draw (the storm's 10,000 a
/// frame), and working them out again takes two table lookups and a walk of each set
/// layout's bindings a bind.
#[derive(Debug, Default)]
pub struct BoundSetsMemo {
    /// The layouts' generation, the pipeline layout, the first set, the count and the
    /// alignment the sizes were worked out for.
    key: Option<(u64, u64, u32, usize, u32)>,
    sets: BoundSets,
}

impl BoundSetsMemo {
    /// The [`BoundSets`] of `count` sets from `first` in pipeline layout `layout`.
    pub fn get(
        &mut self,
        layouts: &Layouts,
        layout: u64,
        first: u32,
        count: usize,
        min_cbuf_alignment: u32,
    ) -> &BoundSets {
        let key = (
            layouts.generation(),
            layout,
            first,
            count,
            min_cbuf_alignment,
        );
        if self.key != Some(key) {
            self.sets = BoundSets {
                dynamic_counts: layouts.dynamic_buffers(layout, first, count),
                descriptor_bytes: layouts.descriptor_bytes(
                    layout,
                    first,
                    count,
                    min_cbuf_alignment,
                ),
            };
            self.key = Some(key);
        }
        &self.sets
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::generated::decode::{
        DescriptorSetLayoutBinding, DescriptorSetLayoutCreateInfoNested,
    };

    /// A layout binding of `descriptor_count` descriptors of `descriptor_type`, seen by
    /// every stage.
    pub(crate) fn binding(
        binding: u32,
        descriptor_type: u32,
        descriptor_count: u32,
    ) -> DescriptorSetLayoutBinding {
        DescriptorSetLayoutBinding {
            binding,
            descriptor_type,
            descriptor_count,
            stage_flags: 0x1f,
            p_immutable_samplers: 0,
        }
    }

    /// Chromium's Skia makes pipeline layouts of the same set layouts with push ranges
    /// of 80 and 88 bytes: NVK compiles a shader for each (the push ranges are hashed
    /// into the layout's part of the key), so they must not hash alike.
    #[test]
    fn layouts_differing_only_in_push_ranges_hash_apart() {
        let mut layouts = Layouts::default();
        layouts.create_set_layout(&CreateDescriptorSetLayout {
            device: 1,
            create_info: Vec::new(),
            create_info_nested: vec![DescriptorSetLayoutCreateInfoNested {
                p_bindings: vec![binding(0, 6, 1)],
            }],
            allocator: Vec::new(),
            allocator_nested: Vec::new(),
            set_layout: vec![0x51],
        });
        layouts.create_pipeline_layout(0x70, vec![0x51], vec![(0x11, 0, 88)]);
        layouts.create_pipeline_layout(0x71, vec![0x51], vec![(0x11, 0, 80)]);
        layouts.create_pipeline_layout(0x72, vec![0x51], vec![(0x11, 0, 88)]);
        assert_ne!(layouts.content_hash(0x70), layouts.content_hash(0x71));
        assert_eq!(layouts.content_hash(0x70), layouts.content_hash(0x72));
    }

    #[test]
    fn dynamic_buffers_are_counted_and_indexed_in_binding_order() {
        let mut layouts = Layouts::default();
        let create = CreateDescriptorSetLayout {
            device: 1,
            create_info: Vec::new(),
            // Out of order, as an application may list them.
            create_info_nested: vec![DescriptorSetLayoutCreateInfoNested {
                p_bindings: vec![
                    binding(3, UNIFORM_BUFFER_DYNAMIC, 1),
                    binding(0, STORAGE_BUFFER_DYNAMIC, 2),
                    binding(1, 6, 1),
                    binding(2, INLINE_UNIFORM_BLOCK, 64),
                ],
            }],
            allocator: Vec::new(),
            allocator_nested: Vec::new(),
            set_layout: vec![0x51],
        };
        layouts.create_set_layout(&create);
        layouts.create_pipeline_layout(0x77, vec![0x51, 0x51], Vec::new());
        let set = layouts.set(0x77, 1).unwrap();
        assert_eq!(set.dynamic_buffers(), 3);
        assert_eq!(
            set.uniform_buffer(3, 64),
            UniformBufferKind::Dynamic { index: 2 }
        );
        // Binding 1's descriptor is the first to take bytes in the set (dynamic
        // buffers live in the root table).
        assert_eq!(
            set.uniform_buffer(1, 64),
            UniformBufferKind::Placed {
                offset: 0,
                stride: 16
            }
        );
        assert_eq!(set.uniform_buffer(2, 64), UniformBufferKind::Inline);
        assert_eq!(
            set.descriptor_bytes(64),
            128,
            "16, then 64 inline bytes at 64"
        );
        assert_eq!(
            layouts.dynamic_buffers(0x77, 0, 2).as_deref(),
            Some(&[3, 3][..])
        );
        // A layout or set the trace does not hold: unknown.
        assert_eq!(layouts.dynamic_buffers(0x77, 1, 2), None);
        assert_eq!(layouts.dynamic_buffers(0x99, 0, 1), None);
    }
}
