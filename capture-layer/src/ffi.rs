//! The loader–layer interface (the loader's `vk_layer.h`), which the Vulkan registry
//! and so `ash` do not describe: version negotiation and the layer-link chains that
//! the loader passes in `vkCreateInstance` and `vkCreateDevice`.

use std::ffi::{c_char, c_void};

use ash::vk;

/// `LAYER_NEGOTIATE_INTERFACE_STRUCT`.
pub const LAYER_NEGOTIATE_INTERFACE_STRUCT: u32 = 1;

/// The loader–layer interface version this layer speaks.
pub const INTERFACE_VERSION: u32 = 2;

/// `PFN_GetPhysicalDeviceProcAddr`.
pub type GetPhysicalDeviceProcAddr =
    Option<unsafe extern "system" fn(vk::Instance, *const c_char) -> vk::PFN_vkVoidFunction>;

/// `VkNegotiateLayerInterface`.
#[repr(C)]
pub struct NegotiateLayerInterface {
    /// `LAYER_NEGOTIATE_INTERFACE_STRUCT`.
    pub s_type: u32,
    /// Unused.
    pub p_next: *mut c_void,
    /// In: the loader's highest version; out: the one agreed.
    pub loader_layer_interface_version: u32,
    /// Out: the layer's `vkGetInstanceProcAddr`.
    pub pfn_get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    /// Out: the layer's `vkGetDeviceProcAddr`.
    pub pfn_get_device_proc_addr: vk::PFN_vkGetDeviceProcAddr,
    /// Out: the layer's `vk_layerGetPhysicalDeviceProcAddr`, or none.
    pub pfn_get_physical_device_proc_addr: GetPhysicalDeviceProcAddr,
}

/// `VK_LAYER_LINK_INFO`: the create info's union holds the next link.
pub const LAYER_LINK_INFO: u32 = 0;

/// `VkLayerInstanceLink`.
#[repr(C)]
pub struct LayerInstanceLink {
    /// The link after the next layer's.
    pub p_next: *mut LayerInstanceLink,
    /// The next layer's `vkGetInstanceProcAddr`.
    pub pfn_next_get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    /// The next layer's `vk_layerGetPhysicalDeviceProcAddr`.
    pub pfn_next_get_physical_device_proc_addr: GetPhysicalDeviceProcAddr,
}

/// `VkLayerInstanceCreateInfo`, read only where `function` is `VK_LAYER_LINK_INFO`.
#[repr(C)]
pub struct LayerInstanceCreateInfo {
    /// `VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO`.
    pub s_type: vk::StructureType,
    /// The rest of the chain.
    pub p_next: *const c_void,
    /// Which member of the union is set.
    pub function: u32,
    /// The union's first member (`pLayerInfo` for `VK_LAYER_LINK_INFO`), padded to its
    /// largest member (two function pointers).
    pub u: [*mut c_void; 2],
}

/// `VkLayerDeviceLink`.
#[repr(C)]
pub struct LayerDeviceLink {
    /// The link after the next layer's.
    pub p_next: *mut LayerDeviceLink,
    /// The next layer's `vkGetInstanceProcAddr`.
    pub pfn_next_get_instance_proc_addr: vk::PFN_vkGetInstanceProcAddr,
    /// The next layer's `vkGetDeviceProcAddr`.
    pub pfn_next_get_device_proc_addr: vk::PFN_vkGetDeviceProcAddr,
}

/// `VkLayerDeviceCreateInfo`, read only where `function` is `VK_LAYER_LINK_INFO`.
#[repr(C)]
pub struct LayerDeviceCreateInfo {
    /// `VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO`.
    pub s_type: vk::StructureType,
    /// The rest of the chain.
    pub p_next: *const c_void,
    /// Which member of the union is set.
    pub function: u32,
    /// The union's first member (`pLayerInfo` for `VK_LAYER_LINK_INFO`).
    pub u: [*mut c_void; 2],
}

/// The loader's link info in a create-info chain: the first structure of `s_type`
/// whose `function` is `VK_LAYER_LINK_INFO`.
///
/// # Safety
/// `chain` must be a valid Vulkan `pNext` chain.
pub unsafe fn find_link_info<T>(mut chain: *const c_void, s_type: vk::StructureType) -> *mut T {
    while !chain.is_null() {
        let base = &*(chain as *const vk::BaseInStructure);
        if base.s_type == s_type {
            // Both create-info types share this layout up to the union.
            let info = &*(chain as *const LayerDeviceCreateInfo);
            if info.function == LAYER_LINK_INFO {
                return chain as *mut T;
            }
        }
        chain = base.p_next as *const c_void;
    }
    std::ptr::null_mut()
}
