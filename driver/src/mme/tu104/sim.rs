//! The Turing simulator: decodes the words once into a form the loop can run without
//! re-reading encodings (every operand resolved to a register slot or a constant), then
//! runs a `match` loop against a [`Machine`]. An unpredicated instruction runs as the
//! list of its parts that do something ([`Op`]); a predicated one runs whole, its parts
//! chosen by the predicate (`State::step`). [`Sim::run_whole`] runs every instruction
//! that way: the plain reading the op lists must equal (the property tests compare them).
//!
//! The op lists leave out what no one can observe. A method output that reads a move's
//! or a NOP's result reads the moved value (or zero) itself, and an ALU result no output
//! reads is not kept (unless a predicated instruction could read it with that ALU
//! off); a parameter only moved into a register is loaded straight into it;
//! the carry that NOPs and moves clear is not cleared in a macro that never reads it
//! (no ADDC, SUBB or MULH); a method select from a constant, and `STATE` of one, are
//! worked out at decode time, the select joined with the emit that follows it; a
//! branch whose (zero) result no one reads only compares, its target worked out at
//! decode time. A straight stretch (instructions that each fall through to the next: no
//! predicate, branch, jump, loop start or end, no `end_next`) and the instruction that
//! ends it run as one list, with one budget check; an error inside one still names its
//! instruction.
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

/// Register-file slots beside r0–r23 (ZERO and the immediates become constants): a slot
/// that swallows discarded results, the two loaded parameters, and the two ALU results
/// (what method outputs read).
const SLOT_DISCARD: u8 = 25;
const SLOT_LOAD: [u8; 2] = [28, 29];
const SLOT_ALU_RES: [u8; 2] = [30, 31];

/// Part-enable bits, in the order an instruction runs them.
const RUN_ALU: [u8; 2] = [1, 2];
const RUN_OUT: [u8; 2] = [4, 8];

/// A decoded Turing macro, ready to run.
#[derive(Clone, Debug)]
pub struct Sim {
    name: String,
    insts: Vec<Inst>,
    code: Vec<Compiled>,
    /// Each instruction as the loop runs it: the parts that do something, in order
    /// (instruction `i`'s are `ops[code[i].first_op..code[i].end_op]`).
    ops: Vec<Op>,
    /// The stretch each instruction starts, as the loop runs it whole.
    blocks: Vec<Block>,
}

/// A straight stretch and the instruction that ends it, as one list of ops: what the
/// loop needs to run it, kept apart from the instructions so that a step of the loop
/// reads little. Every instruction before `last` is unpredicated, neither branches,
/// jumps nor starts a loop, ends no loop and has no `end_next`, so control just falls
/// through them.
#[derive(Clone, Copy, Debug)]
struct Block {
    /// Its ops: `ops[first_op..end_op]`.
    first_op: u32,
    end_op: u32,
    /// The instruction that ends it.
    last: u32,
    /// The instructions it holds.
    length: u32,
}

/// One part of an instruction, for the loop to run without re-deciding what runs.
/// Unpredicated instructions become a list of these (see [`Op::compile`]); predicated
/// ones run whole through [`Op::Predicated`].
#[derive(Clone, Copy, Debug)]
enum Op {
    /// Loads the next parameter into a slot (a `SLOT_LOAD` slot, or the register a move
    /// would have copied it to).
    Load { slot: u8 },
    /// An ALU holding the NOP encoding, where its result or the clear carry is read:
    /// a zero result (into `res`) and a clear carry.
    Nop { res: u8 },
    /// An ALU adding zero to `x` (how NVK's macros move values): `x` into `dst` and
    /// `res`, the carry cleared where `clear_carry`.
    Move {
        dst: u8,
        res: u8,
        x: Operand,
        clear_carry: bool,
    },
    /// `STATE` of a method known at decode time: its shadowed value into `dst` and `res`.
    State { dst: u8, res: u8, mthd: u16 },
    /// Any ALU operation; its result into `alu.dst` and `res`.
    Alu { res: u8, alu: AluSlot },
    /// A conditional branch (`op` one of the branch ALU ops) whose zero result no one
    /// reads: where comparing `x` with `y` comes out `when`, control goes where `to`
    /// says (an instruction worked out at decode time, or the macro's end).
    Branch {
        op: AluOp,
        when: bool,
        to: BranchTo,
        x: Operand,
        y: Operand,
    },
    /// Selects the method the next emit writes.
    Mthd { src: Operand },
    /// Selects a method known at decode time (byte address and increment).
    MthdConst { mthd: u16, inc: u16 },
    /// Emits a value to the selected method.
    Emit { src: Operand },
    /// Selects a method known at decode time and emits a value to it.
    MthdConstEmit { mthd: u16, inc: u16, src: Operand },
    /// The whole instruction, predicated: parts chosen by the predicate at run time.
    Predicated,
}

