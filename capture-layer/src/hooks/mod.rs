//! The functions the layer intercepts, and the tables that name them for
//! `vkGetInstanceProcAddr` and `vkGetDeviceProcAddr`.

/// Builds a trace record's object-API table (whose types are not constructible by
/// literal outside their crate) from its default and the fields given.
macro_rules! table {
    ($ty:ident { $($field:ident $(: $value:expr)?),* $(,)? }) => {{
        let mut t = $ty::default();
        $( table!(@set t, $field $(, $value)?); )*
        t
    }};
    (@set $t:ident, $field:ident) => {
        $t.$field = $field;
    };
    (@set $t:ident, $field:ident, $value:expr) => {
        $t.$field = $value;
    };
}

pub mod commands;
pub mod instance;
pub mod objects;
mod pipeline_state;
pub mod pipelines;
pub mod queue;
mod util;

use std::ffi::{c_void, CStr};

/// A hook: the Vulkan name and the layer's function.
pub struct Hook {
    /// The command's name.
    pub name: &'static CStr,
    /// The layer's function, type-erased.
    pub function: *const c_void,
}

// SAFETY: the table only holds names and function addresses, never mutated.
unsafe impl Sync for Hook {}

/// Builds a [`Hook`], checking the function against the command's `PFN` type.
macro_rules! hook {
    ($name:literal, $f:path, $pfn:ty) => {
        Hook {
            name: $name,
            function: {
                let f: $pfn = $f;
                f as *const c_void
            },
        }
    };
}

use ash::vk;

/// Hooks reached through `vkGetInstanceProcAddr` only (instance-level commands).
pub static INSTANCE_HOOKS: &[Hook] = &[
    hook!(
        c"vkCreateInstance",
        instance::create_instance,
        vk::PFN_vkCreateInstance
    ),
    hook!(
        c"vkDestroyInstance",
        instance::destroy_instance,
        vk::PFN_vkDestroyInstance
    ),
    hook!(
        c"vkCreateDevice",
        instance::create_device,
        vk::PFN_vkCreateDevice
    ),
    hook!(
        c"vkEnumerateDeviceExtensionProperties",
        instance::enumerate_device_extension_properties,
        vk::PFN_vkEnumerateDeviceExtensionProperties
    ),
];

