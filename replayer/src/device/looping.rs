//! Looping over frames: which records the passes after the first take again.

use trace_format::generated::trace::{Call, Record};

/// Whether a record makes, binds or destroys an object: taken once, in the first pass
/// over looped frames (the later passes reuse the objects).
pub(super) fn is_lifetime_record(record: &Record<'_>) -> bool {
    match record.call_type() {
        Call::VulkanCall => record
            .call_as_vulkan_call()
            .and_then(|c| trace_format::names::generic_command(&c))
            .is_some_and(|name| {
                [
                    "vkCreate",
                    "vkDestroy",
                    "vkAllocate",
                    "vkFree",
                    "vkBind",
                    "vkGetSwapchainImages",
                ]
                .iter()
                .any(|p| name.starts_with(p))
                    || (name.starts_with("vkGet") && name.contains("MemoryRequirements"))
            }),
        Call::CreateInstance
        | Call::DestroyInstance
        | Call::PhysicalDeviceInfo
        | Call::CreateDevice
        | Call::DestroyDevice
        | Call::GetDeviceQueue
        | Call::AllocateMemory
        | Call::FreeMemory
        | Call::CreateBuffer
        | Call::BindBufferMemory
        | Call::CreateImage
        | Call::BindImageMemory
        | Call::CreateImageView
        | Call::DestroyObject
        | Call::CreateRenderPass
        | Call::CreateFramebuffer
        | Call::CreateShaderModule
        | Call::CreatePipelineLayout
        | Call::CreateGraphicsPipelines
        | Call::CreateCommandPool
        | Call::AllocateCommandBuffers
        | Call::CreateQueryPool => true,
        _ => false,
    }
}
