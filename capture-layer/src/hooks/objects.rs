//! Objects: memory and its contents, buffers, images, views, render passes,
//! framebuffers, shader modules, pipeline layouts, pipelines, command pools and
//! buffers, query pools, and their destruction.

use std::ffi::c_void;

use ash::vk;
use ash::vk::Handle;
use trace_format::byte_planes;
use trace_format::direct::DirectField as F;
use trace_format::generated::trace::*;

use super::util::{handles, slice};
use crate::dispatch::{self, DeviceData};
use crate::memory::Watched;
use crate::recorder::{record, record_direct, Scope};

/// Records a change the mapped-memory tracker found: `data` now at `offset` of
/// `memory`, a record for each [`PIECE`] of it. Pieces that look like arrays of words
/// go into the trace as byte planes (which compress better; the reader lays them out
/// as the bytes again), split straight into the record; the others copied as they are.
fn record_change(memory: u64, offset: u64, data: &[u8]) {
    let record = |offset: u64, field: F<'_>| {
        record_direct(
            Scope::Setup,
            0,
            Call::MemoryContents,
            &[F::U64(memory), F::U64(offset), field],
        );
    };
    // The first piece is judged by a sample of the whole change, the others each by
    // its own.
    let planes = byte_planes::worth_it(data);
    for (i, piece) in data.chunks(PIECE).enumerate() {
        let at = offset + (i * PIECE) as u64;
        if !planes || (i > 0 && !byte_planes::worth_it(piece)) {
            record(at, F::Bytes(piece));
        } else {
            record(at, F::BytesAsPlanes(piece));
        }
    }
}

/// The most bytes of a change stored as one record: a chunk of the trace holds whole
/// records and at most 64 MiB (Blender writes more than that into one mapping at
/// once), and a piece of byte planes is judged by its own sample.
const PIECE: usize = 1 << 20;

/// Records what changed in every mapping of `device` since the last look, before a
/// submit.
pub fn record_all_changes(device: &DeviceData) {
    let mut mapped = lock_mapped(device);
    mapped.changes(&mut record_change);
    mapped.submitting();
}

/// `vkAllocateMemory`.
pub unsafe extern "system" fn allocate_memory(
    device: vk::Device,
    info: *const vk::MemoryAllocateInfo,
    allocator: *const vk::AllocationCallbacks,
    out: *mut vk::DeviceMemory,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_0().allocate_memory)(device, info, allocator, out);
    if r == vk::Result::SUCCESS {
        let (memory, size) = ((*out).as_raw(), (*info).allocation_size);
        let mut mapped = lock_mapped(d);
        mapped.allocated(memory, size);
        // Memory imported from the program's own pointer (VK_EXT_external_memory_host)
        // is written through that pointer for its whole life, never mapped: it is
        // watched as a mapping from now until it is freed, so that what the program
        // writes there reaches the trace as mapped memory's writes do.
        if let Some(host) = imported_host_pointer(info) {
            // SAFETY: the import keeps `size` bytes at `host` the allocation's until
            // vkFreeMemory, which this layer sees first.
            let watched = mapped.mapped(memory, 0, size as usize, host);
            drop(mapped);
            note_tracking(watched);
        } else {
            drop(mapped);
        }
        record(Scope::Setup, r.as_raw(), || {
            Some(CallT::AllocateMemory(Box::new(table!(AllocateMemoryT {
                device: device.as_raw(),
                memory,
                size,
                memory_type_index: (*info).memory_type_index,
                flags: allocate_flags(info),
            }))))
        });
    }
    r
}

