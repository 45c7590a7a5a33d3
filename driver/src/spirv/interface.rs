//! What compiling an entry point decides that NVK's command stream depends on: the
//! constant buffers the shader reads through (`nvk_nir_lower_descriptors.c`'s
//! `build_cbuf_map`), and the execution modes and built-ins that
//! `nvk_shader_fill_push` turns into methods (tessellation parameters, early fragment
//! tests, depth writes, sample shading, the layer and clip/cull outputs, transform
//! feedback).
//!
//! NVK reads these from NIR after its own passes; the model reads them from the
//! SPIR-V, which names the same things before compilation. Where a compiler would
//! drop what the code never reaches (an unused built-in), the model keeps it.

use std::collections::{HashMap, HashSet};

/// The maps the analysis keeps by id: looked up for every operand of every instruction,
/// so hashed with a seeded multiply-fold hash rather than SipHash (ids come from the
/// trace: the seed is random per process).
type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
/// A set of ids, hashed as [`Map`] is.
type Set<K> = HashSet<K, foldhash::fast::RandomState>;

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{BuiltIn, Decoration, ExecutionMode, ExecutionModel, Op, StorageClass, Word};

use super::{cbuf_uses, id};

/// The stage an entry point runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Vertex shader.
    Vertex,
    /// Tessellation control shader.
    TessControl,
    /// Tessellation evaluation shader.
    TessEval,
    /// Geometry shader.
    Geometry,
    /// Fragment shader.
    Fragment,
    /// Compute shader (or any stage NVK's graphics pipeline does not bind).
    Compute,
}

impl Stage {
    /// The stage of a `VkShaderStageFlagBits` bit, if it is one of the five graphics
    /// stages or compute.
    pub fn from_vk(bit: u32) -> Option<Stage> {
        Some(match bit {
            0x1 => Stage::Vertex,
            0x2 => Stage::TessControl,
            0x4 => Stage::TessEval,
            0x8 => Stage::Geometry,
            0x10 => Stage::Fragment,
            0x20 => Stage::Compute,
            _ => return None,
        })
    }

    fn from_model(model: ExecutionModel) -> Stage {
        match model {
            ExecutionModel::Vertex => Stage::Vertex,
            ExecutionModel::TessellationControl => Stage::TessControl,
            ExecutionModel::TessellationEvaluation => Stage::TessEval,
            ExecutionModel::Geometry => Stage::Geometry,
            ExecutionModel::Fragment => Stage::Fragment,
            _ => Stage::Compute,
        }
    }
}

/// How a shader reaches a descriptor set's resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DescriptorUse {
    /// A uniform buffer at `(set, binding)`, read through constant offsets: NVK binds
    /// it as a constant buffer of its own (`NVK_CBUF_TYPE_UBO_DESC`).
    UniformBuffer {
        /// Descriptor set.
        set: u32,
        /// Binding.
        binding: u32,
        /// The element of an array of uniform buffers (a constant index); 0 for one
        /// buffer. Each element is a constant buffer of its own.
        element: u32,
    },
    /// Textures, images, samplers or storage buffers of `set`: NVK binds the set's
    /// descriptors as a constant buffer to load them from (`NVK_CBUF_TYPE_DESC_SET`).
    DescriptorSet {
        /// Descriptor set.
        set: u32,
    },
}

/// `SET_TESSELLATION_PARAMETERS`' fields as NAK fills them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TessParams {
    /// `NAK_TS_DOMAIN_*`: isolines 0, triangles 1, quads 2.
    pub domain: u8,
    /// `NAK_TS_SPACING_*`: integer 0, fractional odd 1, fractional even 2.
    pub spacing: u8,
    /// `NAK_TS_PRIMS_*`: points 0, lines 1, clockwise triangles 2, counter-clockwise 3.
    pub prims: u8,
}

/// One transform-feedback buffer's layout (NAK's `nak_xfb_info` for buffer `b`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct XfbBuffer {
    /// The vertex stream it captures.
    pub stream: u8,
    /// Dwords per vertex written (the last written dword + 1).
    pub attr_count: u8,
    /// Bytes per vertex.
    pub stride: u32,
    /// The output attribute each dword of a vertex takes (NAK's `attr_index`: the
    /// attribute's address over 4), [`XFB_SKIP`] where no output is captured.
    pub attr_index: Vec<u8>,
}

