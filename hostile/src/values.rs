//! Where a hostile record's field values come from: every field at 0, at 1 or at its
//! maximum, one field at a time at an extreme with the others sensible, pseudo-random
//! values, or the bytes of a fuzzer's input.

/// A scalar field type of the trace schema.
pub trait Scalar: Copy {
    /// Its zero.
    const ZERO: Self;
    /// Its one.
    const ONE: Self;
    /// Its largest value.
    const MAX: Self;
    /// `x` truncated to the type.
    fn from_bits(x: u64) -> Self;
}

macro_rules! scalar {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const ZERO: Self = 0 as $t;
            const ONE: Self = 1 as $t;
            const MAX: Self = <$t>::MAX;
            fn from_bits(x: u64) -> Self {
                x as $t
            }
        }
    )*};
}
scalar!(u8, u16, u32, u64, i8, i16, i32, i64);

impl Scalar for bool {
    const ZERO: Self = false;
    const ONE: Self = true;
    const MAX: Self = true;
    fn from_bits(x: u64) -> Self {
        x & 1 == 1
    }
}

impl Scalar for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const MAX: Self = f32::MAX;
    fn from_bits(x: u64) -> Self {
        f32::from_bits(x as u32)
    }
}

impl Scalar for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const MAX: Self = f64::MAX;
    fn from_bits(x: u64) -> Self {
        f64::from_bits(x)
    }
}

/// One of the three extremes a field is set to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extreme {
    /// 0, an empty vector or string, an absent table.
    Zero,
    /// 1, one element.
    One,
    /// The type's maximum; [`MAX_LEN`] elements.
    Max,
}

/// How values are chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every field at this extreme.
    All(Extreme),
    /// Field `field` (a [`crate::generated::FIELDS`] index) at the extreme, the others
    /// sensible: handles the base trace created, small counts and offsets.
    Field(u16, Extreme),
    /// Pseudo-random: extremes, handles, small and large values, from this seed.
    Random(u64),
    /// Taken from a fuzzer's input bytes (zeros once they run out).
    Bytes(Vec<u8>),
}

/// The most elements a vector gets (at [`Extreme::Max`]).
pub const MAX_LEN: usize = 1024;
/// The most tables an outermost vector of tables gets.
pub const MAX_TABLES: usize = 64;
/// The longest string.
const MAX_STRING: usize = 4096;

/// A source of field values.
pub struct Values {
    mode: Mode,
    rng: u64,
    pos: usize,
    handles: Vec<u64>,
    commands: Vec<(String, usize)>,
    next_command: usize,
    /// Fields named `command_buffer`: sensible values there are mostly the base's
    /// command buffer, so that what the record asks for runs at its next submit.
    command_buffer_fields: Vec<u16>,
    command_buffer: u64,
}

impl Values {
    /// Values chosen by `mode`; `handles` are what the base trace created, `commands`
    /// the generic commands (name, parameter count) to cycle through.
    pub fn new(mode: Mode, handles: &[u64], commands: &[(String, usize)]) -> Self {
        let seed = match &mode {
            Mode::Random(seed) => *seed,
            Mode::Field(f, _) => u64::from(*f) + 1,
            _ => 1,
        };
        Values {
            mode,
            rng: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
            pos: 0,
            handles: handles.to_vec(),
            commands: commands.to_vec(),
            next_command: 0,
            command_buffer_fields: crate::generated::FIELDS
                .iter()
                .enumerate()
                .filter(|(_, (_, f))| *f == "command_buffer")
                .map(|(i, _)| i as u16)
                .collect(),
            command_buffer: 0,
        }
    }

    /// The command buffer sensible `command_buffer` fields name.
    pub fn prefer_command_buffer(&mut self, command_buffer: u64) {
        self.command_buffer = command_buffer;
    }

    /// A command buffer handle for a command's first parameter: mostly the preferred.
    pub fn command_buffer(&mut self) -> u64 {
        if self.command_buffer != 0 && self.random() % 8 != 0 {
            self.command_buffer
        } else {
            self.pick(self.wild())
        }
    }

    /// Points the one extreme field at `field` (for [`Mode::Field`]).
    pub fn set_field(&mut self, field: u16) {
        if let Mode::Field(f, _) = &mut self.mode {
            *f = field;
        }
    }

    /// Whether a fuzzer's input bytes are used up.
    pub fn exhausted(&self) -> bool {
        matches!(&self.mode, Mode::Bytes(b) if self.pos >= b.len())
    }

