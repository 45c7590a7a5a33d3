//! Checksums of presented frames: at each present the layer copies every presented
//! image into a host-visible buffer (a submit of its own that waits for the program's
//! semaphores and signals one the present waits for instead), and a later present
//! hashes the texels (CRC-32, rows packed) and records a `FrameChecksum` that says how
//! many frames late it comes (`in_flight`), so that a replay on a device can say whether
//! it drew the same frames. Nothing waits on the CPU for the program's rendering.
//! Offscreen programs that name their frame's images at a frame boundary have them read
//! back at the submit, waiting for it, through a slot of the same read-backs.
//!
//! Which frames are read back is the [`sampling`] policy's choice (by default every
//! frame of a short capture, a few a second of a long one); at the presents it skips,
//! the checksums of finished read-backs are still recorded.
//!
//! Swapchains are created with `TRANSFER_SRC` added to their usage so their images
//! can be copied. `MACROSCOPE_CAPTURE_FRAME_CHECKSUMS=0` turns all this off.

mod in_flight;
mod readback;
mod sampling;

pub use sampling::FrameChecksums;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use ash::vk;
use ash::vk::Handle;
use trace_format::generated::trace::{CallT, FrameChecksumT};

use crate::dispatch::DeviceData;
use crate::recorder::{self, Scope};
use crate::settings::LogLevel;
use in_flight::{InFlight, Presented};
use readback::Source;
use sampling::Sampler;

/// A swapchain the program made: what reading its images back needs.
struct Swapchain {
    format: vk::Format,
    extent: vk::Extent2D,
    images: Vec<vk::Image>,
    copyable: bool,
}

#[derive(Default)]
struct State {
    swapchains: HashMap<u64, Swapchain>,
    queue_families: HashMap<u64, u32>,
    /// Each device's read-backs (of presents, and of images named at boundaries), by
    /// the device's handle.
    in_flight: HashMap<u64, InFlight>,
    /// Which frames are read back; made at the first frame that might be.
    sampler: Option<Sampler>,
}

