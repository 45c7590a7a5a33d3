//! Render passes (both versions, with their multiview view masks) and graphics
//! pipelines (stages, topology, dynamic rendering's view mask, static state, the
//! libraries a pipeline is linked from and the parts a library defines).

use ash::vk;
use ash::vk::Handle;
use trace_format::generated::trace::*;

use super::pipeline_state::{
    pipeline_state, FRAGMENT_SHADER, PRE_RASTERIZATION_SHADERS, VERTEX_INPUT_INTERFACE,
};
use super::util::{find_in_chain, slice, string};
use crate::dispatch;
use crate::recorder::{record, Scope};

fn reference(r: &vk::AttachmentReference) -> AttachmentReferenceT {
    AttachmentReference::new(r.attachment, r.layout.as_raw() as u32, 0).unpack()
}

fn reference2(r: &vk::AttachmentReference2) -> AttachmentReferenceT {
    AttachmentReference::new(
        r.attachment,
        r.layout.as_raw() as u32,
        r.aspect_mask.as_raw(),
    )
    .unpack()
}

/// An attachment description of either render-pass version (their fields share names).
macro_rules! attachment_of {
    ($a:expr) => {{
        let a = $a;
        AttachmentDescription::new(
            a.flags.as_raw(),
            a.format.as_raw() as u32,
            a.samples.as_raw(),
            a.load_op.as_raw() as u32,
            a.store_op.as_raw() as u32,
            a.stencil_load_op.as_raw() as u32,
            a.stencil_store_op.as_raw() as u32,
            a.initial_layout.as_raw() as u32,
            a.final_layout.as_raw() as u32,
        )
        .unpack()
    }};
}

fn attachment(a: &vk::AttachmentDescription) -> AttachmentDescriptionT {
    attachment_of!(a)
}

fn attachment2(a: &vk::AttachmentDescription2) -> AttachmentDescriptionT {
    attachment_of!(a)
}

/// `vkCreateRenderPass`, with view masks from `VkRenderPassMultiviewCreateInfo`.
pub unsafe extern "system" fn create_render_pass(
    device: vk::Device,
    info: *const vk::RenderPassCreateInfo,
    allocator: *const vk::AllocationCallbacks,
    out: *mut vk::RenderPass,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_0().create_render_pass)(device, info, allocator, out);
    if r != vk::Result::SUCCESS {
        return r;
    }
    let i = &*info;
    crate::image_layouts::render_pass_created(
        *out,
        slice(i.p_attachments, i.attachment_count)
            .iter()
            .map(|a| a.final_layout),
    );
    record(Scope::Setup, r.as_raw(), || {
        let multiview = find_in_chain::<vk::RenderPassMultiviewCreateInfo>(
            i.p_next,
            vk::StructureType::RENDER_PASS_MULTIVIEW_CREATE_INFO,
        );
        let masks = multiview.map_or(&[][..], |m| slice(m.p_view_masks, m.subpass_count));
        let offsets = multiview.map_or(&[][..], |m| slice(m.p_view_offsets, m.dependency_count));
        let subpasses = slice(i.p_subpasses, i.subpass_count)
            .iter()
            .enumerate()
            .map(|(n, s)| {
                let colors = slice(s.p_color_attachments, s.color_attachment_count);
                table!(SubpassDescriptionT {
                    flags: s.flags.as_raw(),
                    pipeline_bind_point: s.pipeline_bind_point.as_raw() as u32,
                    view_mask: masks.get(n).copied().unwrap_or(0),
                    input_attachments: Some(
                        slice(s.p_input_attachments, s.input_attachment_count)
                            .iter()
                            .map(reference)
                            .collect(),
                    ),
                    color_attachments: Some(colors.iter().map(reference).collect()),
                    resolve_attachments: Some(
                        slice(s.p_resolve_attachments, s.color_attachment_count)
                            .iter()
                            .map(reference)
                            .collect(),
                    ),
                    depth_stencil_attachment: s.p_depth_stencil_attachment.as_ref().map(reference),
                    preserve_attachments: Some(
                        slice(s.p_preserve_attachments, s.preserve_attachment_count).to_vec(),
                    ),
                })
            })
            .collect();
        let dependencies = slice(i.p_dependencies, i.dependency_count)
            .iter()
            .enumerate()
            .map(|(n, dep)| {
                SubpassDependency::new(
                    dep.src_subpass,
                    dep.dst_subpass,
                    dep.src_stage_mask.as_raw().into(),
                    dep.dst_stage_mask.as_raw().into(),
                    dep.src_access_mask.as_raw().into(),
                    dep.dst_access_mask.as_raw().into(),
                    dep.dependency_flags.as_raw(),
                    offsets.get(n).copied().unwrap_or(0),
                )
                .unpack()
            })
            .collect();
        Some(CallT::CreateRenderPass(Box::new(table!(
            CreateRenderPassT {
                device: device.as_raw(),
                render_pass: (*out).as_raw(),
                version: 1,
                attachments: Some(
                    slice(i.p_attachments, i.attachment_count)
                        .iter()
                        .map(attachment)
                        .collect(),
                ),
                subpasses: Some(subpasses),
                dependencies: Some(dependencies),
                correlation_masks: Some(
                    multiview
                        .map_or(&[][..], |m| {
                            slice(m.p_correlation_masks, m.correlation_mask_count)
                        })
                        .to_vec(),
                ),
            }
        ))))
    });
    r
}

