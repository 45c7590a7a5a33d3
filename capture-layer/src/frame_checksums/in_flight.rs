//! Read-backs of presented frames that overlap the program: a present's images are
//! copied by a submit of the layer's own that waits for the program's semaphores and
//! signals one the present then waits for; nobody waits on the CPU. A later present
//! takes the checksums of the copies that have finished (or waits for the oldest when
//! every slot is busy), and records them `frames_late` frames after their present.
//! Before the capture's last frame ends, at a swapchain's destruction and with the
//! device, every copy still in flight is waited for and recorded.

use std::collections::HashMap;

use ash::vk;
use trace_format::generated::trace::{CallT, FrameChecksumT};

use super::readback::{record_copies, set_loader_dispatch, HostBuffer, Source};
use crate::dispatch::DeviceData;
use crate::recorder::{self, Scope};

/// How many presents' read-backs a device may have in flight: as many frames as
/// programs commonly keep in flight, and one more.
const SLOTS: usize = 3;

/// One presented image, copied into a slot's buffer at `offset`.
struct Copied {
    swapchain: u64,
    image_index: u32,
    format: vk::Format,
    extent: vk::Extent2D,
    offset: u64,
    len: u64,
}

/// A read-back buffer with the command buffer and fence of its copies; busy from its
/// submit until its checksums are recorded.
struct Slot {
    cb: vk::CommandBuffer,
    fence: vk::Fence,
    buffer: Option<HostBuffer>,
    /// The frame whose present it copied.
    frame: u64,
    /// What it copied, empty while it is free.
    copied: Vec<Copied>,
}

/// An image a present shows, as the read-back needs it.
pub struct Presented {
    pub swapchain: u64,
    pub image_index: u32,
    pub format: vk::Format,
    pub source: Source,
}

/// A device's read-backs in flight on one queue family.
pub struct InFlight {
    pub family: u32,
    pool: vk::CommandPool,
    slots: Vec<Slot>,
    /// What each present's copy signals and the present waits for, one per swapchain
    /// image: a present's wait on it is over once the program has acquired that image
    /// again, so the next present of the image may have it signalled anew.
    signals: HashMap<(u64, u32), vk::Semaphore>,
    /// Those of destroyed swapchains, destroyed with the device.
    retired: Vec<vk::Semaphore>,
}

// SAFETY: the slots' mappings are only read under the checksums' state lock.
unsafe impl Send for InFlight {}

