//! The constant data NIR gives a shader: tables a shader builds from constants and reads
//! at an index it computes, which `nir_opt_large_constants` moves out of registers into
//! a buffer NVK uploads beside the code and binds as constant buffer 1
//! (`NVK_CBUF_TYPE_SHADER_DATA`).
//!
//! NVK 25.0.7 runs the pass in nvk_lower_nir (threshold 32 bytes, natural sizes), after
//! NAK's preprocessing has turned every variable read only at constant indices into SSA
//! values: what reaches the pass are function-local variables (private globals become
//! locals) that something reads at an index known only when the shader runs. A
//! variable is moved when every store to it is a constant, at constant indices, in one
//! block, before any read, and it is larger than 32 bytes — or an array of 4 to 64
//! integers (or integral floats) whose values pack into 64 bits (`get_small_constant`):
//! its loads become shifts of an immediate, but its bytes are still allocated in the
//! constant data, so the shader still gets the buffer. Equal tables share their bytes.
//!
//! Read from SPIR-V rather than NIR, three things are approximated: an index counts as
//! known only when the shader runs if it derives from a load of shader input or memory
//! (a loop counter is taken as unrolled); a variable whose pointer goes to a function
//! call, a copy or a pointer operation is left in place; and the stores must all be in
//! one SPIR-V block.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Function, Instruction, Module, Operand};
use rspirv::spirv::{Op, StorageClass, Word};

/// `nir_opt_large_constants`' threshold in nvk_lower_nir: larger variables are moved.
const THRESHOLD_BYTES: u32 = 32;

/// The constants stored into a variable, each with its access path (the constant
/// indices from the variable down to what was stored; none for the whole variable).
type Stores = Vec<(Vec<Word>, Word)>;

/// What one candidate variable was found to be.
#[derive(Default)]
struct Candidate {
    /// Its pointee type.
    pointee: Word,
    /// Every store so far was a constant at constant indices, before any read.
    constant: bool,
    /// The constants stored into it.
    stores: Stores,
    /// The block (function, block index) its stores are in.
    store_block: Option<(usize, usize)>,
    /// It was read.
    read: bool,
    /// It was read at an index known only when the shader runs.
    read_at_runtime_index: bool,
}

/// Bytes of constant data NIR makes for `module`'s shaders (`nir->constant_data_size`):
/// 0 when nothing is moved. `kept_loops` gives a function's loops that NIR does not
/// unroll (their blocks, in the function's order): what they count changes while the
/// shader runs. Mirrors nir_opt_large_constants as nvk_lower_nir runs it.
pub fn constant_data_bytes(
    module: &Module,
    kept_loops: &dyn Fn(&Function) -> Vec<std::ops::Range<usize>>,
) -> u32 {
    let globals: HashMap<Word, &Instruction> = module
        .types_global_values
        .iter()
        .filter_map(|i| Some((i.result_id?, i)))
        .collect();
    let mut candidates: HashMap<Word, Candidate> = HashMap::new();
    let mut storage: HashMap<Word, StorageClass> = HashMap::new();
    for inst in &module.types_global_values {
        if inst.class.opcode != Op::Variable {
            continue;
        }
        let (Some(var), Some(class)) = (inst.result_id, storage_class(inst)) else {
            continue;
        };
        storage.insert(var, class);
        if class == StorageClass::Private {
            let mut candidate = new_candidate(&globals, inst);
            // An initializer is a constant store before the entry point's first block.
            if let Some(init) = super::id(inst, 1) {
                candidate.constant &= is_constant(&globals, init);
                candidate.stores.push((Vec::new(), init));
            }
            candidates.insert(var, candidate);
        }
    }
    for (f, function) in module.functions.iter().enumerate() {
        for (b, block) in function.blocks.iter().enumerate() {
            for inst in &block.instructions {
                if inst.class.opcode != Op::Variable {
                    continue;
                }
                let Some(var) = inst.result_id else { continue };
                storage.insert(var, StorageClass::Function);
                let mut candidate = new_candidate(&globals, inst);
                if let Some(init) = super::id(inst, 1) {
                    candidate.constant &= is_constant(&globals, init);
                    candidate.stores.push((Vec::new(), init));
                    candidate.store_block = Some((f, b));
                }
                candidates.insert(var, candidate);
            }
        }
    }
    // Only arrays of scalars can be moved: a module without one needs no more looking.
    candidates.retain(|_, c| is_scalar_array(&globals, c.pointee));
    if candidates.is_empty() {
        return 0;
    }
    let runtime = runtime_values(module, &globals, &storage, kept_loops);
    // Access chains: result → (root variable, indices).
    let mut chains: HashMap<Word, (Word, Vec<Word>)> = HashMap::new();
    for (f, function) in module.functions.iter().enumerate() {
        for (b, block) in function.blocks.iter().enumerate() {
            for inst in &block.instructions {
                walk(
                    inst,
                    (f, b),
                    &globals,
                    &runtime,
                    &mut chains,
                    &mut candidates,
                );
            }
        }
    }
    let mut moved: Vec<(u32, u32, Stores)> = candidates
        .into_values()
        .filter(|c| c.constant && c.read && c.read_at_runtime_index && !c.stores.is_empty())
        .filter_map(|c| {
            let (size, align) = natural_size_align(&globals, c.pointee)?;
            let small = is_small(&globals, c.pointee, &c.stores);
            (size > THRESHOLD_BYTES || small).then_some((size, align, c.stores))
        })
        .collect();
    // Sorted by size, equal tables next to each other sharing their bytes
    // (var_info_cmp).
    moved.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.2.cmp(&b.2)));
    let mut total = 0u32;
    for (i, (size, align, stores)) in moved.iter().enumerate() {
        if i > 0 && moved[i - 1].0 == *size && moved[i - 1].2 == *stores {
            continue;
        }
        total = total
            .next_multiple_of((*align).max(1))
            .saturating_add(*size);
    }
    total
}

