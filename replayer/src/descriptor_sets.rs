//! What the model keeps of each descriptor set: its layout, and the descriptors of its
//! dynamic buffers, which NVK keeps on the CPU (`nvk_descriptor_set::dynamic_buffers`)
//! and copies into the root table when the set is bound. The other descriptors live in
//! the set's memory, which the GPU reads and the command stream does not carry.
//!
//! A set is allocated with its dynamic buffers zeroed (nvk_descriptor_set_create);
//! `vkUpdateDescriptorSets` writes them (write_dynamic_ubo_desc, write_dynamic_ssbo_desc)
//! and copies them between sets (nvk_UpdateDescriptorSets' copies), as
//! `vkUpdateDescriptorSetWithTemplate` writes them (nvk_descriptor_set_write_template).
//!
//! A set lives until `vkFreeDescriptorSets` frees it or its pool is reset
//! (`vkResetDescriptorPool`) or destroyed: then the model lets it go, as NVK frees it
//! (nvk_descriptor_set_destroy, nvk_reset_descriptor_pool), so a program that allocates
//! its sets anew each frame holds as many as it has live, however long its trace.
//!
//! Each set has an address for the root table (nvk_descriptor_set_addr). NVK's comes from
//! its pool's heap and may be a freed set's again; `verify` holds the model to one object
//! an address (see docs/verify.md), so the model's never repeats: the set's handle, with
//! the count of frees before its allocation in the top 16 bits. A handle a driver hands
//! out again (only after a free) so names a new address, and a handle never seen before
//! (an import's ids) needs nothing remembered once its set is gone.

use driver::nvk::{BufferDescriptor, Device};
use smallvec::SmallVec;

use crate::device::templates::{Entry, RecordedRuns};
use crate::generated::decode::UpdateDescriptorSets;
use crate::handles::HandleMap;
use crate::layouts::{DynamicKind, Layouts, SetLayout};
use crate::objects::Objects;

/// One set: the pool and layout it was allocated with, its address and its dynamic
/// buffers' descriptors.
#[derive(Clone, Debug, Default)]
struct Set {
    pool: u64,
    layout: u64,
    address: u64,
    dynamic: SmallVec<[BufferDescriptor; 2]>,
}

/// Every live descriptor set the trace allocated, by handle.
#[derive(Debug, Default)]
pub struct DescriptorSets {
    sets: HandleMap<Set>,
    /// Frees so far (each call, reset or destruction that freed a set counts once):
    /// what sets a new set's address apart from a freed one's of the same handle.
    frees: u64,
}

impl DescriptorSets {
    /// vkAllocateDescriptorSets: each set anew from `pool`, of its layout (a set the
    /// trace gives no layout for has none), its dynamic buffers zero. A handle still
    /// live is taken to have been freed first (a free the trace does not hold).
    pub fn allocate(&mut self, pool: u64, sets: &[u64], layouts: &[u64], known: &Layouts) {
        let layouts = layouts.iter().copied().chain(std::iter::repeat(0));
        for (&set, layout) in sets.iter().zip(layouts).filter(|(s, _)| **s != 0) {
            if self.sets.contains_key(&set) {
                self.frees += 1;
            }
            let count = known
                .set_layout(layout)
                .map_or(0, SetLayout::dynamic_buffers);
            let dynamic = std::iter::repeat_n(BufferDescriptor::default(), count as usize);
            let address = set ^ ((self.frees & 0xffff) << 48);
            self.sets.insert(
                set,
                Set {
                    pool,
                    layout,
                    address,
                    dynamic: dynamic.collect(),
                },
            );
        }
    }

    /// vkFreeDescriptorSets: `sets` go.
    pub fn free(&mut self, sets: &[u64]) {
        let before = self.sets.len();
        for set in sets {
            self.sets.remove(set);
        }
        self.count_free(before);
    }

    /// vkResetDescriptorPool, vkDestroyDescriptorPool: every set allocated from `pool`
    /// goes.
    pub fn free_pool(&mut self, pool: u64) {
        let before = self.sets.len();
        self.sets.retain(|_, set| set.pool != pool);
        self.count_free(before);
    }

    /// Counts a free that let sets go, of the `before` that lived.
    fn count_free(&mut self, before: usize) {
        if self.sets.len() < before {
            self.frees += 1;
        }
    }

    /// The address the model gives set `set` (NVK's nvk_descriptor_set_addr): see the
    /// module's doc. A set the trace did not allocate is at its handle.
    pub fn address(&self, set: u64) -> u64 {
        // Before the first free every set is at its handle: no look-up (a draw storm
        // binds a set a draw and frees none).
        if self.frees == 0 {
            return set;
        }
        self.sets.get(&set).map_or(set, |s| s.address)
    }

