//! NVK 25.0.7's graphics meta path (`nvk_cmd_meta.c` with Mesa's vk_meta of the same
//! release): image blits and resolves drawn with internal shaders. The bracket
//! (`nvk_meta_begin`, `nvk_meta_end`) forces rendering on and statistics off, and
//! saves and restores the application's state; between them each pass is vk_meta's
//! `do_blit`: a push descriptor set 0 naming the source, a rendering of the
//! destination, vk_meta's pipeline, its push constants (where in the source each
//! destination pixel reads) and `vk_meta_draw_volume`'s six vertices uploaded into the
//! command buffer and drawn once per layer.

use super::descriptors::SavedDescriptors;
use super::encoder::{CommandEncoder, Recorded};
use super::image::ImageType;
use super::rendering::RenderingInfo;
use super::state::{
    DynamicState, DynamicStates, Faces, GraphicsState, PipelineGroups, Rect, StencilOps,
    VertexAttribute, VertexBinding, Viewport,
};
use crate::class;
use crate::push::SUBC_3D;

/// The pipeline id the model gives vk_meta's internal pipelines.
const META_PIPELINE: u64 = u64::MAX - 1;
/// `VK_DYNAMIC_STATE_VIEWPORT` and `VK_DYNAMIC_STATE_SCISSOR`: what vk_meta's
/// pipelines leave dynamic.
const META_DYNAMIC_STATES: [u32; 2] = [0, 1];
/// `VK_DYNAMIC_STATE_STENCIL_WRITE_MASK`, dynamic too where stencil is written by
/// discards.
const DYNAMIC_STENCIL_WRITE_MASK: u32 = 7;
/// `SET_RENDER_ENABLE_OVERRIDE`'s `MODE_ALWAYS_RENDER` and `MODE_USE_RENDER_ENABLE`.
const ALWAYS_RENDER: u32 = 1;
const USE_RENDER_ENABLE: u32 = 0;
/// `SET_STATISTICS_COUNTER` with every counter enabled (nvk_meta_end).
const ALL_STATISTICS: u32 = 0x7fff;
/// `vk_meta_draw_volume`'s vertex buffer: a rectangle as two triangles of `vec4`s.
const RECT_VERTICES: u32 = 6;
const VERTEX_BYTES: u32 = 16;
/// `VK_FORMAT_R32G32B32A32_UINT`, the vertices' format (the layer rides in a
/// component as an integer).
const VERTEX_FORMAT: u32 = 107;
/// `VK_PRIMITIVE_TOPOLOGY_META_RECT_LIST_MESA`, vk_meta's pipelines' topology: drawn as
/// triangles (vk_to_nv9097_primitive_topology), but another value than the
/// application's triangle list, so binding the pipeline changes it.
const META_RECT_LIST: u32 = 11;
/// `VK_COMPARE_OP_ALWAYS` and `VK_STENCIL_OP_REPLACE`.
const COMPARE_ALWAYS: u32 = 7;
const STENCIL_REPLACE: u32 = 2;
/// Both stencil faces.
const FRONT_AND_BACK: u32 = 3;

/// vk_meta's blit push constants (`struct vk_meta_blit_push_data`): where a
/// destination pixel reads in the source, in normalized coordinates.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BlitPush {
    /// X and Y's offsets and scales.
    pub xy: [f32; 4],
    /// A 3D source's Z offset and scale.
    pub z: [f32; 2],
    /// The destination's first layer less the source's.
    pub arr_delta: i32,
}

impl BlitPush {
    /// The destination range `dst0..dst1` (ordered) and the offset and scale that map
    /// it onto `src0..src1` of a source level `src_level_size` across. Mirrors
    /// vk_meta's compute_off_scale (a reversed destination flips the source).
    pub fn off_scale(src_level_size: u32, src: [u32; 2], dst: [u32; 2]) -> ([u32; 2], f32, f32) {
        let (dst, src) = if dst[0] < dst[1] {
            (dst, src)
        } else {
            ([dst[1], dst[0]], [src[1], src[0]])
        };
        let size = f64::from(src_level_size.max(1));
        let src_region = f64::from(src[1]) - f64::from(src[0]);
        let dst_region = (f64::from(dst[1]) - f64::from(dst[0])).max(1.0);
        let src_offset = f64::from(src[0]) / size;
        let scale = src_region / (size * dst_region);
        let offset = src_offset - f64::from(dst[0]) * scale;
        (dst, offset as f32, scale as f32)
    }

