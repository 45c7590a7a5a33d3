//! Instance and device creation: walking the loader's layer-link chains, building
//! dispatch tables, and hiding device extensions the layer cannot record.

use std::ffi::{c_char, c_void, CStr};

use ash::vk;
use ash::vk::Handle;
use trace_format::generated::trace::*;

use super::util::{slice, string, strings};
use crate::dispatch::{self, DeviceData, InstanceData};
use crate::ffi::{
    find_link_info, LayerDeviceCreateInfo, LayerDeviceLink, LayerInstanceCreateInfo,
    LayerInstanceLink,
};
use crate::generated::commands::{DEVICE_COMMANDS, INSTANCE_COMMANDS};
use crate::recorder::{self, record, Scope};
use crate::settings::LogLevel;
use crate::{extensions, frame_boundary, LAYER_NAME};

/// `vkCreateInstance`: calls down the chain, keeps the next layer's functions, and
/// starts the trace.
pub unsafe extern "system" fn create_instance(
    info: *const vk::InstanceCreateInfo,
    allocator: *const vk::AllocationCallbacks,
    out: *mut vk::Instance,
) -> vk::Result {
    let link_info: *mut LayerInstanceCreateInfo = find_link_info(
        (*info).p_next,
        vk::StructureType::LOADER_INSTANCE_CREATE_INFO,
    );
    if link_info.is_null() || (*link_info).u[0].is_null() {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    }
    let link = (*link_info).u[0] as *mut LayerInstanceLink;
    let next_gipa = (*link).pfn_next_get_instance_proc_addr;
    // The next layer finds its own link.
    (*link_info).u[0] = (*link).p_next as *mut c_void;
    let Some(create) = next_gipa(vk::Instance::null(), c"vkCreateInstance".as_ptr()) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    let create: vk::PFN_vkCreateInstance = std::mem::transmute(create);
    let result = create(info, allocator, out);
    if result != vk::Result::SUCCESS {
        return result;
    }
    let instance = *out;
    let fns = ash::Instance::load_with(
        |name| std::mem::transmute(next_gipa(instance, name.as_ptr())),
        instance,
    );
    dispatch::add_instance(
        dispatch::key(instance),
        InstanceData {
            handle: instance,
            next_gipa,
            fns,
            api_version: (*info)
                .p_application_info
                .as_ref()
                .map_or(vk::API_VERSION_1_0, |a| {
                    a.api_version.max(vk::API_VERSION_1_0)
                }),
            generated: INSTANCE_COMMANDS
                .iter()
                .map(|name| next_gipa(instance, name.as_ptr()))
                .collect(),
        },
    );
    recorder::start();
    record(Scope::Setup, result.as_raw(), || {
        let i = &*info;
        let application = (!i.p_application_info.is_null()).then(|| {
            let a = &*i.p_application_info;
            Box::new(table!(ApplicationInfoT {
                application_name: string(a.p_application_name),
                application_version: a.application_version,
                engine_name: string(a.p_engine_name),
                engine_version: a.engine_version,
                api_version: a.api_version,
            }))
        });
        Some(CallT::CreateInstance(Box::new(table!(CreateInstanceT {
            instance: instance.as_raw(),
            application,
            enabled_layers: Some(strings(i.pp_enabled_layer_names, i.enabled_layer_count)),
            enabled_extensions: Some(strings(
                i.pp_enabled_extension_names,
                i.enabled_extension_count,
            )),
        }))))
    });
    result
}

/// `vkDestroyInstance`: the trace is finished with the last instance.
pub unsafe extern "system" fn destroy_instance(
    instance: vk::Instance,
    allocator: *const vk::AllocationCallbacks,
) {
    if instance == vk::Instance::null() {
        return;
    }
    let key = dispatch::key(instance);
    let Some(data) = dispatch::instance(key) else {
        return;
    };
    record(Scope::Setup, 0, || {
        Some(CallT::DestroyInstance(Box::new(table!(DestroyInstanceT {
            instance: instance.as_raw(),
        }))))
    });
    (data.fns.fp_v1_0().destroy_instance)(instance, allocator);
    if dispatch::remove_instance(key) {
        // Not the end of capture: a program may make another instance after its last
        // (ParaView's pvpython renders on a second Zink screen), and its calls belong in
        // the trace. What was recorded goes to the file now; the footer at exit.
        recorder::flush();
    }
}