/// `attr_index`'s value for a dword no output fills (nak_xfb_from_nir's 0xff).
pub const XFB_SKIP: u8 = 0xff;

/// An attribute index as the hardware's byte takes it (one past 0xfe is no attribute).
fn attr_byte(attr: u32) -> u8 {
    u8::try_from(attr).unwrap_or(XFB_SKIP)
}

/// Where an output lives among NAK's attributes: a generic location and component, or
/// a built-in.
#[derive(Clone, Copy)]
enum OutputSlot {
    Generic { location: u32, component: u32 },
    BuiltIn(u32),
}

/// NAK's attribute address over 4 of a built-in output's first component
/// (nak_varying_attr_addr); `None` for one NAK captures nothing of.
fn builtin_attr(b: u32, clip_distances: u32) -> Option<u32> {
    const POSITION: u32 = BuiltIn::Position as u32;
    const POINT_SIZE: u32 = BuiltIn::PointSize as u32;
    const CLIP: u32 = BuiltIn::ClipDistance as u32;
    const CULL: u32 = BuiltIn::CullDistance as u32;
    const LAYER: u32 = BuiltIn::Layer as u32;
    const VIEWPORT: u32 = BuiltIn::ViewportIndex as u32;
    const PRIMITIVE: u32 = BuiltIn::PrimitiveId as u32;
    match b {
        POSITION => Some(0x70 / 4),
        POINT_SIZE => Some(0x6c / 4),
        // NIR keeps clip and cull distances in one compact array, the culls after the
        // clips, from VARYING_SLOT_CLIP_DIST0.
        CLIP => Some(0x2c0 / 4),
        CULL => Some(0x2c0 / 4 + clip_distances),
        LAYER => Some(0x64 / 4),
        VIEWPORT => Some(0x68 / 4),
        PRIMITIVE => Some(0x60 / 4),
        _ => None,
    }
}

/// What one entry point's compile decides for the command stream.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Interface {
    /// The descriptors it reads, in first-use order, each once.
    pub descriptors: Vec<DescriptorUse>,
    /// How many uses NVK counts of each of [`descriptors`](Self::descriptors) (loads of
    /// its uniform buffer, texture instructions naming its set's descriptors, ... as NIR
    /// has them once NAK has unrolled and merged them): NVK orders constant buffers by
    /// that count (build_cbuf_map's use count).
    pub descriptor_loads: Vec<u32>,
    /// Tessellation parameters from its execution modes (a control or evaluation
    /// shader; `None` when it sets none).
    pub tess: Option<TessParams>,
    /// Whether it writes `Layer`.
    pub writes_layer: bool,
    /// Clip distances written (planes `0..clip`).
    pub clip_distances: u8,
    /// Cull distances written (planes after the clip distances).
    pub cull_distances: u8,
    /// Transform-feedback buffers.
    pub xfb: [XfbBuffer; 4],
    /// `EarlyFragmentTests`.
    pub early_fragment_tests: bool,
    /// `PostDepthCoverage`.
    pub post_depth_coverage: bool,
    /// Whether it writes `FragDepth`.
    pub writes_depth: bool,
    /// Whether it reads `SampleId` or `SamplePosition`, or has `Sample` inputs.
    pub uses_sample_shading: bool,
    /// A compute shader's workgroup size: the `WorkgroupSize` built-in constant, else
    /// the `LocalSize` or `LocalSizeId` mode (constants at their default values).
    pub workgroup_size: Option<[u32; 3]>,
    /// Bytes of constant data NIR moves its constant tables into
    /// (`nir->constant_data_size`, [`super::large_constants`]): 0 for none.
    pub constant_data_bytes: u32,
}

/// Every entry point of `module`: its name, stage and [`Interface`].
pub fn interfaces(module: &Module) -> Vec<(String, Stage, Interface)> {
    let facts = ModuleFacts::new(module);
    module
        .entry_points
        .iter()
        .filter_map(|e| {
            let Some(Operand::ExecutionModel(model)) = e.operands.first() else {
                return None;
            };
            let function = id(e, 1)?;
            let Some(Operand::LiteralString(name)) = e.operands.get(2) else {
                return None;
            };
            let stage = Stage::from_model(*model);
            Some((
                name.clone(),
                stage,
                facts.interface(module, stage, function),
            ))
        })
        .collect()
}

