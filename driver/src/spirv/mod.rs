//! SPIR-V the driver compiles: what a module uses ([`analyze`]) and the passes that
//! rewrite it for the hardware model ([`view_index`]). Modules are rspirv's: read in one
//! pass ([`reader`], rspirv's parser for what it leaves), written with rspirv; a pass
//! that cannot handle a module leaves it unchanged and says why.

pub mod analysis;
mod cbuf_uses;
pub mod gs_count;
pub mod interface;
pub mod large_constants;
mod liveness;
pub mod passthrough_tcs;
pub mod reader;
pub mod specialize;
pub mod ubo_chains;
pub mod view_index;

pub use analysis::{analyze, Findings, GsVertexCount};

use rspirv::binary::Assemble;
use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{Decoration, Op, StorageClass, Word};

/// Why a module could not be read.
#[derive(Debug, thiserror::Error)]
#[error("not a SPIR-V module: {0}")]
pub struct SpirvError(pub String);

/// Parses SPIR-V words: read in one pass ([`reader`], which reads only words that frame
/// as a module), or, where that reader leaves a module to it, by rspirv's parser behind
/// the framing check ([`load_with_rspirv`]); the same module either way.
pub fn load(words: &[u32]) -> Result<Module, SpirvError> {
    match reader::read(words) {
        Some(module) => Ok(module),
        None => load_with_rspirv(words),
    }
}

/// Parses SPIR-V words with rspirv's parser and loader alone, their framing checked
/// first (the magic, and every instruction's word count within the module), as
/// rspirv's decoder slices by the counts it reads.
pub fn load_with_rspirv(words: &[u32]) -> Result<Module, SpirvError> {
    check_framing(words)?;
    rspirv::dr::load_words(words).map_err(|e| SpirvError(e.to_string()))
}

/// The SPIR-V magic number, the module's first word.
const MAGIC: u32 = 0x0723_0203;

/// Whether `words` frame as a module: a five-word header that starts with the magic,
/// then instructions whose word counts (the high 16 bits of their first word) are at
/// least one and end within the module.
fn check_framing(words: &[u32]) -> Result<(), SpirvError> {
    if words.len() < 5 || words[0] != MAGIC {
        return Err(SpirvError(format!(
            "{} words without a SPIR-V header",
            words.len()
        )));
    }
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        if count == 0 || at + count > words.len() {
            return Err(SpirvError(format!(
                "the instruction at word {at} claims {count} words, {} are left",
                words.len() - at
            )));
        }
        at += count;
    }
    Ok(())
}

/// The module's words.
pub fn words(module: &Module) -> Vec<u32> {
    module.assemble()
}

/// The id operand at `i`, if it is one.
pub(crate) fn id(inst: &Instruction, i: usize) -> Option<Word> {
    match inst.operands.get(i) {
        Some(Operand::IdRef(id)) => Some(*id),
        _ => None,
    }
}

/// Ids carrying `decoration` (with its first extra operand, if any, equal to `value`).
pub(crate) fn decorated(module: &Module, decoration: Decoration) -> Vec<(Word, Option<Operand>)> {
    module
        .annotations
        .iter()
        .filter(|a| a.class.opcode == Op::Decorate)
        .filter(|a| matches!(a.operands.get(1), Some(Operand::Decoration(d)) if *d == decoration))
        .filter_map(|a| Some((id(a, 0)?, a.operands.get(2).cloned())))
        .collect()
}

/// A fresh id, raising the module's bound.
pub(crate) fn fresh_id(module: &mut Module) -> Word {
    let header = module
        .header
        .get_or_insert_with(|| rspirv::dr::ModuleHeader::new(1));
    let id = header.bound;
    header.bound += 1;
    id
}

/// The id of the first global instruction (type, constant, variable) `matches` accepts,
/// or of one `make` appends.
pub(crate) fn global(
    module: &mut Module,
    matches: impl Fn(&Instruction) -> bool,
    make: impl FnOnce(Word) -> Instruction,
) -> Word {
    if let Some(id) = module
        .types_global_values
        .iter()
        .find(|i| matches(i))
        .and_then(|i| i.result_id)
    {
        return id;
    }
    let id = fresh_id(module);
    module.types_global_values.push(make(id));
    id
}

/// The module's 32-bit unsigned integer type, added if it has none.
pub(crate) fn uint_type(module: &mut Module) -> Word {
    let operands = [Operand::LiteralBit32(32), Operand::LiteralBit32(0)];
    global(
        module,
        |i| i.class.opcode == Op::TypeInt && i.operands == operands,
        |id| Instruction::new(Op::TypeInt, None, Some(id), operands.to_vec()),
    )
}

/// A 32-bit unsigned integer constant.
pub(crate) fn uint_constant(module: &mut Module, value: u32) -> Word {
    let uint = uint_type(module);
    let operands = [Operand::LiteralBit32(value)];
    global(
        module,
        |i| i.class.opcode == Op::Constant && i.result_type == Some(uint) && i.operands == operands,
        |id| Instruction::new(Op::Constant, Some(uint), Some(id), operands.to_vec()),
    )
}

/// A pointer type to `pointee` in `storage`.
pub(crate) fn pointer_type(module: &mut Module, storage: StorageClass, pointee: Word) -> Word {
    let operands = [Operand::StorageClass(storage), Operand::IdRef(pointee)];
    global(
        module,
        |i| i.class.opcode == Op::TypePointer && i.operands == operands,
        |id| Instruction::new(Op::TypePointer, None, Some(id), operands.to_vec()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_whose_instruction_runs_past_its_end_is_refused_not_a_panic() {
        // Header, then OpSource-like instruction claiming 9 words with 2 present.
        let words = [MAGIC, 0x0001_0000, 0, 8, 0, (9 << 16) | 3, 0];
        let error = load(&words).unwrap_err().to_string();
        assert!(
            error.contains("the instruction at word 5 claims 9 words, 2 are left"),
            "{error}"
        );
        assert!(load(&[1, 2, 3])
            .unwrap_err()
            .to_string()
            .contains("without a SPIR-V header"));
        // A word count of zero would never advance.
        assert!(load(&[MAGIC, 0x0001_0000, 0, 8, 0, 0]).is_err());
    }
}
