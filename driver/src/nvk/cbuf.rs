//! Binding graphics shaders and their constant buffers at draw time: NVK's
//! `nvk_cmd_bind_graphics_shader`, `nvk_cmd_flush_gfx_shaders`,
//! `nvk_cmd_dirty_cbufs_for_descriptors` and `nvk_cmd_flush_gfx_cbufs`, with the
//! `BIND_CBUF_DESC` macro.
//!
//! A dynamic uniform buffer binds from the root table's descriptor, as the trace's set
//! updates wrote it. Other uniform-buffer descriptors' contents are not kept: a uniform
//! buffer in a push descriptor set the trace does not describe is taken to be a full
//! 64 KiB buffer at a placeholder address, and one in a bound set is read by the macro
//! from the model's memory (zero, so it binds as empty).

use std::sync::Arc;

use super::encoder::CommandEncoder;
use super::macros::Macro;
use super::meta::MetaFragment;
use super::shader::{
    pipeline_type, Cbuf, Shader, UniformBufferKind, GRAPHICS_STAGES, MAX_CBUFS, VTGM_GROUPS,
};
use crate::chipset::classes::{MAXWELL_A, MAXWELL_B};
use crate::chipset::Chipset;
use crate::class;
use crate::mme::{Arch, Builder, Cmp, Value};
use crate::push::SUBC_3D;
use crate::spirv::interface::{DescriptorUse, Interface, Stage};

/// The largest constant buffer (`NVK_MAX_CBUF_SIZE`).
const MAX_CBUF_SIZE: u32 = 64 * 1024;
/// Bytes a bound descriptor set is taken to hold.
pub(super) const PLACEHOLDER_SET_SIZE: u32 = 4096;
/// Where the model places uniform buffers named by push descriptors.
const PLACEHOLDER_UBO_ADDR: u64 = 0x3_0000_0000;
/// The identities (program placement) of vk_meta's shaders.
const META_VERTEX_SHADER: u64 = 0xffff_0000;
const META_FRAGMENT_SHADER: u64 = 0xffff_0100;
/// Where the identities of vk_meta's fragment shaders after the first begin.
const META_FRAGMENT_SHADERS: u64 = 0xfff0_0000;
/// The geometry shader that selects the layer before MAXWELL_B.
const META_GEOMETRY_SHADER: u64 = 0xffff_0200;

/// One stage's bound constant buffers (NVK's `nvk_cbuf_group`).
#[derive(Clone, Copy, Debug, Default)]
struct CbufGroup {
    cbufs: [Cbuf; MAX_CBUFS],
    dirty: u16,
    /// The slots of `cbufs` that read a descriptor set (bit = slot): what a set bind
    /// looks through.
    reading_sets: u16,
}

/// The graphics shaders bound and the constant buffers they read.
#[derive(Clone, Debug, Default)]
pub struct ShaderState {
    shaders: [Option<Arc<Shader>>; 5],
    /// Stages whose shader changed since the last draw (bit = group).
    dirty: u8,
    groups: [CbufGroup; 5],
    /// The application's shaders while the meta path draws with its own.
    saved: Option<[Option<Arc<Shader>>; 5]>,
    /// vk_meta's vertex (and geometry) shaders, made at the first meta draw.
    meta: Option<[Option<Arc<Shader>>; 5]>,
    /// vk_meta's fragment shaders, one for each kind of pass, made at its first draw.
    meta_fragments: Vec<(MetaFragment, Arc<Shader>)>,
}

impl ShaderState {
    /// The shaders bound, by group.
    pub fn bound(&self) -> [Option<Arc<Shader>>; 5] {
        self.shaders.clone()
    }
}

/// Whether a graphics shader stage flag set names group `g`'s stage.
fn stage_in(stages: u32, g: usize) -> bool {
    stages & (1 << g) != 0
}