impl State {
    /// Whether the frame the program is in now is read back (asked once a frame).
    fn read_back_now(&mut self) -> bool {
        let policy = recorder::settings().frame_checksums;
        self.sampler
            .get_or_insert_with(|| Sampler::new(policy))
            .take(recorder::frames_recorded(), Instant::now())
    }
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
    recorder::settings().frame_checksums != FrameChecksums::Off && !FAILED.load(Ordering::Relaxed)
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

/// Before a swapchain is destroyed: waits for the read-backs of its images still in
/// flight (they use them) and records them, then forgets it.
///
/// # Safety
/// `device` must be the live device of `swapchain`.
pub unsafe fn swapchain_destroying(device: vk::Device, swapchain: vk::SwapchainKHR) {
    let mut guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = guard.get_or_insert_with(State::default);
    state.swapchains.remove(&swapchain.as_raw());
    let Some(d) = crate::dispatch::device_of(device) else {
        return;
    };
    if let Some(f) = state.in_flight.get_mut(&d.handle.as_raw()) {
        if let Err(e) = f.swapchain_destroyed(d, swapchain.as_raw()) {
            give_up(&e.to_string());
        }
    }
}

/// At a present: copies the presented images back, overlapping the program, and
/// records the checksums of earlier presents' copies that have finished. Returns the
/// semaphore the present must wait for in place of the program's (signalled once the
/// copy, which waited for them, is done), or `None` where nothing was copied.
///
/// # Safety
/// `info` must be the program's valid present info for `queue`.
pub unsafe fn at_present(
    d: &DeviceData,
    queue: vk::Queue,
    info: &vk::PresentInfoKHR,
) -> Option<vk::Semaphore> {
    if !enabled() || info.swapchain_count == 0 || !recorder::recording_frame() {
        return None;
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
    if !state.read_back_now() {
        // Not this frame: earlier frames' read-backs that finished are recorded still,
        // so each comes as few frames after its present as it would have.
        if let Some(f) = state.in_flight.get_mut(&d.handle.as_raw()) {
            if let Err(e) = f.record_finished(d, false) {
                give_up(&e.to_string());
            }
        }
        return None;
    }
    let &family = state.queue_families.get(&queue.as_raw())?;
    let images: Vec<Presented> = swapchains
        .iter()
        .zip(indices)
        .filter_map(|(swapchain, &index)| {
            let sc = state.swapchains.get(&swapchain.as_raw())?;
            let texel = trace_format::frame_checksum::texel_size(sc.format.as_raw() as u32)?;
            let &image = sc.images.get(index as usize).filter(|_| sc.copyable)?;
            Some(Presented {
                swapchain: swapchain.as_raw(),
                image_index: index,
                format: sc.format,
                source: Source {
                    image,
                    layout: vk::ImageLayout::PRESENT_SRC_KHR,
                    extent: sc.extent,
                    texel,
                },
            })
        })
        .collect();
    if images.is_empty() {
        return None;
    }
    let in_flight = match in_flight_on(d, &mut state.in_flight, family) {
        Ok(f) => f,
        Err(e) => {
            give_up(&e.to_string());
            return None;
        }
    };
    match in_flight.present(d, queue, waits, &images) {
        Ok(signal) => Some(signal),
        Err(e) => {
            give_up(&e.to_string());
            None
        }
    }
}

/// The device's read-backs on queue family `family`: made at the first, and made anew
/// (the old family's copies finished first) when the program moves to another family.
///
/// # Safety
/// `d` must be a live device with a queue of `family`.
unsafe fn in_flight_on<'a>(
    d: &DeviceData,
    in_flight: &'a mut HashMap<u64, InFlight>,
    family: u32,
) -> Result<&'a mut InFlight, vk::Result> {
    let key = d.handle.as_raw();
    if in_flight.get(&key).is_some_and(|f| f.family != family) {
        if let Some(mut old) = in_flight.remove(&key) {
            let finished = old.finish_all(d);
            if finished.is_ok() {
                old.destroy(d);
            }
        }
    }
    match in_flight.entry(key) {
        std::collections::hash_map::Entry::Occupied(e) => Ok(e.into_mut()),
        std::collections::hash_map::Entry::Vacant(e) => Ok(e.insert(InFlight::new(d, family)?)),
    }
}

/// Before the frame ends: where the capture ends with it, waits for the read-backs in
/// flight and records them, so that the trace holds every presented frame's checksum.
///
/// # Safety
/// `d` must be a live device.
pub unsafe fn before_frame_end(d: &DeviceData) {
    if !recorder::last_frame_now() {
        return;
    }
    finish_in_flight(d);
}

/// Waits for the device's read-backs in flight and records them.
unsafe fn finish_in_flight(d: &DeviceData) {
    let mut guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = guard.get_or_insert_with(State::default);
    if let Some(f) = state.in_flight.get_mut(&d.handle.as_raw()) {
        if let Err(e) = f.finish_all(d) {
            give_up(&e.to_string());
        }
    }
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
    if !state.read_back_now() {
        return;
    }
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
        let source = Source {
            image,
            layout,
            extent: info.extent,
            texel,
        };
        let read = in_flight_on(d, &mut state.in_flight, family)
            .and_then(|in_flight| in_flight.read_now(d, queue, &source));
        match read {
            Ok(crc32) => {
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

/// Records the checksums of the device's read-backs still in flight and destroys its
/// read-back objects (at `vkDestroyDevice`).
///
/// # Safety
/// The device must be idle.
pub unsafe fn device_destroyed(d: &DeviceData) {
    finish_in_flight(d);
    let in_flight = with_state(|s| s.in_flight.remove(&d.handle.as_raw()));
    if let Some(f) = in_flight {
        f.destroy(d);
    }
}
