//! The `vkCmdSet*` dynamic graphics state: each command stores its values in the
//! encoder's [`GraphicsState`](driver::nvk::state::GraphicsState), which marks what
//! changed dirty; the next draw's flush emits the methods.

use driver::nvk::state::{
    BlendEquation, Rect, SampleLocations, StencilOps, VertexAttribute, VertexBinding, Viewport,
};
use driver::nvk::CommandEncoder;
use smallvec::SmallVec;

use crate::generated::decode as vk;
use crate::generic::GenericCmd;

fn viewport(v: &vk::Viewport) -> Viewport {
    Viewport {
        x: v.x,
        y: v.y,
        width: v.width,
        height: v.height,
        min_depth: v.min_depth,
        max_depth: v.max_depth,
    }
}

fn rect(r: &vk::Rect2D) -> Rect {
    Rect {
        x: r.offset.x,
        y: r.offset.y,
        width: r.extent.width,
        height: r.extent.height,
    }
}

fn blend_equation(e: &vk::ColorBlendEquationEXT) -> BlendEquation {
    BlendEquation {
        src_color_blend_factor: e.src_color_blend_factor,
        dst_color_blend_factor: e.dst_color_blend_factor,
        color_blend_op: e.color_blend_op,
        src_alpha_blend_factor: e.src_alpha_blend_factor,
        dst_alpha_blend_factor: e.dst_alpha_blend_factor,
        alpha_blend_op: e.alpha_blend_op,
    }
}

/// `VkSampleLocationsInfoEXT` with its locations (recorded one structure deeper).
fn sample_locations(c: &vk::CmdSetSampleLocationsEXT) -> SampleLocations {
    let info = c.sample_locations_info.first();
    let locations = c
        .sample_locations_info_nested
        .first()
        .map(|n| n.p_sample_locations.iter().map(|l| (l.x, l.y)).collect())
        .unwrap_or_default();
    SampleLocations {
        per_pixel: info.map_or(0, |i| i.sample_locations_per_pixel),
        grid: info.map_or((1, 1), |i| {
            (
                i.sample_location_grid_size.width,
                i.sample_location_grid_size.height,
            )
        }),
        locations,
    }
}

/// Whether `cmd` is a dynamic-state command this group executes.
pub(super) fn handles(cmd: &GenericCmd) -> bool {
    let mut probe = None;
    set(&mut probe, cmd)
}

/// Applies `cmd` to the encoder's graphics state; `false` when it is not this group's.
pub(super) fn apply(enc: &mut CommandEncoder<'_>, cmd: &GenericCmd) -> bool {
    let mut target = Some(enc);
    set(&mut target, cmd)
}

