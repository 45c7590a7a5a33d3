//! What a module is once a pipeline stage has specialized it and NIR has dropped the
//! code it can never run: the part of NVK's compile that decides which constant
//! buffers a shader reads before `build_cbuf_map` counts them.
//!
//! spirv_to_nir gives every specialization constant the value the stage's
//! `VkSpecializationInfo` holds for its `SpecId`, or its default (`vtn_handle_constant`,
//! `spec_constant_decoration_cb`), and evaluates `OpSpecConstantOp` on those values
//! (`nir_eval_const_opcode`). NIR then folds what is constant (`nir_opt_constant_folding`),
//! takes the branch a constant condition chooses and removes the other
//! (`nir_opt_dead_cf`), and after inlining keeps only the entry point
//! (`nir_remove_non_entrypoints`). A shader whose variants a specialization constant
//! chooses — GTK 4's Vulkan renderer picks its clip mode so — reads only the uniform
//! buffers of the variant chosen.
//!
//! Here: specialization constants of integer and boolean type take their values and
//! become ordinary constants; an `OpSpecConstantOp` or a function's integer or logical
//! instruction whose operands are all known is evaluated; a conditional branch or
//! switch on a known value becomes a branch to the target it takes; blocks no branch
//! reaches and functions no live block calls are removed. What is not known (a float
//! operation, a vector, a value read from memory) is left as it is, and its branches
//! keep both ways.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Block, Function, Instruction, Module, Operand};
use rspirv::spirv::{Decoration, Op, Word};

use super::id;

type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
type Set<K> = HashSet<K, foldhash::fast::RandomState>;

/// One `VkSpecializationMapEntry`: which constant, where its value lies in the data,
/// and how many bytes it takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SpecializationEntry {
    /// The `SpecId` it gives a value to.
    pub constant_id: u32,
    /// Where the value starts in the data.
    pub offset: u32,
    /// Its size in bytes.
    pub size: u64,
}

/// A stage's `VkSpecializationInfo`: its map entries and their data.
#[derive(Clone, Copy, Debug, Default)]
pub struct Specialization<'a> {
    /// The map entries.
    pub entries: &'a [SpecializationEntry],
    /// The bytes the entries point into.
    pub data: &'a [u8],
}

impl Specialization<'_> {
    /// The value the stage gives `SpecId` `constant_id`, read as the little-endian
    /// number of its entry's bytes; `None` for a constant it does not name or an entry
    /// whose bytes lie outside the data.
    fn value(&self, constant_id: u32) -> Option<u64> {
        // The first entry naming a constant gives its value (spec_constant_decoration_cb).
        let entry = self.entries.iter().find(|e| e.constant_id == constant_id)?;
        let start = entry.offset as usize;
        let size = usize::try_from(entry.size).ok().filter(|s| *s <= 8)?;
        let bytes = self.data.get(start..start.checked_add(size)?)?;
        Some(
            bytes
                .iter()
                .rev()
                .fold(0u64, |value, byte| value << 8 | u64::from(*byte)),
        )
    }
}

/// A scalar value known at compile time: its bits, and its width (1 for a boolean).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Value {
    bits: u64,
    width: u32,
}

impl Value {
    fn new(bits: u64, width: u32) -> Self {
        Value {
            bits: bits & mask(width),
            width,
        }
    }

    fn boolean(b: bool) -> Self {
        Value::new(u64::from(b), 1)
    }

    /// The value sign-extended from its width.
    fn signed(self) -> i64 {
        let shift = 64 - self.width.clamp(1, 64);
        ((self.bits << shift) as i64) >> shift
    }
}

/// The low `width` bits.
fn mask(width: u32) -> u64 {
    match width {
        0 => 0,
        w if w >= 64 => u64::MAX,
        w => (1 << w) - 1,
    }
}

/// Specializes `module` as a stage with `spec` compiles it and drops the code NIR
/// would drop (see the module's documentation). The module is only read afterwards:
/// it is not kept valid SPIR-V (a phi may name a block that is gone).
///
/// Returns a fingerprint of what the specialization made of the module: the functions
/// and blocks left, and the value of each specialization constant (or value made of
/// them) that what is left reads. NVK's runtime keys a compiled shader by a hash of
/// its NIR (`vk_pipeline_precomp_shader`'s BLAKE3 of the serialized NIR, which
/// `vk_graphics_pipeline_compile_shaders` hashes into the shader's key), not of the
/// specialization data: two stages of one module whose specializations differ only
/// in constants the stage does not read compile to one shader, and have one
/// fingerprint here.
pub fn specialize(module: &mut Module, spec: &Specialization<'_>) -> u64 {
    let widths = scalar_widths(module);
    let spec_ids: Map<Word, u32> = super::decorated(module, Decoration::SpecId)
        .into_iter()
        .filter_map(|(target, value)| match value {
            Some(Operand::LiteralBit32(id)) => Some((target, id)),
            _ => None,
        })
        .collect();
    let specialized: Set<Word> = module
        .types_global_values
        .iter()
        .filter(|i| is_specialization_constant(i.class.opcode))
        .filter_map(|i| i.result_id)
        .collect();
    let mut known: Map<Word, Value> = Map::default();
    for i in module.types_global_values.iter_mut() {
        specialize_global(i, spec, &spec_ids, &widths, &mut known);
    }
    for function in module.functions.iter_mut() {
        fold_function(function, &widths, &mut known);
        remove_unreachable_blocks(function);
    }
    remove_uncalled_functions(module);
    fingerprint(module, &specialized, &known, spec)
}

