//! ViewIndex lowering (NVK's multiview): the view index is not a hardware input; the
//! draw macro writes it into the root descriptor table (`draw.view_index`) for each
//! view. So loads of the ViewIndex built-in become loads of that word from a uniform
//! buffer standing for the root table, at a descriptor set and binding reserved for it,
//! and the MultiView capability goes when nothing else needs it.

use std::collections::HashSet;

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{BuiltIn, Capability, Decoration, Op, StorageClass, Word};

use super::{decorated, fresh_id, id, pointer_type, uint_constant, uint_type};
use crate::nvk::root;

/// The descriptor set the root descriptor table is bound at in lowered shaders.
pub const ROOT_TABLE_SET: u32 = 7;
/// Its binding.
pub const ROOT_TABLE_BINDING: u32 = 0;

/// What the pass did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The module is as it was, and why.
    Unchanged(&'static str),
    /// This many ViewIndex loads now read the root table.
    Lowered(usize),
}

/// Lowers ViewIndex loads in `module`.
pub fn lower(module: &mut Module) -> Outcome {
    let vars: HashSet<Word> = decorated(module, Decoration::BuiltIn)
        .into_iter()
        .filter(|(_, v)| matches!(v, Some(Operand::BuiltIn(BuiltIn::ViewIndex))))
        .map(|(id, _)| id)
        .collect();
    if vars.is_empty() {
        return Outcome::Unchanged("no ViewIndex");
    }
    // Only loads may use the built-in: anything else is left as it is.
    let other_use = module
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
        .any(|i| {
            i.operands.iter().enumerate().any(|(n, o)| {
                matches!(o, Operand::IdRef(r) if vars.contains(r))
                    && !(i.class.opcode == Op::Load && n == 0)
            })
        });
    if other_use {
        return Outcome::Unchanged("ViewIndex is used other than by loads");
    }

    let uint = uint_type(module);
    let ptr_uint = pointer_type(module, StorageClass::Uniform, uint);
    let zero = uint_constant(module, 0);
    // struct RootTable { uint view_index; } at draw.view_index's offset.
    let table = fresh_id(module);
    let ptr_table = fresh_id(module);
    let var = fresh_id(module);
    module.types_global_values.extend([
        Instruction::new(
            Op::TypeStruct,
            None,
            Some(table),
            vec![Operand::IdRef(uint)],
        ),
        Instruction::new(
            Op::TypePointer,
            None,
            Some(ptr_table),
            vec![
                Operand::StorageClass(StorageClass::Uniform),
                Operand::IdRef(table),
            ],
        ),
        Instruction::new(
            Op::Variable,
            Some(ptr_table),
            Some(var),
            vec![Operand::StorageClass(StorageClass::Uniform)],
        ),
    ]);
    let decorate = |target: Word, d: Decoration, extra: Vec<Operand>| {
        let mut operands = vec![Operand::IdRef(target), Operand::Decoration(d)];
        operands.extend(extra);
        Instruction::new(Op::Decorate, None, None, operands)
    };
    module.annotations.extend([
        decorate(table, Decoration::Block, vec![]),
        Instruction::new(
            Op::MemberDecorate,
            None,
            None,
            vec![
                Operand::IdRef(table),
                Operand::LiteralBit32(0),
                Operand::Decoration(Decoration::Offset),
                Operand::LiteralBit32(root::DRAW_VIEW_INDEX),
            ],
        ),
        decorate(
            var,
            Decoration::DescriptorSet,
            vec![Operand::LiteralBit32(ROOT_TABLE_SET)],
        ),
        decorate(
            var,
            Decoration::Binding,
            vec![Operand::LiteralBit32(ROOT_TABLE_BINDING)],
        ),
    ]);

    // Each load becomes an access chain into the table and a load (and a bitcast to a
    // signed int where the built-in was declared one).
    let mut lowered = 0;
    let loads: Vec<Instruction> = module
        .functions
        .iter()
        .flat_map(|f| f.blocks.iter())
        .flat_map(|b| b.instructions.iter())
        .filter(|i| i.class.opcode == Op::Load && id(i, 0).is_some_and(|p| vars.contains(&p)))
        .cloned()
        .collect();
    // Ids are taken after the walk (the module is borrowed during it).
    let mut replacements = Vec::new();
    for load in loads {
        let chain = fresh_id(module);
        let word = fresh_id(module);
        replacements.push((load, chain, word));
    }
    for f in &mut module.functions {
        for b in &mut f.blocks {
            let mut out = Vec::with_capacity(b.instructions.len() + 2);
            for inst in b.instructions.drain(..) {
                let Some((load, chain, word)) = replacements.iter().find(|(l, _, _)| *l == inst)
                else {
                    out.push(inst);
                    continue;
                };
                let (ty, result) = (load.result_type, load.result_id);
                out.push(Instruction::new(
                    Op::AccessChain,
                    Some(ptr_uint),
                    Some(*chain),
                    vec![Operand::IdRef(var), Operand::IdRef(zero)],
                ));
                if ty == Some(uint) {
                    out.push(Instruction::new(
                        Op::Load,
                        Some(uint),
                        result,
                        vec![Operand::IdRef(*chain)],
                    ));
                } else {
                    out.push(Instruction::new(
                        Op::Load,
                        Some(uint),
                        Some(*word),
                        vec![Operand::IdRef(*chain)],
                    ));
                    out.push(Instruction::new(
                        Op::Bitcast,
                        ty,
                        result,
                        vec![Operand::IdRef(*word)],
                    ));
                }
                lowered += 1;
            }
            b.instructions = out;
        }
    }

    // The built-in goes, with its decorations, names and interface entries.
    let uses_var = |i: &Instruction| {
        i.operands
            .iter()
            .any(|o| matches!(o, Operand::IdRef(r) if vars.contains(r)))
    };
    module
        .types_global_values
        .retain(|i| !i.result_id.is_some_and(|r| vars.contains(&r)));
    module.annotations.retain(|i| !uses_var(i));
    module.debug_names.retain(|i| !uses_var(i));
    let version = module.header.as_ref().map_or(0, |h| h.version);
    for e in &mut module.entry_points {
        e.operands
            .retain(|o| !matches!(o, Operand::IdRef(r) if vars.contains(r)));
        // From SPIR-V 1.4 an entry point lists every global variable it uses.
        if version >= 0x0001_0400 {
            e.operands.push(Operand::IdRef(var));
        }
    }
    module
        .capabilities
        .retain(|c| c.operands != [Operand::Capability(Capability::MultiView)]);
    module
        .extensions
        .retain(|e| e.operands != [Operand::LiteralString("SPV_KHR_multiview".into())]);
    Outcome::Lowered(lowered)
}
