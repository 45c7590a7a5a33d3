//! A recorded graphics pipeline's static state as the driver model's state values, and
//! how a pipeline linked from libraries takes each part's state from the library that
//! defines it.

use driver::nvk::state::{
    BlendEquation, DynamicState, Rect, StencilOps, VertexAttribute, VertexBinding, VertexInput,
    Viewport, MAX_RTS,
};
use trace_format::generated::trace::{GraphicsPipeline, StencilFace};

use crate::objects::PipelinePart;

/// `VkDynamicState` VK_DYNAMIC_STATE_LINE_STIPPLE_ENABLE_EXT.
const DYNAMIC_LINE_STIPPLE_ENABLE: u32 = 1_000_455_021;

/// The static state of pipeline record `p`; `None` when the trace predates its
/// recording. A state the record leaves out keeps Vulkan's value.
pub fn static_state(p: &GraphicsPipeline<'_>) -> Option<DynamicState> {
    let r = p.state()?;
    let mut s = DynamicState {
        topology: p.topology(),
        primitive_restart_enable: p.primitive_restart_enable(),
        patch_control_points: p.patch_control_points(),
        domain_origin: r.domain_origin(),
        depth_clip_negative_one_to_one: r.depth_clip_negative_one_to_one(),
        rasterizer_discard_enable: r.rasterizer_discard_enable(),
        depth_clamp_enable: r.depth_clamp_enable(),
        depth_clip_enable: match r.depth_clip() {
            0 => None,
            c => Some(c == 2),
        },
        polygon_mode: r.polygon_mode(),
        cull_mode: r.cull_mode(),
        front_face: r.front_face(),
        provoking_vertex: r.provoking_vertex(),
        depth_bias_enable: r.depth_bias_enable(),
        depth_bias: [
            r.depth_bias_constant(),
            r.depth_bias_clamp(),
            r.depth_bias_slope(),
        ],
        line_width: r.line_width(),
        line_mode: r.line_mode(),
        line_stipple_enable: r.line_stipple_enable(),
        // vk_rasterization_state_init takes the stipple only where stippling is on or
        // its enable dynamic; otherwise it stays 0.
        line_stipple: if r.line_stipple_enable()
            || p.dynamic_states()
                .is_some_and(|d| d.iter().any(|s| s == DYNAMIC_LINE_STIPPLE_ENABLE))
        {
            (r.line_stipple_factor(), r.line_stipple_pattern() as u16)
        } else {
            (0, 0)
        },
        rasterization_stream: r.rasterization_stream(),
        conservative_mode: r.conservative_mode(),
        extra_primitive_overestimation_size: r.extra_primitive_overestimation_size(),
        rasterization_samples: r.rasterization_samples(),
        sample_mask: r.sample_mask(),
        alpha_to_coverage_enable: r.alpha_to_coverage_enable(),
        alpha_to_one_enable: r.alpha_to_one_enable(),
        depth_test_enable: r.depth_test_enable(),
        depth_write_enable: r.depth_write_enable(),
        depth_compare_op: r.depth_compare_op(),
        depth_bounds_test_enable: r.depth_bounds_test_enable(),
        depth_bounds: (r.min_depth_bounds(), r.max_depth_bounds()),
        stencil_test_enable: r.stencil_test_enable(),
        logic_op_enable: r.logic_op_enable(),
        logic_op: r.logic_op(),
        color_write_enables: r.color_write_enables() & ((1 << MAX_RTS) - 1),
        ..DynamicState::default()
    };
    s.vertex_input = VertexInput {
        bindings: r
            .vertex_bindings()
            .into_iter()
            .flatten()
            .map(|b| VertexBinding {
                binding: b.binding(),
                stride: b.stride(),
                input_rate: b.input_rate(),
                divisor: b.divisor(),
            })
            .collect(),
        attributes: r
            .vertex_attributes()
            .into_iter()
            .flatten()
            .map(|a| VertexAttribute {
                location: a.location(),
                binding: a.binding(),
                format: a.format(),
                offset: a.offset(),
            })
            .collect(),
    };
    s.viewports = r
        .viewports()
        .into_iter()
        .flatten()
        .map(|v| Viewport {
            x: v.x(),
            y: v.y(),
            width: v.width(),
            height: v.height(),
            min_depth: v.min_depth(),
            max_depth: v.max_depth(),
        })
        .collect();
    s.scissors = r
        .scissors()
        .into_iter()
        .flatten()
        .map(|r| Rect {
            x: r.offset().x(),
            y: r.offset().y(),
            width: r.extent().width(),
            height: r.extent().height(),
        })
        .collect();
    // The layer records both faces or neither.
    if let (Some(front), Some(back)) = (r.stencil_front(), r.stencil_back()) {
        s.stencil_ops.front = stencil_ops(front);
        s.stencil_ops.back = stencil_ops(back);
        s.stencil_compare_mask.front = front.compare_mask();
        s.stencil_compare_mask.back = back.compare_mask();
        s.stencil_write_mask.front = front.write_mask();
        s.stencil_write_mask.back = back.write_mask();
        s.stencil_reference.front = front.reference();
        s.stencil_reference.back = back.reference();
    }
    for (i, a) in r
        .blend_attachments()
        .into_iter()
        .flatten()
        .take(MAX_RTS)
        .enumerate()
    {
        s.blend_enables[i] = a.blend_enable();
        s.blend_equations[i] = BlendEquation {
            src_color_blend_factor: a.src_color_blend_factor(),
            dst_color_blend_factor: a.dst_color_blend_factor(),
            color_blend_op: a.color_blend_op(),
            src_alpha_blend_factor: a.src_alpha_blend_factor(),
            dst_alpha_blend_factor: a.dst_alpha_blend_factor(),
            alpha_blend_op: a.alpha_blend_op(),
        };
        s.write_masks[i] = a.color_write_mask();
    }
    if let Some(c) = r.blend_constants() {
        for (dst, src) in s.blend_constants.iter_mut().zip(c.iter()) {
            *dst = src;
        }
    }
    Some(s)
}

