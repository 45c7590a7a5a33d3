//! Decoding a GFXReconstruct call's parameters into [`Value`]s, driven by the generated
//! tables: every length is checked against the bytes left before anything is allocated,
//! and the call must use its block's bytes exactly.

use super::tables::{structure, CommandDesc, Kind, Ret, Rule, Target};

/// Pointer attribute bits (GFXReconstruct's `PointerAttributes`).
mod attr {
    pub const IS_NULL: u32 = 0x1;
    pub const HAS_ADDRESS: u32 = 0x40;
    pub const HAS_DATA: u32 = 0x80;
    pub const IS_ARRAY_2D: u32 = 0x100;
}

/// The deepest nesting of structures followed (a `pNext` chain included).
const MAX_DEPTH: usize = 64;

/// A decoded parameter or member.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A null pointer.
    Null,
    /// A scalar, enum, flags, handle id or bare address.
    Word(u64),
    /// Little-endian bytes: a fixed or pointed-to array of scalars or handles, a clear
    /// colour, a string (without terminator), `void` data.
    Bytes(Vec<u8>),
    /// An embedded structure.
    Struct(Box<StructValue>),
    /// A fixed array of structures.
    Structs(Vec<StructValue>),
    /// Strings.
    Strings(Vec<Vec<u8>>),
    /// Descriptor update template data as GFXReconstruct groups it: the image
    /// descriptors, then the buffer descriptors, then the texel buffer views, each in
    /// the order of the template's entries, in C layout (`VkDescriptorImageInfo`,
    /// `VkDescriptorBufferInfo`, `VkBufferView`).
    Template {
        /// `VkDescriptorImageInfo`s, 24 bytes each.
        images: Vec<u8>,
        /// `VkDescriptorBufferInfo`s, 24 bytes each.
        buffers: Vec<u8>,
        /// `VkBufferView`s, 8 bytes each.
        texel_views: Vec<u8>,
    },
    /// A pointer: its address (0 where the file has none) and what it points to (`None`
    /// where the file left the data out, as for an output the call did not fill).
    Pointer {
        /// The address the program passed.
        address: u64,
        /// What it points to.
        data: Option<Box<Value>>,
    },
}

/// A decoded structure: its type (index into the generated table) and its members in
/// declaration order.
#[derive(Clone, Debug, PartialEq)]
pub struct StructValue {
    /// Index into [`super::generated::STRUCTS`].
    pub ty: u16,
    /// Its members.
    pub fields: Vec<Value>,
}

/// A decoded call: its parameters in order and its return value.
#[derive(Clone, Debug)]
pub struct DecodedCall {
    /// The command.
    pub command: &'static CommandDesc,
    /// Its parameters.
    pub params: Vec<Value>,
    /// What it returned (0 for void).
    pub result: u64,
}

/// What did not decode, and where in the call's parameter bytes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{what} (parameter byte {at})")]
pub struct ParamError {
    /// What was wrong, naming the parameter or member.
    pub what: String,
    /// Offset into the call's parameter bytes.
    pub at: usize,
    /// The call holds a type this reader does not decode (rather than bytes that do
    /// not add up): the call can be passed over, the file read on.
    pub unsupported: bool,
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The parameter or member being read, for errors.
    path: Vec<&'static str>,
}

impl<'a> Cursor<'a> {
    fn fail<T>(&self, what: impl std::fmt::Display) -> Result<T, ParamError> {
        Err(ParamError {
            what: format!("{}: {what}", self.path.join(".")),
            at: self.at,
            unsupported: false,
        })
    }

    /// A failure on a type this reader does not decode.
    fn unsupported<T>(&self, what: impl std::fmt::Display) -> Result<T, ParamError> {
        self.fail(what).map_err(|e| ParamError {
            unsupported: true,
            ..e
        })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], ParamError> {
        match self.bytes.get(self.at..).and_then(|rest| rest.get(..n)) {
            Some(b) => {
                self.at += n;
                Ok(b)
            }
            None => self.fail(format!(
                "needs {n} bytes, {} left",
                self.bytes.len().saturating_sub(self.at)
            )),
        }
    }

    fn word(&mut self, size: usize) -> Result<u64, ParamError> {
        let b = self.take(size)?;
        let mut v = [0u8; 8];
        v[..size].copy_from_slice(b);
        Ok(u64::from_le_bytes(v))
    }

    fn u32(&mut self) -> Result<u32, ParamError> {
        Ok(self.word(4)? as u32)
    }