/// What one instruction can see of the state others leave behind, besides registers.
#[derive(Clone, Copy)]
struct Observed {
    /// Some instruction reads the carry (ADDC, SUBB, MULH).
    carry: bool,
    /// Some predicated instruction has an output reading ALU `i`'s result: with that
    /// ALU switched off by the predicate, it reads what an earlier instruction left.
    alu_results: [bool; 2],
}

impl Observed {
    fn of(code: &[Compiled]) -> Self {
        Observed {
            carry: code.iter().any(|c| {
                c.alu
                    .iter()
                    .any(|a| !a.nop && matches!(a.op, AluOp::Addc | AluOp::Subb | AluOp::Mulh))
            }),
            alu_results: std::array::from_fn(|i| {
                code.iter()
                    .any(|c| c.pred.is_some() && outputs_read(&c.out, SLOT_ALU_RES[i]))
            }),
        }
    }
}

/// What an ALU slot amounts to, before its result's readers are known.
#[derive(Clone, Copy)]
enum AluForm {
    /// The NOP encoding: result zero.
    Nop,
    /// A move of `x` into `dst`.
    Move { dst: u8, x: Operand },
    /// Anything else.
    Other,
}

impl Op {
    /// The ops of the unpredicated instruction `c`, appended to `ops`, given what the
    /// macro's other instructions can observe (`seen`).
    fn compile(c: &Compiled, ip: usize, seen: Observed, ops: &mut Vec<Op>) {
        let carry_read = seen.carry;
        if c.pred.is_some() {
            ops.push(Op::Predicated);
            return;
        }
        let forms: [AluForm; 2] = std::array::from_fn(|i| {
            let alu = &c.alu[i];
            match (alu.op, alu.x, alu.y) {
                _ if alu.nop => AluForm::Nop,
                (AluOp::Add, x, Operand::Const(0)) | (AluOp::Add, Operand::Const(0), x) => {
                    AluForm::Move { dst: alu.dst, x }
                }
                _ => AluForm::Other,
            }
        });
        // An output reading ALU i's result reads the moved value itself where nothing
        // after ALU i in this instruction writes the slot it came from.
        let forwarded = |i: usize| -> Option<Operand> {
            match forms[i] {
                AluForm::Nop => Some(Operand::Const(0)),
                AluForm::Move {
                    x: Operand::Slot(slot),
                    ..
                } if i == 1 || c.alu[1].dst != slot => Some(Operand::Slot(slot)),
                AluForm::Move { x, .. } if matches!(x, Operand::Const(_)) => Some(x),
                _ => None,
            }
        };
        let resolve = |src: Option<Operand>| {
            src.map(|src| match src {
                Operand::Slot(slot) => match SLOT_ALU_RES.iter().position(|&r| r == slot) {
                    Some(i) => forwarded(i).unwrap_or(src),
                    None => src,
                },
                Operand::Const(_) => src,
            })
        };
        let outs: [OutSlot; 2] = std::array::from_fn(|i| OutSlot {
            mthd: resolve(c.out[i].mthd),
            emit: resolve(c.out[i].emit),
        });
        let out_reads = |slot: u8| outputs_read(&outs, slot);
        let res: [u8; 2] =
            std::array::from_fn(
                |i| match seen.alu_results[i] || out_reads(SLOT_ALU_RES[i]) {
                    true => SLOT_ALU_RES[i],
                    false => SLOT_DISCARD,
                },
            );
        // A parameter only moved into a register goes straight there.
        let mut load_into = SLOT_LOAD;
        let mut loaded_directly = [false; 2];
        for (i, form) in forms.iter().enumerate() {
            let AluForm::Move {
                dst,
                x: Operand::Slot(from),
            } = *form
            else {
                continue;
            };
            let Some(k) = SLOT_LOAD.iter().position(|&l| l == from) else {
                continue;
            };
            let other = &c.alu[1 - i];
            let other_reads = |slot: u8| {
                !other.nop
                    && [other.x, other.y]
                        .iter()
                        .any(|o| matches!(o, Operand::Slot(s) if *s == slot))
            };
            let only_reader = !other_reads(from) && !out_reads(from);
            // ALU 0 runs before ALU 1: a register ALU 1 fills must not be one ALU 0 reads
            // or writes, or it would see (or overwrite) the parameter too early.
            let order_kept = i == 0 || (!other_reads(dst) && (other.nop || other.dst != dst));
            if dst != SLOT_DISCARD
                && !carry_read
                && res[i] == SLOT_DISCARD
                && only_reader
                && order_kept
            {
                load_into[k] = dst;
                loaded_directly[i] = true;
            }
        }
        for (k, slot) in load_into.into_iter().enumerate() {
            if c.loads & (1 << k) != 0 {
                ops.push(Op::Load { slot });
            }
        }
        for (i, form) in forms.iter().enumerate() {
            match *form {
                AluForm::Nop if carry_read || res[i] != SLOT_DISCARD => {
                    ops.push(Op::Nop { res: res[i] })
                }
                AluForm::Nop => {}
                AluForm::Move { .. } if loaded_directly[i] => {}
                AluForm::Move { dst, x } => {
                    if carry_read || dst != SLOT_DISCARD || res[i] != SLOT_DISCARD {
                        ops.push(Op::Move {
                            dst,
                            res: res[i],
                            x,
                            clear_carry: carry_read,
                        });
                    }
                }
                AluForm::Other => {
                    let alu = c.alu[i];
                    ops.push(match (alu.op, alu.x, alu.y) {
                        (AluOp::State, Operand::Const(x), Operand::Const(y)) => Op::State {
                            dst: alu.dst,
                            res: res[i],
                            mthd: state_method(x, y),
                        },
                        (op, x, y)
                            if op.is_branch()
                                && res[i] == SLOT_DISCARD
                                && alu.dst == SLOT_DISCARD =>
                        {
                            Op::Branch {
                                op,
                                when: alu.imm & 0x8000 != 0,
                                to: BranchTo::of(ip, alu.imm),
                                x,
                                y,
                            }
                        }
                        _ => Op::Alu { res: res[i], alu },
                    });
                }
            }
        }
        for out in &outs {
            match (out.mthd, out.emit) {
                (Some(Operand::Const(v)), Some(src)) => {
                    let (mthd, inc) = method_select(v);
                    ops.push(Op::MthdConstEmit { mthd, inc, src });
                }
                (mthd, emit) => {
                    if let Some(src) = mthd {
                        ops.push(match src {
                            Operand::Const(v) => {
                                let (mthd, inc) = method_select(v);
                                Op::MthdConst { mthd, inc }
                            }
                            Operand::Slot(_) => Op::Mthd { src },
                        });
                    }
                    if let Some(src) = emit {
                        ops.push(Op::Emit { src });
                    }
                }
            }
        }
    }
}