fn stencil_ops(f: &StencilFace) -> StencilOps {
    StencilOps {
        fail: f.fail_op(),
        pass: f.pass_op(),
        depth_fail: f.depth_fail_op(),
        compare: f.compare_op(),
    }
}

/// Copies into `dst` the state of `part` from `src`: what a pipeline linked from
/// libraries takes from the library defining that part (Mesa's
/// `vk_graphics_pipeline_state` keeps each part's state apart the same way).
/// Multisampling belongs to both fragment parts; it is taken with the fragment output.
pub fn take_part(dst: &mut DynamicState, src: &DynamicState, part: PipelinePart) {
    match part {
        PipelinePart::VertexInput => {
            dst.vertex_input = src.vertex_input.clone();
            dst.topology = src.topology;
            dst.primitive_restart_enable = src.primitive_restart_enable;
        }
        PipelinePart::PreRasterization => {
            dst.patch_control_points = src.patch_control_points;
            dst.domain_origin = src.domain_origin;
            dst.viewports = src.viewports.clone();
            dst.scissors = src.scissors.clone();
            dst.depth_clip_negative_one_to_one = src.depth_clip_negative_one_to_one;
            dst.rasterizer_discard_enable = src.rasterizer_discard_enable;
            dst.depth_clamp_enable = src.depth_clamp_enable;
            dst.depth_clip_enable = src.depth_clip_enable;
            dst.polygon_mode = src.polygon_mode;
            dst.cull_mode = src.cull_mode;
            dst.front_face = src.front_face;
            dst.provoking_vertex = src.provoking_vertex;
            dst.depth_bias_enable = src.depth_bias_enable;
            dst.depth_bias = src.depth_bias;
            dst.line_width = src.line_width;
            dst.line_mode = src.line_mode;
            dst.line_stipple_enable = src.line_stipple_enable;
            dst.line_stipple = src.line_stipple;
            dst.rasterization_stream = src.rasterization_stream;
            dst.conservative_mode = src.conservative_mode;
            dst.extra_primitive_overestimation_size = src.extra_primitive_overestimation_size;
            dst.fragment_shading_rate = src.fragment_shading_rate;
        }
        PipelinePart::FragmentShader => {
            dst.depth_test_enable = src.depth_test_enable;
            dst.depth_write_enable = src.depth_write_enable;
            dst.depth_compare_op = src.depth_compare_op;
            dst.depth_bounds_test_enable = src.depth_bounds_test_enable;
            dst.depth_bounds = src.depth_bounds;
            dst.stencil_test_enable = src.stencil_test_enable;
            dst.stencil_ops = src.stencil_ops;
            dst.stencil_compare_mask = src.stencil_compare_mask;
            dst.stencil_write_mask = src.stencil_write_mask;
            dst.stencil_reference = src.stencil_reference;
        }
        PipelinePart::FragmentOutput => {
            dst.rasterization_samples = src.rasterization_samples;
            dst.sample_mask = src.sample_mask;
            dst.alpha_to_coverage_enable = src.alpha_to_coverage_enable;
            dst.alpha_to_one_enable = src.alpha_to_one_enable;
            dst.logic_op_enable = src.logic_op_enable;
            dst.logic_op = src.logic_op;
            dst.blend_enables = src.blend_enables;
            dst.blend_equations = src.blend_equations;
            dst.write_masks = src.write_masks;
            dst.color_write_enables = src.color_write_enables;
            dst.blend_constants = src.blend_constants;
        }
    }
}