/// A candidate for variable instruction `inst`, its pointee type read from its pointer
/// type.
fn new_candidate(globals: &HashMap<Word, &Instruction>, inst: &Instruction) -> Candidate {
    let pointee = inst
        .result_type
        .and_then(|t| globals.get(&t))
        .and_then(|p| super::id(p, 1))
        .unwrap_or(0);
    Candidate {
        pointee,
        constant: true,
        ..Candidate::default()
    }
}

/// A variable's storage class.
fn storage_class(inst: &Instruction) -> Option<StorageClass> {
    match inst.operands.first() {
        Some(Operand::StorageClass(class)) => Some(*class),
        _ => None,
    }
}

/// Whether `id` is a constant NIR sees as one (specialization constants have their
/// values by then).
fn is_constant(globals: &HashMap<Word, &Instruction>, id: Word) -> bool {
    globals.get(&id).is_some_and(|i| {
        matches!(
            i.class.opcode,
            Op::Constant
                | Op::ConstantTrue
                | Op::ConstantFalse
                | Op::ConstantComposite
                | Op::ConstantNull
                | Op::SpecConstant
                | Op::SpecConstantTrue
                | Op::SpecConstantFalse
                | Op::SpecConstantComposite
        )
    })
}

/// Notes what `inst`, in block `at`, does to the candidates: the access chains it
/// makes, the stores and loads through them, and any other use of a candidate's
/// pointer (which leaves the variable in place: `nir_deref_instr_has_complex_use`).
fn walk(
    inst: &Instruction,
    at: (usize, usize),
    globals: &HashMap<Word, &Instruction>,
    runtime: &HashSet<Word>,
    chains: &mut HashMap<Word, (Word, Vec<Word>)>,
    candidates: &mut HashMap<Word, Candidate>,
) {
    let root_of = |chains: &HashMap<Word, (Word, Vec<Word>)>, ptr: Word| -> (Word, Vec<Word>) {
        chains.get(&ptr).cloned().unwrap_or((ptr, Vec::new()))
    };
    match inst.class.opcode {
        Op::AccessChain | Op::InBoundsAccessChain => {
            let (Some(result), Some(base)) = (inst.result_id, super::id(inst, 0)) else {
                return;
            };
            let (root, mut indices) = root_of(chains, base);
            indices.extend(inst.operands.iter().skip(1).filter_map(|o| match o {
                Operand::IdRef(i) => Some(*i),
                _ => None,
            }));
            chains.insert(result, (root, indices));
        }
        Op::Store => {
            let (Some(ptr), Some(value)) = (super::id(inst, 0), super::id(inst, 1)) else {
                return;
            };
            let (root, indices) = root_of(chains, ptr);
            if let Some(c) = candidates.get_mut(&root) {
                let constant_path = indices.iter().all(|i| is_constant(globals, *i));
                let same_block = c.store_block.is_none_or(|b| b == at);
                if !constant_path || !is_constant(globals, value) || c.read || !same_block {
                    c.constant = false;
                }
                c.store_block = Some(at);
                c.stores.push((indices, value));
            }
            mark_other_uses(inst, &[ptr], chains, candidates);
        }
        Op::Load => {
            let Some(ptr) = super::id(inst, 0) else {
                return;
            };
            let (root, indices) = root_of(chains, ptr);
            if let Some(c) = candidates.get_mut(&root) {
                c.read = true;
                if indices.iter().any(|i| runtime.contains(i)) {
                    c.read_at_runtime_index = true;
                }
                // A read outside the stores' block is taken as dominated only where
                // the stores are in a function's first block.
                if c.store_block.is_some_and(|(f, b)| b != 0 && (f, b) != at) {
                    c.constant = false;
                }
            }
        }
        _ => mark_other_uses(inst, &[], chains, candidates),
    }
}

