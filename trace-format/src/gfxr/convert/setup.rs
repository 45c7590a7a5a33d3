//! Set-up calls the capture layer hooks by hand (`capture-layer/src/hooks/instance.rs`,
//! `objects.rs`, `pipelines.rs`): instance and device, memory, buffers and images,
//! render passes, shaders, pipelines, pools, as the typed records the layer makes.

use super::pipeline::pipeline;
use super::{
    arg, each, generic, one, out_handle, s_type, u32_of, word, Converted, Converter, DecodedCall,
    StructValue, Value,
};
use crate::generated::trace::*;

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

/// `vkCreateRenderPass` (`version` 1, its multiview information from the chained
/// `VkRenderPassMultiviewCreateInfo`) or `vkCreateRenderPass2` (2, from each subpass and
/// dependency), as the layer's `create_render_pass` and `record_render_pass2` record it.
fn render_pass(i: &StructValue, device: u64, handle: u64, version: u8) -> CallT {
    let multiview = i.find(s_type::RENDER_PASS_MULTIVIEW_CREATE_INFO);
    let masks = multiview.map_or_else(Vec::new, |m| m.get("pViewMasks").words32());
    let offsets = multiview.map_or_else(Vec::new, |m| m.get("pViewOffsets").words32());
    let subpasses = i
        .get("pSubpasses")
        .structures()
        .iter()
        .enumerate()
        .map(|(n, s)| {
            let resolve = s.find(s_type::SUBPASS_DESCRIPTION_DEPTH_STENCIL_RESOLVE);
            let resolve_to =
                resolve.and_then(|r| r.get("pDepthStencilResolveAttachment").structure());
            SubpassDescriptionT {
                flags: s.u32("flags"),
                pipeline_bind_point: s.u32("pipelineBindPoint"),
                // A version 1 subpass has no viewMask member: 0 without the chain.
                view_mask: masks.get(n).copied().unwrap_or(s.u32("viewMask")),
                input_attachments: Some(references(s.get("pInputAttachments"))),
                color_attachments: Some(references(s.get("pColorAttachments"))),
                resolve_attachments: Some(references(s.get("pResolveAttachments"))),
                depth_stencil_attachment: s
                    .get("pDepthStencilAttachment")
                    .structure()
                    .map(reference),
                preserve_attachments: Some(s.get("pPreserveAttachments").words32()),
                depth_stencil_resolve_attachment: resolve_to.map(reference),
                depth_resolve_mode: resolve.map_or(0, |r| r.u32("depthResolveMode")),
                stencil_resolve_mode: resolve.map_or(0, |r| r.u32("stencilResolveMode")),
                stencil_layouts: reference_stencil_layouts(s, resolve_to),
            }
        })
        .collect();
    let dependencies = i
        .get("pDependencies")
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
            view_offset: offsets.get(n).copied().unwrap_or(d.u32("viewOffset")) as i32,
        })
        .collect();
    let correlation_masks = match multiview {
        Some(m) => m.get("pCorrelationMasks").words32(),
        None => i.get("pCorrelatedViewMasks").words32(),
    };
    CallT::CreateRenderPass(Box::new(CreateRenderPassT {
        device,
        render_pass: handle,
        version,
        attachments: Some(
            i.get("pAttachments")
                .structures()
                .iter()
                .map(attachment)
                .collect(),
        ),
        subpasses: Some(subpasses),
        dependencies: Some(dependencies),
        correlation_masks: Some(correlation_masks),
        stencil_layouts: attachment_stencil_layouts(i.get("pAttachments").structures()),
    }))
}

/// Each attachment's stencil initial and final layout, where any chains a
/// `VkAttachmentDescriptionStencilLayout`, as the layer records them.
fn attachment_stencil_layouts(attachments: &[StructValue]) -> Option<Vec<u32>> {
    let own = |a: &StructValue| {
        a.find(s_type::ATTACHMENT_DESCRIPTION_STENCIL_LAYOUT)
            .cloned()
    };
    attachments.iter().any(|a| own(a).is_some()).then(|| {
        attachments
            .iter()
            .flat_map(|a| match own(a) {
                Some(l) => [l.u32("stencilInitialLayout"), l.u32("stencilFinalLayout")],
                None => [a.u32("initialLayout"), a.u32("finalLayout")],
            })
            .collect()
    })
}