/// The method (a byte address) and increment a method select of `v` picks: the low 12
/// bits as a dword index, the increment in bits 15:12.
#[inline(always)]
fn method_select(v: u32) -> (u16, u16) {
    (((v & 0xfff) << 2) as u16, ((v >> 12) & 0xf) as u16)
}

/// Where a taken branch goes: an instruction index, or the macro's end.
#[derive(Clone, Copy, Debug)]
enum BranchTo {
    Inst(i32),
    Stop,
}

impl BranchTo {
    /// Takes the branch: sets where control goes `next`, but leaves a stop the
    /// instruction's other ALU took.
    #[inline(always)]
    fn take(self, next: &mut i64) {
        match self {
            BranchTo::Stop => *next = STOP,
            BranchTo::Inst(target) if *next != STOP => *next = i64::from(target),
            BranchTo::Inst(_) => {}
        }
    }

    /// Where a branch at `ip` with immediate `imm` goes when taken.
    fn of(ip: usize, imm: u16) -> Self {
        match imm & 0x1fff {
            0x1000 => BranchTo::Stop,
            offset => BranchTo::Inst(ip as i32 + (((u32::from(offset) << 19) as i32) >> 19)),
        }
    }
}

/// Whether a branch ALU op's comparison of `x` with `y` holds.
#[inline(always)]
fn branch_holds(op: AluOp, x: u32, y: u32) -> bool {
    match op {
        AluOp::Blt => (x as i32) < (y as i32),
        AluOp::Bltu => x < y,
        AluOp::Ble => (x as i32) <= (y as i32),
        AluOp::Bleu => x <= y,
        _ => x == y,
    }
}