/// The one mapping from commands to state setters; with no encoder it only answers
/// whether the command is handled.
fn set(enc: &mut Option<&mut CommandEncoder<'_>>, cmd: &GenericCmd) -> bool {
    use GenericCmd as C;
    let mut state = enc.as_mut().map(|e| e.state_mut());
    macro_rules! on {
        ($s:ident => $body:expr) => {{
            if let Some($s) = state.as_mut() {
                $body;
            }
            true
        }};
    }
    match cmd {
        C::CmdSetViewport(c) => on!(s => s.set_viewports(
            c.first_viewport,
            &c.viewports.iter().map(viewport).collect::<Vec<_>>()
        )),
        C::CmdSetViewportWithCount(c) => on!(s => s.set_viewports_with_count(
            &c.viewports.iter().map(viewport).collect::<Vec<_>>()
        )),
        C::CmdSetScissor(c) => on!(s => s.set_scissors(
            c.first_scissor,
            &c.scissors.iter().map(rect).collect::<Vec<_>>()
        )),
        C::CmdSetScissorWithCount(c) => on!(s => s.set_scissors_with_count(
            &c.scissors.iter().map(rect).collect::<Vec<_>>()
        )),
        C::CmdSetLineWidth(c) => on!(s => s.set_line_width(c.line_width)),
        C::CmdSetDepthBias(c) => on!(s => s.set_depth_bias(
            c.depth_bias_constant_factor,
            c.depth_bias_clamp,
            c.depth_bias_slope_factor
        )),
        C::CmdSetBlendConstants(c) => on!(s => s.set_blend_constants(c.blend_constants)),
        C::CmdSetDepthBounds(c) => {
            on!(s => s.set_depth_bounds(c.min_depth_bounds, c.max_depth_bounds))
        }
        C::CmdSetStencilCompareMask(c) => {
            on!(s => s.set_stencil_compare_mask(c.face_mask, c.compare_mask))
        }
        C::CmdSetStencilWriteMask(c) => {
            on!(s => s.set_stencil_write_mask(c.face_mask, c.write_mask))
        }
        C::CmdSetStencilReference(c) => {
            on!(s => s.set_stencil_reference(c.face_mask, c.reference))
        }
        C::CmdSetCullMode(c) => on!(s => s.set_cull_mode(c.cull_mode)),
        C::CmdSetFrontFace(c) => on!(s => s.set_front_face(c.front_face)),
        C::CmdSetDepthTestEnable(c) => on!(s => s.set_depth_test_enable(c.depth_test_enable != 0)),
        C::CmdSetDepthWriteEnable(c) => {
            on!(s => s.set_depth_write_enable(c.depth_write_enable != 0))
        }
        C::CmdSetDepthCompareOp(c) => on!(s => s.set_depth_compare_op(c.depth_compare_op)),
        C::CmdSetDepthBoundsTestEnable(c) => {
            on!(s => s.set_depth_bounds_test_enable(c.depth_bounds_test_enable != 0))
        }
        C::CmdSetStencilTestEnable(c) => {
            on!(s => s.set_stencil_test_enable(c.stencil_test_enable != 0))
        }
        C::CmdSetStencilOp(c) => on!(s => s.set_stencil_op(
            c.face_mask,
            StencilOps {
                fail: c.fail_op,
                pass: c.pass_op,
                depth_fail: c.depth_fail_op,
                compare: c.compare_op,
            }
        )),
        C::CmdSetRasterizerDiscardEnable(c) => {
            on!(s => s.set_rasterizer_discard_enable(c.rasterizer_discard_enable != 0))
        }
        C::CmdSetDepthBiasEnable(c) => {
            on!(s => s.set_depth_bias_enable(c.depth_bias_enable != 0))
        }
        C::CmdSetPrimitiveRestartEnable(c) => {
            on!(s => s.set_primitive_restart_enable(c.primitive_restart_enable != 0))
        }
        C::CmdSetPatchControlPointsEXT(c) => {
            on!(s => s.set_patch_control_points(c.patch_control_points))
        }
        C::CmdSetLogicOpEXT(c) => on!(s => s.set_logic_op(c.logic_op)),
        C::CmdSetDepthClampEnableEXT(c) => {
            on!(s => s.set_depth_clamp_enable(c.depth_clamp_enable != 0))
        }
        C::CmdSetPolygonModeEXT(c) => on!(s => s.set_polygon_mode(c.polygon_mode)),
        C::CmdSetSampleMaskEXT(c) => {
            on!(s => s.set_sample_mask(c.sample_mask.first().copied().unwrap_or(!0)))
        }
        C::CmdSetAlphaToCoverageEnableEXT(c) => {
            on!(s => s.set_alpha_to_coverage_enable(c.alpha_to_coverage_enable != 0))
        }
        C::CmdSetAlphaToOneEnableEXT(c) => {
            on!(s => s.set_alpha_to_one_enable(c.alpha_to_one_enable != 0))
        }
        C::CmdSetLogicOpEnableEXT(c) => {
            on!(s => s.set_logic_op_enable(c.logic_op_enable != 0))
        }
        C::CmdSetColorBlendEnableEXT(c) => on!(s => s.set_blend_enables(
            c.first_attachment,
            &c.color_blend_enables.iter().map(|e| *e != 0).collect::<Vec<_>>()
        )),
        C::CmdSetColorBlendEquationEXT(c) => on!(s => s.set_blend_equations(
            c.first_attachment,
            &c.color_blend_equations.iter().map(blend_equation).collect::<Vec<_>>()
        )),
        C::CmdSetRasterizationStreamEXT(c) => {
            on!(s => s.set_rasterization_stream(c.rasterization_stream))
        }
        C::CmdSetDepthClipEnableEXT(c) => {
            on!(s => s.set_depth_clip_enable(c.depth_clip_enable != 0))
        }
        C::CmdSetLineRasterizationModeEXT(c) => {
            on!(s => s.set_line_mode(c.line_rasterization_mode))
        }
        C::CmdSetLineStippleEnableEXT(c) => {
            on!(s => s.set_line_stipple_enable(c.stippled_line_enable != 0))
        }
        C::CmdSetLineStippleEXT(c) => {
            on!(s => s.set_line_stipple(c.line_stipple_factor, c.line_stipple_pattern))
        }
        C::CmdSetDepthClipNegativeOneToOneEXT(c) => {
            on!(s => s.set_depth_clip_negative_one_to_one(c.negative_one_to_one != 0))
        }
        C::CmdSetProvokingVertexModeEXT(c) => {
            on!(s => s.set_provoking_vertex(c.provoking_vertex_mode))
        }
        // On the stack for the vertex inputs programs set (before nearly every draw,
        // through Zink).
        C::CmdSetVertexInputEXT(c) => on!(s => s.set_vertex_input(
            &c.vertex_binding_descriptions
                .iter()
                .map(|b| VertexBinding {
                    binding: b.binding,
                    stride: b.stride,
                    input_rate: b.input_rate,
                    divisor: b.divisor,
                })
                .collect::<SmallVec<[_; 8]>>(),
            &c.vertex_attribute_descriptions
                .iter()
                .map(|a| VertexAttribute {
                    location: a.location,
                    binding: a.binding,
                    format: a.format,
                    offset: a.offset,
                })
                .collect::<SmallVec<[_; 16]>>()
        )),
        C::CmdSetTessellationDomainOriginEXT(c) => {
            on!(s => s.set_domain_origin(c.domain_origin))
        }
        C::CmdSetColorWriteMaskEXT(c) => {
            on!(s => s.set_write_masks(c.first_attachment, &c.color_write_masks))
        }
        C::CmdSetColorWriteEnableEXT(c) => on!(s => s.set_color_write_enables(
            &c.color_write_enables.iter().map(|e| *e != 0).collect::<Vec<_>>()
        )),
        C::CmdSetRasterizationSamplesEXT(c) => {
            on!(s => s.set_rasterization_samples(c.rasterization_samples))
        }
        C::CmdSetSampleLocationsEnableEXT(c) => {
            on!(s => s.set_sample_locations_enable(c.sample_locations_enable != 0))
        }
        C::CmdSetSampleLocationsEXT(c) => on!(s => s.set_sample_locations(sample_locations(c))),
        C::CmdSetConservativeRasterizationModeEXT(c) => {
            on!(s => s.set_conservative_mode(c.conservative_rasterization_mode))
        }
        C::CmdSetExtraPrimitiveOverestimationSizeEXT(c) => on!(s => s
            .set_extra_primitive_overestimation_size(c.extra_primitive_overestimation_size)),
        C::CmdSetFragmentShadingRateKHR(c) => on!(s => s.set_fragment_shading_rate(
            c.fragment_size
                .first()
                .map_or((1, 1), |e| (e.width, e.height)),
            c.combiner_ops
        )),
        _ => false,
    }
}
