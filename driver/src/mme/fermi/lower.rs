//! Builder programs to pre-Turing instructions, laid out as Mesa's Fermi macro
//! builder lays them out (`mme_fermi_builder.c`), so that a macro built op for op as
//! NVK builds it encodes to NVK's very words.
//!
//! Every op is one instruction, except a 32-bit immediate that does not fit the
//! 18-bit field (three: the high half, a shift by 16, the low half) and 64-bit ops (ADD
//! then ADDC, SUB then SUBB). A parameter load goes into the instruction control flow
//! just opened; an emit of a register the previous instruction wrote turns that
//! instruction's assignment into MOVE_EMIT. Branches test one register for zero and
//! never use their delay slot. A `while` is laid out as `jump to cond; body; cond:
//! compute the test; branch back if it holds`: the jump lands on the test's
//! computation, never on the branch after it (the pre-Turing `mme_while` bug that
//! NVK's multiview work found). The end of control flow opens an instruction that the
//! next op fills (an empty one becomes a NOP).

use super::isa::{AluOp as Hw, Assign, Inst, Op as HwOp};
use crate::mme::ir::{Alu64Op, AluOp, Arch, Op, Program, Test};
use crate::mme::value::Value;
use crate::mme::LowerError;

/// Lowers `program` (built for Fermi) to instructions, ending with `NOP; END_NEXT` and
/// one NOP.
pub fn lower(program: &Program) -> Result<Vec<Inst>, LowerError> {
    if program.arch != Arch::Fermi {
        return Err(LowerError::WrongArch {
            built: program.arch.name(),
            target: "fermi",
        });
    }
    let mut lowerer = Lowerer {
        insts: Vec::new(),
        parts: 0,
        exits: Vec::new(),
    };
    lowerer.block(&program.ops)?;
    // mme_fermi_builder_finish: two NOPs after whatever is being filled.
    lowerer.new_inst();
    lowerer.new_inst();
    let end = lowerer.insts.len() - 2;
    lowerer.insts[end].end_next = true;
    for at in std::mem::take(&mut lowerer.exits) {
        lowerer.patch(at, end)?;
    }
    Ok(lowerer.insts)
}

/// What the instruction being filled holds (Mesa's `mme_fermi_instr_parts`).
const PART_OP: u8 = 1;
const PART_ASSIGN: u8 = 2;

fn fits_i18(v: u32) -> bool {
    (-(1 << 17)..(1 << 17)).contains(&(v as i32))
}

struct Lowerer {
    insts: Vec<Inst>,
    parts: u8,
    exits: Vec<usize>,
}

/// The register a value lives in (r0 for zero).
fn reg(v: Value) -> Result<u8, LowerError> {
    match v {
        Value::Zero | Value::Imm(0) => Ok(0),
        Value::Reg(r) if (1..8).contains(&r.0) => Ok(r.0),
        other => Err(LowerError::Unlowerable(format!(
            "operand {other} is not a pre-Turing register"
        ))),
    }
}

fn unlowerable(op: &Op) -> LowerError {
    LowerError::Unlowerable(format!("`{op}` on pre-Turing"))
}

impl Lowerer {
    /// Starts a new instruction (`mme_fermi_new_inst`).
    fn new_inst(&mut self) {
        self.insts.push(Inst::nop());
        self.parts = 0;
    }

    /// Puts a whole instruction in the one being filled if it is empty, else in a new
    /// one (`mme_fermi_next_inst_can_fit_a_full_inst`).
    fn push(&mut self, inst: Inst) {
        if self.insts.is_empty() || self.parts != 0 {
            self.new_inst();
        }
        let n = self.insts.len();
        self.insts[n - 1] = inst;
        self.parts = PART_OP | PART_ASSIGN;
    }

    /// A parameter into `dst` (`mme_fermi_load_to`): the assignment of the
    /// instruction being filled if it has none.
    fn load(&mut self, dst: u8) {
        if self.insts.is_empty() || self.parts & PART_ASSIGN != 0 {
            self.new_inst();
        }
        let n = self.insts.len();
        self.insts[n - 1].assign = Assign::Load;
        self.insts[n - 1].dst = dst;
        self.parts |= PART_ASSIGN;
    }

    /// Emits `v` (`mme_fermi_emit`): a register the previous instruction moved a
    /// result into is emitted by that instruction; anything else by a new ADD.
    fn emit(&mut self, v: Value) -> Result<(), LowerError> {
        if let (Value::Reg(r), Some(last)) = (v, self.insts.last_mut()) {
            if self.parts & PART_ASSIGN != 0
                && last.assign == Assign::Move
                && last.dst == r.0
                && !(self.parts & PART_OP != 0 && last.op == HwOp::State)
            {
                last.assign = Assign::MoveEmit;
                return Ok(());
            }
        }
        match v {
            Value::Imm(c) if c != 0 => {
                // The builder moves immediates into registers; one it did not is
                // emitted from the instruction's own field.
                if !fits_i18(c) {
                    return Err(LowerError::Unlowerable(format!(
                        "an emit of {c:#x} on pre-Turing"
                    )));
                }
                self.add_imm(0, 0, c, Assign::MoveEmit);
            }
            other => self.push(Inst {
                op: HwOp::AluReg,
                alu_op: Hw::Add,
                assign: Assign::MoveEmit,
                dst: 0,
                src0: reg(other)?,
                src1: 0,
                ..Inst::default()
            }),
        }
        Ok(())
    }

