//! Graphics shaders as NVK's command stream sees them: the constant buffers each reads
//! (its `nvk_cbuf_map`) and the methods binding it pushes (`nvk_shader_fill_push`),
//! made from what the SPIR-V says ([`crate::spirv::interface`]).
//!
//! The trace has no compiled code: a shader's program address and register count are
//! placeholders (the address from the shader's identity, 32 registers); the methods
//! and their count are NVK's.

use super::macros::Macro;
use super::state::on_masked_scratch_change;
use super::Scratch;
use crate::chipset::classes::{AMPERE_B, MAXWELL_A, MAXWELL_B, TURING_A, VOLTA_A};
use crate::chipset::Chipset;
use crate::class;
use crate::mme::{Builder, Cmp, Value};
use crate::push::{PushBuffer, SUBC_3D};
use crate::spirv::interface::{DescriptorUse, Interface, Stage, XFB_SKIP};

/// Constant buffers a graphics shader can bind (`max_cbuf_bindings`).
pub const MAX_CBUFS: usize = 16;

/// The five graphics stages, in NVK's constant-buffer group order
/// (`nvk_cbuf_binding_for_stage`: vertex 0 ... fragment 4).
pub const GRAPHICS_STAGES: [Stage; 5] = [
    Stage::Vertex,
    Stage::TessControl,
    Stage::TessEval,
    Stage::Geometry,
    Stage::Fragment,
];

/// A stage's index in [`GRAPHICS_STAGES`] (its constant-buffer group), if graphics.
pub fn group_of(stage: Stage) -> Option<usize> {
    GRAPHICS_STAGES.iter().position(|s| *s == stage)
}

/// The vertex-pipeline stages' groups (vertex, tessellation evaluation, geometry: NVK's
/// `NVK_SHADER_STAGE_VTGM_BITS`), one bit a group.
pub const VTGM_GROUPS: u8 = 0b1101;

/// `SET_PIPELINE_SHADER`'s type for a stage (`mesa_to_nv9097_shader_type`).
pub(super) fn pipeline_type(group: usize) -> u32 {
    group as u32 + 1
}

/// One constant-buffer slot of a shader (NVK's `nvk_cbuf`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Cbuf {
    /// Nothing bound (`NVK_CBUF_TYPE_INVALID`).
    #[default]
    Invalid,
    /// The root descriptor table, always slot 0 (`NVK_CBUF_TYPE_ROOT_DESC`).
    Root,
    /// The shader's own constant data, slot 1 where it has any
    /// (`NVK_CBUF_TYPE_SHADER_DATA`): where is the bound shader's, not the slot's.
    ShaderData,
    /// A descriptor set's descriptors (`NVK_CBUF_TYPE_DESC_SET`).
    DescriptorSet {
        /// The set.
        set: u32,
    },
    /// A dynamic uniform buffer, from the root table's dynamic buffers
    /// (`NVK_CBUF_TYPE_DYNAMIC_UBO`).
    DynamicUniformBuffer {
        /// The set.
        set: u32,
        /// Its index among the set's dynamic buffers.
        index: u32,
    },
    /// A uniform buffer through its descriptor (`NVK_CBUF_TYPE_UBO_DESC`).
    UniformBuffer {
        /// The set.
        set: u32,
        /// Where its descriptor is in the set, in bytes (the binding's placeholder
        /// offset: 16 bytes a binding).
        offset: u32,
    },
}

impl Cbuf {
    /// The descriptor set it reads, if any.
    pub fn set(self) -> Option<u32> {
        match self {
            Cbuf::DescriptorSet { set }
            | Cbuf::UniformBuffer { set, .. }
            | Cbuf::DynamicUniformBuffer { set, .. } => Some(set),
            Cbuf::Invalid | Cbuf::Root | Cbuf::ShaderData => None,
        }
    }
}

