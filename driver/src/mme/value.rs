//! Values a macro computes with: zero, an immediate, or a register.

use std::fmt;

/// A machine register number. Which numbers exist depends on the instruction set
/// (r0–r22 allocatable on Turing, r1–r7 before it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg(pub u8);

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "$r{}", self.0)
    }
}

/// An operand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Value {
    /// The constant 0 (both ISAs have a zero source).
    #[default]
    Zero,
    /// A 32-bit constant; the builder decides how to encode it.
    Imm(u32),
    /// A register.
    Reg(Reg),
}

impl Value {
    /// The register, if this value lives in one.
    pub fn reg(self) -> Option<Reg> {
        match self {
            Value::Reg(r) => Some(r),
            _ => None,
        }
    }

    /// The constant, if this value is one.
    pub fn constant(self) -> Option<u32> {
        match self {
            Value::Zero => Some(0),
            Value::Imm(v) => Some(v),
            Value::Reg(_) => None,
        }
    }
}

impl From<u32> for Value {
    fn from(v: u32) -> Self {
        if v == 0 {
            Value::Zero
        } else {
            Value::Imm(v)
        }
    }
}

impl From<Reg> for Value {
    fn from(r: Reg) -> Self {
        Value::Reg(r)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Zero => f.write_str("0"),
            Value::Imm(v) => write!(f, "{v:#x}"),
            Value::Reg(r) => r.fmt(f),
        }
    }
}
