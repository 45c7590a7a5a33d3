//! The macro builder: values, registers, ALU ops, method output, parameter loads, state
//! reads, structured control flow, and NVK's scratch helpers on top.
//!
//! A builder is made for one instruction set and decides everything that depends on
//! it: which registers exist, which immediates an encoding can hold (others are moved
//! into a register first, the destination when it is free to use), how comparisons are
//! computed (Turing branches compare two values; Fermi branches test one value for
//! zero, so the builder computes that value first), and how loops run (Turing's LOOP
//! instruction where it can, a counted `while` elsewhere). The [`Program`] it produces
//! is therefore legal as it stands, and each backend lowers it op by op.
//!
//! ```
//! use driver::mme::{Arch, Builder, Cmp, Value};
//!
//! let mut b = Builder::new(Arch::Fermi);
//! let count = b.load();
//! let view = b.mov(Value::Zero);
//! b.while_(Cmp::Ne, view, Value::Imm(32), |b| {
//!     b.if_(Cmp::Ltu, view, count, |b| {
//!         b.mthd(driver::class::SET_RT_LAYER);
//!         b.emit(view);
//!     });
//!     b.add_to(view, view, Value::Imm(1));
//! });
//! let program = b.finish().unwrap();
//! assert_eq!(program.arch, Arch::Fermi);
//! ```

use super::ir::{Alu64Op, AluOp, Arch, Cmp, Op, Program, Test};
use super::reg_alloc::RegAlloc;
use super::value::{Reg, Value};
use crate::class;

/// Why a macro could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// More values were live than the instruction set has registers.
    #[error("out of registers on {arch} ({available} allocatable)")]
    OutOfRegisters {
        /// The instruction set.
        arch: &'static str,
        /// How many registers it lets the builder allocate.
        available: u32,
    },
    /// The instruction set cannot do this.
    #[error("{what} is not available on {arch}")]
    Unsupported {
        /// What was asked for.
        what: &'static str,
        /// The instruction set.
        arch: &'static str,
    },
    /// An argument is out of range.
    #[error("{0}")]
    Invalid(String),
}

/// Builds one macro. Control flow takes closures, so every block is closed.
pub struct Builder {
    arch: Arch,
    regs: RegAlloc,
    blocks: Vec<Vec<Op>>,
    fermi_first_param: Option<Reg>,
    hw_loop_depth: u32,
    error: Option<BuildError>,
}

fn fits_signed(v: u32, bits: u32) -> bool {
    let v = v as i32;
    let half = 1i32 << (bits - 1);
    (-half..half).contains(&v)
}

impl Builder {
    /// A builder for `arch`.
    pub fn new(arch: Arch) -> Self {
        let mut regs = RegAlloc::new(arch.allocatable());
        let fermi_first_param = match arch {
            // The first parameter arrives in r1 before the first instruction runs.
            Arch::Fermi => {
                regs.realloc(Reg(1));
                Some(Reg(1))
            }
            Arch::Turing => None,
        };
        Builder {
            arch,
            regs,
            blocks: vec![Vec::new()],
            fermi_first_param,
            hw_loop_depth: 0,
            error: None,
        }
    }

    /// The instruction set this builder targets.
    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// The finished program, or the first error met while building.
    pub fn finish(mut self) -> Result<Program, BuildError> {
        if let Some(error) = self.error.take() {
            return Err(error);
        }
        debug_assert_eq!(self.blocks.len(), 1, "a block was left open");
        Ok(Program {
            arch: self.arch,
            ops: self.blocks.pop().unwrap_or_default(),
        })
    }

    // ------------------------------------------------------------------ registers

    /// Allocates a register.
    pub fn alloc_reg(&mut self) -> Value {
        Value::Reg(self.alloc())
    }

    /// Frees the register `v` lives in (no-op for constants).
    pub fn free_reg(&mut self, v: Value) {
        if let Value::Reg(r) = v {
            // After a failed allocation the builder hands out placeholders; let them go.
            if self.error.is_none() || self.regs.is_allocated(r) {
                self.regs.free(r);
            }
        }
    }

    /// Allocates exactly the register `v` lives in again, after a spill freed it.
    pub fn realloc_reg(&mut self, v: Value) {
        if let Value::Reg(r) = v {
            if self.regs.is_allocated(r) {
                self.fail(BuildError::Invalid(format!(
                    "{r} is in use: it cannot be unspilled into"
                )));
            } else {
                self.regs.realloc(r);
            }
        }
    }

