//! The program a [`Builder`](super::Builder) produces: structured, already legal for
//! its instruction set, and lowered one op at a time by each backend. The reference
//! interpreter (`reference.rs`) gives it plain meaning, against which the simulators
//! of the encoded words are checked.

use std::fmt;

use super::value::{Reg, Value};

/// The instruction set a macro is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arch {
    /// Turing and later (class 0xC597 up): 96-bit instructions, 23 registers.
    Turing,
    /// Fermi through Volta: 32-bit instructions, 7 registers, r1 preloaded.
    Fermi,
}

impl Arch {
    /// Registers the builder may allocate, as a bitmask.
    pub fn allocatable(self) -> u32 {
        match self {
            Arch::Turing => (1 << 23) - 1,
            Arch::Fermi => 0b1111_1110,
        }
    }

    /// Shadow scratch slots the class has.
    pub fn scratch_slots(self) -> u16 {
        match self {
            Arch::Turing => crate::class::MME_SCRATCH_SLOTS_TURING,
            Arch::Fermi => crate::class::MME_SCRATCH_SLOTS_FERMI,
        }
    }

    /// The lower-case name used on the command line (`turing`, `fermi`).
    pub fn name(self) -> &'static str {
        match self {
            Arch::Turing => "turing",
            Arch::Fermi => "fermi",
        }
    }
}

/// A comparison, as `if`, `while` and `exit_if` take it. Signedness lives here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cmp {
    /// `x == y`
    Eq,
    /// `x != y`
    Ne,
    /// `x < y`, signed
    Lt,
    /// `x < y`, unsigned
    Ltu,
    /// `x <= y`, signed
    Le,
    /// `x <= y`, unsigned
    Leu,
    /// `x > y`, signed
    Gt,
    /// `x > y`, unsigned
    Gtu,
    /// `x >= y`, signed
    Ge,
    /// `x >= y`, unsigned
    Geu,
}

impl Cmp {
    /// Every comparison.
    pub const ALL: [Cmp; 10] = [
        Cmp::Eq,
        Cmp::Ne,
        Cmp::Lt,
        Cmp::Ltu,
        Cmp::Le,
        Cmp::Leu,
        Cmp::Gt,
        Cmp::Gtu,
        Cmp::Ge,
        Cmp::Geu,
    ];

    /// Whether the comparison holds.
    pub fn eval(self, x: u32, y: u32) -> bool {
        let (sx, sy) = (x as i32, y as i32);
        match self {
            Cmp::Eq => x == y,
            Cmp::Ne => x != y,
            Cmp::Lt => sx < sy,
            Cmp::Ltu => x < y,
            Cmp::Le => sx <= sy,
            Cmp::Leu => x <= y,
            Cmp::Gt => sx > sy,
            Cmp::Gtu => x > y,
            Cmp::Ge => sx >= sy,
            Cmp::Geu => x >= y,
        }
    }

    /// The comparison that holds exactly when this one does not.
    pub fn negate(self) -> Cmp {
        match self {
            Cmp::Eq => Cmp::Ne,
            Cmp::Ne => Cmp::Eq,
            Cmp::Lt => Cmp::Ge,
            Cmp::Ltu => Cmp::Geu,
            Cmp::Le => Cmp::Gt,
            Cmp::Leu => Cmp::Gtu,
            Cmp::Gt => Cmp::Le,
            Cmp::Gtu => Cmp::Leu,
            Cmp::Ge => Cmp::Lt,
            Cmp::Geu => Cmp::Ltu,
        }
    }

    /// The same comparison with its operands swapped (`x < y` is `y > x`).
    pub fn swap(self) -> Cmp {
        match self {
            Cmp::Eq | Cmp::Ne => self,
            Cmp::Lt => Cmp::Gt,
            Cmp::Ltu => Cmp::Gtu,
            Cmp::Le => Cmp::Ge,
            Cmp::Leu => Cmp::Geu,
            Cmp::Gt => Cmp::Lt,
            Cmp::Gtu => Cmp::Ltu,
            Cmp::Ge => Cmp::Le,
            Cmp::Geu => Cmp::Leu,
        }
    }
}

