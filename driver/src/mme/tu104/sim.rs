//! The Turing simulator: decodes the words once, then runs a `match` loop over the
//! instructions against a [`Machine`].
//!
//! Per instruction: LOAD0 then LOAD1 take a parameter each if anything reads them; the
//! predicate picks which of ALU0, ALU1, out0, out1 run, in that order; an `end_next`
//! instruction lets one more run; LOOP repeats the instructions up to its end.

use super::isa::{decode, AluOp, Inst, OutSrc, Src};
use crate::mme::dma::ParamStream;
use crate::mme::machine::Machine;
use crate::mme::run::{RunError, RunErrorKind, RunStats};
use crate::mme::DecodeError;

const DATA_RAM_DWORDS: usize = 0xc00;

/// A decoded Turing macro, ready to run.
#[derive(Clone, Debug)]
pub struct Sim {
    name: String,
    insts: Vec<Inst>,
    prepared: Vec<Prepared>,
}

/// What the loop needs to know about an instruction, worked out once at decode time.
#[derive(Clone, Copy, Debug)]
struct Prepared {
    /// Parameters to load: LOAD0, then LOAD1.
    loads: [bool; 2],
    /// Parts that run when the predicate is zero / non-zero.
    enabled: [[bool; 4]; 2],
    predicated: bool,
    /// ALU slots holding the NOP encoding (ADD ZERO, ZERO into ZERO), whose only effects
    /// are a zero result and a clear carry.
    nop_alu: [bool; 2],
}

impl Prepared {
    fn new(inst: &Inst) -> Self {
        Prepared {
            loads: [
                reads(inst, Src::LOAD0) || outputs(inst, OutSrc::Load0),
                reads(inst, Src::LOAD1) || outputs(inst, OutSrc::Load1),
            ],
            enabled: [inst.pred_mode.enabled(0), inst.pred_mode.enabled(1)],
            predicated: inst.pred_mode.0 != 0,
            nop_alu: [inst.alu[0].is_nop(), inst.alu[1].is_nop()],
        }
    }
}

struct State {
    regs: [u32; 24],
    load: [u32; 2],
    alu_res: [u32; 2],
    carry: u32,
    mthd: Option<(u16, u16)>,
    params: ParamStream,
    data_ram: Vec<u32>,
    loop_count: u32,
    loop_start: usize,
    loop_end: usize,
}

fn sign_extend(imm: u16) -> u32 {
    imm as i16 as i32 as u32
}

impl Sim {
    /// Decodes `words` (3 per instruction) of the macro called `name`.
    pub fn new(name: &str, words: &[u32]) -> Result<Self, DecodeError> {
        let insts = decode(words)?;
        let prepared = insts.iter().map(Prepared::new).collect();
        Ok(Sim {
            name: name.to_string(),
            insts,
            prepared,
        })
    }

    /// The decoded instructions.
    pub fn insts(&self) -> &[Inst] {
        &self.insts
    }

    /// Runs the macro against `m`, stopping with an error past `budget` instructions.
    pub fn run(&self, m: &mut impl Machine, budget: u64) -> Result<RunStats, RunError> {
        let mut s = State {
            regs: [0; 24],
            load: [0; 2],
            alu_res: [0; 2],
            carry: 0,
            mthd: None,
            params: ParamStream::default(),
            data_ram: Vec::new(),
            loop_count: 0,
            loop_start: 0,
            loop_end: 0,
        };
        let mut ip = 0usize;
        let mut executed = 0u64;
        let mut ending = false;
        let fail = |ip: usize, kind| RunError {
            name: self.name.clone(),
            ip: ip as u32,
            kind,
        };
        loop {
            if executed >= budget {
                return Err(fail(ip, RunErrorKind::BudgetExceeded { budget }));
            }
            let (Some(inst), Some(prepared)) = (self.insts.get(ip), self.prepared.get(ip)) else {
                return Err(fail(ip, RunErrorKind::FellOffEnd));
            };
            executed += 1;
            let step = s
                .step(inst, prepared, ip, m)
                .map_err(|kind| fail(ip, kind))?;
            if ending || step.stop {
                return Ok(RunStats {
                    instructions: executed,
                });
            }
            ending = inst.end_next;
            let mut next = step.next;
            if s.loop_count > 0 && ip == s.loop_end {
                s.loop_count -= 1;
                next = s.loop_start as i64 + 1;
            }
            if next < 0 || next as usize >= self.insts.len() {
                return Err(fail(ip, RunErrorKind::JumpOutOfRange { target: next }));
            }
            ip = next as usize;
        }
    }
}