/// `vkEnumerateDeviceExtensionProperties`: the next layer's list without the
/// extensions this layer cannot record; none of its own.
pub unsafe extern "system" fn enumerate_device_extension_properties(
    physical_device: vk::PhysicalDevice,
    layer_name: *const c_char,
    count: *mut u32,
    properties: *mut vk::ExtensionProperties,
) -> vk::Result {
    if !layer_name.is_null() && CStr::from_ptr(layer_name) == LAYER_NAME {
        // The one device extension the layer itself provides.
        return copy_out(&[frame_boundary::properties()], count, properties);
    }
    let Some(data) = dispatch::instance_of(physical_device) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    let enumerate = data.fns.fp_v1_0().enumerate_device_extension_properties;
    let mut n = 0;
    let r = enumerate(physical_device, layer_name, &mut n, std::ptr::null_mut());
    if r != vk::Result::SUCCESS {
        return r;
    }
    let mut all = vec![vk::ExtensionProperties::default(); n as usize];
    let r = enumerate(physical_device, layer_name, &mut n, all.as_mut_ptr());
    if r != vk::Result::SUCCESS && r != vk::Result::INCOMPLETE {
        return r;
    }
    all.truncate(n as usize);
    let driver_has_frame_boundary = all
        .iter()
        .any(|e| e.extension_name_as_c_str() == Ok(frame_boundary::NAME));
    let mut kept: Vec<vk::ExtensionProperties> = all
        .into_iter()
        .filter(|e| {
            let name = e
                .extension_name_as_c_str()
                .map_or("", |n| n.to_str().unwrap_or(""));
            let keep = extensions::recordable(name);
            if !keep {
                recorder::log(
                    LogLevel::Debug,
                    &format!("hiding {name}: its commands are not recorded"),
                );
            }
            keep
        })
        .collect();
    if layer_name.is_null() && !driver_has_frame_boundary {
        kept.push(frame_boundary::properties());
    }
    copy_out(&kept, count, properties)
}

/// The two-call idiom: the count, or as many as fit and `VK_INCOMPLETE` if not all.
unsafe fn copy_out(
    list: &[vk::ExtensionProperties],
    count: *mut u32,
    properties: *mut vk::ExtensionProperties,
) -> vk::Result {
    if properties.is_null() {
        *count = list.len() as u32;
        return vk::Result::SUCCESS;
    }
    let n = (*count as usize).min(list.len());
    std::ptr::copy_nonoverlapping(list.as_ptr(), properties, n);
    *count = n as u32;
    if n < list.len() {
        vk::Result::INCOMPLETE
    } else {
        vk::Result::SUCCESS
    }
}