/// One decoration of a target: `(member or None, decoration, first literal)`.
type Decorated = (Option<u32>, Decoration, Option<u32>);

/// What the module says once, for every entry point.
struct ModuleFacts<'m> {
    /// Decorations by target.
    decorations: Map<Word, Vec<Decorated>>,
    /// Type instructions by id.
    types: Map<Word, &'m Instruction>,
    /// Integer constants by id.
    constants: Map<Word, u32>,
    /// Global variables: id → (storage class, pointee type).
    variables: Map<Word, (StorageClass, Word)>,
    /// Variables some function instruction refers to.
    used: Set<Word>,
    /// Variables some function refers to other than as an access chain's base: used
    /// whole.
    used_whole: Set<Word>,
    /// Uses of each global variable (by array element, for an array of uniform
    /// buffers) as NVK counts them for its constant buffers, in NIR after NAK's loop
    /// unrolling and CSE ([`cbuf_uses`]).
    loads: Map<(Word, u32), u32>,
    /// `(variable, index position, constant index)` of every access chain based on a
    /// variable: which members (or, past an array, which members of its elements) a
    /// function reaches.
    chain_indices: Set<(Word, usize, u32)>,
    /// The bytes of constant data NIR makes of the module's constant tables
    /// ([`super::large_constants`]).
    constant_data_bytes: u32,
}

impl<'m> ModuleFacts<'m> {
    fn new(module: &'m Module) -> Self {
        let mut decorations: Map<Word, Vec<_>> = Map::default();
        for a in &module.annotations {
            let (target, member, at) = match a.class.opcode {
                Op::Decorate => (id(a, 0), None, 1),
                Op::MemberDecorate => (
                    id(a, 0),
                    match a.operands.get(1) {
                        Some(Operand::LiteralBit32(m)) => Some(*m),
                        _ => None,
                    },
                    2,
                ),
                _ => continue,
            };
            let (Some(target), Some(Operand::Decoration(d))) = (target, a.operands.get(at)) else {
                continue;
            };
            let literal = match a.operands.get(at + 1) {
                Some(Operand::LiteralBit32(v)) => Some(*v),
                Some(Operand::BuiltIn(b)) => Some(*b as u32),
                _ => None,
            };
            decorations
                .entry(target)
                .or_default()
                .push((member, *d, literal));
        }
        let mut types: Map<Word, &Instruction> = Map::default();
        let mut constants = Map::default();
        let mut variables = Map::default();
        for i in &module.types_global_values {
            let Some(result) = i.result_id else { continue };
            match i.class.opcode {
                Op::Constant | Op::SpecConstant => {
                    if let Some(Operand::LiteralBit32(v)) = i.operands.first() {
                        constants.insert(result, *v);
                    }
                }
                Op::Variable => {
                    // Its pointer type came before it (SPIR-V declares before use).
                    let pointee = i
                        .result_type
                        .and_then(|t| types.get(&t))
                        .filter(|t: &&&Instruction| t.class.opcode == Op::TypePointer)
                        .and_then(|t| id(t, 1))
                        .unwrap_or(0);
                    if let Some(Operand::StorageClass(class)) = i.operands.first() {
                        variables.insert(result, (*class, pointee));
                    }
                }
                _ => {
                    types.insert(result, i);
                }
            }
        }
        let used = module
            .functions
            .iter()
            .flat_map(|f| f.blocks.iter())
            .flat_map(|b| b.instructions.iter())
            .flat_map(|i| i.operands.iter())
            .filter_map(|o| match o {
                Operand::IdRef(r) if variables.contains_key(r) => Some(*r),
                _ => None,
            })
            .collect();
        let mut used_whole = Set::default();
        let mut chain_indices = Set::default();
        for i in module
            .functions
            .iter()
            .flat_map(|f| f.blocks.iter())
            .flat_map(|b| b.instructions.iter())
        {
            let is_chain = matches!(i.class.opcode, Op::AccessChain | Op::InBoundsAccessChain);
            for (n, o) in i.operands.iter().enumerate() {
                let Operand::IdRef(r) = o else { continue };
                if !variables.contains_key(r) {
                    continue;
                }
                if is_chain && n == 0 {
                    for (position, index) in i.operands.iter().skip(1).take(2).enumerate() {
                        if let Some(v) = id_operand(index).and_then(|c| constants.get(&c)) {
                            chain_indices.insert((*r, position, *v));
                        }
                    }
                } else {
                    used_whole.insert(*r);
                }
            }
        }
        let mut facts = ModuleFacts {
            decorations,
            types,
            constants,
            variables,
            used,
            used_whole,
            loads: Map::default(),
            chain_indices,
            constant_data_bytes: 0,
        };
        let is_uniform_buffer = |var: Word| facts.is_uniform_buffer(var);
        let declarations = cbuf_uses::Declarations {
            types: &facts.types,
            constants: &facts.constants,
            variables: &facts.variables,
            is_uniform_buffer: &is_uniform_buffer,
        };
        let loads = cbuf_uses::cbuf_uses(module, &declarations);
        let constant_data_bytes = super::large_constants::constant_data_bytes(module, &|f| {
            cbuf_uses::loop_shapes(f, &declarations)
                .into_iter()
                .filter(|l| l.unrolled.is_none())
                .map(|l| l.body)
                .collect()
        });
        facts.loads = loads;
        facts.constant_data_bytes = constant_data_bytes;
        facts
    }