/// A two-operand ALU operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluOp {
    /// `x + y`
    Add,
    /// `x - y`
    Sub,
    /// `x & y`
    And,
    /// `x & !y`
    AndNot,
    /// `x | y`
    Or,
    /// `x ^ y`
    Xor,
    /// `!(x & y)`
    Nand,
    /// low 32 bits of `x * y` (Turing only)
    Mul,
    /// `x << y`
    Sll,
    /// `x >> y`, logical
    Srl,
}

impl AluOp {
    /// The result.
    pub fn eval(self, x: u32, y: u32) -> u32 {
        match self {
            AluOp::Add => x.wrapping_add(y),
            AluOp::Sub => x.wrapping_sub(y),
            AluOp::And => x & y,
            AluOp::AndNot => x & !y,
            AluOp::Or => x | y,
            AluOp::Xor => x ^ y,
            AluOp::Nand => !(x & y),
            AluOp::Mul => x.wrapping_mul(y),
            AluOp::Sll => x << (y & 31),
            AluOp::Srl => x >> (y & 31),
        }
    }
}

/// A 64-bit operation on register pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Alu64Op {
    /// `x + y`, carrying from the low word into the high word.
    Add,
    /// `x - y`, borrowing from the high word.
    Sub,
    /// The 64-bit product of the low words `x.0 * y.0` (unsigned), the high words
    /// zero: Turing's `MULU` then `MULH` (Mesa's mme_umul_32x32_64; Turing only).
    UMul,
}

/// What a conditional tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Test {
    /// A comparison of two values (Turing branches compare directly).
    Cmp(Cmp, Value, Value),
    /// The value is zero.
    Zero(Value),
    /// The value is not zero.
    NonZero(Value),
}

impl Test {
    /// Whether the test holds for the given operand values.
    pub fn eval(&self, value: impl Fn(Value) -> u32) -> bool {
        match *self {
            Test::Cmp(cmp, x, y) => cmp.eval(value(x), value(y)),
            Test::Zero(x) => value(x) == 0,
            Test::NonZero(x) => value(x) != 0,
        }
    }
}

/// `(1 << bits) - 1`, with `bits` up to 32.
pub fn mask(bits: u8) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    }
}

