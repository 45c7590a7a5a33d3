//! `VK_LAYER_MACROSCOPE_capture`: the Vulkan layer that records a running program's
//! calls into a macroscope trace.
//!
//! The system loader finds the layer through its manifest
//! (`VkLayer_macroscope_capture.json`) and negotiates the interface
//! ([`vkNegotiateLoaderLayerInterfaceVersion`]). At `vkCreateInstance` and
//! `vkCreateDevice` the layer walks the loader's link chain to the next layer and keeps
//! its functions (`dispatch`); every hooked call (`hooks`) calls down and records what a
//! replay needs through one process-wide trace writer (`recorder`), which compresses
//! and writes on its own thread. Host writes to mapped memory are found by comparing
//! with shadow copies at each submit, flush and unmap (`memory`). Device extensions
//! whose commands the trace would miss are hidden (`extensions`). Settings come from
//! `MACROSCOPE_*` variables (`settings`). Nothing here may take the program down: an
//! error stops capture with one log line.

#![allow(clippy::missing_safety_doc)]

pub mod asymmetric_fence;
pub mod bindings;
pub mod cache_line;
pub mod clock;
pub mod command_buffers;
pub mod dispatch;
pub mod extensions;
pub mod fault_chain;
pub mod ffi;
pub mod frame_boundary;
pub mod frame_checksums;
pub mod generated;
pub mod generic;
pub mod hooks;
pub mod image_layouts;
pub mod interrupt;
pub mod memory;
pub mod merger;
pub mod owned_cell;
pub mod quit;
pub mod recorder;
pub mod settings;
pub mod templates;
pub mod trace_file;
pub mod write_watch;

use std::ffi::{c_char, CStr};

use ash::vk;

/// The layer's name, as its manifest and `VK_INSTANCE_LAYERS` give it.
pub const LAYER_NAME: &CStr = c"VK_LAYER_MACROSCOPE_capture";

/// The loader–layer interface negotiation: version 2, with the layer's
/// `vkGetInstanceProcAddr` and `vkGetDeviceProcAddr`.
///
/// # Safety
/// Called by the loader with a valid structure.
#[no_mangle]
pub unsafe extern "system" fn vkNegotiateLoaderLayerInterfaceVersion(
    version: *mut ffi::NegotiateLayerInterface,
) -> vk::Result {
    let Some(v) = version.as_mut() else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    if v.s_type != ffi::LAYER_NEGOTIATE_INTERFACE_STRUCT || v.loader_layer_interface_version < 2 {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    }
    v.loader_layer_interface_version = ffi::INTERFACE_VERSION;
    // The layer's own functions, not the exported symbols: a reference to an exported
    // symbol binds to the first definition in the process, which is the loader's.
    v.pfn_get_instance_proc_addr = get_instance_proc_addr;
    v.pfn_get_device_proc_addr = get_device_proc_addr;
    v.pfn_get_physical_device_proc_addr = None;
    vk::Result::SUCCESS
}

/// The layer's hook for `name`, or the next layer's function.
///
/// # Safety
/// Called by the loader or the program with a valid name.
#[no_mangle]
pub unsafe extern "system" fn vkGetInstanceProcAddr(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    get_instance_proc_addr(instance, name)
}

/// The layer's hook for `name` where the next layer has the function, or the next
/// layer's function.
///
/// # Safety
/// Called by the loader or the program with a valid device and name.
#[no_mangle]
pub unsafe extern "system" fn vkGetDeviceProcAddr(
    device: vk::Device,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    get_device_proc_addr(device, name)
}

unsafe extern "system" fn get_instance_proc_addr(
    instance: vk::Instance,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    if name.is_null() {
        return None;
    }
    let name = CStr::from_ptr(name);
    if name == c"vkGetInstanceProcAddr" {
        return dispatch::void_fn(get_instance_proc_addr as *const std::ffi::c_void);
    }
    if name == c"vkGetDeviceProcAddr" {
        return dispatch::void_fn(get_device_proc_addr as *const std::ffi::c_void);
    }
    if let Some(f) = hooks::find(hooks::INSTANCE_HOOKS, name) {
        return dispatch::void_fn(f);
    }
    if instance == vk::Instance::null() {
        return None;
    }
    let data = dispatch::instance_of(instance)?;
    let next = (data.next_gipa)(instance, name.as_ptr());
    // A device command the next layer has: the layer's hook stands in front of it.
    hook_or_next(name, next)
}

/// The layer's hook for `name` in front of `next`, the next layer's function; the hook
/// alone for a command the layer provides itself (debug labels and object names); else
/// `next` as it is.
///
/// # Safety
/// `name`'s hooks have the signature of the command `name` (as the hook tables hold).
unsafe fn hook_or_next(name: &CStr, next: vk::PFN_vkVoidFunction) -> vk::PFN_vkVoidFunction {
    match (next, hooks::find_recorded(name)) {
        (Some(_), Some(f)) => dispatch::void_fn(f),
        (None, Some(f)) if hooks::provided(name) => dispatch::void_fn(f),
        (next, _) => next,
    }
}

unsafe extern "system" fn get_device_proc_addr(
    device: vk::Device,
    name: *const c_char,
) -> vk::PFN_vkVoidFunction {
    if name.is_null() || device == vk::Device::null() {
        return None;
    }
    let name = CStr::from_ptr(name);
    if name == c"vkGetDeviceProcAddr" {
        return dispatch::void_fn(get_device_proc_addr as *const std::ffi::c_void);
    }
    let data = dispatch::device_of(device)?;
    let next = (data.next_gdpa)(device, name.as_ptr());
    hook_or_next(name, next)
}

/// The library's file name, as cargo builds it.
pub const LIBRARY_FILE: &str = "libmacroscope_capture.so";

/// The layer's JSON manifest for the loader, naming the library at `library`.
pub fn manifest(library: &std::path::Path) -> String {
    let path = library
        .display()
        .to_string()
        .replace('\\', "\\\\")
        .replace('"', "\\\"");
    format!(
        r#"{{
  "file_format_version": "1.2.0",
  "layer": {{
    "name": "{name}",
    "type": "GLOBAL",
    "library_path": "{path}",
    "api_version": "1.3.239",
    "implementation_version": "{version}",
    "description": "macroscope: records Vulkan calls into a trace to replay through a model of NVK"
  }}
}}
"#,
        name = LAYER_NAME.to_string_lossy(),
        version = env!("CARGO_PKG_VERSION").replace('.', ""),
    )
}