/// Whether `op` declares a specialization constant or a value made of them.
fn is_specialization_constant(op: Op) -> bool {
    matches!(
        op,
        Op::SpecConstant
            | Op::SpecConstantTrue
            | Op::SpecConstantFalse
            | Op::SpecConstantOp
            | Op::SpecConstantComposite
    )
}

/// The fingerprint [`specialize`] returns: the functions and blocks left, and each
/// specialized value the instructions left read (a value not worked out here stands
/// for the whole specialization data).
fn fingerprint(
    module: &Module,
    specialized: &Set<Word>,
    known: &Map<Word, Value>,
    spec: &Specialization<'_>,
) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for function in &module.functions {
        function
            .def
            .as_ref()
            .and_then(|d| d.result_id)
            .hash(&mut hasher);
        for block in &function.blocks {
            block
                .label
                .as_ref()
                .and_then(|l| l.result_id)
                .hash(&mut hasher);
            let read = block
                .instructions
                .iter()
                .flat_map(super::liveness::id_operands);
            for value in read.filter(|id| specialized.contains(id)) {
                value.hash(&mut hasher);
                match known.get(&value) {
                    Some(v) => (v.bits, v.width).hash(&mut hasher),
                    None => {
                        spec.entries.hash(&mut hasher);
                        spec.data.hash(&mut hasher);
                    }
                }
            }
        }
    }
    hasher.finish()
}

/// The width of each scalar integer or boolean type, by id.
fn scalar_widths(module: &Module) -> Map<Word, u32> {
    module
        .types_global_values
        .iter()
        .filter_map(|i| {
            let width = match (i.class.opcode, i.operands.first()) {
                (Op::TypeBool, _) => 1,
                (Op::TypeInt, Some(Operand::LiteralBit32(w))) => *w,
                _ => return None,
            };
            Some((i.result_id?, width))
        })
        .collect()
}

/// Gives a global constant its value: a specialization constant the stage's (or its
/// default), rewritten as an ordinary constant; an `OpSpecConstantOp` evaluated where
/// its operands are known, rewritten as the constant it makes.
fn specialize_global(
    i: &mut Instruction,
    spec: &Specialization<'_>,
    spec_ids: &Map<Word, u32>,
    widths: &Map<Word, u32>,
    known: &mut Map<Word, Value>,
) {
    let Some(result) = i.result_id else { return };
    let width = i.result_type.and_then(|t| widths.get(&t).copied());
    let given = spec_ids.get(&result).and_then(|id| spec.value(*id));
    let value = match i.class.opcode {
        Op::ConstantTrue => Some(Value::boolean(true)),
        Op::ConstantFalse => Some(Value::boolean(false)),
        Op::Constant => width.and_then(|w| Some(Value::new(literal(i.operands.first()?)?, w))),
        Op::SpecConstantTrue | Op::SpecConstantFalse => {
            // A boolean's value is a VkBool32: anything but zero is true.
            let default = i.class.opcode == Op::SpecConstantTrue;
            let value = given.map_or(default, |v| v & 0xffff_ffff != 0);
            *i = constant_bool(i.result_type, result, value);
            Some(Value::boolean(value))
        }
        Op::SpecConstant => {
            let default = i.operands.first().and_then(literal);
            let bits = given.or(default);
            if let Some(bits) = bits {
                // A float takes its bits as they are; only integers are evaluated.
                let stored = match i.operands.first() {
                    Some(Operand::LiteralBit64(_)) => Operand::LiteralBit64(bits),
                    _ => Operand::LiteralBit32(bits as u32),
                };
                *i = Instruction::new(Op::Constant, i.result_type, Some(result), vec![stored]);
            }
            width.zip(bits).map(|(w, b)| Value::new(b, w))
        }
        Op::SpecConstantOp => {
            let Some(Operand::LiteralSpecConstantOpInteger(op)) = i.operands.first() else {
                return;
            };
            let operands = i.operands[1..].iter().map(|o| match o {
                Operand::IdRef(id) => known.get(id).copied(),
                _ => None,
            });
            let value = width.and_then(|w| evaluate(*op, w, operands));
            if let Some(v) = value {
                *i = match v.width {
                    1 => constant_bool(i.result_type, result, v.bits != 0),
                    w if w > 32 => Instruction::new(
                        Op::Constant,
                        i.result_type,
                        Some(result),
                        vec![Operand::LiteralBit64(v.bits)],
                    ),
                    _ => Instruction::new(
                        Op::Constant,
                        i.result_type,
                        Some(result),
                        vec![Operand::LiteralBit32(v.bits as u32)],
                    ),
                };
            }
            value
        }
        _ => None,
    };
    if let Some(v) = value {
        known.insert(result, v);
    }
}

