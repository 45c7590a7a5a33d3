//! UBO loads as per-component access chains (Zink's `load_ubo`): a uniform block is
//! viewed as `uvec4 base[N]`; every load through it becomes, per 32-bit component, a
//! byte offset (constant or computed from dynamic indices), an access chain
//! `base[offset / 16][(offset % 16) / 4]`, a scalar `uint` load, and the components
//! reassembled and bitcast to the type the shader loaded.

use std::collections::HashMap;

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass, Word};

use super::analysis::uniform_block_variables;
use super::{fresh_id, global, id, pointer_type, uint_constant, uint_type};

/// What the pass did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The module is as it was, and why.
    Unchanged(&'static str),
    /// This many loads now go through per-component chains.
    Lowered(usize),
}

/// A type's shape, as far as the pass reads it.
#[derive(Clone, Debug)]
enum Shape {
    Scalar { signed_int: bool, float: bool },
    Vector { component: Word, count: u32 },
    Matrix { column: Word, columns: u32 },
    Array { element: Word, length: u32 },
    Struct { members: Vec<Word> },
    Other,
}

struct Types<'m> {
    module: &'m Module,
}

impl Types<'_> {
    fn inst(&self, id: Word) -> Option<&Instruction> {
        self.module
            .types_global_values
            .iter()
            .find(|i| i.result_id == Some(id))
    }

    fn constant(&self, id: Word) -> Option<u32> {
        let c = self.inst(id).filter(|i| i.class.opcode == Op::Constant)?;
        match c.operands.first()? {
            Operand::LiteralBit32(v) => Some(*v),
            _ => None,
        }
    }

    fn shape(&self, ty: Word) -> Shape {
        let Some(i) = self.inst(ty) else {
            return Shape::Other;
        };
        let lit = |n: usize| match i.operands.get(n) {
            Some(Operand::LiteralBit32(v)) => Some(*v),
            _ => None,
        };
        match i.class.opcode {
            Op::TypeInt if lit(0) == Some(32) => Shape::Scalar {
                signed_int: lit(1) == Some(1),
                float: false,
            },
            Op::TypeFloat if lit(0) == Some(32) => Shape::Scalar {
                signed_int: false,
                float: true,
            },
            Op::TypeVector => match (id(i, 0), lit(1)) {
                (Some(component), Some(count)) => Shape::Vector { component, count },
                _ => Shape::Other,
            },
            Op::TypeMatrix => match (id(i, 0), lit(1)) {
                (Some(column), Some(columns)) => Shape::Matrix { column, columns },
                _ => Shape::Other,
            },
            Op::TypeArray => match (id(i, 0), id(i, 1).and_then(|l| self.constant(l))) {
                (Some(element), Some(length)) => Shape::Array { element, length },
                _ => Shape::Other,
            },
            Op::TypeStruct => Shape::Struct {
                members: i
                    .operands
                    .iter()
                    .filter_map(|o| match o {
                        Operand::IdRef(m) => Some(*m),
                        _ => None,
                    })
                    .collect(),
            },
            _ => Shape::Other,
        }
    }

    /// A decoration's literal on `target` (or on its member `member`).
    fn decoration(&self, target: Word, member: Option<u32>, decoration: Decoration) -> Option<u32> {
        self.module.annotations.iter().find_map(|a| {
            let (d_at, v_at) = match (a.class.opcode, member) {
                (Op::Decorate, None) => (1, 2),
                (Op::MemberDecorate, Some(m)) if matches!(a.operands.get(1), Some(Operand::LiteralBit32(x)) if *x == m) => (2, 3),
                _ => return None,
            };
            if id(a, 0) != Some(target) || !matches!(a.operands.get(d_at), Some(Operand::Decoration(d)) if *d == decoration) {
                return None;
            }
            match a.operands.get(v_at) {
                Some(Operand::LiteralBit32(v)) => Some(*v),
                _ => None,
            }
        })
    }

    /// The bytes a value of `ty` spans in a uniform block, if the pass can tell.
    fn size(&self, ty: Word) -> Option<u32> {
        Some(match self.shape(ty) {
            Shape::Scalar { .. } => 4,
            Shape::Vector { count, .. } => 4 * count,
            Shape::Matrix { column, columns } => {
                // The stride sits on the struct member; a column's size bounds the last one.
                let column_size = self.size(column)?;
                16 * (columns - 1) + column_size
            }
            Shape::Array { element, length } => {
                let stride = self.decoration(ty, None, Decoration::ArrayStride)?;
                stride * (length - 1) + self.size(element)?
            }
            Shape::Struct { members } => {
                let mut end = 0;
                for (m, mty) in members.iter().enumerate() {
                    let off = self.decoration(ty, Some(m as u32), Decoration::Offset)?;
                    end = end.max(off + self.size(*mty)?);
                }
                end
            }
            Shape::Other => return None,
        })
    }
}