    /// A resolve's push constants (vk_meta_resolve_image): the source read at the
    /// destination pixel moved by the regions' offset, unscaled (the shader fetches
    /// texels).
    pub fn resolve(src_offset: [i32; 2], dst_offset: [i32; 2]) -> BlitPush {
        BlitPush {
            xy: [
                (src_offset[0] - dst_offset[0]) as f32,
                (src_offset[1] - dst_offset[1]) as f32,
                1.0,
                1.0,
            ],
            ..BlitPush::default()
        }
    }

    /// The eight words CmdPushConstants writes, with `stencil_bit`.
    pub fn words(&self, stencil_bit: u32) -> [u32; 8] {
        [
            self.xy[0].to_bits(),
            self.xy[1].to_bits(),
            self.xy[2].to_bits(),
            self.xy[3].to_bits(),
            self.z[0].to_bits(),
            self.z[1].to_bits(),
            self.arr_delta as u32,
            stencil_bit,
        ]
    }
}

/// `VK_RESOLVE_MODE_SAMPLE_ZERO_BIT`.
pub const RESOLVE_SAMPLE_ZERO: u32 = 0x1;
/// `VK_RESOLVE_MODE_AVERAGE_BIT`.
pub const RESOLVE_AVERAGE: u32 = 0x2;

/// The resolve mode where the API names none (vk_meta_resolve_image2 for
/// vkCmdResolveImage, vk_render_pass for a subpass's resolve attachments): a float or
/// normalized colour averaged, anything else (integers, depth, stencil) its first sample.
pub fn implied_resolve_mode(float_color: bool) -> u32 {
    if float_color {
        RESOLVE_AVERAGE
    } else {
        RESOLVE_SAMPLE_ZERO
    }
}

/// What vk_meta builds a pass's fragment shader from: the members of `struct
/// vk_meta_blit_key` that `build_blit_shader` reads. Each distinct one is a shader of
/// its own in NVK (its NIR differs, and so its cache key); the model gives each its
/// own identity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct MetaFragment {
    /// The colour or depth resolve mode; 0 for a blit (it samples).
    pub resolve_mode: u32,
    /// The stencil resolve mode; 0 for a blit.
    pub stencil_resolve_mode: u32,
    /// The source's samples (what a resolve averages over).
    pub src_samples: u32,
    /// The source's sampler dimension (`vk_image_sampler_dim`).
    pub dim: SamplerDim,
    /// The aspects the pass writes.
    pub aspects: u32,
    /// The colour output's type, from the destination format.
    pub color_type: NumericType,
    /// Stencil written bit by bit through discards.
    pub stencil_as_discard: bool,
}

/// A source image's `glsl_sampler_dim` as vk_meta takes it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SamplerDim {
    /// A 1D image: vk_meta's blit samples it as a 1D array, a shader of its own.
    Dim1D,
    /// A single-sampled 2D image.
    #[default]
    Dim2D,
    /// A multisampled 2D image.
    Multisampled,
    /// A 3D image.
    Dim3D,
}

impl SamplerDim {
    /// The dimension of a source image (vk_image_sampler_dim).
    pub fn of(image: &super::image::Image) -> SamplerDim {
        match image.image_type {
            ImageType::D1 => SamplerDim::Dim1D,
            ImageType::D3 => SamplerDim::Dim3D,
            ImageType::D2 if image.samples > 1 => SamplerDim::Multisampled,
            ImageType::D2 => SamplerDim::Dim2D,
        }
    }
}

/// Whether a colour format's values are floats or integers (`vk_format_is_sint`,
/// `vk_format_is_uint`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum NumericType {
    /// Normalized, scaled or floating point.
    #[default]
    Float,
    /// Signed integers.
    Sint,
    /// Unsigned integers.
    Uint,
}

impl NumericType {
    /// The type of `VkFormat` `format` (the core formats' `_UINT` and `_SINT`).
    pub fn of_vk(format: u32) -> NumericType {
        const UINT: [u32; 21] = [
            13, 20, 27, 34, 41, 48, 55, 62, 68, 74, 81, 88, 95, 98, 101, 104, 107, 110, 113, 116,
            119,
        ];
        if UINT.contains(&format) {
            NumericType::Uint
        } else if UINT.contains(&format.wrapping_sub(1)) {
            NumericType::Sint
        } else {
            NumericType::Float
        }
    }
}