    fn random(&mut self) -> u64 {
        if let Mode::Bytes(bytes) = &self.mode {
            let mut x = [0u8; 8];
            let take = bytes.len().saturating_sub(self.pos).min(8);
            x[..take].copy_from_slice(&bytes[self.pos..self.pos + take]);
            // One byte a value where it can: inputs stay short.
            self.pos += take.min(1);
            return u64::from_le_bytes(x).wrapping_mul(0x2545_f491_4f6c_dd1d) ^ x[0] as u64;
        }
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    /// The extreme `field` takes in this mode, if any.
    fn extreme(&self, field: u16) -> Option<Extreme> {
        match self.mode {
            Mode::All(e) => Some(e),
            Mode::Field(f, e) if f == field => Some(e),
            _ => None,
        }
    }

    /// A sensible or wild value, as the mode's randomness picks.
    fn pick(&mut self, wild: bool) -> u64 {
        let r = self.random();
        let handle = (!self.handles.is_empty())
            .then(|| self.handles[(r >> 8) as usize % self.handles.len()]);
        match (r & 7, wild) {
            (0..=2, _) => handle.unwrap_or(0),
            (3 | 4, _) => (r >> 8) % 16,
            (5, _) => (r >> 8) % 4096,
            (_, false) => 1,
            (6, true) => [0, 1, u64::MAX, u64::from(u32::MAX), 0xdead_beef][(r >> 8) as usize % 5],
            _ => self.random(),
        }
    }

    fn wild(&self) -> bool {
        matches!(self.mode, Mode::Random(_) | Mode::Bytes(_))
    }

    /// A scalar field's value.
    pub fn scalar<T: Scalar>(&mut self, field: u16) -> T {
        match self.extreme(field) {
            Some(Extreme::Zero) => T::ZERO,
            Some(Extreme::One) => T::ONE,
            Some(Extreme::Max) => T::MAX,
            None if self.command_buffer_fields.contains(&field) => {
                let cb = self.command_buffer();
                T::from_bits(cb)
            }
            None => {
                let wild = self.wild();
                T::from_bits(self.pick(wild))
            }
        }
    }

    /// A vector field's length.
    pub fn len(&mut self, field: u16) -> usize {
        match self.extreme(field) {
            Some(Extreme::Zero) => 0,
            Some(Extreme::One) => 1,
            Some(Extreme::Max) => MAX_LEN,
            None if self.wild() => match self.random() % 16 {
                0 => 0,
                1 => MAX_LEN,
                r => (r % 5) as usize,
            },
            None => 1 + (self.random() % 3) as usize,
        }
    }

    /// A vector of tables' length at nesting `depth`: tables nest, so only the
    /// outermost get many.
    pub fn table_len(&mut self, field: u16, depth: u32) -> usize {
        let n = self.len(field);
        if depth == 0 {
            n.min(MAX_TABLES)
        } else {
            n.min(2)
        }
    }

    /// Whether an optional table or struct field is present.
    pub fn present(&mut self, field: u16) -> bool {
        match self.extreme(field) {
            Some(Extreme::Zero) => false,
            Some(_) => true,
            None => !self.wild() || self.random() % 4 != 0,
        }
    }

    /// A string field's value (always UTF-8: the schema says so and the verifier checks).
    pub fn string(&mut self, field: u16) -> String {
        match self.extreme(field) {
            Some(Extreme::Zero) => String::new(),
            Some(Extreme::One) => "a".into(),
            Some(Extreme::Max) => "\u{10ffff}".repeat(MAX_STRING / 4),
            None => match self.random() % 6 {
                0 => String::new(),
                1 => "main".into(),
                2 => "VK_KHR_multiview".into(),
                3 => "vkCmdDraw".into(),
                4 if self.wild() => "x".repeat(MAX_STRING),
                _ => {
                    let n = self.random() % 24;
                    (0..n)
                        .map(|_| char::from(b' ' + (self.random() % 95) as u8))
                        .collect()
                }
            },
        }
    }

    /// The next generic command to record (name, parameter count), cycling through the
    /// list; fuzzed inputs pick one.
    pub fn command(&mut self) -> (String, usize) {
        if self.commands.is_empty() {
            return ("vkUnknownCommand".into(), 0);
        }
        let i = if self.wild() {
            self.random() as usize % self.commands.len()
        } else {
            self.next_command % self.commands.len()
        };
        self.next_command += 1;
        let (name, arity) = self.commands[i].clone();
        // Now and then the wrong number of parameters.
        let arity = if self.wild() && self.random() % 8 == 0 {
            (self.random() % 12) as usize
        } else {
            arity
        };
        (name, arity)
    }
}