    fn alloc(&mut self) -> Reg {
        match self.regs.alloc() {
            Some(r) => r,
            None => {
                self.fail(BuildError::OutOfRegisters {
                    arch: self.arch.name(),
                    available: self.arch.allocatable().count_ones(),
                });
                Reg(0)
            }
        }
    }

    fn fail(&mut self, error: BuildError) {
        self.error.get_or_insert(error);
    }

    fn unsupported(&mut self, what: &'static str) {
        self.fail(BuildError::Unsupported {
            what,
            arch: self.arch.name(),
        });
    }

    fn dst_reg(&mut self, dst: Value) -> Reg {
        match dst {
            Value::Reg(r) => r,
            other => {
                self.fail(BuildError::Invalid(format!(
                    "destination {other} is not a register"
                )));
                Reg(0)
            }
        }
    }

    fn push(&mut self, op: Op) {
        if let Some(block) = self.blocks.last_mut() {
            block.push(op);
        }
    }

    fn block(&mut self, build: impl FnOnce(&mut Builder)) -> Vec<Op> {
        self.blocks.push(Vec::new());
        build(self);
        self.blocks.pop().unwrap_or_default()
    }

    /// `v` in a register (or zero): moves an immediate into `prefer` when given, else
    /// into a temporary that the caller frees with [`Self::release`].
    fn in_reg(&mut self, v: Value, prefer: Option<Reg>) -> (Value, Option<Reg>) {
        match v {
            Value::Imm(_) => {
                let (reg, temp) = match prefer {
                    Some(r) => (r, None),
                    None => {
                        let r = self.alloc();
                        (r, Some(r))
                    }
                };
                self.push(Op::Mov { dst: reg, x: v });
                (Value::Reg(reg), temp)
            }
            other => (other, None),
        }
    }

    /// Moves operands into new registers until they and `implicit` immediates fit a
    /// Turing instruction's two immediate slots, in Mesa's build_alu_to order: a 32-bit
    /// `y`, a 32-bit `x`, a 16-bit `y`, a 16-bit `x`. As there, the registers stay
    /// allocated.
    fn fit_turing_immediates(&mut self, implicit: u32, x: &mut Value, y: &mut Value) {
        let slots = |v: Value| match v {
            Value::Zero | Value::Imm(0) | Value::Reg(_) => 0,
            Value::Imm(c) if fits_signed(c, 16) => 1,
            Value::Imm(_) => 2,
        };
        while implicit + slots(*x) + slots(*y) > 2 {
            let target = if slots(*y) == 2 || (slots(*x) != 2 && slots(*y) == 1) {
                &mut *y
            } else {
                &mut *x
            };
            *target = self.mov(*target);
        }
    }

    /// A pre-Turing operand in a register: a non-zero immediate moved into a new one
    /// (Mesa's mme_fermi_value_as_reg), which the caller frees.
    fn fermi_operand(&mut self, v: Value) -> (Value, Option<Reg>) {
        match v {
            Value::Imm(c) if c != 0 => self.in_reg(v, None),
            other => (other, None),
        }
    }

    fn release(&mut self, temps: &[Option<Reg>]) {
        for r in temps.iter().flatten() {
            self.free_reg(Value::Reg(*r));
        }
    }

    /// `dst` may hold a materialized operand if no other operand reads it.
    fn spare(dst: Reg, others: &[Value]) -> Option<Reg> {
        (!others.contains(&Value::Reg(dst))).then_some(dst)
    }

    // ------------------------------------------------------------------ ALU

