//! Decoded GFXReconstruct calls into the records the capture layer makes for the same
//! calls: typed records for the calls the layer hooks by hand (mirroring each hook in
//! `capture-layer/src/hooks/`), `VulkanCall` records for the rest (by the generated
//! rules, see [`super::generic`]). Handles keep GFXReconstruct's ids.

use std::collections::HashMap;

use super::generic;
use super::params::{DecodedCall, StructValue, Value};
use super::tables::Rule;
use crate::generated::trace::*;

/// `VkStructureType` values the conversion looks for in chains.
mod s_type {
    pub const RENDER_PASS_MULTIVIEW_CREATE_INFO: u32 = 1000053000;
    pub const PHYSICAL_DEVICE_MULTIVIEW_FEATURES: u32 = 1000053001;
    pub const PHYSICAL_DEVICE_VULKAN_1_1_FEATURES: u32 = 49;
    pub const MEMORY_ALLOCATE_FLAGS_INFO: u32 = 1000060000;
    pub const COMMAND_BUFFER_INHERITANCE_RENDERING_INFO: u32 = 1000044004;
    pub const PIPELINE_RENDERING_CREATE_INFO: u32 = 1000044002;
    pub const PIPELINE_LIBRARY_CREATE_INFO_KHR: u32 = 1000290000;
    pub const GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT: u32 = 1000320002;
}

/// `VkObjectType` of each `vkDestroy*` the layer records as `DestroyObject`.
const DESTROYED: &[(&str, u32)] = &[
    ("vkDestroyBuffer", 9),
    ("vkDestroyImage", 10),
    ("vkDestroyImageView", 14),
    ("vkDestroyShaderModule", 15),
    ("vkDestroyPipelineLayout", 17),
    ("vkDestroyRenderPass", 18),
    ("vkDestroyPipeline", 19),
    ("vkDestroyFramebuffer", 24),
    ("vkDestroyCommandPool", 25),
    ("vkDestroyQueryPool", 12),
];

/// One record to write: its call, its result, and whether a frame ends after it.
pub struct Converted {
    /// The call.
    pub call: CallT,
    /// The `VkResult` it carries.
    pub result: i32,
}

/// A descriptor update template's entries: (descriptor type, count, offset, stride).
type TemplateEntries = Vec<(u32, u32, usize, usize)>;

/// What the conversion keeps between calls.
#[derive(Default)]
pub struct Converter {
    /// Each descriptor update template's entries: (type, count, offset, stride).
    templates: HashMap<u64, TemplateEntries>,
    /// Each mapped memory object's mapping offset.
    maps: HashMap<u64, u64>,
    /// Each physical device's properties, as the program last read them.
    properties: HashMap<u64, StructValue>,
    /// Calls converted without a typed record the layer would have made.
    pub skipped: HashMap<&'static str, u64>,
}

fn arg<'a>(call: &'a DecodedCall, name: &str) -> &'a Value {
    static NULL: Value = Value::Null;
    call.command
        .params
        .iter()
        .position(|p| p.name == name)
        .and_then(|i| call.params.get(i))
        .unwrap_or(&NULL)
}

fn word(call: &DecodedCall, name: &str) -> u64 {
    arg(call, name).word()
}

fn u32_of(call: &DecodedCall, name: &str) -> u32 {
    word(call, name) as u32
}

/// The first handle an output pointer holds.
fn out_handle(call: &DecodedCall, name: &str) -> u64 {
    arg(call, name).words64().first().copied().unwrap_or(0)
}

fn rect(s: Option<&StructValue>) -> Option<Rect2DT> {
    let s = s?;
    let (o, e) = (s.get("offset").structure()?, s.get("extent").structure()?);
    Some(Rect2DT {
        offset: Offset2DT {
            x: o.u32("x") as i32,
            y: o.u32("y") as i32,
        },
        extent: Extent2DT {
            width: e.u32("width"),
            height: e.u32("height"),
        },
    })
}