    fn decoration(&self, target: Word, member: Option<u32>, d: Decoration) -> Option<u32> {
        self.decorations
            .get(&target)?
            .iter()
            .find(|(m, dd, _)| *m == member && *dd == d)
            .map(|(_, _, v)| v.unwrap_or(0))
    }

    /// The uses NVK counts of `var`, over all its elements.
    fn loads_of(&self, var: Word) -> u32 {
        self.loads
            .iter()
            .filter(|((v, _), _)| *v == var)
            .fold(0u32, |n, (_, loads)| n.saturating_add(*loads))
    }

    /// Whether `var` is a uniform buffer: a `Block` in `Uniform` storage.
    fn is_uniform_buffer(&self, var: Word) -> bool {
        self.variables.get(&var).is_some_and(|(class, pointee)| {
            *class == StorageClass::Uniform
                && self.has_decoration(self.element_type(*pointee), Decoration::Block)
        })
    }

    fn has_decoration(&self, target: Word, d: Decoration) -> bool {
        self.decorations
            .get(&target)
            .is_some_and(|list| list.iter().any(|(m, dd, _)| m.is_none() && *dd == d))
    }

    /// Whether `target` (or a member of it) carries built-in `b`; the array length of
    /// what carries it (1 when not an array).
    fn builtin_length(&self, variable: Word, pointee: Word, b: BuiltIn) -> Option<u32> {
        let is = |list: &Vec<Decorated>, member: Option<u32>| {
            list.iter()
                .any(|(m, d, v)| *m == member && *d == Decoration::BuiltIn && *v == Some(b as u32))
        };
        if self.decorations.get(&variable).is_some_and(|l| is(l, None)) {
            return Some(self.array_length(pointee));
        }
        // A member of the block the variable holds (or an array of that block).
        let block = self.element_type(pointee);
        let list = self.decorations.get(&block)?;
        let member = list
            .iter()
            .find(|(m, d, v)| m.is_some() && *d == Decoration::BuiltIn && *v == Some(b as u32))?
            .0?;
        let member_type = match &self.types.get(&block)?.operands.get(member as usize)? {
            Operand::IdRef(t) => *t,
            _ => return Some(1),
        };
        Some(self.array_length(member_type))
    }

    /// As [`Self::builtin_length`], but only where a function reaches the built-in:
    /// a block member no access chain selects is declared, not written, and NAK's
    /// compile keeps no output for it (glslang declares all of `gl_PerVertex`).
    fn builtin_written(&self, variable: Word, pointee: Word, b: BuiltIn) -> Option<u32> {
        let length = self.builtin_length(variable, pointee, b)?;
        if self.used_whole.contains(&variable) {
            return Some(length);
        }
        let decorated_itself = self.decorations.get(&variable).is_some_and(|l| {
            l.iter()
                .any(|(m, d, v)| m.is_none() && *d == Decoration::BuiltIn && *v == Some(b as u32))
        });
        if decorated_itself {
            return self.used.contains(&variable).then_some(length);
        }
        let block = self.element_type(pointee);
        let member = self
            .decorations
            .get(&block)?
            .iter()
            .find(|(m, d, v)| m.is_some() && *d == Decoration::BuiltIn && *v == Some(b as u32))?
            .0?;
        // Past an array of blocks (a tessellation control shader's), the member is
        // the second index.
        let position = usize::from(block != pointee);
        self.chain_indices
            .contains(&(variable, position, member))
            .then_some(length)
    }