    fn add_imm(&mut self, dst: u8, src0: u8, imm: u32, assign: Assign) {
        self.push(Inst {
            op: HwOp::AddImm,
            assign,
            dst,
            src0,
            imm: imm as i32,
            ..Inst::default()
        });
    }

    fn alu(&mut self, op: Hw, dst: u8, x: Value, y: Value) -> Result<(), LowerError> {
        self.push(Inst {
            op: HwOp::AluReg,
            alu_op: op,
            dst,
            src0: reg(x)?,
            src1: reg(y)?,
            ..Inst::default()
        });
        Ok(())
    }

    /// `dst = v` for any value (Mesa's `mme_mov_to`, an ADD of zero).
    fn mov(&mut self, dst: u8, v: Value) -> Result<(), LowerError> {
        match v {
            Value::Zero | Value::Imm(0) | Value::Reg(_) => {
                self.alu(Hw::Add, dst, v, Value::Zero)?;
            }
            Value::Imm(c) if !fits_i18(c) => {
                // 32-bit immediates: high half, shifted up 16, plus the low half.
                self.add_imm(dst, 0, c >> 16, Assign::Move);
                self.push(Inst {
                    op: HwOp::BfeLslImm,
                    dst,
                    src0: 0,
                    src1: dst,
                    size: 31,
                    dst_bit: 16,
                    ..Inst::default()
                });
                self.add_imm(dst, dst, c & 0xffff, Assign::Move);
            }
            Value::Imm(c) => self.add_imm(dst, 0, c, Assign::Move),
        }
        Ok(())
    }

    fn block(&mut self, ops: &[Op]) -> Result<(), LowerError> {
        ops.iter().try_for_each(|op| self.op(op))
    }