/// How a uniform buffer's binding is declared in its set layout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UniformBufferKind {
    /// `UNIFORM_BUFFER` (or unknown: the trace holds no layout): read through its
    /// descriptor.
    #[default]
    Descriptor,
    /// `UNIFORM_BUFFER_DYNAMIC`, `index` among the set's dynamic buffers.
    Dynamic {
        /// Its index among the set's dynamic buffers (`dynamic_buffer_index`).
        index: u32,
    },
    /// `INLINE_UNIFORM_BLOCK`: its bytes are in the set itself.
    Inline,
    /// `UNIFORM_BUFFER` whose descriptors the set layout places from byte `offset` of
    /// the set, `stride` apart (nvk_descriptor_set_binding_layout's `offset` and
    /// `stride`).
    Placed {
        /// The first descriptor's byte in the set.
        offset: u32,
        /// Bytes from one element's descriptor to the next.
        stride: u32,
    },
}

/// A compiled graphics shader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shader {
    /// Its stage's constant-buffer group ([`GRAPHICS_STAGES`] index).
    pub group: usize,
    /// Its constant buffers, slot 0 the root table.
    pub cbufs: Vec<Cbuf>,
    /// Where its constant data is uploaded and how many bytes it binds
    /// (`data_addr`, `data_size`), if it has any.
    pub data: Option<(u64, u32)>,
    /// What binding it pushes (`push_dw`).
    pub push: Vec<u32>,
    /// Where the part pushed only for the last vertex-pipeline stage starts
    /// (`push_dw_count`; the end is `vtgm_push_dw_count`).
    pub vtgm_start: usize,
}

/// Registers a shader is taken to use (the compiled count is not in the trace).
const PLACEHOLDER_GPRS: u32 = 32;
/// Where the model places shader programs.
const SHADER_HEAP: u64 = 0x2_0000_0000;
/// Where the model places shaders' constant data (NVK uploads it beside the code).
const SHADER_DATA_HEAP: u64 = 0x4_0000_0000;
/// Where a graphics shader's header starts in its upload before Turing: Kepler and
/// later want the first instruction 0x80-aligned, after a 0x50-byte header
/// (nvk_shader_upload).
const PRE_TURING_HEADER_OFFSET: u32 = 0x80 - 0x50;

impl Shader {
    /// The shader `interface` describes, for stage `stage`, on `chipset`; `identity`
    /// places its program, `uniform_buffer` says how the pipeline
    /// layout declares a uniform buffer's `(set, binding)`. `None` for compute or an
    /// unknown stage. Mirrors nvk_compile_shader's parts the command stream sees:
    /// build_cbuf_map (nvk_nir_lower_descriptors.c) and nvk_shader_fill_push.
    pub fn new(
        stage: Stage,
        interface: &Interface,
        chipset: Chipset,
        identity: u64,
        uniform_buffer: &dyn Fn(u32, u32) -> UniformBufferKind,
    ) -> Option<Shader> {
        let group = group_of(stage)?;
        let cbufs = cbuf_map(interface, chipset.eng3d, uniform_buffer);
        let program = SHADER_HEAP + (identity & 0xffff_ff00);
        let (push, vtgm_start) = fill_push(stage, group, interface, chipset.eng3d, program);
        // nvk_compile_nir_shader: the constant data padded to the constant-buffer
        // alignment (nvk_min_cbuf_alignment).
        let data = cbufs.contains(&Cbuf::ShaderData).then(|| {
            let align = chipset.min_cbuf_alignment();
            let size = interface.constant_data_bytes.next_multiple_of(align);
            (SHADER_DATA_HEAP + (identity & 0xffff_ff00), size)
        });
        Some(Shader {
            group,
            cbufs,
            data,
            push,
            vtgm_start,
        })
    }

    /// Whether the shader is the kind whose last instance in the vertex pipeline
    /// pushes clip, layer and transform-feedback state (vertex, tessellation
    /// evaluation, geometry: NVK's `NVK_SHADER_STAGE_VTGM_BITS`).
    pub fn is_vtgm(&self) -> bool {
        VTGM_GROUPS >> self.group & 1 != 0
    }
}

