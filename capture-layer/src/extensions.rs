//! Which device extensions the layer lets a program see: those whose every command it
//! records, by a hand-written hook (what a replay executes) or a hook generated from the
//! registry (every other command, recorded with its parameters). An extension the
//! generator leaves out (video, provisional ones, platforms other than Xlib, XCB and
//! Wayland) or one the registry does not know is hidden, so a trace is never silently
//! incomplete.

use crate::generated::registry::DEVICE_EXTENSIONS;
use crate::hooks;

/// Whether a program may see device extension `name`.
pub fn recordable(name: &str) -> bool {
    DEVICE_EXTENSIONS
        .iter()
        .find(|(ext, _)| *ext == name)
        .is_some_and(|(_, commands)| commands.iter().all(|c| hooks::hooked(c)))
}

#[cfg(test)]
mod tests {
    use super::recordable;

    #[test]
    fn extensions_are_shown_only_when_recordable() {
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
            "VK_EXT_multi_draw",
            "VK_EXT_conditional_rendering",
            "VK_EXT_mesh_shader",
            // Its pipelines' libraries and parts are recorded.
            "VK_EXT_graphics_pipeline_library",
        ] {
            assert!(recordable(name), "{name}");
        }
        // Left out by the generator, or unknown to the registry.
        for name in [
            "VK_KHR_video_queue",
            "VK_KHR_video_decode_queue",
            "VK_ANDROID_external_memory_android_hardware_buffer",
            "VK_UNKNOWN_future_extension",
        ] {
            assert!(!recordable(name), "{name}");
        }
    }
}