/// One pass of vk_meta's `do_blit`: the destination's rendering (its area the
/// destination rectangle, its layers up to the last one written), the layers drawn,
/// the push constants, and whether stencil is written by discards (eight draws, a
/// stencil bit each).
#[derive(Clone, Debug)]
pub struct MetaBlit {
    /// The destination's rendering.
    pub rendering: RenderingInfo,
    /// Layers drawn (the draw's instances).
    pub layers: u32,
    /// The push constants.
    pub push: BlitPush,
    /// Depth written (the pass's aspects include depth).
    pub writes_depth: bool,
    /// Stencil written bit by bit through discards (`stencil_as_discard`: the pass
    /// writes stencil alone, as NVK 25.0.7 has no stencil export for vk_meta).
    pub stencil_as_discard: bool,
    /// What its fragment shader is built from.
    pub fragment: MetaFragment,
    /// It is do_blit's first pass, which pushes the source's descriptors: a later
    /// pass of the same call (stencil after depth) draws with those.
    pub first_pass: bool,
}

/// What nvk_meta_begin saves (`struct nvk_meta_save`).
#[derive(Clone, Debug)]
pub(super) struct MetaSave {
    state: GraphicsState,
    descriptors: SavedDescriptors,
    vb0: (u64, u32),
}

/// The state vk_meta's blit pipeline holds, which binding it applies over the
/// application's (Mesa's vk_cmd_set_dynamic_graphics_state): vk_meta_create_graphics_pipeline's
/// defaults (`vk_meta_draw_rects_ia_state`'s rectangle list; `default_rs_info`: fill, no culling, counter-clockwise front faces, no depth
/// bias or clamp, a line width left at 0; one sample; blending off and every component
/// written; no depth clip control, so depth from 0 to 1) with `vk_meta_draw_rects`'
/// vertex input (one `vec4` attribute from binding 0) and get_blit_pipeline's depth and
/// stencil state (written always where the pass writes them; otherwise tests off and a
/// zeroed `VkPipelineDepthStencilStateCreateInfo`, depth bounds 0 to 0).
fn blit_pipeline_state(blit: &MetaBlit) -> DynamicState {
    let mut held = DynamicState {
        topology: META_RECT_LIST,
        line_width: 0.0,
        rasterization_samples: 1,
        depth_bounds: (0.0, 0.0),
        ..DynamicState::default()
    };
    held.vertex_input.bindings = vec![VertexBinding {
        binding: 0,
        stride: VERTEX_BYTES,
        input_rate: 0,
        divisor: 1,
    }];
    held.vertex_input.attributes = vec![VertexAttribute {
        location: 0,
        binding: 0,
        format: VERTEX_FORMAT,
        offset: 0,
    }];
    if blit.writes_depth {
        held.depth_test_enable = true;
        held.depth_write_enable = true;
        held.depth_compare_op = COMPARE_ALWAYS;
    }
    if blit.stencil_as_discard {
        // Front and back alike; the 8-bit masks and reference of ~0.
        let ops = StencilOps {
            fail: 0,
            pass: STENCIL_REPLACE,
            depth_fail: 0,
            compare: COMPARE_ALWAYS,
        };
        held.stencil_test_enable = true;
        held.stencil_ops = Faces {
            front: ops,
            back: ops,
        };
        held.stencil_compare_mask = Faces {
            front: 0xff,
            back: 0xff,
        };
        held.stencil_write_mask = Faces {
            front: 0xff,
            back: 0xff,
        };
        held.stencil_reference = Faces {
            front: 0xff,
            back: 0xff,
        };
    }
    held
}

