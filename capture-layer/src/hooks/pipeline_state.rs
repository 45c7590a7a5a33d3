//! A graphics pipeline's static state, from the state structures of the parts it
//! defines and the extension structures chained to them.
//!
//! A structure of a part the pipeline does not define, and an array whose state the
//! pipeline makes dynamic, is ignored by the implementation and need not point anywhere
//! valid: neither is read.

use ash::vk;
use trace_format::generated::trace::*;

use super::util::{find_in_chain, slice};

use trace_format::pipeline_parts::dynamic;
pub use trace_format::pipeline_parts::{
    FRAGMENT_OUTPUT_INTERFACE, FRAGMENT_SHADER, PRE_RASTERIZATION_SHADERS, VERTEX_INPUT_INTERFACE,
};

fn stencil_face(s: &vk::StencilOpState) -> StencilFaceT {
    StencilFace::new(
        s.fail_op.as_raw() as u32,
        s.pass_op.as_raw() as u32,
        s.depth_fail_op.as_raw() as u32,
        s.compare_op.as_raw() as u32,
        s.compare_mask,
        s.write_mask,
        s.reference,
    )
    .unpack()
}

/// The static state of `p`, reading the structures of the parts `defines` says it
/// defines; `dynamic_states` are the states it leaves to commands.
///
/// # Safety
/// `p` is a create info the driver accepted, with the pointers the parts it defines
/// need.
pub unsafe fn pipeline_state(
    p: &vk::GraphicsPipelineCreateInfo,
    defines: impl Fn(u32) -> bool,
    dynamic_states: &[u32],
) -> PipelineStateT {
    let is_dynamic = |s: u32| dynamic_states.contains(&s);
    // Vulkan's values where a structure is absent.
    let mut t = table!(PipelineStateT {
        sample_mask: !0,
        color_write_enables: !0,
        line_width: 1.0,
        line_stipple_factor: 1,
        line_stipple_pattern: 0xffff,
        max_depth_bounds: 1.0,
    });
    if defines(VERTEX_INPUT_INTERFACE) && !is_dynamic(dynamic::VERTEX_INPUT) {
        if let Some(vi) = p.p_vertex_input_state.as_ref() {
            let divisors = find_in_chain::<vk::PipelineVertexInputDivisorStateCreateInfoKHR>(
                vi.p_next,
                vk::StructureType::PIPELINE_VERTEX_INPUT_DIVISOR_STATE_CREATE_INFO_KHR,
            )
            .map_or(&[][..], |d| {
                slice(d.p_vertex_binding_divisors, d.vertex_binding_divisor_count)
            });
            let divisor = |binding: u32| {
                divisors
                    .iter()
                    .find(|d| d.binding == binding)
                    .map_or(1, |d| d.divisor)
            };
            t.vertex_bindings = Some(
                slice(
                    vi.p_vertex_binding_descriptions,
                    vi.vertex_binding_description_count,
                )
                .iter()
                .map(|b| {
                    VertexBinding::new(
                        b.binding,
                        b.stride,
                        b.input_rate.as_raw() as u32,
                        divisor(b.binding),
                    )
                    .unpack()
                })
                .collect(),
            );
            t.vertex_attributes = Some(
                slice(
                    vi.p_vertex_attribute_descriptions,
                    vi.vertex_attribute_description_count,
                )
                .iter()
                .map(|a| {
                    VertexAttribute::new(a.location, a.binding, a.format.as_raw() as u32, a.offset)
                        .unpack()
                })
                .collect(),
            );
        }
    }
    if defines(PRE_RASTERIZATION_SHADERS) {
        pre_rasterization(p, &mut t, &is_dynamic);
    }
    if defines(FRAGMENT_SHADER) {
        if let Some(ds) = p.p_depth_stencil_state.as_ref() {
            t.depth_test_enable = ds.depth_test_enable != 0;
            t.depth_write_enable = ds.depth_write_enable != 0;
            t.depth_compare_op = ds.depth_compare_op.as_raw() as u32;
            t.depth_bounds_test_enable = ds.depth_bounds_test_enable != 0;
            t.min_depth_bounds = ds.min_depth_bounds;
            t.max_depth_bounds = ds.max_depth_bounds;
            t.stencil_test_enable = ds.stencil_test_enable != 0;
            t.stencil_front = Some(stencil_face(&ds.front));
            t.stencil_back = Some(stencil_face(&ds.back));
        }
    }
    if defines(FRAGMENT_SHADER | FRAGMENT_OUTPUT_INTERFACE) {
        if let Some(ms) = p.p_multisample_state.as_ref() {
            t.rasterization_samples = ms.rasterization_samples.as_raw();
            if !ms.p_sample_mask.is_null() && !is_dynamic(dynamic::SAMPLE_MASK) {
                t.sample_mask = *ms.p_sample_mask;
            }
            t.alpha_to_coverage_enable = ms.alpha_to_coverage_enable != 0;
            t.alpha_to_one_enable = ms.alpha_to_one_enable != 0;
        }
    }
    if defines(FRAGMENT_OUTPUT_INTERFACE) {
        if let Some(cb) = p.p_color_blend_state.as_ref() {
            t.logic_op_enable = cb.logic_op_enable != 0;
            t.logic_op = cb.logic_op.as_raw() as u32;
            t.blend_constants = Some(cb.blend_constants.to_vec());
            let all_dynamic = [
                dynamic::COLOR_BLEND_ENABLE,
                dynamic::COLOR_BLEND_EQUATION,
                dynamic::COLOR_WRITE_MASK,
            ]
            .iter()
            .all(|s| is_dynamic(*s));
            if !all_dynamic {
                t.blend_attachments = Some(
                    slice(cb.p_attachments, cb.attachment_count)
                        .iter()
                        .map(|a| {
                            BlendAttachment::new(
                                a.blend_enable != 0,
                                a.src_color_blend_factor.as_raw() as u32,
                                a.dst_color_blend_factor.as_raw() as u32,
                                a.color_blend_op.as_raw() as u32,
                                a.src_alpha_blend_factor.as_raw() as u32,
                                a.dst_alpha_blend_factor.as_raw() as u32,
                                a.alpha_blend_op.as_raw() as u32,
                                a.color_write_mask.as_raw(),
                            )
                            .unpack()
                        })
                        .collect(),
                );
            }
            if let Some(w) = find_in_chain::<vk::PipelineColorWriteCreateInfoEXT>(
                cb.p_next,
                vk::StructureType::PIPELINE_COLOR_WRITE_CREATE_INFO_EXT,
            ) {
                t.color_write_enables = slice(w.p_color_write_enables, w.attachment_count)
                    .iter()
                    .enumerate()
                    .take(32)
                    .fold(0, |m, (i, e)| if *e != 0 { m | 1 << i } else { m });
            }
        }
    }
    t
}

