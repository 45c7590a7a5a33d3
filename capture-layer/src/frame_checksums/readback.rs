//! What every read-back of a frame shares: a host-visible buffer to copy images into,
//! and the commands that copy them there and leave them in their layout.

use ash::vk;
use ash::vk::Handle;
use trace_format::frame_checksum::readback::{self, ReadBack};

use crate::dispatch::DeviceData;

/// A buffer in host-visible, coherent memory (cached where the device has such a type),
/// mapped for as long as it lives.
pub struct HostBuffer {
    pub buffer: vk::Buffer,
    pub memory: vk::DeviceMemory,
    pub mapped: *const u8,
    pub size: u64,
}

impl HostBuffer {
    /// Makes a buffer of `size` bytes that transfers can write.
    ///
    /// # Safety
    /// `d` must be a live device.
    pub unsafe fn new(d: &DeviceData, size: u64) -> Result<Self, vk::Result> {
        let f = &d.fns;
        let buffer = f.create_buffer(
            &vk::BufferCreateInfo::default()
                .size(size)
                .usage(vk::BufferUsageFlags::TRANSFER_DST),
            None,
        )?;
        let req = f.get_buffer_memory_requirements(buffer);
        let bits = match req.memory_type_bits & d.cached_memory_types {
            0 => req.memory_type_bits & d.host_memory_types,
            cached => cached,
        };
        if bits == 0 {
            f.destroy_buffer(buffer, None);
            return Err(vk::Result::ERROR_OUT_OF_HOST_MEMORY);
        }
        let memory = match f.allocate_memory(
            &vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(bits.trailing_zeros()),
            None,
        ) {
            Ok(m) => m,
            Err(e) => {
                f.destroy_buffer(buffer, None);
                return Err(e);
            }
        };
        let mapped = f
            .bind_buffer_memory(buffer, memory, 0)
            .and_then(|()| f.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty()));
        match mapped {
            Ok(p) => Ok(Self {
                buffer,
                memory,
                mapped: p as *const u8,
                size,
            }),
            Err(e) => {
                f.destroy_buffer(buffer, None);
                f.free_memory(memory, None);
                Err(e)
            }
        }
    }

    /// The `len` bytes at `offset`, once the copies into them are finished.
    ///
    /// # Safety
    /// No copy into that range may be in flight.
    pub unsafe fn bytes(&self, offset: u64, len: u64) -> &[u8] {
        let end = (offset + len).min(self.size);
        let start = offset.min(end);
        std::slice::from_raw_parts(self.mapped.add(start as usize), (end - start) as usize)
    }

    /// Frees the buffer and its memory.
    ///
    /// # Safety
    /// No copy into it may be in flight.
    pub unsafe fn destroy(&self, d: &DeviceData) {
        d.fns.destroy_buffer(self.buffer, None);
        d.fns.free_memory(self.memory, None);
    }
}

/// An image to read back: in `layout`, and left in it.
#[derive(Clone, Copy)]
pub struct Source {
    pub image: vk::Image,
    pub layout: vk::ImageLayout,
    pub extent: vk::Extent2D,
    pub texel: u64,
}

impl Source {
    /// The bytes its texels take, rows packed.
    pub fn len(&self) -> u64 {
        u64::from(self.extent.width) * u64::from(self.extent.height) * self.texel
    }
}

/// Records into `cb` (begun) the copies of each source into `buffer` at its offset,
/// as the device replay records its own ([`trace_format::frame_checksum::readback`]).
///
/// # Safety
/// `cb` must be in the recording state; each source's range must lie in `buffer`.
pub unsafe fn record_copies(
    d: &DeviceData,
    cb: vk::CommandBuffer,
    sources: &[(Source, u64)],
    buffer: vk::Buffer,
) {
    let images: Vec<ReadBack> = sources
        .iter()
        .map(|(s, offset)| ReadBack {
            image: s.image,
            layout: s.layout,
            extent: s.extent,
            offset: *offset,
        })
        .collect();
    readback::record(&d.fns, cb, &images, buffer);
}

/// Gives a command buffer the layer allocated the loader's dispatch pointer, as every
/// dispatchable object a layer makes needs.
///
/// # Safety
/// `cb` must be a command buffer just allocated from `d`.
pub unsafe fn set_loader_dispatch(d: &DeviceData, cb: vk::CommandBuffer) {
    *(cb.as_raw() as *mut usize) = *(d.handle.as_raw() as *const usize);
}