fn clear(bytes: &[u8]) -> ClearValueT {
    let w = |i: usize| {
        bytes
            .get(i * 4..i * 4 + 4)
            .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    ClearValueT {
        w0: w(0),
        w1: w(1),
        w2: w(2),
        w3: w(3),
    }
}

fn reference(s: &StructValue) -> AttachmentReferenceT {
    AttachmentReferenceT {
        attachment: s.u32("attachment"),
        layout: s.u32("layout"),
        aspect_mask: s.u32("aspectMask"),
    }
}

fn attachment(a: &StructValue) -> AttachmentDescriptionT {
    AttachmentDescriptionT {
        flags: a.u32("flags"),
        format: a.u32("format"),
        samples: a.u32("samples"),
        load_op: a.u32("loadOp"),
        store_op: a.u32("storeOp"),
        stencil_load_op: a.u32("stencilLoadOp"),
        stencil_store_op: a.u32("stencilStoreOp"),
        initial_layout: a.u32("initialLayout"),
        final_layout: a.u32("finalLayout"),
    }
}

fn references(v: &Value) -> Vec<AttachmentReferenceT> {
    v.structures().iter().map(reference).collect()
}

fn rendering_attachment(a: &StructValue) -> RenderingAttachmentT {
    RenderingAttachmentT {
        image_view: a.word("imageView"),
        image_layout: a.u32("imageLayout"),
        resolve_mode: a.u32("resolveMode"),
        resolve_image_view: a.word("resolveImageView"),
        resolve_image_layout: a.u32("resolveImageLayout"),
        load_op: a.u32("loadOp"),
        store_op: a.u32("storeOp"),
        clear_value: Some(clear(a.get("clearValue").bytes())),
    }
}

fn stage(s: &StructValue) -> ShaderStageT {
    let spec = s.get("pSpecializationInfo").structure();
    ShaderStageT {
        flags: s.u32("flags"),
        stage: s.u32("stage"),
        module: s.word("module"),
        entry_point: Some(s.get("pName").string()),
        specialization_entries: Some(spec.map_or_else(Vec::new, |sp| {
            sp.get("pMapEntries")
                .structures()
                .iter()
                .map(|e| SpecializationEntryT {
                    constant_id: e.u32("constantID"),
                    offset: e.u32("offset"),
                    size: e.word("size"),
                })
                .collect()
        })),
        specialization_data: Some(
            spec.map_or_else(Vec::new, |sp| sp.get("pData").bytes().to_vec()),
        ),
    }
}

/// Pipeline library parts (`VkGraphicsPipelineLibraryFlagBitsEXT`).
const VERTEX_INPUT_INTERFACE: u32 = 0x1;
const PRE_RASTERIZATION_SHADERS: u32 = 0x2;
const FRAGMENT_SHADER: u32 = 0x4;

fn pipeline(p: &StructValue, handle: u64) -> GraphicsPipelineT {
    let libraries = p
        .find(s_type::PIPELINE_LIBRARY_CREATE_INFO_KHR)
        .map_or_else(Vec::new, |l| l.get("pLibraries").words64());
    let library_parts = p
        .find(s_type::GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT)
        .map_or(0, |g| g.u32("flags"));
    let defines = |part: u32| {
        if library_parts != 0 {
            library_parts & part != 0
        } else {
            libraries.is_empty()
        }
    };
    let rendering = p.find(s_type::PIPELINE_RENDERING_CREATE_INFO).map(|r| {
        Box::new(PipelineRenderingT {
            view_mask: r.u32("viewMask"),
            color_attachment_formats: Some(r.get("pColorAttachmentFormats").words32()),
            depth_attachment_format: r.u32("depthAttachmentFormat"),
            stencil_attachment_format: r.u32("stencilAttachmentFormat"),
        })
    });
    let dynamic_states = p
        .get("pDynamicState")
        .structure()
        .map_or_else(Vec::new, |d| d.get("pDynamicStates").words32());
    let assembly = p
        .get("pInputAssemblyState")
        .structure()
        .filter(|_| defines(VERTEX_INPUT_INTERFACE));
    let tessellation = p
        .get("pTessellationState")
        .structure()
        .filter(|_| defines(PRE_RASTERIZATION_SHADERS));
    GraphicsPipelineT {
        pipeline: handle,
        flags: p.u32("flags"),
        stages: Some(if defines(PRE_RASTERIZATION_SHADERS | FRAGMENT_SHADER) {
            p.get("pStages").structures().iter().map(stage).collect()
        } else {
            Vec::new()
        }),
        topology: assembly.map_or(0, |a| a.u32("topology")),
        primitive_restart_enable: assembly.is_some_and(|a| a.u32("primitiveRestartEnable") != 0),
        patch_control_points: tessellation.map_or(0, |t| t.u32("patchControlPoints")),
        layout: p.word("layout"),
        render_pass: p.word("renderPass"),
        subpass: p.u32("subpass"),
        rendering,
        state: Some(Box::new(super::pipeline_state::pipeline_state(
            p,
            &defines,
            &dynamic_states,
        ))),
        dynamic_states: Some(dynamic_states),
        libraries: Some(libraries),
        library_parts,
    }
}

fn submit_info(s: &StructValue) -> SubmitInfoT {
    SubmitInfoT {
        wait_semaphores: Some(s.get("pWaitSemaphores").words64()),
        wait_dst_stage_masks: Some(
            s.get("pWaitDstStageMask")
                .words32()
                .into_iter()
                .map(u64::from)
                .collect(),
        ),
        command_buffers: Some(s.get("pCommandBuffers").words64()),
        signal_semaphores: Some(s.get("pSignalSemaphores").words64()),
    }
}

fn submit_info2(s: &StructValue) -> SubmitInfoT {
    let waits = s.get("pWaitSemaphoreInfos").structures();
    SubmitInfoT {
        wait_semaphores: Some(waits.iter().map(|w| w.word("semaphore")).collect()),
        wait_dst_stage_masks: Some(waits.iter().map(|w| w.word("stageMask")).collect()),
        command_buffers: Some(
            s.get("pCommandBufferInfos")
                .structures()
                .iter()
                .map(|c| c.word("commandBuffer"))
                .collect(),
        ),
        signal_semaphores: Some(
            s.get("pSignalSemaphoreInfos")
                .structures()
                .iter()
                .map(|w| w.word("semaphore"))
                .collect(),
        ),
    }
}

fn one(call: CallT) -> Vec<Converted> {
    vec![Converted { call, result: 0 }]
}

impl Converter {
    /// The records the capture layer makes for `call` (none for a call it does not
    /// record, such as one that failed).
    pub fn convert(&mut self, call: &DecodedCall) -> Vec<Converted> {
        let result = call.result as u32 as i32;
        let mut out = self.typed(call);
        let name = call.command.name;
        if out.is_none() && call.command.generic {
            out = Some(one(self.generic(call)));
        }
        let mut out = out.unwrap_or_else(|| {
            *self.skipped.entry(name).or_default() += 1;
            Vec::new()
        });
        // The layer records set-up calls with their result; commands and submits with 0.
        if !name.starts_with("vkCmd") && !name.starts_with("vkQueue") {
            for c in &mut out {
                if !matches!(c.call, CallT::PhysicalDeviceInfo(_)) {
                    c.result = result;
                }
            }
        }
        out
    }

    /// A generic `VulkanCall` record, as the layer's generated hook makes it.
    fn generic(&mut self, call: &DecodedCall) -> CallT {
        let params = call
            .command
            .params
            .iter()
            .zip(&call.params)
            .map(|(p, v)| {
                if p.rule == Rule::TemplateData {
                    let template = call
                        .command
                        .params
                        .iter()
                        .position(|q| q.name == "descriptorUpdateTemplate")
                        .and_then(|i| call.params.get(i))
                        .map_or(0, Value::word);
                    self.template_data(template, v)
                } else {
                    generic::param(v, p.kind, p.rule)
                }
            })
            .collect();
        if let Some(template) = self.created_template(call) {
            self.templates.insert(template.0, template.1);
        }
        if call
            .command
            .name
            .starts_with("vkGetPhysicalDeviceProperties")
        {
            let pd = word(call, "physicalDevice");
            if let Some(p) = arg(call, "pProperties").structure() {
                let p = if p.get("properties").structure().is_some() {
                    p.get("properties").structure().cloned()
                } else {
                    Some(p.clone())
                };
                if let Some(p) = p {
                    self.properties.insert(pd, p);
                }
            }
        }
        CallT::VulkanCall(Box::new(VulkanCallT {
            command: Some(call.command.name.to_string()),
            params: Some(params),
        }))
    }

    /// A template's handle and entries, where `call` creates one.
    fn created_template(&self, call: &DecodedCall) -> Option<(u64, TemplateEntries)> {
        if !call
            .command
            .name
            .starts_with("vkCreateDescriptorUpdateTemplate")
            || call.result != 0
        {
            return None;
        }
        let info = arg(call, "pCreateInfo").structure()?;
        let entries = info
            .get("pDescriptorUpdateEntries")
            .structures()
            .iter()
            .map(|e| {
                (
                    e.u32("descriptorType"),
                    e.u32("descriptorCount"),
                    e.word("offset") as usize,
                    e.word("stride") as usize,
                )
            })
            .collect();
        Some((out_handle(call, "pDescriptorUpdateTemplate"), entries))
    }

    /// Template data rebuilt in the program's layout from GFXReconstruct's grouped
    /// descriptors, recorded as the layer records it: a nested parameter per byte run
    /// the template reads.
    fn template_data(&self, template: u64, v: &Value) -> VulkanParamT {
        let Value::Template {
            images,
            buffers,
            texel_views,
        } = v
        else {
            return VulkanParamT::default();
        };
        let Some(entries) = self.templates.get(&template) else {
            return VulkanParamT::default();
        };
        let kind = |ty: u32| match ty {
            0..=4 | 10 => 0, // samplers, images, input attachments
            6..=9 => 1,      // buffers
            1000138000 => 3, // inline uniform blocks
            _ => 2,          // texel buffer views (and acceleration structures)
        };
        let sizes = [24usize, 24, 8];
        let mut next = [0usize; 3];
        let sources = [images, buffers, texel_views];
        let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
        let mut data: Vec<u8> = Vec::new();
        for &(ty, count, offset, stride) in entries {
            let k = kind(ty);
            if k == 3 {
                continue;
            }
            let size = sizes[k];
            for i in 0..count as usize {
                let at = offset.saturating_add(i.saturating_mul(stride));
                let Some(src) = sources[k].get(next[k] * size..(next[k] + 1) * size) else {
                    break;
                };
                next[k] += 1;
                if at > 1 << 24 {
                    continue;
                }
                if data.len() < at + size {
                    data.resize(at + size, 0);
                }
                data[at..at + size].copy_from_slice(src);
                runs.push(at..at + size);
            }
        }
        runs.sort_unstable_by_key(|r| r.start);
        let mut merged: Vec<std::ops::Range<usize>> = Vec::new();
        for r in runs {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        VulkanParamT {
            value: 1,
            nested: Some(
                merged
                    .into_iter()
                    .map(|r| VulkanParamT {
                        value: r.start as u64,
                        bytes: Some(data[r].to_vec()),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        }
    }

    /// The bytes of a memory fill, as the layer records them: offset into the memory
    /// object (GFXReconstruct gives it into the mapping).
    pub fn memory_contents(&self, memory: u64, offset: u64, data: Vec<u8>) -> CallT {
        let base = self.maps.get(&memory).copied().unwrap_or(0);
        CallT::MemoryContents(Box::new(MemoryContentsT {
            memory,
            offset: base.saturating_add(offset),
            data: Some(data),
        }))
    }

    /// The typed records of a call the layer hooks by hand; `None` for the others.
    fn typed(&mut self, call: &DecodedCall) -> Option<Vec<Converted>> {
        let name = call.command.name;
        let ok = call.result == 0;
        let cb = || word(call, "commandBuffer");
        let info = || arg(call, "pCreateInfo").structure();
        let device = || word(call, "device");
        if let Some(&(_, object_type)) = DESTROYED.iter().find(|(n, _)| *n == name) {
            let handle = call.params.get(1).map_or(0, Value::word);
            return Some(one(CallT::DestroyObject(Box::new(DestroyObjectT {
                device: device(),
                object_type,
                handle,
            }))));
        }
        let call_t = match name {
            "vkCreateInstance" => {
                let i = info()?;
                let application = i.get("pApplicationInfo").structure().map(|a| {
                    Box::new(ApplicationInfoT {
                        application_name: Some(a.get("pApplicationName").string()),
                        application_version: a.u32("applicationVersion"),
                        engine_name: Some(a.get("pEngineName").string()),
                        engine_version: a.u32("engineVersion"),
                        api_version: a.u32("apiVersion"),
                    })
                });
                CallT::CreateInstance(Box::new(CreateInstanceT {
                    instance: out_handle(call, "pInstance"),
                    application,
                    enabled_layers: Some(i.get("ppEnabledLayerNames").strings()),
                    enabled_extensions: Some(i.get("ppEnabledExtensionNames").strings()),
                }))
            }
            "vkDestroyInstance" => CallT::DestroyInstance(Box::new(DestroyInstanceT {
                instance: word(call, "instance"),
            })),
            "vkCreateDevice" => {
                if !ok {
                    return Some(Vec::new());
                }
                let i = info()?;
                let pd = word(call, "physicalDevice");
                let features = i
                    .find(s_type::PHYSICAL_DEVICE_MULTIVIEW_FEATURES)
                    .or_else(|| i.find(s_type::PHYSICAL_DEVICE_VULKAN_1_1_FEATURES));
                let flag = |n: &str| features.is_some_and(|f| f.u32(n) != 0);
                let mut out = Vec::new();
                if let Some(p) = self.properties.get(&pd) {
                    let name = p.get("deviceName").bytes();
                    let end = name.iter().position(|b| *b == 0).unwrap_or(name.len());
                    out.push(Converted {
                        call: CallT::PhysicalDeviceInfo(Box::new(PhysicalDeviceInfoT {
                            physical_device: pd,
                            vendor_id: p.u32("vendorID"),
                            device_id: p.u32("deviceID"),
                            device_type: p.u32("deviceType"),
                            device_name: Some(String::from_utf8_lossy(&name[..end]).into_owned()),
                            api_version: p.u32("apiVersion"),
                            driver_version: p.u32("driverVersion"),
                            ..Default::default()
                        })),
                        result: 0,
                    });
                }
                out.push(Converted {
                    call: CallT::CreateDevice(Box::new(CreateDeviceT {
                        physical_device: pd,
                        device: out_handle(call, "pDevice"),
                        queues: Some(
                            i.get("pQueueCreateInfos")
                                .structures()
                                .iter()
                                .map(|q| DeviceQueueCreateInfoT {
                                    queue_family_index: q.u32("queueFamilyIndex"),
                                    queue_count: q.u32("queueCount"),
                                })
                                .collect(),
                        ),
                        enabled_extensions: Some(i.get("ppEnabledExtensionNames").strings()),
                        multiview: flag("multiview"),
                        multiview_geometry_shader: flag("multiviewGeometryShader"),
                        multiview_tessellation_shader: flag("multiviewTessellationShader"),
                        create_info: Some(Box::new(generic::elements(
                            arg(call, "pCreateInfo"),
                            true,
                            true,
                        ))),
                    })),
                    result: 0,
                });
                return Some(out);
            }
            "vkDestroyDevice" => {
                CallT::DestroyDevice(Box::new(DestroyDeviceT { device: device() }))
            }
            "vkGetDeviceQueue" => CallT::GetDeviceQueue(Box::new(GetDeviceQueueT {
                device: device(),
                queue_family_index: u32_of(call, "queueFamilyIndex"),
                queue_index: u32_of(call, "queueIndex"),
                queue: out_handle(call, "pQueue"),
            })),
            "vkGetDeviceQueue2" => {
                let i = arg(call, "pQueueInfo").structure()?;
                CallT::GetDeviceQueue(Box::new(GetDeviceQueueT {
                    device: device(),
                    queue_family_index: i.u32("queueFamilyIndex"),
                    queue_index: i.u32("queueIndex"),
                    queue: out_handle(call, "pQueue"),
                }))
            }
            "vkAllocateMemory" => {
                let i = arg(call, "pAllocateInfo").structure()?;
                CallT::AllocateMemory(Box::new(AllocateMemoryT {
                    device: device(),
                    memory: out_handle(call, "pMemory"),
                    size: i.word("allocationSize"),
                    memory_type_index: i.u32("memoryTypeIndex"),
                    flags: i
                        .find(s_type::MEMORY_ALLOCATE_FLAGS_INFO)
                        .map_or(0, |f| f.u32("flags")),
                }))
            }
            "vkFreeMemory" => CallT::FreeMemory(Box::new(FreeMemoryT {
                device: device(),
                memory: word(call, "memory"),
            })),
            "vkMapMemory" => {
                let memory = word(call, "memory");
                self.maps.insert(memory, word(call, "offset"));
                CallT::MapMemory(Box::new(MapMemoryT {
                    device: device(),
                    memory,
                    offset: word(call, "offset"),
                    size: word(call, "size"),
                    flags: u32_of(call, "flags"),
                }))
            }
            "vkUnmapMemory" => CallT::UnmapMemory(Box::new(UnmapMemoryT {
                device: device(),
                memory: word(call, "memory"),
            })),
            "vkFlushMappedMemoryRanges" => {
                CallT::FlushMappedMemoryRanges(Box::new(FlushMappedMemoryRangesT {
                    device: device(),
                    ranges: Some(
                        arg(call, "pMemoryRanges")
                            .structures()
                            .iter()
                            .map(|r| MemoryRangeT {
                                memory: r.word("memory"),
                                offset: r.word("offset"),
                                size: r.word("size"),
                            })
                            .collect(),
                    ),
                }))
            }
            "vkCreateBuffer" => {
                let i = info()?;
                CallT::CreateBuffer(Box::new(CreateBufferT {
                    device: device(),
                    buffer: out_handle(call, "pBuffer"),
                    flags: i.u32("flags"),
                    size: i.word("size"),
                    usage: i.u32("usage"),
                }))
            }
            "vkBindBufferMemory" => CallT::BindBufferMemory(Box::new(BindBufferMemoryT {
                device: device(),
                buffer: word(call, "buffer"),
                memory: word(call, "memory"),
                offset: word(call, "memoryOffset"),
            })),
            "vkBindBufferMemory2" | "vkBindBufferMemory2KHR" => {
                return Some(
                    arg(call, "pBindInfos")
                        .structures()
                        .iter()
                        .map(|b| Converted {
                            call: CallT::BindBufferMemory(Box::new(BindBufferMemoryT {
                                device: device(),
                                buffer: b.word("buffer"),
                                memory: b.word("memory"),
                                offset: b.word("memoryOffset"),
                            })),
                            result: 0,
                        })
                        .collect(),
                )
            }
            "vkCreateImage" => {
                let i = info()?;
                let e = i.get("extent").structure()?;
                CallT::CreateImage(Box::new(CreateImageT {
                    device: device(),
                    image: out_handle(call, "pImage"),
                    flags: i.u32("flags"),
                    image_type: i.u32("imageType"),
                    format: i.u32("format"),
                    extent: Some(Extent3DT {
                        width: e.u32("width"),
                        height: e.u32("height"),
                        depth: e.u32("depth"),
                    }),
                    mip_levels: i.u32("mipLevels"),
                    array_layers: i.u32("arrayLayers"),
                    samples: i.u32("samples"),
                    tiling: i.u32("tiling"),
                    usage: i.u32("usage"),
                    initial_layout: i.u32("initialLayout"),
                }))
            }
            "vkBindImageMemory" => CallT::BindImageMemory(Box::new(BindImageMemoryT {
                device: device(),
                image: word(call, "image"),
                memory: word(call, "memory"),
                offset: word(call, "memoryOffset"),
            })),
            "vkBindImageMemory2" | "vkBindImageMemory2KHR" => {
                return Some(
                    arg(call, "pBindInfos")
                        .structures()
                        .iter()
                        .map(|b| Converted {
                            call: CallT::BindImageMemory(Box::new(BindImageMemoryT {
                                device: device(),
                                image: b.word("image"),
                                memory: b.word("memory"),
                                offset: b.word("memoryOffset"),
                            })),
                            result: 0,
                        })
                        .collect(),
                )
            }
            "vkCreateImageView" => {
                let i = info()?;
                let r = i.get("subresourceRange").structure()?;
                let components = i.get("components").structure().map_or(0, |c| {
                    ["r", "g", "b", "a"]
                        .iter()
                        .enumerate()
                        .map(|(n, k)| (c.u32(k) & 0xff) << (8 * n))
                        .sum()
                });
                CallT::CreateImageView(Box::new(CreateImageViewT {
                    device: device(),
                    image_view: out_handle(call, "pView"),
                    image: i.word("image"),
                    view_type: i.u32("viewType"),
                    format: i.u32("format"),
                    aspect_mask: r.u32("aspectMask"),
                    base_mip_level: r.u32("baseMipLevel"),
                    level_count: r.u32("levelCount"),
                    base_array_layer: r.u32("baseArrayLayer"),
                    layer_count: r.u32("layerCount"),
                    components,
                    flags: i.u32("flags"),
                }))
            }
            "vkCreateFramebuffer" => {
                let i = info()?;
                CallT::CreateFramebuffer(Box::new(CreateFramebufferT {
                    device: device(),
                    framebuffer: out_handle(call, "pFramebuffer"),
                    flags: i.u32("flags"),
                    render_pass: i.word("renderPass"),
                    attachments: Some(i.get("pAttachments").words64()),
                    width: i.u32("width"),
                    height: i.u32("height"),
                    layers: i.u32("layers"),
                }))
            }
            "vkCreateShaderModule" => {
                let i = info()?;
                CallT::CreateShaderModule(Box::new(CreateShaderModuleT {
                    device: device(),
                    shader_module: out_handle(call, "pShaderModule"),
                    flags: i.u32("flags"),
                    code: Some(i.get("pCode").words32()),
                }))
            }
            "vkCreatePipelineLayout" => {
                let i = info()?;
                CallT::CreatePipelineLayout(Box::new(CreatePipelineLayoutT {
                    device: device(),
                    pipeline_layout: out_handle(call, "pPipelineLayout"),
                    flags: i.u32("flags"),
                    set_layouts: Some(i.get("pSetLayouts").words64()),
                    push_constant_ranges: Some(
                        i.get("pPushConstantRanges")
                            .structures()
                            .iter()
                            .map(|r| PushConstantRangeT {
                                stage_flags: r.u32("stageFlags"),
                                offset: r.u32("offset"),
                                size: r.u32("size"),
                            })
                            .collect(),
                    ),
                }))
            }
            "vkCreateCommandPool" => {
                let i = info()?;
                CallT::CreateCommandPool(Box::new(CreateCommandPoolT {
                    device: device(),
                    command_pool: out_handle(call, "pCommandPool"),
                    flags: i.u32("flags"),
                    queue_family_index: i.u32("queueFamilyIndex"),
                }))
            }
            "vkAllocateCommandBuffers" => {
                let i = arg(call, "pAllocateInfo").structure()?;
                CallT::AllocateCommandBuffers(Box::new(AllocateCommandBuffersT {
                    device: device(),
                    command_pool: i.word("commandPool"),
                    level: i.u32("level"),
                    command_buffers: Some(arg(call, "pCommandBuffers").words64()),
                }))
            }
            "vkCreateQueryPool" => {
                let i = info()?;
                CallT::CreateQueryPool(Box::new(CreateQueryPoolT {
                    device: device(),
                    query_pool: out_handle(call, "pQueryPool"),
                    flags: i.u32("flags"),
                    query_type: i.u32("queryType"),
                    query_count: i.u32("queryCount"),
                    pipeline_statistics: i.u32("pipelineStatistics"),
                }))
            }
            "vkCreateRenderPass" => {
                let i = info()?;
                let multiview = i.find(s_type::RENDER_PASS_MULTIVIEW_CREATE_INFO);
                let masks = multiview.map_or_else(Vec::new, |m| m.get("pViewMasks").words32());
                let offsets = multiview.map_or_else(Vec::new, |m| m.get("pViewOffsets").words32());
                let subpasses = i
                    .get("pSubpasses")
                    .structures()
                    .iter()
                    .enumerate()
                    .map(|(n, s)| SubpassDescriptionT {
                        flags: s.u32("flags"),
                        pipeline_bind_point: s.u32("pipelineBindPoint"),
                        view_mask: masks.get(n).copied().unwrap_or(0),
                        input_attachments: Some(references(s.get("pInputAttachments"))),
                        color_attachments: Some(references(s.get("pColorAttachments"))),
                        resolve_attachments: Some(references(s.get("pResolveAttachments"))),
                        depth_stencil_attachment: s
                            .get("pDepthStencilAttachment")
                            .structure()
                            .map(reference),
                        preserve_attachments: Some(s.get("pPreserveAttachments").words32()),
                    })
                    .collect();
                CallT::CreateRenderPass(Box::new(CreateRenderPassT {
                    device: device(),
                    render_pass: out_handle(call, "pRenderPass"),
                    version: 1,
                    attachments: Some(
                        i.get("pAttachments")
                            .structures()
                            .iter()
                            .map(attachment)
                            .collect(),
                    ),
                    subpasses: Some(subpasses),
                    dependencies: Some(
                        i.get("pDependencies")
                            .structures()
                            .iter()
                            .enumerate()
                            .map(|(n, d)| SubpassDependencyT {
                                src_subpass: d.u32("srcSubpass"),
                                dst_subpass: d.u32("dstSubpass"),
                                src_stage_mask: d.word("srcStageMask"),
                                dst_stage_mask: d.word("dstStageMask"),
                                src_access_mask: d.word("srcAccessMask"),
                                dst_access_mask: d.word("dstAccessMask"),
                                dependency_flags: d.u32("dependencyFlags"),
                                view_offset: offsets.get(n).copied().unwrap_or(0) as i32,
                            })
                            .collect(),
                    ),
                    correlation_masks: Some(
                        multiview.map_or_else(Vec::new, |m| m.get("pCorrelationMasks").words32()),
                    ),
                }))
            }
            "vkCreateRenderPass2" | "vkCreateRenderPass2KHR" => {
                let i = info()?;
                let subpasses = i
                    .get("pSubpasses")
                    .structures()
                    .iter()
                    .map(|s| SubpassDescriptionT {
                        flags: s.u32("flags"),
                        pipeline_bind_point: s.u32("pipelineBindPoint"),
                        view_mask: s.u32("viewMask"),
                        input_attachments: Some(references(s.get("pInputAttachments"))),
                        color_attachments: Some(references(s.get("pColorAttachments"))),
                        resolve_attachments: Some(references(s.get("pResolveAttachments"))),
                        depth_stencil_attachment: s
                            .get("pDepthStencilAttachment")
                            .structure()
                            .map(reference),
                        preserve_attachments: Some(s.get("pPreserveAttachments").words32()),
                    })
                    .collect();
                CallT::CreateRenderPass(Box::new(CreateRenderPassT {
                    device: device(),
                    render_pass: out_handle(call, "pRenderPass"),
                    version: 2,
                    attachments: Some(
                        i.get("pAttachments")
                            .structures()
                            .iter()
                            .map(attachment)
                            .collect(),
                    ),
                    subpasses: Some(subpasses),
                    dependencies: Some(
                        i.get("pDependencies")
                            .structures()
                            .iter()
                            .map(|d| SubpassDependencyT {
                                src_subpass: d.u32("srcSubpass"),
                                dst_subpass: d.u32("dstSubpass"),
                                src_stage_mask: d.word("srcStageMask"),
                                dst_stage_mask: d.word("dstStageMask"),
                                src_access_mask: d.word("srcAccessMask"),
                                dst_access_mask: d.word("dstAccessMask"),
                                dependency_flags: d.u32("dependencyFlags"),
                                view_offset: d.u32("viewOffset") as i32,
                            })
                            .collect(),
                    ),
                    correlation_masks: Some(i.get("pCorrelatedViewMasks").words32()),
                }))
            }
            "vkCreateGraphicsPipelines" => {
                let made = arg(call, "pPipelines").words64();
                let pipelines = arg(call, "pCreateInfos")
                    .structures()
                    .iter()
                    .zip(made)
                    .filter(|(_, p)| *p != 0)
                    .map(|(i, p)| pipeline(i, p))
                    .collect();
                CallT::CreateGraphicsPipelines(Box::new(CreateGraphicsPipelinesT {
                    device: device(),
                    pipeline_cache: word(call, "pipelineCache"),
                    pipelines: Some(pipelines),
                }))
            }
            "vkBeginCommandBuffer" => {
                let i = arg(call, "pBeginInfo").structure()?;
                let inheritance = i.get("pInheritanceInfo").structure().map(|h| {
                    let rendering = h.find(s_type::COMMAND_BUFFER_INHERITANCE_RENDERING_INFO);
                    Box::new(CommandBufferInheritanceT {
                        render_pass: h.word("renderPass"),
                        subpass: h.u32("subpass"),
                        framebuffer: h.word("framebuffer"),
                        occlusion_query_enable: h.u32("occlusionQueryEnable") != 0,
                        query_flags: h.u32("queryFlags"),
                        pipeline_statistics: h.u32("pipelineStatistics"),
                        rendering_view_mask: rendering.map_or(0, |r| r.u32("viewMask")),
                    })
                });
                CallT::BeginCommandBuffer(Box::new(BeginCommandBufferT {
                    command_buffer: cb(),
                    flags: i.u32("flags"),
                    inheritance,
                }))
            }
            "vkEndCommandBuffer" => CallT::EndCommandBuffer(Box::new(EndCommandBufferT {
                command_buffer: cb(),
            })),
            "vkResetCommandBuffer" => CallT::ResetCommandBuffer(Box::new(ResetCommandBufferT {
                command_buffer: cb(),
                flags: u32_of(call, "flags"),
            })),
            "vkCmdExecuteCommands" => CallT::CmdExecuteCommands(Box::new(CmdExecuteCommandsT {
                command_buffer: cb(),
                command_buffers: Some(arg(call, "pCommandBuffers").words64()),
            })),
            "vkCmdBindPipeline" => CallT::CmdBindPipeline(Box::new(CmdBindPipelineT {
                command_buffer: cb(),
                pipeline_bind_point: u32_of(call, "pipelineBindPoint"),
                pipeline: word(call, "pipeline"),
            })),
            "vkCmdBindDescriptorSets" => {
                CallT::CmdBindDescriptorSets(Box::new(CmdBindDescriptorSetsT {
                    command_buffer: cb(),
                    pipeline_bind_point: u32_of(call, "pipelineBindPoint"),
                    layout: word(call, "layout"),
                    first_set: u32_of(call, "firstSet"),
                    descriptor_sets: Some(arg(call, "pDescriptorSets").words64()),
                    dynamic_offsets: Some(arg(call, "pDynamicOffsets").words32()),
                }))
            }
            "vkCmdBindVertexBuffers" => {
                CallT::CmdBindVertexBuffers(Box::new(CmdBindVertexBuffersT {
                    command_buffer: cb(),
                    first_binding: u32_of(call, "firstBinding"),
                    buffers: Some(arg(call, "pBuffers").words64()),
                    offsets: Some(arg(call, "pOffsets").words64()),
                }))
            }
            "vkCmdBindIndexBuffer" => CallT::CmdBindIndexBuffer(Box::new(CmdBindIndexBufferT {
                command_buffer: cb(),
                buffer: word(call, "buffer"),
                offset: word(call, "offset"),
                index_type: u32_of(call, "indexType"),
            })),
            "vkCmdPushConstants" => CallT::CmdPushConstants(Box::new(CmdPushConstantsT {
                command_buffer: cb(),
                layout: word(call, "layout"),
                stage_flags: u32_of(call, "stageFlags"),
                offset: u32_of(call, "offset"),
                data: Some(arg(call, "pValues").bytes().to_vec()),
            })),
            "vkCmdDraw" => CallT::CmdDraw(Box::new(CmdDrawT {
                command_buffer: cb(),
                vertex_count: u32_of(call, "vertexCount"),
                instance_count: u32_of(call, "instanceCount"),
                first_vertex: u32_of(call, "firstVertex"),
                first_instance: u32_of(call, "firstInstance"),
            })),
            "vkCmdDrawIndexed" => CallT::CmdDrawIndexed(Box::new(CmdDrawIndexedT {
                command_buffer: cb(),
                index_count: u32_of(call, "indexCount"),
                instance_count: u32_of(call, "instanceCount"),
                first_index: u32_of(call, "firstIndex"),
                vertex_offset: u32_of(call, "vertexOffset") as i32,
                first_instance: u32_of(call, "firstInstance"),
            })),
            "vkCmdDrawIndirect" => CallT::CmdDrawIndirect(Box::new(CmdDrawIndirectT {
                command_buffer: cb(),
                buffer: word(call, "buffer"),
                offset: word(call, "offset"),
                draw_count: u32_of(call, "drawCount"),
                stride: u32_of(call, "stride"),
            })),
            "vkCmdDrawIndexedIndirect" => {
                CallT::CmdDrawIndexedIndirect(Box::new(CmdDrawIndexedIndirectT {
                    command_buffer: cb(),
                    buffer: word(call, "buffer"),
                    offset: word(call, "offset"),
                    draw_count: u32_of(call, "drawCount"),
                    stride: u32_of(call, "stride"),
                }))
            }
            "vkCmdDrawIndirectCount"
            | "vkCmdDrawIndirectCountKHR"
            | "vkCmdDrawIndirectCountAMD" => {
                CallT::CmdDrawIndirectCount(Box::new(CmdDrawIndirectCountT {
                    command_buffer: cb(),
                    buffer: word(call, "buffer"),
                    offset: word(call, "offset"),
                    count_buffer: word(call, "countBuffer"),
                    count_buffer_offset: word(call, "countBufferOffset"),
                    max_draw_count: u32_of(call, "maxDrawCount"),
                    stride: u32_of(call, "stride"),
                }))
            }
            "vkCmdDrawIndexedIndirectCount"
            | "vkCmdDrawIndexedIndirectCountKHR"
            | "vkCmdDrawIndexedIndirectCountAMD" => {
                CallT::CmdDrawIndexedIndirectCount(Box::new(CmdDrawIndexedIndirectCountT {
                    command_buffer: cb(),
                    buffer: word(call, "buffer"),
                    offset: word(call, "offset"),
                    count_buffer: word(call, "countBuffer"),
                    count_buffer_offset: word(call, "countBufferOffset"),
                    max_draw_count: u32_of(call, "maxDrawCount"),
                    stride: u32_of(call, "stride"),
                }))
            }
            "vkCmdDrawIndirectByteCountEXT" => {
                CallT::CmdDrawIndirectByteCount(Box::new(CmdDrawIndirectByteCountT {
                    command_buffer: cb(),
                    instance_count: u32_of(call, "instanceCount"),
                    first_instance: u32_of(call, "firstInstance"),
                    counter_buffer: word(call, "counterBuffer"),
                    counter_buffer_offset: word(call, "counterBufferOffset"),
                    counter_offset: u32_of(call, "counterOffset"),
                    vertex_stride: u32_of(call, "vertexStride"),
                }))
            }
            "vkCmdDrawMultiEXT" => {
                return Some(
                    arg(call, "pVertexInfo")
                        .structures()
                        .iter()
                        .map(|d| Converted {
                            call: CallT::CmdDraw(Box::new(CmdDrawT {
                                command_buffer: cb(),
                                vertex_count: d.u32("vertexCount"),
                                instance_count: u32_of(call, "instanceCount"),
                                first_vertex: d.u32("firstVertex"),
                                first_instance: u32_of(call, "firstInstance"),
                            })),
                            result: 0,
                        })
                        .collect(),
                )
            }
            "vkCmdDrawMultiIndexedEXT" => {
                let shared_offset = arg(call, "pVertexOffset").words32().first().copied();
                return Some(
                    arg(call, "pIndexInfo")
                        .structures()
                        .iter()
                        .map(|d| Converted {
                            call: CallT::CmdDrawIndexed(Box::new(CmdDrawIndexedT {
                                command_buffer: cb(),
                                index_count: d.u32("indexCount"),
                                instance_count: u32_of(call, "instanceCount"),
                                first_index: d.u32("firstIndex"),
                                vertex_offset: shared_offset.unwrap_or(d.u32("vertexOffset"))
                                    as i32,
                                first_instance: u32_of(call, "firstInstance"),
                            })),
                            result: 0,
                        })
                        .collect(),
                );
            }
            "vkCmdBeginRenderPass" | "vkCmdBeginRenderPass2" | "vkCmdBeginRenderPass2KHR" => {
                let b = arg(call, "pRenderPassBegin").structure()?;
                let contents = if name == "vkCmdBeginRenderPass" {
                    u32_of(call, "contents")
                } else {
                    arg(call, "pSubpassBeginInfo")
                        .structure()
                        .map_or(0, |s| s.u32("contents"))
                };
                CallT::CmdBeginRenderPass(Box::new(CmdBeginRenderPassT {
                    command_buffer: cb(),
                    render_pass: b.word("renderPass"),
                    framebuffer: b.word("framebuffer"),
                    render_area: rect(b.get("renderArea").structure()),
                    clear_values: Some(
                        b.get("pClearValues")
                            .bytes()
                            .chunks(16)
                            .map(clear)
                            .collect(),
                    ),
                    contents,
                }))
            }
            "vkCmdNextSubpass" => CallT::CmdNextSubpass(Box::new(CmdNextSubpassT {
                command_buffer: cb(),
                contents: u32_of(call, "contents"),
            })),
            "vkCmdNextSubpass2" | "vkCmdNextSubpass2KHR" => {
                CallT::CmdNextSubpass(Box::new(CmdNextSubpassT {
                    command_buffer: cb(),
                    contents: arg(call, "pSubpassBeginInfo")
                        .structure()
                        .map_or(0, |s| s.u32("contents")),
                }))
            }
            "vkCmdEndRenderPass" | "vkCmdEndRenderPass2" | "vkCmdEndRenderPass2KHR" => {
                CallT::CmdEndRenderPass(Box::new(CmdEndRenderPassT {
                    command_buffer: cb(),
                }))
            }
            "vkCmdBeginRendering" | "vkCmdBeginRenderingKHR" => {
                let i = arg(call, "pRenderingInfo").structure()?;
                CallT::CmdBeginRendering(Box::new(CmdBeginRenderingT {
                    command_buffer: cb(),
                    flags: i.u32("flags"),
                    render_area: rect(i.get("renderArea").structure()),
                    layer_count: i.u32("layerCount"),
                    view_mask: i.u32("viewMask"),
                    color_attachments: Some(
                        i.get("pColorAttachments")
                            .structures()
                            .iter()
                            .map(rendering_attachment)
                            .collect(),
                    ),
                    depth_attachment: i
                        .get("pDepthAttachment")
                        .structure()
                        .map(|a| Box::new(rendering_attachment(a))),
                    stencil_attachment: i
                        .get("pStencilAttachment")
                        .structure()
                        .map(|a| Box::new(rendering_attachment(a))),
                }))
            }
            "vkCmdEndRendering" | "vkCmdEndRenderingKHR" => {
                CallT::CmdEndRendering(Box::new(CmdEndRenderingT {
                    command_buffer: cb(),
                }))
            }
            "vkCmdBeginQuery" => CallT::CmdBeginQuery(Box::new(CmdBeginQueryT {
                command_buffer: cb(),
                query_pool: word(call, "queryPool"),
                query: u32_of(call, "query"),
                flags: u32_of(call, "flags"),
            })),
            "vkCmdEndQuery" => CallT::CmdEndQuery(Box::new(CmdEndQueryT {
                command_buffer: cb(),
                query_pool: word(call, "queryPool"),
                query: u32_of(call, "query"),
            })),
            "vkCmdWriteTimestamp" | "vkCmdWriteTimestamp2" | "vkCmdWriteTimestamp2KHR" => {
                let stage = if name == "vkCmdWriteTimestamp" {
                    word(call, "pipelineStage")
                } else {
                    word(call, "stage")
                };
                CallT::CmdWriteTimestamp(Box::new(CmdWriteTimestampT {
                    command_buffer: cb(),
                    pipeline_stage: stage,
                    query_pool: word(call, "queryPool"),
                    query: u32_of(call, "query"),
                }))
            }
            "vkCmdResetQueryPool" => CallT::CmdResetQueryPool(Box::new(CmdResetQueryPoolT {
                command_buffer: cb(),
                query_pool: word(call, "queryPool"),
                first_query: u32_of(call, "firstQuery"),
                query_count: u32_of(call, "queryCount"),
            })),
            "vkCmdCopyQueryPoolResults" => {
                CallT::CmdCopyQueryPoolResults(Box::new(CmdCopyQueryPoolResultsT {
                    command_buffer: cb(),
                    query_pool: word(call, "queryPool"),
                    first_query: u32_of(call, "firstQuery"),
                    query_count: u32_of(call, "queryCount"),
                    dst_buffer: word(call, "dstBuffer"),
                    dst_offset: word(call, "dstOffset"),
                    stride: word(call, "stride"),
                    flags: u32_of(call, "flags"),
                }))
            }
            "vkCmdSetPrimitiveTopology" | "vkCmdSetPrimitiveTopologyEXT" => {
                CallT::CmdSetPrimitiveTopology(Box::new(CmdSetPrimitiveTopologyT {
                    command_buffer: cb(),
                    topology: u32_of(call, "primitiveTopology"),
                }))
            }
            "vkCmdUpdateBuffer" => CallT::CmdUpdateBuffer(Box::new(CmdUpdateBufferT {
                command_buffer: cb(),
                buffer: word(call, "dstBuffer"),
                offset: word(call, "dstOffset"),
                data: Some(arg(call, "pData").bytes().to_vec()),
            })),
            "vkCmdBeginConditionalRenderingEXT" => {
                let b = arg(call, "pConditionalRenderingBegin").structure()?;
                CallT::CmdBeginConditionalRendering(Box::new(CmdBeginConditionalRenderingT {
                    command_buffer: cb(),
                    buffer: b.word("buffer"),
                    offset: b.word("offset"),
                    flags: b.u32("flags"),
                }))
            }
            "vkCmdEndConditionalRenderingEXT" => {
                CallT::CmdEndConditionalRendering(Box::new(CmdEndConditionalRenderingT {
                    command_buffer: cb(),
                }))
            }
            "vkQueueSubmit" => CallT::QueueSubmit(Box::new(QueueSubmitT {
                queue: word(call, "queue"),
                submits: Some(
                    arg(call, "pSubmits")
                        .structures()
                        .iter()
                        .map(submit_info)
                        .collect(),
                ),
                fence: word(call, "fence"),
            })),
            "vkQueueSubmit2" | "vkQueueSubmit2KHR" => CallT::QueueSubmit(Box::new(QueueSubmitT {
                queue: word(call, "queue"),
                submits: Some(
                    arg(call, "pSubmits")
                        .structures()
                        .iter()
                        .map(submit_info2)
                        .collect(),
                ),
                fence: word(call, "fence"),
            })),
            "vkQueuePresentKHR" => {
                let i = arg(call, "pPresentInfo").structure()?;
                CallT::QueuePresent(Box::new(QueuePresentT {
                    queue: word(call, "queue"),
                    wait_semaphores: Some(i.get("pWaitSemaphores").words64()),
                    swapchains: Some(i.get("pSwapchains").words64()),
                    image_indices: Some(i.get("pImageIndices").words32()),
                }))
            }
            _ => return None,
        };
        // The layer records creations only when they succeed.
        if (name.starts_with("vkCreate") || name.starts_with("vkAllocate")) && !ok {
            return Some(Vec::new());
        }
        Some(one(call_t))
    }
}