/// Hooks of device-level commands (also reached through `vkGetInstanceProcAddr`).
pub static DEVICE_HOOKS: &[Hook] = &[
    hook!(
        c"vkDestroyDevice",
        instance::destroy_device,
        vk::PFN_vkDestroyDevice
    ),
    hook!(
        c"vkGetDeviceQueue",
        instance::get_device_queue,
        vk::PFN_vkGetDeviceQueue
    ),
    hook!(
        c"vkGetDeviceQueue2",
        instance::get_device_queue2,
        vk::PFN_vkGetDeviceQueue2
    ),
    hook!(
        c"vkAllocateMemory",
        objects::allocate_memory,
        vk::PFN_vkAllocateMemory
    ),
    hook!(c"vkFreeMemory", objects::free_memory, vk::PFN_vkFreeMemory),
    hook!(c"vkMapMemory", objects::map_memory, vk::PFN_vkMapMemory),
    hook!(
        c"vkUnmapMemory",
        objects::unmap_memory,
        vk::PFN_vkUnmapMemory
    ),
    hook!(
        c"vkFlushMappedMemoryRanges",
        objects::flush_mapped_memory_ranges,
        vk::PFN_vkFlushMappedMemoryRanges
    ),
    hook!(
        c"vkCreateBuffer",
        objects::create_buffer,
        vk::PFN_vkCreateBuffer
    ),
    hook!(
        c"vkBindBufferMemory",
        objects::bind_buffer_memory,
        vk::PFN_vkBindBufferMemory
    ),
    hook!(
        c"vkBindBufferMemory2",
        objects::bind_buffer_memory2,
        vk::PFN_vkBindBufferMemory2
    ),
    hook!(
        c"vkBindBufferMemory2KHR",
        objects::bind_buffer_memory2,
        vk::PFN_vkBindBufferMemory2
    ),
    hook!(
        c"vkCreateImage",
        objects::create_image,
        vk::PFN_vkCreateImage
    ),
    hook!(
        c"vkBindImageMemory",
        objects::bind_image_memory,
        vk::PFN_vkBindImageMemory
    ),
    hook!(
        c"vkBindImageMemory2",
        objects::bind_image_memory2,
        vk::PFN_vkBindImageMemory2
    ),
    hook!(
        c"vkBindImageMemory2KHR",
        objects::bind_image_memory2,
        vk::PFN_vkBindImageMemory2
    ),
    hook!(
        c"vkCreateImageView",
        objects::create_image_view,
        vk::PFN_vkCreateImageView
    ),
    hook!(
        c"vkCreateFramebuffer",
        objects::create_framebuffer,
        vk::PFN_vkCreateFramebuffer
    ),
    hook!(
        c"vkCreateShaderModule",
        objects::create_shader_module,
        vk::PFN_vkCreateShaderModule
    ),
    hook!(
        c"vkCreatePipelineLayout",
        objects::create_pipeline_layout,
        vk::PFN_vkCreatePipelineLayout
    ),
    hook!(
        c"vkCreateCommandPool",
        objects::create_command_pool,
        vk::PFN_vkCreateCommandPool
    ),
    hook!(
        c"vkAllocateCommandBuffers",
        objects::allocate_command_buffers,
        vk::PFN_vkAllocateCommandBuffers
    ),
    hook!(
        c"vkCreateQueryPool",
        objects::create_query_pool,
        vk::PFN_vkCreateQueryPool
    ),
    hook!(
        c"vkDestroyBuffer",
        objects::destroy_buffer,
        vk::PFN_vkDestroyBuffer
    ),
    hook!(
        c"vkDestroyImage",
        objects::destroy_image,
        vk::PFN_vkDestroyImage
    ),
    hook!(
        c"vkDestroyImageView",
        objects::destroy_image_view,
        vk::PFN_vkDestroyImageView
    ),
    hook!(
        c"vkDestroyRenderPass",
        objects::destroy_render_pass,
        vk::PFN_vkDestroyRenderPass
    ),
    hook!(
        c"vkDestroyFramebuffer",
        objects::destroy_framebuffer,
        vk::PFN_vkDestroyFramebuffer
    ),
    hook!(
        c"vkDestroyShaderModule",
        objects::destroy_shader_module,
        vk::PFN_vkDestroyShaderModule
    ),
    hook!(
        c"vkDestroyPipelineLayout",
        objects::destroy_pipeline_layout,
        vk::PFN_vkDestroyPipelineLayout
    ),
    hook!(
        c"vkDestroyPipeline",
        objects::destroy_pipeline,
        vk::PFN_vkDestroyPipeline
    ),
    hook!(
        c"vkDestroyCommandPool",
        objects::destroy_command_pool,
        vk::PFN_vkDestroyCommandPool
    ),
    hook!(
        c"vkDestroyQueryPool",
        objects::destroy_query_pool,
        vk::PFN_vkDestroyQueryPool
    ),
    hook!(
        c"vkCreateRenderPass",
        pipelines::create_render_pass,
        vk::PFN_vkCreateRenderPass
    ),
    hook!(
        c"vkCreateRenderPass2",
        pipelines::create_render_pass2,
        vk::PFN_vkCreateRenderPass2
    ),
    hook!(
        c"vkCreateRenderPass2KHR",
        pipelines::create_render_pass2_khr,
        vk::PFN_vkCreateRenderPass2
    ),
    hook!(
        c"vkCreateGraphicsPipelines",
        pipelines::create_graphics_pipelines,
        vk::PFN_vkCreateGraphicsPipelines
    ),
    hook!(
        c"vkBeginCommandBuffer",
        commands::begin_command_buffer,
        vk::PFN_vkBeginCommandBuffer
    ),
    hook!(
        c"vkEndCommandBuffer",
        commands::end_command_buffer,
        vk::PFN_vkEndCommandBuffer
    ),
    hook!(
        c"vkResetCommandBuffer",
        commands::reset_command_buffer,
        vk::PFN_vkResetCommandBuffer
    ),
    hook!(
        c"vkCmdExecuteCommands",
        commands::cmd_execute_commands,
        vk::PFN_vkCmdExecuteCommands
    ),
    hook!(
        c"vkCmdBindPipeline",
        commands::cmd_bind_pipeline,
        vk::PFN_vkCmdBindPipeline
    ),
    hook!(
        c"vkCmdBindDescriptorSets",
        commands::cmd_bind_descriptor_sets,
        vk::PFN_vkCmdBindDescriptorSets
    ),
    hook!(
        c"vkCmdBindVertexBuffers",
        commands::cmd_bind_vertex_buffers,
        vk::PFN_vkCmdBindVertexBuffers
    ),
    hook!(
        c"vkCmdBindIndexBuffer",
        commands::cmd_bind_index_buffer,
        vk::PFN_vkCmdBindIndexBuffer
    ),
    hook!(
        c"vkCmdPushConstants",
        commands::cmd_push_constants,
        vk::PFN_vkCmdPushConstants
    ),
    hook!(c"vkCmdDraw", commands::cmd_draw, vk::PFN_vkCmdDraw),
    hook!(
        c"vkCmdDrawIndexed",
        commands::cmd_draw_indexed,
        vk::PFN_vkCmdDrawIndexed
    ),
    hook!(
        c"vkCmdDrawIndirect",
        commands::cmd_draw_indirect,
        vk::PFN_vkCmdDrawIndirect
    ),
    hook!(
        c"vkCmdDrawIndexedIndirect",
        commands::cmd_draw_indexed_indirect,
        vk::PFN_vkCmdDrawIndexedIndirect
    ),
    hook!(
        c"vkCmdDrawIndirectCount",
        commands::cmd_draw_indirect_count,
        vk::PFN_vkCmdDrawIndirectCount
    ),
    hook!(
        c"vkCmdDrawIndirectCountKHR",
        commands::cmd_draw_indirect_count_khr,
        vk::PFN_vkCmdDrawIndirectCount
    ),
    hook!(
        c"vkCmdDrawIndirectCountAMD",
        commands::cmd_draw_indirect_count_amd,
        vk::PFN_vkCmdDrawIndirectCount
    ),
    hook!(
        c"vkCmdDrawIndexedIndirectCount",
        commands::cmd_draw_indexed_indirect_count,
        vk::PFN_vkCmdDrawIndexedIndirectCount
    ),
    hook!(
        c"vkCmdDrawIndexedIndirectCountKHR",
        commands::cmd_draw_indexed_indirect_count_khr,
        vk::PFN_vkCmdDrawIndexedIndirectCount
    ),
    hook!(
        c"vkCmdDrawIndexedIndirectCountAMD",
        commands::cmd_draw_indexed_indirect_count_amd,
        vk::PFN_vkCmdDrawIndexedIndirectCount
    ),
    hook!(
        c"vkCmdDrawIndirectByteCountEXT",
        commands::cmd_draw_indirect_byte_count_ext,
        vk::PFN_vkCmdDrawIndirectByteCountEXT
    ),
    hook!(
        c"vkCmdBeginRenderPass",
        commands::cmd_begin_render_pass,
        vk::PFN_vkCmdBeginRenderPass
    ),
    hook!(
        c"vkCmdNextSubpass",
        commands::cmd_next_subpass,
        vk::PFN_vkCmdNextSubpass
    ),
    hook!(
        c"vkCmdEndRenderPass",
        commands::cmd_end_render_pass,
        vk::PFN_vkCmdEndRenderPass
    ),
    hook!(
        c"vkCmdBeginRenderPass2",
        commands::cmd_begin_render_pass2,
        vk::PFN_vkCmdBeginRenderPass2
    ),
    hook!(
        c"vkCmdBeginRenderPass2KHR",
        commands::cmd_begin_render_pass2_khr,
        vk::PFN_vkCmdBeginRenderPass2
    ),
    hook!(
        c"vkCmdNextSubpass2",
        commands::cmd_next_subpass2,
        vk::PFN_vkCmdNextSubpass2
    ),
    hook!(
        c"vkCmdNextSubpass2KHR",
        commands::cmd_next_subpass2_khr,
        vk::PFN_vkCmdNextSubpass2
    ),
    hook!(
        c"vkCmdEndRenderPass2",
        commands::cmd_end_render_pass2,
        vk::PFN_vkCmdEndRenderPass2
    ),
    hook!(
        c"vkCmdEndRenderPass2KHR",
        commands::cmd_end_render_pass2_khr,
        vk::PFN_vkCmdEndRenderPass2
    ),
    hook!(
        c"vkCmdBeginRendering",
        commands::cmd_begin_rendering,
        vk::PFN_vkCmdBeginRendering
    ),
    hook!(
        c"vkCmdBeginRenderingKHR",
        commands::cmd_begin_rendering_khr,
        vk::PFN_vkCmdBeginRendering
    ),
    hook!(
        c"vkCmdEndRendering",
        commands::cmd_end_rendering,
        vk::PFN_vkCmdEndRendering
    ),
    hook!(
        c"vkCmdEndRenderingKHR",
        commands::cmd_end_rendering_khr,
        vk::PFN_vkCmdEndRendering
    ),
    hook!(
        c"vkCmdBeginQuery",
        commands::cmd_begin_query,
        vk::PFN_vkCmdBeginQuery
    ),
    hook!(
        c"vkCmdEndQuery",
        commands::cmd_end_query,
        vk::PFN_vkCmdEndQuery
    ),
    hook!(
        c"vkCmdWriteTimestamp",
        commands::cmd_write_timestamp,
        vk::PFN_vkCmdWriteTimestamp
    ),
    hook!(
        c"vkCmdWriteTimestamp2",
        commands::cmd_write_timestamp2,
        vk::PFN_vkCmdWriteTimestamp2
    ),
    hook!(
        c"vkCmdWriteTimestamp2KHR",
        commands::cmd_write_timestamp2_khr,
        vk::PFN_vkCmdWriteTimestamp2
    ),
    hook!(
        c"vkCmdResetQueryPool",
        commands::cmd_reset_query_pool,
        vk::PFN_vkCmdResetQueryPool
    ),
    hook!(
        c"vkCmdCopyQueryPoolResults",
        commands::cmd_copy_query_pool_results,
        vk::PFN_vkCmdCopyQueryPoolResults
    ),
    hook!(
        c"vkCmdSetPrimitiveTopology",
        commands::cmd_set_primitive_topology,
        vk::PFN_vkCmdSetPrimitiveTopology
    ),
    hook!(
        c"vkCmdSetPrimitiveTopologyEXT",
        commands::cmd_set_primitive_topology_ext,
        vk::PFN_vkCmdSetPrimitiveTopology
    ),
    hook!(
        c"vkCmdUpdateBuffer",
        commands::cmd_update_buffer,
        vk::PFN_vkCmdUpdateBuffer
    ),
    hook!(
        c"vkCmdDrawMultiEXT",
        commands::cmd_draw_multi_ext,
        vk::PFN_vkCmdDrawMultiEXT
    ),
    hook!(
        c"vkCmdDrawMultiIndexedEXT",
        commands::cmd_draw_multi_indexed_ext,
        vk::PFN_vkCmdDrawMultiIndexedEXT
    ),
    hook!(
        c"vkCmdBeginConditionalRenderingEXT",
        commands::cmd_begin_conditional_rendering_ext,
        vk::PFN_vkCmdBeginConditionalRenderingEXT
    ),
    hook!(
        c"vkCmdEndConditionalRenderingEXT",
        commands::cmd_end_conditional_rendering_ext,
        vk::PFN_vkCmdEndConditionalRenderingEXT
    ),
    hook!(c"vkQueueSubmit", queue::queue_submit, vk::PFN_vkQueueSubmit),
    hook!(
        c"vkQueueSubmit2",
        queue::queue_submit2,
        vk::PFN_vkQueueSubmit2
    ),
    hook!(
        c"vkQueueSubmit2KHR",
        queue::queue_submit2_khr,
        vk::PFN_vkQueueSubmit2
    ),
    hook!(
        c"vkQueuePresentKHR",
        queue::queue_present_khr,
        vk::PFN_vkQueuePresentKHR
    ),
];

