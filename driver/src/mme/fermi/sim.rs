//! The pre-Turing simulator: decodes the words once into steps the loop runs without
//! re-reading encodings (ALU_REG's operation folded into the step's kind, branch
//! targets and bitfield masks worked out, r0's writes sent to a slot nothing reads),
//! then runs a `match` loop over them against a [`Machine`].
//!
//! r1 holds the first parameter when the macro starts. A taken branch without
//! `no_delay` runs the next instruction (its delay slot) before jumping; an `end_next`
//! instruction lets one more run.

use super::isa::{decode, AluOp, Assign, Inst, Op};
use crate::mme::dma::ParamStream;
use crate::mme::machine::Machine;
use crate::mme::run::{RunError, RunErrorKind, RunStats};
use crate::mme::{mask, DecodeError};

/// The register slot writes to r0 go to: r0 reads as zero, so nothing reads it back.
const DISCARD: u8 = 8;
/// Register slots: r0–r7 and [`DISCARD`], rounded up so that an index masked with
/// [`SLOT_MASK`] needs no bounds check.
const SLOTS: usize = 16;
const SLOT_MASK: u8 = 15;

/// A decoded pre-Turing macro, ready to run.
#[derive(Clone, Debug)]
pub struct Sim {
    name: String,
    insts: Vec<Inst>,
    steps: Vec<Step>,
    /// For each instruction, how many in a row from it are plain: no branch, no
    /// `end_next`, and followed by another instruction. Outside a delay slot and an
    /// ending, the loop runs such a run without its per-instruction checks.
    plain_run: Vec<u32>,
}

/// What computes an instruction's result: its op, with ALU_REG's operation folded in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Calc {
    Add,
    Addc,
    Sub,
    Subb,
    Xor,
    Or,
    And,
    AndNot,
    Nand,
    AddImm,
    Merge,
    BfeLslImm,
    BfeLslReg,
    State,
    Branch,
}

/// The pairs of result and assign op NVK's macros use most, each run by one arm of
/// the loop's `match`; the rest run as [`Fused::General`]: the result, then the assign.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fused {
    /// ADD_IMM, then `dst = method = result` (how a macro selects a method).
    AddImmSetMethod,
    /// ADD, then `dst = result; emit result` (how a macro emits a register).
    AddEmit,
    /// ADD_IMM, then `dst = result; emit result`.
    AddImmEmit,
    /// ADD, then `dst = result`.
    AddMove,
    /// ADD_IMM, then `dst = result`.
    AddImmMove,
    /// STATE, then `dst = result`.
    StateMove,
    /// Any other pair.
    General,
}

/// An instruction as the loop runs it, worked out once at decode time.
#[derive(Clone, Copy, Debug)]
struct Step {
    fused: Fused,
    calc: Calc,
    assign: Assign,
    /// The register slot the result goes to ([`DISCARD`] for r0).
    dst: u8,
    src0: u8,
    src1: u8,
    end_next: bool,
    /// ADD_IMM and STATE: the immediate, as the 32-bit value added.
    imm: u32,
    /// MERGE and the BFEs: `mask(size)`, the source and the destination bit.
    field: u32,
    src_bit: u8,
    dst_bit: u8,
    /// BRANCH: taken when `src0 != 0` (else when zero); jumps without a delay slot.
    not_zero: bool,
    no_delay: bool,
    /// BRANCH: the target, `ip + imm` (checked when taken).
    target: i64,
}

impl Step {
    fn of(ip: usize, inst: &Inst) -> Step {
        let calc = match inst.op {
            Op::AluReg => match inst.alu_op {
                AluOp::Add => Calc::Add,
                AluOp::Addc => Calc::Addc,
                AluOp::Sub => Calc::Sub,
                AluOp::Subb => Calc::Subb,
                AluOp::Xor => Calc::Xor,
                AluOp::Or => Calc::Or,
                AluOp::And => Calc::And,
                AluOp::AndNot => Calc::AndNot,
                AluOp::Nand => Calc::Nand,
            },
            Op::AddImm => Calc::AddImm,
            Op::Merge => Calc::Merge,
            Op::BfeLslImm => Calc::BfeLslImm,
            Op::BfeLslReg => Calc::BfeLslReg,
            Op::State => Calc::State,
            Op::Branch => Calc::Branch,
        };
        let fused = match (calc, inst.assign) {
            (Calc::AddImm, Assign::MoveSetMaddr) => Fused::AddImmSetMethod,
            (Calc::Add, Assign::MoveEmit) => Fused::AddEmit,
            (Calc::AddImm, Assign::MoveEmit) => Fused::AddImmEmit,
            (Calc::Add, Assign::Move) => Fused::AddMove,
            (Calc::AddImm, Assign::Move) => Fused::AddImmMove,
            (Calc::State, Assign::Move) => Fused::StateMove,
            _ => Fused::General,
        };
        Step {
            fused,
            calc,
            assign: inst.assign,
            dst: if inst.dst & 7 == 0 {
                DISCARD
            } else {
                inst.dst & 7
            },
            src0: inst.src0 & 7,
            src1: inst.src1 & 7,
            end_next: inst.end_next,
            imm: inst.imm as u32,
            field: mask(inst.size),
            src_bit: inst.src_bit,
            dst_bit: inst.dst_bit,
            not_zero: inst.not_zero,
            no_delay: inst.no_delay,
            target: ip as i64 + i64::from(inst.imm),
        }
    }
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
    regs: [u32; SLOTS],
    carry: u32,
    mthd: Option<(u16, u16)>,
    params: ParamStream,
}

