//! Graphics pipelines, render passes and shader stages rebuilt from their typed records.

use std::ffi::CString;

use ash::vk;
use trace_format::generated::trace::{CreateRenderPass, GraphicsPipeline, ShaderStage};

use super::call::{CallError, Handles};

/// `vkCreateRenderPass2` for a recorded render pass (of either version: the record
/// folds the multiview structure into the subpasses' view masks), with the separate
/// stencil layouts and depth/stencil resolves a version-2 record holds chained back.
/// A version-1 input attachment reads every aspect of its format, as Mesa's
/// `vk_common_CreateRenderPass` makes it.
///
/// # Safety
/// `device` must be live.
pub unsafe fn create_render_pass(
    device: &ash::Device,
    c: &CreateRenderPass<'_>,
) -> Result<vk::RenderPass, vk::Result> {
    let formats: Vec<u32> = c
        .attachments()
        .iter()
        .flatten()
        .map(|a| a.format())
        .collect();
    let attachment_stencil: Vec<u32> = c
        .stencil_layouts()
        .map(|l| l.iter().collect())
        .unwrap_or_default();
    // One per attachment where the record holds them; chained below, once none moves.
    let mut attachment_stencil_layouts: Vec<vk::AttachmentDescriptionStencilLayout<'static>> =
        attachment_stencil
            .chunks_exact(2)
            .map(|l| {
                vk::AttachmentDescriptionStencilLayout::default()
                    .stencil_initial_layout(vk::ImageLayout::from_raw(l[0] as i32))
                    .stencil_final_layout(vk::ImageLayout::from_raw(l[1] as i32))
            })
            .collect();
    let mut attachments: Vec<vk::AttachmentDescription2> = c
        .attachments()
        .iter()
        .flatten()
        .map(|a| {
            vk::AttachmentDescription2::default()
                .flags(vk::AttachmentDescriptionFlags::from_raw(a.flags()))
                .format(vk::Format::from_raw(a.format() as i32))
                .samples(vk::SampleCountFlags::from_raw(a.samples()))
                .load_op(vk::AttachmentLoadOp::from_raw(a.load_op() as i32))
                .store_op(vk::AttachmentStoreOp::from_raw(a.store_op() as i32))
                .stencil_load_op(vk::AttachmentLoadOp::from_raw(a.stencil_load_op() as i32))
                .stencil_store_op(vk::AttachmentStoreOp::from_raw(a.stencil_store_op() as i32))
                .initial_layout(vk::ImageLayout::from_raw(a.initial_layout() as i32))
                .final_layout(vk::ImageLayout::from_raw(a.final_layout() as i32))
        })
        .collect();
    if attachment_stencil_layouts.len() == attachments.len() {
        for (a, l) in attachments.iter_mut().zip(&mut attachment_stencil_layouts) {
            a.p_next = (l as *mut vk::AttachmentDescriptionStencilLayout).cast();
        }
    }
    let version_1 = c.version() == 1;
    let reference = |r: &trace_format::generated::trace::AttachmentReference, input: bool| {
        let aspects = match (version_1 && input, formats.get(r.attachment() as usize)) {
            (true, Some(&format)) => format_aspects(format),
            _ => r.aspect_mask(),
        };
        vk::AttachmentReference2::default()
            .attachment(r.attachment())
            .layout(vk::ImageLayout::from_raw(r.layout() as i32))
            .aspect_mask(vk::ImageAspectFlags::from_raw(aspects))
    };
    struct Refs {
        input: Vec<vk::AttachmentReference2<'static>>,
        color: Vec<vk::AttachmentReference2<'static>>,
        resolve: Vec<vk::AttachmentReference2<'static>>,
        depth: Option<vk::AttachmentReference2<'static>>,
        depth_resolve: Option<vk::AttachmentReference2<'static>>,
        preserve: Vec<u32>,
        /// The references' stencil layouts, in the record's order, where it has them.
        stencil: Vec<vk::AttachmentReferenceStencilLayout<'static>>,
        resolve_info: vk::SubpassDescriptionDepthStencilResolve<'static>,
    }
    let mut refs: Vec<Refs> = c
        .subpasses()
        .iter()
        .flatten()
        .map(|s| Refs {
            input: s
                .input_attachments()
                .iter()
                .flatten()
                .map(|r| reference(r, true))
                .collect(),
            color: s
                .color_attachments()
                .iter()
                .flatten()
                .map(|r| reference(r, false))
                .collect(),
            resolve: s
                .resolve_attachments()
                .iter()
                .flatten()
                .map(|r| reference(r, false))
                .collect(),
            depth: s.depth_stencil_attachment().map(|r| reference(r, false)),
            depth_resolve: s
                .depth_stencil_resolve_attachment()
                .map(|r| reference(r, false)),
            preserve: s
                .preserve_attachments()
                .map(|p| p.iter().collect())
                .unwrap_or_default(),
            stencil: s
                .stencil_layouts()
                .map(|l| {
                    l.iter()
                        .map(|l| {
                            vk::AttachmentReferenceStencilLayout::default()
                                .stencil_layout(vk::ImageLayout::from_raw(l as i32))
                        })
                        .collect()
                })
                .unwrap_or_default(),
            resolve_info: vk::SubpassDescriptionDepthStencilResolve::default()
                .depth_resolve_mode(vk::ResolveModeFlags::from_raw(s.depth_resolve_mode()))
                .stencil_resolve_mode(vk::ResolveModeFlags::from_raw(s.stencil_resolve_mode())),
        })
        .collect();
    // Chain each reference's stencil layout and each subpass's resolve, now that the
    // vectors holding them stay where they are.
    for r in &mut refs {
        let Refs {
            input,
            color,
            resolve,
            depth,
            depth_resolve,
            stencil,
            resolve_info,
            ..
        } = r;
        let references = input
            .iter_mut()
            .chain(color.iter_mut())
            .chain(resolve.iter_mut())
            .chain(depth.iter_mut())
            .chain(depth_resolve.iter_mut());
        for (reference, layout) in references.zip(stencil.iter_mut()) {
            reference.p_next = (layout as *mut vk::AttachmentReferenceStencilLayout).cast();
        }
        if let Some(to) = depth_resolve {
            resolve_info.p_depth_stencil_resolve_attachment = to;
        }
    }
    let subpasses: Vec<vk::SubpassDescription2> = c
        .subpasses()
        .iter()
        .flatten()
        .zip(&mut refs)
        .map(|(s, r)| {
            let mut d = vk::SubpassDescription2::default()
                .flags(vk::SubpassDescriptionFlags::from_raw(s.flags()))
                .pipeline_bind_point(vk::PipelineBindPoint::from_raw(
                    s.pipeline_bind_point() as i32
                ))
                .view_mask(s.view_mask())
                .input_attachments(&r.input)
                .color_attachments(&r.color)
                .preserve_attachments(&r.preserve);
            if !r.resolve.is_empty() {
                d.p_resolve_attachments = r.resolve.as_ptr();
            }
            if let Some(depth) = &r.depth {
                d = d.depth_stencil_attachment(depth);
            }
            if r.depth_resolve.is_some() {
                d.p_next =
                    (&mut r.resolve_info as *mut vk::SubpassDescriptionDepthStencilResolve).cast();
            }
            d
        })
        .collect();
    let dependencies: Vec<vk::SubpassDependency2> = c
        .dependencies()
        .iter()
        .flatten()
        .map(|d| {
            vk::SubpassDependency2::default()
                .src_subpass(d.src_subpass())
                .dst_subpass(d.dst_subpass())
                .src_stage_mask(vk::PipelineStageFlags::from_raw(d.src_stage_mask() as u32))
                .dst_stage_mask(vk::PipelineStageFlags::from_raw(d.dst_stage_mask() as u32))
                .src_access_mask(vk::AccessFlags::from_raw(d.src_access_mask() as u32))
                .dst_access_mask(vk::AccessFlags::from_raw(d.dst_access_mask() as u32))
                .dependency_flags(vk::DependencyFlags::from_raw(d.dependency_flags()))
                .view_offset(d.view_offset())
        })
        .collect();
    let correlation: Vec<u32> = c
        .correlation_masks()
        .map(|m| m.iter().collect())
        .unwrap_or_default();
    let info = vk::RenderPassCreateInfo2::default()
        .attachments(&attachments)
        .subpasses(&subpasses)
        .dependencies(&dependencies)
        .correlated_view_masks(&correlation);
    device.create_render_pass2(&info, None)
}