/// Device functions hooks call by name (core 1.2/1.3 ones included, which a device
/// of an older version lacks), loaded per device.
pub const EXTENSION_FUNCTIONS: &[&CStr] = &[
    c"vkCreateRenderPass2KHR",
    c"vkCmdDrawIndirectCount",
    c"vkCmdDrawIndirectCountKHR",
    c"vkCmdDrawIndirectCountAMD",
    c"vkCmdDrawIndexedIndirectCount",
    c"vkCmdDrawIndexedIndirectCountKHR",
    c"vkCmdDrawIndexedIndirectCountAMD",
    c"vkCmdDrawIndirectByteCountEXT",
    c"vkCmdBeginRenderPass2",
    c"vkCmdBeginRenderPass2KHR",
    c"vkCmdNextSubpass2",
    c"vkCmdNextSubpass2KHR",
    c"vkCmdEndRenderPass2",
    c"vkCmdEndRenderPass2KHR",
    c"vkCmdBeginRendering",
    c"vkCmdBeginRenderingKHR",
    c"vkCmdEndRendering",
    c"vkCmdEndRenderingKHR",
    c"vkQueueSubmit2",
    c"vkQueueSubmit2KHR",
    c"vkQueuePresentKHR",
    c"vkCmdWriteTimestamp2",
    c"vkCmdWriteTimestamp2KHR",
    c"vkCmdSetPrimitiveTopology",
    c"vkCmdSetPrimitiveTopologyEXT",
    c"vkCmdDrawMultiEXT",
    c"vkCmdDrawMultiIndexedEXT",
    c"vkCmdBeginConditionalRenderingEXT",
    c"vkCmdEndConditionalRenderingEXT",
];