    /// An array type's length (1 for anything else).
    fn array_length(&self, ty: Word) -> u32 {
        match self.types.get(&ty) {
            Some(t) if t.class.opcode == Op::TypeArray => id(t, 1)
                .and_then(|c| self.constants.get(&c).copied())
                .unwrap_or(1),
            _ => 1,
        }
    }

    /// The element of an array type (the type itself otherwise).
    fn element_type(&self, ty: Word) -> Word {
        match self.types.get(&ty) {
            Some(t) if matches!(t.class.opcode, Op::TypeArray | Op::TypeRuntimeArray) => {
                id(t, 0).unwrap_or(ty)
            }
            _ => ty,
        }
    }

    /// 32-bit components in a value of `ty` (bounded depth; 64-bit scalars count 2).
    fn components(&self, ty: Word, depth: u32) -> u32 {
        let Some(t) = self.types.get(&ty) else {
            return 1;
        };
        if depth > 8 {
            return 1;
        }
        match t.class.opcode {
            Op::TypeFloat | Op::TypeInt => match t.operands.first() {
                Some(Operand::LiteralBit32(64)) => 2,
                _ => 1,
            },
            Op::TypeVector | Op::TypeMatrix => {
                let n = match t.operands.get(1) {
                    Some(Operand::LiteralBit32(n)) => *n,
                    _ => 1,
                };
                n.saturating_mul(id(t, 0).map_or(1, |e| self.components(e, depth + 1)))
            }
            Op::TypeArray => self
                .array_length(ty)
                .saturating_mul(id(t, 0).map_or(1, |e| self.components(e, depth + 1))),
            Op::TypeStruct => t
                .operands
                .iter()
                .filter_map(|o| match o {
                    Operand::IdRef(m) => Some(self.components(*m, depth + 1)),
                    _ => None,
                })
                .fold(0u32, u32::saturating_add),
            _ => 1,
        }
    }

    /// The workgroup size (`WorkgroupSize` wins over the modes, as SPIR-V says).
    fn workgroup_size(&self, modes: &[(ExecutionMode, &Instruction)]) -> Option<[u32; 3]> {
        let builtin = self.decorations.iter().find_map(|(target, ds)| {
            ds.iter()
                .any(|(_, d, v)| {
                    *d == Decoration::BuiltIn && *v == Some(BuiltIn::WorkgroupSize as u32)
                })
                .then_some(*target)
        });
        if let Some(composite) = builtin.and_then(|t| self.types.get(&t)) {
            let parts: Vec<u32> = composite
                .operands
                .iter()
                .filter_map(|o| match o {
                    Operand::IdRef(r) => self.constants.get(r).copied(),
                    _ => None,
                })
                .collect();
            if let [x, y, z] = parts[..] {
                return Some([x, y, z]);
            }
        }
        modes.iter().find_map(|(mode, m)| {
            let values: Vec<u32> = m.operands[2..]
                .iter()
                .filter_map(|o| match (mode, o) {
                    (ExecutionMode::LocalSize, Operand::LiteralBit32(v)) => Some(*v),
                    (ExecutionMode::LocalSizeId, Operand::IdRef(r)) => {
                        self.constants.get(r).copied()
                    }
                    _ => None,
                })
                .collect();
            match values[..] {
                [x, y, z] => Some([x, y, z]),
                _ => None,
            }
        })
    }