/// Records a `vkCreateRenderPass2` (core or KHR) that succeeded.
unsafe fn record_render_pass2(
    device: vk::Device,
    i: &vk::RenderPassCreateInfo2,
    pass: vk::RenderPass,
) {
    crate::image_layouts::render_pass_created(
        pass,
        slice(i.p_attachments, i.attachment_count)
            .iter()
            .map(|a| a.final_layout),
    );
    record(Scope::Setup, 0, || {
        let subpasses = slice(i.p_subpasses, i.subpass_count)
            .iter()
            .map(|s| {
                let resolve = find_in_chain::<vk::SubpassDescriptionDepthStencilResolve>(
                    s.p_next,
                    vk::StructureType::SUBPASS_DESCRIPTION_DEPTH_STENCIL_RESOLVE,
                );
                let resolve_to =
                    resolve.and_then(|r| r.p_depth_stencil_resolve_attachment.as_ref());
                let mut subpass = table!(SubpassDescriptionT {
                    flags: s.flags.as_raw(),
                    pipeline_bind_point: s.pipeline_bind_point.as_raw() as u32,
                    view_mask: s.view_mask,
                    input_attachments: Some(
                        slice(s.p_input_attachments, s.input_attachment_count)
                            .iter()
                            .map(reference2)
                            .collect(),
                    ),
                    color_attachments: Some(
                        slice(s.p_color_attachments, s.color_attachment_count)
                            .iter()
                            .map(reference2)
                            .collect(),
                    ),
                    resolve_attachments: Some(
                        slice(s.p_resolve_attachments, s.color_attachment_count)
                            .iter()
                            .map(reference2)
                            .collect(),
                    ),
                    depth_stencil_attachment: s.p_depth_stencil_attachment.as_ref().map(reference2),
                    preserve_attachments: Some(
                        slice(s.p_preserve_attachments, s.preserve_attachment_count).to_vec(),
                    ),
                });
                subpass.depth_stencil_resolve_attachment = resolve_to.map(reference2);
                if let Some(r) = resolve {
                    subpass.depth_resolve_mode = r.depth_resolve_mode.as_raw();
                    subpass.stencil_resolve_mode = r.stencil_resolve_mode.as_raw();
                }
                subpass.stencil_layouts = reference_stencil_layouts(s, resolve_to);
                subpass
            })
            .collect();
        let dependencies = slice(i.p_dependencies, i.dependency_count)
            .iter()
            .map(|dep| {
                SubpassDependency::new(
                    dep.src_subpass,
                    dep.dst_subpass,
                    dep.src_stage_mask.as_raw().into(),
                    dep.dst_stage_mask.as_raw().into(),
                    dep.src_access_mask.as_raw().into(),
                    dep.dst_access_mask.as_raw().into(),
                    dep.dependency_flags.as_raw(),
                    dep.view_offset,
                )
                .unpack()
            })
            .collect();
        let stencil_layouts =
            attachment_stencil_layouts(slice(i.p_attachments, i.attachment_count));
        Some(CallT::CreateRenderPass(Box::new(table!(
            CreateRenderPassT {
                device: device.as_raw(),
                render_pass: pass.as_raw(),
                version: 2,
                stencil_layouts,
                attachments: Some(
                    slice(i.p_attachments, i.attachment_count)
                        .iter()
                        .map(attachment2)
                        .collect(),
                ),
                subpasses: Some(subpasses),
                dependencies: Some(dependencies),
                correlation_masks: Some(
                    slice(i.p_correlated_view_masks, i.correlated_view_mask_count).to_vec(),
                ),
            }
        ))))
    });
}