    /// `dst = op(x, y)`, legalized for the instruction set.
    pub fn alu_to(&mut self, op: AluOp, dst: Value, x: impl Into<Value>, y: impl Into<Value>) {
        let (x, y) = (x.into(), y.into());
        if op == AluOp::AndNot && self.arch == Arch::Turing {
            // No AND-NOT on Turing: `x & !y`, `!y` an immediate or a new register
            // (mme_tu104_alu_to).
            let not_y = match y {
                Value::Zero => Value::Imm(!0),
                Value::Imm(v) if v == !0 => Value::Zero,
                Value::Imm(v) => Value::Imm(!v),
                Value::Reg(_) => self.alu(AluOp::Xor, y, Value::Imm(!0)),
            };
            self.alu_to(AluOp::And, dst, x, not_y);
            if not_y.reg().is_some() {
                self.free_reg(not_y);
            }
            return;
        }
        let (dst, mut x, mut y) = (self.dst_reg(dst), x, y);
        let mut temps = [None, None];
        match self.arch {
            Arch::Turing => self.fit_turing_immediates(0, &mut x, &mut y),
            Arch::Fermi => {
                if op == AluOp::Mul {
                    return self.unsupported("multiplication");
                }
                if op == AluOp::Sll && y.reg().is_some() && Value::Reg(dst) != y {
                    // mme_fermi_sll_to: the value moved into the destination, shifted
                    // through a 31-bit field, exact for a value below 2^31.
                    if let Value::Imm(c) = x {
                        if c < 1 << 31 {
                            self.mov_to(Value::Reg(dst), x);
                            self.push(Op::Alu {
                                op,
                                dst,
                                x: Value::Reg(dst),
                                y,
                            });
                            return;
                        }
                    }
                }
                if matches!(op, AluOp::Sll | AluOp::Srl) && y.reg().is_some() {
                    return self.unsupported("a shift by a register amount");
                }
                // Mesa's mme_fermi_build_alu: an 18-bit immediate added (or subtracted)
                // goes in ADD_IMM's field; any other immediate into a new register of
                // its own, `x`'s first, freed after.
                let is_imm18 =
                    |v: Value| matches!(v, Value::Imm(c) if c != 0 && fits_signed(c, 18));
                let add_imm = match op {
                    AluOp::Add if is_imm18(y) => true,
                    AluOp::Add if is_imm18(x) && y.constant().is_none_or(|c| c == 0) => {
                        std::mem::swap(&mut x, &mut y);
                        true
                    }
                    AluOp::Sub => {
                        matches!(y, Value::Imm(c) if fits_signed(c.wrapping_neg(), 18))
                    }
                    AluOp::Sll | AluOp::Srl => true,
                    _ => false,
                };
                if !add_imm {
                    (x, temps[0]) = self.fermi_operand(x);
                    (y, temps[1]) = self.fermi_operand(y);
                } else {
                    (x, temps[0]) = self.fermi_operand(x);
                }
            }
        }
        if matches!(op, AluOp::Sll | AluOp::Srl) {
            if let Some(n) = y.constant().filter(|n| *n > 31) {
                self.fail(BuildError::Invalid(format!("shift by {n} is out of range")));
            }
        }
        self.push(Op::Alu { op, dst, x, y });
        self.release(&temps);
    }

    fn alu(&mut self, op: AluOp, x: impl Into<Value>, y: impl Into<Value>) -> Value {
        let dst = self.alloc_reg();
        self.alu_to(op, dst, x, y);
        dst
    }

    /// `x + y` in a new register.
    pub fn add(&mut self, x: impl Into<Value>, y: impl Into<Value>) -> Value {
        self.alu(AluOp::Add, x, y)
    }
    /// `dst = x + y`
    pub fn add_to(&mut self, dst: Value, x: impl Into<Value>, y: impl Into<Value>) {
        self.alu_to(AluOp::Add, dst, x, y)
    }
    /// `x - y` in a new register.
    pub fn sub(&mut self, x: impl Into<Value>, y: impl Into<Value>) -> Value {
        self.alu(AluOp::Sub, x, y)
    }
    /// `dst = x - y`
    pub fn sub_to(&mut self, dst: Value, x: impl Into<Value>, y: impl Into<Value>) {
        self.alu_to(AluOp::Sub, dst, x, y)
    }
    /// `x & y` in a new register.
    pub fn and(&mut self, x: impl Into<Value>, y: impl Into<Value>) -> Value {
        self.alu(AluOp::And, x, y)
    }
    /// `x & !y` in a new register.
    pub fn and_not(&mut self, x: impl Into<Value>, y: impl Into<Value>) -> Value {
        self.alu(AluOp::AndNot, x, y)
    }
    /// `x | y` in a new register.
    pub fn or(&mut self, x: impl Into<Value>, y: impl Into<Value>) -> Value {
        self.alu(AluOp::Or, x, y)
    }
    /// `x ^ y` in a new register.
    pub fn xor(&mut self, x: impl Into<Value>, y: impl Into<Value>) -> Value {
        self.alu(AluOp::Xor, x, y)
    }
    /// `x * y` (low 32 bits) in a new register; Turing only.
    pub fn mul(&mut self, x: impl Into<Value>, y: impl Into<Value>) -> Value {
        self.alu(AluOp::Mul, x, y)
    }
    /// `x << n` in a new register.
    pub fn sll(&mut self, x: impl Into<Value>, n: impl Into<Value>) -> Value {
        self.alu(AluOp::Sll, x, n)
    }
    /// `x >> n` (logical) in a new register.
    pub fn srl(&mut self, x: impl Into<Value>, n: impl Into<Value>) -> Value {
        self.alu(AluOp::Srl, x, n)
    }