/// The aspects of `format` (`vk_format_aspects`): depth and stencil for the
/// depth/stencil formats, colour for the rest.
fn format_aspects(format: u32) -> u32 {
    use crate::objects::{format_has_depth, format_has_stencil};
    let mut aspects = vk::ImageAspectFlags::empty();
    if format_has_depth(format) {
        aspects |= vk::ImageAspectFlags::DEPTH;
    }
    if format_has_stencil(format) {
        aspects |= vk::ImageAspectFlags::STENCIL;
    }
    if aspects.is_empty() {
        aspects = vk::ImageAspectFlags::COLOR;
    }
    aspects.as_raw()
}

/// What a shader stage points to, kept alive across pipeline creation.
pub struct StageData {
    name: CString,
    entries: Vec<vk::SpecializationMapEntry>,
    data: Vec<u8>,
    specialization: vk::SpecializationInfo<'static>,
}

impl StageData {
    /// A recorded stage's entry point and specialization.
    pub fn of(s: &ShaderStage<'_>) -> Box<Self> {
        let mut d = Box::new(StageData {
            name: CString::new(s.entry_point().unwrap_or("main"))
                .unwrap_or_else(|_| c"main".to_owned()),
            entries: s
                .specialization_entries()
                .iter()
                .flatten()
                .map(|e| vk::SpecializationMapEntry {
                    constant_id: e.constant_id(),
                    offset: e.offset(),
                    size: e.size() as usize,
                })
                .collect(),
            data: s
                .specialization_data()
                .map(|d| d.bytes().to_vec())
                .unwrap_or_default(),
            specialization: vk::SpecializationInfo::default(),
        });
        d.specialization.map_entry_count = d.entries.len() as u32;
        d.specialization.p_map_entries = d.entries.as_ptr();
        d.specialization.data_size = d.data.len();
        d.specialization.p_data = d.data.as_ptr().cast();
        d
    }

