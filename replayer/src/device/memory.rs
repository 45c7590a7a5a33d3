//! Device memory on the replay device: each captured allocation remapped to a memory
//! type of the same kind, host-visible memory mapped for the whole replay so that the
//! captured contents can be written into it, and a resource that does not fit its
//! captured place (another device's sizes, alignments or types) bound to memory of
//! its own that mirrors what is written to its captured range.

use std::collections::HashMap;

use ash::vk;
use driver::nvk::MemoryNeeds;

use super::DeviceError;

/// One captured allocation, as replayed.
struct Allocation {
    memory: vk::DeviceMemory,
    size: u64,
    type_index: u32,
    /// The allocate flags the replay keeps (device addresses), for memory of its own
    /// that resources bound to it get.
    flags: vk::MemoryAllocateFlags,
    /// Where it is mapped, when host-visible.
    mapped: Option<*mut u8>,
    /// Resources bound to memory of their own instead: (captured offset, length,
    /// their memory's mapping).
    mirrors: Vec<(u64, u64, *mut u8)>,
}

/// The replay's memory.
pub struct Memory {
    properties: vk::PhysicalDeviceMemoryProperties,
    /// The capture device's memory types' flags, from its recorded
    /// `vkGetPhysicalDeviceMemoryProperties`.
    captured_types: Vec<vk::MemoryPropertyFlags>,
    allocations: HashMap<u64, Allocation>,
    /// Memory the replay allocated for resources that did not fit their captured place.
    own: Vec<vk::DeviceMemory>,
}

impl Memory {
    /// The replay device's memory, before any allocation.
    pub fn new(properties: vk::PhysicalDeviceMemoryProperties) -> Self {
        Memory {
            properties,
            captured_types: Vec::new(),
            allocations: HashMap::new(),
            own: Vec::new(),
        }
    }

    /// Reads the capture device's memory types from a recorded
    /// `VkPhysicalDeviceMemoryProperties` (520 bytes).
    pub fn set_captured_properties(&mut self, bytes: &[u8]) {
        let word = |at: usize| {
            bytes
                .get(at..at + 4)
                .and_then(|b| b.try_into().ok())
                .map_or(0, u32::from_le_bytes)
        };
        let count = (word(0) as usize).min(vk::MAX_MEMORY_TYPES);
        self.captured_types = (0..count)
            .map(|i| vk::MemoryPropertyFlags::from_raw(word(4 + 8 * i)))
            .collect();
    }

    /// The replay's type for captured type `index`, allowed by `bits`: the one sharing
    /// most of its host-visible, coherent, cached and device-local flags, host-visible
    /// where the captured one was.
    fn pick_type(&self, captured: Option<vk::MemoryPropertyFlags>, bits: u32) -> Option<u32> {
        let relevant = vk::MemoryPropertyFlags::HOST_VISIBLE
            | vk::MemoryPropertyFlags::HOST_COHERENT
            | vk::MemoryPropertyFlags::HOST_CACHED
            | vk::MemoryPropertyFlags::DEVICE_LOCAL;
        let want = captured.unwrap_or(
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
        ) & relevant;
        let types = &self.properties.memory_types[..self.properties.memory_type_count as usize];
        types
            .iter()
            .enumerate()
            .filter(|(i, t)| {
                bits & (1 << i) != 0
                    && !t
                        .property_flags
                        .contains(vk::MemoryPropertyFlags::PROTECTED)
            })
            .filter(|(_, t)| {
                !want.contains(vk::MemoryPropertyFlags::HOST_VISIBLE)
                    || t.property_flags.contains(
                        vk::MemoryPropertyFlags::HOST_VISIBLE
                            | vk::MemoryPropertyFlags::HOST_COHERENT,
                    )
            })
            .max_by_key(|(i, t)| {
                (
                    (t.property_flags & relevant & want).as_raw().count_ones(),
                    std::cmp::Reverse(*i),
                )
            })
            .map(|(i, _)| i as u32)
    }