    /// A pointer's attribute bits and address (0 where the file has none); `None` for
    /// a null pointer.
    fn preamble(&mut self) -> Result<Option<(u32, u64)>, ParamError> {
        let attrib = self.u32()?;
        if attrib & attr::IS_NULL != 0 {
            return Ok(None);
        }
        let address = if attrib & attr::HAS_ADDRESS != 0 {
            self.word(8)?
        } else {
            0
        };
        Ok(Some((attrib, address)))
    }

    fn left(&self) -> usize {
        self.bytes.len().saturating_sub(self.at)
    }

    /// A length read from the file, checked against the bytes left at `min_each`
    /// bytes an element.
    fn length(&mut self, min_each: usize) -> Result<usize, ParamError> {
        let len = self.word(8)?;
        let need = len.saturating_mul(min_each.max(1) as u64);
        if need > self.left() as u64 {
            return self.fail(format!(
                "length {len} needs at least {need} bytes, {} left",
                self.left()
            ));
        }
        Ok(len as usize)
    }
}

/// Decodes the parameters of `command` from `bytes` (the call block after its header).
pub fn decode_call(command: &'static CommandDesc, bytes: &[u8]) -> Result<DecodedCall, ParamError> {
    let mut c = Cursor {
        bytes,
        at: 0,
        path: vec![command.name],
    };
    let mut params = Vec::with_capacity(command.params.len());
    for p in command.params {
        c.path.push(p.name);
        if p.rule == Rule::TemplateData {
            params.push(template_data(&mut c)?);
            c.path.pop();
            continue;
        }
        params.push(value(&mut c, p.kind, 0)?);
        c.path.pop();
    }
    let result = match command.ret {
        Ret::Void => 0,
        Ret::Word32 => u64::from(c.u32()?),
        Ret::Word64 => c.word(8)?,
    };
    if c.left() != 0 {
        return c.fail(format!(
            "{} bytes left after the call's parameters",
            c.left()
        ));
    }
    Ok(DecodedCall {
        command,
        params,
        result,
    })
}

/// Descriptor update template data: a structure pointer's attributes and address, the
/// three counts, then the descriptors grouped by kind.
fn template_data(c: &mut Cursor<'_>) -> Result<Value, ParamError> {
    if c.preamble()?.is_none() {
        return Ok(Value::Null);
    }
    let (images, buffers, texels) = (c.length(20)?, c.length(24)?, c.length(8)?);
    let mut image_bytes = Vec::with_capacity(images * 24);
    for _ in 0..images {
        image_bytes.extend_from_slice(c.take(20)?);
        image_bytes.extend_from_slice(&[0; 4]);
    }
    let buffer_bytes = c.take(buffers * 24)?.to_vec();
    let texel_bytes = c.take(texels * 8)?.to_vec();
    if c.left() > 4 {
        // Acceleration structures: their count and descriptor type, then handles.
        let count = c.length(8)?;
        c.u32()?;
        c.take(count * 8)?;
    }
    Ok(Value::Template {
        images: image_bytes,
        buffers: buffer_bytes,
        texel_views: texel_bytes,
    })
}

