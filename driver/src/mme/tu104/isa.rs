//! Turing MME instructions and their encoding.
//!
//! An instruction is 96 bits, stored as three dwords in reverse order: the first stored
//! dword holds bits 95:64. Bit fields (inclusive): end_next 0; pred_mode 4:1; pred 9:5;
//! ALU0 op 14:10, dst 19:15, src0 24:20, src1 29:25; imm0 45:30; ALU1 op 50:46, dst 55:51,
//! src0 60:56, src1 65:61; imm1 81:66; out0 method source 84:82, emit source 88:85; out1
//! method source 91:89, emit source 95:92. [`FIELDS`] is that table, used both ways.

use crate::mme::DecodeError;

/// A register or special source/destination (5 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Src(pub u8);

impl Src {
    /// Reads 0; as a destination, discards the result.
    pub const ZERO: Src = Src(24);
    /// This ALU's immediate, sign-extended.
    pub const IMM: Src = Src(25);
    /// The other ALU's immediate, sign-extended.
    pub const IMMPAIR: Src = Src(26);
    /// `imm0 << 16 | imm1`.
    pub const IMM32: Src = Src(27);
    /// The parameter this instruction loads first.
    pub const LOAD0: Src = Src(28);
    /// The parameter this instruction loads second.
    pub const LOAD1: Src = Src(29);

    /// A general register r0–r23.
    pub fn is_gpr(self) -> bool {
        self.0 < 24
    }
}

impl Default for Src {
    fn default() -> Self {
        Src::ZERO
    }
}

macro_rules! alu_ops {
    ($($name:ident = $v:expr),* $(,)?) => {
        /// ALU operations (5 bits; all 32 codes are defined).
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #[allow(missing_docs)]
        pub enum AluOp { #[default] $($name = $v),* }

        impl AluOp {
            fn from_bits(bits: u32) -> AluOp {
                match bits & 31 { $($v => AluOp::$name,)* _ => unreachable!("5-bit field") }
            }
        }
    };
}

alu_ops! {
    Add = 0, Addc = 1, Sub = 2, Subb = 3, Mul = 4, Mulh = 5, Mulu = 6, Extended = 7,
    Clz = 8, Sll = 9, Srl = 10, Sra = 11, And = 12, Nand = 13, Or = 14, Xor = 15,
    Merge = 16, Slt = 17, Sltu = 18, Sle = 19, Sleu = 20, Seq = 21, State = 22, Loop = 23,
    Jal = 24, Blt = 25, Bltu = 26, Ble = 27, Bleu = 28, Beq = 29, Dread = 30, Dwrite = 31,
}

impl AluOp {
    /// The branch instructions (compare and jump).
    pub fn is_branch(self) -> bool {
        matches!(
            self,
            AluOp::Blt | AluOp::Bltu | AluOp::Ble | AluOp::Bleu | AluOp::Beq
        )
    }
}

/// Where a method output takes its value from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OutSrc {
    /// No output.
    #[default]
    None,
    /// ALU0's result.
    Alu0,
    /// ALU1's result.
    Alu1,
    /// The first loaded parameter.
    Load0,
    /// The second loaded parameter.
    Load1,
    /// imm0, zero-extended.
    Imm0,
    /// imm1, zero-extended.
    Imm1,
    /// imm0 >> 12.
    ImmHigh0,
    /// imm1 >> 12.
    ImmHigh1,
    /// imm0 << 16 | imm1.
    Imm32,
}

impl OutSrc {
    fn code(self) -> u32 {
        match self {
            OutSrc::None => 0,
            OutSrc::Alu0 => 1,
            OutSrc::Alu1 => 2,
            OutSrc::Load0 => 3,
            OutSrc::Load1 => 4,
            OutSrc::Imm0 => 5,
            OutSrc::Imm1 => 6,
            OutSrc::ImmHigh0 => 8,
            OutSrc::ImmHigh1 => 9,
            OutSrc::Imm32 => 10,
        }
    }