/// The method `STATE x, y` reads.
#[inline(always)]
fn state_method(x: u32, y: u32) -> u16 {
    (x.wrapping_add(y).wrapping_mul(4) & 0x3ffc) as u16
}

/// An operand as the loop reads it: a register-file slot, or a value known at decode
/// time (the immediates in their source forms, ZERO).
#[derive(Clone, Copy, Debug)]
enum Operand {
    Slot(u8),
    Const(u32),
}

/// One ALU slot with its operands resolved.
#[derive(Clone, Copy, Debug)]
struct AluSlot {
    op: AluOp,
    /// The register-file slot the result goes to (`SLOT_DISCARD` when not a GPR).
    dst: u8,
    x: Operand,
    y: Operand,
    imm: u16,
    /// The NOP encoding (ADD ZERO, ZERO into ZERO): only a zero result and a clear carry.
    nop: bool,
}

impl AluSlot {
    /// Whether the slot decides where control goes next (a branch, JAL or LOOP).
    fn steers(&self) -> bool {
        self.op.is_branch() || matches!(self.op, AluOp::Jal | AluOp::Loop)
    }
}

/// One method output with its sources resolved; `None` where the part is absent.
#[derive(Clone, Copy, Debug)]
struct OutSlot {
    mthd: Option<Operand>,
    emit: Option<Operand>,
}

/// Whether a part of `outs` (a method select or an emit) reads `slot`.
fn outputs_read(outs: &[OutSlot; 2], slot: u8) -> bool {
    outs.iter()
        .flat_map(|o| [o.mthd, o.emit])
        .any(|src| matches!(src, Some(Operand::Slot(s)) if s == slot))
}

/// An instruction as the loop runs it, worked out once at decode time.
#[derive(Clone, Copy, Debug)]
struct Compiled {
    /// Bit `i` set: load parameter `i` (LOAD0, then LOAD1).
    loads: u8,
    /// The predicate's operand, for predicated instructions.
    pred: Option<Operand>,
    /// The parts that run (`RUN_*` bits) when the predicate is zero / non-zero.
    enabled: [u8; 2],
    end_next: bool,
    alu: [AluSlot; 2],
    out: [OutSlot; 2],
    /// Where its ops lie in [`Sim`]'s list: `ops[first_op..end_op]`.
    first_op: u32,
    end_op: u32,
}

fn sign_extend(imm: u16) -> u32 {
    imm as i16 as i32 as u32
}

fn imm32(inst: &Inst) -> u32 {
    (u32::from(inst.imm[0]) << 16) | u32::from(inst.imm[1])
}

/// `src` as ALU `alu` of `inst` reads it.
fn operand(inst: &Inst, alu: usize, src: Src) -> Operand {
    match src {
        Src::ZERO => Operand::Const(0),
        Src::IMM => Operand::Const(sign_extend(inst.imm[alu])),
        Src::IMMPAIR => Operand::Const(sign_extend(inst.imm[1 - alu])),
        Src::IMM32 => Operand::Const(imm32(inst)),
        Src::LOAD0 => Operand::Slot(SLOT_LOAD[0]),
        Src::LOAD1 => Operand::Slot(SLOT_LOAD[1]),
        // Decoding admits codes below 30 only: the rest are r0–r23.
        Src(r) => Operand::Slot(r),
    }
}