    /// `dst = x op y` on 64-bit (low, high) register pairs.
    pub fn alu64_to(&mut self, op: Alu64Op, dst: [Value; 2], x: [Value; 2], y: [Value; 2]) {
        let dst = [self.dst_reg(dst[0]), self.dst_reg(dst[1])];
        let has_imm = x
            .iter()
            .chain(&y)
            .any(|v| matches!(v, Value::Imm(c) if *c != 0));
        let aliased = [x[1], y[1]].contains(&Value::Reg(dst[0]));
        if self.arch == Arch::Fermi && has_imm && !aliased {
            // Mesa's mme_fermi_alu64_to: each half with its immediates in registers of
            // their own, the low half's freed before the high half's are taken.
            for half in 0..2 {
                let (xv, tx) = self.fermi_operand(x[half]);
                let (yv, ty) = self.fermi_operand(y[half]);
                self.push(Op::Alu64Half {
                    op,
                    high: half == 1,
                    dst: dst[half],
                    x: xv,
                    y: yv,
                });
                self.release(&[tx, ty]);
            }
            return;
        }
        let mut temps = Vec::new();
        let mut operand = |b: &mut Builder, v: Value| {
            let small = v.constant().is_some_and(|c| fits_signed(c, 16));
            if b.arch == Arch::Turing && (v.reg().is_some() || small) {
                return v;
            }
            let (v, temp) = b.in_reg(v, None);
            temps.push(temp);
            v
        };
        let x = [operand(self, x[0]), operand(self, x[1])];
        let mut y = [operand(self, y[0]), operand(self, y[1])];
        // Turing runs both halves in one instruction: at most one immediate per half.
        if self.arch == Arch::Turing {
            for half in 0..2 {
                if matches!(y[half], Value::Imm(_)) && matches!(x[half], Value::Imm(_)) {
                    let (v, temp) = self.in_reg(y[half], None);
                    y[half] = v;
                    temps.push(temp);
                }
            }
        }
        // The low result is written before the high half reads its operands.
        let aliased = [x[1], y[1]].contains(&Value::Reg(dst[0]));
        let low = if aliased { self.alloc() } else { dst[0] };
        self.push(Op::Alu64 {
            op,
            dst: [low, dst[1]],
            x,
            y,
        });
        if aliased {
            self.push(Op::Mov {
                dst: dst[0],
                x: Value::Reg(low),
            });
            self.free_reg(Value::Reg(low));
        }
        self.release(&temps);
    }

    /// `x * y` (unsigned) as a 64-bit (low, high) pair in two new registers; Turing
    /// only (Mesa's mme_umul_32x32_64: `MULU`, `MULH`).
    pub fn umul_32x32_64(&mut self, x: impl Into<Value>, y: impl Into<Value>) -> [Value; 2] {
        if self.arch != Arch::Turing {
            self.unsupported("multiplication");
            return [Value::Zero, Value::Zero];
        }
        let dst = [self.alloc_reg(), self.alloc_reg()];
        self.alu64_to(
            Alu64Op::UMul,
            dst,
            [x.into(), Value::Zero],
            [y.into(), Value::Zero],
        );
        dst
    }

    /// `x * y` on 64-bit (low, high) pairs, the low 64 bits, in two new registers;
    /// Turing only (Mesa's mme_mul64: the low words' full product, then each cross
    /// product added to the high word).
    pub fn mul64(&mut self, x: [Value; 2], y: [Value; 2]) -> [Value; 2] {
        let dst = self.umul_32x32_64(x[0], y[0]);
        for (a, b) in [(x[0], y[1]), (x[1], y[0])] {
            let cross = self.mul(a, b);
            self.alu64_to(Alu64Op::Add, dst, dst, [Value::Zero, cross]);
            self.free_reg(cross);
        }
        dst
    }

    /// `x + y` on 64-bit (low, high) pairs, in two new registers.
    pub fn add64(&mut self, x: [Value; 2], y: [Value; 2]) -> [Value; 2] {
        let dst = [self.alloc_reg(), self.alloc_reg()];
        self.alu64_to(Alu64Op::Add, dst, x, y);
        dst
    }