impl InFlight {
    /// Makes the command pool read-backs on queue family `family` use.
    ///
    /// # Safety
    /// `d` must be a live device with a queue of `family`.
    pub unsafe fn new(d: &DeviceData, family: u32) -> Result<Self, vk::Result> {
        let pool = d.fns.create_command_pool(
            &vk::CommandPoolCreateInfo::default()
                .queue_family_index(family)
                .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER),
            None,
        )?;
        Ok(Self {
            family,
            pool,
            slots: Vec::new(),
            signals: HashMap::new(),
            retired: Vec::new(),
        })
    }

    /// Copies the images of a present on `queue`, after the program's `waits`, and
    /// returns the semaphore the present must wait for instead. First records the
    /// checksums of copies that have finished.
    ///
    /// # Safety
    /// `queue` must be a queue of the device and family, externally synchronized as
    /// `vkQueuePresentKHR` has it; the images must be presentable images the present
    /// shows, in `PRESENT_SRC_KHR`.
    pub unsafe fn present(
        &mut self,
        d: &DeviceData,
        queue: vk::Queue,
        waits: &[vk::Semaphore],
        images: &[Presented],
    ) -> Result<vk::Semaphore, vk::Result> {
        self.record_finished(d, false)?;
        let slot = self.free_slot(d)?;
        let mut sources = Vec::with_capacity(images.len());
        let mut copied = Vec::with_capacity(images.len());
        let mut offset = 0u64;
        for p in images {
            let len = p.source.len();
            sources.push((p.source, offset));
            copied.push(Copied {
                swapchain: p.swapchain,
                image_index: p.image_index,
                format: p.format,
                extent: p.source.extent,
                offset,
                len,
            });
            // Buffer copies' offsets must be multiples of 4 (and of the texel size).
            offset += len.next_multiple_of(16);
        }
        let f = &d.fns;
        let slot = &mut self.slots[slot];
        if slot.buffer.as_ref().is_none_or(|b| b.size < offset) {
            if let Some(old) = slot.buffer.take() {
                old.destroy(d);
            }
            slot.buffer = Some(HostBuffer::new(d, offset.max(1))?);
        }
        let buffer = slot
            .buffer
            .as_ref()
            .map_or(vk::Buffer::null(), |b| b.buffer);
        f.begin_command_buffer(
            slot.cb,
            &vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
        )?;
        record_copies(d, slot.cb, &sources, buffer);
        f.end_command_buffer(slot.cb)?;
        let first = images
            .first()
            .map_or((0, 0), |p| (p.swapchain, p.image_index));
        let signal = match self.signals.get(&first) {
            Some(&s) => s,
            None => {
                let s = f.create_semaphore(&vk::SemaphoreCreateInfo::default(), None)?;
                self.signals.insert(first, s);
                s
            }
        };
        let stages = vec![vk::PipelineStageFlags::ALL_COMMANDS; waits.len()];
        let cbs = [slot.cb];
        let signals = [signal];
        let submit = vk::SubmitInfo::default()
            .wait_semaphores(waits)
            .wait_dst_stage_mask(&stages)
            .command_buffers(&cbs)
            .signal_semaphores(&signals);
        f.queue_submit(queue, &[submit], slot.fence)?;
        slot.frame = recorder::frame();
        slot.copied = copied;
        Ok(signal)
    }

    /// Copies `source` after all earlier work on `queue`, waits for the copy, and
    /// returns the checksum of its texels: the read-back of an image a program names at
    /// a frame boundary (which has no present to wait on it). Takes a free slot as a
    /// present does, and leaves it free.
    ///
    /// # Safety
    /// `queue` must be a queue of the device and family, externally synchronized as
    /// `vkQueueSubmit` has it; `source` a live image of the device in its layout.
    pub unsafe fn read_now(
        &mut self,
        d: &DeviceData,
        queue: vk::Queue,
        source: &Source,
    ) -> Result<u32, vk::Result> {
        let slot = self.free_slot(d)?;
        let f = &d.fns;
        let slot = &mut self.slots[slot];
        let len = source.len();
        if slot.buffer.as_ref().is_none_or(|b| b.size < len) {
            if let Some(old) = slot.buffer.take() {
                old.destroy(d);
            }
            slot.buffer = Some(HostBuffer::new(d, len.max(1))?);
        }
        let Some(buffer) = &slot.buffer else {
            return Err(vk::Result::ERROR_UNKNOWN);
        };
        f.begin_command_buffer(
            slot.cb,
            &vk::CommandBufferBeginInfo::default()
                .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT),
        )?;
        record_copies(d, slot.cb, &[(*source, 0)], buffer.buffer);
        f.end_command_buffer(slot.cb)?;
        let cbs = [slot.cb];
        f.queue_submit(
            queue,
            &[vk::SubmitInfo::default().command_buffers(&cbs)],
            slot.fence,
        )?;
        f.wait_for_fences(&[slot.fence], true, u64::MAX)?;
        f.reset_fences(&[slot.fence])?;
        Ok(trace_format::frame_checksum::checksum(buffer.bytes(0, len)))
    }

    /// Waits for every copy in flight and records its checksums.
    ///
    /// # Safety
    /// `d` must be the live device the read-backs were made on.
    pub unsafe fn finish_all(&mut self, d: &DeviceData) -> Result<(), vk::Result> {
        self.record_finished(d, true)
    }

    /// Waits for the copies of `swapchain`'s images in flight and records them, and
    /// retires its semaphores (at its destruction).
    ///
    /// # Safety
    /// As [`InFlight::finish_all`].
    pub unsafe fn swapchain_destroyed(
        &mut self,
        d: &DeviceData,
        swapchain: u64,
    ) -> Result<(), vk::Result> {
        if self
            .slots
            .iter()
            .any(|s| s.copied.iter().any(|c| c.swapchain == swapchain))
        {
            self.record_finished(d, true)?;
        }
        let gone: Vec<_> = self
            .signals
            .keys()
            .filter(|(s, _)| *s == swapchain)
            .copied()
            .collect();
        for key in gone {
            if let Some(s) = self.signals.remove(&key) {
                self.retired.push(s);
            }
        }
        Ok(())
    }

    /// Destroys everything it made.
    ///
    /// # Safety
    /// The device must be idle.
    pub unsafe fn destroy(self, d: &DeviceData) {
        let f = &d.fns;
        for slot in &self.slots {
            if let Some(b) = &slot.buffer {
                b.destroy(d);
            }
            f.destroy_fence(slot.fence, None);
        }
        for &s in self.signals.values().chain(&self.retired) {
            f.destroy_semaphore(s, None);
        }
        f.destroy_command_pool(self.pool, None);
    }

    /// A free slot's index: a new one while there are fewer than [`SLOTS`], else the
    /// oldest busy one once its copies are finished and recorded.
    unsafe fn free_slot(&mut self, d: &DeviceData) -> Result<usize, vk::Result> {
        if let Some(i) = self.slots.iter().position(|s| s.copied.is_empty()) {
            return Ok(i);
        }
        if self.slots.len() < SLOTS {
            let f = &d.fns;
            let cb = f.allocate_command_buffers(
                &vk::CommandBufferAllocateInfo::default()
                    .command_pool(self.pool)
                    .command_buffer_count(1),
            )?[0];
            set_loader_dispatch(d, cb);
            let fence = f.create_fence(&vk::FenceCreateInfo::default(), None)?;
            self.slots.push(Slot {
                cb,
                fence,
                buffer: None,
                frame: 0,
                copied: Vec::new(),
            });
            return Ok(self.slots.len() - 1);
        }
        let oldest = self
            .slots
            .iter()
            .enumerate()
            .min_by_key(|(_, s)| s.frame)
            .map_or(0, |(i, _)| i);
        self.take(d, oldest)?;
        Ok(oldest)
    }

    /// Records the checksums of every busy slot whose copies have finished (all of
    /// them, waiting, with `wait`), oldest first.
    ///
    /// # Safety
    /// `d` must be the live device the read-backs were made on.
    pub unsafe fn record_finished(&mut self, d: &DeviceData, wait: bool) -> Result<(), vk::Result> {
        let mut busy: Vec<usize> = (0..self.slots.len())
            .filter(|&i| !self.slots[i].copied.is_empty())
            .collect();
        busy.sort_by_key(|&i| self.slots[i].frame);
        for i in busy {
            if !wait && !d.fns.get_fence_status(self.slots[i].fence)? {
                // Copies finish in the order they were submitted.
                break;
            }
            self.take(d, i)?;
        }
        Ok(())
    }

    /// Waits for slot `i`'s copies, records their checksums and frees it.
    unsafe fn take(&mut self, d: &DeviceData, i: usize) -> Result<(), vk::Result> {
        let slot = &mut self.slots[i];
        d.fns.wait_for_fences(&[slot.fence], true, u64::MAX)?;
        d.fns.reset_fences(&[slot.fence])?;
        let frames_late = recorder::frame().saturating_sub(slot.frame);
        let frames_late = u32::try_from(frames_late).unwrap_or(u32::MAX);
        let copied = std::mem::take(&mut slot.copied);
        let Some(buffer) = &slot.buffer else {
            return Ok(());
        };
        for c in copied {
            let crc32 = trace_format::frame_checksum::checksum(buffer.bytes(c.offset, c.len));
            recorder::record(Scope::Frame, 0, || {
                let mut t = FrameChecksumT::default();
                t.swapchain = c.swapchain;
                t.image_index = c.image_index;
                t.width = c.extent.width;
                t.height = c.extent.height;
                t.format = c.format.as_raw() as u32;
                t.crc32 = crc32;
                t.frames_late = frames_late;
                Some(CallT::FrameChecksum(Box::new(t)))
            });
        }
        Ok(())
    }
}