fn out_operand(inst: &Inst, src: OutSrc) -> Option<Operand> {
    Some(match src {
        OutSrc::None => return None,
        OutSrc::Alu0 => Operand::Slot(SLOT_ALU_RES[0]),
        OutSrc::Alu1 => Operand::Slot(SLOT_ALU_RES[1]),
        OutSrc::Load0 => Operand::Slot(SLOT_LOAD[0]),
        OutSrc::Load1 => Operand::Slot(SLOT_LOAD[1]),
        OutSrc::Imm0 => Operand::Const(u32::from(inst.imm[0])),
        OutSrc::Imm1 => Operand::Const(u32::from(inst.imm[1])),
        OutSrc::ImmHigh0 => Operand::Const(u32::from(inst.imm[0]) >> 12),
        OutSrc::ImmHigh1 => Operand::Const(u32::from(inst.imm[1]) >> 12),
        OutSrc::Imm32 => Operand::Const(imm32(inst)),
    })
}

fn reads(inst: &Inst, src: Src) -> bool {
    inst.pred == src && inst.pred_mode.0 != 0 || inst.alu.iter().any(|a| a.src.contains(&src))
}

fn outputs(inst: &Inst, out: OutSrc) -> bool {
    inst.out.iter().any(|o| o.mthd == out || o.emit == out)
}

fn enable_bits(parts: [bool; 4]) -> u8 {
    let bits = [RUN_ALU[0], RUN_ALU[1], RUN_OUT[0], RUN_OUT[1]];
    parts
        .iter()
        .zip(bits)
        .filter(|(on, _)| **on)
        .fold(0, |acc, (_, bit)| acc | bit)
}

impl Compiled {
    fn new(inst: &Inst) -> Self {
        let load0 = reads(inst, Src::LOAD0) || outputs(inst, OutSrc::Load0);
        let load1 = reads(inst, Src::LOAD1) || outputs(inst, OutSrc::Load1);
        let alu = std::array::from_fn(|i| {
            let a = &inst.alu[i];
            AluSlot {
                op: a.op,
                dst: if a.dst.is_gpr() {
                    a.dst.0
                } else {
                    SLOT_DISCARD
                },
                x: operand(inst, i, a.src[0]),
                y: operand(inst, i, a.src[1]),
                imm: inst.imm[i],
                nop: a.is_nop(),
            }
        });
        let out = std::array::from_fn(|i| OutSlot {
            mthd: out_operand(inst, inst.out[i].mthd),
            emit: out_operand(inst, inst.out[i].emit),
        });
        Compiled {
            loads: u8::from(load0) | (u8::from(load1) << 1),
            pred: (inst.pred_mode.0 != 0).then(|| operand(inst, 0, inst.pred)),
            enabled: [
                enable_bits(inst.pred_mode.enabled(0)),
                enable_bits(inst.pred_mode.enabled(1)),
            ],
            end_next: inst.end_next,
            alu,
            out,
            first_op: 0,
            end_op: 0,
        }
    }
}

/// A running macro's registers and the rest of its state.
struct State {
    /// r0–r23, then the slots named by the `SLOT_*` constants.
    slots: [u32; 32],
    carry: u32,
    /// The method the next emit writes, and its increment.
    mthd: Option<(u16, u16)>,
    params: ParamStream,
    data_ram: Vec<u32>,
    loop_count: u32,
    loop_start: usize,
    loop_end: usize,
}

/// What `step` gives back for an instruction that ends the macro (a branch to the end).
const STOP: i64 = i64::MIN;

/// Why an instruction failed, boxed so that a step's result fits in two registers.
type StepError = Box<RunErrorKind>;