/// The stencil layout of each of subpass `s`'s references (inputs, colours, resolves,
/// depth/stencil, then `resolve_to`), where any chains a
/// `VkAttachmentReferenceStencilLayout`, as the layer records them.
fn reference_stencil_layouts(
    s: &StructValue,
    resolve_to: Option<&StructValue>,
) -> Option<Vec<u32>> {
    let references: Vec<&StructValue> = s
        .get("pInputAttachments")
        .structures()
        .iter()
        .chain(s.get("pColorAttachments").structures())
        .chain(s.get("pResolveAttachments").structures())
        .chain(s.get("pDepthStencilAttachment").structure())
        .chain(resolve_to)
        .collect();
    let own = |r: &StructValue| {
        r.find(s_type::ATTACHMENT_REFERENCE_STENCIL_LAYOUT)
            .map(|l| l.u32("stencilLayout"))
    };
    references.iter().any(|r| own(r).is_some()).then(|| {
        references
            .iter()
            .map(|r| own(r).unwrap_or_else(|| r.u32("layout")))
            .collect()
    })
}

/// `VK_PIPELINE_COMPILE_REQUIRED`.
const PIPELINE_COMPILE_REQUIRED: u64 = 1_000_297_000;

/// A string the program passed, `None` where it passed a null pointer (as the layer's
/// `string` reads it).
fn string(v: &Value) -> Option<String> {
    (!v.is_null()).then(|| v.string())
}

/// The typed records of set-up call `call`; `None` for a call the layer records
/// otherwise.
pub(super) fn convert(conv: &mut Converter, call: &DecodedCall) -> Option<Vec<Converted>> {
    let name = call.command.name;
    let ok = call.result == 0;
    let info = || arg(call, "pCreateInfo").structure();
    let device = || word(call, "device");
    let call_t = match name {
        "vkCreateInstance" => {
            let i = info()?;
            let application = i.get("pApplicationInfo").structure().map(|a| {
                Box::new(ApplicationInfoT {
                    application_name: string(a.get("pApplicationName")),
                    application_version: a.u32("applicationVersion"),
                    engine_name: string(a.get("pEngineName")),
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
            if let Some(p) = conv.properties.get(&pd) {
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
        "vkDestroyDevice" => CallT::DestroyDevice(Box::new(DestroyDeviceT { device: device() })),
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
            conv.maps.insert(memory, word(call, "offset"));
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
            return Some(each(arg(call, "pBindInfos"), |b| {
                CallT::BindBufferMemory(Box::new(BindBufferMemoryT {
                    device: device(),
                    buffer: b.word("buffer"),
                    memory: b.word("memory"),
                    offset: b.word("memoryOffset"),
                }))
            }))
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
            return Some(each(arg(call, "pBindInfos"), |b| {
                CallT::BindImageMemory(Box::new(BindImageMemoryT {
                    device: device(),
                    image: b.word("image"),
                    memory: b.word("memory"),
                    offset: b.word("memoryOffset"),
                }))
            }))
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
        "vkCreateRenderPass" | "vkCreateRenderPass2" | "vkCreateRenderPass2KHR" => {
            let version = if name == "vkCreateRenderPass" { 1 } else { 2 };
            render_pass(info()?, device(), out_handle(call, "pRenderPass"), version)
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
        _ => return None,
    };
    // The layer records creations only when they succeed (pipelines also when some
    // must be compiled later: the ones made are recorded).
    let pipelines_made =
        name == "vkCreateGraphicsPipelines" && call.result == PIPELINE_COMPILE_REQUIRED;
    if (name.starts_with("vkCreate") || name.starts_with("vkAllocate")) && !ok && !pipelines_made {
        return Some(Vec::new());
    }
    Some(one(call_t))
}
