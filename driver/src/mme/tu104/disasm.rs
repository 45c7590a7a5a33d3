//! Turing instructions as text a person can read in a failing test:
//! `$r3 = ADD $r1, 0x10; mthd 0x15cc /* SET_RT_LAYER */; emit ALU0`.

use std::fmt;

use super::isa::{Alu, AluOp, Inst, Out, OutSrc, Src};
use crate::class;

fn sign_extend(imm: u16) -> u32 {
    imm as i16 as i32 as u32
}

struct Operand<'a>(&'a Inst, usize, Src);

impl fmt::Display for Operand<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Operand(inst, alu, src) = *self;
        match src {
            Src::ZERO => f.write_str("ZERO"),
            Src::IMM => write!(f, "{:#x}", sign_extend(inst.imm[alu])),
            Src::IMMPAIR => write!(f, "{:#x}", sign_extend(inst.imm[1 - alu])),
            Src::IMM32 => write!(
                f,
                "{:#x}",
                (u32::from(inst.imm[0]) << 16) | u32::from(inst.imm[1])
            ),
            Src::LOAD0 => f.write_str("LOAD0"),
            Src::LOAD1 => f.write_str("LOAD1"),
            Src(r) => write!(f, "$r{r}"),
        }
    }
}

fn write_alu(f: &mut fmt::Formatter<'_>, inst: &Inst, i: usize, alu: &Alu) -> fmt::Result {
    let x = Operand(inst, i, alu.src[0]);
    let y = Operand(inst, i, alu.src[1]);
    let imm = inst.imm[i];
    if alu.dst != Src::ZERO {
        write!(f, "{} = ", Operand(inst, i, alu.dst))?;
    }
    match alu.op {
        AluOp::Merge => write!(
            f,
            "MERGE {x}, {y}, dst_pos {}, bits {}, src_pos {}",
            (imm >> 10) & 0x3f,
            (imm >> 5) & 0x1f,
            imm & 0x1f
        ),
        op if op.is_branch() => {
            let offset = ((u32::from(imm) << 19) as i32) >> 19;
            let expect = imm >> 15 & 1 != 0;
            let not = if expect { "" } else { "!" };
            let name = format!("{op:?}").to_uppercase();
            if offset == -4096 {
                write!(f, "{not}{name} {x}, {y} -> exit")
            } else {
                write!(f, "{not}{name} {x}, {y} -> {offset:+}")
            }
        }
        AluOp::Loop => write!(f, "LOOP {x}, length {imm}"),
        AluOp::Jal => write!(f, "JAL +{}", imm & 0x7fff),
        AluOp::State => write!(f, "STATE {x}, {y}"),
        op => write!(f, "{} {x}, {y}", format!("{op:?}").to_uppercase()),
    }
}

fn source_name(src: OutSrc) -> &'static str {
    match src {
        OutSrc::Alu0 => "ALU0",
        OutSrc::Alu1 => "ALU1",
        OutSrc::Load0 => "LOAD0",
        OutSrc::Load1 => "LOAD1",
        _ => "?",
    }
}

fn out_value(inst: &Inst, src: OutSrc) -> Option<u32> {
    Some(match src {
        OutSrc::Imm0 => u32::from(inst.imm[0]),
        OutSrc::Imm1 => u32::from(inst.imm[1]),
        OutSrc::ImmHigh0 => u32::from(inst.imm[0]) >> 12,
        OutSrc::ImmHigh1 => u32::from(inst.imm[1]) >> 12,
        OutSrc::Imm32 => (u32::from(inst.imm[0]) << 16) | u32::from(inst.imm[1]),
        _ => return None,
    })
}

fn write_out(f: &mut fmt::Formatter<'_>, inst: &Inst, out: &Out) -> fmt::Result {
    let mut first = true;
    if out.mthd != OutSrc::None {
        match out_value(inst, out.mthd) {
            Some(v) => {
                let mthd = ((v & 0xfff) << 2) as u16;
                write!(f, "mthd {mthd:#06x}")?;
                if let Some(name) = class::method_name(mthd) {
                    write!(f, " /* {name} */")?;
                }
                if (v >> 12) & 0xf != 1 {
                    write!(f, " inc {}", (v >> 12) & 0xf)?;
                }
            }
            None => write!(f, "mthd {}", source_name(out.mthd))?,
        }
        first = false;
    }
    if out.emit != OutSrc::None {
        if !first {
            f.write_str(", ")?;
        }
        match out_value(inst, out.emit) {
            Some(v) => write!(f, "emit {v:#x}")?,
            None => write!(f, "emit {}", source_name(out.emit))?,
        }
    }
    Ok(())
}

impl fmt::Display for Inst {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = 0;
        let mut sep = |f: &mut fmt::Formatter<'_>| {
            parts += 1;
            if parts > 1 {
                f.write_str("; ")
            } else {
                Ok(())
            }
        };
        if self.pred_mode.0 != 0 {
            sep(f)?;
            write!(
                f,
                "pred {} {}",
                self.pred_mode.name(),
                Operand(self, 0, self.pred)
            )?;
        }
        for (i, alu) in self.alu.iter().enumerate() {
            if !alu.is_nop() {
                sep(f)?;
                write_alu(f, self, i, alu)?;
            }
        }
        for out in &self.out {
            if *out != Out::default() {
                sep(f)?;
                write_out(f, self, out)?;
            }
        }
        if parts == 0 {
            f.write_str("NOP")?;
        }
        if self.end_next {
            f.write_str("; END_NEXT")?;
        }
        Ok(())
    }
}
