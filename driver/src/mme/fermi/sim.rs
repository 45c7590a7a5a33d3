//! The pre-Turing simulator: decodes the words once, then runs a `match` loop over the
//! instructions against a [`Machine`].
//!
//! r1 holds the first parameter when the macro starts. A taken branch without
//! `no_delay` runs the next instruction (its delay slot) before jumping; an `end_next`
//! instruction lets one more run.

use super::isa::{decode, AluOp, Assign, Inst, Op};
use crate::mme::dma::ParamStream;
use crate::mme::machine::Machine;
use crate::mme::run::{RunError, RunErrorKind, RunStats};
use crate::mme::{mask, DecodeError};

/// A decoded pre-Turing macro, ready to run.
#[derive(Clone, Debug)]
pub struct Sim {
    name: String,
    insts: Vec<Inst>,
}

/// How an instruction can fail: a byte, so that the loop's result stays in a register
/// (the run's [`RunErrorKind`] is made from it only when one does).
#[derive(Clone, Copy, Debug)]
enum Fault {
    ParamsExhausted,
    EmitWithoutMethod,
}

impl Fault {
    fn kind(self) -> RunErrorKind {
        match self {
            Fault::ParamsExhausted => RunErrorKind::ParamsExhausted,
            Fault::EmitWithoutMethod => RunErrorKind::EmitWithoutMethod,
        }
    }
}

struct State {
    regs: [u32; 8],
    carry: u32,
    mthd: Option<(u16, u16)>,
    params: ParamStream,
}

impl Sim {
    /// Decodes `words` (one per instruction) of the macro called `name`.
    pub fn new(name: &str, words: &[u32]) -> Result<Self, DecodeError> {
        Ok(Sim {
            name: name.to_string(),
            insts: decode(words)?,
        })
    }

    /// The decoded instructions.
    pub fn insts(&self) -> &[Inst] {
        &self.insts
    }

    /// Runs the macro against `m`, stopping with an error past `budget` instructions.
    pub fn run(&self, m: &mut impl Machine, budget: u64) -> Result<RunStats, RunError> {
        let mut s = State {
            regs: [0; 8],
            carry: 0,
            mthd: None,
            params: ParamStream::default(),
        };
        s.regs[1] = s.params.next(m).unwrap_or(0);
        let mut ip = 0usize;
        let mut executed = 0u64;
        let mut ending = false;
        let mut delayed: Option<i64> = None;
        let fail = |ip: usize, kind| RunError {
            name: self.name.clone(),
            ip: ip as u32,
            kind,
        };
        loop {
            if executed >= budget {
                return Err(fail(ip, RunErrorKind::BudgetExceeded { budget }));
            }
            let inst = self
                .insts
                .get(ip)
                .ok_or_else(|| fail(ip, RunErrorKind::FellOffEnd))?;
            executed += 1;
            let mut next = ip as i64 + 1;
            let mut taken = None;
            if inst.op == Op::Branch {
                let v = s.regs[usize::from(inst.src0)];
                if (v != 0) == inst.not_zero {
                    let target = ip as i64 + i64::from(inst.imm);
                    if inst.no_delay {
                        next = target;
                    } else {
                        taken = Some(target);
                    }
                }
            } else {
                s.execute(inst, m).map_err(|fault| fail(ip, fault.kind()))?;
            }
            // This instruction was a delay slot: now the branch before it jumps.
            if let Some(target) = delayed.take() {
                next = target;
            }
            delayed = taken;
            if ending {
                return Ok(RunStats {
                    instructions: executed,
                });
            }
            ending = inst.end_next;
            if next < 0 || next as usize >= self.insts.len() {
                return Err(fail(ip, RunErrorKind::JumpOutOfRange { target: next }));
            }
            ip = next as usize;
        }
    }
}

impl State {
    fn reg(&self, r: u8) -> u32 {
        self.regs[usize::from(r & 7)]
    }

    fn set(&mut self, r: u8, v: u32) {
        if r != 0 {
            self.regs[usize::from(r & 7)] = v;
        }
    }