/// `OpConstantTrue` or `OpConstantFalse`.
fn constant_bool(result_type: Option<Word>, result: Word, value: bool) -> Instruction {
    let op = match value {
        true => Op::ConstantTrue,
        false => Op::ConstantFalse,
    };
    Instruction::new(op, result_type, Some(result), Vec::new())
}

/// A literal number's bits.
fn literal(o: &Operand) -> Option<u64> {
    match o {
        Operand::LiteralBit32(v) => Some(u64::from(*v)),
        Operand::LiteralBit64(v) => Some(*v),
        _ => None,
    }
}

/// Evaluates the integer or logical operation `op` on `operands`, giving a result of
/// `width` bits: `None` where an operand is not known, the operation is not one of
/// these, or its result is undefined (a division by zero, a shift past the width).
fn evaluate(op: Op, width: u32, operands: impl Iterator<Item = Option<Value>>) -> Option<Value> {
    let v: Vec<Value> = operands.collect::<Option<_>>()?;
    let a = *v.first()?;
    let b = v.get(1).copied();
    let int = |bits: u64| Some(Value::new(bits, width));
    let boolean = |b: bool| Some(Value::boolean(b));
    let shift = |b: Option<Value>| b.map(|b| b.bits).filter(|s| *s < u64::from(a.width));
    match op {
        Op::IAdd => int(a.bits.wrapping_add(b?.bits)),
        Op::ISub => int(a.bits.wrapping_sub(b?.bits)),
        Op::IMul => int(a.bits.wrapping_mul(b?.bits)),
        Op::UDiv => int(a.bits.checked_div(b?.bits)?),
        Op::UMod => int(a.bits.checked_rem(b?.bits)?),
        Op::SDiv => int(a.signed().checked_div(b?.signed())? as u64),
        Op::SRem => int(a.signed().checked_rem(b?.signed())? as u64),
        Op::SMod => {
            let (x, y) = (a.signed(), b?.signed());
            let r = x.checked_rem(y)?;
            int((if r != 0 && (r < 0) != (y < 0) {
                r + y
            } else {
                r
            }) as u64)
        }
        Op::SNegate => int(a.signed().wrapping_neg() as u64),
        Op::Not => int(!a.bits),
        Op::BitwiseAnd => int(a.bits & b?.bits),
        Op::BitwiseOr => int(a.bits | b?.bits),
        Op::BitwiseXor => int(a.bits ^ b?.bits),
        Op::ShiftLeftLogical => int(a.bits << shift(b)?),
        Op::ShiftRightLogical => int(a.bits >> shift(b)?),
        Op::ShiftRightArithmetic => int((a.signed() >> shift(b)?) as u64),
        Op::UConvert => int(a.bits),
        Op::SConvert => int(a.signed() as u64),
        Op::IEqual | Op::LogicalEqual => boolean(a.bits == b?.bits),
        Op::INotEqual | Op::LogicalNotEqual => boolean(a.bits != b?.bits),
        Op::ULessThan => boolean(a.bits < b?.bits),
        Op::ULessThanEqual => boolean(a.bits <= b?.bits),
        Op::UGreaterThan => boolean(a.bits > b?.bits),
        Op::UGreaterThanEqual => boolean(a.bits >= b?.bits),
        Op::SLessThan => boolean(a.signed() < b?.signed()),
        Op::SLessThanEqual => boolean(a.signed() <= b?.signed()),
        Op::SGreaterThan => boolean(a.signed() > b?.signed()),
        Op::SGreaterThanEqual => boolean(a.signed() >= b?.signed()),
        Op::LogicalAnd => boolean(a.bits != 0 && b?.bits != 0),
        Op::LogicalOr => boolean(a.bits != 0 || b?.bits != 0),
        Op::LogicalNot => boolean(a.bits == 0),
        Op::Select => Some(if a.bits != 0 { b? } else { *v.get(2)? }),
        Op::CopyObject => Some(a),
        _ => None,
    }
}