    /// The stage's create info, pointing into `self`.
    pub fn info(
        &self,
        s: &ShaderStage<'_>,
        module: vk::ShaderModule,
    ) -> vk::PipelineShaderStageCreateInfo<'_> {
        let mut info = vk::PipelineShaderStageCreateInfo::default()
            .flags(vk::PipelineShaderStageCreateFlags::from_raw(s.flags()))
            .stage(vk::ShaderStageFlags::from_raw(s.stage()))
            .module(module)
            .name(&self.name);
        if !self.entries.is_empty() || !self.data.is_empty() {
            info = info.specialization_info(&self.specialization);
        }
        info
    }
}

/// The structures a pipeline's rasterization state chains, where the trace holds them.
#[derive(Default)]
struct RasterizationParts {
    depth_clip: Option<vk::PipelineRasterizationDepthClipStateCreateInfoEXT<'static>>,
    provoking_vertex: Option<vk::PipelineRasterizationProvokingVertexStateCreateInfoEXT<'static>>,
    line: Option<vk::PipelineRasterizationLineStateCreateInfoKHR<'static>>,
    stream: Option<vk::PipelineRasterizationStateStreamCreateInfoEXT<'static>>,
    conservative: Option<vk::PipelineRasterizationConservativeStateCreateInfoEXT<'static>>,
}

