//! What a module uses that the passes care about: its stages, the ViewIndex built-in,
//! uniform-buffer loads (through constant or dynamic indices), and for geometry shaders
//! how many vertices they emit when that is known without running them.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Module, Operand};
use rspirv::spirv::{BuiltIn, Decoration, ExecutionModel, Op, StorageClass, Word};

use super::{decorated, id};

/// A geometry shader's emitted vertex count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GsVertexCount {
    /// Known from the code alone.
    Static(u32),
    /// Depends on control flow or data; why.
    Unknown(&'static str),
}

/// What [`analyze`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Findings {
    /// The entry points' stages (`Vertex`, `Fragment`...).
    pub stages: Vec<String>,
    /// Whether the ViewIndex built-in is read.
    pub view_index: bool,
    /// Uniform-buffer loads through constant indices only.
    pub ubo_loads_constant: usize,
    /// Uniform-buffer loads with a dynamic index on the way.
    pub ubo_loads_dynamic: usize,
    /// For a geometry shader, its vertex count.
    pub gs_vertex_count: Option<GsVertexCount>,
}

/// Looks at `module`.
pub fn analyze(module: &Module) -> Findings {
    let mut f = Findings {
        stages: module
            .entry_points
            .iter()
            .filter_map(|e| match e.operands.first() {
                Some(Operand::ExecutionModel(m)) => Some(format!("{m:?}")),
                _ => None,
            })
            .collect(),
        ..Findings::default()
    };
    let view_index_vars: HashSet<Word> = decorated(module, Decoration::BuiltIn)
        .into_iter()
        .filter(|(_, v)| matches!(v, Some(Operand::BuiltIn(BuiltIn::ViewIndex))))
        .map(|(id, _)| id)
        .collect();
    let ubos = uniform_block_variables(module);
    let constants: HashSet<Word> = module
        .types_global_values
        .iter()
        .filter(|i| {
            matches!(
                i.class.opcode,
                Op::Constant | Op::SpecConstant | Op::ConstantNull
            )
        })
        .filter_map(|i| i.result_id)
        .collect();
    // Pointers into uniform blocks: id → whether every index on the way is constant.
    let mut chains: HashMap<Word, bool> = ubos.iter().map(|v| (*v, true)).collect();
    for inst in module
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
    {
        match inst.class.opcode {
            Op::AccessChain | Op::InBoundsAccessChain => {
                let Some(&base_const) = id(inst, 0).and_then(|b| chains.get(&b)) else {
                    continue;
                };
                let all_const = inst.operands[1..]
                    .iter()
                    .all(|o| matches!(o, Operand::IdRef(i) if constants.contains(i)));
                if let Some(r) = inst.result_id {
                    chains.insert(r, base_const && all_const);
                }
            }
            Op::Load => {
                let Some(ptr) = id(inst, 0) else { continue };
                if view_index_vars.contains(&ptr) {
                    f.view_index = true;
                }
                match chains.get(&ptr) {
                    Some(true) => f.ubo_loads_constant += 1,
                    Some(false) => f.ubo_loads_dynamic += 1,
                    None => {}
                }
            }
            _ => {}
        }
    }
    f.gs_vertex_count = geometry_entry(module).map(|func| gs_vertex_count(module, func));
    f
}

/// Variables of the Uniform storage class whose type is a Block-decorated structure
/// (or an array of them).
pub(crate) fn uniform_block_variables(module: &Module) -> Vec<Word> {
    let blocks: HashSet<Word> = decorated(module, Decoration::Block)
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let arrays: HashMap<Word, Word> = module
        .types_global_values
        .iter()
        .filter(|i| matches!(i.class.opcode, Op::TypeArray | Op::TypeRuntimeArray))
        .filter_map(|i| Some((i.result_id?, id(i, 0)?)))
        .collect();
    let is_block =
        |t: Word| blocks.contains(&t) || arrays.get(&t).is_some_and(|e| blocks.contains(e));
    let pointers: HashMap<Word, Word> = module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::TypePointer)
        .filter(|i| {
            matches!(
                i.operands.first(),
                Some(Operand::StorageClass(StorageClass::Uniform))
            )
        })
        .filter_map(|i| Some((i.result_id?, id(i, 1)?)))
        .collect();
    module
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::Variable)
        .filter(|i| {
            matches!(
                i.operands.first(),
                Some(Operand::StorageClass(StorageClass::Uniform))
            )
        })
        .filter(|i| {
            i.result_type
                .and_then(|t| pointers.get(&t))
                .is_some_and(|p| is_block(*p))
        })
        .filter_map(|i| i.result_id)
        .collect()
}