impl CommandEncoder<'_> {
    /// Binds the graphics shaders of a pipeline (by group; `None` unbinds the stage).
    /// Mirrors nvk_cmd_bind_graphics_shader for each stage, as Mesa's
    /// vk_graphics_pipeline_cmd_bind calls it: a stage is dirty only when its shader
    /// changed. Nothing is pushed until the next draw.
    pub fn bind_graphics_shaders(&mut self, shaders: &[Option<Arc<Shader>>; 5]) {
        let state = &mut self.shaders;
        for (g, shader) in shaders.iter().enumerate() {
            let same = match (&state.shaders[g], shader) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b) || a == b,
                (None, None) => true,
                _ => false,
            };
            if !same {
                state.shaders[g] = shader.clone();
                state.dirty |= 1 << g;
            }
        }
    }

    /// Marks the constant buffers reading sets `start..end` dirty in the groups of
    /// `stages` (`VkShaderStageFlags`). Mirrors nvk_cmd_dirty_cbufs_for_descriptors.
    pub(super) fn dirty_cbufs_for_descriptors(&mut self, stages: u32, start: u32, end: u32) {
        for (g, group) in self.shaders.groups.iter_mut().enumerate() {
            if !stage_in(stages, g) {
                continue;
            }
            // Only the slots reading a set can read one of these.
            let mut slots = group.reading_sets;
            while slots != 0 {
                let i = slots.trailing_zeros() as usize;
                slots &= slots - 1;
                if group.cbufs[i]
                    .set()
                    .is_some_and(|s| (start..end).contains(&s))
                {
                    group.dirty |= 1 << i;
                }
            }
        }
    }

    /// Binds vk_meta's shaders for a meta draw (a vertex shader that writes the layer,
    /// a fragment shader that reads its source through push descriptor set 0), keeping
    /// the application's to restore. Mirrors nvk_meta_begin saving the shaders and
    /// vk_meta binding its pipeline.
    pub(super) fn bind_meta_shaders(&mut self, fragment: &MetaFragment) {
        if self.shaders.saved.is_none() {
            self.shaders.saved = Some(self.shaders.bound());
        }
        let chipset = self.chipset();
        let mut shaders = self
            .shaders
            .meta
            .get_or_insert_with(|| meta_shaders(chipset))
            .clone();
        let device = self.device();
        let kinds = &mut self.shaders.meta_fragments;
        let fs = match kinds.iter().find(|(k, _)| k == fragment) {
            Some((_, fs)) => Some(fs.clone()),
            None => {
                // The device's first kind of pass keeps the first identity; later ones
                // get their own, the same in every command buffer.
                let identity = match device.meta_fragment_place(fragment) {
                    0 => META_FRAGMENT_SHADER,
                    n => META_FRAGMENT_SHADERS + n as u64 * 0x100,
                };
                let fs = meta_fragment_shader(chipset, identity, fragment);
                if let Some(fs) = &fs {
                    kinds.push((*fragment, fs.clone()));
                }
                fs
            }
        };
        shaders[4] = fs;
        self.bind_graphics_shaders(&shaders);
    }

    /// Rebinds the application's shaders after the meta path, and its set 0. Mirrors
    /// nvk_meta_end restoring them.
    pub(super) fn restore_meta_shaders(&mut self) {
        if let Some(saved) = self.shaders.saved.take() {
            self.bind_graphics_shaders(&saved);
            self.dirty_cbufs_for_descriptors(0x1f, 0, 1);
        }
    }

    /// Marks every graphics stage changed, so the next draw pushes each slot.
    pub(super) fn mark_all_shaders_dirty(&mut self) {
        self.shaders.dirty = (1 << GRAPHICS_STAGES.len()) - 1;
    }

    /// Forgets the bound shaders (after vkCmdExecuteCommands, as
    /// nvk_cmd_invalidate_graphics_state clears them and sets `shaders_dirty`), so
    /// the next draw pushes every slot.
    pub(super) fn forget_shaders(&mut self) {
        self.shaders = ShaderState::default();
        self.mark_all_shaders_dirty();
    }

    /// Pushes the shaders bound since the last draw. Mirrors nvk_cmd_flush_gfx_shaders:
    /// each changed stage's constant-buffer slots that differ from the group's become
    /// dirty; each changed stage's pipeline slot is pushed (the shader's words, or the
    /// slot disabled); when a vertex-pipeline stage changed, the last bound one's
    /// layer, clip and transform-feedback words follow.
    pub(super) fn flush_gfx_shaders(&mut self) {
        let dirty = std::mem::take(&mut self.shaders.dirty);
        if dirty == 0 {
            return;
        }
        for g in 0..GRAPHICS_STAGES.len() {
            if dirty & (1 << g) == 0 {
                continue;
            }
            let shaders = &mut self.shaders;
            match shaders.shaders[g].clone() {
                None => {
                    let ty = pipeline_type(g);
                    let slot = class::PIPELINE_SLOT_STRIDE * ty as u16;
                    self.push.immd_or_mthd(
                        SUBC_3D,
                        class::SET_PIPELINE_SHADER + slot,
                        class::pipeline_shader(false, ty),
                    );
                }
                Some(shader) => {
                    let group = &mut shaders.groups[g];
                    for (i, cbuf) in shader.cbufs.iter().enumerate() {
                        if group.cbufs[i] != *cbuf {
                            group.cbufs[i] = *cbuf;
                            group.dirty |= 1 << i;
                            let bit = 1 << i;
                            match cbuf.set() {
                                Some(_) => group.reading_sets |= bit,
                                None => group.reading_sets &= !bit,
                            }
                        }
                    }
                    self.push.extend(&shader.push[..shader.vtgm_start]);
                }
            }
        }
        if dirty & VTGM_GROUPS != 0 {
            let last = self.shaders.shaders.iter().flatten().rfind(|s| s.is_vtgm());
            if let Some(last) = last.cloned() {
                self.push.extend(&last.push[last.vtgm_start..]);
            }
        }
    }

    /// Rebinds the dirty constant buffers the bound shaders read. Mirrors
    /// nvk_cmd_flush_gfx_cbufs: per group, each dirty slot the shader uses (the root
    /// table excepted) is bound from an address the CPU knows — a set's, or a uniform
    /// buffer's in a push set — with `SET_CONSTANT_BUFFER_SELECTOR_A..C` and
    /// `BIND_GROUP_CONSTANT_BUFFER`, else from its descriptor in memory through the
    /// `BIND_CBUF_DESC` macro; if any was bound, `SELECT_CB0` points the selector back
    /// at the root table.
    pub(super) fn flush_gfx_cbufs(&mut self) {
        let mut bound_any = false;
        for g in 0..GRAPHICS_STAGES.len() {
            let Some(shader) = &self.shaders.shaders[g] else {
                continue;
            };
            let data = shader.data;
            let used = (1u32 << shader.cbufs.len()) - 1;
            let rebind = u32::from(self.shaders.groups[g].dirty) & used;
            if rebind == 0 {
                continue;
            }
            for c in 0..MAX_CBUFS {
                if rebind & (1 << c) == 0 {
                    continue;
                }
                let cbuf = self.shaders.groups[g].cbufs[c];
                if cbuf == Cbuf::Root {
                    continue;
                }
                bound_any = true;
                let addr = match cbuf {
                    // The bound shader's own data (nvk_cmd_buffer_get_cbuf_addr).
                    Cbuf::ShaderData => Some(data.unwrap_or((0, 0))),
                    _ => self.cbuf_addr(cbuf),
                };
                match addr {
                    Some((addr, size)) => {
                        let size = size.min(MAX_CBUF_SIZE);
                        if size > 0 {
                            self.push.inc(
                                SUBC_3D,
                                class::SET_CONSTANT_BUFFER_SELECTOR_A,
                                &[size, (addr >> 32) as u32, addr as u32],
                            );
                        }
                        self.push.immd_or_mthd(
                            SUBC_3D,
                            class::BIND_GROUP_CONSTANT_BUFFER + 32 * g as u16,
                            u32::from(size > 0) | (c as u32) << 4,
                        );
                    }
                    None => {
                        let group_slot = g as u32 | (c as u32) << 4;
                        let call = class::call_mme_macro(Macro::BindCbufDesc.id());
                        if self.device_arch() == Arch::Turing {
                            let desc = self.cbuf_descriptor_addr(cbuf);
                            self.push.inc_once(
                                SUBC_3D,
                                call,
                                &[group_slot, (desc >> 32) as u32, desc as u32],
                            );
                        } else {
                            // The descriptor's three dwords follow from memory
                            // (nvk_cmd_buffer_push_indirect); the model never writes
                            // descriptors, so they are zero as its memory holds them.
                            // (Unused: NVK maps no uniform buffer before Turing.)
                            self.push.inc_once(SUBC_3D, call, &[group_slot, 0, 0, 0]);
                        }
                    }
                }
            }
            self.shaders.groups[g].dirty &= !(rebind as u16);
        }
        if bound_any {
            self.push
                .inc_once(SUBC_3D, class::call_mme_macro(Macro::SelectCb0.id()), &[0]);
        }
    }

    /// A constant buffer's address and size when the CPU knows them. Mirrors
    /// nvk_cmd_buffer_get_cbuf_addr.
    fn cbuf_addr(&self, cbuf: Cbuf) -> Option<(u64, u32)> {
        match cbuf {
            // A shader's data is where the shader bound in the slot's group has it:
            // flush_gfx_cbufs asks the shader.
            Cbuf::Invalid | Cbuf::Root | Cbuf::ShaderData => Some((0, 0)),
            Cbuf::DescriptorSet { set } => {
                let (addr, push) = self.descriptor_set(set);
                let size = match (addr, push) {
                    (0, _) => 0,
                    (_, true) => super::descriptors::PUSH_DESCRIPTOR_SET_SIZE as u32,
                    (_, false) => self.descriptor_set_size(set),
                };
                Some((addr, size))
            }
            Cbuf::DynamicUniformBuffer { set, index } => {
                // The root table's dynamic buffer (nvk_ubo_descriptor_addr of
                // `root.dynamic_buffers` at the set's start and the buffer's index).
                let slot = self.dynamic_buffer_start(set) + index as usize;
                if let Some(descriptor) = self.dynamic_buffer(slot) {
                    return Some(
                        descriptor.uniform_address_range(self.device_uses_bindless_cbuf()),
                    );
                }
                // Bound without the layouts to know it: a placeholder address and the
                // largest size once its set is.
                let (addr, _) = self.descriptor_set(set);
                let ubo = PLACEHOLDER_UBO_ADDR + (u64::from(set) << 24) + (u64::from(index) << 16);
                Some(if addr == 0 {
                    (0, 0)
                } else {
                    (ubo, MAX_CBUF_SIZE)
                })
            }
            Cbuf::UniformBuffer { set, offset } => {
                let (_, push) = self.descriptor_set(set);
                if !push {
                    return None;
                }
                // The descriptor in NVK's CPU copy of the push set: the buffer's
                // address and its range in 16-byte units (nvk_ubo_descriptor_addr). An
                // address the hardware cannot bind directly goes through the macro.
                let align = self.device_min_cbuf_alignment();
                match self.push_ubo(set, offset) {
                    Some((addr, range)) if addr % u64::from(align) == 0 => {
                        let size = range.div_ceil(16).saturating_mul(16);
                        Some((addr, size.div_ceil(align).saturating_mul(align)))
                    }
                    Some(_) => None,
                    None => {
                        let addr =
                            PLACEHOLDER_UBO_ADDR + (u64::from(set) << 24) + u64::from(offset);
                        Some((addr & !0xff, MAX_CBUF_SIZE))
                    }
                }
            }
        }
    }

    /// Where a uniform buffer's descriptor is in its bound set. Mirrors
    /// nvk_cmd_buffer_get_cbuf_descriptor_addr.
    fn cbuf_descriptor_addr(&self, cbuf: Cbuf) -> u64 {
        match cbuf {
            Cbuf::UniformBuffer { set, offset } => {
                self.descriptor_set(set).0.wrapping_add(u64::from(offset))
            }
            _ => 0,
        }
    }
}