/// Tessellation, viewports and rasterization, with their extension structures.
unsafe fn pre_rasterization(
    p: &vk::GraphicsPipelineCreateInfo,
    t: &mut PipelineStateT,
    is_dynamic: &dyn Fn(u32) -> bool,
) {
    if let Some(ts) = p.p_tessellation_state.as_ref() {
        t.domain_origin = find_in_chain::<vk::PipelineTessellationDomainOriginStateCreateInfo>(
            ts.p_next,
            vk::StructureType::PIPELINE_TESSELLATION_DOMAIN_ORIGIN_STATE_CREATE_INFO,
        )
        .map_or(0, |d| d.domain_origin.as_raw() as u32);
    }
    if let Some(vp) = p.p_viewport_state.as_ref() {
        if !is_dynamic(dynamic::VIEWPORT) && !is_dynamic(dynamic::VIEWPORT_WITH_COUNT) {
            t.viewports = Some(
                slice(vp.p_viewports, vp.viewport_count)
                    .iter()
                    .map(|v| {
                        Viewport::new(v.x, v.y, v.width, v.height, v.min_depth, v.max_depth)
                            .unpack()
                    })
                    .collect(),
            );
        }
        if !is_dynamic(dynamic::SCISSOR) && !is_dynamic(dynamic::SCISSOR_WITH_COUNT) {
            t.scissors = Some(
                slice(vp.p_scissors, vp.scissor_count)
                    .iter()
                    .map(|r| {
                        Rect2D::new(
                            &Offset2D::new(r.offset.x, r.offset.y),
                            &Extent2D::new(r.extent.width, r.extent.height),
                        )
                        .unpack()
                    })
                    .collect(),
            );
        }
        t.depth_clip_negative_one_to_one =
            find_in_chain::<vk::PipelineViewportDepthClipControlCreateInfoEXT>(
                vp.p_next,
                vk::StructureType::PIPELINE_VIEWPORT_DEPTH_CLIP_CONTROL_CREATE_INFO_EXT,
            )
            .is_some_and(|c| c.negative_one_to_one != 0);
    }
    let Some(rs) = p.p_rasterization_state.as_ref() else {
        return;
    };
    t.depth_clamp_enable = rs.depth_clamp_enable != 0;
    t.rasterizer_discard_enable = rs.rasterizer_discard_enable != 0;
    t.polygon_mode = rs.polygon_mode.as_raw() as u32;
    t.cull_mode = rs.cull_mode.as_raw();
    t.front_face = rs.front_face.as_raw() as u32;
    t.depth_bias_enable = rs.depth_bias_enable != 0;
    t.depth_bias_constant = rs.depth_bias_constant_factor;
    t.depth_bias_clamp = rs.depth_bias_clamp;
    t.depth_bias_slope = rs.depth_bias_slope_factor;
    t.line_width = rs.line_width;
    let chain = rs.p_next;
    if let Some(c) = find_in_chain::<vk::PipelineRasterizationDepthClipStateCreateInfoEXT>(
        chain,
        vk::StructureType::PIPELINE_RASTERIZATION_DEPTH_CLIP_STATE_CREATE_INFO_EXT,
    ) {
        t.depth_clip = 1 + u8::from(c.depth_clip_enable != 0);
    }
    if let Some(v) = find_in_chain::<vk::PipelineRasterizationProvokingVertexStateCreateInfoEXT>(
        chain,
        vk::StructureType::PIPELINE_RASTERIZATION_PROVOKING_VERTEX_STATE_CREATE_INFO_EXT,
    ) {
        t.provoking_vertex = v.provoking_vertex_mode.as_raw() as u32;
    }
    if let Some(l) = find_in_chain::<vk::PipelineRasterizationLineStateCreateInfoKHR>(
        chain,
        vk::StructureType::PIPELINE_RASTERIZATION_LINE_STATE_CREATE_INFO_KHR,
    ) {
        t.line_mode = l.line_rasterization_mode.as_raw() as u32;
        t.line_stipple_enable = l.stippled_line_enable != 0;
        t.line_stipple_factor = l.line_stipple_factor;
        t.line_stipple_pattern = u32::from(l.line_stipple_pattern);
    }
    if let Some(s) = find_in_chain::<vk::PipelineRasterizationStateStreamCreateInfoEXT>(
        chain,
        vk::StructureType::PIPELINE_RASTERIZATION_STATE_STREAM_CREATE_INFO_EXT,
    ) {
        t.rasterization_stream = s.rasterization_stream;
    }
    if let Some(c) = find_in_chain::<vk::PipelineRasterizationConservativeStateCreateInfoEXT>(
        chain,
        vk::StructureType::PIPELINE_RASTERIZATION_CONSERVATIVE_STATE_CREATE_INFO_EXT,
    ) {
        t.conservative_mode = c.conservative_rasterization_mode.as_raw() as u32;
        t.extra_primitive_overestimation_size = c.extra_primitive_overestimation_size;
    }
}