/// The slot of `name` among [`EXTENSION_FUNCTIONS`], for a hook to find its next
/// function by (`const { extension_slot(c"vkCmdDrawMultiEXT") }`, worked out when the
/// layer is built: a name missing from the list fails the build). Zink draws through
/// `vkCmdDrawMultiIndexedEXT`; finding the function by hashing its name took 320
/// instructions a draw (callgrind, glxgears through Zink).
pub const fn extension_slot(name: &CStr) -> usize {
    let name = name.to_bytes();
    let mut slot = 0;
    while slot < EXTENSION_FUNCTIONS.len() {
        let listed = EXTENSION_FUNCTIONS[slot].to_bytes();
        if listed.len() == name.len() {
            let mut at = 0;
            while at < listed.len() && listed[at] == name[at] {
                at += 1;
            }
            if at == listed.len() {
                return slot;
            }
        }
        slot += 1;
    }
    panic!("a function the layer does not load: add it to EXTENSION_FUNCTIONS")
}

/// The hook named `name`, among `hooks`.
pub fn find(hooks: &[Hook], name: &CStr) -> Option<*const c_void> {
    hooks.iter().find(|h| h.name == name).map(|h| h.function)
}

/// The hook for a command the program may reach through the next layer: a hand-written
/// device hook, or a generated one.
pub fn find_recorded(name: &CStr) -> Option<*const c_void> {
    find(DEVICE_HOOKS, name).or_else(|| find(&crate::generated::commands::HOOKS, name))
}

/// Whether the layer provides the command `name` itself where the next layer lacks it.
pub fn provided(name: &CStr) -> bool {
    crate::generated::commands::PROVIDED.contains(&name)
}

/// Whether the layer records calls of the command `name`.
pub fn hooked(name: &str) -> bool {
    INSTANCE_HOOKS
        .iter()
        .chain(DEVICE_HOOKS)
        .chain(crate::generated::commands::HOOKS.iter())
        .any(|h| h.name.to_bytes() == name.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_extension_function_has_the_slot_it_is_loaded_into() {
        for (slot, name) in EXTENSION_FUNCTIONS.iter().enumerate() {
            assert_eq!(extension_slot(name), slot, "{name:?}");
        }
        let names: std::collections::HashSet<_> = EXTENSION_FUNCTIONS.iter().collect();
        assert_eq!(
            names.len(),
            EXTENSION_FUNCTIONS.len(),
            "a name listed twice"
        );
    }
}