    fn from_code(code: u32) -> Option<OutSrc> {
        Some(match code {
            0 => OutSrc::None,
            1 => OutSrc::Alu0,
            2 => OutSrc::Alu1,
            3 => OutSrc::Load0,
            4 => OutSrc::Load1,
            5 => OutSrc::Imm0,
            6 => OutSrc::Imm1,
            8 => OutSrc::ImmHigh0,
            9 => OutSrc::ImmHigh1,
            10 => OutSrc::Imm32,
            _ => return None,
        })
    }
}

/// Predication: for ALU0, ALU1, out0, out1 in turn, `T` runs the part when the predicate
/// register is non-zero, `F` when it is zero, `U` always.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PredMode(pub u8);

impl PredMode {
    /// Every part runs.
    pub const UUUU: PredMode = PredMode(0);
    const NAMES: [&'static str; 16] = [
        "UUUU", "TTTT", "FFFF", "TTUU", "FFUU", "TFUU", "TUUU", "FUUU", "UUTT", "UUTF", "UUTU",
        "UUFT", "UUFF", "UUFU", "UUUT", "UUUF",
    ];

    /// The mode's name, e.g. `TTUU`.
    pub fn name(self) -> &'static str {
        Self::NAMES[usize::from(self.0 & 15)]
    }

    /// Which of the four parts run when the predicate's value is `value`.
    pub fn enabled(self, value: u32) -> [bool; 4] {
        let want = if value != 0 { b'T' } else { b'F' };
        let name = self.name().as_bytes();
        std::array::from_fn(|i| name[i] == b'U' || name[i] == want)
    }
}

/// One ALU slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Alu {
    /// The operation.
    pub op: AluOp,
    /// Destination (ZERO discards).
    pub dst: Src,
    /// Operands.
    pub src: [Src; 2],
}

impl Default for Alu {
    fn default() -> Self {
        Alu {
            op: AluOp::Add,
            dst: Src::ZERO,
            src: [Src::ZERO; 2],
        }
    }
}

impl Alu {
    /// An ALU slot that does nothing.
    pub fn is_nop(&self) -> bool {
        *self == Alu::default()
    }
}

/// One method output: optionally set the method, then optionally emit a value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Out {
    /// Source of the new method (and its increment).
    pub mthd: OutSrc,
    /// Source of the value emitted.
    pub emit: OutSrc,
}

/// One Turing MME instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Inst {
    /// The next instruction is the macro's last.
    pub end_next: bool,
    /// Predication mode.
    pub pred_mode: PredMode,
    /// The predicate register.
    pub pred: Src,
    /// The two ALU slots.
    pub alu: [Alu; 2],
    /// The two immediates.
    pub imm: [u16; 2],
    /// The two method outputs.
    pub out: [Out; 2],
}

/// A bit field of an instruction.
#[derive(Clone, Copy, Debug)]
enum Field {
    EndNext,
    PredMode,
    Pred,
    Op(usize),
    Dst(usize),
    Src(usize, usize),
    Imm(usize),
    Mthd(usize),
    Emit(usize),
}

/// `(lowest bit, highest bit, field)`, inclusive.
const FIELDS: [(u32, u32, Field); 17] = [
    (0, 0, Field::EndNext),
    (1, 4, Field::PredMode),
    (5, 9, Field::Pred),
    (10, 14, Field::Op(0)),
    (15, 19, Field::Dst(0)),
    (20, 24, Field::Src(0, 0)),
    (25, 29, Field::Src(0, 1)),
    (30, 45, Field::Imm(0)),
    (46, 50, Field::Op(1)),
    (51, 55, Field::Dst(1)),
    (56, 60, Field::Src(1, 0)),
    (61, 65, Field::Src(1, 1)),
    (66, 81, Field::Imm(1)),
    (82, 84, Field::Mthd(0)),
    (85, 88, Field::Emit(0)),
    (89, 91, Field::Mthd(1)),
    (92, 95, Field::Emit(1)),
];

