//! The replay's instance and device: created on the system's Vulkan loader with what
//! the trace enabled, where the replay device has it.

use std::ffi::{CStr, CString};

use ash::vk;
use trace_format::generated::trace::{CreateDevice, CreateInstance};

use super::DeviceError;
use crate::generated::device_calls::feature_name;

/// Instance extensions the replay never needs: presentation happens offscreen, so no
/// window system's surface or display is made.
fn presentation_only(name: &str) -> bool {
    const PLATFORMS: &[&str] = &[
        "xcb", "xlib", "wayland", "win32", "android", "metal", "macos", "ios", "directfb",
        "fuchsia", "ggp", "screen", "_vi_", "ohos", "headless",
    ];
    (name.contains("surface") && PLATFORMS.iter().any(|p| name.contains(p)))
        || name.contains("display")
        || name == "VK_KHR_portability_enumeration"
}

/// Instance extensions about surfaces in general, kept where the loader has them: the
/// device's VK_KHR_swapchain, kept for its image layouts (`PRESENT_SRC_KHR`), needs
/// VK_KHR_surface, and extensions of both need theirs (VK_EXT_swapchain_colorspace,
/// VK_EXT_surface_maintenance1 for VK_EXT_swapchain_maintenance1).
fn surface_generic(name: &str) -> bool {
    (name.contains("surface") || name.contains("swapchain")) && !presentation_only(name)
}

/// Creates the instance the trace created, without its window systems' extensions.
pub fn create_instance(
    entry: &ash::Entry,
    c: &CreateInstance<'_>,
) -> Result<ash::Instance, DeviceError> {
    // SAFETY: plain queries of the loader.
    let available = unsafe { entry.enumerate_instance_extension_properties(None) }
        .map_err(|e| DeviceError::Setup(format!("listing instance extensions: {e}")))?;
    let has = |name: &str| {
        available.iter().any(|p| {
            p.extension_name_as_c_str()
                .is_ok_and(|n| n.to_bytes() == name.as_bytes())
        })
    };
    let mut names = Vec::new();
    for name in c.enabled_extensions().iter().flatten() {
        if presentation_only(name) {
            continue;
        }
        if !has(name) {
            if surface_generic(name) {
                continue;
            }
            return Err(DeviceError::Missing {
                what: format!("instance extension {name}"),
                seq: None,
            });
        }
        names.push(
            CString::new(name)
                .map_err(|_| DeviceError::Setup(format!("extension name {name:?}")))?,
        );
    }
    // SAFETY: a plain query of the loader.
    let loader_version = unsafe { entry.try_enumerate_instance_version() }
        .ok()
        .flatten()
        .unwrap_or(vk::API_VERSION_1_0);
    let wanted = c
        .application()
        .map_or(vk::API_VERSION_1_0, |a| a.api_version())
        .max(vk::API_VERSION_1_3);
    let pointers: Vec<*const i8> = names.iter().map(|n| n.as_ptr()).collect();
    let app = vk::ApplicationInfo::default()
        .application_name(c"macroscope replay")
        .api_version(wanted.min(loader_version));
    let info = vk::InstanceCreateInfo::default()
        .application_info(&app)
        .enabled_extension_names(&pointers);
    // SAFETY: `info` and what it points to live across the call.
    unsafe { entry.create_instance(&info, None) }
        .map_err(|e| DeviceError::Setup(format!("vkCreateInstance: {e}")))
}

