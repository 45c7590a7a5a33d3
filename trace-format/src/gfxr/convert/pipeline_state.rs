//! A graphics pipeline's static state from its decoded create info, as the capture
//! layer's `hooks/pipeline_state.rs` records it.

use super::commands::rect;
use super::StructValue;
use crate::generated::trace::*;
use crate::gfxr::tables::s_type_of;

use crate::pipeline_parts::{
    dynamic, FRAGMENT_OUTPUT_INTERFACE, FRAGMENT_SHADER, PRE_RASTERIZATION_SHADERS,
    VERTEX_INPUT_INTERFACE,
};

fn float(s: &StructValue, name: &str) -> f32 {
    f32::from_bits(s.u32(name))
}

fn flag(s: &StructValue, name: &str) -> bool {
    s.u32(name) != 0
}

fn chained<'a>(s: &'a StructValue, name: &str) -> Option<&'a StructValue> {
    s.find(s_type_of(name))
}

fn stencil_face(s: Option<&StructValue>) -> Option<StencilFaceT> {
    let s = s?;
    Some(StencilFaceT {
        fail_op: s.u32("failOp"),
        pass_op: s.u32("passOp"),
        depth_fail_op: s.u32("depthFailOp"),
        compare_op: s.u32("compareOp"),
        compare_mask: s.u32("compareMask"),
        write_mask: s.u32("writeMask"),
        reference: s.u32("reference"),
    })
}

/// The static state `p` defines (mirrors the layer's `pipeline_state`).
pub(super) fn pipeline_state(
    p: &StructValue,
    defines: &dyn Fn(u32) -> bool,
    dynamic_states: &[u32],
) -> PipelineStateT {
    let is_dynamic = |s: u32| dynamic_states.contains(&s);
    let mut t = PipelineStateT {
        sample_mask: !0,
        color_write_enables: !0,
        line_width: 1.0,
        line_stipple_factor: 1,
        line_stipple_pattern: 0xffff,
        max_depth_bounds: 1.0,
        ..Default::default()
    };
    if defines(VERTEX_INPUT_INTERFACE) && !is_dynamic(dynamic::VERTEX_INPUT) {
        if let Some(vi) = p.get("pVertexInputState").structure() {
            let divisors: Vec<(u32, u32)> = chained(
                vi,
                "VkPipelineVertexInputDivisorStateCreateInfoKHR",
            )
            .map_or_else(Vec::new, |d| {
                d.get("pVertexBindingDivisors")
                    .structures()
                    .iter()
                    .map(|d| (d.u32("binding"), d.u32("divisor")))
                    .collect()
            });
            let divisor = |b: u32| divisors.iter().find(|d| d.0 == b).map_or(1, |d| d.1);
            t.vertex_bindings = Some(
                vi.get("pVertexBindingDescriptions")
                    .structures()
                    .iter()
                    .map(|b| VertexBindingT {
                        binding: b.u32("binding"),
                        stride: b.u32("stride"),
                        input_rate: b.u32("inputRate"),
                        divisor: divisor(b.u32("binding")),
                    })
                    .collect(),
            );
            t.vertex_attributes = Some(
                vi.get("pVertexAttributeDescriptions")
                    .structures()
                    .iter()
                    .map(|a| VertexAttributeT {
                        location: a.u32("location"),
                        binding: a.u32("binding"),
                        format: a.u32("format"),
                        offset: a.u32("offset"),
                    })
                    .collect(),
            );
        }
    }
    if defines(PRE_RASTERIZATION_SHADERS) {
        pre_rasterization(p, &mut t, &is_dynamic);
    }
    if defines(FRAGMENT_SHADER) {
        if let Some(ds) = p.get("pDepthStencilState").structure() {
            t.depth_test_enable = flag(ds, "depthTestEnable");
            t.depth_write_enable = flag(ds, "depthWriteEnable");
            t.depth_compare_op = ds.u32("depthCompareOp");
            t.depth_bounds_test_enable = flag(ds, "depthBoundsTestEnable");
            t.min_depth_bounds = float(ds, "minDepthBounds");
            t.max_depth_bounds = float(ds, "maxDepthBounds");
            t.stencil_test_enable = flag(ds, "stencilTestEnable");
            t.stencil_front = stencil_face(ds.get("front").structure());
            t.stencil_back = stencil_face(ds.get("back").structure());
        }
    }
    if defines(FRAGMENT_SHADER | FRAGMENT_OUTPUT_INTERFACE) {
        if let Some(ms) = p.get("pMultisampleState").structure() {
            t.rasterization_samples = ms.u32("rasterizationSamples");
            if let Some(mask) = ms.get("pSampleMask").words32().first() {
                if !is_dynamic(dynamic::SAMPLE_MASK) {
                    t.sample_mask = *mask;
                }
            }
            t.alpha_to_coverage_enable = flag(ms, "alphaToCoverageEnable");
            t.alpha_to_one_enable = flag(ms, "alphaToOneEnable");
        }
    }
    if defines(FRAGMENT_OUTPUT_INTERFACE) {
        if let Some(cb) = p.get("pColorBlendState").structure() {
            t.logic_op_enable = flag(cb, "logicOpEnable");
            t.logic_op = cb.u32("logicOp");
            t.blend_constants = Some(
                cb.get("blendConstants")
                    .words32()
                    .into_iter()
                    .map(f32::from_bits)
                    .collect(),
            );
            let all_dynamic = [
                dynamic::COLOR_BLEND_ENABLE,
                dynamic::COLOR_BLEND_EQUATION,
                dynamic::COLOR_WRITE_MASK,
            ]
            .iter()
            .all(|s| is_dynamic(*s));
            if !all_dynamic {
                t.blend_attachments = Some(
                    cb.get("pAttachments")
                        .structures()
                        .iter()
                        .map(|a| BlendAttachmentT {
                            blend_enable: flag(a, "blendEnable"),
                            src_color_blend_factor: a.u32("srcColorBlendFactor"),
                            dst_color_blend_factor: a.u32("dstColorBlendFactor"),
                            color_blend_op: a.u32("colorBlendOp"),
                            src_alpha_blend_factor: a.u32("srcAlphaBlendFactor"),
                            dst_alpha_blend_factor: a.u32("dstAlphaBlendFactor"),
                            alpha_blend_op: a.u32("alphaBlendOp"),
                            color_write_mask: a.u32("colorWriteMask"),
                        })
                        .collect(),
                );
            }
            if let Some(w) = chained(cb, "VkPipelineColorWriteCreateInfoEXT") {
                t.color_write_enables = w
                    .get("pColorWriteEnables")
                    .words32()
                    .iter()
                    .enumerate()
                    .take(32)
                    .fold(0, |m, (i, e)| if *e != 0 { m | 1 << i } else { m });
            }
        }
    }
    t
}

