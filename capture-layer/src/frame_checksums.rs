//! Checksums of presented frames: at each present the layer copies every presented
//! image into a host-visible buffer (waiting for the program's rendering through the
//! present's semaphores), hashes its texels (CRC-32, rows packed) and records a
//! `FrameChecksum`, so that a replay on a device can say whether it drew the same
//! frames. The present then waits for nothing more: the copy waited for the rendering.
//!
//! Swapchains are created with `TRANSFER_SRC` added to their usage so their images
//! can be copied. `MACROSCOPE_CAPTURE_FRAME_CHECKSUMS=0` turns all this off.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use ash::vk;
use ash::vk::Handle;
use trace_format::generated::trace::{CallT, FrameChecksumT};

use crate::dispatch::DeviceData;
use crate::recorder::{self, Scope};
use crate::settings::LogLevel;

/// A swapchain the program made: what reading its images back needs.
struct Swapchain {
    format: vk::Format,
    extent: vk::Extent2D,
    images: Vec<vk::Image>,
    copyable: bool,
}

/// A device's read-back objects, made at its first present.
struct Reader {
    pool: vk::CommandPool,
    family: u32,
    fence: vk::Fence,
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    mapped: *const u8,
    size: u64,
}

// SAFETY: the mapping is only read under the state's lock.
unsafe impl Send for Reader {}

#[derive(Default)]
struct State {
    swapchains: HashMap<u64, Swapchain>,
    queue_families: HashMap<u64, u32>,
    readers: HashMap<u64, Reader>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Set when reading a frame back failed: checksums stop, capture goes on.
static FAILED: AtomicBool = AtomicBool::new(false);

/// Stops checksumming frames, with one log line.
fn give_up(why: &str) {
    if !FAILED.swap(true, Ordering::Relaxed) {
        recorder::log(LogLevel::Error, &format!("frame checksums stopped: {why}"));
    }
}

fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    let mut guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    f(guard.get_or_insert_with(State::default))
}

/// Whether frames are checksummed.
pub fn enabled() -> bool {
    recorder::settings().frame_checksums && !FAILED.load(Ordering::Relaxed)
}

/// Notes the family of a queue the program got.
pub fn queue_family(queue: vk::Queue, family: u32) {
    with_state(|s| s.queue_families.insert(queue.as_raw(), family));
}

/// The create info the driver gets: the program's, with transfer source added to the
/// images' usage (kept in `storage`).
///
/// # Safety
/// `info` must be a valid create info.
pub unsafe fn swapchain_info(
    info: *const vk::SwapchainCreateInfoKHR,
    storage: &mut vk::SwapchainCreateInfoKHR<'static>,
) -> *const vk::SwapchainCreateInfoKHR<'static> {
    if !enabled() || info.is_null() {
        return info.cast();
    }
    *storage = *info.cast::<vk::SwapchainCreateInfoKHR<'static>>();
    storage.image_usage |= vk::ImageUsageFlags::TRANSFER_SRC;
    storage
}

/// Notes a swapchain the program created.
///
/// # Safety
/// `info` must be the create info it was made from.
pub unsafe fn swapchain_created(
    swapchain: vk::SwapchainKHR,
    info: *const vk::SwapchainCreateInfoKHR,
    copyable: bool,
) {
    let Some(info) = info.as_ref() else {
        return;
    };
    with_state(|s| {
        s.swapchains.insert(
            swapchain.as_raw(),
            Swapchain {
                format: info.image_format,
                extent: info.image_extent,
                images: Vec::new(),
                copyable,
            },
        )
    });
}

/// Notes a swapchain's images, as `vkGetSwapchainImagesKHR` returned them.
///
/// # Safety
/// `count` and `images` must be what the call returned.
pub unsafe fn swapchain_images(
    swapchain: vk::SwapchainKHR,
    count: *const u32,
    images: *const vk::Image,
) {
    if count.is_null() || images.is_null() {
        return;
    }
    let list = std::slice::from_raw_parts(images, *count as usize).to_vec();
    with_state(|s| {
        if let Some(sc) = s.swapchains.get_mut(&swapchain.as_raw()) {
            sc.images = list;
        }
    });
}

/// Forgets a destroyed swapchain.
pub fn swapchain_destroyed(swapchain: vk::SwapchainKHR) {
    with_state(|s| s.swapchains.remove(&swapchain.as_raw()));
}