/// `VkImportMemoryHostPointerInfoEXT.pHostPointer` in `info`'s chain, when the
/// allocation imports the program's own memory.
///
/// # Safety
/// `info` must be a valid create info, its chain well formed.
unsafe fn imported_host_pointer(info: *const vk::MemoryAllocateInfo) -> Option<*const u8> {
    let mut next = (*info).p_next as *const vk::BaseInStructure;
    while let Some(s) = next.as_ref() {
        if s.s_type == vk::StructureType::IMPORT_MEMORY_HOST_POINTER_INFO_EXT {
            let import = &*(next as *const vk::ImportMemoryHostPointerInfoEXT);
            return (!import.p_host_pointer.is_null())
                .then_some(import.p_host_pointer as *const u8);
        }
        next = s.p_next;
    }
    None
}

/// `VkMemoryAllocateFlagsInfo.flags` in `info`'s chain, 0 without one.
///
/// # Safety
/// `info` must be a valid create info, its chain well formed.
unsafe fn allocate_flags(info: *const vk::MemoryAllocateInfo) -> u32 {
    let mut next = (*info).p_next as *const vk::BaseInStructure;
    while let Some(s) = next.as_ref() {
        if s.s_type == vk::StructureType::MEMORY_ALLOCATE_FLAGS_INFO {
            return (*(next as *const vk::MemoryAllocateFlagsInfo))
                .flags
                .as_raw();
        }
        next = s.p_next;
    }
    0
}

/// `vkFreeMemory`: what the program wrote into it is recorded first.
pub unsafe extern "system" fn free_memory(
    device: vk::Device,
    memory: vk::DeviceMemory,
    allocator: *const vk::AllocationCallbacks,
) {
    let Some(d) = dispatch::device_of(device) else {
        return;
    };
    if memory != vk::DeviceMemory::null() {
        lock_mapped(d).freed(memory.as_raw(), &mut record_change);
        record(Scope::Setup, 0, || {
            Some(CallT::FreeMemory(Box::new(table!(FreeMemoryT {
                device: device.as_raw(),
                memory: memory.as_raw(),
            }))))
        });
    }
    (d.fns.fp_v1_0().free_memory)(device, memory, allocator);
}

/// `vkMapMemory`: the mapping is watched from now on.
pub unsafe extern "system" fn map_memory(
    device: vk::Device,
    memory: vk::DeviceMemory,
    offset: vk::DeviceSize,
    size: vk::DeviceSize,
    flags: vk::MemoryMapFlags,
    out: *mut *mut c_void,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_0().map_memory)(device, memory, offset, size, flags, out);
    if r == vk::Result::SUCCESS && !(*out).is_null() {
        let mut mapped = lock_mapped(d);
        let len = if size == vk::WHOLE_SIZE {
            mapped
                .size_of(memory.as_raw())
                .unwrap_or(0)
                .saturating_sub(offset)
        } else {
            size
        };
        // SAFETY: the driver keeps `len` bytes at `*out` mapped until unmap or free,
        // both of which this layer sees first.
        let watched = mapped.mapped(memory.as_raw(), offset, len as usize, *out as *const u8);
        drop(mapped);
        note_tracking(watched);
        record(Scope::Setup, r.as_raw(), || {
            Some(CallT::MapMemory(Box::new(table!(MapMemoryT {
                device: device.as_raw(),
                memory: memory.as_raw(),
                offset,
                size,
                flags: flags.as_raw(),
            }))))
        });
    }
    r
}

/// `vkUnmapMemory`: what the program wrote is recorded before the mapping goes.
pub unsafe extern "system" fn unmap_memory(device: vk::Device, memory: vk::DeviceMemory) {
    let Some(d) = dispatch::device_of(device) else {
        return;
    };
    lock_mapped(d).unmapped(memory.as_raw(), &mut record_change);
    record(Scope::Setup, 0, || {
        Some(CallT::UnmapMemory(Box::new(table!(UnmapMemoryT {
            device: device.as_raw(),
            memory: memory.as_raw(),
        }))))
    });
    (d.fns.fp_v1_0().unmap_memory)(device, memory);
}