    /// Allocates captured allocation `id`, with the captured allocate `flags` the replay
    /// keeps: device addresses (a device mask and capture-replay addresses are the
    /// capture device's).
    pub fn allocate(
        &mut self,
        device: &ash::Device,
        id: u64,
        size: u64,
        captured_type: u32,
        flags: vk::MemoryAllocateFlags,
        seq: u64,
    ) -> Result<(), DeviceError> {
        let flags = flags & vk::MemoryAllocateFlags::DEVICE_ADDRESS;
        let captured = self.captured_types.get(captured_type as usize).copied();
        let type_index =
            self.pick_type(captured, u32::MAX)
                .ok_or_else(|| DeviceError::Missing {
                    what: format!(
                        "memory type like the capture's type {captured_type} ({captured:?})"
                    ),
                    seq: Some(seq),
                })?;
        let (memory, mapped) = self.allocate_mapped(device, size, type_index, flags, seq)?;
        self.allocations.insert(
            id,
            Allocation {
                memory,
                size,
                type_index,
                flags,
                mapped,
                mirrors: Vec::new(),
            },
        );
        Ok(())
    }

    fn allocate_mapped(
        &self,
        device: &ash::Device,
        size: u64,
        type_index: u32,
        flags: vk::MemoryAllocateFlags,
        seq: u64,
    ) -> Result<(vk::DeviceMemory, Option<*mut u8>), DeviceError> {
        let mut flags_info = vk::MemoryAllocateFlagsInfo::default().flags(flags);
        let mut info = vk::MemoryAllocateInfo::default()
            .allocation_size(size.max(1))
            .memory_type_index(type_index);
        if !flags.is_empty() {
            info = info.push_next(&mut flags_info);
        }
        let call = |reason: vk::Result| DeviceError::Call {
            seq,
            command: "vkAllocateMemory".into(),
            reason: reason.to_string(),
        };
        // SAFETY: a live device; `info` lives across the call.
        let memory = unsafe { device.allocate_memory(&info, None) }.map_err(call)?;
        let flags = self.properties.memory_types[type_index as usize].property_flags;
        let mapped = if flags.contains(vk::MemoryPropertyFlags::HOST_VISIBLE) {
            // SAFETY: host-visible memory just allocated, mapped whole once.
            let ptr = unsafe {
                device.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
            }
            .map_err(call)? as *mut u8;
            // What a program reads before it writes is undefined: zeros, so that a
            // replay draws the same every time (DDNet reads memory it never wrote: the
            // heap's leftovers made one replay in three of the same trace differ).
            // SAFETY: the mapping is `size` bytes long, host-visible and ours alone.
            unsafe { std::ptr::write_bytes(ptr, 0, size as usize) };
            Some(ptr)
        } else {
            None
        };
        Ok((memory, mapped))
    }

    /// Frees captured allocation `id`.
    pub fn free(&mut self, device: &ash::Device, id: u64) {
        if let Some(a) = self.allocations.remove(&id) {
            // SAFETY: the program freed it, so nothing uses it any more.
            unsafe { device.free_memory(a.memory, None) };
        }
    }

