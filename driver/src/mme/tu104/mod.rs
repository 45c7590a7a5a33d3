//! The Turing MME (TU104 and later): 96-bit instructions with two ALUs and two method
//! outputs, predication, r0–r23 and special sources.
//!
//! `isa` holds the instruction and its bit fields (one table drives both encoding and
//! decoding), `disasm` prints it, `lower` turns a builder program into instructions, and
//! `sim` executes encoded words.

mod disasm;
mod isa;
mod lower;
mod sim;

pub use isa::{decode, encode, Alu, AluOp, Inst, Out, OutSrc, PredMode, Src};
pub use lower::lower;
pub use sim::Sim;

use super::{LowerError, Program};

/// Lowers and encodes `program` in one step.
pub fn assemble(program: &Program) -> Result<Vec<u32>, LowerError> {
    Ok(encode(&lower(program)?))
}