/// `vkFlushMappedMemoryRanges`: the flushed ranges' changes are recorded.
pub unsafe extern "system" fn flush_mapped_memory_ranges(
    device: vk::Device,
    count: u32,
    ranges: *const vk::MappedMemoryRange,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let ranges = slice(ranges, count);
    for r in ranges {
        lock_mapped(d).changes_in(r.memory.as_raw(), r.offset, r.size, &mut record_change);
    }
    record(Scope::Setup, 0, || {
        Some(CallT::FlushMappedMemoryRanges(Box::new(table!(
            FlushMappedMemoryRangesT {
                device: device.as_raw(),
                ranges: Some(
                    ranges
                        .iter()
                        .map(|r| MemoryRange::new(r.memory.as_raw(), r.offset, r.size).unpack())
                        .collect(),
                ),
            }
        ))))
    });
    (d.fns.fp_v1_0().flush_mapped_memory_ranges)(device, count, ranges.as_ptr())
}

/// `vkCreateBuffer`.
pub unsafe extern "system" fn create_buffer(
    device: vk::Device,
    info: *const vk::BufferCreateInfo,
    allocator: *const vk::AllocationCallbacks,
    out: *mut vk::Buffer,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_0().create_buffer)(device, info, allocator, out);
    if r == vk::Result::SUCCESS {
        let i = &*info;
        record(Scope::Setup, r.as_raw(), || {
            Some(CallT::CreateBuffer(Box::new(table!(CreateBufferT {
                device: device.as_raw(),
                buffer: (*out).as_raw(),
                flags: i.flags.as_raw(),
                size: i.size,
                usage: i.usage.as_raw(),
            }))))
        });
    }
    r
}

/// Records a buffer's binding, and notes where it lies for the mapped-memory tracker.
///
/// # Safety
/// `buffer` must be a buffer of `d`'s device, just bound.
unsafe fn bind_buffer(
    d: &DeviceData,
    device: vk::Device,
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    offset: u64,
) {
    let mut reqs = vk::MemoryRequirements::default();
    (d.fns.fp_v1_0().get_buffer_memory_requirements)(device, buffer, &mut reqs);
    lock_mapped(d).bound(memory.as_raw(), buffer.as_raw(), offset, reqs.size);
    record(Scope::Setup, 0, || {
        Some(CallT::BindBufferMemory(Box::new(table!(
            BindBufferMemoryT {
                device: device.as_raw(),
                buffer: buffer.as_raw(),
                memory: memory.as_raw(),
                offset,
            }
        ))))
    });
}

/// `vkBindBufferMemory`.
pub unsafe extern "system" fn bind_buffer_memory(
    device: vk::Device,
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    offset: vk::DeviceSize,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_0().bind_buffer_memory)(device, buffer, memory, offset);
    if r == vk::Result::SUCCESS {
        bind_buffer(d, device, buffer, memory, offset);
    }
    r
}

/// `vkBindBufferMemory2`.
pub unsafe extern "system" fn bind_buffer_memory2(
    device: vk::Device,
    count: u32,
    infos: *const vk::BindBufferMemoryInfo,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_1().bind_buffer_memory2)(device, count, infos);
    if r == vk::Result::SUCCESS {
        for i in slice(infos, count) {
            bind_buffer(d, device, i.buffer, i.memory, i.memory_offset);
        }
    }
    r
}

/// `vkCreateImage`.
pub unsafe extern "system" fn create_image(
    device: vk::Device,
    info: *const vk::ImageCreateInfo,
    allocator: *const vk::AllocationCallbacks,
    out: *mut vk::Image,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_0().create_image)(device, info, allocator, out);
    if r == vk::Result::SUCCESS {
        let i = &*info;
        if i.tiling == vk::ImageTiling::OPTIMAL {
            lock_mapped(d).optimal_image((*out).as_raw());
        }
        crate::image_layouts::image_created(*out, i);
        record(Scope::Setup, r.as_raw(), || {
            Some(CallT::CreateImage(Box::new(table!(CreateImageT {
                device: device.as_raw(),
                image: (*out).as_raw(),
                flags: i.flags.as_raw(),
                image_type: i.image_type.as_raw() as u32,
                format: i.format.as_raw() as u32,
                extent: Some(
                    Extent3D::new(i.extent.width, i.extent.height, i.extent.depth).unpack()
                ),
                mip_levels: i.mip_levels,
                array_layers: i.array_layers,
                samples: i.samples.as_raw(),
                tiling: i.tiling.as_raw() as u32,
                usage: i.usage.as_raw(),
                initial_layout: i.initial_layout.as_raw() as u32,
            }))))
        });
    }
    r
}