    fn interface(&self, module: &Module, stage: Stage, function: Word) -> Interface {
        let mut f = Interface::default();
        let modes: Vec<(ExecutionMode, &Instruction)> = module
            .execution_modes
            .iter()
            .filter(|m| id(m, 0) == Some(function))
            .filter_map(|m| match m.operands.get(1) {
                Some(Operand::ExecutionMode(mode)) => Some((*mode, m)),
                _ => None,
            })
            .collect();
        let has = |mode: ExecutionMode| modes.iter().any(|(m, _)| *m == mode);
        if matches!(stage, Stage::TessControl | Stage::TessEval) {
            f.tess = tess_params(&has);
        }
        f.early_fragment_tests = has(ExecutionMode::EarlyFragmentTests);
        f.constant_data_bytes = self.constant_data_bytes;
        f.post_depth_coverage = has(ExecutionMode::PostDepthCoverage);
        if stage == Stage::Compute {
            f.workgroup_size = self.workgroup_size(&modes);
        }

        let mut variables: Vec<(&Word, &(StorageClass, Word))> = self.variables.iter().collect();
        variables.sort_by_key(|(v, _)| **v);
        for (var, (class, pointee)) in variables {
            let var = *var;
            match class {
                StorageClass::Output if stage != Stage::Fragment => {
                    if self.builtin_length(var, *pointee, BuiltIn::Layer).is_some() {
                        f.writes_layer = true;
                    }
                    if let Some(n) = self.builtin_written(var, *pointee, BuiltIn::ClipDistance) {
                        f.clip_distances = n.min(8) as u8;
                    }
                    if let Some(n) = self.builtin_written(var, *pointee, BuiltIn::CullDistance) {
                        f.cull_distances = n.min(8) as u8;
                    }
                    self.add_xfb(&mut f, var, *pointee);
                }
                StorageClass::Output => {
                    let depth = self.builtin_length(var, *pointee, BuiltIn::FragDepth);
                    f.writes_depth |= depth.is_some();
                }
                StorageClass::Input if stage == Stage::Fragment => {
                    let builtin = |b| self.builtin_length(var, *pointee, b).is_some();
                    f.uses_sample_shading |= builtin(BuiltIn::SampleId)
                        || builtin(BuiltIn::SamplePosition)
                        || self.has_decoration(var, Decoration::Sample);
                }
                _ => {}
            }
        }
        (f.descriptors, f.descriptor_loads) = self.descriptor_uses(module);
        f
    }

    /// Adds an output's transform-feedback capture, if it has one: its buffer's stride,
    /// stream and dwords, and the attribute each of its dwords takes (as
    /// nir_gather_xfb_info lays a variable's elements and members out, and
    /// nak_xfb_from_nir maps each to its attribute).
    fn add_xfb(&self, f: &mut Interface, var: Word, pointee: Word) {
        let buffer_of = |target: Word, member: Option<u32>| {
            self.decoration(target, member, Decoration::XfbBuffer)
        };
        let clip_distances = u32::from(f.clip_distances);
        let mut add = |buffer: u32,
                       stride: Option<u32>,
                       stream: u32,
                       offset: u32,
                       ty: Word,
                       slot: OutputSlot| {
            let Some(b) = f.xfb.get_mut(buffer as usize) else {
                return;
            };
            if let Some(s) = stride {
                b.stride = s;
            }
            b.stream = stream.min(3) as u8;
            let first = offset / 4;
            let end = first.saturating_add(self.components(ty, 0));
            b.attr_count = b.attr_count.max(end.min(128) as u8);
            let attrs = self.xfb_attrs(ty, slot, clip_distances);
            let len = usize::from(b.attr_count);
            if b.attr_index.len() < len {
                b.attr_index.resize(len, XFB_SKIP);
            }
            for (k, attr) in attrs.into_iter().enumerate() {
                if let Some(entry) = b.attr_index.get_mut(first as usize + k) {
                    *entry = attr;
                }
            }
        };
        let slot_of = |target: Word, member: Option<u32>| match self.decoration(
            target,
            member,
            Decoration::BuiltIn,
        ) {
            Some(b) => OutputSlot::BuiltIn(b),
            None => OutputSlot::Generic {
                location: self
                    .decoration(target, member, Decoration::Location)
                    .unwrap_or(0),
                component: self
                    .decoration(target, member, Decoration::Component)
                    .unwrap_or(0),
            },
        };
        // A variable is captured when it has an offset (GLSL's xfb_offset).
        let var_buffer = buffer_of(var, None);
        let var_stride = self.decoration(var, None, Decoration::XfbStride);
        if let (Some(buffer), Some(offset)) =
            (var_buffer, self.decoration(var, None, Decoration::Offset))
        {
            let stream = self.decoration(var, None, Decoration::Stream).unwrap_or(0);
            add(
                buffer,
                var_stride,
                stream,
                offset,
                pointee,
                slot_of(var, None),
            );
            return;
        }
        // Members of an output block captured one by one.
        let block = self.element_type(pointee);
        let Some(t) = self.types.get(&block) else {
            return;
        };
        if t.class.opcode != Op::TypeStruct {
            return;
        }
        let var_buffer = var_buffer.or_else(|| buffer_of(block, None));
        // A member without a location of its own follows the one before it.
        let mut next_location = self
            .decoration(var, None, Decoration::Location)
            .unwrap_or(0);
        for (m, operand) in t.operands.iter().enumerate() {
            let Operand::IdRef(ty) = operand else {
                continue;
            };
            let member = Some(m as u32);
            let slot = match slot_of(block, member) {
                OutputSlot::Generic { component, .. }
                    if self
                        .decoration(block, member, Decoration::Location)
                        .is_none() =>
                {
                    OutputSlot::Generic {
                        location: next_location,
                        component,
                    }
                }
                slot => slot,
            };
            if let OutputSlot::Generic { location, .. } = slot {
                next_location = location.saturating_add(self.location_slots(*ty, 0));
            }
            let Some(buffer) = buffer_of(block, member).or(var_buffer) else {
                continue;
            };
            let Some(offset) = self.decoration(block, member, Decoration::Offset) else {
                continue;
            };
            let stride = self
                .decoration(block, member, Decoration::XfbStride)
                .or(var_stride);
            let stream = self
                .decoration(block, member, Decoration::Stream)
                .unwrap_or(0);
            add(buffer, stride, stream, offset, *ty, slot);
        }
    }

