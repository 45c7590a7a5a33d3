//! Which device extensions the layer lets a program see: those whose commands it
//! records, or whose commands cannot change what a replay draws. An extension that adds
//! draws or state the trace would miss (mesh shaders, ray tracing, device-generated
//! commands...) is hidden, so a trace is never silently incomplete.

use crate::generated::registry::DEVICE_EXTENSIONS;
use crate::hooks;

/// Commands a replay does not need, beyond those the layer records: queries of
/// properties and state, presentation plumbing, debug labels and object names,
/// synchronization, descriptors, copies, clears and compute, and pipeline state the
/// driver model does not consume. None of them adds, removes or reshapes a draw; what
/// they do on the GPU (a copy into an indirect buffer) a replay cannot see in any case.
fn not_needed(command: &str) -> bool {
    const PREFIXES: [&str; 21] = [
        "vkGet",
        "vkCmdSet",
        "vkCmdBindVertexBuffers",
        "vkCmdPipelineBarrier",
        "vkCmdWaitEvents",
        "vkCmdResetEvent",
        "vkCmdBeginDebugUtilsLabel",
        "vkCmdEndDebugUtilsLabel",
        "vkCmdInsertDebugUtilsLabel",
        "vkCmdDebugMarker",
        "vkCmdCopy",
        "vkCmdBlit",
        "vkCmdResolve",
        "vkCmdClear",
        "vkCmdFill",
        "vkCmdDispatch",
        "vkCmdPushDescriptorSet",
        "vkCmdWriteBufferMarker",
        "vkDebugMarkerSet",
        "vkSetDebugUtilsObject",
        "vkTrimCommandPool",
    ];
    const COMMANDS: [&str; 20] = [
        "vkCreateSwapchainKHR",
        "vkDestroySwapchainKHR",
        "vkAcquireNextImageKHR",
        "vkAcquireNextImage2KHR",
        "vkReleaseSwapchainImagesEXT",
        "vkWaitForPresentKHR",
        "vkResetQueryPoolEXT",
        "vkCreateDescriptorUpdateTemplateKHR",
        "vkDestroyDescriptorUpdateTemplateKHR",
        "vkUpdateDescriptorSetWithTemplateKHR",
        "vkWaitSemaphoresKHR",
        "vkSignalSemaphoreKHR",
        "vkCreatePrivateDataSlotEXT",
        "vkDestroyPrivateDataSlotEXT",
        "vkSetPrivateDataEXT",
        // Transform feedback's bounds and indexed queries change no draw the model
        // replays; its byte-count draw is recorded.
        "vkCmdBindTransformFeedbackBuffersEXT",
        "vkCmdBeginTransformFeedbackEXT",
        "vkCmdEndTransformFeedbackEXT",
        "vkCmdBeginQueryIndexedEXT",
        "vkCmdEndQueryIndexedEXT",
    ];
    PREFIXES.iter().any(|p| command.starts_with(p)) || COMMANDS.contains(&command)
}

/// Whether a program may see device extension `name`. Extensions this registry does not
/// know are hidden too: the layer cannot know what they add.
pub fn recordable(name: &str) -> bool {
    DEVICE_EXTENSIONS
        .iter()
        .find(|(ext, _)| *ext == name)
        .is_some_and(|(_, commands)| commands.iter().all(|c| hooks::hooked(c) || not_needed(c)))
}

#[cfg(test)]
mod tests {
    use super::recordable;

    #[test]
    fn extensions_are_shown_only_when_recordable() {
        // Recorded: swapchain and present; draws by count; render pass 2; dynamic rendering.
        for name in [
            "VK_KHR_swapchain",
            "VK_KHR_draw_indirect_count",
            "VK_KHR_create_renderpass2",
            "VK_KHR_dynamic_rendering",
            "VK_KHR_multiview",
            "VK_EXT_extended_dynamic_state",
            "VK_KHR_timeline_semaphore",
            "VK_KHR_synchronization2",
            "VK_KHR_descriptor_update_template",
            "VK_EXT_transform_feedback",
        ] {
            assert!(recordable(name), "{name}");
        }
        assert!(recordable("VK_EXT_multi_draw") && recordable("VK_EXT_conditional_rendering"));
        // Draws or state the trace would miss.
        for name in [
            "VK_EXT_mesh_shader",
            "VK_KHR_ray_tracing_pipeline",
            "VK_UNKNOWN_future_extension",
        ] {
            assert!(!recordable(name), "{name}");
        }
    }
}