struct Step {
    next: i64,
    stop: bool,
}

fn reads(inst: &Inst, src: Src) -> bool {
    inst.pred == src && inst.pred_mode.0 != 0 || inst.alu.iter().any(|a| a.src.contains(&src))
}

fn outputs(inst: &Inst, out: OutSrc) -> bool {
    inst.out.iter().any(|o| o.mthd == out || o.emit == out)
}

impl State {
    fn src(&self, inst: &Inst, alu: usize, src: Src) -> u32 {
        match src {
            Src::ZERO => 0,
            Src::IMM => sign_extend(inst.imm[alu]),
            Src::IMMPAIR => sign_extend(inst.imm[1 - alu]),
            Src::IMM32 => (u32::from(inst.imm[0]) << 16) | u32::from(inst.imm[1]),
            Src::LOAD0 => self.load[0],
            Src::LOAD1 => self.load[1],
            Src(r) => self.regs[usize::from(r)],
        }
    }

    /// The data RAM, allocated on first use: most macros never touch it.
    fn data_ram(&mut self) -> &mut Vec<u32> {
        if self.data_ram.is_empty() {
            self.data_ram = vec![0; DATA_RAM_DWORDS];
        }
        &mut self.data_ram
    }

    fn out(&self, inst: &Inst, src: OutSrc) -> u32 {
        match src {
            OutSrc::None => 0,
            OutSrc::Alu0 => self.alu_res[0],
            OutSrc::Alu1 => self.alu_res[1],
            OutSrc::Load0 => self.load[0],
            OutSrc::Load1 => self.load[1],
            OutSrc::Imm0 => u32::from(inst.imm[0]),
            OutSrc::Imm1 => u32::from(inst.imm[1]),
            OutSrc::ImmHigh0 => u32::from(inst.imm[0]) >> 12,
            OutSrc::ImmHigh1 => u32::from(inst.imm[1]) >> 12,
            OutSrc::Imm32 => (u32::from(inst.imm[0]) << 16) | u32::from(inst.imm[1]),
        }
    }

    fn step(
        &mut self,
        inst: &Inst,
        prepared: &Prepared,
        ip: usize,
        m: &mut impl Machine,
    ) -> Result<Step, RunErrorKind> {
        for (slot, wanted) in self.load.iter_mut().zip(prepared.loads) {
            if wanted {
                *slot = self.params.next(m).ok_or(RunErrorKind::ParamsExhausted)?;
            }
        }
        let enabled = if prepared.predicated {
            prepared.enabled[usize::from(self.src(inst, 0, inst.pred) != 0)]
        } else {
            prepared.enabled[0]
        };
        let mut step = Step {
            next: ip as i64 + 1,
            stop: false,
        };
        let [alu0, alu1, out0, out1] = enabled;
        for (i, run) in [alu0, alu1].into_iter().enumerate() {
            if run && prepared.nop_alu[i] {
                self.alu_res[i] = 0;
                self.carry = 0;
            } else if run {
                self.alu(inst, i, ip, &mut step, m)?;
            }
        }
        for (i, run) in [out0, out1].into_iter().enumerate() {
            if run {
                self.output(inst, i, m)?;
            }
        }
        Ok(step)
    }

