//! The pre-Turing MME (Fermi through Volta): 32-bit instructions, eight registers with
//! r0 reading zero and r1 holding the first parameter, assign ops that load, move, set
//! the method and emit, and branches with a delay slot.
//!
//! `isa` holds the instruction and its bit fields, `disasm` prints it, `lower` turns a
//! builder program into instructions, and `sim` executes encoded words.

mod disasm;
mod isa;
mod lower;
mod sim;

pub use isa::{decode, encode, AluOp, Assign, Inst, Op};
pub use lower::lower;
pub use sim::Sim;

use super::{LowerError, Program};

/// Lowers and encodes `program` in one step.
pub fn assemble(program: &Program) -> Result<Vec<u32>, LowerError> {
    Ok(encode(&lower(program)?))
}