    /// `x - y` on 64-bit (low, high) pairs, in two new registers.
    pub fn sub64(&mut self, x: [Value; 2], y: [Value; 2]) -> [Value; 2] {
        let dst = [self.alloc_reg(), self.alloc_reg()];
        self.alu64_to(Alu64Op::Sub, dst, x, y);
        dst
    }

    /// `dst = (x & !(mask(bits) << dst_pos)) | (((y >> src_pos) & mask(bits)) << dst_pos)`
    pub fn merge_to(
        &mut self,
        dst: Value,
        x: impl Into<Value>,
        y: impl Into<Value>,
        dst_pos: u8,
        bits: u8,
        src_pos: u8,
    ) {
        let (dst, x, y) = (self.dst_reg(dst), x.into(), y.into());
        if !(1..=31).contains(&bits) || dst_pos > 31 || src_pos > 31 {
            return self.fail(BuildError::Invalid(format!(
                "merge of {bits} bits from {src_pos} to {dst_pos} does not fit an instruction"
            )));
        }
        if self.arch == Arch::Turing {
            // The control word takes an immediate slot; one 16-bit operand may take
            // the other (Mesa's build_alu_to).
            let (mut x, mut y) = (x, y);
            self.fit_turing_immediates(1, &mut x, &mut y);
            self.push(Op::Merge {
                dst,
                x,
                y,
                dst_pos,
                bits,
                src_pos,
            });
            return;
        }
        // Immediates into new registers, `x`'s first (mme_fermi_merge_to).
        let (x, t0) = self.fermi_operand(x);
        let (y, t1) = self.fermi_operand(y);
        self.push(Op::Merge {
            dst,
            x,
            y,
            dst_pos,
            bits,
            src_pos,
        });
        self.release(&[t0, t1]);
    }

    /// [`Self::merge_to`] into a new register.
    pub fn merge(
        &mut self,
        x: impl Into<Value>,
        y: impl Into<Value>,
        dst_pos: u8,
        bits: u8,
        src_pos: u8,
    ) -> Value {
        let dst = self.alloc_reg();
        self.merge_to(dst, x, y, dst_pos, bits, src_pos);
        dst
    }

    /// `dst = (x >> pos) & mask(bits)`, `pos` an immediate or a register.
    pub fn bfe_to(&mut self, dst: Value, x: impl Into<Value>, pos: impl Into<Value>, bits: u8) {
        let (dst, x, pos) = (self.dst_reg(dst), x.into(), pos.into());
        if !(1..=31).contains(&bits) || pos.constant().is_some_and(|p| p > 31) {
            return self.fail(BuildError::Invalid(format!(
                "bitfield of {bits} bits at {pos} is out of range"
            )));
        }
        let (x, temp) = self.in_reg(x, Self::spare(dst, &[pos]));
        self.push(Op::Bfe { dst, x, pos, bits });
        self.release(&[temp]);
    }

    /// [`Self::bfe_to`] into a new register.
    pub fn bfe(&mut self, x: impl Into<Value>, pos: impl Into<Value>, bits: u8) -> Value {
        let dst = self.alloc_reg();
        self.bfe_to(dst, x, pos, bits);
        dst
    }

    /// `dst = x`
    pub fn mov_to(&mut self, dst: Value, x: impl Into<Value>) {
        let dst = self.dst_reg(dst);
        self.push(Op::Mov { dst, x: x.into() });
    }

    /// `x` in a new register.
    pub fn mov(&mut self, x: impl Into<Value>) -> Value {
        let dst = self.alloc_reg();
        self.mov_to(dst, x);
        dst
    }

    // ------------------------------------------------------------------ parameters, state, methods

    /// The next parameter, in a new register. On Fermi the first parameter is already
    /// in r1 when the macro starts, so the first `load` returns r1 wherever it is called.
    pub fn load(&mut self) -> Value {
        if let Some(r1) = self.fermi_first_param.take() {
            return Value::Reg(r1);
        }
        let dst = self.alloc();
        self.push(Op::Load { dst });
        Value::Reg(dst)
    }

    /// `dst = the next parameter`
    pub fn load_to(&mut self, dst: Value) {
        let reg = self.dst_reg(dst);
        if let Some(r1) = self.fermi_first_param.take() {
            self.push(Op::Mov {
                dst: reg,
                x: Value::Reg(r1),
            });
            self.free_reg(Value::Reg(r1));
            return;
        }
        self.push(Op::Load { dst: reg });
    }

    /// The state of method `mthd` (a byte address), in a new register.
    pub fn state(&mut self, mthd: u16) -> Value {
        self.state_arr(mthd, Value::Zero)
    }