/// Records an image's binding, and notes where it lies for the mapped-memory tracker.
///
/// # Safety
/// `image` must be an image of `d`'s device, just bound.
unsafe fn bind_image(
    d: &DeviceData,
    device: vk::Device,
    image: vk::Image,
    memory: vk::DeviceMemory,
    offset: u64,
) {
    let mut reqs = vk::MemoryRequirements::default();
    (d.fns.fp_v1_0().get_image_memory_requirements)(device, image, &mut reqs);
    lock_mapped(d).bound(memory.as_raw(), image.as_raw(), offset, reqs.size);
    record(Scope::Setup, 0, || {
        Some(CallT::BindImageMemory(Box::new(table!(BindImageMemoryT {
            device: device.as_raw(),
            image: image.as_raw(),
            memory: memory.as_raw(),
            offset,
        }))))
    });
}

/// `vkBindImageMemory`.
pub unsafe extern "system" fn bind_image_memory(
    device: vk::Device,
    image: vk::Image,
    memory: vk::DeviceMemory,
    offset: vk::DeviceSize,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_0().bind_image_memory)(device, image, memory, offset);
    if r == vk::Result::SUCCESS {
        bind_image(d, device, image, memory, offset);
    }
    r
}

/// `vkBindImageMemory2`.
pub unsafe extern "system" fn bind_image_memory2(
    device: vk::Device,
    count: u32,
    infos: *const vk::BindImageMemoryInfo,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_1().bind_image_memory2)(device, count, infos);
    if r == vk::Result::SUCCESS {
        for i in slice(infos, count) {
            bind_image(d, device, i.image, i.memory, i.memory_offset);
        }
    }
    r
}

/// `vkCreateImageView`.
pub unsafe extern "system" fn create_image_view(
    device: vk::Device,
    info: *const vk::ImageViewCreateInfo,
    allocator: *const vk::AllocationCallbacks,
    out: *mut vk::ImageView,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_0().create_image_view)(device, info, allocator, out);
    if r == vk::Result::SUCCESS {
        let i = &*info;
        crate::image_layouts::view_created(*out, i.image);
        let range = i.subresource_range;
        record(Scope::Setup, r.as_raw(), || {
            Some(CallT::CreateImageView(Box::new(table!(CreateImageViewT {
                device: device.as_raw(),
                image_view: (*out).as_raw(),
                image: i.image.as_raw(),
                view_type: i.view_type.as_raw() as u32,
                format: i.format.as_raw() as u32,
                aspect_mask: range.aspect_mask.as_raw(),
                base_mip_level: range.base_mip_level,
                level_count: range.level_count,
                base_array_layer: range.base_array_layer,
                layer_count: range.layer_count,
                components: pack_components(i.components),
                flags: i.flags.as_raw(),
            }))))
        });
    }
    r
}

/// A component mapping as `CreateImageView.components`: a byte per component.
fn pack_components(c: vk::ComponentMapping) -> u32 {
    [c.r, c.g, c.b, c.a]
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_raw() as u32 & 0xff) << (8 * i))
        .sum()
}