/// Leaves in place every candidate whose pointer `inst` uses other than as `allowed`.
fn mark_other_uses(
    inst: &Instruction,
    allowed: &[Word],
    chains: &HashMap<Word, (Word, Vec<Word>)>,
    candidates: &mut HashMap<Word, Candidate>,
) {
    // Debug and GLSL.std.450 instructions take values, not a table's pointer.
    if matches!(
        inst.class.opcode,
        Op::Variable | Op::Name | Op::Decorate | Op::ExtInst | Op::Line | Op::NoLine
    ) {
        return;
    }
    for operand in &inst.operands {
        let Operand::IdRef(used) = operand else {
            continue;
        };
        if allowed.contains(used) {
            continue;
        }
        let root = chains.get(used).map_or(*used, |(root, _)| *root);
        if let Some(c) = candidates.get_mut(&root) {
            c.constant = false;
        }
    }
}

/// The values known only when the shader runs: loads of inputs and memory, function
/// parameters, image and atomic results, what a loop NIR keeps changes from one
/// iteration to the next, and whatever is computed from them — through function
/// variables too (a variable is as known as what is stored into it).
fn runtime_values(
    module: &Module,
    globals: &HashMap<Word, &Instruction>,
    storage: &HashMap<Word, StorageClass>,
    kept_loops: &dyn Fn(&Function) -> Vec<std::ops::Range<usize>>,
) -> HashSet<Word> {
    // Each instruction with whether a kept loop holds it, and whether it is such a
    // loop's header.
    let mut instructions: Vec<(&Instruction, bool, bool)> = Vec::new();
    for function in &module.functions {
        let kept = kept_loops(function);
        instructions.extend(function.parameters.iter().map(|p| (p, false, false)));
        for (b, block) in function.blocks.iter().enumerate() {
            let looped = kept.iter().any(|r| r.contains(&b));
            let header = kept.iter().any(|r| r.start == b);
            instructions.extend(block.instructions.iter().map(|i| (i, looped, header)));
        }
    }
    let mut chain_root: HashMap<Word, Word> = HashMap::new();
    for (inst, _, _) in &instructions {
        if matches!(inst.class.opcode, Op::AccessChain | Op::InBoundsAccessChain) {
            if let (Some(r), Some(base)) = (inst.result_id, super::id(inst, 0)) {
                let root = chain_root.get(&base).copied().unwrap_or(base);
                chain_root.insert(r, root);
            }
        }
    }
    let root = |ptr: Word| chain_root.get(&ptr).copied().unwrap_or(ptr);
    let local = |ptr: Word| {
        matches!(
            storage.get(&root(ptr)),
            Some(StorageClass::Function | StorageClass::Private)
        )
    };
    let mut runtime: HashSet<Word> = HashSet::new();
    let mut varying_locals: HashSet<Word> = HashSet::new();
    // Each round only adds; a value's status follows its operands', so rounds end once
    // nothing changes (bounded by the instruction count).
    for _ in 0..=instructions.len() {
        let before = runtime.len() + varying_locals.len();
        for &(inst, looped, header) in &instructions {
            let op = inst.class.opcode;
            let from_runtime = inst.operands.iter().any(|o| match o {
                Operand::IdRef(i) => runtime.contains(i),
                _ => false,
            });
            if op == Op::Store {
                let (Some(ptr), Some(value)) = (super::id(inst, 0), super::id(inst, 1)) else {
                    continue;
                };
                // A variable a kept loop stores to holds another value each iteration.
                if local(ptr) && (looped || runtime.contains(&value) || from_runtime) {
                    varying_locals.insert(root(ptr));
                }
                continue;
            }
            let Some(result) = inst.result_id else {
                continue;
            };
            let produced = match op {
                Op::FunctionParameter => true,
                Op::Phi => header || from_runtime,
                Op::Load => {
                    let ptr = super::id(inst, 0).unwrap_or(0);
                    !local(ptr) || varying_locals.contains(&root(ptr)) || from_runtime
                }
                Op::AccessChain | Op::InBoundsAccessChain => from_runtime,
                _ if reads_memory(op) => true,
                _ => from_runtime && !globals.contains_key(&result),
            };
            if produced {
                runtime.insert(result);
            }
        }
        if runtime.len() + varying_locals.len() == before {
            break;
        }
    }
    runtime
}