/// Mirrors build_cbuf_map (and ubo_deref_to_cbuf): the root table in slot 0, the
/// shader's constant data in slot 1 where it has any, then each uniform buffer and
/// each set whose descriptors the shader loads, up to sixteen: a dynamic uniform
/// buffer from the root table, an inline block from its set, any other
/// through its descriptor — which NVK leaves out before Turing (binding from a
/// descriptor would split the push buffer at every draw): the shader reads those from
/// memory. NVK orders them as compar_cbufs does: the most used first (counted as NIR
/// has the uses after NAK's preprocessing, `spirv::cbuf_uses`), then by type (a set's
/// descriptors, a dynamic uniform buffer, a uniform buffer's descriptor), set, dynamic
/// index and descriptor offset; the sixteen slots take the first fifteen.
fn cbuf_map(
    interface: &Interface,
    eng3d: u16,
    uniform_buffer: &dyn Fn(u32, u32) -> UniformBufferKind,
) -> Vec<Cbuf> {
    if eng3d < MAXWELL_A {
        // Kepler's shaders are codegen's, which may move NVK's constant buffers up a
        // slot: NVK puts the root table in slots 0 and 1 and binds nothing else
        // (nvk_lower_nir without NAK).
        return vec![Cbuf::Root, Cbuf::Root];
    }
    let mut used: Vec<(Cbuf, u32)> = Vec::new();
    for (at, descriptor) in interface.descriptors.iter().enumerate() {
        let loads = interface.descriptor_loads.get(at).copied().unwrap_or(0);
        let cbuf = match *descriptor {
            DescriptorUse::UniformBuffer {
                set,
                binding,
                element,
            } => match uniform_buffer(set, binding) {
                UniformBufferKind::Dynamic { index } => Cbuf::DynamicUniformBuffer {
                    set,
                    index: index.saturating_add(element),
                },
                UniformBufferKind::Inline => Cbuf::DescriptorSet { set },
                UniformBufferKind::Descriptor | UniformBufferKind::Placed { .. }
                    if eng3d < TURING_A =>
                {
                    continue
                }
                // Without the layout, a descriptor's place is taken as 16 bytes a
                // binding, an array's elements 16 bytes apart after it.
                UniformBufferKind::Descriptor => Cbuf::UniformBuffer {
                    set,
                    offset: binding.saturating_add(element).saturating_mul(16),
                },
                UniformBufferKind::Placed { offset, stride } => Cbuf::UniformBuffer {
                    set,
                    offset: offset.saturating_add(element.saturating_mul(stride)),
                },
            },
            DescriptorUse::DescriptorSet { set } => Cbuf::DescriptorSet { set },
        };
        match used.iter_mut().find(|(c, _)| *c == cbuf) {
            Some((_, count)) => *count = count.saturating_add(loads),
            None => used.push((cbuf, loads)),
        }
    }
    // compar_cbufs' key: type (NVK_CBUF_TYPE_DESC_SET, _DYNAMIC_UBO, _UBO_DESC), set,
    // dynamic index, descriptor offset.
    let key = |c: &Cbuf| match *c {
        Cbuf::DescriptorSet { set } => (3, set, 0, 0),
        Cbuf::DynamicUniformBuffer { set, index } => (4, set, index, 0),
        Cbuf::UniformBuffer { set, offset } => (5, set, 0, offset),
        Cbuf::Invalid | Cbuf::Root | Cbuf::ShaderData => (0, 0, 0, 0),
    };
    used.sort_by(|(a, a_loads), (b, b_loads)| {
        b_loads.cmp(a_loads).then_with(|| key(a).cmp(&key(b)))
    });
    let mut cbufs = vec![Cbuf::Root];
    if interface.constant_data_bytes > 0 {
        cbufs.push(Cbuf::ShaderData);
    }
    let room = MAX_CBUFS - cbufs.len();
    cbufs.extend(used.into_iter().map(|(c, _)| c).take(room));
    cbufs
}