/// `vkCreateFramebuffer`.
pub unsafe extern "system" fn create_framebuffer(
    device: vk::Device,
    info: *const vk::FramebufferCreateInfo,
    allocator: *const vk::AllocationCallbacks,
    out: *mut vk::Framebuffer,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_0().create_framebuffer)(device, info, allocator, out);
    if r == vk::Result::SUCCESS {
        let i = &*info;
        if !i.flags.contains(vk::FramebufferCreateFlags::IMAGELESS) {
            crate::image_layouts::framebuffer_created(
                *out,
                slice(i.p_attachments, i.attachment_count),
            );
        }
        record(Scope::Setup, r.as_raw(), || {
            Some(CallT::CreateFramebuffer(Box::new(table!(
                CreateFramebufferT {
                    device: device.as_raw(),
                    framebuffer: (*out).as_raw(),
                    flags: i.flags.as_raw(),
                    render_pass: i.render_pass.as_raw(),
                    attachments: Some(handles(i.p_attachments, i.attachment_count)),
                    width: i.width,
                    height: i.height,
                    layers: i.layers,
                }
            ))))
        });
    }
    r
}

/// `vkCreateShaderModule`: the SPIR-V is recorded whole.
pub unsafe extern "system" fn create_shader_module(
    device: vk::Device,
    info: *const vk::ShaderModuleCreateInfo,
    allocator: *const vk::AllocationCallbacks,
    out: *mut vk::ShaderModule,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_0().create_shader_module)(device, info, allocator, out);
    if r == vk::Result::SUCCESS {
        let i = &*info;
        record(Scope::Setup, r.as_raw(), || {
            Some(CallT::CreateShaderModule(Box::new(table!(
                CreateShaderModuleT {
                    device: device.as_raw(),
                    shader_module: (*out).as_raw(),
                    flags: i.flags.as_raw(),
                    code: Some(slice(i.p_code, (i.code_size / 4) as u32).to_vec()),
                }
            ))))
        });
    }
    r
}

/// `vkCreatePipelineLayout`.
pub unsafe extern "system" fn create_pipeline_layout(
    device: vk::Device,
    info: *const vk::PipelineLayoutCreateInfo,
    allocator: *const vk::AllocationCallbacks,
    out: *mut vk::PipelineLayout,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_0().create_pipeline_layout)(device, info, allocator, out);
    if r == vk::Result::SUCCESS {
        let i = &*info;
        record(Scope::Setup, r.as_raw(), || {
            Some(CallT::CreatePipelineLayout(Box::new(table!(
                CreatePipelineLayoutT {
                    device: device.as_raw(),
                    pipeline_layout: (*out).as_raw(),
                    flags: i.flags.as_raw(),
                    set_layouts: Some(handles(i.p_set_layouts, i.set_layout_count)),
                    push_constant_ranges: Some(
                        slice(i.p_push_constant_ranges, i.push_constant_range_count)
                            .iter()
                            .map(|p| PushConstantRange::new(
                                p.stage_flags.as_raw(),
                                p.offset,
                                p.size
                            )
                            .unpack())
                            .collect(),
                    ),
                }
            ))))
        });
    }
    r
}

/// `vkCreateCommandPool`.
pub unsafe extern "system" fn create_command_pool(
    device: vk::Device,
    info: *const vk::CommandPoolCreateInfo,
    allocator: *const vk::AllocationCallbacks,
    out: *mut vk::CommandPool,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_0().create_command_pool)(device, info, allocator, out);
    if r == vk::Result::SUCCESS {
        record(Scope::Setup, r.as_raw(), || {
            Some(CallT::CreateCommandPool(Box::new(table!(
                CreateCommandPoolT {
                    device: device.as_raw(),
                    command_pool: (*out).as_raw(),
                    flags: (*info).flags.as_raw(),
                    queue_family_index: (*info).queue_family_index,
                }
            ))))
        });
    }
    r
}

