//! Device memory on the replay device: each captured allocation remapped to a memory
//! type of the same kind, host-visible memory mapped for the whole replay so that the
//! captured contents can be written into it, and a resource that does not fit its
//! captured place (another device's sizes, alignments or types) bound to memory of
//! its own that mirrors what is written to its captured range.
//!
//! A captured allocation gets device memory only when a resource is first bound in it:
//! until then its contents live on the host ([`HostBytes`]). An allocation that holds
//! one image the replay device lays out bigger would otherwise be made twice, at the
//! captured size and at the image's own: Zink on lavapipe gives each large texture an
//! allocation sized for lavapipe's linear layout, and NVK's tiled layout of a mipmapped
//! texture needs a little more (Naev's 2048×2048 textures with 12 levels: 22,370,560
//! bytes captured, 22,413,312 on NVK).
//! Memory of its own goes when its captured allocation is freed: a resource bound to
//! freed memory may not be used again.

use std::collections::HashMap;

use ash::vk;
use driver::nvk::MemoryNeeds;

use super::host_bytes::HostBytes;
use super::DeviceError;

/// Where a captured allocation's contents live.
enum Backing {
    /// Device memory, mapped where host-visible.
    Device {
        memory: vk::DeviceMemory,
        mapped: Option<*mut u8>,
    },
    /// Bytes on the host, for a host-visible allocation no resource is bound in yet.
    Host(HostBytes),
    /// Nothing yet: a device-local allocation no resource is bound in.
    None,
}

/// One captured allocation, as replayed.
struct Allocation {
    backing: Backing,
    size: u64,
    type_index: u32,
    /// The allocate flags the replay keeps (device addresses), for memory of its own
    /// that resources bound to it get.
    flags: vk::MemoryAllocateFlags,
    /// Resources bound to memory of their own instead: (captured offset, length,
    /// their memory's mapping).
    mirrors: Vec<(u64, u64, *mut u8)>,
    /// The memory of its own each of those resources got, and its size.
    own: Vec<(vk::DeviceMemory, u64)>,
}

impl Allocation {
    /// Where the captured contents can be read and written: the device memory's
    /// mapping or the host's bytes.
    fn contents(&self) -> Option<*mut u8> {
        match &self.backing {
            Backing::Device { mapped, .. } => *mapped,
            Backing::Host(bytes) => Some(bytes.as_mut_ptr()),
            Backing::None => None,
        }
    }

    /// Frees its device memory and the memory of its own its resources got; returns
    /// the bytes freed.
    fn release(self, device: &ash::Device) -> u64 {
        let mut freed = 0;
        // SAFETY (both): the program freed the allocation (or the replay ends), so
        // nothing bound in it, or to memory mirroring it, is used any more.
        if let Backing::Device { memory, .. } = self.backing {
            unsafe { device.free_memory(memory, None) };
            freed += self.size;
        }
        for (memory, size) in self.own {
            unsafe { device.free_memory(memory, None) };
            freed += size;
        }
        freed
    }
}

/// The replay's memory.
pub struct Memory {
    properties: vk::PhysicalDeviceMemoryProperties,
    /// The capture device's memory types' flags, from its recorded
    /// `vkGetPhysicalDeviceMemoryProperties`.
    captured_types: Vec<vk::MemoryPropertyFlags>,
    allocations: HashMap<u64, Allocation>,
    usage: MemoryUse,
    /// Bytes of device memory held now.
    held: u64,
}

/// What a replay's memory came to on the device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryUse {
    /// The trace's allocations.
    pub allocations: u64,
    /// Those made on the device: a resource was bound in them.
    pub made: u64,
    /// Resources bound to memory of their own, not fitting their captured place.
    pub own: u64,
    /// Bytes of device memory held at once, at most.
    pub peak_bytes: u64,
}

impl MemoryUse {
    /// Notes `bytes` more held, of `held` bytes held before.
    fn took(&mut self, held: &mut u64, bytes: u64) {
        *held = held.saturating_add(bytes);
        self.peak_bytes = self.peak_bytes.max(*held);
    }
}

