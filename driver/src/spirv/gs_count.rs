//! Geometry-shader vertex counting (NIR's counted GS intrinsics, on SPIR-V): every
//! `OpEmitVertex` becomes a counted emit — a private counter, the emit guarded by
//! `count < OutputVertices`, the counter incremented after it — so a shader that tries
//! to emit past its declared maximum emits exactly the maximum, and the final count is
//! in the counter (named `gs_vertex_count`) for the backend to read.

use rspirv::dr::{Block, Instruction, Module, Operand};
use rspirv::spirv::{ExecutionMode, ExecutionModel, Op, SelectionControl, StorageClass, Word};

use super::{fresh_id, global, id, pointer_type, uint_constant, uint_type};

/// What the pass did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The module is as it was, and why.
    Unchanged(&'static str),
    /// This many emits are now counted; the counter's id.
    Counted {
        /// Emits rewritten.
        emits: usize,
        /// The private counter variable.
        counter: Word,
    },
}

/// Counts `module`'s geometry emits.
pub fn lower(module: &mut Module) -> Outcome {
    let Some(entry) = module.entry_points.iter().find(|e| {
        matches!(
            e.operands.first(),
            Some(Operand::ExecutionModel(ExecutionModel::Geometry))
        )
    }) else {
        return Outcome::Unchanged("not a geometry shader");
    };
    let Some(function) = id(entry, 1) else {
        return Outcome::Unchanged("no entry function");
    };
    let Some(max) = module
        .execution_modes
        .iter()
        .filter(|m| id(m, 0) == Some(function))
        .find_map(|m| match (m.operands.get(1), m.operands.get(2)) {
            (
                Some(Operand::ExecutionMode(ExecutionMode::OutputVertices)),
                Some(Operand::LiteralBit32(n)),
            ) => Some(*n),
            _ => None,
        })
    else {
        return Outcome::Unchanged("no OutputVertices");
    };
    let Some(fi) = module
        .functions
        .iter()
        .position(|f| f.def.as_ref().and_then(|d| d.result_id) == Some(function))
    else {
        return Outcome::Unchanged("no entry function");
    };
    let emits_in_headers = module.functions[fi].blocks.iter().any(|b| {
        b.instructions
            .iter()
            .any(|i| i.class.opcode == Op::LoopMerge)
            && b.instructions
                .iter()
                .any(|i| i.class.opcode == Op::EmitVertex)
    });
    if emits_in_headers {
        return Outcome::Unchanged("an emit in a loop header");
    }
    if module.functions.iter().enumerate().any(|(n, f)| {
        n != fi
            && f.blocks
                .iter()
                .flat_map(|b| &b.instructions)
                .any(|i| i.class.opcode == Op::EmitVertex)
    }) {
        return Outcome::Unchanged("emits outside the entry function");
    }

    // Types and constants: uint, bool, 0, 1, the maximum; a private uint counter.
    let uint = uint_type(module);
    let boolean = global(
        module,
        |i| i.class.opcode == Op::TypeBool,
        |id| Instruction::new(Op::TypeBool, None, Some(id), vec![]),
    );
    let constant = uint_constant;
    let (zero, one, limit) = (
        constant(module, 0),
        constant(module, 1),
        constant(module, max),
    );
    let ptr = pointer_type(module, StorageClass::Private, uint);
    let counter = fresh_id(module);
    module.types_global_values.push(Instruction::new(
        Op::Variable,
        Some(ptr),
        Some(counter),
        vec![
            Operand::StorageClass(StorageClass::Private),
            Operand::IdRef(zero),
        ],
    ));
    module.debug_names.push(Instruction::new(
        Op::Name,
        None,
        None,
        vec![
            Operand::IdRef(counter),
            Operand::LiteralString("gs_vertex_count".into()),
        ],
    ));
    if module
        .header
        .as_ref()
        .is_some_and(|h| h.version >= 0x0001_0400)
    {
        for e in &mut module.entry_points {
            e.operands.push(Operand::IdRef(counter));
        }
    }

    // Split each block at each emit: `load; lt; selection merge; branch` / `emit;
    // add; store; branch` / the rest.
    let mut emits = 0;
    let old_blocks = std::mem::take(&mut module.functions[fi].blocks);
    let mut blocks = Vec::with_capacity(old_blocks.len());
    let mut renamed: Vec<(Word, Word)> = Vec::new();
    for block in old_blocks {
        let original = block.label.as_ref().and_then(|l| l.result_id);
        let mut current = Block {
            label: block.label,
            instructions: Vec::new(),
        };
        for inst in block.instructions {
            if inst.class.opcode != Op::EmitVertex {
                current.instructions.push(inst);
                continue;
            }
            let (loaded, below, emit_label, after, added) = (
                fresh_id(module),
                fresh_id(module),
                fresh_id(module),
                fresh_id(module),
                fresh_id(module),
            );
            current.instructions.extend([
                Instruction::new(
                    Op::Load,
                    Some(uint),
                    Some(loaded),
                    vec![Operand::IdRef(counter)],
                ),
                Instruction::new(
                    Op::ULessThan,
                    Some(boolean),
                    Some(below),
                    vec![Operand::IdRef(loaded), Operand::IdRef(limit)],
                ),
                Instruction::new(
                    Op::SelectionMerge,
                    None,
                    None,
                    vec![
                        Operand::IdRef(after),
                        Operand::SelectionControl(SelectionControl::NONE),
                    ],
                ),
                Instruction::new(
                    Op::BranchConditional,
                    None,
                    None,
                    vec![
                        Operand::IdRef(below),
                        Operand::IdRef(emit_label),
                        Operand::IdRef(after),
                    ],
                ),
            ]);
            blocks.push(current);
            blocks.push(Block {
                label: Some(Instruction::new(Op::Label, None, Some(emit_label), vec![])),
                instructions: vec![
                    inst,
                    Instruction::new(
                        Op::IAdd,
                        Some(uint),
                        Some(added),
                        vec![Operand::IdRef(loaded), Operand::IdRef(one)],
                    ),
                    Instruction::new(
                        Op::Store,
                        None,
                        None,
                        vec![Operand::IdRef(counter), Operand::IdRef(added)],
                    ),
                    Instruction::new(Op::Branch, None, None, vec![Operand::IdRef(after)]),
                ],
            });
            current = Block {
                label: Some(Instruction::new(Op::Label, None, Some(after), vec![])),
                instructions: Vec::new(),
            };
            emits += 1;
        }
        let last = current.label.as_ref().and_then(|l| l.result_id);
        if let (Some(from), Some(to)) = (original, last) {
            if from != to {
                renamed.push((from, to));
            }
        }
        blocks.push(current);
    }
    // A phi that came from a split block now comes from its last part.
    for b in &mut blocks {
        for i in b
            .instructions
            .iter_mut()
            .filter(|i| i.class.opcode == Op::Phi)
        {
            for pair in i.operands.chunks_mut(2) {
                if let [_, Operand::IdRef(parent)] = pair {
                    if let Some((_, to)) = renamed.iter().find(|(from, _)| from == parent) {
                        *parent = *to;
                    }
                }
            }
        }
    }
    module.functions[fi].blocks = blocks;
    Outcome::Counted { emits, counter }
}
