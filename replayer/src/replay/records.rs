//! Records that create or describe objects: the generic calls' setup half,
//! uniform-buffer descriptors and update templates, swapchain calls.

use super::generic_memo::Taken;
use super::*;
use crate::device::templates::RecordedRuns;
use driver::spirv::specialize::Specialization;
use trace_format::generic_params::Param;

/// The swapchain calls (and compute pipelines' creation), which say what images a
/// program renders to.
const SWAPCHAIN_CALLS: [&str; 4] = [
    "vkCreateSwapchainKHR",
    "vkGetSwapchainImagesKHR",
    "vkDestroySwapchainKHR",
    "vkCreateComputePipelines",
];

/// The debug utils calls that place and name rows.
const DEBUG_UTILS_CALLS: [&str; 4] = [
    "vkQueueBeginDebugUtilsLabelEXT",
    "vkQueueEndDebugUtilsLabelEXT",
    "vkQueueInsertDebugUtilsLabelEXT",
    "vkSetDebugUtilsObjectNameEXT",
];

/// The descriptor calls whose parameters [`Pass::take_generic_setup`] reads by hand.
const DESCRIPTOR_CALLS: [&str; 8] = [
    "vkAllocateDescriptorSets",
    "vkFreeDescriptorSets",
    "vkResetDescriptorPool",
    "vkDestroyDescriptorPool",
    "vkCreateDescriptorUpdateTemplate",
    "vkCreateDescriptorUpdateTemplateKHR",
    "vkUpdateDescriptorSetWithTemplate",
    "vkUpdateDescriptorSetWithTemplateKHR",
];

/// The command buffer calls whose parameters [`Pass::take_generic_setup`] reads: what
/// a command buffer holds goes when it is freed.
const COMMAND_BUFFER_CALLS: [&str; 1] = ["vkFreeCommandBuffers"];

/// Whether the replay reads anything of a set-up call (a generically recorded call that
/// is not a command buffer command) named `name`: the others (semaphores, pools,
/// queries of the physical device...) are counted as skipped with their parameters
/// left unread. glmark2 through Zink records about ten such calls a frame: passing them
/// by took 6.5 % of the instructions out of its replay (callgrind, 14,242 frames).
pub(super) fn setup_is_read(name: &str) -> bool {
    SWAPCHAIN_CALLS.contains(&name)
        || DEBUG_UTILS_CALLS.contains(&name)
        || DESCRIPTOR_CALLS.contains(&name)
        || COMMAND_BUFFER_CALLS.contains(&name)
        || crate::generated::decode::DECODED_SETUP
            .iter()
            .any(|(setup, _)| *setup == name)
}

