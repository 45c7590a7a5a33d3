//! Builder programs to Turing instructions.
//!
//! Each op becomes one instruction (two for AND-NOT and a bitfield extract at a register
//! position), except runs of method selects and emits, which share instructions: one
//! instruction holds two method outputs, each a method select and an emit, as its ALUs
//! and immediates allow. Control flow uses compare-and-branch with 13-bit offsets, the
//! LOOP instruction (guarded so a count of 0 skips the body), and the exit offset.

use super::isa::{Alu, AluOp as Hw, Inst, OutSrc, Src};
use crate::mme::ir::{Alu64Op, AluOp, Arch, Cmp, Op, Program, Test};
use crate::mme::value::Value;
use crate::mme::LowerError;

/// The branch offset that ends the macro.
const EXIT_OFFSET: u16 = 0x1000;

/// Lowers `program` (built for Turing) to instructions, ending with the two-NOP tail.
pub fn lower(program: &Program) -> Result<Vec<Inst>, LowerError> {
    if program.arch != Arch::Turing {
        return Err(LowerError::WrongArch {
            built: program.arch.name(),
            target: "turing",
        });
    }
    let mut lowerer = Lowerer { insts: Vec::new() };
    lowerer.block(&program.ops)?;
    lowerer.insts.push(Inst {
        end_next: true,
        ..Inst::nop()
    });
    lowerer.insts.push(Inst::nop());
    Ok(lowerer.insts)
}

fn fits_i16(v: u32) -> bool {
    (-32768..=32767).contains(&(v as i32))
}

/// An instruction being filled, with the resources it has left.
#[derive(Clone, Default)]
struct Slots {
    inst: Inst,
    alus: usize,
    imm_used: [bool; 2],
    outs: usize,
    open_mthd: Option<usize>,
}

impl Slots {
    fn alu(&mut self) -> Option<usize> {
        (self.alus < 2).then(|| {
            self.alus += 1;
            self.alus - 1
        })
    }

    /// An operand for ALU `alu`.
    fn src(&mut self, alu: usize, v: Value) -> Option<Src> {
        match v {
            Value::Zero => Some(Src::ZERO),
            Value::Reg(r) => Some(Src(r.0)),
            Value::Imm(c) if fits_i16(c) => {
                for (slot, src) in [(alu, Src::IMM), (1 - alu, Src::IMMPAIR)] {
                    if !self.imm_used[slot] {
                        self.imm_used[slot] = true;
                        self.inst.imm[slot] = c as u16;
                        return Some(src);
                    }
                }
                None
            }
            Value::Imm(c) => {
                if self.imm_used.iter().any(|u| *u) {
                    return None;
                }
                self.imm_used = [true, true];
                self.inst.imm = [(c >> 16) as u16, c as u16];
                Some(Src::IMM32)
            }
        }
    }

    /// A zero-extended immediate for a method output.
    fn out_imm(&mut self, v: u32) -> Option<OutSrc> {
        if v <= 0xffff {
            for (slot, src) in [(0, OutSrc::Imm0), (1, OutSrc::Imm1)] {
                if !self.imm_used[slot] {
                    self.imm_used[slot] = true;
                    self.inst.imm[slot] = v as u16;
                    return Some(src);
                }
            }
            None
        } else if self.imm_used.iter().any(|u| *u) {
            None
        } else {
            self.imm_used = [true, true];
            self.inst.imm = [(v >> 16) as u16, v as u16];
            Some(OutSrc::Imm32)
        }
    }

    /// `v` as an output source, through an ALU pass-through for registers.
    fn out_value(&mut self, v: Value) -> Option<OutSrc> {
        match v {
            Value::Reg(_) => {
                let a = self.alu()?;
                let src = self.src(a, v)?;
                self.inst.alu[a] = Alu {
                    op: Hw::Add,
                    dst: Src::ZERO,
                    src: [src, Src::ZERO],
                };
                Some(if a == 0 { OutSrc::Alu0 } else { OutSrc::Alu1 })
            }
            other => self.out_imm(other.constant().unwrap_or(0)),
        }
    }