/// Reads the presented images back and records their checksums; returns whether it
/// did (the rendering is then finished, and the present need not wait).
///
/// # Safety
/// `info` must be the program's valid present info for `queue`.
pub unsafe fn at_present(d: &DeviceData, queue: vk::Queue, info: &vk::PresentInfoKHR) -> bool {
    if !enabled() || info.swapchain_count == 0 {
        return false;
    }
    let swapchains = std::slice::from_raw_parts(info.p_swapchains, info.swapchain_count as usize);
    let indices = std::slice::from_raw_parts(info.p_image_indices, info.swapchain_count as usize);
    let waits = if info.p_wait_semaphores.is_null() {
        &[][..]
    } else {
        std::slice::from_raw_parts(info.p_wait_semaphores, info.wait_semaphore_count as usize)
    };
    let mut guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = guard.get_or_insert_with(State::default);
    let Some(&family) = state.queue_families.get(&queue.as_raw()) else {
        return false;
    };
    let mut waited = false;
    for (swapchain, index) in swapchains.iter().zip(indices) {
        let Some(sc) = state.swapchains.get(&swapchain.as_raw()) else {
            continue;
        };
        let (Some(&image), Some(texel), true) = (
            sc.images.get(*index as usize),
            trace_format::frame_checksum::texel_size(sc.format.as_raw() as u32),
            sc.copyable,
        ) else {
            continue;
        };
        let size = u64::from(sc.extent.width) * u64::from(sc.extent.height) * texel;
        let reader = match reader(d, &mut state.readers, family, size) {
            Ok(r) => r,
            Err(e) => {
                give_up(&e.to_string());
                return waited;
            }
        };
        let wait_now = if waited { &[][..] } else { waits };
        let source = Source {
            image,
            layout: vk::ImageLayout::PRESENT_SRC_KHR,
            extent: sc.extent,
            texel,
        };
        match read(d, queue, reader, &source, wait_now) {
            Ok(texels) => {
                waited = true;
                let (format, extent) = (sc.format, sc.extent);
                let crc32 = trace_format::frame_checksum::checksum(texels);
                recorder::record(Scope::Frame, 0, || {
                    let mut t = FrameChecksumT::default();
                    t.swapchain = swapchain.as_raw();
                    t.image_index = *index;
                    t.width = extent.width;
                    t.height = extent.height;
                    t.format = format.as_raw() as u32;
                    t.crc32 = crc32;
                    Some(CallT::FrameChecksum(Box::new(t)))
                });
            }
            Err(e) => {
                give_up(&e.to_string());
                return waited;
            }
        }
    }
    waited
}

/// At a submit that ends a frame and names `images` (`VkFrameBoundaryEXT`): reads each
/// back after the submit and records its checksum, where its layout after the submit is
/// known and it can be copied from. The first such boundary starts following layouts,
/// so its images are checksummed from the next frame on.
///
/// # Safety
/// `queue` must be the queue just submitted to; `images` live images of the device.
pub unsafe fn at_boundary(d: &DeviceData, queue: vk::Queue, images: &[vk::Image]) {
    if !enabled() || images.is_empty() {
        return;
    }
    crate::image_layouts::start();
    let mut guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = guard.get_or_insert_with(State::default);
    let Some(&family) = state.queue_families.get(&queue.as_raw()) else {
        return;
    };
    for &image in images {
        let (Some(info), Some(layout)) = (
            crate::image_layouts::image_info(image),
            crate::image_layouts::layout_of(image),
        ) else {
            continue;
        };
        let Some(texel) = trace_format::frame_checksum::texel_size(info.format.as_raw() as u32)
        else {
            continue;
        };
        if !info.copyable {
            continue;
        }
        let size = u64::from(info.extent.width) * u64::from(info.extent.height) * texel;
        let reader = match reader(d, &mut state.readers, family, size) {
            Ok(r) => r,
            Err(e) => return give_up(&e.to_string()),
        };
        let source = Source {
            image,
            layout,
            extent: info.extent,
            texel,
        };
        match read(d, queue, reader, &source, &[]) {
            Ok(texels) => {
                let crc32 = trace_format::frame_checksum::checksum(texels);
                recorder::record(Scope::Frame, 0, || {
                    let mut t = FrameChecksumT::default();
                    t.image = image.as_raw();
                    t.layout = layout.as_raw() as u32;
                    t.width = info.extent.width;
                    t.height = info.extent.height;
                    t.format = info.format.as_raw() as u32;
                    t.crc32 = crc32;
                    Some(CallT::FrameChecksum(Box::new(t)))
                });
            }
            Err(e) => return give_up(&e.to_string()),
        }
    }
}

