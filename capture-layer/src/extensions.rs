//! Which device extensions the layer lets a program see: those whose every command it
//! records, by a hand-written hook (what a replay executes) or a hook generated from the
//! registry (every other command, recorded with its parameters). An extension the
//! generator leaves out (video, provisional ones, platforms other than Xlib, XCB and
//! Wayland) or one the registry does not know is hidden, so a trace is never silently
//! incomplete; so is an extension whose structures the records do not keep
//! (graphics pipeline libraries).

use crate::generated::registry::DEVICE_EXTENSIONS;
use crate::hooks;

/// Extensions whose every command is recorded but whose structures change what other
/// commands mean in ways the records do not keep: a graphics pipeline linked from
/// libraries (`VkPipelineLibraryCreateInfoKHR`) would replay without the libraries'
/// stages and state.
const UNRECORDED_STRUCTURES: [&str; 1] = ["VK_EXT_graphics_pipeline_library"];

/// Whether a program may see device extension `name`.
pub fn recordable(name: &str) -> bool {
    !UNRECORDED_STRUCTURES.contains(&name)
        && DEVICE_EXTENSIONS
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
        ] {
            assert!(recordable(name), "{name}");
        }
        // Left out by the generator, or unknown to the registry.
        for name in [
            "VK_KHR_video_queue",
            "VK_KHR_video_decode_queue",
            "VK_ANDROID_external_memory_android_hardware_buffer",
            "VK_UNKNOWN_future_extension",
            // Recordable commands, but pipelines linked from libraries are not kept.
            "VK_EXT_graphics_pipeline_library",
        ] {
            assert!(!recordable(name), "{name}");
        }
    }
}