impl CommandEncoder<'_> {
    /// Mirrors nvk_meta_begin: rendering forced on, statistics off, the application's
    /// dynamic state, shaders, vertex buffer 0, set 0 and push constants saved.
    pub fn meta_begin_gfx(&mut self) -> Recorded {
        let before = self.push.len();
        self.push
            .immd_or_mthd(SUBC_3D, class::SET_RENDER_ENABLE_OVERRIDE, ALWAYS_RENDER);
        self.push
            .immd_or_mthd(SUBC_3D, class::SET_STATISTICS_COUNTER, 0);
        self.meta_saved = Some(Box::new(MetaSave {
            state: self.state_mut().clone(),
            descriptors: self.save_meta_descriptors(),
            vb0: self.vb0,
        }));
        self.recorded(before)
    }

    /// One pass of vk_meta's do_blit. Mirrors it with vk_meta_draw_volume: set 0
    /// pushed in the first pass (the source's descriptors, uploaded at the draw), the destination's
    /// rendering begun, vk_meta's pipeline bound (one `vec4` vertex attribute from
    /// binding 0; depth and stencil written always where the destination has them;
    /// no line width set), the push constants written, the viewport and scissor set
    /// to the destination rectangle, the six vertices uploaded and bound, the draw
    /// made once for each layer (eight times, a stencil bit each, where stencil is
    /// written by discards), the rendering ended.
    pub fn meta_blit(&mut self, blit: &MetaBlit) -> Recorded {
        let before = self.push.len();
        if blit.first_pass {
            self.push_descriptor_set(0);
        }
        let info = &blit.rendering;
        self.begin_rendering(info);
        self.bind_meta_shaders(&blit.fragment);
        let mut dynamic = META_DYNAMIC_STATES.to_vec();
        if blit.stencil_as_discard {
            dynamic.push(DYNAMIC_STENCIL_WRITE_MASK);
        }
        let groups = PipelineGroups {
            tessellation: false,
            rasterization: true,
            depth_stencil: info.depth_stencil.is_some(),
            color_blend: info.colors.iter().any(Option::is_some),
        };
        let area = info.area;
        let held = blit_pipeline_state(blit);
        self.state_mut().bind_internal_pipeline(
            META_PIPELINE,
            &DynamicStates::new(dynamic),
            &held,
            groups,
        );
        let bits: Vec<u32> = if blit.stencil_as_discard {
            (0..8).map(|i| 1 << i).collect()
        } else {
            vec![0]
        };
        for stencil_bit in bits {
            self.push_constants(0, &blit.push.words(stencil_bit));
            if blit.stencil_as_discard {
                self.state_mut()
                    .set_stencil_write_mask(FRONT_AND_BACK, stencil_bit);
            }
            self.meta_draw_volume(area, blit.layers);
        }
        self.end_rendering();
        self.recorded(before)
    }

    /// vk_meta_draw_volume: the viewport and scissor from the origin to the power of
    /// two past the rectangle's far corner (setup_viewport_scissor: vk_meta knows no
    /// render area), its six vertices uploaded and bound as vertex buffer 0, the draw
    /// once a layer.
    fn meta_draw_volume(&mut self, area: super::rendering::RenderArea, layers: u32) {
        // 2^(1 + floor(log2(far - 1))), the far edge at least 1 (util_logbase2(0) = 0).
        let reach = |near: i32, len: u32| {
            let far = (near.max(0) as u32).saturating_add(len).max(1);
            let bits = far - 1;
            let log2 = if bits == 0 {
                0
            } else {
                31 - bits.leading_zeros()
            };
            1u32 << (1 + log2).min(31)
        };
        let (width, height) = (reach(area.x, area.width), reach(area.y, area.height));
        let state = self.state_mut();
        state.set_viewports(
            0,
            &[Viewport {
                x: 0.0,
                y: 0.0,
                width: width as f32,
                height: height as f32,
                min_depth: 0.0,
                max_depth: 1.0,
            }],
        );
        state.set_scissors(
            0,
            &[Rect {
                x: 0,
                y: 0,
                width,
                height,
            }],
        );
        let bytes = RECT_VERTICES * VERTEX_BYTES;
        let addr = self.upload_alloc(u64::from(bytes), 16);
        self.bind_vertex_buffers(0, &[(addr, bytes)]);
        self.draw(RECT_VERTICES, layers.max(1), 0, 0);
    }

    /// Mirrors nvk_meta_end: set 0 as the application had it and every set's first
    /// dynamic buffer written back, its dynamic state restored with every state it had
    /// set dirty again, its shaders bound again, vertex buffer 0 bound again, its push
    /// constants written back, then statistics on and rendering under the render
    /// enable again.
    pub fn meta_end_gfx(&mut self) -> Recorded {
        let before = self.push.len();
        if let Some(saved) = self.meta_saved.take() {
            self.restore_meta_set0(&saved.descriptors);
            let state = self.state_mut();
            *state = saved.state;
            state.invalidate();
            self.restore_meta_shaders();
            self.bind_vertex_buffers(0, &[saved.vb0]);
            self.restore_meta_push_constants(&saved.descriptors);
        }
        self.push
            .immd_or_mthd(SUBC_3D, class::SET_STATISTICS_COUNTER, ALL_STATISTICS);
        self.push.immd_or_mthd(
            SUBC_3D,
            class::SET_RENDER_ENABLE_OVERRIDE,
            USE_RENDER_ENABLE,
        );
        self.recorded(before)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_half_size_blit_reads_two_source_texels_a_destination_pixel() {
        // 64 source texels onto 32 destination pixels: 1/32 of the source a pixel.
        let (dst, off, scale) = BlitPush::off_scale(64, [0, 64], [0, 32]);
        assert_eq!((dst, off, scale), ([0, 32], 0.0, 1.0 / 32.0));
        // A mirrored destination flips the source.
        let (dst, off, scale) = BlitPush::off_scale(64, [0, 64], [32, 0]);
        assert_eq!(dst, [0, 32]);
        assert_eq!((off, scale), (1.0, -1.0 / 32.0));
    }
}
