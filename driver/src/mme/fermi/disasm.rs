//! Pre-Turing instructions as text: `$r2 = ADD_IMM $r1, 0x10 (MOVE_EMIT)`.

use std::fmt;

use super::isa::{Assign, Inst, Op};

fn reg(r: u8) -> String {
    if r == 0 {
        "ZERO".into()
    } else {
        format!("$r{r}")
    }
}

impl fmt::Display for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (src0, src1) = (reg(self.src0), reg(self.src1));
        if self.op == Op::Branch {
            let when = if self.not_zero { "!= 0" } else { "== 0" };
            let delay = if self.no_delay { "" } else { " (delay slot)" };
            write!(f, "BRANCH if {src0} {when} -> {:+}{delay}", self.imm)?;
        } else {
            if self.dst != 0 {
                write!(f, "{} = ", reg(self.dst))?;
            }
            match self.op {
                Op::AluReg => write!(
                    f,
                    "{} {src0}, {src1}",
                    format!("{:?}", self.alu_op).to_uppercase()
                )?,
                Op::AddImm => write!(f, "ADD_IMM {src0}, {}", signed_hex(self.imm))?,
                Op::State => write!(f, "STATE {src0} + {}", signed_hex(self.imm))?,
                Op::Merge => write!(
                    f,
                    "MERGE {src0}, {src1}, src_bit {}, size {}, dst_bit {}",
                    self.src_bit, self.size, self.dst_bit
                )?,
                Op::BfeLslImm => write!(
                    f,
                    "BFE_LSL_IMM {src1} >> {src0}, size {}, << {}",
                    self.size, self.dst_bit
                )?,
                Op::BfeLslReg => write!(
                    f,
                    "BFE_LSL_REG {src1} >> {}, size {}, << {src0}",
                    self.src_bit, self.size
                )?,
                Op::Branch => unreachable!("handled above"),
            }
            if self.assign != Assign::Move {
                write!(f, " ({})", assign_name(self.assign))?;
            }
        }
        if self.end_next {
            f.write_str("; END_NEXT")?;
        }
        Ok(())
    }
}

fn signed_hex(v: i32) -> String {
    if v < 0 {
        format!("-{:#x}", v.unsigned_abs())
    } else {
        format!("{v:#x}")
    }
}

fn assign_name(a: Assign) -> &'static str {
    match a {
        Assign::Load => "LOAD",
        Assign::Move => "MOVE",
        Assign::MoveSetMaddr => "MOVE_SET_MADDR",
        Assign::LoadEmit => "LOAD_EMIT",
        Assign::MoveEmit => "MOVE_EMIT",
        Assign::LoadSetMaddr => "LOAD_SET_MADDR",
        Assign::MoveSetMaddrLoadEmit => "MOVE_SET_MADDR_LOAD_EMIT",
        Assign::MoveSetMaddrLoadEmitHigh => "MOVE_SET_MADDR_LOAD_EMIT_HIGH",
    }
}