    fn result(&mut self, inst: &Inst, m: &mut impl Machine) -> u32 {
        let (x, y) = (self.reg(inst.src0), self.reg(inst.src1));
        let bfe = |v: u32, src_bit: u32, size: u8, dst_bit: u32| -> u32 {
            if src_bit > 31 || dst_bit > 31 {
                0
            } else {
                ((v >> src_bit) & mask(size)) << dst_bit
            }
        };
        match inst.op {
            Op::AluReg => match inst.alu_op {
                AluOp::Add => {
                    let r = x.wrapping_add(y);
                    self.carry = u32::from(r < x);
                    r
                }
                AluOp::Addc => {
                    let r = x.wrapping_add(y).wrapping_add(self.carry);
                    self.carry = u32::from(r < x || (self.carry != 0 && r == x));
                    r
                }
                AluOp::Sub => {
                    let r = x.wrapping_sub(y);
                    self.carry = u32::from(r > x);
                    r
                }
                AluOp::Subb => {
                    let r = x.wrapping_sub(y).wrapping_sub(self.carry);
                    self.carry = u32::from(r > x || (self.carry != 0 && r == x));
                    r
                }
                AluOp::Xor => x ^ y,
                AluOp::Or => x | y,
                AluOp::And => x & y,
                AluOp::AndNot => x & !y,
                AluOp::Nand => !(x & y),
            },
            Op::AddImm => x.wrapping_add(inst.imm as u32),
            Op::Merge => {
                let field = mask(inst.size) << inst.dst_bit;
                (x & !field)
                    | bfe(
                        y,
                        u32::from(inst.src_bit),
                        inst.size,
                        u32::from(inst.dst_bit),
                    )
            }
            Op::BfeLslImm => bfe(y, x, inst.size, u32::from(inst.dst_bit)),
            Op::BfeLslReg => bfe(y, u32::from(inst.src_bit), inst.size, x),
            Op::State => m.state((x.wrapping_add(inst.imm as u32).wrapping_mul(4) & 0x3ffc) as u16),
            Op::Branch => 0,
        }
    }

    fn param(&mut self, m: &mut impl Machine) -> Result<u32, Fault> {
        self.params.next(m).ok_or(Fault::ParamsExhausted)
    }

    fn set_mthd(&mut self, v: u32) {
        self.mthd = Some((((v & 0xfff) << 2) as u16, ((v >> 12) & 0xf) as u16));
    }

    fn emit(&mut self, data: u32, m: &mut impl Machine) -> Result<(), Fault> {
        let (mthd, inc) = self.mthd.ok_or(Fault::EmitWithoutMethod)?;
        self.params.observe(mthd, data);
        m.mthd(mthd, data);
        self.mthd = Some(((mthd + 4 * inc) & 0x3ffc, inc));
        Ok(())
    }

    fn execute(&mut self, inst: &Inst, m: &mut impl Machine) -> Result<(), Fault> {
        let r = self.result(inst, m);
        match inst.assign {
            Assign::Load => {
                let p = self.param(m)?;
                self.set(inst.dst, p);
            }
            Assign::Move => self.set(inst.dst, r),
            Assign::MoveSetMaddr => {
                self.set(inst.dst, r);
                self.set_mthd(r);
            }
            Assign::LoadEmit => {
                let p = self.param(m)?;
                self.set(inst.dst, p);
                self.emit(r, m)?;
            }
            Assign::MoveEmit => {
                self.set(inst.dst, r);
                self.emit(r, m)?;
            }
            Assign::LoadSetMaddr => {
                let p = self.param(m)?;
                self.set(inst.dst, p);
                self.set_mthd(r);
            }
            Assign::MoveSetMaddrLoadEmit => {
                self.set(inst.dst, r);
                self.set_mthd(r);
                let p = self.param(m)?;
                self.emit(p, m)?;
            }
            Assign::MoveSetMaddrLoadEmitHigh => {
                self.set(inst.dst, r);
                self.set_mthd(r);
                self.emit((r >> 12) & 0x3f, m)?;
            }
        }
        Ok(())
    }
}
