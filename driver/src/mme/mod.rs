//! The MME (Macro Method Expander): NVK's macros, written with a [`Builder`], encoded to
//! the real instruction words of two GPU generations, and executed by a simulator for
//! each.
//!
//! Data flows: a [`Builder`] for one [`Arch`] produces a [`Program`] (structured ops,
//! legal for that instruction set). [`tu104`] and [`fermi`] each lower a program to
//! instructions, encode them to words and decode words back, disassemble them, and
//! simulate the *encoded words* against a [`Machine`] (parameters, state, method writes,
//! memory). The [`reference`] interpreter runs the program itself; every builder test
//! checks both simulators against it.

mod builder;
pub mod dma;
mod ir;
mod machine;
pub mod reference;
mod reg_alloc;
mod run;
mod value;

pub mod fermi;
pub mod tu104;

pub use builder::{BuildError, Builder};
pub use ir::{mask, Alu64Op, AluOp, Arch, Cmp, Op, Program, Test};
pub use machine::{Machine, RecordingMachine};
pub use reg_alloc::RegAlloc;
pub use run::{RunError, RunErrorKind, RunStats, DEFAULT_BUDGET};
pub use value::{Reg, Value};

/// Why words could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("instruction {index} ({words}): {problem}")]
pub struct DecodeError {
    /// Which instruction.
    pub index: usize,
    /// Its words, in hex.
    pub words: String,
    /// What is wrong with it.
    pub problem: String,
}

/// Why a program could not be lowered to an instruction set.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LowerError {
    /// The program was built for the other instruction set.
    #[error("the program was built for {built}, not {target}")]
    WrongArch {
        /// What it was built for.
        built: &'static str,
        /// What lowering was asked for.
        target: &'static str,
    },
    /// A branch or loop spans more instructions than its offset field holds.
    #[error("a branch of {distance} instructions does not fit its {bits}-bit offset")]
    BranchTooFar {
        /// The distance.
        distance: i64,
        /// The field's width.
        bits: u32,
    },
    /// The op cannot be expressed on this instruction set.
    #[error("{0} cannot be lowered")]
    Unlowerable(String),
}
