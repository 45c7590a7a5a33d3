//! Builder programs to Turing instructions, packed as Mesa's Turing macro builder
//! packs them (`mme_tu104_builder.c`), so that a macro built op for op as NVK builds it
//! encodes to NVK's very words.
//!
//! Ops are added to the instruction being filled while it has room: two ALUs (the
//! second independent of the first), two immediates, two loads, two method outputs
//! each a method and an emit; otherwise a new instruction starts. A register emitted
//! right after the ALU that wrote it is emitted from that ALU. Control flow starts with
//! its branch (or LOOP, or JAL for a `while`) in ALU 0 and its body in a new
//! instruction; its end closes the instruction being filled, and the branch's offset
//! is patched to reach there. A macro ends with two NOPs, the first marked END_NEXT.

use super::isa::{Alu, AluOp as Hw, Inst, OutSrc, Src};
use crate::mme::ir::{Alu64Op, AluOp, Arch, Cmp, Op, Program, Test};
use crate::mme::value::Value;
use crate::mme::LowerError;

/// The branch offset that ends the macro.
const EXIT_OFFSET: u16 = 0x1000;

/// Lowers `program` (built for Turing) to instructions.
pub fn lower(program: &Program) -> Result<Vec<Inst>, LowerError> {
    if program.arch != Arch::Turing {
        return Err(LowerError::WrongArch {
            built: program.arch.name(),
            target: "turing",
        });
    }
    let mut p = Packer::default();
    p.block(&program.ops)?;
    // mme_tu104_builder_finish: two NOPs after whatever is being filled.
    p.new_inst();
    p.new_inst();
    let n = p.insts.len();
    p.insts[n - 2].end_next = true;
    Ok(p.insts)
}

/// What the instruction being filled holds (Mesa's `mme_tu104_instr_parts`).
mod part {
    pub const IMM0: u16 = 1 << 0;
    pub const IMM1: u16 = 1 << 1;
    pub const LOAD0: u16 = 1 << 2;
    pub const LOAD1: u16 = 1 << 3;
    pub const ALU0: u16 = 1 << 4;
    pub const ALU1: u16 = 1 << 5;
    pub const MTHD0: u16 = 1 << 6;
    pub const MTHD1: u16 = 1 << 7;
    pub const EMIT0: u16 = 1 << 8;
    pub const EMIT1: u16 = 1 << 9;
    /// Not Mesa's: an instruction kept as a NOP (the end of a loop body that ends in
    /// control flow, so that its branches land inside the loop).
    pub const KEPT: u16 = 1 << 10;
    pub const OUTPUTS: u16 = MTHD0 | EMIT0 | MTHD1 | EMIT1;
}

/// Immediates a source register takes (`mme_tu104_reg_num_imms`).
fn imms_of(r: Src) -> u32 {
    match r {
        Src::IMM | Src::IMMPAIR => 1,
        Src::IMM32 => 2,
        _ => 0,
    }
}

/// Whether an op carries an immediate of its own in its ALU's slot
/// (`mme_tu104_alu_op_has_implicit_imm`).
fn has_implicit_imm(op: Hw) -> bool {
    matches!(
        op,
        Hw::Merge | Hw::Loop | Hw::Jal | Hw::Blt | Hw::Bltu | Hw::Ble | Hw::Bleu | Hw::Beq
    )
}

/// Whether the second ALU must wait for the first (`mme_tu104_alus_have_dependency`).
fn depends(first: &Alu, second: &Alu) -> bool {
    let is_load = |s: Src| s == Src::LOAD0 || s == Src::LOAD1;
    (first.dst != Src::ZERO
        && (first.dst == second.dst || first.dst == second.src[0] || first.dst == second.src[1]))
        || (first.op == Hw::Dwrite && matches!(second.op, Hw::Dread | Hw::Dwrite))
        || (second.op == Hw::Dwrite && matches!(first.op, Hw::Dread | Hw::Dwrite))
        || (first.op == Hw::Extended && (is_load(second.src[0]) || is_load(second.src[1])))
}

/// A value as an ALU source (`mme_value_alu_reg`).
fn alu_reg(v: Value) -> Src {
    match v {
        Value::Zero | Value::Imm(0) => Src::ZERO,
        Value::Imm(c) if c == c as i16 as u32 => Src::IMM,
        Value::Imm(_) => Src::IMM32,
        Value::Reg(r) => Src(r.0),
    }
}