impl Inst {
    fn get(&self, field: Field) -> u32 {
        match field {
            Field::EndNext => u32::from(self.end_next),
            Field::PredMode => u32::from(self.pred_mode.0),
            Field::Pred => u32::from(self.pred.0),
            Field::Op(i) => self.alu[i].op as u32,
            Field::Dst(i) => u32::from(self.alu[i].dst.0),
            Field::Src(i, j) => u32::from(self.alu[i].src[j].0),
            Field::Imm(i) => u32::from(self.imm[i]),
            Field::Mthd(i) => self.out[i].mthd.code(),
            Field::Emit(i) => self.out[i].emit.code(),
        }
    }

    fn set(&mut self, field: Field, v: u32) -> Result<(), String> {
        let reg = |v: u32| {
            if v < 30 {
                Ok(Src(v as u8))
            } else {
                Err(format!("register code {v} does not exist"))
            }
        };
        match field {
            Field::EndNext => self.end_next = v != 0,
            Field::PredMode => self.pred_mode = PredMode(v as u8),
            Field::Pred => self.pred = reg(v)?,
            Field::Op(i) => self.alu[i].op = AluOp::from_bits(v),
            Field::Dst(i) => self.alu[i].dst = reg(v)?,
            Field::Src(i, j) => self.alu[i].src[j] = reg(v)?,
            Field::Imm(i) => self.imm[i] = v as u16,
            Field::Mthd(i) => {
                self.out[i].mthd = OutSrc::from_code(v)
                    .filter(|s| (s.code()) < 8)
                    .ok_or_else(|| format!("method source code {v} does not exist"))?
            }
            Field::Emit(i) => {
                self.out[i].emit = OutSrc::from_code(v)
                    .ok_or_else(|| format!("emit source code {v} does not exist"))?
            }
        }
        Ok(())
    }

    /// The three words of this instruction, in stored order.
    pub fn to_words(&self) -> [u32; 3] {
        let mut bits: u128 = 0;
        for (lo, hi, field) in FIELDS {
            let width = hi - lo + 1;
            bits |= u128::from(self.get(field) & ((1u64 << width) - 1) as u32) << lo;
        }
        // The three words are stored in reverse order: bits 95:64 first.
        [(bits >> 64) as u32, (bits >> 32) as u32, bits as u32]
    }

    /// The instruction the three stored words hold.
    pub fn from_words(words: [u32; 3]) -> Result<Inst, String> {
        let bits =
            (u128::from(words[0]) << 64) | (u128::from(words[1]) << 32) | u128::from(words[2]);
        let mut inst = Inst::default();
        for (lo, hi, field) in FIELDS {
            let width = hi - lo + 1;
            inst.set(field, ((bits >> lo) & ((1u128 << width) - 1)) as u32)?;
        }
        Ok(inst)
    }

    /// An instruction that does nothing.
    pub fn nop() -> Inst {
        Inst::default()
    }
}

/// Encodes instructions to words.
pub fn encode(insts: &[Inst]) -> Vec<u32> {
    insts.iter().flat_map(Inst::to_words).collect()
}

/// Decodes words to instructions; a bad word count or field is an error, never a panic.
pub fn decode(words: &[u32]) -> Result<Vec<Inst>, DecodeError> {
    if words.len() % 3 != 0 {
        return Err(DecodeError {
            index: words.len() / 3,
            words: format!("{:08x?}", &words[words.len() / 3 * 3..]),
            problem: format!(
                "{} words is not a whole number of 3-word instructions",
                words.len()
            ),
        });
    }
    words
        .chunks_exact(3)
        .enumerate()
        .map(|(index, w)| {
            Inst::from_words([w[0], w[1], w[2]]).map_err(|problem| DecodeError {
                index,
                words: format!("{:08x} {:08x} {:08x}", w[0], w[1], w[2]),
                problem,
            })
        })
        .collect()
}
