//! Pre-Turing MME instructions and their encoding.
//!
//! Common fields: op 3:0; assign op 6:4 (for BRANCH: bit 4 not-zero, bit 5 no-delay);
//! end_next 7; dst 10:8; src0 13:11. Then by op: ALU_REG — src1 16:14, ALU op 21:17;
//! ADD_IMM, STATE, BRANCH — an 18-bit signed immediate 31:14; MERGE and the two BFE ops
//! — src1 16:14, src_bit 21:17, size 26:22, dst_bit 31:27. Bits an op does not use must
//! be zero; decoding rejects words that set them, so decode(encode(i)) == i both ways.

use crate::mme::DecodeError;

/// The instruction's operation (4 bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Op {
    /// `src0 (alu op) src1`
    #[default]
    AluReg,
    /// `src0 + imm`
    AddImm,
    /// `(src0 & !(mask(size) << dst_bit)) | (((src1 >> src_bit) & mask(size)) << dst_bit)`
    Merge,
    /// `((src1 >> src0) & mask(size)) << dst_bit`
    BfeLslImm,
    /// `((src1 >> src_bit) & mask(size)) << src0`
    BfeLslReg,
    /// `state[(src0 + imm) * 4]`
    State,
    /// Branch on `src0` being zero or not, to `ip + imm`.
    Branch,
}

impl Op {
    fn code(self) -> u32 {
        match self {
            Op::AluReg => 0,
            Op::AddImm => 1,
            Op::Merge => 2,
            Op::BfeLslImm => 3,
            Op::BfeLslReg => 4,
            Op::State => 5,
            Op::Branch => 7,
        }
    }
}

/// ALU_REG operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum AluOp {
    #[default]
    Add,
    Addc,
    Sub,
    Subb,
    Xor,
    Or,
    And,
    AndNot,
    Nand,
}

impl AluOp {
    fn code(self) -> u32 {
        match self {
            AluOp::Add => 0,
            AluOp::Addc => 1,
            AluOp::Sub => 2,
            AluOp::Subb => 3,
            AluOp::Xor => 8,
            AluOp::Or => 9,
            AluOp::And => 10,
            AluOp::AndNot => 11,
            AluOp::Nand => 12,
        }
    }

    fn from_code(code: u32) -> Option<AluOp> {
        Some(match code {
            0 => AluOp::Add,
            1 => AluOp::Addc,
            2 => AluOp::Sub,
            3 => AluOp::Subb,
            8 => AluOp::Xor,
            9 => AluOp::Or,
            10 => AluOp::And,
            11 => AluOp::AndNot,
            12 => AluOp::Nand,
            _ => return None,
        })
    }
}

/// What an instruction does with its result (and the parameter stream).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Assign {
    /// `dst = next parameter`
    Load,
    /// `dst = result`
    #[default]
    Move,
    /// `dst = result; method = result`
    MoveSetMaddr,
    /// `dst = next parameter; emit result`
    LoadEmit,
    /// `dst = result; emit result`
    MoveEmit,
    /// `dst = next parameter; method = result`
    LoadSetMaddr,
    /// `dst = result; method = result; emit next parameter`
    MoveSetMaddrLoadEmit,
    /// `dst = result; method = result; emit (result >> 12) & 0x3f`
    MoveSetMaddrLoadEmitHigh,
}

impl Assign {
    const ALL: [Assign; 8] = [
        Assign::Load,
        Assign::Move,
        Assign::MoveSetMaddr,
        Assign::LoadEmit,
        Assign::MoveEmit,
        Assign::LoadSetMaddr,
        Assign::MoveSetMaddrLoadEmit,
        Assign::MoveSetMaddrLoadEmitHigh,
    ];
}

/// One pre-Turing MME instruction. Fields an op does not use are zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Inst {
    /// The operation.
    pub op: Op,
    /// The assign op (not for BRANCH).
    pub assign: Assign,
    /// BRANCH: taken when `src0 != 0` (else when `src0 == 0`).
    pub not_zero: bool,
    /// BRANCH: jump at once, without running the next instruction first.
    pub no_delay: bool,
    /// The next instruction is the macro's last.
    pub end_next: bool,
    /// Destination register (r0 discards).
    pub dst: u8,
    /// First source register.
    pub src0: u8,
    /// Second source register.
    pub src1: u8,
    /// ALU_REG's operation.
    pub alu_op: AluOp,
    /// The 18-bit signed immediate of ADD_IMM, STATE and BRANCH.
    pub imm: i32,
    /// MERGE/BFE: the field's source bit.
    pub src_bit: u8,
    /// MERGE/BFE: the field's width.
    pub size: u8,
    /// MERGE/BFE: the field's destination bit.
    pub dst_bit: u8,
}