impl Memory {
    /// The replay device's memory, before any allocation.
    pub fn new(properties: vk::PhysicalDeviceMemoryProperties) -> Self {
        Memory {
            properties,
            captured_types: Vec::new(),
            allocations: HashMap::new(),
            usage: MemoryUse::default(),
            held: 0,
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

    /// The replay's type for a captured type with flags `captured` (see [`pick_type`]).
    fn pick_type(&self, captured: Option<vk::MemoryPropertyFlags>, bits: u32) -> Option<u32> {
        pick_type(&self.properties, captured, bits)
    }

    /// Takes captured allocation `id`, with the captured allocate `flags` the replay
    /// keeps: device addresses (a device mask and capture-replay addresses are the
    /// capture device's). Its device memory is made when a resource is first bound in
    /// it; a host-visible one holds its contents on the host until then.
    pub fn allocate(
        &mut self,
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
        let backing = match is_host_visible(&self.properties, type_index) {
            true => Backing::Host(HostBytes::zeroed(size).ok_or_else(|| DeviceError::Call {
                seq,
                command: "vkAllocateMemory".into(),
                reason: format!("no room for the {size} bytes of its contents on the host"),
            })?),
            false => Backing::None,
        };
        self.allocations.insert(
            id,
            Allocation {
                backing,
                size,
                type_index,
                flags,
                mirrors: Vec::new(),
                own: Vec::new(),
            },
        );
        self.usage.allocations += 1;
        Ok(())
    }

    /// The device memory of allocation `a`, made now if it has none (its contents so
    /// far copied in).
    fn device_memory_of(
        device: &ash::Device,
        properties: &vk::PhysicalDeviceMemoryProperties,
        a: &mut Allocation,
        (usage, held): (&mut MemoryUse, &mut u64),
        seq: u64,
    ) -> Result<vk::DeviceMemory, DeviceError> {
        if let Backing::Device { memory, .. } = a.backing {
            return Ok(memory);
        }
        let (memory, mapped) =
            allocate_mapped(device, properties, a.size, a.type_index, a.flags, seq)?;
        if let (Some(target), Some(source)) = (mapped, a.contents()) {
            // SAFETY: both are mapped and `size` bytes long.
            unsafe { std::ptr::copy_nonoverlapping(source, target, a.size as usize) };
        }
        a.backing = Backing::Device { memory, mapped };
        usage.made += 1;
        usage.took(held, a.size);
        Ok(memory)
    }

    /// Frees captured allocation `id`.
    pub fn free(&mut self, device: &ash::Device, id: u64) {
        if let Some(a) = self.allocations.remove(&id) {
            self.held = self.held.saturating_sub(a.release(device));
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
        let Some(mapped) = a.contents() else {
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
        let Memory {
            properties,
            allocations,
            usage,
            held,
            ..
        } = self;
        let Some(a) = allocations.get_mut(&id) else {
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
            let memory = Self::device_memory_of(device, properties, a, (usage, held), seq)?;
            return Ok((memory, offset));
        }
        // Host-visible like the captured allocation where the resource allows it
        // (its contents then follow what the trace writes), else any type it allows:
        // an image in device-local memory only is not written by the host.
        let captured = properties.memory_types[a.type_index as usize].property_flags;
        let bits = requirements.memory_type_bits;
        let type_index = pick_type(properties, Some(captured), bits)
            .or_else(|| {
                pick_type(
                    properties,
                    Some(vk::MemoryPropertyFlags::DEVICE_LOCAL),
                    bits,
                )
            })
            .ok_or_else(|| DeviceError::Missing {
                what: format!("memory type among {bits:#b} for a resource"),
                seq: Some(seq),
            })?;
        let (memory, mapped) = allocate_mapped(
            device,
            properties,
            requirements.size,
            type_index,
            a.flags,
            seq,
        )?;
        a.own.push((memory, requirements.size));
        usage.own += 1;
        usage.took(held, requirements.size);
        if let Some(target) = mapped {
            let len = requirements.size.min(a.size.saturating_sub(offset));
            if let Some(source) = a.contents() {
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
                let mapped = a.contents()?;
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
        // The device is idle at the end of the replay.
        for (_, a) in self.allocations.drain() {
            a.release(device);
        }
        self.held = 0;
    }

    /// What the replay's memory came to on the device so far.
    pub fn usage(&self) -> MemoryUse {
        self.usage
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

/// Allocates `size` bytes of type `type_index`, mapped and zeroed where host-visible.
fn allocate_mapped(
    device: &ash::Device,
    properties: &vk::PhysicalDeviceMemoryProperties,
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
    let mapped = if is_host_visible(properties, type_index) {
        // SAFETY: host-visible memory just allocated, mapped whole once.
        let ptr =
            unsafe { device.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()) }
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

/// The replay's type for captured type `index`, allowed by `bits`: the one sharing
/// most of its host-visible, coherent, cached and device-local flags, host-visible
/// where the captured one was.
fn pick_type(
    properties: &vk::PhysicalDeviceMemoryProperties,
    captured: Option<vk::MemoryPropertyFlags>,
    bits: u32,
) -> Option<u32> {
    let relevant = vk::MemoryPropertyFlags::HOST_VISIBLE
        | vk::MemoryPropertyFlags::HOST_COHERENT
        | vk::MemoryPropertyFlags::HOST_CACHED
        | vk::MemoryPropertyFlags::DEVICE_LOCAL;
    let want = captured
        .unwrap_or(vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT)
        & relevant;
    let types = &properties.memory_types[..properties.memory_type_count as usize];
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
                    vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
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

/// Whether the replay device's memory type `type_index` is host-visible.
fn is_host_visible(properties: &vk::PhysicalDeviceMemoryProperties, type_index: u32) -> bool {
    properties.memory_types[type_index as usize]
        .property_flags
        .contains(vk::MemoryPropertyFlags::HOST_VISIBLE)
}