/// One open control-flow construct: its kind's start instruction.
struct OpenFlow {
    start: usize,
}

/// The instructions so far and what the last one holds.
#[derive(Default)]
struct Packer {
    insts: Vec<Inst>,
    parts: u16,
}

fn no_room(what: &str) -> LowerError {
    LowerError::Unlowerable(format!("{what} (operands do not fit one instruction)"))
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

impl Packer {
    /// Starts a new instruction (`mme_tu104_new_inst`).
    fn new_inst(&mut self) {
        self.insts.push(Inst::nop());
        self.parts = 0;
    }

    fn cur(&mut self) -> &mut Inst {
        let n = self.insts.len();
        &mut self.insts[n - 1]
    }

    fn set_parts(&mut self, parts: u16) {
        self.parts |= parts;
    }

    /// `mme_tu104_next_inst_can_add_alu`.
    fn can_add_alu(&self, alu: &Alu, must_be_alu0: bool) -> bool {
        let Some(cur) = self.insts.last() else {
            return false;
        };
        let p = self.parts;
        if matches!(alu.op, Hw::Extended | Hw::State) && p & part::OUTPUTS != 0 {
            return false;
        }
        if must_be_alu0 && p & part::ALU0 != 0 {
            return false;
        }
        if p & part::ALU1 != 0 {
            return false;
        }
        if alu.src[0] == Src::LOAD0 && p & part::LOAD1 != 0 {
            return false;
        }
        let used = self.imms_used();
        let wanted =
            u32::from(has_implicit_imm(alu.op)) + imms_of(alu.src[0]) + imms_of(alu.src[1]);
        if wanted + used > 2 {
            return false;
        }
        if has_implicit_imm(alu.op) && p & part::ALU0 != 0 && p & part::IMM1 != 0 {
            return false;
        }
        if p & part::ALU0 != 0 && depends(&cur.alu[0], alu) {
            return false;
        }
        if alu.op == Hw::State && p & part::ALU0 != 0 && cur.alu[0].op == Hw::State {
            return false;
        }
        true
    }

    /// Adds an ALU to the instruction being filled or a new one; returns its index
    /// (`mme_tu104_push_alu`).
    fn push_alu(
        &mut self,
        alu: Alu,
        imm: [u16; 2],
        implicit_imm: u16,
        must_be_alu0: bool,
    ) -> Result<usize, LowerError> {
        if !self.can_add_alu(&alu, must_be_alu0) {
            self.new_inst();
        }
        if has_implicit_imm(alu.op) && self.parts & part::IMM0 != 0 {
            self.set_parts(part::ALU0);
        }
        if !self.can_add_alu(&alu, must_be_alu0) {
            // Where Mesa asserts (an op that must be ALU 0 after an immediate took
            // IMM0): a new instruction.
            self.new_inst();
        }
        if !self.can_add_alu(&alu, must_be_alu0) {
            return Err(no_room(&format!("{:?}", alu.op)));
        }
        let idx = usize::from(self.parts & part::ALU0 != 0);
        self.set_parts(part::ALU0 << idx);
        let mut alu = alu;
        if alu.src[0] == Src::LOAD0 {
            let next = u16::from(self.parts & part::LOAD0 != 0);
            self.set_parts(part::LOAD0 << next);
            alu.src[0] = Src(Src::LOAD0.0 + next as u8);
        }
        let mut next_imm = usize::from(self.parts & part::IMM0 != 0);
        let imms = imms_of(alu.src[0]) + imms_of(alu.src[1]);
        if has_implicit_imm(alu.op) {
            self.set_parts(part::IMM0 << idx);
            self.cur().imm[idx] = implicit_imm;
            next_imm = 1 - idx;
        }
        if imms == 1 {
            self.set_parts(part::IMM0 << next_imm);
            self.cur().imm[next_imm] = imm[0];
            if alu.src[0] == Src::IMM && idx != next_imm {
                alu.src[0] = Src::IMMPAIR;
            }
            if alu.src[1] == Src::IMM && idx != next_imm {
                alu.src[1] = Src::IMMPAIR;
            }
        } else if imms == 2 {
            self.set_parts(part::IMM0 | part::IMM1);
            self.cur().imm = imm;
        }
        self.cur().alu[idx] = alu;
        Ok(idx)
    }

    /// `dst = op(x, y)` (`build_alu_to`); the builder has already moved what does not
    /// fit into registers.
    fn alu(
        &mut self,
        dst: Src,
        op: Hw,
        x: Value,
        y: Value,
        implicit_imm: u16,
        must_be_alu0: bool,
    ) -> Result<usize, LowerError> {
        let (xr, mut yr) = (alu_reg(x), alu_reg(y));
        if u32::from(has_implicit_imm(op)) + imms_of(xr) + imms_of(yr) > 2 {
            return Err(no_room(&format!("{op:?}")));
        }
        let c = |v: Value| v.constant().unwrap_or(0);
        let imm = if xr == Src::IMM32 {
            [(c(x) >> 16) as u16, c(x) as u16]
        } else if yr == Src::IMM32 {
            [(c(y) >> 16) as u16, c(y) as u16]
        } else if xr == Src::IMM {
            if yr == Src::IMM {
                yr = Src::IMMPAIR;
                [c(x) as u16, c(y) as u16]
            } else {
                [c(x) as u16, 0]
            }
        } else if yr == Src::IMM {
            [c(y) as u16, 0]
        } else {
            [0, 0]
        };
        self.push_alu(
            Alu {
                op,
                dst,
                src: [xr, yr],
            },
            imm,
            implicit_imm,
            must_be_alu0,
        )
    }

    /// Whether the instruction being packed already holds a STATE ALU op,
    /// which nothing else may share an instruction with.
    fn holds_state(&self, cur: &Inst) -> bool {
        (self.parts & part::ALU0 != 0 && cur.alu[0].op == Hw::State)
            || (self.parts & part::ALU1 != 0 && cur.alu[1].op == Hw::State)
    }

    /// How many of the instruction's two immediate slots are taken.
    fn imms_used(&self) -> u32 {
        u32::from(self.parts & part::IMM0 != 0) + u32::from(self.parts & part::IMM1 != 0)
    }

    /// `mme_tu104_next_inst_can_add_mthd`.
    fn can_add_mthd(&self, imm_out: bool) -> bool {
        let Some(cur) = self.insts.last() else {
            return false;
        };
        let p = self.parts;
        if p & part::MTHD1 != 0 {
            return false;
        }
        if self.holds_state(cur) {
            return false;
        }
        !(imm_out && p & part::IMM0 != 0 && p & part::IMM1 != 0)
    }

    /// `mme_tu104_push_mthd`.
    fn push_mthd(&mut self, out: OutSrc, imm: u16) {
        let mut out = out;
        if out == OutSrc::Imm0 {
            let idx = usize::from(self.parts & part::IMM0 != 0);
            self.set_parts(part::IMM0 << idx);
            out = if idx == 0 { OutSrc::Imm0 } else { OutSrc::Imm1 };
            self.cur().imm[idx] = imm;
        }
        let idx = usize::from(self.parts & part::MTHD0 != 0);
        if idx > 0 && self.parts & part::EMIT0 == 0 {
            self.set_parts(part::EMIT0);
        }
        self.set_parts(part::MTHD0 << idx);
        self.cur().out[idx].mthd = out;
    }

    /// A method select (`mme_tu104_mthd`).
    fn mthd(&mut self, mthd: u16, index: Value) -> Result<(), LowerError> {
        let word = (1u32 << 12) | u32::from(mthd >> 2);
        match index {
            Value::Reg(r) => {
                if !self.can_add_mthd(false) {
                    self.new_inst();
                }
                let alu = Alu {
                    op: Hw::Add,
                    dst: Src::ZERO,
                    src: [Src::IMM, Src(r.0)],
                };
                let idx = self.push_alu(alu, [word as u16, 0], 0, false)?;
                self.push_mthd(if idx == 0 { OutSrc::Alu0 } else { OutSrc::Alu1 }, 0);
            }
            other => {
                if !self.can_add_mthd(true) {
                    self.new_inst();
                }
                let word = word.wrapping_add(other.constant().unwrap_or(0));
                self.push_mthd(OutSrc::Imm0, word as u16);
            }
        }
        Ok(())
    }

    /// `mme_tu104_next_inst_can_add_emit`.
    fn can_add_emit(&self, out: OutSrc) -> bool {
        let Some(cur) = self.insts.last() else {
            return false;
        };
        let p = self.parts;
        if p & part::EMIT1 != 0 {
            return false;
        }
        if self.holds_state(cur) {
            return false;
        }
        let used = self.imms_used();
        !((out == OutSrc::Imm0 && used > 1) || (out == OutSrc::Imm32 && used > 0))
    }

    /// `mme_tu104_push_emit`.
    fn push_emit(&mut self, out: OutSrc, imm: u32) {
        let mut out = out;
        if out == OutSrc::Imm0 {
            let idx = usize::from(self.parts & part::IMM0 != 0);
            self.set_parts(part::IMM0 << idx);
            out = if idx == 0 { OutSrc::Imm0 } else { OutSrc::Imm1 };
            self.cur().imm[idx] = imm as u16;
        } else if out == OutSrc::Imm32 {
            self.set_parts(part::IMM0 | part::IMM1);
            self.cur().imm = [(imm >> 16) as u16, imm as u16];
        }
        let idx = usize::from(self.parts & part::EMIT0 != 0);
        self.set_parts(part::EMIT0 << idx);
        if self.parts & (part::MTHD0 << idx) == 0 {
            self.set_parts(part::MTHD0 << idx);
        }
        self.cur().out[idx].emit = out;
    }

    /// A data emit (`mme_tu104_emit`).
    fn emit(&mut self, x: Value) -> Result<(), LowerError> {
        match x {
            Value::Reg(r) => {
                if self.insts.is_empty() || !self.can_add_emit(OutSrc::Alu0) {
                    self.new_inst();
                }
                let reg = Src(r.0);
                let cur = *self.cur();
                let found = (0..2).find(|&i| cur.alu[i].dst == reg);
                let idx = match found {
                    Some(i) => i,
                    None => self.push_alu(
                        Alu {
                            op: Hw::Add,
                            dst: Src::ZERO,
                            src: [reg, Src::ZERO],
                        },
                        [0, 0],
                        0,
                        false,
                    )?,
                };
                self.push_emit(if idx == 0 { OutSrc::Alu0 } else { OutSrc::Alu1 }, 0);
            }
            other => {
                let imm = other.constant().unwrap_or(0);
                let out = if imm <= 0xffff {
                    OutSrc::Imm0
                } else {
                    OutSrc::Imm32
                };
                if self.insts.is_empty() || !self.can_add_emit(out) {
                    self.new_inst();
                }
                self.push_emit(out, imm);
            }
        }
        Ok(())
    }

    /// Starts control flow with `op` in ALU 0 and its body in a new instruction
    /// (`mme_tu104_start_cf`).
    fn start_flow(
        &mut self,
        op: Hw,
        x: Value,
        y: Value,
        control: u16,
    ) -> Result<OpenFlow, LowerError> {
        self.alu(Src::ZERO, op, x, y, control, true)?;
        let start = self.insts.len() - 1;
        self.new_inst();
        Ok(OpenFlow { start })
    }

    /// Ends control flow: closes the instruction being filled and patches the start's
    /// offset to reach past it (`mme_tu104_end_cf`).
    fn end_flow(&mut self, flow: &OpenFlow) -> Result<(), LowerError> {
        if self.parts != 0 {
            self.new_inst();
        }
        let delta = self.insts.len() - flow.start - 1;
        if delta >= 1 << 13 {
            return Err(LowerError::BranchTooFar {
                distance: delta as i64,
                bits: 13,
            });
        }
        self.insts[flow.start].imm[0] |= delta as u16;
        Ok(())
    }

    fn block(&mut self, ops: &[Op]) -> Result<(), LowerError> {
        for op in ops {
            self.op(op)?;
        }
        Ok(())
    }

    fn op(&mut self, op: &Op) -> Result<(), LowerError> {
        let reg = |r: crate::mme::value::Reg| Src(r.0);
        match *op {
            Op::Alu { op, dst, x, y } => {
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
                            self.alu(reg(dst), Hw::And, x, y, 0, false)?;
                            self.alu(reg(dst), Hw::Xor, x, dv, 0, false)?;
                        } else {
                            self.alu(reg(dst), Hw::Or, x, y, 0, false)?;
                            self.alu(reg(dst), Hw::Xor, dv, y, 0, false)?;
                        }
                        return Ok(());
                    }
                };
                self.alu(reg(dst), hw, x, y, 0, false).map(drop)
            }
            Op::Alu64 { op, dst, x, y } => {
                let (lo, hi) = match op {
                    Alu64Op::Add => (Hw::Add, Hw::Addc),
                    Alu64Op::Sub => (Hw::Sub, Hw::Subb),
                    Alu64Op::UMul => (Hw::Mulu, Hw::Mulh),
                };
                self.alu(reg(dst[0]), lo, x[0], y[0], 0, true)?;
                if self.alu(reg(dst[1]), hi, x[1], y[1], 0, false)? != 1 {
                    return Err(no_room("64-bit op"));
                }
                Ok(())
            }
            Op::Alu64Half { .. } => Err(LowerError::Unlowerable(
                "a split 64-bit half on Turing (the builder pairs the halves there)".into(),
            )),
            Op::Merge {
                dst,
                x,
                y,
                dst_pos,
                bits,
                src_pos,
            } => {
                let control =
                    u16::from(src_pos) | (u16::from(bits) << 5) | (u16::from(dst_pos) << 10);
                self.alu(reg(dst), Hw::Merge, x, y, control, false)
                    .map(drop)
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
                    self.alu(reg(dst), Hw::Srl, x, pos, 0, false)?;
                    self.alu(
                        reg(dst),
                        Hw::And,
                        Value::Reg(dst),
                        Value::Imm(crate::mme::mask(bits)),
                        0,
                        false,
                    )
                    .map(drop)
                }
            },
            Op::Mov { dst, x } => self
                .alu(reg(dst), Hw::Add, x, Value::Zero, 0, false)
                .map(drop),
            Op::Load { dst } => {
                let alu = Alu {
                    op: Hw::Add,
                    dst: reg(dst),
                    src: [Src::LOAD0, Src::ZERO],
                };
                self.push_alu(alu, [0, 0], 0, false).map(drop)
            }
            Op::State { dst, mthd, index } => self
                .alu(
                    reg(dst),
                    Hw::State,
                    Value::Imm(u32::from(mthd >> 2)),
                    index,
                    0,
                    false,
                )
                .map(drop),
            Op::DRead { dst, addr } => self
                .alu(reg(dst), Hw::Dread, addr, Value::Zero, 0, false)
                .map(drop),
            Op::DWrite { addr, x } => self.alu(Src::ZERO, Hw::Dwrite, addr, x, 0, false).map(drop),
            Op::Barrier => self
                .alu(
                    Src::ZERO,
                    Hw::Extended,
                    Value::Imm(0x1000),
                    Value::Imm(1),
                    0,
                    false,
                )
                .map(drop),
            Op::Mthd { mthd, index } => self.mthd(mthd, index),
            Op::Emit { x } => self.emit(x),
            Op::If { ref test, ref then } => {
                let (op, a, b, negated) = primitive(test);
                let flow = self.start_flow(op, a, b, u16::from(negated) << 15)?;
                self.block(then)?;
                self.end_flow(&flow)
            }
            Op::While {
                ref cond,
                ref test,
                ref body,
            } => {
                // mme_tu104_start_while: a JAL forward to the condition.
                let flow = self.start_flow(Hw::Jal, Value::Zero, Value::Zero, 1 << 15)?;
                self.block(body)?;
                self.end_flow(&flow)?;
                self.block(cond)?;
                // mme_tu104_end_while: the back edge to the body's first instruction.
                let (op, a, b, negated) = primitive(test);
                let when = u16::from(!negated) << 15;
                self.alu(Src::ZERO, op, a, b, when, true)?;
                let at = self.insts.len() - 1;
                let back_to = flow.start + 1;
                let offset = back_to as i64 - at as i64;
                if !(-4095..=4095).contains(&offset) {
                    return Err(LowerError::BranchTooFar {
                        distance: offset,
                        bits: 13,
                    });
                }
                self.insts[at].imm[0] = when | (offset as u16 & 0x1fff);
                self.new_inst();
                Ok(())
            }
            Op::Loop { count, ref body } => {
                if count.constant() == Some(0) {
                    return Ok(());
                }
                let flow = self.start_flow(Hw::Loop, count, Value::Zero, 0)?;
                self.block(body)?;
                // The loop ends after its last instruction runs: a branch there, or
                // past it, would dodge the loop's end, so keep the instruction such a
                // body's branches land on inside the loop.
                let ends_in_flow = matches!(
                    body.last(),
                    None | Some(
                        Op::If { .. } | Op::While { .. } | Op::ExitIf { .. } | Op::Loop { .. }
                    )
                );
                if ends_in_flow {
                    self.set_parts(part::KEPT);
                }
                self.end_flow(&flow)
            }
            Op::ExitIf { ref test } => {
                let (op, a, b, negated) = primitive(test);
                let control = (u16::from(!negated) << 15) | EXIT_OFFSET;
                self.alu(Src::ZERO, op, a, b, control, true)?;
                self.new_inst();
                Ok(())
            }
        }
    }
}