/// Whether `op` reads memory, an image or a call's result (known only when it runs):
/// a texture instruction, an atomic, a function call.
fn reads_memory(op: Op) -> bool {
    super::cbuf_uses::texture_op(op).is_some()
        || matches!(
            op,
            Op::AtomicLoad | Op::AtomicIAdd | Op::AtomicExchange | Op::AtomicCompareExchange
        )
        || op == Op::FunctionCall
}

/// `glsl_get_natural_size_align_bytes`: scalars their own size (a bool 4 bytes),
/// vectors and matrices their components packed, arrays their elements at the
/// element's size rounded to its alignment, structures their members in order at
/// their alignments.
fn natural_size_align(globals: &HashMap<Word, &Instruction>, ty: Word) -> Option<(u32, u32)> {
    natural_size_align_at(globals, ty, 0)
}

fn natural_size_align_at(
    globals: &HashMap<Word, &Instruction>,
    ty: Word,
    depth: u32,
) -> Option<(u32, u32)> {
    if depth > 16 {
        return None;
    }
    let t = globals.get(&ty)?;
    let literal = |i: usize| match t.operands.get(i) {
        Some(Operand::LiteralBit32(v)) => Some(*v),
        _ => None,
    };
    match t.class.opcode {
        Op::TypeBool => Some((4, 4)),
        Op::TypeInt | Op::TypeFloat => {
            let bytes = literal(0)? / 8;
            Some((bytes, bytes))
        }
        Op::TypeVector | Op::TypeMatrix => {
            let (size, align) = natural_size_align_at(globals, super::id(t, 0)?, depth + 1)?;
            Some((size.checked_mul(literal(1)?)?, align))
        }
        Op::TypeArray => {
            let (size, align) = natural_size_align_at(globals, super::id(t, 0)?, depth + 1)?;
            let length = array_length(globals, super::id(t, 1)?)?;
            Some((
                size.next_multiple_of(align.max(1)).checked_mul(length)?,
                align,
            ))
        }
        Op::TypeStruct => {
            let (mut size, mut align) = (0u32, 1u32);
            for member in t.operands.iter() {
                let Operand::IdRef(m) = member else {
                    return None;
                };
                let (s, a) = natural_size_align_at(globals, *m, depth + 1)?;
                size = size.next_multiple_of(a.max(1)).checked_add(s)?;
                align = align.max(a);
            }
            Some((size.next_multiple_of(align), align))
        }
        _ => None,
    }
}

/// Whether `ty` is an array of scalars: the only tables NVK 25.0.7 gives constant data
/// (arrays of vectors it keeps out of it, whatever their size).
fn is_scalar_array(globals: &HashMap<Word, &Instruction>, ty: Word) -> bool {
    globals
        .get(&ty)
        .filter(|t| t.class.opcode == Op::TypeArray)
        .and_then(|t| super::id(t, 0))
        .and_then(|e| globals.get(&e))
        .is_some_and(|e| matches!(e.class.opcode, Op::TypeInt | Op::TypeFloat | Op::TypeBool))
}