fn pre_rasterization(p: &StructValue, t: &mut PipelineStateT, is_dynamic: &dyn Fn(u32) -> bool) {
    if let Some(ts) = p.get("pTessellationState").structure() {
        t.domain_origin = chained(ts, "VkPipelineTessellationDomainOriginStateCreateInfo")
            .map_or(0, |d| d.u32("domainOrigin"));
    }
    if let Some(vp) = p.get("pViewportState").structure() {
        if !is_dynamic(dynamic::VIEWPORT) && !is_dynamic(dynamic::VIEWPORT_WITH_COUNT) {
            t.viewports = Some(
                vp.get("pViewports")
                    .structures()
                    .iter()
                    .map(|v| ViewportT {
                        x: float(v, "x"),
                        y: float(v, "y"),
                        width: float(v, "width"),
                        height: float(v, "height"),
                        min_depth: float(v, "minDepth"),
                        max_depth: float(v, "maxDepth"),
                    })
                    .collect(),
            );
        }
        if !is_dynamic(dynamic::SCISSOR) && !is_dynamic(dynamic::SCISSOR_WITH_COUNT) {
            t.scissors = Some(
                vp.get("pScissors")
                    .structures()
                    .iter()
                    .filter_map(|r| rect(Some(r)))
                    .collect(),
            );
        }
        t.depth_clip_negative_one_to_one =
            chained(vp, "VkPipelineViewportDepthClipControlCreateInfoEXT")
                .is_some_and(|c| flag(c, "negativeOneToOne"));
    }
    let Some(rs) = p.get("pRasterizationState").structure() else {
        return;
    };
    t.depth_clamp_enable = flag(rs, "depthClampEnable");
    t.rasterizer_discard_enable = flag(rs, "rasterizerDiscardEnable");
    t.polygon_mode = rs.u32("polygonMode");
    t.cull_mode = rs.u32("cullMode");
    t.front_face = rs.u32("frontFace");
    t.depth_bias_enable = flag(rs, "depthBiasEnable");
    t.depth_bias_constant = float(rs, "depthBiasConstantFactor");
    t.depth_bias_clamp = float(rs, "depthBiasClamp");
    t.depth_bias_slope = float(rs, "depthBiasSlopeFactor");
    t.line_width = float(rs, "lineWidth");
    if let Some(c) = chained(rs, "VkPipelineRasterizationDepthClipStateCreateInfoEXT") {
        t.depth_clip = 1 + u8::from(flag(c, "depthClipEnable"));
    }
    if let Some(v) = chained(
        rs,
        "VkPipelineRasterizationProvokingVertexStateCreateInfoEXT",
    ) {
        t.provoking_vertex = v.u32("provokingVertexMode");
    }
    if let Some(l) = chained(rs, "VkPipelineRasterizationLineStateCreateInfoKHR") {
        t.line_mode = l.u32("lineRasterizationMode");
        t.line_stipple_enable = flag(l, "stippledLineEnable");
        t.line_stipple_factor = l.u32("lineStippleFactor");
        t.line_stipple_pattern = l.u32("lineStipplePattern") & 0xffff;
    }
    if let Some(s) = chained(rs, "VkPipelineRasterizationStateStreamCreateInfoEXT") {
        t.rasterization_stream = s.u32("rasterizationStream");
    }
    if let Some(c) = chained(rs, "VkPipelineRasterizationConservativeStateCreateInfoEXT") {
        t.conservative_mode = c.u32("conservativeRasterizationMode");
        t.extra_primitive_overestimation_size = float(c, "extraPrimitiveOverestimationSize");
    }
}