    fn try_mthd(&mut self, mthd: u16, index: Value) -> Option<()> {
        if self.outs >= 2 {
            return None;
        }
        let k = self.outs;
        self.outs += 1;
        let word = u32::from(mthd >> 2) | (1 << 12);
        let src = match index {
            Value::Reg(_) => {
                let a = self.alu()?;
                let x = self.src(a, Value::Imm(word))?;
                let y = self.src(a, index)?;
                self.inst.alu[a] = Alu {
                    op: Hw::Add,
                    dst: Src::ZERO,
                    src: [x, y],
                };
                if a == 0 {
                    OutSrc::Alu0
                } else {
                    OutSrc::Alu1
                }
            }
            _ => self.out_imm(word)?,
        };
        self.inst.out[k].mthd = src;
        self.open_mthd = Some(k);
        Some(())
    }

    fn try_emit(&mut self, x: Value) -> Option<()> {
        let k = match self.open_mthd.take() {
            Some(k) => k,
            None if self.outs < 2 => {
                self.outs += 1;
                self.outs - 1
            }
            None => return None,
        };
        self.inst.out[k].emit = self.out_value(x)?;
        Some(())
    }
}

/// The compare-and-branch for `test`: `(op, a, b, negated)` with
/// `test == (op(a, b) != negated)`.
fn primitive(test: &Test) -> (Hw, Value, Value, bool) {
    match *test {
        Test::Zero(v) => (Hw::Beq, v, Value::Zero, false),
        Test::NonZero(v) => (Hw::Beq, v, Value::Zero, true),
        Test::Cmp(cmp, x, y) => match cmp {
            Cmp::Eq => (Hw::Beq, x, y, false),
            Cmp::Ne => (Hw::Beq, x, y, true),
            Cmp::Lt => (Hw::Blt, x, y, false),
            Cmp::Ltu => (Hw::Bltu, x, y, false),
            Cmp::Le => (Hw::Ble, x, y, false),
            Cmp::Leu => (Hw::Bleu, x, y, false),
            Cmp::Gt => (Hw::Blt, y, x, false),
            Cmp::Gtu => (Hw::Bltu, y, x, false),
            Cmp::Ge => (Hw::Blt, x, y, true),
            Cmp::Geu => (Hw::Bltu, x, y, true),
        },
    }
}

struct Lowerer {
    insts: Vec<Inst>,
}

fn no_room(what: &str) -> LowerError {
    LowerError::Unlowerable(format!("{what} (operands do not fit one instruction)"))
}

impl Lowerer {
    fn block(&mut self, ops: &[Op]) -> Result<(), LowerError> {
        let mut i = 0;
        while i < ops.len() {
            if matches!(ops[i], Op::Mthd { .. } | Op::Emit { .. }) {
                let mut slots = Slots::default();
                let mut taken = 0;
                while let Some(op) = ops.get(i) {
                    let mut trial = slots.clone();
                    let fits = match *op {
                        Op::Mthd { mthd, index } => trial.try_mthd(mthd, index),
                        Op::Emit { x } => trial.try_emit(x),
                        _ => break,
                    };
                    match fits {
                        Some(()) => {
                            slots = trial;
                            taken += 1;
                            i += 1;
                        }
                        None if taken == 0 => return Err(no_room(&op.to_string())),
                        None => break,
                    }
                }
                self.insts.push(slots.inst);
                continue;
            }
            self.op(&ops[i])?;
            i += 1;
        }
        Ok(())
    }

    fn alu(&mut self, op: Hw, dst: Src, x: Value, y: Value) -> Result<(), LowerError> {
        let mut s = Slots::default();
        let a = s.alu().ok_or_else(|| no_room("alu"))?;
        let x = s.src(a, x).ok_or_else(|| no_room("alu"))?;
        let y = s.src(a, y).ok_or_else(|| no_room("alu"))?;
        s.inst.alu[a] = Alu {
            op,
            dst,
            src: [x, y],
        };
        self.insts.push(s.inst);
        Ok(())
    }

