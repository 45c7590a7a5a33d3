//! The reference interpreter: a builder [`Program`] executed directly, op by op, with
//! the plainest reading of each op. The simulators run encoded words; tests check that
//! both agree with this.

use super::dma::ParamStream;
use super::ir::{mask, Alu64Op, Arch, Op, Program, Test};
use super::machine::Machine;
use super::run::{RunError, RunErrorKind, RunStats};
use super::value::Value;

const DATA_RAM_DWORDS: usize = 0xc00;

/// Runs `program` against `machine`, executing at most `budget` ops.
pub fn run(
    program: &Program,
    name: &str,
    machine: &mut impl Machine,
    budget: u64,
) -> Result<RunStats, RunError> {
    let mut interp = Interp {
        regs: [0; 32],
        params: ParamStream::default(),
        method: None,
        data_ram: vec![0; DATA_RAM_DWORDS],
        executed: 0,
        budget,
        carry: 0,
    };
    if program.arch == Arch::Fermi {
        // The first parameter is in r1 when a pre-Turing macro starts.
        interp.regs[1] = interp.params.next(machine).unwrap_or(0);
    }
    match interp.block(&program.ops, machine) {
        Ok(_) => Ok(RunStats {
            instructions: interp.executed,
        }),
        Err(kind) => Err(RunError {
            name: name.to_string(),
            ip: interp.executed as u32,
            kind,
        }),
    }
}

struct Interp {
    regs: [u32; 32],
    params: ParamStream,
    method: Option<u16>,
    data_ram: Vec<u32>,
    executed: u64,
    budget: u64,
    /// The carry (or borrow) a low [`Op::Alu64Half`] leaves for the high one.
    carry: u32,
}

/// Whether execution continues after a block or the macro has exited.
enum Flow {
    Next,
    Exit,
}

impl Interp {
    fn value(&self, v: Value) -> u32 {
        match v {
            Value::Zero => 0,
            Value::Imm(c) => c,
            Value::Reg(r) => self.regs[usize::from(r.0)],
        }
    }

    fn test(&self, test: &Test) -> bool {
        test.eval(|v| self.value(v))
    }

    fn tick(&mut self) -> Result<(), RunErrorKind> {
        self.executed += 1;
        if self.executed > self.budget {
            return Err(RunErrorKind::BudgetExceeded {
                budget: self.budget,
            });
        }
        Ok(())
    }

    fn block(&mut self, ops: &[Op], m: &mut impl Machine) -> Result<Flow, RunErrorKind> {
        for op in ops {
            self.tick()?;
            if let Flow::Exit = self.op(op, m)? {
                return Ok(Flow::Exit);
            }
        }
        Ok(Flow::Next)
    }

    fn op(&mut self, op: &Op, m: &mut impl Machine) -> Result<Flow, RunErrorKind> {
        match op {
            Op::Alu { op, dst, x, y } => {
                self.regs[usize::from(dst.0)] = op.eval(self.value(*x), self.value(*y))
            }
            Op::Alu64 { op, dst, x, y } => {
                let wide = |v: [Value; 2]| {
                    u64::from(self.value(v[0])) | (u64::from(self.value(v[1])) << 32)
                };
                let r = match op {
                    Alu64Op::Add => wide(*x).wrapping_add(wide(*y)),
                    Alu64Op::Sub => wide(*x).wrapping_sub(wide(*y)),
                    Alu64Op::UMul => u64::from(self.value(x[0])) * u64::from(self.value(y[0])),
                };
                self.regs[usize::from(dst[0].0)] = r as u32;
                self.regs[usize::from(dst[1].0)] = (r >> 32) as u32;
            }
            Op::Alu64Half {
                op,
                high,
                dst,
                x,
                y,
            } => {
                let (x, y) = (self.value(*x), self.value(*y));
                let carry = if *high { self.carry } else { 0 };
                let (r, out) = match op {
                    Alu64Op::Add => {
                        let wide = u64::from(x) + u64::from(y) + u64::from(carry);
                        (wide as u32, u32::from(wide > u64::from(u32::MAX)))
                    }
                    Alu64Op::Sub => {
                        let need = u64::from(y) + u64::from(carry);
                        (
                            x.wrapping_sub(y).wrapping_sub(carry),
                            u32::from(u64::from(x) < need),
                        )
                    }
                    // The product's low word, its high word carried (MULU, MULH).
                    Alu64Op::UMul if *high => (carry, carry),
                    Alu64Op::UMul => {
                        let wide = u64::from(x) * u64::from(y);
                        (wide as u32, (wide >> 32) as u32)
                    }
                };
                self.carry = out;
                self.regs[usize::from(dst.0)] = r;
            }
            Op::Merge {
                dst,
                x,
                y,
                dst_pos,
                bits,
                src_pos,
            } => {
                let field = mask(*bits) << dst_pos;
                let moved = ((self.value(*y) >> src_pos) & mask(*bits)) << dst_pos;
                self.regs[usize::from(dst.0)] = (self.value(*x) & !field) | moved;
            }
            Op::Bfe { dst, x, pos, bits } => {
                self.regs[usize::from(dst.0)] =
                    (self.value(*x) >> (self.value(*pos) & 31)) & mask(*bits);
            }
            Op::Mov { dst, x } => self.regs[usize::from(dst.0)] = self.value(*x),
            Op::Load { dst } => {
                self.regs[usize::from(dst.0)] =
                    self.params.next(m).ok_or(RunErrorKind::ParamsExhausted)?;
            }
            Op::State { dst, mthd, index } => {
                let addr = (u32::from(*mthd) + 4 * self.value(*index)) & 0x3ffc;
                self.regs[usize::from(dst.0)] = m.state(addr as u16);
            }
            Op::Mthd { mthd, index } => {
                self.method = Some(((u32::from(*mthd) + 4 * self.value(*index)) & 0x3ffc) as u16);
            }
            Op::Emit { x } => {
                let mthd = self.method.ok_or(RunErrorKind::EmitWithoutMethod)?;
                let data = self.value(*x);
                self.params.observe(mthd, data);
                m.mthd(mthd, data);
                self.method = Some((mthd + 4) & 0x3ffc);
            }
            Op::DRead { dst, addr } => {
                let index = self.value(*addr);
                let v = *self
                    .data_ram
                    .get(index as usize)
                    .ok_or(RunErrorKind::DataRamOutOfRange { index })?;
                self.regs[usize::from(dst.0)] = v;
            }
            Op::DWrite { addr, x } => {
                let index = self.value(*addr);
                let v = self.value(*x);
                *self
                    .data_ram
                    .get_mut(index as usize)
                    .ok_or(RunErrorKind::DataRamOutOfRange { index })? = v;
            }
            Op::Barrier => self
                .params
                .barrier(m)
                .map_err(|e| RunErrorKind::UnmappedRead { addr: e.addr })?,
            Op::If { test, then } => {
                if self.test(test) {
                    return self.block(then, m);
                }
            }
            Op::While { cond, test, body } => loop {
                if let Flow::Exit = self.block(cond, m)? {
                    return Ok(Flow::Exit);
                }
                self.tick()?;
                if !self.test(test) {
                    break;
                }
                if let Flow::Exit = self.block(body, m)? {
                    return Ok(Flow::Exit);
                }
            },
            Op::Loop { count, body } => {
                for _ in 0..self.value(*count) {
                    if let Flow::Exit = self.block(body, m)? {
                        return Ok(Flow::Exit);
                    }
                }
            }
            Op::ExitIf { test } => {
                if self.test(test) {
                    return Ok(Flow::Exit);
                }
            }
        }
        Ok(Flow::Next)
    }
}