/// Each attachment's stencil initial and final layout, where any attachment chains a
/// `VkAttachmentDescriptionStencilLayout` (one that chains none: its own layouts).
unsafe fn attachment_stencil_layouts(
    attachments: &[vk::AttachmentDescription2],
) -> Option<Vec<u32>> {
    let own = |a: &vk::AttachmentDescription2| {
        find_in_chain::<vk::AttachmentDescriptionStencilLayout>(
            a.p_next,
            vk::StructureType::ATTACHMENT_DESCRIPTION_STENCIL_LAYOUT,
        )
    };
    attachments.iter().any(|a| own(a).is_some()).then(|| {
        attachments
            .iter()
            .flat_map(|a| match own(a) {
                Some(l) => [l.stencil_initial_layout, l.stencil_final_layout],
                None => [a.initial_layout, a.final_layout],
            })
            .map(|l| l.as_raw() as u32)
            .collect()
    })
}

/// The stencil layout of each of subpass `s`'s references (inputs, colours, resolves,
/// depth/stencil, then `resolve_to`), where any chains a
/// `VkAttachmentReferenceStencilLayout` (one that chains none: its layout).
unsafe fn reference_stencil_layouts(
    s: &vk::SubpassDescription2,
    resolve_to: Option<&vk::AttachmentReference2>,
) -> Option<Vec<u32>> {
    let resolves = slice(s.p_resolve_attachments, s.color_attachment_count);
    let references: Vec<&vk::AttachmentReference2> =
        slice(s.p_input_attachments, s.input_attachment_count)
            .iter()
            .chain(slice(s.p_color_attachments, s.color_attachment_count))
            .chain(resolves)
            .chain(s.p_depth_stencil_attachment.as_ref())
            .chain(resolve_to)
            .collect();
    let own = |r: &vk::AttachmentReference2| {
        find_in_chain::<vk::AttachmentReferenceStencilLayout>(
            r.p_next,
            vk::StructureType::ATTACHMENT_REFERENCE_STENCIL_LAYOUT,
        )
    };
    references.iter().any(|r| own(r).is_some()).then(|| {
        references
            .iter()
            .map(|r| own(r).map_or(r.layout, |l| l.stencil_layout).as_raw() as u32)
            .collect()
    })
}

/// `vkCreateRenderPass2`.
pub unsafe extern "system" fn create_render_pass2(
    device: vk::Device,
    info: *const vk::RenderPassCreateInfo2,
    allocator: *const vk::AllocationCallbacks,
    out: *mut vk::RenderPass,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r = (d.fns.fp_v1_2().create_render_pass2)(device, info, allocator, out);
    if r == vk::Result::SUCCESS {
        record_render_pass2(device, &*info, *out);
    }
    r
}

/// `vkCreateRenderPass2KHR`.
pub unsafe extern "system" fn create_render_pass2_khr(
    device: vk::Device,
    info: *const vk::RenderPassCreateInfo2,
    allocator: *const vk::AllocationCallbacks,
    out: *mut vk::RenderPass,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let Some(next) = d.ext::<vk::PFN_vkCreateRenderPass2>(
        const { super::extension_slot(c"vkCreateRenderPass2KHR") },
    ) else {
        return vk::Result::ERROR_EXTENSION_NOT_PRESENT;
    };
    let r = next(device, info, allocator, out);
    if r == vk::Result::SUCCESS {
        record_render_pass2(device, &*info, *out);
    }
    r
}

unsafe fn stage(s: &vk::PipelineShaderStageCreateInfo) -> ShaderStageT {
    let spec = s.p_specialization_info.as_ref();
    table!(ShaderStageT {
        flags: s.flags.as_raw(),
        stage: s.stage.as_raw(),
        module: s.module.as_raw(),
        entry_point: string(s.p_name),
        specialization_entries: Some(spec.map_or_else(Vec::new, |sp| {
            slice(sp.p_map_entries, sp.map_entry_count)
                .iter()
                .map(|e| {
                    table!(SpecializationEntryT {
                        constant_id: e.constant_id,
                        offset: e.offset,
                        size: e.size as u64,
                    })
                })
                .collect()
        })),
        specialization_data: Some(spec.map_or_else(Vec::new, |sp| {
            slice(sp.p_data as *const u8, sp.data_size as u32).to_vec()
        })),
    })
}