    fn alu(
        &mut self,
        inst: &Inst,
        i: usize,
        ip: usize,
        step: &mut Step,
        m: &mut impl Machine,
    ) -> Result<(), RunErrorKind> {
        let alu = &inst.alu[i];
        let x = self.src(inst, i, alu.src[0]);
        let y = self.src(inst, i, alu.src[1]);
        let res = match alu.op {
            AluOp::Add => {
                let r = x.wrapping_add(y);
                self.carry = u32::from(r < x);
                r
            }
            AluOp::Addc => x.wrapping_add(y).wrapping_add(self.carry),
            AluOp::Sub => {
                let r = x.wrapping_sub(y);
                self.carry = u32::from(r > x);
                r
            }
            AluOp::Subb => x.wrapping_sub(y).wrapping_sub(self.carry),
            AluOp::Mul => {
                let wide = i64::from(x as i32) * i64::from(y as i32);
                self.carry = (wide >> 32) as u32;
                wide as u32
            }
            AluOp::Mulh => self.carry,
            AluOp::Mulu => {
                let wide = u64::from(x) * u64::from(y);
                self.carry = (wide >> 32) as u32;
                wide as u32
            }
            AluOp::Extended => {
                if (x, y) != (0x1000, 1) {
                    return Err(RunErrorKind::Illegal(format!(
                        "unknown extended op ({x:#x}, {y:#x})"
                    )));
                }
                self.params
                    .barrier(m)
                    .map_err(|e| RunErrorKind::UnmappedRead { addr: e.addr })?;
                0
            }
            AluOp::Clz => x.leading_zeros(),
            AluOp::Sll => x << (y & 31),
            AluOp::Srl => x >> (y & 31),
            AluOp::Sra => ((x as i32) >> (y & 31)) as u32,
            AluOp::And => x & y,
            AluOp::Nand => !(x & y),
            AluOp::Or => x | y,
            AluOp::Xor => x ^ y,
            AluOp::Merge => {
                let imm = u32::from(inst.imm[i]);
                let (dst_pos, bits, src_pos) =
                    ((imm >> 10) & 0x3f, ((imm >> 5) & 0x1f) as u8, imm & 0x1f);
                let mask = crate::mme::mask(bits);
                let field = mask.checked_shl(dst_pos).unwrap_or(0);
                (x & !field) | ((y >> src_pos) & mask).checked_shl(dst_pos).unwrap_or(0)
            }
            AluOp::Slt => bool_mask((x as i32) < (y as i32)),
            AluOp::Sltu => bool_mask(x < y),
            AluOp::Sle => bool_mask((x as i32) <= (y as i32)),
            AluOp::Sleu => bool_mask(x <= y),
            AluOp::Seq => bool_mask(x == y),
            AluOp::State => m.state((x.wrapping_add(y).wrapping_mul(4) & 0x3ffc) as u16),
            AluOp::Loop => {
                if self.loop_count != 0 {
                    return Err(RunErrorKind::Illegal("LOOP inside a running LOOP".into()));
                }
                let length = usize::from(inst.imm[i]);
                if length < 2 {
                    return Err(RunErrorKind::Illegal(format!("LOOP of length {length}")));
                }
                self.loop_count = x.max(1) - 1;
                self.loop_start = ip;
                self.loop_end = ip + length - 1;
                0
            }
            AluOp::Jal => {
                step.next = ip as i64 + i64::from(inst.imm[i] & 0x7fff);
                0
            }
            AluOp::Blt | AluOp::Bltu | AluOp::Ble | AluOp::Bleu | AluOp::Beq => {
                let holds = match alu.op {
                    AluOp::Blt => (x as i32) < (y as i32),
                    AluOp::Bltu => x < y,
                    AluOp::Ble => (x as i32) <= (y as i32),
                    AluOp::Bleu => x <= y,
                    _ => x == y,
                };
                let imm = inst.imm[i];
                if holds == (imm & 0x8000 != 0) {
                    let offset = imm & 0x1fff;
                    if offset == 0x1000 {
                        step.stop = true;
                    } else {
                        step.next = ip as i64 + i64::from(((u32::from(offset) << 19) as i32) >> 19);
                    }
                }
                0
            }
            AluOp::Dread => *self
                .data_ram()
                .get(x as usize)
                .ok_or(RunErrorKind::DataRamOutOfRange { index: x })?,
            AluOp::Dwrite => {
                *self
                    .data_ram()
                    .get_mut(x as usize)
                    .ok_or(RunErrorKind::DataRamOutOfRange { index: x })? = y;
                0
            }
        };
        self.alu_res[i] = res;
        if alu.dst.is_gpr() {
            self.regs[usize::from(alu.dst.0)] = res;
        }
        Ok(())
    }

    fn output(&mut self, inst: &Inst, i: usize, m: &mut impl Machine) -> Result<(), RunErrorKind> {
        let out = inst.out[i];
        if out.mthd != OutSrc::None {
            let v = self.out(inst, out.mthd);
            self.mthd = Some((((v & 0xfff) << 2) as u16, ((v >> 12) & 0xf) as u16));
        }
        if out.emit != OutSrc::None {
            let data = self.out(inst, out.emit);
            let (mthd, inc) = self.mthd.ok_or(RunErrorKind::EmitWithoutMethod)?;
            self.params.observe(mthd, data);
            m.mthd(mthd, data);
            self.mthd = Some(((mthd + 4 * inc) & 0x3ffc, inc));
        }
        Ok(())
    }
}

fn bool_mask(b: bool) -> u32 {
    if b {
        u32::MAX
    } else {
        0
    }
}