fn value(c: &mut Cursor<'_>, kind: Kind, depth: usize) -> Result<Value, ParamError> {
    if depth > MAX_DEPTH {
        return c.fail("structures nested too deep");
    }
    Ok(match kind {
        Kind::Value { size, .. } => Value::Word(c.word(usize::from(size))?),
        Kind::Address | Kind::Word => Value::Word(c.word(8)?),
        Kind::Embedded(ty) => Value::Struct(Box::new(structure_value(c, ty, depth + 1)?)),
        Kind::ClearColor => match pointer(c, Target::Value(4), true, depth)? {
            Value::Pointer { data: Some(d), .. } => *d,
            _ => Value::Bytes(vec![0; 16]),
        },
        Kind::FixedString(n) => {
            let v = pointer(c, Target::String, false, depth)?;
            fixed_bytes(c, v, n as usize)?
        }
        Kind::FixedArray { size, count } => {
            let v = pointer(c, Target::Value(size), true, depth)?;
            fixed_bytes(c, v, count as usize * usize::from(size))?
        }
        Kind::FixedStructs { ty, count } => match pointer(c, Target::Struct(ty), true, depth)? {
            Value::Pointer { data: Some(d), .. } => match *d {
                Value::Structs(s) if s.len() <= count as usize => Value::Structs(s),
                Value::Structs(s) => {
                    return c.fail(format!("{} structures for {count} places", s.len()))
                }
                _ => Value::Structs(Vec::new()),
            },
            _ => Value::Structs(Vec::new()),
        },
        Kind::PNext => {
            let Some((attrib, address)) = c.preamble()? else {
                return Ok(Value::Null);
            };
            if attrib & attr::HAS_DATA == 0 {
                return Ok(Value::Pointer {
                    address,
                    data: None,
                });
            }
            let s_type = match c.bytes.get(c.at..c.at + 4) {
                Some(b) => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                None => return c.fail("a pNext structure cut short"),
            };
            let Some(ty) = super::generated::struct_of_s_type(s_type) else {
                return c.unsupported(format!("a pNext structure of unknown sType {s_type}"));
            };
            let s = structure_value(c, ty, depth + 1)?;
            Value::Pointer {
                address,
                data: Some(Box::new(Value::Struct(Box::new(s)))),
            }
        }
        Kind::Pointer { to, array } => pointer(c, to, array, depth)?,
        Kind::Strings => {
            let Some((attrib, address)) = c.preamble()? else {
                return Ok(Value::Null);
            };
            let len = c.length(4)?;
            if attrib & attr::HAS_DATA == 0 {
                return Ok(Value::Pointer {
                    address,
                    data: None,
                });
            }
            let mut all = Vec::with_capacity(len);
            for _ in 0..len {
                match pointer(c, Target::String, false, depth)? {
                    Value::Pointer { data: Some(d), .. } => match *d {
                        Value::Bytes(b) => all.push(b),
                        _ => all.push(Vec::new()),
                    },
                    _ => all.push(Vec::new()),
                }
            }
            Value::Pointer {
                address,
                data: Some(Box::new(Value::Strings(all))),
            }
        }
        Kind::PointerToAddress => pointer(c, Target::Value(8), false, depth)?,
        Kind::Unsupported => return c.unsupported("a type this reader does not decode"),
    })
}