unsafe fn pipeline(p: &vk::GraphicsPipelineCreateInfo, handle: vk::Pipeline) -> GraphicsPipelineT {
    let libraries = find_in_chain::<vk::PipelineLibraryCreateInfoKHR>(
        p.p_next,
        vk::StructureType::PIPELINE_LIBRARY_CREATE_INFO_KHR,
    )
    .map_or(&[][..], |l| slice(l.p_libraries, l.library_count));
    let library_parts = find_in_chain::<vk::GraphicsPipelineLibraryCreateInfoEXT>(
        p.p_next,
        vk::StructureType::GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT,
    )
    .map_or(0, |g| g.flags.as_raw());
    // A state structure of a part the pipeline takes from elsewhere is ignored by the
    // implementation and need not be a valid pointer: read only the parts it defines
    // (all of them for a pipeline neither a library nor linked from any).
    let defines = |part: u32| {
        if library_parts != 0 {
            library_parts & part != 0
        } else {
            libraries.is_empty()
        }
    };
    let rendering = find_in_chain::<vk::PipelineRenderingCreateInfo>(
        p.p_next,
        vk::StructureType::PIPELINE_RENDERING_CREATE_INFO,
    )
    .map(|r| {
        Box::new(table!(PipelineRenderingT {
            view_mask: r.view_mask,
            color_attachment_formats: Some(
                slice(r.p_color_attachment_formats, r.color_attachment_count)
                    .iter()
                    .map(|f| f.as_raw() as u32)
                    .collect(),
            ),
            depth_attachment_format: r.depth_attachment_format.as_raw() as u32,
            stencil_attachment_format: r.stencil_attachment_format.as_raw() as u32,
        }))
    });
    let dynamic_states: Vec<u32> = p.p_dynamic_state.as_ref().map_or_else(Vec::new, |d| {
        slice(d.p_dynamic_states, d.dynamic_state_count)
            .iter()
            .map(|s| s.as_raw() as u32)
            .collect()
    });
    let assembly = p
        .p_input_assembly_state
        .as_ref()
        .filter(|_| defines(VERTEX_INPUT_INTERFACE));
    let tessellation = p
        .p_tessellation_state
        .as_ref()
        .filter(|_| defines(PRE_RASTERIZATION_SHADERS));
    table!(GraphicsPipelineT {
        pipeline: handle.as_raw(),
        flags: p.flags.as_raw(),
        stages: Some(if defines(PRE_RASTERIZATION_SHADERS | FRAGMENT_SHADER) {
            slice(p.p_stages, p.stage_count)
                .iter()
                .map(|s| stage(s))
                .collect()
        } else {
            Vec::new()
        }),
        topology: assembly.map_or(0, |a| a.topology.as_raw() as u32),
        primitive_restart_enable: assembly.is_some_and(|a| a.primitive_restart_enable != 0),
        patch_control_points: tessellation.map_or(0, |t| t.patch_control_points),
        layout: p.layout.as_raw(),
        render_pass: p.render_pass.as_raw(),
        subpass: p.subpass,
        rendering,
        state: Some(Box::new(pipeline_state(p, defines, &dynamic_states))),
        dynamic_states: Some(dynamic_states),
        libraries: Some(libraries.iter().map(|l| l.as_raw()).collect()),
        library_parts,
    })
}

/// `vkCreateGraphicsPipelines`: every pipeline made, with what a replay needs.
pub unsafe extern "system" fn create_graphics_pipelines(
    device: vk::Device,
    cache: vk::PipelineCache,
    count: u32,
    infos: *const vk::GraphicsPipelineCreateInfo,
    allocator: *const vk::AllocationCallbacks,
    out: *mut vk::Pipeline,
) -> vk::Result {
    let Some(d) = dispatch::device_of(device) else {
        return vk::Result::ERROR_DEVICE_LOST;
    };
    let r =
        (d.fns.fp_v1_0().create_graphics_pipelines)(device, cache, count, infos, allocator, out);
    if r == vk::Result::SUCCESS || r == vk::Result::PIPELINE_COMPILE_REQUIRED {
        record_pipelines(device, cache, slice(infos, count), slice(out, count), r);
    }
    r
}

unsafe fn record_pipelines(
    device: vk::Device,
    cache: vk::PipelineCache,
    infos: &[vk::GraphicsPipelineCreateInfo],
    made: &[vk::Pipeline],
    r: vk::Result,
) {
    record(Scope::Setup, r.as_raw(), || {
        let pipelines = infos
            .iter()
            .zip(made)
            .filter(|(_, p)| **p != vk::Pipeline::null())
            .map(|(i, p)| pipeline(i, *p))
            .collect();
        Some(CallT::CreateGraphicsPipelines(Box::new(table!(
            CreateGraphicsPipelinesT {
                device: device.as_raw(),
                pipeline_cache: cache.as_raw(),
                pipelines: Some(pipelines),
            }
        ))))
    });
}