    /// The state of method `mthd + 4 * index`, in a new register.
    pub fn state_arr(&mut self, mthd: u16, index: impl Into<Value>) -> Value {
        let dst = self.alloc_reg();
        self.state_arr_to(dst, mthd, index);
        dst
    }

    /// `dst = state[mthd + 4 * index]`
    pub fn state_arr_to(&mut self, dst: Value, mthd: u16, index: impl Into<Value>) {
        let dst = self.dst_reg(dst);
        let (mthd, index) = self.fold_index(mthd, index.into());
        self.push(Op::State { dst, mthd, index });
    }

    /// Selects method `mthd` for the following [`Self::emit`]s (each advances it by 4).
    pub fn mthd(&mut self, mthd: u16) {
        self.mthd_arr(mthd, Value::Zero);
    }

    /// Selects method `mthd + 4 * index`.
    pub fn mthd_arr(&mut self, mthd: u16, index: impl Into<Value>) {
        let (mthd, index) = self.fold_index(mthd, index.into());
        self.push(Op::Mthd { mthd, index });
    }

    fn fold_index(&mut self, mthd: u16, index: Value) -> (u16, Value) {
        let (mthd, index) = match index.constant() {
            Some(i) => (u32::from(mthd) + 4 * i, Value::Zero),
            None => (u32::from(mthd), index),
        };
        if mthd > 0x3ffc || mthd % 4 != 0 {
            self.fail(BuildError::Invalid(format!(
                "method {mthd:#x} is outside the class"
            )));
        }
        (mthd as u16, index)
    }

    /// Sends `x` to the selected method.
    pub fn emit(&mut self, x: impl Into<Value>) {
        let x = x.into();
        // Before Turing an immediate is emitted from a register of its own, moved there
        // by the instruction that emits it (mme_fermi_emit).
        let (x, temp) = match (self.arch, x) {
            (Arch::Fermi, Value::Imm(v)) if v != 0 => self.in_reg(x, None),
            _ => (x, None),
        };
        self.push(Op::Emit { x });
        self.release(&[temp]);
    }

    /// `data_ram[addr]` in a new register (Turing's data RAM).
    pub fn dread(&mut self, addr: impl Into<Value>) -> Value {
        if self.arch != Arch::Turing {
            self.unsupported("the data RAM");
        }
        let dst = self.alloc();
        let (addr, temp) = self.small_or_reg(addr.into());
        self.push(Op::DRead { dst, addr });
        self.release(&[temp]);
        Value::Reg(dst)
    }

    /// `data_ram[addr] = x` (Turing's data RAM).
    pub fn dwrite(&mut self, addr: impl Into<Value>, x: impl Into<Value>) {
        if self.arch != Arch::Turing {
            return self.unsupported("the data RAM");
        }
        let (addr, t0) = self.small_or_reg(addr.into());
        let (x, t1) = self.small_or_reg(x.into());
        self.push(Op::DWrite { addr, x });
        self.release(&[t0, t1]);
    }

    fn small_or_reg(&mut self, v: Value) -> (Value, Option<Reg>) {
        match v {
            Value::Imm(c) if !fits_signed(c, 16) => self.in_reg(v, None),
            other => (other, None),
        }
    }

    /// Reads `count` dwords of memory at `(addr_hi << 32) | addr_lo` into the parameter
    /// stream (Turing's `MME_DMA_READ_FIFOED` and its barrier): the next loads return them.
    pub fn read_fifoed(
        &mut self,
        addr_hi: impl Into<Value>,
        addr_lo: impl Into<Value>,
        count: impl Into<Value>,
    ) {
        if self.arch != Arch::Turing {
            return self.unsupported("MME_DMA_READ_FIFOED");
        }
        self.mthd(class::SET_MME_MEM_ADDRESS_A);
        self.emit(addr_hi);
        self.emit(addr_lo);
        self.mthd(class::MME_DMA_READ_FIFOED);
        self.emit(count);
        self.push(Op::Barrier);
    }

    // ------------------------------------------------------------------ control flow

    /// Runs `then` if `cmp(x, y)` holds.
    pub fn if_(
        &mut self,
        cmp: Cmp,
        x: impl Into<Value>,
        y: impl Into<Value>,
        then: impl FnOnce(&mut Builder),
    ) {
        let test = self.test(cmp, x.into(), y.into());
        let then = self.block(then);
        self.push(Op::If { test, then });
    }