    fn op(&mut self, op: &Op) -> Result<(), LowerError> {
        match *op {
            Op::Alu { op, dst, x, y } => {
                let d = Src(dst.0);
                let hw = match op {
                    AluOp::Add => Hw::Add,
                    AluOp::Sub => Hw::Sub,
                    AluOp::And => Hw::And,
                    AluOp::Or => Hw::Or,
                    AluOp::Xor => Hw::Xor,
                    AluOp::Nand => Hw::Nand,
                    AluOp::Mul => Hw::Mul,
                    AluOp::Sll => Hw::Sll,
                    AluOp::Srl => Hw::Srl,
                    AluOp::AndNot => {
                        // No AND-NOT on Turing: x & !y = (x | y) ^ y, or x ^ (x & y) when
                        // the destination is y itself.
                        let dv = Value::Reg(dst);
                        if y == dv {
                            self.alu(Hw::And, d, x, y)?;
                            return self.alu(Hw::Xor, d, x, dv);
                        }
                        self.alu(Hw::Or, d, x, y)?;
                        return self.alu(Hw::Xor, d, dv, y);
                    }
                };
                self.alu(hw, d, x, y)
            }
            Op::Alu64 { op, dst, x, y } => {
                let (lo, hi) = match op {
                    Alu64Op::Add => (Hw::Add, Hw::Addc),
                    Alu64Op::Sub => (Hw::Sub, Hw::Subb),
                };
                let mut s = Slots {
                    alus: 2,
                    ..Default::default()
                };
                let srcs = [
                    [s.src(0, x[0]), s.src(0, y[0])],
                    [s.src(1, x[1]), s.src(1, y[1])],
                ];
                for (i, (op, [a, b])) in [(lo, srcs[0]), (hi, srcs[1])].into_iter().enumerate() {
                    let (a, b) = a.zip(b).ok_or_else(|| no_room("64-bit op"))?;
                    s.inst.alu[i] = Alu {
                        op,
                        dst: Src(dst[i].0),
                        src: [a, b],
                    };
                }
                self.insts.push(s.inst);
                Ok(())
            }
            Op::Merge {
                dst,
                x,
                y,
                dst_pos,
                bits,
                src_pos,
            } => {
                let mut s = Slots {
                    alus: 1,
                    imm_used: [true, false],
                    ..Default::default()
                };
                s.inst.imm[0] =
                    u16::from(src_pos) | (u16::from(bits) << 5) | (u16::from(dst_pos) << 10);
                let (a, b) = s
                    .src(0, x)
                    .zip(s.src(0, y))
                    .ok_or_else(|| no_room("merge"))?;
                s.inst.alu[0] = Alu {
                    op: Hw::Merge,
                    dst: Src(dst.0),
                    src: [a, b],
                };
                self.insts.push(s.inst);
                Ok(())
            }
            Op::Bfe { dst, x, pos, bits } => match pos.constant() {
                Some(p) => self.op(&Op::Merge {
                    dst,
                    x: Value::Zero,
                    y: x,
                    dst_pos: 0,
                    bits,
                    src_pos: p as u8,
                }),
                None => {
                    self.alu(Hw::Srl, Src(dst.0), x, pos)?;
                    self.alu(
                        Hw::And,
                        Src(dst.0),
                        Value::Reg(dst),
                        Value::Imm(crate::mme::mask(bits)),
                    )
                }
            },
            Op::Mov { dst, x } => self.alu(Hw::Add, Src(dst.0), x, Value::Zero),
            Op::Load { dst } => {
                let mut inst = Inst::nop();
                inst.alu[0] = Alu {
                    op: Hw::Add,
                    dst: Src(dst.0),
                    src: [Src::LOAD0, Src::ZERO],
                };
                self.insts.push(inst);
                Ok(())
            }
            Op::State { dst, mthd, index } => self.alu(
                Hw::State,
                Src(dst.0),
                Value::Imm(u32::from(mthd >> 2)),
                index,
            ),
            Op::DRead { dst, addr } => self.alu(Hw::Dread, Src(dst.0), addr, Value::Zero),
            Op::DWrite { addr, x } => self.alu(Hw::Dwrite, Src::ZERO, addr, x),
            Op::Barrier => self.alu(Hw::Extended, Src::ZERO, Value::Imm(0x1000), Value::Imm(1)),
            Op::Mthd { .. } | Op::Emit { .. } => self.block(std::slice::from_ref(op)),
            Op::If { ref test, ref then } => {
                let skip = self.branch(test, false)?;
                self.block(then)?;
                self.patch(skip, self.insts.len())
            }
            Op::While {
                ref cond,
                ref test,
                ref body,
            } => {
                let to_cond = self.branch(&Test::Zero(Value::Zero), true)?;
                let top = self.insts.len();
                self.block(body)?;
                let cond_at = self.insts.len();
                self.block(cond)?;
                let back = self.branch(test, true)?;
                self.patch(back, top)?;
                self.patch(to_cond, cond_at)
            }
            Op::Loop { count, ref body } => self.hw_loop(count, body),
            Op::ExitIf { ref test } => {
                let at = self.branch(test, true)?;
                self.insts[at].imm[0] = (self.insts[at].imm[0] & 0x8000) | EXIT_OFFSET;
                Ok(())
            }
        }
    }