/// vk_meta's shaders, as NVK compiles them for its meta draws: a vertex shader that
/// writes the layer — before MAXWELL_B a geometry shader writes it instead
/// (`use_gs_for_layer`: the vertex pipeline cannot select a layer there); each kind of
/// pass brings its own fragment shader ([`meta_fragment_shader`]). Mirrors vk_meta's
/// create_rect_list_pipeline.
fn meta_shaders(chipset: Chipset) -> [Option<Arc<Shader>>; 5] {
    let use_gs_for_layer = chipset.eng3d < MAXWELL_B;
    let vertex = Interface {
        writes_layer: !use_gs_for_layer,
        ..Interface::default()
    };
    let geometry = Interface {
        writes_layer: true,
        ..Interface::default()
    };
    let declared = |_, _| UniformBufferKind::Descriptor;
    let shader = |stage, interface: &Interface, identity| {
        Shader::new(stage, interface, chipset, identity, &declared).map(Arc::new)
    };
    [
        shader(Stage::Vertex, &vertex, META_VERTEX_SHADER),
        None,
        None,
        use_gs_for_layer
            .then(|| shader(Stage::Geometry, &geometry, META_GEOMETRY_SHADER))
            .flatten(),
        None,
    ]
}

/// A vk_meta fragment shader of the kind `key` with `identity`: it reads its source
/// through push descriptor set 0, and writes depth where its pass has the depth
/// aspect (build_blit_shader stores `FRAG_RESULT_DEPTH`).
fn meta_fragment_shader(
    chipset: Chipset,
    identity: u64,
    key: &MetaFragment,
) -> Option<Arc<Shader>> {
    let fragment = Interface {
        descriptors: vec![DescriptorUse::DescriptorSet { set: 0 }],
        // Kepler's codegen path (nvk_cg_compile_nir) copies NIR's workgroup size into
        // the shader info's compute member, which shares its first byte with the
        // fragment member's `writes_depth`: an internal shader's size is 1x1x1
        // (nir_builder_init_simple_shader), so NVK takes vk_meta's fragment shader
        // as writing depth there, whatever it writes.
        writes_depth: chipset.eng3d < MAXWELL_A || key.aspects & 0x2 != 0,
        ..Interface::default()
    };
    let declared = |_, _| UniformBufferKind::Descriptor;
    Shader::new(Stage::Fragment, &fragment, chipset, identity, &declared).map(Arc::new)
}