    /// Writes captured contents into allocation `id` (and into the mirrors of the
    /// resources bound elsewhere); `false` when the allocation is unknown, not
    /// host-visible or the bytes fall outside it.
    pub fn write(&mut self, id: u64, offset: u64, bytes: &[u8]) -> bool {
        let Some(a) = self.allocations.get(&id) else {
            return false;
        };
        let end = offset.saturating_add(bytes.len() as u64);
        let Some(mapped) = a.mapped else {
            return false;
        };
        if end > a.size {
            return false;
        }
        // SAFETY: the range lies within the mapped allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), mapped.add(offset as usize), bytes.len())
        };
        for &(at, len, target) in &a.mirrors {
            let from = offset.max(at);
            let to = end.min(at + len);
            if from < to {
                // SAFETY: the overlap lies within both the bytes and the mirror.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        bytes.as_ptr().add((from - offset) as usize),
                        target.add((from - at) as usize),
                        (to - from) as usize,
                    )
                };
            }
        }
        true
    }

    /// Where a resource with `requirements` bound at `offset` of allocation `id` goes:
    /// there, when it fits and the type allows it, else into memory of its own whose
    /// contents start as, and follow, that range.
    pub fn place(
        &mut self,
        device: &ash::Device,
        id: u64,
        offset: u64,
        requirements: vk::MemoryRequirements,
        seq: u64,
    ) -> Result<(vk::DeviceMemory, u64), DeviceError> {
        let Some(a) = self.allocations.get(&id) else {
            return Err(DeviceError::Call {
                seq,
                command: "bind".into(),
                reason: format!("memory {id:#x} was never allocated"),
            });
        };
        let needs = MemoryNeeds {
            size: requirements.size,
            alignment: requirements.alignment,
        };
        let fits = requirements.memory_type_bits & (1 << a.type_index) != 0
            && needs.fit_at(offset, a.size);
        if fits {
            return Ok((a.memory, offset));
        }
        // Host-visible like the captured allocation where the resource allows it
        // (its contents then follow what the trace writes), else any type it allows:
        // an image in device-local memory only is not written by the host.
        let captured = self.properties.memory_types[a.type_index as usize].property_flags;
        let flags = a.flags;
        let type_index = self
            .pick_type(Some(captured), requirements.memory_type_bits)
            .or_else(|| {
                self.pick_type(
                    Some(vk::MemoryPropertyFlags::DEVICE_LOCAL),
                    requirements.memory_type_bits,
                )
            })
            .ok_or_else(|| DeviceError::Missing {
                what: format!(
                    "memory type among {:#b} for a resource",
                    requirements.memory_type_bits
                ),
                seq: Some(seq),
            })?;
        let (memory, mapped) =
            self.allocate_mapped(device, requirements.size, type_index, flags, seq)?;
        self.own.push(memory);
        if let (Some(target), Some(a)) = (mapped, self.allocations.get_mut(&id)) {
            let len = requirements.size.min(a.size.saturating_sub(offset));
            if let Some(source) = a.mapped {
                // SAFETY: both ranges are mapped and `len` long.
                unsafe {
                    std::ptr::copy_nonoverlapping(source.add(offset as usize), target, len as usize)
                };
            }
            a.mirrors.push((offset, len, target));
        }
        Ok((memory, 0))
    }

    /// The contents of every host-visible allocation, by id: what a loop over frames
    /// starts each pass from.
    pub fn snapshot(&self) -> HashMap<u64, Vec<u8>> {
        self.allocations
            .iter()
            .filter_map(|(id, a)| {
                let mapped = a.mapped?;
                // SAFETY: the whole allocation is mapped.
                Some((
                    *id,
                    unsafe { std::slice::from_raw_parts(mapped, a.size as usize) }.to_vec(),
                ))
            })
            .collect()
    }

    /// Puts every host-visible allocation back as `snapshot` holds it; one made after
    /// the snapshot goes back to zeros, as the capture found it (its first contents in
    /// the trace are its changes against zeros).
    pub fn restore(&mut self, snapshot: &HashMap<u64, Vec<u8>>) {
        let ids: Vec<u64> = self.allocations.keys().copied().collect();
        for id in ids {
            let size = self.allocations[&id].size as usize;
            match snapshot.get(&id) {
                Some(bytes) => {
                    self.write(id, 0, bytes);
                }
                None => {
                    self.write(id, 0, &vec![0; size]);
                }
            }
        }
    }

    /// Frees everything.
    pub fn destroy(&mut self, device: &ash::Device) {
        for (_, a) in self.allocations.drain() {
            // SAFETY: the device is idle at the end of the replay.
            unsafe { device.free_memory(a.memory, None) };
        }
        for m in self.own.drain(..) {
            // SAFETY: as above.
            unsafe { device.free_memory(m, None) };
        }
    }

    /// A host-visible, coherent type among `bits`, for the replay's own buffers.
    pub fn host_type(&self, bits: u32) -> Option<u32> {
        self.pick_type(None, bits)
    }

    /// A device-local type among `bits`.
    pub fn local_type(&self, bits: u32) -> Option<u32> {
        self.pick_type(Some(vk::MemoryPropertyFlags::DEVICE_LOCAL), bits)
    }
}