/// Rewrites `module`'s uniform-block loads.
pub fn lower(module: &mut Module) -> Outcome {
    let vars = uniform_block_variables(module);
    if vars.is_empty() {
        return Outcome::Unchanged("no uniform blocks");
    }
    // Matrix columns are taken 16 bytes apart (std140's column-major layout).
    let odd_matrix = module.annotations.iter().any(|a| {
        a.class.opcode == Op::MemberDecorate
            && match a.operands.get(2) {
                Some(Operand::Decoration(Decoration::RowMajor)) => true,
                Some(Operand::Decoration(Decoration::MatrixStride)) => {
                    !matches!(a.operands.get(3), Some(Operand::LiteralBit32(16)))
                }
                _ => false,
            }
    });
    if odd_matrix {
        return Outcome::Unchanged("a row-major matrix or a matrix stride other than 16");
    }
    // Each block: its struct type and size.
    let mut blocks: HashMap<Word, (Word, u32)> = HashMap::new();
    {
        let types = Types { module };
        for v in &vars {
            let Some(ptr) = module
                .types_global_values
                .iter()
                .find(|i| i.result_id == Some(*v))
                .and_then(|i| i.result_type)
            else {
                return Outcome::Unchanged("a block variable without a type");
            };
            let Some(block) = types.inst(ptr).and_then(|p| id(p, 1)) else {
                return Outcome::Unchanged("a block variable without a pointer type");
            };
            if !matches!(types.shape(block), Shape::Struct { .. }) {
                return Outcome::Unchanged("an array of blocks");
            }
            let Some(size) = types.size(block) else {
                return Outcome::Unchanged("a member type the pass cannot lay out");
            };
            blocks.insert(*v, (block, size));
        }
    }
    // Only access chains and scalar or vector loads may use block pointers.
    let mut pointers: HashMap<Word, Word> = blocks.iter().map(|(v, (ty, _))| (*v, *ty)).collect();
    {
        let types = Types { module };
        for i in module
            .functions
            .iter()
            .flat_map(|f| f.blocks.iter())
            .flat_map(|b| b.instructions.iter())
        {
            let uses: Vec<usize> = i
                .operands
                .iter()
                .enumerate()
                .filter(|(_, o)| matches!(o, Operand::IdRef(r) if pointers.contains_key(r)))
                .map(|(n, _)| n)
                .collect();
            if uses.is_empty() {
                continue;
            }
            match i.class.opcode {
                Op::AccessChain | Op::InBoundsAccessChain if uses == [0] => {
                    let Some(base_ty) = id(i, 0).and_then(|b| pointers.get(&b)).copied() else {
                        continue;
                    };
                    let mut ty = base_ty;
                    for index in i.operands[1..].iter() {
                        let Operand::IdRef(index) = index else {
                            return Outcome::Unchanged("an odd access chain");
                        };
                        ty = match types.shape(ty) {
                            Shape::Struct { members } => match types
                                .constant(*index)
                                .and_then(|m| members.get(m as usize))
                            {
                                Some(m) => *m,
                                None => {
                                    return Outcome::Unchanged("a struct member picked dynamically")
                                }
                            },
                            Shape::Array { element, .. } => element,
                            Shape::Matrix { column, .. } => column,
                            Shape::Vector { component, .. } => component,
                            _ => return Outcome::Unchanged("an access chain into an unknown type"),
                        };
                    }
                    if let Some(r) = i.result_id {
                        pointers.insert(r, ty);
                    }
                }
                Op::Load if uses == [0] => {
                    let ty = id(i, 0)
                        .and_then(|p| pointers.get(&p))
                        .copied()
                        .unwrap_or(0);
                    if !matches!(types.shape(ty), Shape::Scalar { .. } | Shape::Vector { .. }) {
                        return Outcome::Unchanged("a load of a whole struct, array or matrix");
                    }
                }
                _ => {
                    return Outcome::Unchanged(
                        "a block pointer used other than by chains and loads",
                    )
                }
            }
        }
    }

    // The uvec4 view: struct { uvec4 base[N]; } with the block's decorations.
    let uint = uint_type(module);
    let uvec4 = global(
        module,
        |i| {
            i.class.opcode == Op::TypeVector
                && i.operands == [Operand::IdRef(uint), Operand::LiteralBit32(4)]
        },
        |id| {
            Instruction::new(
                Op::TypeVector,
                None,
                Some(id),
                vec![Operand::IdRef(uint), Operand::LiteralBit32(4)],
            )
        },
    );
    let uconst = uint_constant;
    let ptr_uint = pointer_type(module, StorageClass::Uniform, uint);
    let (c0, c4, c16) = (uconst(module, 0), uconst(module, 4), uconst(module, 16));
    let mut view_of: HashMap<Word, Word> = HashMap::new();
    let mut vars_sorted: Vec<Word> = blocks.keys().copied().collect();
    vars_sorted.sort_unstable();
    for v in &vars_sorted {
        let (_, size) = blocks[v];
        let n = uconst(module, size.div_ceil(16).max(1));
        let (array, wrapper, ptr) = (fresh_id(module), fresh_id(module), fresh_id(module));
        module.types_global_values.extend([
            Instruction::new(
                Op::TypeArray,
                None,
                Some(array),
                vec![Operand::IdRef(uvec4), Operand::IdRef(n)],
            ),
            Instruction::new(
                Op::TypeStruct,
                None,
                Some(wrapper),
                vec![Operand::IdRef(array)],
            ),
            Instruction::new(
                Op::TypePointer,
                None,
                Some(ptr),
                vec![
                    Operand::StorageClass(StorageClass::Uniform),
                    Operand::IdRef(wrapper),
                ],
            ),
        ]);
        module.annotations.extend([
            Instruction::new(
                Op::Decorate,
                None,
                None,
                vec![
                    Operand::IdRef(array),
                    Operand::Decoration(Decoration::ArrayStride),
                    Operand::LiteralBit32(16),
                ],
            ),
            Instruction::new(
                Op::Decorate,
                None,
                None,
                vec![
                    Operand::IdRef(wrapper),
                    Operand::Decoration(Decoration::Block),
                ],
            ),
            Instruction::new(
                Op::MemberDecorate,
                None,
                None,
                vec![
                    Operand::IdRef(wrapper),
                    Operand::LiteralBit32(0),
                    Operand::Decoration(Decoration::Offset),
                    Operand::LiteralBit32(0),
                ],
            ),
        ]);
        view_of.insert(*v, ptr);
    }
    // The variables take the view's type; they must come after it.
    let moved: Vec<Instruction> = module
        .types_global_values
        .iter()
        .filter(|i| i.result_id.is_some_and(|r| view_of.contains_key(&r)))
        .cloned()
        .collect();
    module
        .types_global_values
        .retain(|i| !i.result_id.is_some_and(|r| view_of.contains_key(&r)));
    for mut v in moved {
        v.result_type = v.result_id.map(|r| view_of[&r]);
        module.types_global_values.push(v);
    }

    // Rewrite: chains become byte offsets; loads become per-component loads.
    let layout = module.clone();
    let types = Types { module: &layout };
    let mut lowered = 0;
    let functions = std::mem::take(&mut module.functions);
    let mut rewritten = Vec::with_capacity(functions.len());
    for mut f in functions {
        // pointer id -> (block variable, byte offset value, pointee type)
        let mut at: HashMap<Word, (Word, Word, Word)> = blocks
            .iter()
            .map(|(v, (ty, _))| (*v, (*v, c0, *ty)))
            .collect();
        for b in &mut f.blocks {
            let mut out = Vec::with_capacity(b.instructions.len());
            for inst in std::mem::take(&mut b.instructions) {
                let base = id(&inst, 0).and_then(|p| at.get(&p)).copied();
                match (inst.class.opcode, base) {
                    (
                        Op::AccessChain | Op::InBoundsAccessChain,
                        Some((var, mut offset, mut ty)),
                    ) => {
                        for index in inst.operands[1..].iter() {
                            let Operand::IdRef(index) = *index else {
                                continue;
                            };
                            let (step, next) = match types.shape(ty) {
                                Shape::Struct { members } => {
                                    let m = types.constant(index).unwrap_or(0);
                                    let off = types
                                        .decoration(ty, Some(m), Decoration::Offset)
                                        .unwrap_or(0);
                                    let off = uconst(module, off);
                                    offset = add(module, &mut out, uint, offset, off);
                                    (None, members[m as usize])
                                }
                                Shape::Array { element, .. } => {
                                    (types.decoration(ty, None, Decoration::ArrayStride), element)
                                }
                                Shape::Matrix { column, .. } => (Some(16), column),
                                Shape::Vector { component, .. } => (Some(4), component),
                                _ => (None, ty),
                            };
                            if let Some(stride) = step {
                                let i = as_uint(module, &mut out, &types, uint, index);
                                let s = uconst(module, stride);
                                let scaled = binary(module, &mut out, Op::IMul, uint, i, s);
                                offset = add(module, &mut out, uint, offset, scaled);
                            }
                            ty = next;
                        }
                        if let Some(r) = inst.result_id {
                            at.insert(r, (var, offset, ty));
                        }
                    }
                    (Op::Load, Some((var, offset, ty))) => {
                        let (count, component) = match types.shape(ty) {
                            Shape::Vector { component, count } => (count, component),
                            _ => (1, ty),
                        };
                        let mut words = Vec::new();
                        for c in 0..count {
                            let off = if c == 0 {
                                offset
                            } else {
                                let step = uconst(module, 4 * c);
                                add(module, &mut out, uint, offset, step)
                            };
                            let vec = binary(module, &mut out, Op::UDiv, uint, off, c16);
                            let rem = binary(module, &mut out, Op::UMod, uint, off, c16);
                            let comp = binary(module, &mut out, Op::UDiv, uint, rem, c4);
                            let chain = fresh_id(module);
                            out.push(Instruction::new(
                                Op::AccessChain,
                                Some(ptr_uint),
                                Some(chain),
                                vec![
                                    Operand::IdRef(var),
                                    Operand::IdRef(c0),
                                    Operand::IdRef(vec),
                                    Operand::IdRef(comp),
                                ],
                            ));
                            let word = fresh_id(module);
                            out.push(Instruction::new(
                                Op::Load,
                                Some(uint),
                                Some(word),
                                vec![Operand::IdRef(chain)],
                            ));
                            words.push(word);
                        }
                        let result = inst.result_id;
                        let is_uint = |t: Word| {
                            matches!(
                                types.shape(t),
                                Shape::Scalar {
                                    signed_int: false,
                                    float: false
                                }
                            )
                        };
                        if count == 1 {
                            if is_uint(component) {
                                out.push(Instruction::new(
                                    Op::CopyObject,
                                    Some(uint),
                                    result,
                                    vec![Operand::IdRef(words[0])],
                                ));
                            } else {
                                out.push(Instruction::new(
                                    Op::Bitcast,
                                    Some(ty),
                                    result,
                                    vec![Operand::IdRef(words[0])],
                                ));
                            }
                        } else {
                            let uvec = global(
                                module,
                                |i| {
                                    i.class.opcode == Op::TypeVector
                                        && i.operands
                                            == [Operand::IdRef(uint), Operand::LiteralBit32(count)]
                                },
                                |id| {
                                    Instruction::new(
                                        Op::TypeVector,
                                        None,
                                        Some(id),
                                        vec![Operand::IdRef(uint), Operand::LiteralBit32(count)],
                                    )
                                },
                            );
                            let built = fresh_id(module);
                            out.push(Instruction::new(
                                Op::CompositeConstruct,
                                Some(uvec),
                                Some(built),
                                words.iter().map(|w| Operand::IdRef(*w)).collect(),
                            ));
                            let op = if is_uint(component) {
                                Op::CopyObject
                            } else {
                                Op::Bitcast
                            };
                            out.push(Instruction::new(
                                op,
                                Some(ty),
                                result,
                                vec![Operand::IdRef(built)],
                            ));
                        }
                        lowered += 1;
                    }
                    _ => out.push(inst),
                }
            }
            b.instructions = out;
        }
        rewritten.push(f);
    }
    module.functions = rewritten;
    Outcome::Lowered(lowered)
}

