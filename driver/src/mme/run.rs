//! What running a macro gives: its instruction count, or an error naming the macro
//! and the instruction address.

use std::fmt;

/// Default instruction budget: far above any NVK macro (a 32-view, many-instance draw
/// runs tens of thousands), far below a hang.
pub const DEFAULT_BUDGET: u64 = 10_000_000;

/// Totals of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Instructions executed (ops, for the reference interpreter).
    pub instructions: u64,
}

/// Why a run stopped early.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunErrorKind {
    /// It executed more instructions than its budget.
    BudgetExceeded {
        /// The budget.
        budget: u64,
    },
    /// It loaded a parameter that was never given.
    ParamsExhausted,
    /// It emitted data before selecting a method.
    EmitWithoutMethod,
    /// A read-fifoed address is not mapped.
    UnmappedRead {
        /// The address.
        addr: u64,
    },
    /// A branch or loop leads outside the macro.
    JumpOutOfRange {
        /// The target.
        target: i64,
    },
    /// Execution ran past the last instruction without an end.
    FellOffEnd,
    /// A data RAM index is out of range.
    DataRamOutOfRange {
        /// The index.
        index: u32,
    },
    /// The instruction cannot run (an unknown extended op, a nested LOOP, ...).
    Illegal(String),
}

impl fmt::Display for RunErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunErrorKind::BudgetExceeded { budget } => {
                write!(
                    f,
                    "ran past its budget of {budget} instructions (an endless loop?)"
                )
            }
            RunErrorKind::ParamsExhausted => f.write_str("loaded a parameter that was not given"),
            RunErrorKind::EmitWithoutMethod => {
                f.write_str("emitted data before selecting a method")
            }
            RunErrorKind::UnmappedRead { addr } => {
                write!(f, "read-fifoed from unmapped address {addr:#x}")
            }
            RunErrorKind::JumpOutOfRange { target } => {
                write!(f, "jumps to {target}, outside the macro")
            }
            RunErrorKind::FellOffEnd => f.write_str("ran past its last instruction"),
            RunErrorKind::DataRamOutOfRange { index } => {
                write!(f, "data RAM index {index:#x} is out of range")
            }
            RunErrorKind::Illegal(what) => f.write_str(what),
        }
    }
}

/// A run that stopped early.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("macro `{name}` at instruction {ip:#x}: {kind}")]
pub struct RunError {
    /// The macro's name.
    pub name: String,
    /// The instruction (or, for the reference interpreter, op) address.
    pub ip: u32,
    /// What happened.
    pub kind: RunErrorKind,
}