    fn hw_loop(&mut self, count: Value, body: &[Op]) -> Result<(), LowerError> {
        if count.constant() == Some(0) {
            return Ok(());
        }
        // LOOP runs its body max(1, count) times: skip it outright for a count of 0.
        let guard = match count {
            Value::Reg(_) => Some(self.branch(&Test::Zero(count), true)?),
            _ => None,
        };
        let mut s = Slots {
            alus: 1,
            imm_used: [true, false],
            ..Default::default()
        };
        let c = s.src(0, count).ok_or_else(|| no_room("loop count"))?;
        s.inst.alu[0] = Alu {
            op: Hw::Loop,
            dst: Src::ZERO,
            src: [c, Src::ZERO],
        };
        let at = self.insts.len();
        self.insts.push(s.inst);
        self.block(body)?;
        // The loop ends after its last instruction runs: a branch there, or a branch past
        // it, would dodge the loop's end, so close such a body with a NOP.
        let ends_in_flow = matches!(
            body.last(),
            None | Some(Op::If { .. } | Op::While { .. } | Op::ExitIf { .. } | Op::Loop { .. })
        );
        if ends_in_flow {
            self.insts.push(Inst::nop());
        }
        let length = self.insts.len() - at;
        self.insts[at].imm[0] = u16::try_from(length).map_err(|_| LowerError::BranchTooFar {
            distance: length as i64,
            bits: 16,
        })?;
        if let Some(guard) = guard {
            self.patch(guard, self.insts.len())?;
        }
        Ok(())
    }

    /// A branch taken when `test == when`; its offset is patched later.
    fn branch(&mut self, test: &Test, when: bool) -> Result<usize, LowerError> {
        let (op, a, b, negated) = primitive(test);
        let expected = if when { !negated } else { negated };
        // imm0 holds the offset: operands may only use imm1 (as IMMPAIR).
        let mut s = Slots {
            alus: 1,
            imm_used: [true, false],
            ..Default::default()
        };
        let (a, b) = s
            .src(0, a)
            .zip(s.src(0, b))
            .ok_or_else(|| no_room("branch"))?;
        s.inst.alu[0] = Alu {
            op,
            dst: Src::ZERO,
            src: [a, b],
        };
        s.inst.imm[0] = u16::from(expected) << 15;
        self.insts.push(s.inst);
        Ok(self.insts.len() - 1)
    }

    fn patch(&mut self, at: usize, target: usize) -> Result<(), LowerError> {
        let offset = target as i64 - at as i64;
        if !(-4095..=4095).contains(&offset) {
            return Err(LowerError::BranchTooFar {
                distance: offset,
                bits: 13,
            });
        }
        let imm = &mut self.insts[at].imm[0];
        *imm = (*imm & 0x8000) | (offset as u16 & 0x1fff);
        Ok(())
    }
}