impl RasterizationParts {
    /// What `state` recorded of VK_EXT_depth_clip_enable, VK_EXT_provoking_vertex,
    /// VK_KHR/EXT_line_rasterization, VK_EXT_transform_feedback's stream and
    /// VK_EXT_conservative_rasterization: each where it differs from what leaving the
    /// structure out means (the trace cannot tell a default chained from none).
    fn of(state: Option<trace_format::generated::trace::PipelineState<'_>>) -> Self {
        let Some(s) = state else {
            return Self::default();
        };
        RasterizationParts {
            depth_clip: (s.depth_clip() != 0).then(|| {
                vk::PipelineRasterizationDepthClipStateCreateInfoEXT::default()
                    .depth_clip_enable(s.depth_clip() == 2)
            }),
            provoking_vertex: (s.provoking_vertex() != 0).then(|| {
                vk::PipelineRasterizationProvokingVertexStateCreateInfoEXT::default()
                    .provoking_vertex_mode(vk::ProvokingVertexModeEXT::from_raw(
                        s.provoking_vertex() as i32,
                    ))
            }),
            line: (s.line_mode() != 0 || s.line_stipple_enable()).then(|| {
                vk::PipelineRasterizationLineStateCreateInfoKHR::default()
                    .line_rasterization_mode(vk::LineRasterizationModeKHR::from_raw(
                        s.line_mode() as i32
                    ))
                    .stippled_line_enable(s.line_stipple_enable())
                    .line_stipple_factor(s.line_stipple_factor())
                    .line_stipple_pattern(s.line_stipple_pattern() as u16)
            }),
            stream: (s.rasterization_stream() != 0).then(|| {
                vk::PipelineRasterizationStateStreamCreateInfoEXT::default()
                    .rasterization_stream(s.rasterization_stream())
            }),
            conservative: (s.conservative_mode() != 0).then(|| {
                vk::PipelineRasterizationConservativeStateCreateInfoEXT::default()
                    .conservative_rasterization_mode(
                        vk::ConservativeRasterizationModeEXT::from_raw(
                            s.conservative_mode() as i32,
                        ),
                    )
                    .extra_primitive_overestimation_size(s.extra_primitive_overestimation_size())
            }),
        }
    }

    /// `raster` with the structures held here chained to it.
    fn chain<'a>(
        &'a mut self,
        mut raster: vk::PipelineRasterizationStateCreateInfo<'a>,
    ) -> vk::PipelineRasterizationStateCreateInfo<'a> {
        if let Some(d) = &mut self.depth_clip {
            raster = raster.push_next(d);
        }
        if let Some(p) = &mut self.provoking_vertex {
            raster = raster.push_next(p);
        }
        if let Some(l) = &mut self.line {
            raster = raster.push_next(l);
        }
        if let Some(st) = &mut self.stream {
            raster = raster.push_next(st);
        }
        if let Some(c) = &mut self.conservative {
            raster = raster.push_next(c);
        }
        raster
    }
}

