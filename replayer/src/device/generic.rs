//! Generic records (`VulkanCall`) on the device: replayed by the functions generated
//! from the registry, by hand (swapchains, descriptor update templates), or answered
//! without a call.

use ash::vk;
use ash::vk::Handle;
use trace_format::generic_params::Param;

use super::call::{CallContext, CallError};
use super::{frames, templates, DeviceError, Replay};
use crate::generated::device_calls::{self, Disposition};

/// The debug-label commands: replayed where the device offers them (a profiler
/// watching the replay sees the program's regions), answered without it where not.
const LABELS: &[&str] = &[
    "vkCmdBeginDebugUtilsLabelEXT",
    "vkCmdEndDebugUtilsLabelEXT",
    "vkCmdInsertDebugUtilsLabelEXT",
    "vkQueueBeginDebugUtilsLabelEXT",
    "vkQueueEndDebugUtilsLabelEXT",
    "vkQueueInsertDebugUtilsLabelEXT",
];

/// Commands a serialized replay answers without calling: every submit already waited
/// for its work (so a fence it signals is signalled, and one no replayed submit
/// signals — a trace captured from a later frame on — never would be), and timeline
/// values are not in the trace.
const SERIAL_NO_OPS: &[&str] = &[
    "vkWaitForFences",
    "vkWaitSemaphores",
    "vkWaitSemaphoresKHR",
    "vkSignalSemaphore",
    "vkSignalSemaphoreKHR",
    "vkGetSemaphoreCounterValue",
    "vkGetSemaphoreCounterValueKHR",
    "vkQueueWaitIdle",
    "vkDeviceWaitIdle",
];

/// Commands that hand a fence's, a semaphore's or an allocation's payload over a file
/// descriptor, to another process or API, answered without calling: the descriptor
/// the trace holds is the capturing process's, nothing the replay has (an import would
/// take whatever the replay holds under that number), and a serialized replay's
/// submits signal no semaphore, so exporting one as a sync file would wait forever for
/// a signal that never comes (Mesa's runtime waits for a pending signal before
/// exporting one: Weston's Vulkan renderer exports its render-done semaphore after
/// each repaint).
const EXTERNAL_HANDLE_NO_OPS: &[&str] = &[
    "vkGetSemaphoreFdKHR",
    "vkImportSemaphoreFdKHR",
    "vkGetFenceFdKHR",
    "vkImportFenceFdKHR",
    "vkGetMemoryFdKHR",
    "vkGetMemoryFdPropertiesKHR",
];

/// The most images a swapchain stands in for (a hostile count would allocate without end).
const MAX_SWAPCHAIN_IMAGES: usize = 64;

/// Generically recorded commands that are timed like draws (the compute ones).
const TIMED_COMMANDS: &[&str] = &[
    "vkCmdDispatch",
    "vkCmdDispatchBase",
    "vkCmdDispatchBaseKHR",
    "vkCmdDispatchIndirect",
];