/// An array type's length constant.
fn array_length(globals: &HashMap<Word, &Instruction>, id: Word) -> Option<u32> {
    let c = globals.get(&id)?;
    match (c.class.opcode, c.operands.first()) {
        (Op::Constant | Op::SpecConstant, Some(Operand::LiteralBit32(v))) => Some(*v),
        _ => None,
    }
}

/// Whether the variable of type `ty` with `stores` is an array NIR packs into an
/// immediate (`get_small_constant`): 4 to 64 scalars, all integers — or all integral
/// floats — whose largest value's bits, rounded up to a power of two, times the length
/// fit in 64.
fn is_small(globals: &HashMap<Word, &Instruction>, ty: Word, stores: &[(Vec<Word>, Word)]) -> bool {
    let Some(t) = globals.get(&ty) else {
        return false;
    };
    if t.class.opcode != Op::TypeArray {
        return false;
    }
    let (Some(element), Some(length)) = (super::id(t, 0), super::id(t, 1)) else {
        return false;
    };
    let Some(length) = array_length(globals, length) else {
        return false;
    };
    if !(4..=64).contains(&length) {
        return false;
    }
    let Some(e) = globals.get(&element) else {
        return false;
    };
    let float = match e.class.opcode {
        Op::TypeFloat => true,
        Op::TypeInt | Op::TypeBool => false,
        _ => return false,
    };
    let bits = match e.class.opcode {
        Op::TypeBool => 32,
        _ => match e.operands.first() {
            Some(Operand::LiteralBit32(b)) => *b,
            _ => return false,
        },
    };
    let mut values = vec![0u64; length as usize];
    for (path, value) in stores {
        match path.as_slice() {
            [] => {
                let Some(c) = globals.get(value) else {
                    return false;
                };
                match c.class.opcode {
                    Op::ConstantNull => values.iter_mut().for_each(|v| *v = 0),
                    Op::ConstantComposite | Op::SpecConstantComposite => {
                        for (i, part) in c.operands.iter().enumerate() {
                            let Operand::IdRef(part) = part else {
                                return false;
                            };
                            let Some(v) = scalar_bits(globals, *part) else {
                                return false;
                            };
                            if let Some(slot) = values.get_mut(i) {
                                *slot = v;
                            }
                        }
                    }
                    _ => return false,
                }
            }
            [index] => {
                let (Some(i), Some(v)) =
                    (array_length(globals, *index), scalar_bits(globals, *value))
                else {
                    return false;
                };
                if let Some(slot) = values.get_mut(i as usize) {
                    *slot = v;
                }
            }
            _ => return false,
        }
    }
    // Floats pack as their integer values where every one is integral (16 bits and
    // more: `is_float`); other bits pack as they are.
    let as_float = |v: u64| match bits {
        32 => f64::from(f32::from_bits(v as u32)),
        64 => f64::from_bits(v),
        _ => f64::NAN,
    };
    let integral = float
        && bits >= 16
        && values.iter().all(|v| {
            let f = as_float(*v);
            f >= 0.0 && f.fract() == 0.0 && f < 1.8e19
        });
    let packed = |v: u64| if integral { as_float(v) as u64 } else { v };
    let used_bits = values
        .iter()
        .map(|v| 64 - packed(*v).leading_zeros())
        .max()
        .unwrap_or(0)
        .next_power_of_two();
    u64::from(used_bits) * u64::from(length) <= 64
}

/// A scalar constant's bits (a bool as 0 or 1).
fn scalar_bits(globals: &HashMap<Word, &Instruction>, id: Word) -> Option<u64> {
    let c = globals.get(&id)?;
    match c.class.opcode {
        Op::ConstantTrue | Op::SpecConstantTrue => Some(1),
        Op::ConstantFalse | Op::SpecConstantFalse | Op::ConstantNull => Some(0),
        Op::Constant | Op::SpecConstant => match c.operands.as_slice() {
            [Operand::LiteralBit32(v)] => Some(u64::from(*v)),
            [Operand::LiteralBit64(v)] => Some(*v),
            _ => None,
        },
        _ => None,
    }
}