fn bits(word: u32, lo: u32, hi: u32) -> u32 {
    (word >> lo) & ((1u64 << (hi - lo + 1)) - 1) as u32
}

fn place(v: u32, lo: u32, hi: u32) -> u32 {
    (v & ((1u64 << (hi - lo + 1)) - 1) as u32) << lo
}

fn sext18(v: u32) -> i32 {
    ((v << 14) as i32) >> 14
}

impl Inst {
    /// An instruction that does nothing.
    pub fn nop() -> Inst {
        // MME_FERMI_INST_DEFAULTS: ADD ZERO, ZERO into ZERO.
        Inst {
            op: Op::AluReg,
            alu_op: AluOp::Add,
            ..Inst::default()
        }
    }

    /// The instruction's word.
    pub fn to_word(&self) -> u32 {
        let mut w = place(self.op.code(), 0, 3) | place(u32::from(self.end_next), 7, 7);
        w |= place(u32::from(self.dst), 8, 10) | place(u32::from(self.src0), 11, 13);
        if self.op == Op::Branch {
            w |= place(u32::from(self.not_zero), 4, 4) | place(u32::from(self.no_delay), 5, 5);
        } else {
            w |= place(self.assign as u32, 4, 6);
        }
        match self.op {
            Op::AluReg => {
                w | place(u32::from(self.src1), 14, 16) | place(self.alu_op.code(), 17, 21)
            }
            Op::AddImm | Op::State | Op::Branch => w | place(self.imm as u32, 14, 31),
            Op::Merge | Op::BfeLslImm | Op::BfeLslReg => {
                w | place(u32::from(self.src1), 14, 16)
                    | place(u32::from(self.src_bit), 17, 21)
                    | place(u32::from(self.size), 22, 26)
                    | place(u32::from(self.dst_bit), 27, 31)
            }
        }
    }

    /// The instruction a word holds.
    pub fn from_word(w: u32) -> Result<Inst, String> {
        let op = match bits(w, 0, 3) {
            0 => Op::AluReg,
            1 => Op::AddImm,
            2 => Op::Merge,
            3 => Op::BfeLslImm,
            4 => Op::BfeLslReg,
            5 => Op::State,
            7 => Op::Branch,
            6 => return Err("op 6 (UNK6) has no known meaning".into()),
            other => return Err(format!("op {other} does not exist")),
        };
        let mut inst = Inst {
            op,
            end_next: bits(w, 7, 7) != 0,
            dst: bits(w, 8, 10) as u8,
            src0: bits(w, 11, 13) as u8,
            ..Inst::default()
        };
        if op == Op::Branch {
            inst.not_zero = bits(w, 4, 4) != 0;
            inst.no_delay = bits(w, 5, 5) != 0;
            if bits(w, 6, 6) != 0 {
                return Err("BRANCH sets reserved bit 6".into());
            }
        } else {
            inst.assign = Assign::ALL[bits(w, 4, 6) as usize];
        }
        match op {
            Op::AluReg => {
                inst.src1 = bits(w, 14, 16) as u8;
                let code = bits(w, 17, 21);
                inst.alu_op =
                    AluOp::from_code(code).ok_or_else(|| format!("ALU op {code} is reserved"))?;
                if bits(w, 22, 31) != 0 {
                    return Err("ALU_REG sets reserved bits 31:22".into());
                }
            }
            Op::AddImm | Op::State | Op::Branch => inst.imm = sext18(bits(w, 14, 31)),
            Op::Merge | Op::BfeLslImm | Op::BfeLslReg => {
                inst.src1 = bits(w, 14, 16) as u8;
                inst.src_bit = bits(w, 17, 21) as u8;
                inst.size = bits(w, 22, 26) as u8;
                inst.dst_bit = bits(w, 27, 31) as u8;
            }
        }
        Ok(inst)
    }
}

/// Encodes instructions to words.
pub fn encode(insts: &[Inst]) -> Vec<u32> {
    insts.iter().map(Inst::to_word).collect()
}

/// Decodes words to instructions; a bad field is an error, never a panic.
pub fn decode(words: &[u32]) -> Result<Vec<Inst>, DecodeError> {
    words
        .iter()
        .enumerate()
        .map(|(index, w)| {
            Inst::from_word(*w).map_err(|problem| DecodeError {
                index,
                words: format!("{w:08x}"),
                problem,
            })
        })
        .collect()
}