    /// The attribute (address over 4) of each 32-bit component of an output of type
    /// `ty` at `slot`, in the order the transform-feedback buffer takes them: an array's
    /// or a matrix's elements one location each, a struct's members one after another.
    fn xfb_attrs(&self, ty: Word, slot: OutputSlot, clip_distances: u32) -> Vec<u8> {
        let count = self.components(ty, 0) as usize;
        match slot {
            OutputSlot::BuiltIn(b) => match builtin_attr(b, clip_distances) {
                Some(first) => (0..count).map(|k| attr_byte(first + k as u32)).collect(),
                None => vec![XFB_SKIP; count],
            },
            OutputSlot::Generic {
                location,
                component,
            } => {
                let mut attrs = Vec::with_capacity(count);
                self.generic_attrs(ty, location, component, 0, &mut attrs);
                attrs
            }
        }
    }

    /// [`Self::xfb_attrs`] of a generic output: VARYING_SLOT_VAR0 is attribute address
    /// 0x80, each location 16 bytes.
    fn generic_attrs(
        &self,
        ty: Word,
        location: u32,
        component: u32,
        depth: u32,
        out: &mut Vec<u8>,
    ) {
        let Some(t) = self.types.get(&ty).filter(|_| depth <= 8) else {
            out.push(XFB_SKIP);
            return;
        };
        let element = id(t, 0).unwrap_or(ty);
        match t.class.opcode {
            Op::TypeArray | Op::TypeMatrix => {
                let n = match t.class.opcode {
                    Op::TypeArray => self.array_length(ty),
                    _ => match t.operands.get(1) {
                        Some(Operand::LiteralBit32(n)) => *n,
                        _ => 1,
                    },
                };
                let step = self.location_slots(element, depth + 1);
                for i in 0..n.min(128) {
                    let at = location.saturating_add(i.saturating_mul(step));
                    self.generic_attrs(element, at, component, depth + 1, out);
                }
            }
            Op::TypeStruct => {
                let mut at = location;
                for operand in &t.operands {
                    if let Operand::IdRef(m) = operand {
                        self.generic_attrs(*m, at, 0, depth + 1, out);
                        at = at.saturating_add(self.location_slots(*m, depth + 1));
                    }
                }
            }
            _ => {
                let first = 0x80 / 4 + location.saturating_mul(4) + component;
                for k in 0..self.components(ty, depth) {
                    out.push(attr_byte(first.saturating_add(k)));
                }
            }
        }
    }