impl Sim {
    /// Decodes `words` (3 per instruction) of the macro called `name`.
    pub fn new(name: &str, words: &[u32]) -> Result<Self, DecodeError> {
        let insts = decode(words)?;
        let mut code: Vec<Compiled> = insts.iter().map(Compiled::new).collect();
        let seen = Observed::of(&code);
        let mut ops = Vec::new();
        for (ip, c) in code.iter_mut().enumerate() {
            c.first_op = ops.len() as u32;
            Op::compile(c, ip, seen, &mut ops);
            c.end_op = ops.len() as u32;
        }
        // Where a LOOP started at `ip` of length `n` ends: `ip + n - 1`.
        let loop_ends: Vec<usize> = code
            .iter()
            .enumerate()
            .flat_map(|(ip, c)| {
                c.alu
                    .iter()
                    .filter(|a| a.op == AluOp::Loop)
                    .map(move |a| ip + usize::from(a.imm).max(1) - 1)
            })
            .collect();
        // Each instruction's stretch, from the end: one that falls through ends where the
        // next one's does.
        let mut blocks: Vec<Block> = Vec::with_capacity(code.len());
        for (ip, c) in code.iter().enumerate().rev() {
            let falls_through = c.pred.is_none()
                && !c.end_next
                && !c.alu.iter().any(|a| a.steers())
                && !loop_ends.contains(&ip)
                && ip + 1 < code.len();
            let (last, end_op) = match blocks.last() {
                Some(next) if falls_through => (next.last, next.end_op),
                _ => (ip as u32, c.end_op),
            };
            blocks.push(Block {
                first_op: c.first_op,
                end_op,
                last,
                length: last - ip as u32 + 1,
            });
        }
        blocks.reverse();
        Ok(Sim {
            name: name.to_string(),
            insts,
            code,
            ops,
            blocks,
        })
    }

    /// The decoded instructions.
    pub fn insts(&self) -> &[Inst] {
        &self.insts
    }

    /// Runs the macro against `m`, stopping with an error past `budget` instructions.
    pub fn run(&self, m: &mut impl Machine, budget: u64) -> Result<RunStats, RunError> {
        self.execute::<false>(m, budget)
    }

    /// Runs the macro as [`Sim::run`] does, but every instruction whole, its parts
    /// chosen as for a predicated one, without the op lists: slower, and the plain
    /// reading of each instruction that `run` must equal in every method, parameter,
    /// count and error.
    pub fn run_whole(&self, m: &mut impl Machine, budget: u64) -> Result<RunStats, RunError> {
        self.execute::<true>(m, budget)
    }

    /// The instruction, from `ip` on, whose ops hold op `at` of a list that starts with
    /// `ip`'s.
    fn ip_of_op(&self, ip: usize, at: usize) -> usize {
        let op = self.code[ip].first_op as usize + at;
        (ip..self.code.len())
            .find(|&i| (op as u32) < self.code[i].end_op)
            .unwrap_or(ip)
    }

    fn execute<const WHOLE: bool>(
        &self,
        m: &mut impl Machine,
        budget: u64,
    ) -> Result<RunStats, RunError> {
        let mut s = State {
            slots: [0; 32],
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
            // A stretch runs whole, as one list of ops, where the budget holds all of it;
            // otherwise (and for the instruction an `end_next` lets run) one instruction.
            let block = match WHOLE || ending {
                true => None,
                false => self
                    .blocks
                    .get(ip)
                    .filter(|b| executed + u64::from(b.length) <= budget),
            };
            let (inst, mut next) = if let Some(block) = block {
                let last = block.last as usize;
                let inst = &self.code[last];
                let ops = self
                    .ops
                    .get(block.first_op as usize..block.end_op as usize)
                    .unwrap_or(&[]);
                let next = s
                    .run_block(ops, inst, last, m)
                    .map_err(|(at, kind)| fail(self.ip_of_op(ip, at), *kind))?;
                executed += u64::from(block.length);
                ip = last;
                (inst, next)
            } else {
                // `ip` is always in range but in a macro of no instructions.
                let Some(first) = self.code.get(ip) else {
                    return Err(fail(
                        ip,
                        match executed >= budget {
                            true => RunErrorKind::BudgetExceeded { budget },
                            false => RunErrorKind::FellOffEnd,
                        },
                    ));
                };
                if executed >= budget {
                    return Err(fail(ip, RunErrorKind::BudgetExceeded { budget }));
                }
                executed += 1;
                let next = match WHOLE {
                    true => s.step(first, ip, m),
                    false => {
                        let ops = self
                            .ops
                            .get(first.first_op as usize..first.end_op as usize)
                            .unwrap_or(&[]);
                        s.run_ops(ops, first, ip, m)
                    }
                };
                (first, next.map_err(|kind| fail(ip, *kind))?)
            };
            if ending || next == STOP {
                return Ok(RunStats {
                    instructions: executed,
                });
            }
            ending = inst.end_next;
            if s.loop_count > 0 && ip == s.loop_end {
                s.loop_count -= 1;
                next = s.loop_start as i64 + 1;
            }
            if next < 0 || next as usize >= self.code.len() {
                return Err(fail(ip, RunErrorKind::JumpOutOfRange { target: next }));
            }
            ip = next as usize;
        }
    }
}