    fn op(&mut self, op: &Op) -> Result<(), LowerError> {
        match *op {
            Op::Alu { op: alu, dst, x, y } => {
                let d = reg(Value::Reg(dst))?;
                match (alu, y) {
                    (AluOp::Add, Value::Imm(c)) if c != 0 => {
                        self.add_imm(d, reg(x)?, c, Assign::Move)
                    }
                    (AluOp::Sub, Value::Imm(c)) => {
                        self.add_imm(d, reg(x)?, c.wrapping_neg(), Assign::Move)
                    }
                    (AluOp::Sll, Value::Reg(n)) => {
                        // mme_fermi_sll_to by a register: BFE_LSL_REG shifts left by
                        // src0 (the builder keeps the value below 2^31).
                        self.push(Inst {
                            op: HwOp::BfeLslReg,
                            dst: d,
                            src0: n.0,
                            src1: reg(x)?,
                            src_bit: 0,
                            size: 31,
                            dst_bit: 0,
                            ..Inst::default()
                        });
                    }
                    (AluOp::Sll | AluOp::Srl, n) => {
                        // mme_fermi_sll_to, mme_fermi_srl_to: a 31-bit field.
                        // (By 0, Mesa's 31-bit field would drop bit 31: a move.)
                        let n = n.constant().ok_or_else(|| unlowerable(op))? as u8;
                        if n == 0 {
                            return self.mov(d, x);
                        }
                        let (bfe, src_bit, dst_bit) = match alu {
                            AluOp::Sll => (HwOp::BfeLslImm, 0, n),
                            _ => (HwOp::BfeLslReg, n, 0),
                        };
                        self.push(Inst {
                            op: bfe,
                            dst: d,
                            src0: 0,
                            src1: reg(x)?,
                            src_bit,
                            size: 31,
                            dst_bit,
                            ..Inst::default()
                        });
                    }
                    _ => {
                        let hw = match alu {
                            AluOp::Add => Hw::Add,
                            AluOp::Sub => Hw::Sub,
                            AluOp::And => Hw::And,
                            AluOp::AndNot => Hw::AndNot,
                            AluOp::Or => Hw::Or,
                            AluOp::Xor => Hw::Xor,
                            AluOp::Nand => Hw::Nand,
                            AluOp::Mul | AluOp::Sll | AluOp::Srl => return Err(unlowerable(op)),
                        };
                        self.alu(hw, d, x, y)?;
                    }
                }
                Ok(())
            }
            Op::Alu64 { op: alu, dst, x, y } => {
                let (lo, hi) = match alu {
                    Alu64Op::Add => (Hw::Add, Hw::Addc),
                    Alu64Op::Sub => (Hw::Sub, Hw::Subb),
                    Alu64Op::UMul => return Err(unlowerable(op)),
                };
                // The carry flag passes from the first instruction to the second.
                self.alu(lo, reg(Value::Reg(dst[0]))?, x[0], y[0])?;
                self.alu(hi, reg(Value::Reg(dst[1]))?, x[1], y[1])
            }
            Op::Alu64Half {
                op: alu,
                high,
                dst,
                x,
                y,
            } => {
                let hw = match (alu, high) {
                    (Alu64Op::Add, false) => Hw::Add,
                    (Alu64Op::Add, true) => Hw::Addc,
                    (Alu64Op::Sub, false) => Hw::Sub,
                    (Alu64Op::Sub, true) => Hw::Subb,
                    (Alu64Op::UMul, _) => return Err(unlowerable(op)),
                };
                self.alu(hw, reg(Value::Reg(dst))?, x, y)
            }
            Op::Merge {
                dst,
                x,
                y,
                dst_pos,
                bits,
                src_pos,
            } => {
                self.push(Inst {
                    op: HwOp::Merge,
                    dst: reg(Value::Reg(dst))?,
                    src0: reg(x)?,
                    src1: reg(y)?,
                    src_bit: src_pos,
                    size: bits,
                    dst_bit: dst_pos,
                    ..Inst::default()
                });
                Ok(())
            }
            Op::Bfe { dst, x, pos, bits } => {
                let d = reg(Value::Reg(dst))?;
                let inst = match pos.constant() {
                    Some(p) => Inst {
                        op: HwOp::BfeLslReg,
                        dst: d,
                        src0: 0,
                        src1: reg(x)?,
                        src_bit: p as u8,
                        size: bits,
                        ..Inst::default()
                    },
                    None => Inst {
                        op: HwOp::BfeLslImm,
                        dst: d,
                        src0: reg(pos)?,
                        src1: reg(x)?,
                        size: bits,
                        ..Inst::default()
                    },
                };
                self.push(inst);
                Ok(())
            }
            Op::Mov { dst, x } => self.mov(reg(Value::Reg(dst))?, x),
            Op::Load { dst } => {
                self.load(reg(Value::Reg(dst))?);
                Ok(())
            }
            Op::State { dst, mthd, index } => {
                self.push(Inst {
                    op: HwOp::State,
                    dst: reg(Value::Reg(dst))?,
                    src0: reg(index)?,
                    imm: i32::from(mthd >> 2),
                    ..Inst::default()
                });
                Ok(())
            }
            Op::Mthd { mthd, index } => {
                self.add_imm(
                    0,
                    reg(index)?,
                    u32::from(mthd >> 2) | (1 << 12),
                    Assign::MoveSetMaddr,
                );
                Ok(())
            }
            Op::Emit { x } => self.emit(x),
            Op::If { ref test, ref then } => {
                // mme_fermi_start_cf: the body starts a new instruction; its end
                // closes the one being filled.
                let skip = self.branch(test, false)?;
                self.new_inst();
                self.block(then)?;
                self.end_flow(skip)
            }
            Op::While {
                ref cond,
                ref test,
                ref body,
            } => {
                let to_cond = self.branch(&Test::Zero(Value::Zero), true)?;
                self.new_inst();
                let top = to_cond + 1;
                self.block(body)?;
                // Close the forward jump onto the test's computation, then compute, then
                // branch back (mme_fermi_end_while).
                self.end_flow(to_cond)?;
                self.block(cond)?;
                if self.parts != 0 {
                    self.new_inst();
                }
                let back = self.branch(test, true)?;
                self.patch(back, top)
            }
            Op::ExitIf { ref test } => {
                let at = self.branch(test, true)?;
                self.exits.push(at);
                Ok(())
            }
            Op::Loop { .. } | Op::DRead { .. } | Op::DWrite { .. } | Op::Barrier => {
                Err(unlowerable(op))
            }
        }
    }

    /// A branch (no delay slot) taken when `test == when`; its offset is patched later.
    fn branch(&mut self, test: &Test, when: bool) -> Result<usize, LowerError> {
        let (v, holds_when_zero) = match *test {
            Test::Zero(v) => (v, true),
            Test::NonZero(v) => (v, false),
            Test::Cmp(..) => {
                return Err(LowerError::Unlowerable(
                    "a two-operand comparison on pre-Turing".into(),
                ));
            }
        };
        // Taken when the register is zero iff (test holds when zero) == when.
        let not_zero = holds_when_zero != when;
        // mme_fermi_branch: in the instruction being filled only if it is empty.
        self.push(Inst {
            op: HwOp::Branch,
            src0: reg(v)?,
            not_zero,
            no_delay: true,
            ..Inst::default()
        });
        Ok(self.insts.len() - 1)
    }

    /// Ends control flow begun by the branch at `start`: closes the instruction being
    /// filled and points the branch at the next (`mme_fermi_end_cf`).
    fn end_flow(&mut self, start: usize) -> Result<(), LowerError> {
        if self.parts != 0 {
            self.new_inst();
        }
        self.patch(start, self.insts.len() - 1)
    }

    fn patch(&mut self, at: usize, target: usize) -> Result<(), LowerError> {
        let offset = target as i64 - at as i64;
        if !(-(1 << 17)..(1 << 17)).contains(&offset) {
            return Err(LowerError::BranchTooFar {
                distance: offset,
                bits: 18,
            });
        }
        self.insts[at].imm = offset as i32;
        Ok(())
    }
}