/// Mirrors nvk_shader_fill_push: the pipeline slot (enable and type, program address —
/// before Volta its offset in the program region —, register count and binding
/// group), the tessellation
/// parameters of an evaluation shader, a fragment shader's subtiling, early-Z,
/// post-depth coverage (from MAXWELL_B), Z-cull bounds, shading-rate (from TURING_A)
/// and sample-shading state, then — for the vertex-pipeline stages — the layer control,
/// the shading-rate table's source (from AMPERE_B), user clip planes
/// and the four transform-feedback buffers' layout. Returns the words and where the
/// vertex-pipeline part starts.
fn fill_push(
    stage: Stage,
    group: usize,
    f: &Interface,
    eng3d: u16,
    program: u64,
) -> (Vec<u32>, usize) {
    let mut p = PushBuffer::new();
    let ty = pipeline_type(group);
    let slot = class::PIPELINE_SLOT_STRIDE * ty as u16;
    p.immd_or_mthd(
        SUBC_3D,
        class::SET_PIPELINE_SHADER + slot,
        class::pipeline_shader(true, ty),
    );
    if eng3d >= VOLTA_A {
        p.inc(
            SUBC_3D,
            class::SET_PIPELINE_PROGRAM_ADDRESS_A + slot,
            &[(program >> 32) as u32, program as u32],
        );
    } else {
        // Before Volta a program is an offset into the program region
        // (SET_PROGRAM_REGION, the shader heap's base): nvk_shader_upload.
        p.immd_or_mthd(
            SUBC_3D,
            class::SET_PIPELINE_PROGRAM + slot,
            (program - SHADER_HEAP) as u32 + PRE_TURING_HEADER_OFFSET,
        );
    }
    p.inc(
        SUBC_3D,
        class::SET_PIPELINE_REGISTER_COUNT + slot,
        &[PLACEHOLDER_GPRS, group as u32],
    );
    if stage == Stage::TessEval {
        let t = f.tess.unwrap_or_default();
        let params = u32::from(t.domain) | u32::from(t.spacing) << 4 | u32::from(t.prims) << 8;
        p.inc_once(
            SUBC_3D,
            class::call_mme_macro(Macro::SetTessParams.id()),
            &[super::state::val_mask(params, 0x0fff)],
        );
    }
    if stage == Stage::Fragment {
        // Fractions of the register file, pixel output buffer, triangle RAM and quads.
        let knob_a = 0x10 | 0x40 << 8 | 0x16 << 16 | 0x20 << 24;
        p.inc(SUBC_3D, class::SET_SUBTILING_PERF_KNOB_A, &[knob_a, 0x20]);
        p.immd_or_mthd(
            SUBC_3D,
            class::SET_API_MANDATED_EARLY_Z,
            u32::from(f.early_fragment_tests),
        );
        if eng3d >= MAXWELL_B {
            p.immd_or_mthd(
                SUBC_3D,
                class::SET_POST_Z_PS_IMASK,
                u32::from(f.post_depth_coverage),
            );
        }
        let unbounded = u32::from(f.writes_depth);
        p.immd_or_mthd(SUBC_3D, class::SET_ZCULL_BOUNDS, unbounded | unbounded << 4);
        if eng3d >= TURING_A {
            // Sample shading turns the shading rate off: bit 1 clear.
            let value = u32::from(!f.uses_sample_shading) << 1;
            p.inc_once(
                SUBC_3D,
                class::call_mme_macro(Macro::SetShadingRateControl.id()),
                &[super::state::val_mask(value, 1 << 1)],
            );
        }
        // nvk_mme_anti_alias_min_sample_shading: log2(floor(1 / minSampleShading)),
        // 1/mss clamped to 1..16 — 0 for per-sample shading, 4 for none (the
        // pipeline's own minimum is not in the trace).
        let rcp_mss_log2 = if f.uses_sample_shading { 0 } else { 4 };
        p.inc_once(
            SUBC_3D,
            class::call_mme_macro(Macro::SetAntiAlias.id()),
            &[super::state::val_mask(rcp_mss_log2, 0xf)],
        );
    }
    let vtgm_start = p.len();
    if !matches!(stage, Stage::Fragment | Stage::TessControl) {
        // CONTROL 16: the geometry shader (any stage) selects the layer.
        p.immd_or_mthd(
            SUBC_3D,
            class::SET_RT_LAYER,
            u32::from(f.writes_layer) << 16,
        );
        if eng3d >= AMPERE_B {
            // SOURCE_FROM_VPRS_TABLE_INDEX (1) when the shader writes the table index —
            // no SPIR-V the model reads does — else SOURCE_FROM_CONSTANT (2), the
            // constant 0.
            p.immd_or_mthd(
                SUBC_3D,
                class::SET_VARIABLE_PIXEL_RATE_SHADING_TABLE_SELECT,
                2,
            );
        }
        let clip = (1u32 << f.clip_distances) - 1;
        let cull = ((1u32 << f.cull_distances) - 1) << f.clip_distances;
        let planes = (clip | cull) & 0xff;
        p.immd_or_mthd(SUBC_3D, class::SET_USER_CLIP_ENABLE, planes);
        let ops = (0..8)
            .filter(|i| cull >> i & 1 != 0)
            .fold(0, |w, i| w | 1 << (4 * i));
        p.immd_or_mthd(SUBC_3D, class::SET_USER_CLIP_OP, ops);
        for (b, xfb) in f.xfb.iter().enumerate() {
            p.inc(
                SUBC_3D,
                class::SET_STREAM_OUT_CONTROL_STREAM + 16 * b as u16,
                &[u32::from(xfb.stream), u32::from(xfb.attr_count), xfb.stride],
            );
            if xfb.attr_count > 0 {
                // The captured attributes' indices, four to a dword, a dword no output
                // fills skipped.
                let attr = |i: usize| xfb.attr_index.get(i).copied().unwrap_or(XFB_SKIP);
                let words: Vec<u32> = (0..usize::from(xfb.attr_count).div_ceil(4))
                    .map(|w| (0..4).fold(0, |acc, i| acc | u32::from(attr(4 * w + i)) << (8 * i)))
                    .collect();
                p.inc(
                    SUBC_3D,
                    class::SET_STREAM_OUT_LAYOUT_SELECT + 128 * b as u16,
                    &words,
                );
            }
        }
    }
    (p.words().to_vec(), vtgm_start)
}