impl State {
    /// Runs instruction `ip`'s ops (`inst` is the instruction, for a predicated one) and
    /// returns where control goes next.
    #[inline(always)]
    fn run_ops(
        &mut self,
        ops: &[Op],
        inst: &Compiled,
        ip: usize,
        m: &mut impl Machine,
    ) -> Result<i64, StepError> {
        let mut next = ip as i64 + 1;
        for op in ops {
            self.run_op(op, inst, ip, &mut next, m)?;
        }
        Ok(next)
    }

    /// Runs the ops of a stretch: instructions that fall through, then `inst` at `ip`,
    /// the last, which alone may branch, jump, start a loop or be predicated (the ops
    /// before its own never read `inst` or `ip`). Returns where control goes next; an
    /// error comes with the place of the op that failed.
    #[inline(always)]
    fn run_block(
        &mut self,
        ops: &[Op],
        inst: &Compiled,
        ip: usize,
        m: &mut impl Machine,
    ) -> Result<i64, (usize, StepError)> {
        let mut next = ip as i64 + 1;
        for op in ops {
            if let Err(kind) = self.run_op(op, inst, ip, &mut next, m) {
                // Which op failed, found only when one does: counting ops as they run
                // cost every op of every macro an increment.
                let at = (op as *const Op as usize - ops.as_ptr() as usize) / size_of::<Op>();
                return Err((at, kind));
            }
        }
        Ok(next)
    }

    /// Runs one op; a branch or jump sets `next`.
    #[inline(always)]
    fn run_op(
        &mut self,
        op: &Op,
        inst: &Compiled,
        ip: usize,
        next: &mut i64,
        m: &mut impl Machine,
    ) -> Result<(), StepError> {
        match *op {
            Op::Load { slot } => {
                self.slots[usize::from(slot & 31)] =
                    self.params.next(m).ok_or(RunErrorKind::ParamsExhausted)?;
            }
            Op::Nop { res } => {
                self.carry = 0;
                self.slots[usize::from(res & 31)] = 0;
            }
            Op::Move {
                dst,
                res,
                x,
                clear_carry,
            } => {
                let value = self.read(x);
                if clear_carry {
                    self.carry = 0;
                }
                self.slots[usize::from(res & 31)] = value;
                self.slots[usize::from(dst & 31)] = value;
            }
            Op::State { dst, res, mthd } => {
                let value = m.state(mthd);
                self.slots[usize::from(res & 31)] = value;
                self.slots[usize::from(dst & 31)] = value;
            }
            Op::Alu { res, ref alu } => {
                let value = self.alu(alu, ip, next, m)?;
                self.slots[usize::from(res & 31)] = value;
                self.slots[usize::from(alu.dst & 31)] = value;
            }
            Op::Branch { op, when, to, x, y } => {
                if branch_holds(op, self.read(x), self.read(y)) == when {
                    to.take(next);
                }
            }
            Op::Mthd { src } => self.select_method(src),
            Op::MthdConst { mthd, inc } => self.mthd = Some((mthd, inc)),
            Op::Emit { src } => self.emit(src, m)?,
            Op::MthdConstEmit { mthd, inc, src } => {
                self.mthd = Some((mthd, inc));
                self.emit(src, m)?;
            }
            Op::Predicated => *next = self.step(inst, ip, m)?,
        }
        Ok(())
    }

    #[inline(always)]
    fn read(&self, operand: Operand) -> u32 {
        match operand {
            Operand::Slot(slot) => self.slots[usize::from(slot & 31)],
            Operand::Const(value) => value,
        }
    }

    /// The data RAM, allocated on first use: most macros never touch it.
    fn data_ram(&mut self) -> &mut Vec<u32> {
        if self.data_ram.is_empty() {
            self.data_ram = vec![0; DATA_RAM_DWORDS];
        }
        &mut self.data_ram
    }