/// `vkAllocateCommandBuffers`.
pub unsafe extern "system" fn allocate_command_buffers(
    device: vk::Device,
    info: *const vk::CommandBufferAllocateInfo,
    out: *mut vk::CommandBuffer,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_0().allocate_command_buffers)(device, info, out);
    if r == vk::Result::SUCCESS {
        let i = &*info;
        record(Scope::Setup, r.as_raw(), || {
            Some(CallT::AllocateCommandBuffers(Box::new(table!(
                AllocateCommandBuffersT {
                    device: device.as_raw(),
                    command_pool: i.command_pool.as_raw(),
                    level: i.level.as_raw() as u32,
                    command_buffers: Some(handles(out, i.command_buffer_count)),
                }
            ))))
        });
    }
    r
}

/// `vkCreateQueryPool`.
pub unsafe extern "system" fn create_query_pool(
    device: vk::Device,
    info: *const vk::QueryPoolCreateInfo,
    allocator: *const vk::AllocationCallbacks,
    out: *mut vk::QueryPool,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_0().create_query_pool)(device, info, allocator, out);
    if r == vk::Result::SUCCESS {
        let i = &*info;
        record(Scope::Setup, r.as_raw(), || {
            Some(CallT::CreateQueryPool(Box::new(table!(CreateQueryPoolT {
                device: device.as_raw(),
                query_pool: (*out).as_raw(),
                flags: i.flags.as_raw(),
                query_type: i.query_type.as_raw() as u32,
                query_count: i.query_count,
                pipeline_statistics: i.pipeline_statistics.as_raw(),
            }))))
        });
    }
    r
}

/// Logs, once, how host writes to mapped memory are found: by page protection, or by
/// comparison (asked for, or where a mapping could not be protected); nothing once
/// capture is over.
fn note_tracking(watched: Watched) {
    use crate::memory::Tracking;
    use crate::settings::LogLevel;
    use std::sync::atomic::{AtomicU8, Ordering};
    static SAID: AtomicU8 = AtomicU8::new(0);
    let (bit, message) = match (crate::recorder::settings().memory, watched) {
        (_, Watched::Not) => return,
        (Tracking::Protect, Watched::Protected) => {
            (1, "mapped memory: written pages found by page protection")
        }
        (Tracking::Protect, Watched::Compared) => (
            2,
            "mapped memory: a mapping could not be write-protected; comparing it whole",
        ),
        (Tracking::Compare, _) if crate::recorder::settings().under_valgrind => (
            4,
            "mapped memory: every mapped byte compared at each submit (under valgrind, which \
             stops on protected pages; MACROSCOPE_CAPTURE_MEMORY=protect overrides)",
        ),
        (Tracking::Compare, _) => (
            4,
            "mapped memory: every mapped byte compared at each submit",
        ),
    };
    if SAID.fetch_or(bit, Ordering::Relaxed) & bit == 0 {
        crate::recorder::log(LogLevel::Info, message);
    }
}

/// The device's mapped-memory tracker, locked (a panic elsewhere while it was held
/// leaves it usable); once capture is over, told so first, and it stops watching.
fn lock_mapped(d: &DeviceData) -> std::sync::MutexGuard<'_, crate::memory::MappedMemory> {
    let mut mapped = d.mapped.lock().unwrap_or_else(|e| e.into_inner());
    if crate::recorder::over() {
        mapped.capture_over();
    }
    mapped
}

fn destroyed(device: vk::Device, object_type: vk::ObjectType, handle: u64) {
    if handle != 0 {
        record(Scope::Setup, 0, || {
            Some(CallT::DestroyObject(Box::new(table!(DestroyObjectT {
                device: device.as_raw(),
                object_type: object_type.as_raw() as u32,
                handle,
            }))))
        });
    }
}