impl Replay {
    /// What a replay function needs for call `seq` of `name`, which returned
    /// `recorded_result` in the capture; the arena emptied.
    pub(super) fn call_context(
        &mut self,
        seq: u64,
        name: &str,
        recorded_result: i32,
    ) -> Result<CallContext<'_>, DeviceError> {
        let functions = self
            .functions
            .as_mut()
            .ok_or_else(|| DeviceError::call(seq, name, "before vkCreateInstance"))?;
        self.arena.clear();
        Ok(CallContext {
            handles: &mut self.handles,
            functions,
            arena: &mut self.arena,
            recorded_result,
        })
    }

    /// A generic record: replayed by its generated function, by hand, or answered.
    pub(super) fn generic(
        &mut self,
        seq: u64,
        result: i32,
        c: &trace_format::generated::trace::VulkanCall<'_>,
    ) -> Result<(), DeviceError> {
        let name = trace_format::names::generic_command(c).unwrap_or_default();
        let params = crate::generic::read::params_of(c).map_err(|e| DeviceError::BadRecord {
            seq,
            command: name.to_string(),
            reason: e.to_string(),
        })?;
        if name == "vkGetPhysicalDeviceMemoryProperties"
            || name == "vkGetPhysicalDeviceMemoryProperties2"
            || name == "vkGetPhysicalDeviceMemoryProperties2KHR"
        {
            if let Some(bytes) = params.get(1).and_then(|p| p.bytes()) {
                // The 2 variant's structure holds the properties after sType and pNext.
                let skip = if name.ends_with("Properties") { 0 } else { 16 };
                let b = bytes.get(skip..).unwrap_or(&[]).to_vec();
                if let Some(m) = &mut self.memory {
                    m.set_captured_properties(&b);
                }
                self.captured_memory_properties = Some(b);
            }
        }
        if self.keep_objects && (name.starts_with("vkDestroy") || name.starts_with("vkFree")) {
            *self.summary.skipped.entry(name.to_string()).or_default() += 1;
            return Ok(());
        }
        if SERIAL_NO_OPS.contains(&name) || EXTERNAL_HANDLE_NO_OPS.contains(&name) {
            *self.summary.skipped.entry(name.to_string()).or_default() += 1;
            return Ok(());
        }
        match device_calls::disposition(name) {
            Disposition::Skipped => {
                *self.summary.skipped.entry(name.to_string()).or_default() += 1;
                Ok(())
            }
            Disposition::Hand => self.by_hand(seq, name, &params),
            Disposition::NotReplayable(why) => Err(DeviceError::call(
                seq,
                name,
                format!("not replayable: {why}"),
            )),
            Disposition::Unknown => Err(DeviceError::bad(seq, name, "an unknown command")),
            Disposition::Generated => {
                let timed = match (&self.timing, &self.device) {
                    (Some(_), Some(_)) if TIMED_COMMANDS.contains(&name) => {
                        let id = params.first().map_or(0, |p| p.value());
                        Some(self.handle::<vk::CommandBuffer>(id, seq, name)?)
                    }
                    _ => None,
                };
                if let (Some(cb), Some(t), Some(device)) =
                    (timed, self.timing.as_mut(), &self.device)
                {
                    t.before(device, cb, seq)
                        .map_err(|e| DeviceError::call(seq, name, e))?;
                }
                let mut cx = self.call_context(seq, name, result)?;
                // SAFETY: the handles in the record map to live objects of the replay.
                match unsafe { device_calls::replay(&mut cx, name, &params) } {
                    Ok(_) => {}
                    // A label the program set where the driver offers none (the capture
                    // layer provides them as any tool may): it changes nothing drawn.
                    Err(CallError::NoFunction(_)) if LABELS.contains(&name) => {
                        self.arena.clear();
                        *self.summary.skipped.entry(name.to_string()).or_default() += 1;
                        return Ok(());
                    }
                    Err(e) => return Err(DeviceError::of_call(seq, name, e)),
                }
                self.arena.clear();
                if let (Some(cb), Some(t), Some(device)) =
                    (timed, self.timing.as_mut(), &self.device)
                {
                    t.after(device, cb);
                }
                if name.starts_with("vkCreateDescriptorUpdateTemplate") {
                    if let Some((id, entries)) = templates::created(&params) {
                        self.templates.insert(id, entries);
                    }
                }
                self.summary.calls += 1;
                Ok(())
            }
        }
    }

    /// The generic records the replay answers by hand: swapchains and their images.
    fn by_hand(&mut self, seq: u64, name: &str, p: &[Param<'_>]) -> Result<(), DeviceError> {
        let bytes = |i: usize| p.get(i).and_then(|p| p.bytes()).unwrap_or_default();
        let id_at = |b: &[u8], i: usize| {
            b.get(i * 8..i * 8 + 8)
                .and_then(|s| s.try_into().ok())
                .map_or(0, u64::from_le_bytes)
        };
        match name {
            "vkCreateSwapchainKHR" => {
                let s = frames::swapchain_of(bytes(1)).ok_or_else(|| {
                    DeviceError::bad(seq, name, "a short VkSwapchainCreateInfoKHR")
                })?;
                self.swapchains.insert(id_at(bytes(3), 0), s);
            }
            "vkGetSwapchainImagesKHR" => {
                let ids = bytes(3);
                if ids.is_empty() {
                    return Ok(());
                }
                let swapchain = p.get(1).map_or(0, |p| p.value());
                let device = self
                    .device
                    .as_ref()
                    .ok_or_else(|| DeviceError::call(seq, name, "before vkCreateDevice"))?;
                let memory = self
                    .memory
                    .as_ref()
                    .ok_or_else(|| DeviceError::call(seq, name, "before vkCreateDevice"))?;
                let s = self
                    .swapchains
                    .get_mut(&swapchain)
                    .ok_or_else(|| DeviceError::bad(seq, name, "an unknown swapchain"))?;
                let count = ids.len() / 8;
                if count > MAX_SWAPCHAIN_IMAGES {
                    return Err(DeviceError::call(seq, name, format!("{count} swapchain images (at most {MAX_SWAPCHAIN_IMAGES} are replayed)")));
                }
                frames::create_images(device, memory, s, count, seq)?;
                for (i, (image, _)) in s.images.iter().enumerate() {
                    self.handles
                        .insert(vk::ObjectType::IMAGE, id_at(ids, i), image.as_raw());
                }
            }
            "vkAcquireNextImageKHR" => {
                // The image is free at once: signal the fence the program waits on, and
                // wait for the signal here, as for every submit of a serialized replay
                // (its vkWaitForFences is answered without calling, and a program may
                // destroy the fence right after: RetroArch makes a fence for each
                // acquire).
                let fence: vk::Fence = self.handle(p.get(4).map_or(0, |p| p.value()), seq, name)?;
                if fence != vk::Fence::null() {
                    let device = self.device(seq)?;
                    // SAFETY: a live queue and fence.
                    unsafe {
                        device
                            .queue_submit(self.queue, &[], fence)
                            .and_then(|()| device.wait_for_fences(&[fence], true, u64::MAX))
                    }
                    .map_err(|e| DeviceError::call(seq, name, e))?;
                }
            }
            "vkDestroySwapchainKHR" => {
                let id = p.get(1).map_or(0, |p| p.value());
                if let (Some(s), Some(device)) = (self.swapchains.remove(&id), &self.device) {
                    // SAFETY: the program destroyed the swapchain after its last use.
                    unsafe {
                        device.device_wait_idle().ok();
                        for (image, mem) in s.images {
                            device.destroy_image(image, None);
                            device.free_memory(mem, None);
                        }
                    }
                }
            }
            "vkCmdPushDescriptorSetWithTemplateKHR" | "vkCmdPushDescriptorSetWithTemplate" => {
                self.template_update(seq, name, p, 1, 4)?;
            }
            "vkUpdateDescriptorSetWithTemplate" | "vkUpdateDescriptorSetWithTemplateKHR" => {
                self.template_update(seq, name, p, 2, 3)?;
            }
            _ => {
                return Err(DeviceError::call(
                    seq,
                    name,
                    "not replayable on a device yet",
                ))
            }
        }
        self.summary.calls += 1;
        Ok(())
    }

    /// A template update (`vkUpdateDescriptorSetWithTemplate`, `vkCmdPushDescriptorSetWithTemplate`):
    /// its data rebuilt by the template's entries; the template is parameter
    /// `template_at`, the data `data_at`.
    fn template_update(
        &mut self,
        seq: u64,
        name: &str,
        p: &[Param<'_>],
        template_at: usize,
        data_at: usize,
    ) -> Result<(), DeviceError> {
        let fail = |e: CallError| DeviceError::of_call(seq, name, e);
        let template_id = p.get(template_at).map_or(0, |p| p.value());
        let entries =
            self.templates.get(&template_id).cloned().ok_or_else(|| {
                DeviceError::bad(seq, name, "an unknown descriptor update template")
            })?;
        let data = *p
            .get(data_at)
            .ok_or_else(|| DeviceError::bad(seq, name, "a short record"))?;
        let mut cx = self.call_context(seq, name, 0)?;
        let value = |i: usize| p.get(i).map_or(0, |p| p.value());
        let template = vk::DescriptorUpdateTemplate::from_raw(
            cx.handle(vk::ObjectType::DESCRIPTOR_UPDATE_TEMPLATE, template_id)
                .map_err(fail)?,
        );
        let data = templates::rebuild(&mut cx, &entries, data).map_err(fail)?;
        // SAFETY: the handles are the replay's live objects; `data` lives in the arena
        // until it is cleared below.
        unsafe {
            if template_at == 1 {
                let f: vk::PFN_vkCmdPushDescriptorSetWithTemplateKHR = cx
                    .device_fn(c"vkCmdPushDescriptorSetWithTemplateKHR")
                    .map_err(fail)?;
                let cb = vk::CommandBuffer::from_raw(
                    cx.handle(vk::ObjectType::COMMAND_BUFFER, value(0))
                        .map_err(fail)?,
                );
                let layout = vk::PipelineLayout::from_raw(
                    cx.handle(vk::ObjectType::PIPELINE_LAYOUT, value(2))
                        .map_err(fail)?,
                );
                f(cb, template, layout, value(3) as u32, data);
            } else {
                let f: vk::PFN_vkUpdateDescriptorSetWithTemplate = cx
                    .device_fn(c"vkUpdateDescriptorSetWithTemplate")
                    .map_err(fail)?;
                let device = vk::Device::from_raw(
                    cx.handle(vk::ObjectType::DEVICE, value(0)).map_err(fail)?,
                );
                let set = vk::DescriptorSet::from_raw(
                    cx.handle(vk::ObjectType::DESCRIPTOR_SET, value(1))
                        .map_err(fail)?,
                );
                f(device, set, template, data);
            }
        }
        self.arena.clear();
        Ok(())
    }
}