/// The `SET_SHADING_RATE_CONTROL` macro (Turing): one masked value of the shading-rate
/// control (bit 0 the application's enable, bit 1 clear when sample shading needs
/// every sample). When it changes, stores it and writes all sixteen viewports'
/// `SET_VARIABLE_PIXEL_RATE_SHADING_CONTROL` with both bits' AND. Mirrors
/// nvk_mme_set_shading_rate_control.
pub(crate) fn set_shading_rate_control(b: &mut Builder) {
    // Before Turing NVK builds it empty: there is no shading rate to control.
    if b.arch() != crate::mme::Arch::Turing {
        return;
    }
    let control = on_masked_scratch_change(b, Scratch::ShadingRateControl, |b, control| {
        // As NVK: both bits and their AND in registers of their own, none freed.
        let enable1 = b.merge(Value::Zero, control, 0, 1, 0);
        let enable2 = b.merge(Value::Zero, control, 0, 1, 1);
        let enable = b.and(enable1, enable2);
        let i = b.mov(Value::Zero);
        b.while_(Cmp::Ne, i, Value::Imm(16 * 4), |b| {
            b.mthd_arr(class::SET_VARIABLE_PIXEL_RATE_SHADING_CONTROL, i);
            b.emit(enable);
            b.add_to(i, i, Value::Imm(4));
        });
        for v in [i, enable, enable1, enable2] {
            b.free_reg(v);
        }
    });
    b.free_reg(control);
}