/// `vkCreateGraphicsPipelines` for one recorded pipeline.
///
/// # Safety
/// `device` must be live and `handles` hold the objects the pipeline names.
pub unsafe fn create_graphics_pipeline(
    device: &ash::Device,
    handles: &Handles,
    p: &GraphicsPipeline<'_>,
) -> Result<vk::Pipeline, CallError> {
    let stage_data: Vec<Box<StageData>> = p
        .stages()
        .iter()
        .flatten()
        .map(|s| StageData::of(&s))
        .collect();
    let mut stages = Vec::new();
    for (s, d) in p.stages().iter().flatten().zip(&stage_data) {
        stages.push(d.info(&s, handles.typed(s.module())?));
    }
    let st = p.state();
    let bindings: Vec<vk::VertexInputBindingDescription> = st
        .and_then(|s| s.vertex_bindings())
        .iter()
        .flatten()
        .map(|b| vk::VertexInputBindingDescription {
            binding: b.binding(),
            stride: b.stride(),
            input_rate: vk::VertexInputRate::from_raw(b.input_rate() as i32),
        })
        .collect();
    let divisors: Vec<vk::VertexInputBindingDivisorDescriptionKHR> = st
        .and_then(|s| s.vertex_bindings())
        .iter()
        .flatten()
        .filter(|b| b.divisor() != 1)
        .map(|b| vk::VertexInputBindingDivisorDescriptionKHR {
            binding: b.binding(),
            divisor: b.divisor(),
        })
        .collect();
    let attributes: Vec<vk::VertexInputAttributeDescription> = st
        .and_then(|s| s.vertex_attributes())
        .iter()
        .flatten()
        .map(|a| vk::VertexInputAttributeDescription {
            location: a.location(),
            binding: a.binding(),
            format: vk::Format::from_raw(a.format() as i32),
            offset: a.offset(),
        })
        .collect();
    let mut divisor_info = vk::PipelineVertexInputDivisorStateCreateInfoKHR::default()
        .vertex_binding_divisors(&divisors);
    let mut vertex_input = vk::PipelineVertexInputStateCreateInfo::default()
        .vertex_binding_descriptions(&bindings)
        .vertex_attribute_descriptions(&attributes);
    if !divisors.is_empty() {
        vertex_input = vertex_input.push_next(&mut divisor_info);
    }
    let input_assembly = vk::PipelineInputAssemblyStateCreateInfo::default()
        .topology(vk::PrimitiveTopology::from_raw(p.topology() as i32))
        .primitive_restart_enable(p.primitive_restart_enable());
    // The domain origin the program chained (VK_KHR_maintenance2; upper-left, the
    // default, needs no structure): a lower-left origin flips the tessellator's
    // winding, and the driver pushes it.
    let mut domain_origin = vk::PipelineTessellationDomainOriginStateCreateInfo::default()
        .domain_origin(vk::TessellationDomainOrigin::from_raw(
            st.map_or(0, |s| s.domain_origin()) as i32,
        ));
    let mut tessellation = vk::PipelineTessellationStateCreateInfo::default()
        .patch_control_points(p.patch_control_points());
    if domain_origin.domain_origin != vk::TessellationDomainOrigin::UPPER_LEFT {
        tessellation = tessellation.push_next(&mut domain_origin);
    }
    let dynamic: Vec<vk::DynamicState> = p
        .dynamic_states()
        .map(|d| {
            d.iter()
                .map(|s| vk::DynamicState::from_raw(s as i32))
                .collect()
        })
        .unwrap_or_default();
    let is_dynamic = |s: vk::DynamicState| dynamic.contains(&s);
    let viewports: Vec<vk::Viewport> = st
        .and_then(|s| s.viewports())
        .iter()
        .flatten()
        .map(|v| vk::Viewport {
            x: v.x(),
            y: v.y(),
            width: v.width(),
            height: v.height(),
            min_depth: v.min_depth(),
            max_depth: v.max_depth(),
        })
        .collect();
    let scissors: Vec<vk::Rect2D> = st
        .and_then(|s| s.scissors())
        .iter()
        .flatten()
        .map(super::commands::rect)
        .collect();
    let mut viewport = vk::PipelineViewportStateCreateInfo::default();
    if is_dynamic(vk::DynamicState::VIEWPORT_WITH_COUNT) {
    } else if is_dynamic(vk::DynamicState::VIEWPORT) {
        viewport.viewport_count = viewports.len().max(1) as u32;
    } else {
        viewport = viewport.viewports(&viewports);
    }
    if is_dynamic(vk::DynamicState::SCISSOR_WITH_COUNT) {
    } else if is_dynamic(vk::DynamicState::SCISSOR) {
        viewport.scissor_count = scissors.len().max(1) as u32;
    } else {
        viewport.scissor_count = scissors.len() as u32;
        viewport.p_scissors = scissors.as_ptr();
    }
    let mut depth_clip_control = vk::PipelineViewportDepthClipControlCreateInfoEXT::default()
        .negative_one_to_one(st.is_some_and(|s| s.depth_clip_negative_one_to_one()));
    if st.is_some_and(|s| s.depth_clip_negative_one_to_one()) {
        viewport = viewport.push_next(&mut depth_clip_control);
    }
    let mut raster = match st {
        Some(s) => vk::PipelineRasterizationStateCreateInfo::default()
            .depth_clamp_enable(s.depth_clamp_enable())
            .rasterizer_discard_enable(s.rasterizer_discard_enable())
            .polygon_mode(vk::PolygonMode::from_raw(s.polygon_mode() as i32))
            .cull_mode(vk::CullModeFlags::from_raw(s.cull_mode()))
            .front_face(vk::FrontFace::from_raw(s.front_face() as i32))
            .depth_bias_enable(s.depth_bias_enable())
            .depth_bias_constant_factor(s.depth_bias_constant())
            .depth_bias_clamp(s.depth_bias_clamp())
            .depth_bias_slope_factor(s.depth_bias_slope())
            .line_width(s.line_width()),
        None => vk::PipelineRasterizationStateCreateInfo::default().line_width(1.0),
    };
    // The rasterization structures the program chained, as the trace holds them (each
    // left out where the trace holds its default): without them the device would
    // rasterize otherwise than the program asked (vkd3d's depth clip with depth clamp).
    let mut raster_parts = RasterizationParts::of(st);
    raster = raster_parts.chain(raster);
    let sample_mask = [st.map_or(u32::MAX, |s| s.sample_mask())];
    let multisample = vk::PipelineMultisampleStateCreateInfo::default()
        .rasterization_samples(vk::SampleCountFlags::from_raw(
            st.map_or(1, |s| s.rasterization_samples()).max(1),
        ))
        .sample_mask(&sample_mask)
        .alpha_to_coverage_enable(st.is_some_and(|s| s.alpha_to_coverage_enable()))
        .alpha_to_one_enable(st.is_some_and(|s| s.alpha_to_one_enable()));
    let stencil = |f: Option<&trace_format::generated::trace::StencilFace>| {
        f.map_or(vk::StencilOpState::default(), |f| vk::StencilOpState {
            fail_op: vk::StencilOp::from_raw(f.fail_op() as i32),
            pass_op: vk::StencilOp::from_raw(f.pass_op() as i32),
            depth_fail_op: vk::StencilOp::from_raw(f.depth_fail_op() as i32),
            compare_op: vk::CompareOp::from_raw(f.compare_op() as i32),
            compare_mask: f.compare_mask(),
            write_mask: f.write_mask(),
            reference: f.reference(),
        })
    };
    let depth_stencil = match st {
        Some(s) => vk::PipelineDepthStencilStateCreateInfo::default()
            .depth_test_enable(s.depth_test_enable())
            .depth_write_enable(s.depth_write_enable())
            .depth_compare_op(vk::CompareOp::from_raw(s.depth_compare_op() as i32))
            .depth_bounds_test_enable(s.depth_bounds_test_enable())
            .min_depth_bounds(s.min_depth_bounds())
            .max_depth_bounds(s.max_depth_bounds())
            .stencil_test_enable(s.stencil_test_enable())
            .front(stencil(s.stencil_front()))
            .back(stencil(s.stencil_back())),
        None => vk::PipelineDepthStencilStateCreateInfo::default(),
    };
    let blend_attachments: Vec<vk::PipelineColorBlendAttachmentState> = st
        .and_then(|s| s.blend_attachments())
        .iter()
        .flatten()
        .map(|b| vk::PipelineColorBlendAttachmentState {
            blend_enable: b.blend_enable().into(),
            src_color_blend_factor: vk::BlendFactor::from_raw(b.src_color_blend_factor() as i32),
            dst_color_blend_factor: vk::BlendFactor::from_raw(b.dst_color_blend_factor() as i32),
            color_blend_op: vk::BlendOp::from_raw(b.color_blend_op() as i32),
            src_alpha_blend_factor: vk::BlendFactor::from_raw(b.src_alpha_blend_factor() as i32),
            dst_alpha_blend_factor: vk::BlendFactor::from_raw(b.dst_alpha_blend_factor() as i32),
            alpha_blend_op: vk::BlendOp::from_raw(b.alpha_blend_op() as i32),
            color_write_mask: vk::ColorComponentFlags::from_raw(b.color_write_mask()),
        })
        .collect();
    let mut constants = [0f32; 4];
    for (c, v) in constants
        .iter_mut()
        .zip(st.and_then(|s| s.blend_constants()).iter().flatten())
    {
        *c = v;
    }
    let blend = vk::PipelineColorBlendStateCreateInfo::default()
        .logic_op_enable(st.is_some_and(|s| s.logic_op_enable()))
        .logic_op(vk::LogicOp::from_raw(st.map_or(0, |s| s.logic_op()) as i32))
        .attachments(&blend_attachments)
        .blend_constants(constants);
    let dynamic_state = vk::PipelineDynamicStateCreateInfo::default().dynamic_states(&dynamic);
    let color_formats: Vec<vk::Format> = p
        .rendering()
        .and_then(|r| r.color_attachment_formats())
        .iter()
        .flatten()
        .map(|f| vk::Format::from_raw(f as i32))
        .collect();
    let mut rendering = vk::PipelineRenderingCreateInfo::default()
        .view_mask(p.rendering().map_or(0, |r| r.view_mask()))
        .color_attachment_formats(&color_formats)
        .depth_attachment_format(vk::Format::from_raw(
            p.rendering().map_or(0, |r| r.depth_attachment_format()) as i32,
        ))
        .stencil_attachment_format(vk::Format::from_raw(
            p.rendering().map_or(0, |r| r.stencil_attachment_format()) as i32,
        ));
    let libraries: Vec<vk::Pipeline> = p
        .libraries()
        .iter()
        .flatten()
        .map(|l| handles.typed(l))
        .collect::<Result<_, _>>()?;
    let mut library_info = vk::PipelineLibraryCreateInfoKHR::default().libraries(&libraries);
    let mut library_parts = vk::GraphicsPipelineLibraryCreateInfoEXT::default().flags(
        vk::GraphicsPipelineLibraryFlagsEXT::from_raw(p.library_parts()),
    );
    let mut info = vk::GraphicsPipelineCreateInfo::default()
        .flags(vk::PipelineCreateFlags::from_raw(p.flags()))
        .stages(&stages)
        .vertex_input_state(&vertex_input)
        .input_assembly_state(&input_assembly)
        .tessellation_state(&tessellation)
        .viewport_state(&viewport)
        .rasterization_state(&raster)
        .multisample_state(&multisample)
        .depth_stencil_state(&depth_stencil)
        .color_blend_state(&blend)
        .dynamic_state(&dynamic_state)
        .layout(handles.typed(p.layout())?)
        .render_pass(handles.typed(p.render_pass())?)
        .subpass(p.subpass());
    if p.render_pass() == 0 {
        info = info.push_next(&mut rendering);
    }
    if !libraries.is_empty() {
        info = info.push_next(&mut library_info);
    }
    if p.library_parts() != 0 {
        info = info.push_next(&mut library_parts);
    }
    device
        .create_graphics_pipelines(vk::PipelineCache::null(), &[info], None)
        .map(|p| p[0])
        .map_err(|(_, e)| CallError::Failed(e))
}