/// Evaluates the function's integer and logical instructions whose operands are known,
/// in block order (SPIR-V defines a value before the blocks it dominates), and turns
/// each conditional branch or switch on a known value into a branch to the target it
/// takes.
fn fold_function(function: &mut Function, widths: &Map<Word, u32>, known: &mut Map<Word, Value>) {
    for block in function.blocks.iter_mut() {
        for i in block.instructions.iter_mut() {
            match i.class.opcode {
                Op::BranchConditional => {
                    let taken = id(i, 0)
                        .and_then(|c| known.get(&c))
                        .and_then(|c| id(i, if c.bits != 0 { 1 } else { 2 }));
                    if let Some(target) = taken {
                        *i = branch(target);
                    }
                }
                Op::Switch => {
                    if let Some(target) = switch_target(i, known) {
                        *i = branch(target);
                    }
                }
                _ => {
                    let (Some(result), Some(width)) = (
                        i.result_id,
                        i.result_type.and_then(|t| widths.get(&t).copied()),
                    ) else {
                        continue;
                    };
                    let operands = i.operands.iter().map(|o| match o {
                        Operand::IdRef(id) => known.get(id).copied(),
                        _ => None,
                    });
                    if let Some(v) = evaluate(i.class.opcode, width, operands) {
                        known.insert(result, v);
                    }
                }
            }
        }
    }
}

/// `OpBranch` to `target`.
fn branch(target: Word) -> Instruction {
    Instruction::new(Op::Branch, None, None, vec![Operand::IdRef(target)])
}

/// The target a switch on a known selector takes: the case of its value, else the
/// default.
fn switch_target(i: &Instruction, known: &Map<Word, Value>) -> Option<Word> {
    let selector = known.get(&id(i, 0)?)?;
    let default = id(i, 1)?;
    let cases = i.operands.get(2..).unwrap_or_default();
    let case = cases.chunks_exact(2).find_map(|pair| match pair {
        [value, Operand::IdRef(target)] => {
            let v = literal(value)? & mask(selector.width);
            (v == selector.bits).then_some(*target)
        }
        _ => None,
    });
    Some(case.unwrap_or(default))
}

/// The labels a block's terminator may branch to.
fn successors(block: &Block) -> Vec<Word> {
    let Some(last) = block.instructions.last() else {
        return Vec::new();
    };
    match last.class.opcode {
        // A conditional branch's first id is its condition, a switch's its selector:
        // not labels, and no block has their ids.
        Op::Branch | Op::BranchConditional | Op::Switch => {
            super::liveness::id_operands(last).collect()
        }
        _ => Vec::new(),
    }
}

/// Removes the blocks no branch from the function's first block reaches.
fn remove_unreachable_blocks(function: &mut Function) {
    let label = |b: &Block| b.label.as_ref().and_then(|l| l.result_id);
    let at: Map<Word, usize> = function
        .blocks
        .iter()
        .enumerate()
        .filter_map(|(n, b)| Some((label(b)?, n)))
        .collect();
    let mut reached = vec![false; function.blocks.len()];
    let mut pending = vec![0];
    while let Some(n) = pending.pop() {
        if n >= reached.len() || reached[n] {
            continue;
        }
        reached[n] = true;
        pending.extend(
            successors(&function.blocks[n])
                .into_iter()
                .filter_map(|t| at.get(&t).copied()),
        );
    }
    let mut n = 0;
    function.blocks.retain(|_| {
        n += 1;
        reached[n - 1]
    });
}

/// Removes the functions no entry point calls, directly or through others.
fn remove_uncalled_functions(module: &mut Module) {
    let by_id: Map<Word, usize> = module
        .functions
        .iter()
        .enumerate()
        .filter_map(|(n, f)| Some((f.def.as_ref()?.result_id?, n)))
        .collect();
    let mut called: Set<Word> = Set::default();
    let mut pending: Vec<Word> = module
        .entry_points
        .iter()
        .filter_map(|e| id(e, 1))
        .collect();
    while let Some(f) = pending.pop() {
        if !called.insert(f) {
            continue;
        }
        let Some(&n) = by_id.get(&f) else { continue };
        for i in module.functions[n]
            .blocks
            .iter()
            .flat_map(|b| b.instructions.iter())
        {
            if i.class.opcode == Op::FunctionCall {
                pending.extend(id(i, 0));
            }
        }
    }
    module.functions.retain(|f| {
        f.def
            .as_ref()
            .and_then(|d| d.result_id)
            .is_some_and(|id| called.contains(&id))
    });
}