    /// Runs `body` while `cmp(x, y)` holds, testing before each iteration. The operands
    /// are compared afresh every time (the test is built after the body, so the loop's
    /// back branch jumps to it and never past it).
    pub fn while_(
        &mut self,
        cmp: Cmp,
        x: impl Into<Value>,
        y: impl Into<Value>,
        body: impl FnOnce(&mut Builder),
    ) {
        let (x, y) = (x.into(), y.into());
        let body = self.block(body);
        let mut test = Test::Zero(Value::Zero);
        let cond = self.block(|b| test = b.test(cmp, x, y));
        self.push(Op::While { cond, test, body });
    }

    /// Runs `body` `count` times; a count of 0 runs it not at all, on both instruction
    /// sets (Turing's LOOP instruction alone would run it once).
    pub fn loop_(&mut self, count: impl Into<Value>, body: impl FnOnce(&mut Builder)) {
        self.counted_loop(count.into(), body, true);
    }

    /// Runs `body` as Mesa's `mme_loop` does: Turing's LOOP instruction, which runs it
    /// max(1, `count`) times; before Turing (or inside another hardware loop) a
    /// counted `while`, which runs it `count` times. NVK's draw macros loop over
    /// instances this way.
    pub fn hw_loop(&mut self, count: impl Into<Value>, body: impl FnOnce(&mut Builder)) {
        self.counted_loop(count.into(), body, false);
    }

    /// A hardware LOOP where Turing allows one (guarded against a count of 0 in a
    /// register when `guard`), else a `while` counting a register down.
    fn counted_loop(&mut self, count: Value, body: impl FnOnce(&mut Builder), guard: bool) {
        let hardware = self.arch == Arch::Turing
            && self.hw_loop_depth == 0
            && count.constant().is_none_or(|c| fits_signed(c, 16));
        if hardware {
            self.hw_loop_depth += 1;
            let body = self.block(body);
            self.hw_loop_depth -= 1;
            match count {
                // LOOP runs its body max(1, count) times: skip it for a count of 0.
                Value::Reg(_) if guard => {
                    let test = self.test(Cmp::Ne, count, Value::Zero);
                    self.push(Op::If {
                        test,
                        then: vec![Op::Loop { count, body }],
                    });
                }
                _ => self.push(Op::Loop { count, body }),
            }
        } else {
            // One hardware loop at a time on Turing, none before it: count down a register.
            let counter = self.mov(count);
            self.while_(Cmp::Ne, counter, Value::Zero, |b| {
                body(b);
                b.sub_to(counter, counter, Value::Imm(1));
            });
            self.free_reg(counter);
        }
    }

    /// Ends the macro here if `cmp(x, y)` holds.
    pub fn exit_if(&mut self, cmp: Cmp, x: impl Into<Value>, y: impl Into<Value>) {
        let test = self.test(cmp, x.into(), y.into());
        self.push(Op::ExitIf { test });
    }

    /// The test for `cmp(x, y)`, with any ops it needs pushed first. Temporaries are
    /// freed at once: the branch reads them before anything that follows can reuse them.
    fn test(&mut self, cmp: Cmp, x: Value, y: Value) -> Test {
        match self.arch {
            Arch::Turing => {
                // The branch's own immediate holds its offset: one operand may be a
                // 16-bit immediate (taken from the other ALU's slot), the rest registers.
                let (x, y, temp) = match (x, y) {
                    (Value::Imm(_), Value::Imm(_)) => {
                        let (x, temp) = self.in_reg(x, None);
                        let (y, t2) = self.small_or_reg(y);
                        self.release(&[t2]);
                        (x, y, temp)
                    }
                    (Value::Imm(c), _) if !fits_signed(c, 16) => {
                        let (x, temp) = self.in_reg(x, None);
                        (x, y, temp)
                    }
                    (_, Value::Imm(c)) if !fits_signed(c, 16) => {
                        let (y, temp) = self.in_reg(y, None);
                        (x, y, temp)
                    }
                    _ => (x, y, None),
                };
                self.release(&[temp]);
                Test::Cmp(cmp, x, y)
            }
            Arch::Fermi => self.fermi_test(cmp, x, y),
        }
    }