/// The device's reader on `family`, with room for `size` bytes.
unsafe fn reader<'a>(
    d: &DeviceData,
    readers: &'a mut HashMap<u64, Reader>,
    family: u32,
    size: u64,
) -> Result<&'a mut Reader, vk::Result> {
    let key = d.handle.as_raw();
    let stale = readers
        .get(&key)
        .is_some_and(|r| r.size < size || r.family != family);
    if stale {
        if let Some(r) = readers.remove(&key) {
            destroy_reader(d, r);
        }
    }
    if let std::collections::hash_map::Entry::Vacant(slot) = readers.entry(key) {
        let f = &d.fns;
        let pool = f.create_command_pool(
            &vk::CommandPoolCreateInfo::default()
                .queue_family_index(family)
                .flags(
                    vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER
                        | vk::CommandPoolCreateFlags::TRANSIENT,
                ),
            None,
        )?;
        let fence = f.create_fence(&vk::FenceCreateInfo::default(), None)?;
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
            return Err(vk::Result::ERROR_OUT_OF_HOST_MEMORY);
        }
        let memory = f.allocate_memory(
            &vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(bits.trailing_zeros()),
            None,
        )?;
        f.bind_buffer_memory(buffer, memory, 0)?;
        let mapped =
            f.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())? as *const u8;
        slot.insert(Reader {
            pool,
            family,
            fence,
            buffer,
            memory,
            mapped,
            size,
        });
    }
    readers.get_mut(&key).ok_or(vk::Result::ERROR_UNKNOWN)
}

unsafe fn destroy_reader(d: &DeviceData, r: Reader) {
    let f = &d.fns;
    f.destroy_buffer(r.buffer, None);
    f.free_memory(r.memory, None);
    f.destroy_fence(r.fence, None);
    f.destroy_command_pool(r.pool, None);
}

/// An image to read back: in `layout`, and left in it.
struct Source {
    image: vk::Image,
    layout: vk::ImageLayout,
    extent: vk::Extent2D,
    texel: u64,
}

/// Copies `source` out after `waits` and returns its texels.
unsafe fn read<'r>(
    d: &DeviceData,
    queue: vk::Queue,
    r: &'r Reader,
    source: &Source,
    waits: &[vk::Semaphore],
) -> Result<&'r [u8], vk::Result> {
    let Source {
        image,
        layout,
        extent,
        texel,
    } = *source;
    let f = &d.fns;
    let cb = f.allocate_command_buffers(
        &vk::CommandBufferAllocateInfo::default()
            .command_pool(r.pool)
            .command_buffer_count(1),
    )?[0];
    // The loader's dispatch pointer, as for every dispatchable object a layer makes.
    *(cb.as_raw() as *mut usize) = *(d.handle.as_raw() as *const usize);
    f.begin_command_buffer(
        cb,
        &vk::CommandBufferBeginInfo::default().flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
    )?;
    let range = vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: 1,
    };
    let barrier = |from, to, src, dst| {
        vk::ImageMemoryBarrier::default()
            .old_layout(from)
            .new_layout(to)
            .src_access_mask(src)
            .dst_access_mask(dst)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(image)
            .subresource_range(range)
    };
    let present = layout;
    let transfer = vk::ImageLayout::TRANSFER_SRC_OPTIMAL;
    f.cmd_pipeline_barrier(
        cb,
        vk::PipelineStageFlags::ALL_COMMANDS,
        vk::PipelineStageFlags::TRANSFER,
        vk::DependencyFlags::empty(),
        &[],
        &[],
        &[barrier(
            present,
            transfer,
            vk::AccessFlags::MEMORY_WRITE,
            vk::AccessFlags::TRANSFER_READ,
        )],
    );
    let region = vk::BufferImageCopy::default()
        .image_subresource(vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        })
        .image_extent(vk::Extent3D {
            width: extent.width,
            height: extent.height,
            depth: 1,
        });
    f.cmd_copy_image_to_buffer(cb, image, transfer, r.buffer, &[region]);
    f.cmd_pipeline_barrier(
        cb,
        vk::PipelineStageFlags::TRANSFER,
        vk::PipelineStageFlags::ALL_COMMANDS | vk::PipelineStageFlags::HOST,
        vk::DependencyFlags::empty(),
        &[vk::MemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::HOST_READ)],
        &[],
        &[barrier(
            transfer,
            present,
            vk::AccessFlags::TRANSFER_READ,
            vk::AccessFlags::MEMORY_READ,
        )],
    );
    f.end_command_buffer(cb)?;
    let stages = vec![vk::PipelineStageFlags::ALL_COMMANDS; waits.len()];
    let cbs = [cb];
    let submit = vk::SubmitInfo::default()
        .wait_semaphores(waits)
        .wait_dst_stage_mask(&stages)
        .command_buffers(&cbs);
    let result = f
        .queue_submit(queue, &[submit], r.fence)
        .and_then(|()| f.wait_for_fences(&[r.fence], true, u64::MAX))
        .and_then(|()| f.reset_fences(&[r.fence]));
    f.free_command_buffers(r.pool, &cbs);
    result?;
    let size = u64::from(extent.width) * u64::from(extent.height) * texel;
    Ok(std::slice::from_raw_parts(
        r.mapped,
        size.min(r.size) as usize,
    ))
}

/// Destroys a device's read-back objects (at `vkDestroyDevice`).
///
/// # Safety
/// The device must be idle.
pub unsafe fn device_destroyed(d: &DeviceData) {
    let reader = with_state(|s| s.readers.remove(&d.handle.as_raw()));
    if let Some(r) = reader {
        destroy_reader(d, r);
    }
}