    /// The locations a value of `ty` takes: one a vector or scalar (of 32-bit
    /// components), one an array element or matrix column.
    fn location_slots(&self, ty: Word, depth: u32) -> u32 {
        let Some(t) = self.types.get(&ty).filter(|_| depth <= 8) else {
            return 1;
        };
        match t.class.opcode {
            Op::TypeArray => self
                .array_length(ty)
                .saturating_mul(id(t, 0).map_or(1, |e| self.location_slots(e, depth + 1))),
            Op::TypeMatrix => match t.operands.get(1) {
                Some(Operand::LiteralBit32(n)) => *n,
                _ => 1,
            },
            Op::TypeStruct => t
                .operands
                .iter()
                .filter_map(|o| match o {
                    Operand::IdRef(m) => Some(self.location_slots(*m, depth + 1)),
                    _ => None,
                })
                .fold(0u32, u32::saturating_add),
            _ => 1,
        }
    }

    /// The descriptors the functions refer to, in variable order, each once: uniform
    /// buffers by binding, everything else by set; and the loads through each.
    fn descriptor_uses(&self, module: &Module) -> (Vec<DescriptorUse>, Vec<u32>) {
        let mut uses = Vec::new();
        let mut counts: Vec<u32> = Vec::new();
        let order = module
            .types_global_values
            .iter()
            .filter(|i| i.class.opcode == Op::Variable)
            .filter_map(|i| i.result_id)
            .filter(|v| self.used.contains(v));
        for var in order {
            let Some((class, pointee)) = self.variables.get(&var) else {
                continue;
            };
            let Some(set) = self.decoration(var, None, Decoration::DescriptorSet) else {
                continue;
            };
            let binding = self.decoration(var, None, Decoration::Binding).unwrap_or(0);
            let block = self.element_type(*pointee);
            let is_ubo =
                *class == StorageClass::Uniform && self.has_decoration(block, Decoration::Block);
            let found: Vec<(DescriptorUse, u32)> = if is_ubo && block != *pointee {
                // An array of uniform buffers: each element read at a constant index.
                let mut elements: Vec<(u32, u32)> = self
                    .loads
                    .iter()
                    .filter(|((v, _), _)| *v == var)
                    .map(|(&(_, element), &loads)| (element, loads))
                    .collect();
                elements.sort_unstable();
                elements
                    .into_iter()
                    .map(|(element, loads)| {
                        let found = DescriptorUse::UniformBuffer {
                            set,
                            binding,
                            element,
                        };
                        (found, loads)
                    })
                    .collect()
            } else if is_ubo {
                let found = DescriptorUse::UniformBuffer {
                    set,
                    binding,
                    element: 0,
                };
                vec![(found, self.loads_of(var))]
            } else if matches!(
                class,
                StorageClass::Uniform | StorageClass::StorageBuffer | StorageClass::UniformConstant
            ) {
                vec![(DescriptorUse::DescriptorSet { set }, self.loads_of(var))]
            } else {
                continue;
            };
            for (found, loads) in found {
                match uses.iter().position(|u| *u == found) {
                    Some(at) => counts[at] += loads,
                    None => {
                        uses.push(found);
                        counts.push(loads);
                    }
                }
            }
        }
        (uses, counts)
    }
}

/// An operand's id, if it is one.
fn id_operand(o: &Operand) -> Option<Word> {
    match o {
        Operand::IdRef(r) => Some(*r),
        _ => None,
    }
}

/// The tessellation parameters a shader's modes set, as NAK maps them (triangles
/// counter-clockwise for `VertexOrderCcw`, clockwise otherwise; NVK flips them for the
/// lower-left origin afterwards).
fn tess_params(has: &dyn Fn(ExecutionMode) -> bool) -> Option<TessParams> {
    let domain = if has(ExecutionMode::Isolines) {
        0
    } else if has(ExecutionMode::Triangles) {
        1
    } else if has(ExecutionMode::Quads) {
        2
    } else {
        return None;
    };
    let spacing = if has(ExecutionMode::SpacingFractionalOdd) {
        1
    } else if has(ExecutionMode::SpacingFractionalEven) {
        2
    } else {
        0
    };
    let prims = if has(ExecutionMode::PointMode) {
        0
    } else if domain == 0 {
        1
    } else if has(ExecutionMode::VertexOrderCcw) {
        3
    } else {
        2
    };
    Some(TessParams {
        domain,
        spacing,
        prims,
    })
}