    /// vkUpdateDescriptorSets: the writes and copies of dynamic buffers. Mirrors
    /// nvk_UpdateDescriptorSets (each write's elements from its binding's first dynamic
    /// buffer on, as NVK indexes them; a copy of a dynamic binding copies that many).
    pub fn update(
        &mut self,
        update: &UpdateDescriptorSets,
        layouts: &Layouts,
        objects: &Objects,
        device: &Device,
    ) {
        for (write, nested) in update
            .descriptor_writes
            .iter()
            .zip(&update.descriptor_writes_nested)
        {
            let Some(first) = self.dynamic_index(write.dst_set, write.dst_binding, layouts) else {
                continue;
            };
            let infos = nested
                .p_buffer_info
                .iter()
                .take(write.descriptor_count as usize);
            for (j, info) in infos.enumerate() {
                let index = first.0 as usize + write.dst_array_element as usize + j;
                let named = (info.buffer, info.offset, info.range);
                self.write(write.dst_set, index, first.1, named, objects, device);
            }
        }
        for copy in &update.descriptor_copies {
            let (Some(src), Some(dst)) = (
                self.dynamic_index(copy.src_set, copy.src_binding, layouts),
                self.dynamic_index(copy.dst_set, copy.dst_binding, layouts),
            ) else {
                continue;
            };
            let Some(from) = self.sets.get(&copy.src_set) else {
                continue;
            };
            let start = src.0 as usize + copy.src_array_element as usize;
            let copied: SmallVec<[BufferDescriptor; 4]> = from
                .dynamic
                .iter()
                .skip(start)
                .take(copy.descriptor_count as usize)
                .copied()
                .collect();
            if let Some(to) = self.sets.get_mut(&copy.dst_set) {
                let start = dst.0 as usize + copy.dst_array_element as usize;
                for (slot, d) in to.dynamic.iter_mut().skip(start).zip(copied) {
                    *slot = d;
                }
            }
        }
    }

    /// vkUpdateDescriptorSetWithTemplate: the dynamic buffers its entries write, each
    /// descriptor's `VkDescriptorBufferInfo` read from the update's data where the
    /// entry places it (an entry ends at a descriptor whose data was not recorded).
    /// Mirrors nvk_descriptor_set_write_template for dynamic buffers.
    pub fn update_with_template(
        &mut self,
        set: u64,
        entries: &[Entry],
        data: &RecordedRuns<'_>,
        (layouts, objects, device): (&Layouts, &Objects, &Device),
    ) {
        for entry in entries {
            let Some(first) = self.dynamic_index(set, entry.binding, layouts) else {
                continue;
            };
            for i in 0..entry.count as usize {
                let at = entry.offset.saturating_add(entry.stride.saturating_mul(i));
                let Some([buffer, offset, range]) = data.u64s_at::<3>(at) else {
                    break;
                };
                let index = first.0 as usize + entry.array_element as usize + i;
                self.write(
                    set,
                    index,
                    first.1,
                    (buffer, offset, range),
                    objects,
                    device,
                );
            }
        }
    }

    /// Writes dynamic buffer `index` of `set`, of `kind`, for `(buffer, offset,
    /// range)` as a `VkDescriptorBufferInfo` names it ([`Objects::buffer_info_range`]).
    fn write(
        &mut self,
        set: u64,
        index: usize,
        kind: DynamicKind,
        (buffer, offset, range): (u64, u64, u64),
        objects: &Objects,
        device: &Device,
    ) {
        let Some(slot) = self
            .sets
            .get_mut(&set)
            .and_then(|s| s.dynamic.get_mut(index))
        else {
            return;
        };
        let (addr, range) = objects.buffer_info_range(buffer, offset, range);
        let range = u64::from(range);
        *slot = match kind {
            DynamicKind::Uniform => device.uniform_buffer_descriptor(addr, range),
            DynamicKind::Storage => device.storage_buffer_descriptor(addr, range),
        };
    }

    /// Binding `binding` of set `set`'s first dynamic buffer and its kind, when the
    /// binding holds dynamic buffers.
    fn dynamic_index(
        &self,
        set: u64,
        binding: u32,
        layouts: &Layouts,
    ) -> Option<(u32, DynamicKind)> {
        let layout = layouts.set_layout(self.sets.get(&set)?.layout)?;
        layout.dynamic_index(binding)
    }