    /// Fermi branches test one register for zero; this computes that register.
    fn fermi_test(&mut self, cmp: Cmp, x: Value, y: Value) -> Test {
        // An immediate 0 is zero (Mesa's mme_is_zero): the other operand is tested.
        let zero = |v: Value| if v == Value::Imm(0) { Value::Zero } else { v };
        let (x, y) = (zero(x), zero(y));
        match cmp {
            Cmp::Eq | Cmp::Ne => {
                let diff = match (x, y) {
                    (v, Value::Zero) | (Value::Zero, v)
                        if v.reg().is_some() || v == Value::Zero =>
                    {
                        v
                    }
                    // One ADD_IMM: x - imm is zero exactly when x == imm.
                    (Value::Reg(_), Value::Imm(c)) | (Value::Imm(c), Value::Reg(_))
                        if fits_signed(c.wrapping_neg(), 18) =>
                    {
                        let reg = if x.reg().is_some() { x } else { y };
                        let t = self.alloc_reg();
                        self.alu_to(AluOp::Sub, t, reg, Value::Imm(c));
                        self.free_reg(t);
                        t
                    }
                    _ => {
                        let t = self.alloc_reg();
                        self.alu_to(AluOp::Xor, t, x, y);
                        self.free_reg(t);
                        t
                    }
                };
                if cmp == Cmp::Eq {
                    Test::Zero(diff)
                } else {
                    Test::NonZero(diff)
                }
            }
            _ => {
                // Everything reduces to `a <u b`, possibly negated; signed comparisons
                // bias both operands by 2^31 first.
                let (a, b, negate) = match cmp {
                    Cmp::Ltu | Cmp::Lt => (x, y, false),
                    Cmp::Gtu | Cmp::Gt => (y, x, false),
                    Cmp::Geu | Cmp::Ge => (x, y, true),
                    _ => (y, x, true),
                };
                let signed = matches!(cmp, Cmp::Lt | Cmp::Gt | Cmp::Le | Cmp::Ge);
                let low = self.alloc_reg();
                let borrow = self.alloc_reg();
                let (a, b) = if signed {
                    self.mov_to(borrow, Value::Imm(0x8000_0000));
                    self.add_to(low, a, borrow);
                    self.add_to(borrow, b, borrow);
                    (low, borrow)
                } else {
                    (a, b)
                };
                // The borrow out of `a - b` is set exactly when a <u b; SUBB turns it
                // into 0 - 0 - borrow.
                self.alu64_to(
                    Alu64Op::Sub,
                    [low, borrow],
                    [a, Value::Zero],
                    [b, Value::Zero],
                );
                self.free_reg(low);
                self.free_reg(borrow);
                if negate {
                    Test::Zero(borrow)
                } else {
                    Test::NonZero(borrow)
                }
            }
        }
    }

    // ------------------------------------------------------------------ NVK's helpers

    fn scratch_mthd(&mut self, slot: u16) -> u16 {
        if slot >= self.arch.scratch_slots() {
            self.fail(BuildError::Invalid(format!(
                "scratch slot {slot} is beyond the {} of {}",
                self.arch.scratch_slots(),
                self.arch.name()
            )));
        }
        class::SET_MME_SHADOW_SCRATCH + 4 * slot
    }

    /// Shadow scratch slot `slot`, in a new register.
    pub fn load_scratch(&mut self, slot: u16) -> Value {
        let mthd = self.scratch_mthd(slot);
        self.state(mthd)
    }

    /// `dst = scratch[slot]`
    pub fn load_scratch_to(&mut self, dst: Value, slot: u16) {
        let mthd = self.scratch_mthd(slot);
        self.state_arr_to(dst, mthd, Value::Zero);
    }

    /// `scratch[slot] = v`
    pub fn store_scratch(&mut self, slot: u16, v: impl Into<Value>) {
        let mthd = self.scratch_mthd(slot);
        self.mthd(mthd);
        self.emit(v);
    }

    /// Loads the next parameter straight into `scratch[slot]`.
    pub fn load_to_scratch(&mut self, slot: u16) {
        let v = self.load();
        self.store_scratch(slot, v);
        self.free_reg(v);
    }

    /// Saves `v` to `scratch[slot]` and frees its register.
    pub fn spill(&mut self, slot: u16, v: Value) {
        if v.reg().is_some() {
            self.store_scratch(slot, v);
            self.free_reg(v);
        }
    }

    /// Takes `v`'s register back and reloads it from `scratch[slot]`.
    pub fn unspill(&mut self, slot: u16, v: Value) {
        if v.reg().is_some() {
            self.realloc_reg(v);
            self.load_scratch_to(v, slot);
        }
    }

    /// Registers free now.
    pub fn free_regs(&self) -> u32 {
        self.regs.free_count()
    }
}