/// `vkCreateDevice`: calls down the chain, keeps the next layer's device functions,
/// records the physical device's identity and the device.
pub unsafe extern "system" fn create_device(
    physical_device: vk::PhysicalDevice,
    info: *const vk::DeviceCreateInfo,
    allocator: *const vk::AllocationCallbacks,
    out: *mut vk::Device,
) -> vk::Result {
    let Some(instance) = dispatch::instance_of(physical_device) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    let link_info: *mut LayerDeviceCreateInfo =
        find_link_info((*info).p_next, vk::StructureType::LOADER_DEVICE_CREATE_INFO);
    if link_info.is_null() || (*link_info).u[0].is_null() {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    }
    let link = (*link_info).u[0] as *mut LayerDeviceLink;
    let next_gipa = (*link).pfn_next_get_instance_proc_addr;
    let next_gdpa = (*link).pfn_next_get_device_proc_addr;
    (*link_info).u[0] = (*link).p_next as *mut c_void;
    let Some(create) = next_gipa(instance.handle, c"vkCreateDevice".as_ptr()) else {
        return vk::Result::ERROR_INITIALIZATION_FAILED;
    };
    let create: vk::PFN_vkCreateDevice = std::mem::transmute(create);
    // VK_EXT_frame_boundary, where the layer provides it, is not the driver's to see.
    let requested = slice(
        (*info).pp_enabled_extension_names,
        (*info).enabled_extension_count,
    );
    let wants_boundary = requested
        .iter()
        .any(|n| !n.is_null() && CStr::from_ptr(*n) == frame_boundary::NAME);
    let emulates_frame_boundary =
        wants_boundary && !driver_has(&instance, physical_device, frame_boundary::NAME);
    let passed: Vec<*const c_char> = requested
        .iter()
        .copied()
        .filter(|n| !(emulates_frame_boundary && CStr::from_ptr(*n) == frame_boundary::NAME))
        .collect();
    let mut down = *info;
    down.enabled_extension_count = passed.len() as u32;
    down.pp_enabled_extension_names = passed.as_ptr();
    let result = create(physical_device, &down, allocator, out);
    if result != vk::Result::SUCCESS {
        return result;
    }
    let device = *out;
    let fns = ash::Device::load_with(
        |name| std::mem::transmute(next_gdpa(device, name.as_ptr())),
        device,
    );
    let ext = DeviceData::load_ext(next_gdpa, device, super::EXTENSION_FUNCTIONS);
    dispatch::add_device(
        dispatch::key(device),
        DeviceData {
            handle: device,
            next_gdpa,
            fns,
            ext,
            mapped: std::sync::Mutex::new(crate::memory::MappedMemory::with_tracking(
                crate::recorder::settings().memory,
            )),
            emulates_frame_boundary,
            generated: DEVICE_COMMANDS
                .iter()
                .map(|name| next_gdpa(device, name.as_ptr()))
                .collect(),
            host_memory_types: host_memory_types(&instance, physical_device, false),
            cached_memory_types: host_memory_types(&instance, physical_device, true),
        },
    );
    record(Scope::Setup, 0, || {
        Some(physical_device_info(&instance, physical_device))
    });
    record(Scope::Setup, result.as_raw(), || {
        let i = &*info;
        let multiview = multiview_features(i);
        Some(CallT::CreateDevice(Box::new(table!(CreateDeviceT {
            physical_device: physical_device.as_raw(),
            device: device.as_raw(),
            queues: Some(
                slice(i.p_queue_create_infos, i.queue_create_info_count)
                    .iter()
                    .map(|q| table!(DeviceQueueCreateInfoT {
                        queue_family_index: q.queue_family_index,
                        queue_count: q.queue_count,
                    }))
                    .collect(),
            ),
            enabled_extensions: Some(strings(
                i.pp_enabled_extension_names,
                i.enabled_extension_count,
            )),
            multiview: multiview.0,
            multiview_geometry_shader: multiview.1,
            multiview_tessellation_shader: multiview.2,
            create_info: crate::generic::trees(|p| {
                crate::generic::with_nested(
                    crate::generic::chained(
                        p,
                        info,
                        1,
                        crate::generic::gaps_of(vk::StructureType::DEVICE_CREATE_INFO),
                    ),
                    info,
                    1,
                    crate::generated::commands::nested_VkDeviceCreateInfo,
                );
            })
            .and_then(|trees| trees.into_iter().next())
            .map(Box::new),
        }))))
    });
    result
}

/// Whether the driver (below the layer) offers device extension `name`.
unsafe fn driver_has(instance: &InstanceData, pd: vk::PhysicalDevice, name: &CStr) -> bool {
    let enumerate = instance.fns.fp_v1_0().enumerate_device_extension_properties;
    let mut n = 0;
    if enumerate(pd, std::ptr::null(), &mut n, std::ptr::null_mut()) != vk::Result::SUCCESS {
        return false;
    }
    let mut all = vec![vk::ExtensionProperties::default(); n as usize];
    let _ = enumerate(pd, std::ptr::null(), &mut n, all.as_mut_ptr());
    all.iter()
        .take(n as usize)
        .any(|e| e.extension_name_as_c_str() == Ok(name))
}

/// The multiview features the device was created with, from either structure that
/// can enable them.
unsafe fn multiview_features(info: &vk::DeviceCreateInfo) -> (bool, bool, bool) {
    if let Some(f) = super::util::find_in_chain::<vk::PhysicalDeviceMultiviewFeatures>(
        info.p_next,
        vk::StructureType::PHYSICAL_DEVICE_MULTIVIEW_FEATURES,
    ) {
        return (
            f.multiview != 0,
            f.multiview_geometry_shader != 0,
            f.multiview_tessellation_shader != 0,
        );
    }
    if let Some(f) = super::util::find_in_chain::<vk::PhysicalDeviceVulkan11Features>(
        info.p_next,
        vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
    ) {
        return (
            f.multiview != 0,
            f.multiview_geometry_shader != 0,
            f.multiview_tessellation_shader != 0,
        );
    }
    (false, false, false)
}

