//! Which values of a module NIR keeps: what its dead-code elimination (`nir_opt_dce`,
//! after copy propagation has looked through vector constructions and swizzles) leaves
//! before NVK counts constant-buffer uses (`build_cbuf_map`).
//!
//! A value is live when an instruction with an effect uses it (a store, a branch's
//! condition, a return, a call, an atomic) or a live value does, component by
//! component where SPIR-V names components: a vector built by `OpCompositeConstruct`
//! and read back by `OpVectorShuffle` or `OpCompositeExtract` keeps only the parts that
//! are read. Zink loads a `vec4` uniform as four scalar loads and builds the vector; a
//! shader that then uses three of its components leaves the fourth load dead, and NIR
//! removes it. Any other use keeps every component of what it uses.

use std::collections::{HashMap, HashSet};

use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Op, Word};

use super::id as operand_id;

type Map<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
type Set<K> = HashSet<K, foldhash::fast::RandomState>;

/// Every component.
const ALL: u32 = u32::MAX;

/// The ids of `module` whose values are live in some component.
pub(super) fn live_values(module: &Module) -> Set<Word> {
    let mut defs: Map<Word, &Instruction> = Map::default();
    for i in module.types_global_values.iter().chain(
        module
            .functions
            .iter()
            .flat_map(|f| f.blocks.iter().flat_map(|b| b.instructions.iter())),
    ) {
        if let Some(result) = i.result_id {
            defs.insert(result, i);
        }
    }
    let mut live = Liveness {
        defs: &defs,
        masks: Map::default(),
        pending: Vec::new(),
    };
    for function in &module.functions {
        for i in function.blocks.iter().flat_map(|b| b.instructions.iter()) {
            if has_effect(i) {
                live.mark_all(i);
            }
        }
    }
    while let Some((id, mask)) = live.pending.pop() {
        live.propagate(id, mask);
    }
    live.masks.into_keys().collect()
}

/// Whether `i` is kept for its effect, whatever uses its result: an instruction with no
/// result (stores, branches, returns, barriers, image writes), a call, an atomic.
fn has_effect(i: &Instruction) -> bool {
    i.result_id.is_none() || i.class.opcode == Op::FunctionCall || is_atomic(i.class.opcode)
}

/// Whether `op` is an atomic operation on memory.
pub(super) fn is_atomic(op: Op) -> bool {
    matches!(
        op,
        Op::AtomicLoad
            | Op::AtomicStore
            | Op::AtomicExchange
            | Op::AtomicCompareExchange
            | Op::AtomicCompareExchangeWeak
            | Op::AtomicIIncrement
            | Op::AtomicIDecrement
            | Op::AtomicIAdd
            | Op::AtomicISub
            | Op::AtomicSMin
            | Op::AtomicUMin
            | Op::AtomicSMax
            | Op::AtomicUMax
            | Op::AtomicAnd
            | Op::AtomicOr
            | Op::AtomicXor
            | Op::AtomicFAddEXT
            | Op::AtomicFMinEXT
            | Op::AtomicFMaxEXT
    )
}

struct Liveness<'m> {
    defs: &'m Map<Word, &'m Instruction>,
    /// The live components of each value found live.
    masks: Map<Word, u32>,
    /// Values whose live components grew, to pass on to what they are made of.
    pending: Vec<(Word, u32)>,
}

impl Liveness<'_> {
    /// Marks components `mask` of `id` live.
    fn mark(&mut self, id: Word, mask: u32) {
        if mask == 0 {
            return;
        }
        let known = self.masks.entry(id).or_default();
        let grown = *known | mask;
        if grown != *known {
            *known = grown;
            self.pending.push((id, grown));
        }
    }

    /// The components of the vector `id` is, if it is a vector.
    fn vector_size(&self, id: Word) -> Option<u32> {
        let ty = self.defs.get(&id)?.result_type?;
        let ty = self.defs.get(&ty)?;
        match (ty.class.opcode, ty.operands.get(1)) {
            (Op::TypeVector, Some(Operand::LiteralBit32(n))) => Some(*n),
            _ => None,
        }
    }

    /// Passes components `mask` of `id` on to the values it is made of.
    fn propagate(&mut self, id: Word, mask: u32) {
        let Some(i) = self.defs.get(&id).copied() else {
            return;
        };
        match i.class.opcode {
            Op::VectorShuffle => {
                let (Some(a), Some(b)) = (operand_id(i, 0), operand_id(i, 1)) else {
                    return;
                };
                let Some(a_size) = self.vector_size(a) else {
                    return self.mark_all(i);
                };
                let selectors = i.operands.iter().skip(2).filter_map(|o| match o {
                    Operand::LiteralBit32(s) => Some(*s),
                    _ => None,
                });
                for (k, selector) in selectors.enumerate() {
                    if mask >> k.min(31) & 1 == 0 || selector == u32::MAX {
                        continue;
                    }
                    match selector.checked_sub(a_size) {
                        None => self.mark(a, 1 << selector.min(31)),
                        Some(in_b) => self.mark(b, 1 << in_b.min(31)),
                    }
                }
            }
            Op::CompositeConstruct if self.vector_size(id).is_some() => {
                // Each part fills the next components, a scalar one, a vector its size.
                let mut at = 0u32;
                for part in id_operands(i) {
                    let size = self.vector_size(part).unwrap_or(1);
                    let part_mask = (mask >> at.min(31)) & low_bits(size);
                    self.mark(part, part_mask);
                    at = at.saturating_add(size);
                }
            }
            Op::CompositeExtract => {
                let Some(composite) = operand_id(i, 0) else {
                    return;
                };
                let index = match (i.operands.len(), i.operands.get(1)) {
                    (2, Some(Operand::LiteralBit32(index))) => Some(*index),
                    _ => None,
                };
                match (index, self.vector_size(composite)) {
                    (Some(index), Some(_)) => self.mark(composite, 1 << index.min(31)),
                    _ => self.mark(composite, ALL),
                }
            }
            // A copy or a bitcast between vectors of one size keeps its components.
            Op::CopyObject | Op::Bitcast => match operand_id(i, 0) {
                Some(from) if self.vector_size(id) == self.vector_size(from) => {
                    self.mark(from, mask)
                }
                _ => self.mark_all(i),
            },
            _ => self.mark_all(i),
        }
    }

    /// Marks every value `i` uses live in every component.
    fn mark_all(&mut self, i: &Instruction) {
        for id in id_operands(i) {
            self.mark(id, ALL);
        }
    }
}

/// The ids among `i`'s operands.
pub(super) fn id_operands(i: &Instruction) -> impl Iterator<Item = Word> + '_ {
    i.operands.iter().filter_map(|o| match o {
        Operand::IdRef(id) => Some(*id),
        _ => None,
    })
}

/// The low `n` bits set.
fn low_bits(n: u32) -> u32 {
    match n {
        0 => 0,
        32.. => ALL,
        n => (1 << n) - 1,
    }
}