impl Sim {
    /// Decodes `words` (one per instruction) of the macro called `name`.
    pub fn new(name: &str, words: &[u32]) -> Result<Self, DecodeError> {
        let insts = decode(words)?;
        let steps: Vec<Step> = insts
            .iter()
            .enumerate()
            .map(|(ip, inst)| Step::of(ip, inst))
            .collect();
        let mut plain_run = vec![0u32; steps.len()];
        for ip in (0..steps.len().saturating_sub(1)).rev() {
            let step = &steps[ip];
            if step.calc != Calc::Branch && !step.end_next {
                plain_run[ip] = plain_run[ip + 1] + 1;
            }
        }
        Ok(Sim {
            name: name.to_string(),
            insts,
            steps,
            plain_run,
        })
    }

    /// The decoded instructions.
    pub fn insts(&self) -> &[Inst] {
        &self.insts
    }

    /// Runs the macro against `m`, stopping with an error past `budget` instructions.
    pub fn run(&self, m: &mut impl Machine, budget: u64) -> Result<RunStats, RunError> {
        let mut s = State {
            regs: [0; SLOTS],
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
            // A run of plain instructions, outside a delay slot and an ending: each
            // goes on to the next, which exists; the budget bounds the run.
            if delayed.is_none() && !ending {
                let run = self.plain_run.get(ip).map_or(0, |&n| u64::from(n));
                let run = run.min(budget.saturating_sub(executed)) as usize;
                if run > 0 {
                    for (at, step) in self.steps[ip..ip + run].iter().enumerate() {
                        s.execute(step, m)
                            .map_err(|fault| fail(ip + at, fault.kind()))?;
                    }
                    executed += run as u64;
                    ip += run;
                    continue;
                }
            }
            if executed >= budget {
                return Err(fail(ip, RunErrorKind::BudgetExceeded { budget }));
            }
            let step = self
                .steps
                .get(ip)
                .ok_or_else(|| fail(ip, RunErrorKind::FellOffEnd))?;
            executed += 1;
            let mut next = ip as i64 + 1;
            let mut taken = None;
            if step.calc == Calc::Branch {
                let v = s.regs[usize::from(step.src0 & SLOT_MASK)];
                if (v != 0) == step.not_zero {
                    if step.no_delay {
                        next = step.target;
                    } else {
                        taken = Some(step.target);
                    }
                }
            } else {
                s.execute(step, m).map_err(|fault| fail(ip, fault.kind()))?;
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
            ending = step.end_next;
            if next < 0 || next as usize >= self.steps.len() {
                return Err(fail(ip, RunErrorKind::JumpOutOfRange { target: next }));
            }
            ip = next as usize;
        }
    }
}

impl State {
    #[inline(always)]
    fn reg(&self, r: u8) -> u32 {
        self.regs[usize::from(r & SLOT_MASK)]
    }

    #[inline(always)]
    fn set(&mut self, slot: u8, v: u32) {
        self.regs[usize::from(slot & SLOT_MASK)] = v;
    }

