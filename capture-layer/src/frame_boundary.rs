//! `VK_EXT_frame_boundary`, offered by the layer where the driver lacks it: programs
//! without a swapchain (offscreen renderers, compute, tests) mark each frame's last
//! submit with a `VkFrameBoundaryEXT`, and the layer ends the trace's frame there.
//!
//! When the layer provides the extension it also takes it off the device's enabled
//! list before calling down, and takes the marker off a submit's `pNext` chain where it
//! comes first (where it sits deeper it is passed on; drivers skip structures they do
//! not know).

use std::ffi::{c_char, c_void, CStr};

use ash::vk;

/// The extension's name.
pub const NAME: &CStr = c"VK_EXT_frame_boundary";

/// The extension as `vkEnumerateDeviceExtensionProperties` lists it.
pub fn properties() -> vk::ExtensionProperties {
    let mut p = vk::ExtensionProperties {
        spec_version: 1,
        ..Default::default()
    };
    for (dst, src) in p.extension_name.iter_mut().zip(NAME.to_bytes()) {
        *dst = *src as c_char;
    }
    p
}

/// What a chain's frame-boundary marker says: whether it ends a frame, and the images
/// it names as the frame's result.
#[derive(Debug, Default)]
pub struct Marker {
    /// The submit ends a frame.
    pub ends: bool,
    /// The images holding the frame's result.
    pub images: Vec<vk::Image>,
}

/// What a chain's frame-boundary marker says, and the chain with a leading marker taken
/// off.
///
/// # Safety
/// `chain` must be a valid `pNext` chain.
pub unsafe fn find(chain: *const c_void) -> (Marker, *const c_void) {
    let mut found = Marker::default();
    let mut p = chain;
    while !p.is_null() {
        let base = &*(p as *const vk::BaseInStructure);
        if base.s_type == vk::StructureType::FRAME_BOUNDARY_EXT {
            let marker = &*(p as *const vk::FrameBoundaryEXT);
            if marker.flags.contains(vk::FrameBoundaryFlagsEXT::FRAME_END) {
                found.ends = true;
                if !marker.p_images.is_null() {
                    found.images.extend_from_slice(std::slice::from_raw_parts(
                        marker.p_images,
                        marker.image_count as usize,
                    ));
                }
            }
        }
        p = base.p_next as *const c_void;
    }
    let rest = if !chain.is_null()
        && (*(chain as *const vk::BaseInStructure)).s_type == vk::StructureType::FRAME_BOUNDARY_EXT
    {
        (*(chain as *const vk::BaseInStructure)).p_next as *const c_void
    } else {
        chain
    };
    (found, rest)
}