/// One step of a macro.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `dst = op(x, y)`
    Alu {
        /// The operation.
        op: AluOp,
        /// Destination.
        dst: Reg,
        /// First operand.
        x: Value,
        /// Second operand.
        y: Value,
    },
    /// `dst = op(x, y)` on (low, high) pairs.
    Alu64 {
        /// The operation.
        op: Alu64Op,
        /// Destination (low, high).
        dst: [Reg; 2],
        /// First operand (low, high).
        x: [Value; 2],
        /// Second operand (low, high).
        y: [Value; 2],
    },
    /// One half of a 64-bit operation, as pre-Turing builds it when an operand needs
    /// a register of its own (Mesa's mme_fermi_alu64_to): the low half (`high`
    /// false) leaves its carry or borrow for the high half, which consumes it.
    Alu64Half {
        /// The operation.
        op: Alu64Op,
        /// Whether this is the high half.
        high: bool,
        /// Destination.
        dst: Reg,
        /// First operand.
        x: Value,
        /// Second operand.
        y: Value,
    },
    /// `dst = (x & !(mask(bits) << dst_pos)) | (((y >> src_pos) & mask(bits)) << dst_pos)`
    Merge {
        /// Destination.
        dst: Reg,
        /// The value merged into.
        x: Value,
        /// The value the field comes from.
        y: Value,
        /// Where the field goes.
        dst_pos: u8,
        /// Field width.
        bits: u8,
        /// Where the field comes from.
        src_pos: u8,
    },
    /// `dst = (x >> pos) & mask(bits)`
    Bfe {
        /// Destination.
        dst: Reg,
        /// The value.
        x: Value,
        /// The field's lowest bit.
        pos: Value,
        /// Field width.
        bits: u8,
    },
    /// `dst = x`
    Mov {
        /// Destination.
        dst: Reg,
        /// The value.
        x: Value,
    },
    /// `dst = the next parameter`
    Load {
        /// Destination.
        dst: Reg,
    },
    /// `dst = state[mthd + 4 * index]`
    State {
        /// Destination.
        dst: Reg,
        /// Method (byte address).
        mthd: u16,
        /// Index in dwords.
        index: Value,
    },
    /// Selects method `mthd + 4 * index` (increment 1) for the following emits.
    Mthd {
        /// Method (byte address).
        mthd: u16,
        /// Index in dwords.
        index: Value,
    },
    /// Sends `x` to the selected method, which then advances by one.
    Emit {
        /// The value.
        x: Value,
    },
    /// `dst = data_ram[addr]` (Turing only)
    DRead {
        /// Destination.
        dst: Reg,
        /// Data RAM index.
        addr: Value,
    },
    /// `data_ram[addr] = x` (Turing only)
    DWrite {
        /// Data RAM index.
        addr: Value,
        /// The value.
        x: Value,
    },
    /// The read-fifoed barrier: dwords requested with `MME_DMA_READ_FIFOED` become the
    /// next parameters (Turing only).
    Barrier,
    /// Runs `then` if `test` holds.
    If {
        /// The condition.
        test: Test,
        /// Taken branch.
        then: Vec<Op>,
    },
    /// Runs `cond`, then `body` while `test` holds, re-running `cond` before each test.
    While {
        /// Ops that compute the test's operands (empty on Turing).
        cond: Vec<Op>,
        /// The condition.
        test: Test,
        /// Loop body.
        body: Vec<Op>,
    },
    /// Runs `body` `count` times; a count of 0 runs it not at all (Turing's LOOP).
    Loop {
        /// Iterations.
        count: Value,
        /// Loop body.
        body: Vec<Op>,
    },
    /// Ends the macro if `test` holds.
    ExitIf {
        /// The condition.
        test: Test,
    },
}

/// A finished macro: its instruction set and its ops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The instruction set it was built for.
    pub arch: Arch,
    /// Its ops, in order.
    pub ops: Vec<Op>,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Alu { op, dst, x, y } => write!(f, "{dst} = {op:?} {x}, {y}"),
            Op::Alu64 { op, dst, x, y } => {
                write!(
                    f,
                    "{}:{} = {op:?}64 {}:{}, {}:{}",
                    dst[1], dst[0], x[1], x[0], y[1], y[0]
                )
            }
            Op::Alu64Half {
                op,
                high,
                dst,
                x,
                y,
            } => {
                let half = if *high { "hi" } else { "lo" };
                write!(f, "{dst} = {op:?}64.{half} {x}, {y}")
            }
            Op::Merge {
                dst,
                x,
                y,
                dst_pos,
                bits,
                src_pos,
            } => {
                write!(
                    f,
                    "{dst} = MERGE {x}, {y} ({bits} bits {src_pos} -> {dst_pos})"
                )
            }
            Op::Bfe { dst, x, pos, bits } => write!(f, "{dst} = BFE {x}, {pos}, {bits}"),
            Op::Mov { dst, x } => write!(f, "{dst} = {x}"),
            Op::Load { dst } => write!(f, "{dst} = LOAD"),
            Op::State { dst, mthd, index } => write!(f, "{dst} = STATE {mthd:#06x} + {index}"),
            Op::Mthd { mthd, index } => write!(f, "mthd {mthd:#06x} + {index}"),
            Op::Emit { x } => write!(f, "emit {x}"),
            Op::DRead { dst, addr } => write!(f, "{dst} = DREAD {addr}"),
            Op::DWrite { addr, x } => write!(f, "DWRITE {addr}, {x}"),
            Op::Barrier => f.write_str("BARRIER"),
            Op::If { test, then } => write!(f, "if {test:?} {{ {} ops }}", then.len()),
            Op::While { test, body, .. } => write!(f, "while {test:?} {{ {} ops }}", body.len()),
            Op::Loop { count, body } => write!(f, "loop {count} {{ {} ops }}", body.len()),
            Op::ExitIf { test } => write!(f, "exit if {test:?}"),
        }
    }
}