    #[inline(always)]
    fn result(&mut self, step: &Step, m: &mut impl Machine) -> u32 {
        let (x, y) = (self.reg(step.src0), self.reg(step.src1));
        match step.calc {
            Calc::Add => self.add(x, y),
            Calc::Addc => {
                let r = x.wrapping_add(y).wrapping_add(self.carry);
                self.carry = u32::from(r < x || (self.carry != 0 && r == x));
                r
            }
            Calc::Sub => {
                let r = x.wrapping_sub(y);
                self.carry = u32::from(r > x);
                r
            }
            Calc::Subb => {
                let r = x.wrapping_sub(y).wrapping_sub(self.carry);
                self.carry = u32::from(r > x || (self.carry != 0 && r == x));
                r
            }
            Calc::Xor => x ^ y,
            Calc::Or => x | y,
            Calc::And => x & y,
            Calc::AndNot => x & !y,
            Calc::Nand => !(x & y),
            Calc::AddImm => x.wrapping_add(step.imm),
            // The source and destination bits are 5-bit fields: always in range.
            Calc::Merge => {
                let (src_bit, dst_bit) = (u32::from(step.src_bit), u32::from(step.dst_bit));
                (x & !(step.field << dst_bit)) | (((y >> src_bit) & step.field) << dst_bit)
            }
            Calc::BfeLslImm if x > 31 => 0,
            Calc::BfeLslImm => ((y >> x) & step.field) << step.dst_bit,
            Calc::BfeLslReg if x > 31 => 0,
            Calc::BfeLslReg => ((y >> step.src_bit) & step.field) << x,
            Calc::State => m.state((x.wrapping_add(step.imm).wrapping_mul(4) & 0x3ffc) as u16),
            Calc::Branch => 0,
        }
    }

    #[inline(always)]
    fn param(&mut self, m: &mut impl Machine) -> Result<u32, Fault> {
        self.params.next(m).ok_or(Fault::ParamsExhausted)
    }

    #[inline(always)]
    fn set_mthd(&mut self, v: u32) {
        self.mthd = Some((((v & 0xfff) << 2) as u16, ((v >> 12) & 0xf) as u16));
    }

    #[inline(always)]
    fn emit(&mut self, data: u32, m: &mut impl Machine) -> Result<(), Fault> {
        let (mthd, inc) = self.mthd.ok_or(Fault::EmitWithoutMethod)?;
        self.params.observe(mthd, data);
        m.mthd(mthd, data);
        self.mthd = Some(((mthd + 4 * inc) & 0x3ffc, inc));
        Ok(())
    }

    /// Adds `x` and `y`, setting the carry as ALU_REG's ADD does.
    #[inline(always)]
    fn add(&mut self, x: u32, y: u32) -> u32 {
        let r = x.wrapping_add(y);
        self.carry = u32::from(r < x);
        r
    }

    #[inline(always)]
    fn execute(&mut self, step: &Step, m: &mut impl Machine) -> Result<(), Fault> {
        let x = self.reg(step.src0);
        match step.fused {
            Fused::AddImmSetMethod => {
                let r = x.wrapping_add(step.imm);
                self.set(step.dst, r);
                self.set_mthd(r);
                Ok(())
            }
            Fused::AddEmit => {
                let r = self.add(x, self.reg(step.src1));
                self.set(step.dst, r);
                self.emit(r, m)
            }
            Fused::AddImmEmit => {
                let r = x.wrapping_add(step.imm);
                self.set(step.dst, r);
                self.emit(r, m)
            }
            Fused::AddMove => {
                let r = self.add(x, self.reg(step.src1));
                self.set(step.dst, r);
                Ok(())
            }
            Fused::AddImmMove => {
                self.set(step.dst, x.wrapping_add(step.imm));
                Ok(())
            }
            Fused::StateMove => {
                let r = m.state((x.wrapping_add(step.imm).wrapping_mul(4) & 0x3ffc) as u16);
                self.set(step.dst, r);
                Ok(())
            }
            Fused::General => self.execute_general(step, m),
        }
    }

    /// Runs `step`: its result, then its assign op.
    #[inline(always)]
    fn execute_general(&mut self, step: &Step, m: &mut impl Machine) -> Result<(), Fault> {
        let r = self.result(step, m);
        match step.assign {
            Assign::Move => self.set(step.dst, r),
            Assign::Load => {
                let p = self.param(m)?;
                self.set(step.dst, p);
            }
            Assign::MoveSetMaddr => {
                self.set(step.dst, r);
                self.set_mthd(r);
            }
            Assign::LoadEmit => {
                let p = self.param(m)?;
                self.set(step.dst, p);
                self.emit(r, m)?;
            }
            Assign::MoveEmit => {
                self.set(step.dst, r);
                self.emit(r, m)?;
            }
            Assign::LoadSetMaddr => {
                let p = self.param(m)?;
                self.set(step.dst, p);
                self.set_mthd(r);
            }
            Assign::MoveSetMaddrLoadEmit => {
                self.set(step.dst, r);
                self.set_mthd(r);
                let p = self.param(m)?;
                self.emit(p, m)?;
            }
            Assign::MoveSetMaddrLoadEmitHigh => {
                self.set(step.dst, r);
                self.set_mthd(r);
                self.emit((r >> 12) & 0x3f, m)?;
            }
        }
        Ok(())
    }
}