/// The function of the module's geometry entry point.
fn geometry_entry(module: &Module) -> Option<Word> {
    module
        .entry_points
        .iter()
        .find(|e| {
            matches!(
                e.operands.first(),
                Some(Operand::ExecutionModel(ExecutionModel::Geometry))
            )
        })
        .and_then(|e| id(e, 1))
}

/// Vertices the geometry function emits, when the code decides it alone: one path, or
/// one counted loop with a constant start, bound and step (as GLSL's `for` compiles).
fn gs_vertex_count(module: &Module, function: Word) -> GsVertexCount {
    let Some(f) = module
        .functions
        .iter()
        .find(|f| f.def.as_ref().and_then(|d| d.result_id) == Some(function))
    else {
        return GsVertexCount::Unknown("no entry function");
    };
    let ops = || {
        f.blocks
            .iter()
            .flat_map(|b| b.instructions.iter())
            .map(|i| i.class.opcode)
    };
    if ops().any(|o| o == Op::FunctionCall) {
        return GsVertexCount::Unknown("calls functions");
    }
    let emits = |b: &rspirv::dr::Block| {
        b.instructions
            .iter()
            .filter(|i| matches!(i.class.opcode, Op::EmitVertex | Op::EmitStreamVertex))
            .count() as u32
    };
    let loops = ops().filter(|o| *o == Op::LoopMerge).count();
    let conditionals = ops()
        .filter(|o| matches!(o, Op::BranchConditional | Op::Switch))
        .count();
    match (loops, conditionals) {
        (0, 0) => GsVertexCount::Static(f.blocks.iter().map(emits).sum()),
        (0, _) => GsVertexCount::Unknown("branches"),
        (1, 1) => match counted_loop(module, f) {
            Some((header, merge, trips)) => {
                let inside: u32 = f.blocks[header..merge].iter().map(emits).sum();
                let outside: u32 = f.blocks[..header]
                    .iter()
                    .chain(&f.blocks[merge..])
                    .map(emits)
                    .sum();
                GsVertexCount::Static(outside + trips * inside)
            }
            None => GsVertexCount::Unknown("a loop whose trip count depends on data"),
        },
        _ => GsVertexCount::Unknown("loops with branches"),
    }
}

/// For a function with one loop: the header's and merge block's positions and the trip
/// count, when the loop counts a function variable from a constant to a constant bound
/// by a constant step.
fn counted_loop(module: &Module, f: &rspirv::dr::Function) -> Option<(usize, usize, u32)> {
    let constant = |id: Word| -> Option<i64> {
        let c = module
            .types_global_values
            .iter()
            .find(|i| i.class.opcode == Op::Constant && i.result_id == Some(id))?;
        match c.operands.first()? {
            Operand::LiteralBit32(v) => Some(i64::from(*v as i32)),
            _ => None,
        }
    };
    let position = |label: Word| {
        f.blocks
            .iter()
            .position(|b| b.label.as_ref().and_then(|l| l.result_id) == Some(label))
    };
    let all = || f.blocks.iter().flat_map(|b| b.instructions.iter());
    let merge_inst = all().find(|i| i.class.opcode == Op::LoopMerge)?;
    let header = f.blocks.iter().position(|b| {
        b.instructions
            .iter()
            .any(|i| i.class.opcode == Op::LoopMerge)
    })?;
    let merge = position(id(merge_inst, 0)?)?;
    // The exit test: `cond = cmp (load var) constant` then a conditional branch.
    let branch = all().find(|i| i.class.opcode == Op::BranchConditional)?;
    let cond = all().find(|i| i.result_id == id(branch, 0))?;
    let load = all().find(|i| i.result_id == id(cond, 0) && i.class.opcode == Op::Load)?;
    let var = id(load, 0)?;
    let bound = constant(id(cond, 1)?)?;
    // The variable is stored twice: a constant before the loop, `var + step` in it.
    let stores: Vec<_> = all()
        .filter(|i| i.class.opcode == Op::Store && id(i, 0) == Some(var))
        .collect();
    if stores.len() != 2 {
        return None;
    }
    let start = constant(id(stores[0], 1)?)?;
    let add = all().find(|i| i.result_id == id(stores[1], 1) && i.class.opcode == Op::IAdd)?;
    let step = constant(id(add, 1)?)?;
    if step <= 0 {
        return None;
    }
    let trips = match cond.class.opcode {
        Op::SLessThan | Op::ULessThan => (bound - start + step - 1).div_euclid(step),
        Op::SLessThanEqual | Op::ULessThanEqual => (bound - start + step).div_euclid(step),
        _ => return None,
    };
    Some((header, merge, u32::try_from(trips.max(0)).ok()?))
}