/// What a `vkCreateInstance` asks of the instance the replay makes: the extensions it
/// enables that are not presentation's (which [`create_instance`] leaves out), sorted.
/// An instance made while another that asked the same lives is that one again.
pub fn instance_asks(c: &CreateInstance<'_>) -> Vec<String> {
    let mut names: Vec<String> = c
        .enabled_extensions()
        .iter()
        .flatten()
        .filter(|n| !presentation_only(n))
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// What a `vkCreateDevice` asks of the device, its pointers left out: the extensions
/// enabled, sorted, and the features (the core ones, and each chained structure's
/// type and members). Two devices that ask the same are made alike by
/// [`create_device`]: a replay makes one for both.
#[derive(Debug, PartialEq, Eq)]
pub struct DeviceAsks {
    extensions: Vec<String>,
    core_features: Vec<u8>,
    chained_features: Vec<(i32, Vec<u8>)>,
}

/// [`DeviceAsks`] of the device `c` makes.
pub fn device_asks(c: &CreateDevice<'_>) -> DeviceAsks {
    let mut extensions: Vec<String> = c
        .enabled_extensions()
        .iter()
        .flatten()
        .map(str::to_string)
        .collect();
    extensions.sort();
    extensions.dedup();
    let features = c
        .create_info()
        .and_then(|info| RecordedFeatures::of(&trace_format::generic_params::Param::Table(info)));
    let (core_features, chained_features) = match features {
        // A chained structure's first 16 bytes are its type and `pNext`, a pointer.
        Some(f) => (
            f.core,
            f.chained
                .into_iter()
                .map(|(s_type, bytes)| (s_type, bytes.get(16..).unwrap_or_default().to_vec()))
                .collect(),
        ),
        None => (Vec::new(), Vec::new()),
    };
    DeviceAsks {
        extensions,
        core_features,
        chained_features,
    }
}

/// The physical device to replay on: `--gpu N`, else the first.
pub fn pick_physical_device(
    instance: &ash::Instance,
    gpu: Option<usize>,
) -> Result<vk::PhysicalDevice, DeviceError> {
    // SAFETY: a plain query of a live instance.
    let devices = unsafe { instance.enumerate_physical_devices() }
        .map_err(|e| DeviceError::Setup(format!("vkEnumeratePhysicalDevices: {e}")))?;
    let index = gpu.unwrap_or(0);
    devices.get(index).copied().ok_or_else(|| {
        DeviceError::Setup(format!(
            "no GPU {index}: the loader lists {} device(s)",
            devices.len()
        ))
    })
}

/// The name of a physical device.
pub fn device_name(instance: &ash::Instance, physical: vk::PhysicalDevice) -> String {
    // SAFETY: a plain query of a live physical device.
    let props = unsafe { instance.get_physical_device_properties(physical) };
    props
        .device_name_as_c_str()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The queue family every captured queue replays on: the first with graphics and compute.
pub fn queue_family(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
) -> Result<u32, DeviceError> {
    // SAFETY: a plain query of a live physical device.
    let families = unsafe { instance.get_physical_device_queue_family_properties(physical) };
    families
        .iter()
        .position(|f| {
            f.queue_flags
                .contains(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)
        })
        .map(|i| i as u32)
        .ok_or_else(|| DeviceError::Missing {
            what: "queue family with graphics and compute".into(),
            seq: None,
        })
}

/// Device extensions the capture layer itself provides: their information is in the
/// trace already (frame boundaries are records of their own).
const LAYER_EXTENSIONS: &[&str] = &["VK_EXT_frame_boundary"];

/// What a refusal for missing device extensions or features adds: a capture made on
/// another driver (Zink on lavapipe enables everything lavapipe offers) replays only
/// so.
const SWITCH_OFF_HINT: &str = " (`--switch-off-missing` replays the trace without \
    them; a call that needs one then fails where it is made)";

/// Creates the device the trace created: its extensions (each must be there; the
/// swapchain's is kept where the device has it), and every feature the device has
/// but robust buffer access (which changes what the GPU does and costs).
pub fn create_device(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
    family: u32,
    c: &CreateDevice<'_>,
    seq: u64,
    switch_off_missing: bool,
) -> Result<ash::Device, DeviceError> {
    // SAFETY: plain queries of a live physical device.
    let available = unsafe { instance.enumerate_device_extension_properties(physical) }
        .map_err(|e| DeviceError::Setup(format!("listing device extensions: {e}")))?;
    let has = |name: &str| {
        available.iter().any(|p| {
            p.extension_name_as_c_str()
                .is_ok_and(|n| n.to_bytes() == name.as_bytes())
        })
    };
    let mut names: Vec<CString> = Vec::new();
    let mut missing = Vec::new();
    for name in c.enabled_extensions().iter().flatten() {
        if LAYER_EXTENSIONS.contains(&name) {
            continue;
        }
        if has(name) {
            names.push(
                CString::new(name)
                    .map_err(|_| DeviceError::Setup(format!("extension name {name:?}")))?,
            );
        } else if name != "VK_KHR_swapchain" {
            missing.push(name.to_string());
        }
    }
    if !missing.is_empty() {
        if !switch_off_missing {
            return Err(DeviceError::Missing {
                what: format!("device extension {}{SWITCH_OFF_HINT}", missing.join(", ")),
                seq: Some(seq),
            });
        }
        eprintln!(
            "note: call #{seq}: left out device extensions the device lacks: {}",
            missing.join(", ")
        );
    }
    if let Some(info) = c.create_info() {
        if let Some(mut recorded) =
            RecordedFeatures::of(&trace_format::generic_params::Param::Table(info))
        {
            let missing = recorded.missing(instance, physical);
            if !missing.is_empty() {
                let names: Vec<&str> = missing.iter().map(|(_, _, n)| n.as_str()).collect();
                if !switch_off_missing {
                    return Err(DeviceError::Missing {
                        what: format!("feature {}{SWITCH_OFF_HINT}", names.join(", ")),
                        seq: Some(seq),
                    });
                }
                eprintln!(
                    "note: call #{seq}: switched off features the device lacks: {}",
                    names.join(", ")
                );
                recorded.switch_off(&missing);
            }
            let mut chain = recorded.chain();
            return create(instance, physical, family, &names, chain.head(), seq);
        }
    }
    let enabled = |name: &CStr| names.iter().any(|n| n.as_c_str() == name);
    // Every feature the device has, in the structures of the core versions and of
    // the extensions enabled whose features programs use most.
    let mut v11 = vk::PhysicalDeviceVulkan11Features::default();
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut v13 = vk::PhysicalDeviceVulkan13Features::default();
    let mut eds = vk::PhysicalDeviceExtendedDynamicStateFeaturesEXT::default();
    let mut eds2 = vk::PhysicalDeviceExtendedDynamicState2FeaturesEXT::default();
    let mut eds3 = vk::PhysicalDeviceExtendedDynamicState3FeaturesEXT::default();
    let mut vertex_input = vk::PhysicalDeviceVertexInputDynamicStateFeaturesEXT::default();
    let mut color_write = vk::PhysicalDeviceColorWriteEnableFeaturesEXT::default();
    let mut line = vk::PhysicalDeviceLineRasterizationFeaturesEXT::default();
    let mut provoking = vk::PhysicalDeviceProvokingVertexFeaturesEXT::default();
    let mut depth_clip = vk::PhysicalDeviceDepthClipEnableFeaturesEXT::default();
    let mut xfb = vk::PhysicalDeviceTransformFeedbackFeaturesEXT::default();
    let mut conditional = vk::PhysicalDeviceConditionalRenderingFeaturesEXT::default();
    let mut gpl = vk::PhysicalDeviceGraphicsPipelineLibraryFeaturesEXT::default();
    let mut border = vk::PhysicalDeviceCustomBorderColorFeaturesEXT::default();
    let mut uint8 = vk::PhysicalDeviceIndexTypeUint8FeaturesEXT::default();
    let mut multi_draw = vk::PhysicalDeviceMultiDrawFeaturesEXT::default();
    let mut features = vk::PhysicalDeviceFeatures2::default();
    // SAFETY: a plain query of a live physical device.
    let version = unsafe { instance.get_physical_device_properties(physical) }.api_version;
    {
        let mut chain = features.push_next(&mut v11);
        if version >= vk::API_VERSION_1_2 {
            chain = chain.push_next(&mut v12);
        }
        if version >= vk::API_VERSION_1_3 {
            chain = chain.push_next(&mut v13);
        }
        macro_rules! with {
            ($ext:expr, $s:expr) => {
                if enabled($ext) {
                    chain = chain.push_next($s);
                }
            };
        }
        with!(c"VK_EXT_extended_dynamic_state", &mut eds);
        with!(c"VK_EXT_extended_dynamic_state2", &mut eds2);
        with!(c"VK_EXT_extended_dynamic_state3", &mut eds3);
        with!(c"VK_EXT_vertex_input_dynamic_state", &mut vertex_input);
        with!(c"VK_EXT_color_write_enable", &mut color_write);
        with!(c"VK_EXT_line_rasterization", &mut line);
        with!(c"VK_EXT_provoking_vertex", &mut provoking);
        with!(c"VK_EXT_depth_clip_enable", &mut depth_clip);
        with!(c"VK_EXT_transform_feedback", &mut xfb);
        with!(c"VK_EXT_conditional_rendering", &mut conditional);
        with!(c"VK_EXT_graphics_pipeline_library", &mut gpl);
        with!(c"VK_EXT_custom_border_color", &mut border);
        with!(c"VK_EXT_index_type_uint8", &mut uint8);
        with!(c"VK_EXT_multi_draw", &mut multi_draw);
        features = chain;
    }
    // SAFETY: `features` heads a chain of live structures.
    unsafe { instance.get_physical_device_features2(physical, &mut features) };
    features.features.robust_buffer_access = vk::FALSE;
    create(
        instance,
        physical,
        family,
        &names,
        (&mut features as *mut vk::PhysicalDeviceFeatures2).cast(),
        seq,
    )
}

/// `vkCreateDevice` with one queue of `family`, extensions `names` and the feature
/// chain at `features`.
fn create(
    instance: &ash::Instance,
    physical: vk::PhysicalDevice,
    family: u32,
    names: &[CString],
    features: *mut std::ffi::c_void,
    seq: u64,
) -> Result<ash::Device, DeviceError> {
    let priorities = [1.0f32];
    let queues = [vk::DeviceQueueCreateInfo::default()
        .queue_family_index(family)
        .queue_priorities(&priorities)];
    let pointers: Vec<*const i8> = names.iter().map(|n| n.as_ptr()).collect();
    let mut info = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&pointers);
    info.p_next = features;
    // SAFETY: `info` and its chain live across the call.
    unsafe { instance.create_device(physical, &info, None) }.map_err(|e| DeviceError::Call {
        seq,
        command: "vkCreateDevice".into(),
        reason: e.to_string(),
    })
}

/// The features a program enabled, as its `VkDeviceCreateInfo` recorded them: the
/// core ones (`pEnabledFeatures`, or a chained `VkPhysicalDeviceFeatures2`'s) and every
/// chained feature structure.
struct RecordedFeatures {
    core: Vec<u8>,
    /// Feature structures, by `sType`, whole (their `pNext` is relinked).
    chained: Vec<(i32, Vec<u8>)>,
}

/// A chain of feature structures in storage of its own.
struct FeatureChain {
    blocks: Vec<Vec<u64>>,
}

impl FeatureChain {
    /// The chain's first structure (a `VkPhysicalDeviceFeatures2`).
    fn head(&mut self) -> *mut std::ffi::c_void {
        self.blocks[0].as_mut_ptr().cast()
    }
}

/// The size of `VkPhysicalDeviceFeatures`.
const CORE_FEATURES: usize = std::mem::size_of::<vk::PhysicalDeviceFeatures>();

impl RecordedFeatures {
    fn of(info: &trace_format::generic_params::Param<'_>) -> Option<Self> {
        let nested: Vec<_> = info
            .nested()
            .map(|n| n.iter().collect())
            .unwrap_or_default();
        let mut core = nested
            .get(3)
            .and_then(|p| p.bytes())
            .map(<[u8]>::to_vec)
            .filter(|b| b.len() == CORE_FEATURES);
        let mut chained = Vec::new();
        for link in info.chain().into_iter().flatten() {
            let s_type = link.value() as u32 as i32;
            let bytes = link.bytes().map(<[u8]>::to_vec).unwrap_or_default();
            if s_type == vk::StructureType::PHYSICAL_DEVICE_FEATURES_2.as_raw() {
                core = bytes.get(16..16 + CORE_FEATURES).map(<[u8]>::to_vec);
            } else if bytes.len() > 16 && feature_name(Some(s_type), 16).is_some() {
                chained.push((s_type, bytes));
            }
        }
        Some(RecordedFeatures {
            core: core.unwrap_or_else(|| vec![0; CORE_FEATURES]),
            chained,
        })
    }

    /// The structures linked: a `VkPhysicalDeviceFeatures2` holding the core features,
    /// then the chained ones; with `zeroed`, every feature off (for a query).
    fn build(&self, zeroed: bool) -> FeatureChain {
        let mut head = vk::PhysicalDeviceFeatures2::default();
        let block = |bytes: &[u8]| {
            let mut b = vec![0u64; bytes.len().div_ceil(8)];
            // SAFETY: `b` has room for `bytes`.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bytes.as_ptr(),
                    b.as_mut_ptr().cast::<u8>(),
                    bytes.len(),
                )
            };
            b
        };
        let mut blocks = Vec::new();
        // SAFETY: `head` is plain data; its bytes are copied whole.
        let head_bytes = unsafe {
            std::slice::from_raw_parts(
                (&mut head as *mut vk::PhysicalDeviceFeatures2).cast::<u8>(),
                std::mem::size_of::<vk::PhysicalDeviceFeatures2>(),
            )
        };
        let mut h = head_bytes.to_vec();
        if !zeroed {
            h[16..16 + CORE_FEATURES].copy_from_slice(&self.core);
        }
        blocks.push(block(&h));
        for (_, bytes) in &self.chained {
            let mut b = bytes.clone();
            if zeroed {
                b[16..].fill(0);
            }
            blocks.push(block(&b));
        }
        // Link each to the next.
        for i in 0..blocks.len() {
            let next = blocks
                .get_mut(i + 1)
                .map_or(std::ptr::null_mut(), |b| b.as_mut_ptr());
            blocks[i][1] = next as u64;
        }
        FeatureChain { blocks }
    }

    fn chain(&self) -> FeatureChain {
        self.build(false)
    }

    /// The features enabled that `physical` lacks: where each lies (its structure, 0
    /// for the core features, and its byte offset there) and its name.
    fn missing(
        &self,
        instance: &ash::Instance,
        physical: vk::PhysicalDevice,
    ) -> Vec<(usize, usize, String)> {
        let mut supported = self.build(true);
        // SAFETY: the chain is made of whole feature structures, linked.
        unsafe {
            instance.get_physical_device_features2(
                physical,
                &mut *supported.head().cast::<vk::PhysicalDeviceFeatures2>(),
            )
        };
        let word = |b: &[u64], at: usize| {
            // SAFETY: `at` lies within the block (callers stay under its size).
            unsafe {
                b.as_ptr()
                    .cast::<u8>()
                    .add(at)
                    .cast::<u32>()
                    .read_unaligned()
            }
        };
        let mut missing = Vec::new();
        for at in (0..CORE_FEATURES).step_by(4) {
            let wanted = u32::from_le_bytes(self.core[at..at + 4].try_into().unwrap_or_default());
            if wanted != 0 && word(&supported.blocks[0], 16 + at) == 0 {
                if let Some((s, m)) = feature_name(None, at) {
                    missing.push((0, at, format!("{s}.{m}")));
                }
            }
        }
        for (i, ((s_type, bytes), block)) in
            self.chained.iter().zip(&supported.blocks[1..]).enumerate()
        {
            for at in (16..bytes.len().saturating_sub(3)).step_by(4) {
                let wanted = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or_default());
                if let Some((s, m)) = feature_name(Some(*s_type), at) {
                    if wanted != 0 && word(block, at) == 0 {
                        missing.push((i + 1, at, format!("{s}.{m}")));
                    }
                }
            }
        }
        missing
    }

    /// Switches off the features [`RecordedFeatures::missing`] found.
    fn switch_off(&mut self, missing: &[(usize, usize, String)]) {
        for (structure, at, _) in missing {
            let bytes = match structure {
                0 => Some(&mut self.core),
                i => self.chained.get_mut(i - 1).map(|(_, b)| b),
            };
            if let Some(field) = bytes.and_then(|b| b.get_mut(*at..*at + 4)) {
                field.fill(0);
            }
        }
    }
}