fn binary(
    module: &mut Module,
    out: &mut Vec<Instruction>,
    op: Op,
    ty: Word,
    a: Word,
    b: Word,
) -> Word {
    let r = fresh_id(module);
    out.push(Instruction::new(
        op,
        Some(ty),
        Some(r),
        vec![Operand::IdRef(a), Operand::IdRef(b)],
    ));
    r
}

fn add(module: &mut Module, out: &mut Vec<Instruction>, ty: Word, a: Word, b: Word) -> Word {
    binary(module, out, Op::IAdd, ty, a, b)
}

/// An index as a `uint` value: constants re-made as `uint` constants, signed values
/// bitcast.
fn as_uint(
    module: &mut Module,
    out: &mut Vec<Instruction>,
    types: &Types<'_>,
    uint: Word,
    index: Word,
) -> Word {
    if let Some(v) = types.constant(index) {
        return uint_constant(module, v);
    }
    // The index's type, from the module as it was before the rewrite.
    let ty = types
        .module
        .functions
        .iter()
        .flat_map(|f| {
            f.parameters
                .iter()
                .chain(f.blocks.iter().flat_map(|b| b.instructions.iter()))
        })
        .chain(out.iter())
        .find(|i| i.result_id == Some(index))
        .and_then(|i| i.result_type);
    if ty == Some(uint) {
        return index;
    }
    let r = fresh_id(module);
    out.push(Instruction::new(
        Op::Bitcast,
        Some(uint),
        Some(r),
        vec![Operand::IdRef(index)],
    ));
    r
}
