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
fn uniform_block_variables(module: &Module) -> Vec<Word> {
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

/// Vertices the geometry function emits, when its code has one path.
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
    if ops().any(|o| o == Op::LoopMerge) {
        return GsVertexCount::Unknown("loops");
    }
    if ops().any(|o| matches!(o, Op::BranchConditional | Op::Switch)) {
        return GsVertexCount::Unknown("branches");
    }
    GsVertexCount::Static(
        ops()
            .filter(|o| matches!(o, Op::EmitVertex | Op::EmitStreamVertex))
            .count() as u32,
    )
}