/// A fixed array's bytes, `n` long, from what its array encoding held.
fn fixed_bytes(c: &Cursor<'_>, v: Value, n: usize) -> Result<Value, ParamError> {
    let mut bytes = match v {
        Value::Pointer { data: Some(d), .. } => match *d {
            Value::Bytes(b) => b,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    if bytes.len() > n {
        return c.fail(format!("{} bytes for a fixed array of {n}", bytes.len()));
    }
    bytes.resize(n, 0);
    Ok(Value::Bytes(bytes))
}

fn pointer(c: &mut Cursor<'_>, to: Target, array: bool, depth: usize) -> Result<Value, ParamError> {
    let Some((attrib, address)) = c.preamble()? else {
        return Ok(Value::Null);
    };
    if attrib & attr::IS_ARRAY_2D != 0 {
        return c.unsupported("two-dimensional arrays are not decoded");
    }
    let has_data = attrib & attr::HAS_DATA != 0;
    let data = match to {
        Target::Value(size) => {
            let size = usize::from(size);
            let len = if array {
                c.length(if has_data { size } else { 0 })?
            } else {
                1
            };
            if !has_data {
                None
            } else {
                Some(Value::Bytes(c.take(len * size)?.to_vec()))
            }
        }
        Target::Handle => {
            let len = if array {
                c.length(if has_data { 8 } else { 0 })?
            } else {
                1
            };
            if !has_data {
                None
            } else {
                Some(Value::Bytes(c.take(len * 8)?.to_vec()))
            }
        }
        Target::String | Target::Bytes => {
            let len = c.length(usize::from(has_data))?;
            if !has_data {
                None
            } else {
                Some(Value::Bytes(c.take(len)?.to_vec()))
            }
        }
        Target::Struct(ty) => {
            if array {
                let len = c.length(usize::from(has_data))?;
                if !has_data {
                    None
                } else {
                    // Grown as elements decode: memory follows the bytes, not the length field.
                    let mut all = Vec::new();
                    for _ in 0..len {
                        all.push(structure_value(c, ty, depth + 1)?);
                    }
                    Some(Value::Structs(all))
                }
            } else if !has_data {
                None
            } else {
                Some(Value::Struct(Box::new(structure_value(c, ty, depth + 1)?)))
            }
        }
        Target::ClearColor => {
            let len = if array {
                c.length(usize::from(has_data) * 4)?
            } else {
                1
            };
            if !has_data {
                None
            } else {
                let mut all = Vec::with_capacity(len * 16);
                for _ in 0..len {
                    match value(c, Kind::ClearColor, depth)? {
                        Value::Bytes(b) if b.len() <= 16 => {
                            all.extend_from_slice(&b);
                            all.resize(all.len() + 16 - b.len(), 0);
                        }
                        _ => return c.fail("a clear value of more than 16 bytes"),
                    }
                }
                Some(Value::Bytes(all))
            }
        }
        Target::Unsupported => {
            return c.unsupported("a pointer to a type this reader does not decode")
        }
    };
    Ok(Value::Pointer {
        address,
        data: data.map(Box::new),
    })
}

fn structure_value(c: &mut Cursor<'_>, ty: u16, depth: usize) -> Result<StructValue, ParamError> {
    let desc = structure(ty);
    if !desc.supported {
        return c.unsupported(format!("{} is not decoded", desc.name));
    }
    if depth > MAX_DEPTH {
        return c.fail("structures nested too deep");
    }
    let mut fields = Vec::with_capacity(desc.members.len());
    for m in desc.members {
        c.path.push(m.name);
        fields.push(value(c, m.kind, depth)?);
        c.path.pop();
    }
    Ok(StructValue { ty, fields })
}

impl Value {
    /// The word this holds (a pointer: its address; null: 0).
    pub fn word(&self) -> u64 {
        match self {
            Value::Word(w) => *w,
            Value::Pointer { address, .. } => *address,
            _ => 0,
        }
    }

    /// What a pointer points to.
    pub fn pointee(&self) -> Option<&Value> {
        match self {
            Value::Pointer { data: Some(d), .. } => Some(d),
            _ => None,
        }
    }

    /// The structure this is or points to.
    pub fn structure(&self) -> Option<&StructValue> {
        match self {
            Value::Struct(s) => Some(s),
            Value::Pointer { data: Some(d), .. } => d.structure(),
            Value::Structs(s) => s.first(),
            _ => None,
        }
    }

    /// The structures this points to or holds.
    pub fn structures(&self) -> &[StructValue] {
        match self {
            Value::Structs(s) => s,
            Value::Struct(s) => std::slice::from_ref(s.as_ref()),
            Value::Pointer { data: Some(d), .. } => d.structures(),
            _ => &[],
        }
    }

    /// The bytes this holds or points to.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Value::Bytes(b) => b,
            Value::Pointer { data: Some(d), .. } => d.bytes(),
            _ => &[],
        }
    }

    /// The 32-bit words this holds or points to.
    pub fn words32(&self) -> Vec<u32> {
        self.bytes()
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
            .collect()
    }

    /// The 64-bit words (handles) this holds or points to.
    pub fn words64(&self) -> Vec<u64> {
        self.bytes()
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]))
            .collect()
    }

    /// The strings this points to.
    pub fn strings(&self) -> Vec<String> {
        match self {
            Value::Strings(s) => s
                .iter()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .collect(),
            Value::Pointer { data: Some(d), .. } => d.strings(),
            _ => Vec::new(),
        }
    }

    /// The string this points to (empty when null).
    pub fn string(&self) -> String {
        String::from_utf8_lossy(self.bytes()).into_owned()
    }

    /// Whether this is a null pointer.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
}

impl StructValue {
    /// The member `name` (a null value when the structure has none of that name).
    pub fn get(&self, name: &str) -> &Value {
        static NULL: Value = Value::Null;
        structure(self.ty)
            .member(name)
            .and_then(|i| self.fields.get(i))
            .unwrap_or(&NULL)
    }

    /// The member `name` as a word.
    pub fn word(&self, name: &str) -> u64 {
        self.get(name).word()
    }

    /// The member `name` as a 32-bit word.
    pub fn u32(&self, name: &str) -> u32 {
        self.word(name) as u32
    }

    /// Its `sType` (0 without one).
    pub fn s_type(&self) -> u32 {
        structure(self.ty).s_type
    }

    /// The structures chained to it by `pNext`, in order.
    pub fn chain(&self) -> Vec<&StructValue> {
        let mut out = Vec::new();
        let mut next = self.get("pNext").structure();
        while let Some(s) = next {
            if out.len() >= MAX_DEPTH {
                break;
            }
            out.push(s);
            next = s.get("pNext").structure();
        }
        out
    }

    /// The first chained structure of type `s_type`.
    pub fn find(&self, s_type: u32) -> Option<&StructValue> {
        self.chain().into_iter().find(|s| s.s_type() == s_type)
    }
}