    /// Set `set`'s dynamic buffers' descriptors as its updates wrote them; none for a
    /// set the trace did not allocate (or of a layout it does not hold).
    pub fn dynamic_buffers(&self, set: u64) -> &[BufferDescriptor] {
        self.sets.get(&set).map_or(&[], |s| &s.dynamic)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generated::decode::{
        CopyDescriptorSet, CreateDescriptorSetLayout, DescriptorBufferInfo,
        DescriptorSetLayoutCreateInfoNested, WriteDescriptorSet, WriteDescriptorSetNested,
    };
    use crate::layouts::tests::binding;
    use driver::mme::Arch;

    const UNIFORM_BUFFER_DYNAMIC: u32 = 8;
    const STORAGE_BUFFER_DYNAMIC: u32 = 9;

    /// Set layout 0x51: binding 0 a uniform buffer, binding 1 two dynamic storage
    /// buffers, binding 2 a dynamic uniform buffer.
    fn layouts() -> Layouts {
        let mut layouts = Layouts::default();
        layouts.create_set_layout(&CreateDescriptorSetLayout {
            device: 1,
            create_info: Vec::new(),
            create_info_nested: vec![DescriptorSetLayoutCreateInfoNested {
                p_bindings: vec![
                    binding(2, UNIFORM_BUFFER_DYNAMIC, 1),
                    binding(0, 6, 1),
                    binding(1, STORAGE_BUFFER_DYNAMIC, 2),
                ],
            }],
            allocator: Vec::new(),
            allocator_nested: Vec::new(),
            set_layout: vec![0x51],
        });
        layouts
    }

    /// Objects holding buffer 0xb0 of 4 KiB, bound to memory; and its address.
    fn objects_with_buffer() -> (Objects, u64) {
        let mut objects = Objects::default();
        objects.allocate_memory(0x700, 1 << 20);
        objects.create_buffer(
            0xb0,
            4096,
            driver::nvk::MemoryNeeds {
                size: 4096,
                alignment: 16,
            },
        );
        objects.bind_buffer(0xb0, 0x700, 0);
        let base = objects.buffer_addr(0xb0, 0).unwrap();
        (objects, base)
    }

    fn write(
        set: u64,
        binding: u32,
        ty: u32,
        infos: &[(u64, u64, u64)],
    ) -> (WriteDescriptorSet, WriteDescriptorSetNested) {
        (
            WriteDescriptorSet {
                s_type: 35,
                p_next: 0,
                dst_set: set,
                dst_binding: binding,
                dst_array_element: 0,
                descriptor_count: infos.len() as u32,
                descriptor_type: ty,
                p_image_info: 0,
                p_buffer_info: 1,
                p_texel_buffer_view: 0,
            },
            WriteDescriptorSetNested {
                p_image_info: Vec::new(),
                p_buffer_info: infos
                    .iter()
                    .map(|&(buffer, offset, range)| DescriptorBufferInfo {
                        buffer,
                        offset,
                        range,
                    })
                    .collect(),
                p_texel_buffer_view: Vec::new(),
            },
        )
    }

    #[test]
    fn dynamic_buffers_take_what_writes_and_copies_name_in_binding_order() {
        let layouts = layouts();
        let (objects, base) = objects_with_buffer();
        let device = Device::for_arch(Arch::Turing);
        let mut sets = DescriptorSets::default();
        sets.allocate(0x9001, &[0x5e7, 0x5e8], &[0x51, 0x51], &layouts);
        assert_eq!(
            sets.dynamic_buffers(0x5e7),
            [BufferDescriptor::default(); 3]
        );

        let writes = [
            write(0x5e7, 2, UNIFORM_BUFFER_DYNAMIC, &[(0xb0, 256, 100)]),
            write(
                0x5e7,
                1,
                STORAGE_BUFFER_DYNAMIC,
                &[(0xb0, 0, 10), (0xb0, 512, u64::MAX)],
            ),
        ];
        let update = UpdateDescriptorSets {
            device: 1,
            descriptor_write_count: 2,
            descriptor_writes: writes.iter().map(|w| w.0).collect(),
            descriptor_writes_nested: writes.iter().map(|w| w.1.clone()).collect(),
            descriptor_copy_count: 1,
            descriptor_copies: vec![CopyDescriptorSet {
                s_type: 36,
                p_next: 0,
                src_set: 0x5e7,
                src_binding: 2,
                src_array_element: 0,
                dst_set: 0x5e8,
                dst_binding: 2,
                dst_array_element: 0,
                descriptor_count: 1,
            }],
        };
        sets.update(&update, &layouts, &objects, &device);
        // The storage buffers first (binding 1), then the uniform buffer (binding 2);
        // the whole-size one to the buffer's end.
        let uniform = device.uniform_buffer_descriptor(base + 256, 100);
        assert_eq!(
            sets.dynamic_buffers(0x5e7),
            [
                device.storage_buffer_descriptor(base, 10),
                device.storage_buffer_descriptor(base + 512, 4096 - 512),
                uniform,
            ]
        );
        assert_eq!(uniform.uniform_address_range(true), (base + 256, 128));
        // The copy took the uniform buffer only.
        assert_eq!(
            sets.dynamic_buffers(0x5e8),
            [
                BufferDescriptor::default(),
                BufferDescriptor::default(),
                uniform
            ]
        );
        // A set allocated again starts from zero.
        sets.allocate(0x9001, &[0x5e7], &[0x51], &layouts);
        assert_eq!(
            sets.dynamic_buffers(0x5e7),
            [BufferDescriptor::default(); 3]
        );
    }

    /// A template update writes the dynamic buffers its entries name, reading each
    /// `VkDescriptorBufferInfo` where the entry places it in the recorded data.
    #[test]
    fn a_template_update_writes_the_dynamic_buffers_its_entries_name() {
        use ash::vk;
        use trace_format::generated::trace::VulkanParamT;
        use trace_format::generic_params::{self, ParamList};
        let layouts = layouts();
        let (objects, base) = objects_with_buffer();
        let device = Device::for_arch(Arch::Fermi);
        let mut sets = DescriptorSets::default();
        sets.allocate(0x9001, &[0x5e7], &[0x51], &layouts);
        // Binding 2 (the dynamic uniform buffer) at data offset 48.
        let entries = [Entry {
            binding: 2,
            array_element: 0,
            count: 1,
            ty: vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC,
            offset: 48,
            stride: 24,
        }];
        let mut run = VulkanParamT::default();
        run.value = 48;
        run.bytes = Some(
            [0xb0u64, 512, 64]
                .iter()
                .flat_map(|w| w.to_le_bytes())
                .collect(),
        );
        let mut data = VulkanParamT::default();
        data.nested = Some(vec![run]);
        let bytes = generic_params::packed(std::slice::from_ref(&data));
        let params = ParamList::packed(&bytes).unwrap();
        let runs = RecordedRuns::of(params.get(0).unwrap()).unwrap();
        sets.update_with_template(0x5e7, &entries, &runs, (&layouts, &objects, &device));
        // Before Turing: the address and the range aligned to 256 bytes.
        assert_eq!(
            sets.dynamic_buffers(0x5e7)[2],
            BufferDescriptor::address(base + 512, 256)
        );
    }

    #[test]
    fn freed_sets_go_and_a_handle_allocated_again_names_a_new_address() {
        let layouts = layouts();
        let mut sets = DescriptorSets::default();
        sets.allocate(0xa, &[0x5e7, 0x5e8], &[0x51, 0x51], &layouts);
        sets.allocate(0xb, &[0x5e9], &[0x51], &layouts);
        // Before any free, a set is at its handle.
        assert_eq!(sets.address(0x5e7), 0x5e7);
        let live = |sets: &DescriptorSets, set| !sets.dynamic_buffers(set).is_empty();

        // vkFreeDescriptorSets frees the sets it names.
        sets.free(&[0x5e8]);
        assert!(live(&sets, 0x5e7) && !live(&sets, 0x5e8) && live(&sets, 0x5e9));
        // Allocated again, the handle names another set, at another address; the set
        // that lived on keeps its own.
        sets.allocate(0xa, &[0x5e8], &[0x51], &layouts);
        let second = sets.address(0x5e8);
        assert_ne!(second, 0x5e8);
        assert_eq!(sets.address(0x5e7), 0x5e7);

        // A pool's reset (or destruction) frees its sets, and no other pool's.
        sets.free_pool(0xa);
        assert!(!live(&sets, 0x5e7) && !live(&sets, 0x5e8) && live(&sets, 0x5e9));
        let before = sets.address(0x5e9);
        sets.allocate(0xa, &[0x5e7, 0x5e8], &[0x51, 0x51], &layouts);
        let again = [sets.address(0x5e7), sets.address(0x5e8)];
        assert!(!again.contains(&0x5e7) && !again.contains(&second));
        assert_eq!(sets.address(0x5e9), before);

        // A handle allocated while it lives (its free not in the trace) is a new set too.
        let live_address = sets.address(0x5e9);
        sets.allocate(0xb, &[0x5e9], &[0x51], &layouts);
        assert_ne!(sets.address(0x5e9), live_address);
    }
}