/// The `BIND_CBUF_DESC` macro: a group and slot (`group | slot << 4`), then a uniform
/// buffer descriptor — on Turing read from the address that follows (two dwords, the
/// bindless form: address >> 4 in the low 45 bits, size >> 4 above), before Turing
/// pushed as three dwords (address low, high, size). Binds it to the slot, valid when
/// its size is not zero (clamped to 64 KiB). Mirrors nvk_mme_bind_cbuf_desc.
pub(crate) fn bind_cbuf_desc(b: &mut Builder) {
    let group_slot = b.load();
    let (addr_lo, addr_hi, size) = if b.arch() == Arch::Turing {
        let hi = b.load();
        let lo = b.load();
        // NVK keeps the address's registers to the end.
        b.read_fifoed(hi, lo, Value::Imm(2));
        let desc_lo = b.load();
        let desc_hi = b.load();
        let addr_lo = b.merge(Value::Zero, desc_lo, 4, 28, 0);
        let addr_hi = b.merge(Value::Zero, desc_lo, 0, 4, 28);
        b.merge_to(addr_hi, addr_hi, desc_hi, 4, 13, 0);
        let size = b.merge(Value::Zero, desc_hi, 4, 19, 13);
        b.free_reg(desc_hi);
        b.free_reg(desc_lo);
        (addr_lo, addr_hi, size)
    } else {
        let addr_lo = b.load();
        let addr_hi = b.load();
        let size = b.load();
        (addr_lo, addr_hi, size)
    };
    // Written on both paths below.
    let cb = b.alloc_reg();
    b.if_(Cmp::Eq, size, Value::Zero, |b| {
        b.merge_to(cb, Value::Zero, group_slot, 4, 5, 4);
    });
    b.if_(Cmp::Ne, size, Value::Zero, |b| {
        let large = b.and(size, Value::Imm(!(MAX_CBUF_SIZE - 1)));
        // NVK never frees `large`: its register stays taken.
        b.if_(Cmp::Ne, large, Value::Zero, |b| {
            b.mov_to(size, Value::Imm(MAX_CBUF_SIZE));
        });
        b.mthd(class::SET_CONSTANT_BUFFER_SELECTOR_A);
        b.emit(size);
        b.emit(addr_hi);
        b.emit(addr_lo);
        b.merge_to(cb, Value::Imm(1), group_slot, 4, 5, 4);
    });
    b.free_reg(addr_hi);
    b.free_reg(addr_lo);
    b.free_reg(size);
    // BIND_GROUP_CONSTANT_BUFFER's groups are eight dwords apart.
    let group = b.merge(Value::Zero, group_slot, 3, 4, 0);
    b.free_reg(group_slot);
    b.mthd_arr(class::BIND_GROUP_CONSTANT_BUFFER, group);
    b.emit(cb);
    b.free_reg(group);
    b.free_reg(cb);
}