/// Who the device is: vendor, model, driver, multiview limits.
unsafe fn physical_device_info(instance: &InstanceData, pd: vk::PhysicalDevice) -> CallT {
    let props = instance.fns.get_physical_device_properties(pd);
    let mut info = table!(PhysicalDeviceInfoT {
        physical_device: pd.as_raw(),
        vendor_id: props.vendor_id,
        device_id: props.device_id,
        device_type: props.device_type.as_raw() as u32,
        device_name: props
            .device_name_as_c_str()
            .ok()
            .map(|n| n.to_string_lossy().into_owned()),
        api_version: props.api_version,
        driver_version: props.driver_version,
    });
    // Properties2 with driver properties is 1.2: only where the program asked for it.
    if props.api_version.min(instance.api_version) >= vk::API_VERSION_1_2 {
        let mut multiview = vk::PhysicalDeviceMultiviewProperties::default();
        let mut driver = vk::PhysicalDeviceDriverProperties::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default()
            .push_next(&mut multiview)
            .push_next(&mut driver);
        instance
            .fns
            .get_physical_device_properties2(pd, &mut props2);
        info.max_multiview_view_count = multiview.max_multiview_view_count;
        info.max_multiview_instance_index = multiview.max_multiview_instance_index;
        info.driver_name = driver
            .driver_name_as_c_str()
            .ok()
            .map(|n| n.to_string_lossy().into_owned());
        info.driver_info = driver
            .driver_info_as_c_str()
            .ok()
            .map(|n| n.to_string_lossy().into_owned());
    }
    CallT::PhysicalDeviceInfo(Box::new(info))
}

/// `vkDestroyDevice`.
pub unsafe extern "system" fn destroy_device(
    device: vk::Device,
    allocator: *const vk::AllocationCallbacks,
) {
    if device == vk::Device::null() {
        return;
    }
    let key = dispatch::key(device);
    let Some(data) = dispatch::device(key) else {
        return;
    };
    crate::frame_checksums::device_destroyed(data);
    record(Scope::Setup, 0, || {
        Some(CallT::DestroyDevice(Box::new(table!(DestroyDeviceT {
            device: device.as_raw(),
        }))))
    });
    (data.fns.fp_v1_0().destroy_device)(device, allocator);
    dispatch::remove_device(key);
}

/// `vkGetDeviceQueue`.
pub unsafe extern "system" fn get_device_queue(
    device: vk::Device,
    family: u32,
    index: u32,
    out: *mut vk::Queue,
) {
    let Some(data) = dispatch::device_of(device) else {
        return;
    };
    (data.fns.fp_v1_0().get_device_queue)(device, family, index, out);
    record_queue(device, family, index, *out);
}

/// `vkGetDeviceQueue2`.
pub unsafe extern "system" fn get_device_queue2(
    device: vk::Device,
    info: *const vk::DeviceQueueInfo2,
    out: *mut vk::Queue,
) {
    let Some(data) = dispatch::device_of(device) else {
        return;
    };
    (data.fns.fp_v1_1().get_device_queue2)(device, info, out);
    record_queue(
        device,
        (*info).queue_family_index,
        (*info).queue_index,
        *out,
    );
}

/// The memory types of `physical` that are host-visible and coherent (and `cached`,
/// when asked), a bit each.
unsafe fn host_memory_types(
    instance: &dispatch::InstanceData,
    physical: vk::PhysicalDevice,
    cached: bool,
) -> u32 {
    let props = instance.fns.get_physical_device_memory_properties(physical);
    let mut wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
    if cached {
        wanted |= vk::MemoryPropertyFlags::HOST_CACHED;
    }
    props.memory_types[..props.memory_type_count.min(32) as usize]
        .iter()
        .enumerate()
        .filter(|(_, t)| t.property_flags.contains(wanted))
        .fold(0, |bits, (i, _)| bits | 1 << i)
}

unsafe fn record_queue(device: vk::Device, family: u32, index: u32, queue: vk::Queue) {
    crate::frame_checksums::queue_family(queue, family);
    record(Scope::Setup, 0, || {
        Some(CallT::GetDeviceQueue(Box::new(table!(GetDeviceQueueT {
            device: device.as_raw(),
            queue_family_index: family,
            queue_index: index,
            queue: queue.as_raw(),
        }))))
    });
}