impl Pass<'_> {
    /// A call recorded generically (a `VulkanCall` record): a command buffer command
    /// (`vkCmd*`) or a call that sets up what commands use, told apart by its name once.
    pub(super) fn take_generic(
        &mut self,
        seq: u64,
        name: &str,
        params: Result<&[Param<'_>], &generic::read::DecodeError>,
    ) {
        let params = match params {
            Ok(params) => params,
            Err(e) => {
                let recorded = names::is_recorded_command(name);
                return self.skip(&format!("{name} (does not decode: {e})"), recorded);
            }
        };
        if names::is_recorded_command(name) {
            self.take_generic_command(seq, name, params, false);
        } else {
            self.take_generic_setup(name, params);
        }
    }

    /// A call recorded generically that is not a command buffer command: the calls that
    /// create or describe what commands use (swapchains, labels, descriptor sets and
    /// their templates and layouts) are taken; every call is counted as skipped, for
    /// none records a command. A call this reads must be one [`setup_is_read`] names:
    /// the replay of compact records passes the others by unread.
    fn take_generic_setup(&mut self, name: &str, params: &[Param<'_>]) {
        if self.take_swapchain_call(name, params) {
            return;
        }
        if self.take_debug_utils(name, params) {
            return;
        }
        if name == "vkFreeCommandBuffers" {
            // The device, the pool, the count, then the handles, 8 bytes each.
            let bytes = params.get(3).and_then(|p| p.bytes()).unwrap_or_default();
            for i in 0..bytes.len() / 8 {
                self.free_command_buffer(swapchain::handle_at(bytes, i));
            }
            return self.skip(name, false);
        }
        let handles = |bytes: &[u8]| -> Vec<u64> {
            (0..bytes.len() / 8)
                .map(|i| swapchain::handle_at(bytes, i))
                .collect()
        };
        if name == "vkAllocateDescriptorSets" {
            // The sets it made: the output array, 8 bytes a handle; their pool: the
            // allocate info's `descriptorPool` (bytes 16 to 24); their layouts: its one
            // nested array (pSetLayouts), as many.
            let sets = handles(params.get(2).and_then(|p| p.bytes()).unwrap_or_default());
            let info = params.get(1);
            let pool = info
                .and_then(|p| p.bytes())
                .and_then(|b| b.get(16..24))
                .map_or(0, |b| swapchain::handle_at(b, 0));
            let layouts = info
                .and_then(|p| p.nested())
                .and_then(|n| n.iter().next())
                .and_then(|p| p.bytes())
                .map(handles)
                .unwrap_or_default();
            self.descriptor_sets
                .allocate(pool, &sets, &layouts, &self.layouts);
            return self.skip(name, false);
        }
        if name == "vkFreeDescriptorSets" {
            // The device, the pool, the count, then the handles, 8 bytes each.
            let sets = handles(params.get(3).and_then(|p| p.bytes()).unwrap_or_default());
            self.descriptor_sets.free(&sets);
            return self.skip(name, false);
        }
        if name == "vkResetDescriptorPool" || name == "vkDestroyDescriptorPool" {
            // The device, the pool, then the flags or the allocator.
            let pool = params.get(1).map_or(0, |p| p.value());
            self.descriptor_sets.free_pool(pool);
            return self.skip(name, false);
        }
        if name == "vkCreateDescriptorUpdateTemplate"
            || name == "vkCreateDescriptorUpdateTemplateKHR"
        {
            if let Some((id, entries)) = crate::device::templates::created(params) {
                self.push_templates.create(id, entries);
            }
            return self.skip(name, false);
        }
        if name == "vkUpdateDescriptorSetWithTemplate"
            || name == "vkUpdateDescriptorSetWithTemplateKHR"
        {
            // The set, the template, the update's data as recorded (sparse runs).
            let value = |i: usize| params.get(i).map_or(0, |p| p.value());
            let data = params.get(3).copied().and_then(RecordedRuns::of);
            if let (Some(entries), Some(data)) = (self.push_templates.entries(value(2)), data) {
                let known = (&self.layouts, &self.objects, &self.device);
                self.descriptor_sets
                    .update_with_template(value(1), entries, &data, known);
            }
            return self.skip(name, false);
        }
        match generic::decode_setup(name, params) {
            Ok(Some(GenericSetup::CreateDescriptorSetLayout(c))) => {
                self.layouts.create_set_layout(&c);
            }
            Ok(Some(GenericSetup::UpdateDescriptorSets(c))) => {
                self.descriptor_sets
                    .update(&c, &self.layouts, &self.objects, &self.device);
                self.skip(name, false);
            }
            Ok(None) => self.skip(name, false),
            Err(e) => self.skip(&format!("{name} (does not decode: {e})"), false),
        }
    }

    /// A command buffer command recorded generically: decoded and recorded into its
    /// command buffer when the model executes it, else counted as skipped. Returns
    /// what it did, for the memo to keep (a command recorded only where `keep` asks for
    /// it: it is a copy), where that follows from its name and parameters alone (see
    /// [`super::generic_memo`]): not for the push descriptor commands, whose uniform buffers
    /// are looked up in what the replay holds, nor for parameters that do not decode.
    pub(super) fn take_generic_command(
        &mut self,
        seq: u64,
        name: &str,
        params: &[Param<'_>],
        keep: bool,
    ) -> Option<Taken> {
        // The barriers that come by the thousand in real programs' frames: their masks
        // read where they lie, not the whole command decoded.
        let in_place = match name {
            "vkCmdPipelineBarrier2" | "vkCmdPipelineBarrier2KHR" => {
                execute::sync::pipeline_barrier2_of(params)
            }
            "vkCmdPipelineBarrier" => execute::sync::pipeline_barrier_of(params),
            _ => None,
        };
        if let Some((cb, barriers)) = in_place {
            let args = WorkArgs::PipelineBarrier(barriers.into());
            return self.take_recorded(cb, Cmd::Work { seq, args }, keep);
        }
        // The template pushes Zink makes at every draw: their uniform buffers read from
        // the update's recorded runs where they lie, the command not decoded first (its
        // decoder checks nothing but the parameter count).
        if name == "vkCmdPushDescriptorSetWithTemplateKHR" && params.len() == 5 {
            let value = |i: usize| params[i].value();
            let (cb, set) = (value(0), value(3) as u32);
            let ubos = RecordedRuns::of(params[4]).map_or_else(Vec::new, |data| {
                self.template_ubos((value(1), value(2), set), &data)
            });
            // Not kept by the memo: the uniform buffers follow the replay's objects.
            return self.take_recorded(cb, Cmd::PushDescriptorSet { set, ubos }, false);
        }
        match generic::decode(name, params) {
            Ok(Some(cmd)) => {
                let cb = cmd.command_buffer();
                if let GenericCmd::CmdPushDescriptorSetKHR(c) = &cmd {
                    if c.pipeline_bind_point == 0 {
                        let ubos = self.written_ubos(c);
                        let push = Cmd::PushDescriptorSet { set: c.set, ubos };
                        return self.take_recorded(cb, push, false);
                    }
                }
                let recorded = if let Some(args) = WorkArgs::of_generic(&cmd) {
                    Cmd::Work { seq, args }
                } else if let Some(typed) = commands::typed_of_generic(&cmd) {
                    typed
                } else if execute::is_modelled(&cmd) {
                    Cmd::Generic(Arc::new(cmd))
                } else {
                    // A command buffer command the model does not execute yet.
                    self.skip(name, true);
                    return Some(Taken::Skipped);
                };
                self.take_recorded(cb, recorded, keep)
            }
            // No decoder: a command the model has no reader for.
            Ok(None) => {
                self.skip(name, true);
                Some(Taken::Skipped)
            }
            Err(e) => {
                self.skip(&format!("{name} (does not decode: {e})"), true);
                None
            }
        }
    }

    /// Records `cmd` into command buffer `cb`; what was done, for the memo to `keep`.
    fn take_recorded(&mut self, cb: u64, cmd: Cmd, keep: bool) -> Option<Taken> {
        let taken = keep.then(|| Taken::Recorded {
            cb,
            cmd: cmd.clone(),
        });
        self.recording_of(cb).push(cmd);
        taken
    }

    /// Does again what a generically recorded command did when it was taken before.
    pub(super) fn take_again(&mut self, name: &str, taken: Taken) {
        match taken {
            Taken::Recorded { cb, cmd } => self.recording_of(cb).push(cmd),
            Taken::Skipped => self.skip(name, true),
        }
    }

    /// Queue labels and object names (VK_EXT_debug_utils): they place and name rows, and
    /// NVK does nothing with them but keep them for its messages
    /// (vk_common_QueueBeginDebugUtilsLabelEXT, vk_common_SetDebugUtilsObjectNameEXT).
    /// Whether `name` was one.
    fn take_debug_utils(&mut self, name: &str, params: &[Param<'_>]) -> bool {
        if !DEBUG_UTILS_CALLS.contains(&name) {
            return false;
        }
        // The structure's one nested parameter: its name.
        let nested_name = || {
            params
                .get(1)
                .and_then(|p| p.nested())
                .and_then(|n| n.iter().next())
                .map(generic::read::string)
                .unwrap_or_default()
        };
        match name {
            "vkQueueBeginDebugUtilsLabelEXT" => self.places.begin_queue_label(&nested_name()),
            "vkQueueEndDebugUtilsLabelEXT" => self.places.end_queue_label(),
            "vkSetDebugUtilsObjectNameEXT" => {
                // VkDebugUtilsObjectNameInfoEXT: objectHandle at byte 24.
                let handle = params
                    .get(1)
                    .and_then(|p| p.bytes())
                    .and_then(|b| b.get(24..32))
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()));
                if let Some(handle) = handle {
                    self.places.name_object(handle, &nested_name());
                }
            }
            _ => {}
        }
        self.skip(name, false);
        true
    }

    /// The uniform buffers a push of descriptor writes names (vkCmdPushDescriptorSetKHR):
    /// each descriptor's byte offset in the set, the buffer's address and its range, as
    /// a template push's are found.
    pub(super) fn written_ubos(
        &self,
        c: &crate::generated::decode::CmdPushDescriptorSetKHR,
    ) -> Vec<(u32, u64, u32)> {
        const UNIFORM_BUFFER: u32 = 6;
        let Some(layout) = self.layouts.set(c.layout, c.set) else {
            return Vec::new();
        };
        let align = self.device.min_cbuf_alignment();
        let mut ubos = Vec::new();
        for (w, nested) in c.descriptor_writes.iter().zip(&c.descriptor_writes_nested) {
            if w.descriptor_type != UNIFORM_BUFFER {
                continue;
            }
            let Some((place, stride)) = layout.binding_place(w.dst_binding, align) else {
                continue;
            };
            for (i, info) in nested.p_buffer_info.iter().enumerate().take(64) {
                let element = w.dst_array_element.saturating_add(i as u32);
                let desc = place.saturating_add(stride.saturating_mul(element));
                ubos.push(ubo(
                    &self.objects,
                    desc,
                    info.buffer,
                    info.offset,
                    info.range,
                ));
            }
        }
        ubos
    }

    /// The uniform buffers a template push names: each descriptor's byte offset in the
    /// set (its binding's place in the set layout), the buffer's address from the
    /// descriptor's `VkDescriptorBufferInfo` in the update's data, and its range
    /// (`VK_WHOLE_SIZE`: to the buffer's end). Mirrors what nvk_push_descriptor_set
    /// writes for them (write_ubo_desc).
    pub(super) fn template_ubos(
        &mut self,
        (template, layout, set): (u64, u64, u32),
        data: &RecordedRuns<'_>,
    ) -> Vec<(u32, u64, u32)> {
        let objects = &self.objects;
        self.push_templates.ubos(
            (template, layout, set),
            &self.layouts,
            self.device.min_cbuf_alignment(),
            data,
            |desc, buffer, offset, range| ubo(objects, desc, buffer, offset, range),
        )
    }

    /// The swapchain calls, which say what images a program renders to: true when
    /// `call` was one.
    pub(super) fn take_swapchain_call(&mut self, name: &str, params: &[Param<'_>]) -> bool {
        if !SWAPCHAIN_CALLS.contains(&name) {
            return false;
        }
        let value = |i: usize| params.get(i).map_or(0, |p| p.value());
        let bytes = |i: usize| params.get(i).and_then(|p| p.bytes()).unwrap_or_default();
        match name {
            "vkCreateSwapchainKHR" => match SwapchainInfo::of_bytes(bytes(1)) {
                Some(info) => {
                    let handle = swapchain::handle_at(bytes(3), 0);
                    self.objects.create_swapchain(handle, info);
                }
                None => self.skip(
                    "vkCreateSwapchainKHR (a short VkSwapchainCreateInfoKHR)",
                    false,
                ),
            },
            "vkGetSwapchainImagesKHR" => {
                let ids = bytes(3);
                let images: Vec<u64> = (0..ids.len() / 8)
                    .map(|i| swapchain::handle_at(ids, i))
                    .collect();
                self.objects.swapchain_images(value(1), &images);
            }
            "vkDestroySwapchainKHR" => self.objects.destroy_swapchain(value(1)),
            "vkCreateComputePipelines" => {
                // VkComputePipelineCreateInfo is 96 bytes; its stage's module at 48.
                const INFO_BYTES: usize = 96;
                const MODULE_AT: usize = 48;
                let (infos, handles) = (bytes(3), bytes(5));
                let stages = params.get(3).and_then(|p| p.nested());
                for (i, info) in infos.chunks_exact(INFO_BYTES).enumerate() {
                    let module = swapchain::handle_at(&info[MODULE_AT..MODULE_AT + 8], 0);
                    let (entries, data) = stages
                        .and_then(|s| s.iter().nth(i))
                        .map_or_else(Default::default, stage_specialization);
                    let spec = Specialization {
                        entries: &entries,
                        data,
                    };
                    let size = self
                        .shaders
                        .specialized_workgroup_size(module, &spec)
                        .unwrap_or([0; 3]);
                    let invocations = size.iter().fold(1u32, |n, d| n.saturating_mul(*d));
                    self.objects
                        .compute_pipelines
                        .insert(swapchain::handle_at(handles, i), invocations);
                }
            }
            _ => return false,
        }
        true
    }
}

/// A generically recorded `VkPipelineShaderStageCreateInfo`'s specialization (its
/// pointer members, as the record nests them: `pName`, then `pSpecializationInfo`,
/// whose own are `pMapEntries` and `pData`): the map's entries (16 bytes each:
/// `constantID`, `offset`, `size`) and the data; none where the record holds none.
fn stage_specialization<'a>(stage: Param<'a>) -> (Vec<SpecializationEntry>, &'a [u8]) {
    const ENTRY_BYTES: usize = 16;
    let members = stage
        .nested()
        .and_then(|m| m.iter().nth(1))
        .and_then(|info| info.nested());
    let part = |n: usize| {
        members
            .and_then(|m| m.iter().nth(n))
            .and_then(|p| p.bytes())
            .unwrap_or_default()
    };
    let entries = part(0)
        .chunks_exact(ENTRY_BYTES)
        .map(|e| SpecializationEntry {
            constant_id: u32::from_le_bytes([e[0], e[1], e[2], e[3]]),
            offset: u32::from_le_bytes([e[4], e[5], e[6], e[7]]),
            size: u64::from_le_bytes([e[8], e[9], e[10], e[11], e[12], e[13], e[14], e[15]]),
        })
        .collect();
    (entries, part(1))
}

/// One uniform buffer descriptor: its byte offset in the set, and the buffer's address
/// and range from `offset` (`VK_WHOLE_SIZE`: to the buffer's end); a buffer never bound
/// names nothing (address and range 0).
fn ubo(objects: &Objects, desc: u32, buffer: u64, offset: u64, range: u64) -> (u32, u64, u32) {
    let (addr, range) = objects.buffer_info_range(buffer, offset, range);
    (desc, addr, range)
}

#[cfg(test)]
mod tests {
    use super::*;
    use trace_format::generated::trace::VulkanParamT;
    use trace_format::generic_params::{self, ParamList};

    /// A recorded parameter: `value`, the bytes it points to and what its
    /// structures' pointer members point to.
    fn param(value: u64, bytes: Option<Vec<u8>>, nested: Vec<VulkanParamT>) -> VulkanParamT {
        let mut p = VulkanParamT::default();
        p.value = value;
        p.bytes = bytes;
        p.nested = (!nested.is_empty()).then_some(nested);
        p
    }

    #[test]
    fn a_compute_stage_s_specialization_is_read_where_the_record_nests_it() {
        // ggml's matrix-vector shader: three constants, the first its workgroup width.
        let entries: Vec<u8> = [(0u32, 0u32, 4u64), (1, 4, 4), (2, 8, 4)]
            .iter()
            .flat_map(|(id, offset, size)| {
                [
                    &id.to_le_bytes()[..],
                    &offset.to_le_bytes(),
                    &size.to_le_bytes(),
                ]
                .concat()
            })
            .collect();
        let data: Vec<u8> = [128u32, 1, 2]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let info = param(
            0x2000,
            Some(vec![0; 32]),
            vec![
                param(0x3000, Some(entries), vec![]),
                param(0x4000, Some(data.clone()), vec![]),
            ],
        );
        let name = param(0x1000, Some(b"main\0".to_vec()), vec![]);
        let with = param(0, None, vec![name.clone(), info]);
        let without = param(0, None, vec![name, param(0, None, vec![])]);
        let packed = generic_params::packed(&[with, without]);
        let list = ParamList::packed(&packed).unwrap();
        let stages: Vec<Param<'_>> = list.iter().collect();
        let (entries, bytes) = stage_specialization(stages[0]);
        assert_eq!(bytes, &data[..]);
        assert_eq!(
            entries
                .iter()
                .map(|e| (e.constant_id, e.offset, e.size))
                .collect::<Vec<_>>(),
            [(0, 0, 4), (1, 4, 4), (2, 8, 4)]
        );
        // A stage with no pSpecializationInfo gives none.
        let (entries, bytes) = stage_specialization(stages[1]);
        assert!(entries.is_empty() && bytes.is_empty());
    }

    #[test]
    fn the_set_up_calls_the_replay_reads_are_read_and_the_rest_passed_by() {
        for name in SWAPCHAIN_CALLS
            .iter()
            .chain(&DEBUG_UTILS_CALLS)
            .chain(&DESCRIPTOR_CALLS)
            .chain(&COMMAND_BUFFER_CALLS)
        {
            assert!(setup_is_read(name), "{name}");
        }
        assert!(
            setup_is_read("vkUpdateDescriptorSets"),
            "decoded by the generated code"
        );
        for name in ["vkCreateSemaphore", "vkTrimCommandPool", "vkWaitSemaphores"] {
            assert!(!setup_is_read(name), "{name}");
        }
    }
}