    /// A predicated instruction, run whole. Kept out of line: the op loop then holds
    /// nothing of the instruction's parts for it from one instruction to the next.
    #[inline(never)]
    fn step(&mut self, inst: &Compiled, ip: usize, m: &mut impl Machine) -> Result<i64, StepError> {
        if inst.loads != 0 {
            for (i, slot) in SLOT_LOAD.into_iter().enumerate() {
                if inst.loads & (1 << i) != 0 {
                    self.slots[usize::from(slot)] =
                        self.params.next(m).ok_or(RunErrorKind::ParamsExhausted)?;
                }
            }
        }
        let enabled = match inst.pred {
            Some(pred) => inst.enabled[usize::from(self.read(pred) != 0)],
            None => inst.enabled[0],
        };
        let mut next = ip as i64 + 1;
        for i in 0..2 {
            if enabled & RUN_ALU[i] == 0 {
                continue;
            }
            let alu = &inst.alu[i];
            let res = if alu.nop {
                self.carry = 0;
                0
            } else {
                self.alu(alu, ip, &mut next, m)?
            };
            self.slots[usize::from(SLOT_ALU_RES[i])] = res;
            self.slots[usize::from(alu.dst & 31)] = res;
        }
        for (bit, out) in RUN_OUT.into_iter().zip(&inst.out) {
            if enabled & bit != 0 {
                self.output(out, m)?;
            }
        }
        Ok(next)
    }

    /// Runs one ALU slot and returns its result.
    #[inline(always)]
    fn alu(
        &mut self,
        alu: &AluSlot,
        ip: usize,
        next: &mut i64,
        m: &mut impl Machine,
    ) -> Result<u32, StepError> {
        let x = self.read(alu.x);
        let y = self.read(alu.y);
        Ok(match alu.op {
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
                    return Err(Box::new(RunErrorKind::Illegal(format!(
                        "unknown extended op ({x:#x}, {y:#x})"
                    ))));
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
                let imm = u32::from(alu.imm);
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
            AluOp::State => m.state(state_method(x, y)),
            AluOp::Loop => {
                if self.loop_count != 0 {
                    return Err(Box::new(RunErrorKind::Illegal(
                        "LOOP inside a running LOOP".into(),
                    )));
                }
                let length = usize::from(alu.imm);
                if length < 2 {
                    return Err(Box::new(RunErrorKind::Illegal(format!(
                        "LOOP of length {length}"
                    ))));
                }
                self.loop_count = x.max(1) - 1;
                self.loop_start = ip;
                self.loop_end = ip + length - 1;
                0
            }
            AluOp::Jal => {
                // A stop the other ALU took stays.
                if *next != STOP {
                    *next = ip as i64 + i64::from(alu.imm & 0x7fff);
                }
                0
            }
            AluOp::Blt | AluOp::Bltu | AluOp::Ble | AluOp::Bleu | AluOp::Beq => {
                if branch_holds(alu.op, x, y) == (alu.imm & 0x8000 != 0) {
                    BranchTo::of(ip, alu.imm).take(next);
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
        })
    }

    #[inline(always)]
    fn output(&mut self, out: &OutSlot, m: &mut impl Machine) -> Result<(), StepError> {
        if let Some(src) = out.mthd {
            self.select_method(src);
        }
        if let Some(src) = out.emit {
            self.emit(src, m)?;
        }
        Ok(())
    }

    /// Selects the method (low 12 bits, as a dword index) and its increment (bits 15:12).
    #[inline(always)]
    fn select_method(&mut self, src: Operand) {
        self.mthd = Some(method_select(self.read(src)));
    }

    /// Writes `src`'s value to the selected method, then steps the method on.
    #[inline(always)]
    fn emit(&mut self, src: Operand, m: &mut impl Machine) -> Result<(), StepError> {
        let data = self.read(src);
        let (mthd, inc) = self.mthd.ok_or(RunErrorKind::EmitWithoutMethod)?;
        self.params.observe(mthd, data);
        m.mthd(mthd, data);
        self.mthd = Some(((mthd + 4 * inc) & 0x3ffc, inc));
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