/// Hooks for `vkDestroy*` of objects the trace records: each records a
/// `DestroyObject` and calls down.
macro_rules! destroy_hooks {
    ($($hook:ident: $ty:ty, $object:ident, $field:ident;)*) => {$(
        #[doc = concat!("`vk", stringify!($field), "`")]
        pub unsafe extern "system" fn $hook(
            device: vk::Device,
            object: $ty,
            allocator: *const vk::AllocationCallbacks,
        ) {
            let Some(d) = dispatch::device_of(device) else {
                return;
            };
            destroyed(device, vk::ObjectType::$object, object.as_raw());
            crate::image_layouts::destroyed(vk::ObjectType::$object, object.as_raw());
            if matches!(vk::ObjectType::$object, vk::ObjectType::BUFFER | vk::ObjectType::IMAGE) {
                lock_mapped(&d).unbound(object.as_raw());
            }
            (d.fns.fp_v1_0().$field)(device, object, allocator);
        }
    )*};
}

destroy_hooks! {
    destroy_buffer: vk::Buffer, BUFFER, destroy_buffer;
    destroy_image: vk::Image, IMAGE, destroy_image;
    destroy_image_view: vk::ImageView, IMAGE_VIEW, destroy_image_view;
    destroy_render_pass: vk::RenderPass, RENDER_PASS, destroy_render_pass;
    destroy_framebuffer: vk::Framebuffer, FRAMEBUFFER, destroy_framebuffer;
    destroy_shader_module: vk::ShaderModule, SHADER_MODULE, destroy_shader_module;
    destroy_pipeline_layout: vk::PipelineLayout, PIPELINE_LAYOUT, destroy_pipeline_layout;
    destroy_pipeline: vk::Pipeline, PIPELINE, destroy_pipeline;
    destroy_command_pool: vk::CommandPool, COMMAND_POOL, destroy_command_pool;
    destroy_query_pool: vk::QueryPool, QUERY_POOL, destroy_query_pool;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_mapping_packs_a_byte_per_component_identity_as_zero() {
        assert_eq!(pack_components(vk::ComponentMapping::default()), 0);
        // Zink's luminance-alpha view: r, g and b from the red channel, alpha from green.
        let la = vk::ComponentMapping {
            r: vk::ComponentSwizzle::R,
            g: vk::ComponentSwizzle::R,
            b: vk::ComponentSwizzle::R,
            a: vk::ComponentSwizzle::G,
        };
        assert_eq!(pack_components(la), 0x04_03_03_03);
    }

    #[test]
    fn memory_imported_from_a_host_pointer_is_found_down_the_chain() {
        let page = vec![0u8; 8192];
        let mut import = vk::ImportMemoryHostPointerInfoEXT::default()
            .handle_type(vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT)
            .host_pointer(page.as_ptr() as *mut c_void);
        let mut flags = vk::MemoryAllocateFlagsInfo::default();
        let info = vk::MemoryAllocateInfo::default()
            .push_next(&mut import)
            .push_next(&mut flags);
        let mut null = vk::ImportMemoryHostPointerInfoEXT::default();
        let none = vk::MemoryAllocateInfo::default().push_next(&mut null);
        // SAFETY: well-formed chains that live across the calls.
        unsafe {
            assert_eq!(imported_host_pointer(&info), Some(page.as_ptr()));
            assert_eq!(imported_host_pointer(&none), None);
            assert_eq!(
                imported_host_pointer(&vk::MemoryAllocateInfo::default()),
                None
            );
        }
    }

    #[test]
    fn allocate_flags_are_found_down_the_chain() {
        let mut flags =
            vk::MemoryAllocateFlagsInfo::default().flags(vk::MemoryAllocateFlags::DEVICE_ADDRESS);
        let mut dedicated = vk::MemoryDedicatedAllocateInfo::default();
        let info = vk::MemoryAllocateInfo::default()
            .push_next(&mut flags)
            .push_next(&mut dedicated);
        // SAFETY: a well-formed chain that lives across the calls.
        unsafe {
            assert_eq!(allocate_flags(&info), 2);
            assert_eq!(allocate_flags(&vk::MemoryAllocateInfo::default()), 0);
        }
    }
}
