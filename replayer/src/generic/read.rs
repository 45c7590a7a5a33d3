//! What the generated decoders share: a parameter by position, scalars and C-layout
//! structures read from its bytes with every length checked against the bytes
//! present, and [`DecodeError`], which names the parameter and what was wrong.

use smallvec::SmallVec;
use trace_format::generated::trace::VulkanCall;
use trace_format::generic_params::{PackedError, Param, ParamList};

/// A record's parameters, gathered for decoding by position: on the stack for every
/// command of up to 16 parameters (all but a few).
pub type Params<'a> = SmallVec<[Param<'a>; 16]>;

/// The parameters of `call`, gathered by position (a packed record's checked whole first).
pub fn params_of<'a>(call: &VulkanCall<'a>) -> Result<Params<'a>, DecodeError> {
    Ok(ParamList::of(call)?.iter().collect())
}

/// The parameters packed in `bytes` (a compact record's), checked whole and gathered
/// by position into `params` (kept where they are: a move of the gathered parameters
/// is a copy of half a kilobyte). When the check fails `params` is left empty: nothing
/// of a damaged record is handed on.
pub fn gather_packed<'a>(bytes: &'a [u8], params: &mut Params<'a>) -> Result<(), DecodeError> {
    params.clear();
    let gathered = ParamList::packed_each(bytes, |param| params.push(param));
    if gathered.is_err() {
        params.clear();
    }
    Ok(gathered?)
}

/// Why a generic record's parameters did not decode.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The record holds another number of parameters than the command has.
    #[error("{found} parameters recorded, the command has {expected}")]
    Arity {
        /// Parameters in the record.
        found: usize,
        /// Parameters of the command.
        expected: usize,
    },
    /// A parameter is missing.
    #[error("parameter `{0}` is missing")]
    Missing(&'static str),
    /// The record's packed parameters are damaged.
    #[error(transparent)]
    Packed(#[from] PackedError),
    /// A parameter's bytes are not a whole number of its elements.
    #[error("parameter `{param}`: {len} bytes are not a whole number of {size}-byte elements")]
    Size {
        /// The parameter.
        param: &'static str,
        /// Bytes recorded.
        len: usize,
        /// Bytes per element.
        size: usize,
    },
    /// A parameter holds another number of elements than its count parameter says.
    #[error("parameter `{param}` holds {found} elements, its count says {count}")]
    Count {
        /// The parameter.
        param: &'static str,
        /// Elements recorded.
        found: usize,
        /// What the count parameter says.
        count: usize,
    },
}

impl DecodeError {
    /// Another number of parameters than `expected`.
    pub fn arity(found: usize, expected: usize) -> Self {
        DecodeError::Arity { found, expected }
    }

    /// A missing parameter.
    pub fn missing(param: &'static str) -> Self {
        DecodeError::Missing(param)
    }

    /// Checks that an array parameter holds as many elements as its count says.
    pub fn check_count(found: usize, count: usize, param: &'static str) -> Result<(), Self> {
        if found == count {
            Ok(())
        } else {
            Err(DecodeError::Count {
                param,
                found,
                count,
            })
        }
    }
}

/// A scalar read from little-endian bytes at an offset; 0 where the bytes end (the
/// callers check a structure's length before reading its members).
pub trait Field: Sized {
    /// Reads the value at `offset` in `b`.
    fn field(b: &[u8], offset: usize) -> Self;
}

macro_rules! field {
    ($($t:ty),*) => {$(
        impl Field for $t {
            fn field(b: &[u8], offset: usize) -> Self {
                b.get(offset..offset + std::mem::size_of::<$t>())
                    .and_then(|s| s.try_into().ok())
                    .map_or(0 as $t, <$t>::from_le_bytes)
            }
        }
    )*};
}

field!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

/// Parameter `index`.
pub fn param<'a>(
    params: &[Param<'a>],
    index: usize,
    name: &'static str,
) -> Result<Param<'a>, DecodeError> {
    params.get(index).copied().ok_or(DecodeError::Missing(name))
}

fn bytes<'a>(p: Param<'a>) -> &'a [u8] {
    p.bytes().unwrap_or_default()
}

/// The parameter's bytes as `size`-byte elements, each read by `read`.
pub fn structs<T>(
    p: Param<'_>,
    size: usize,
    read: fn(&[u8]) -> T,
    name: &'static str,
) -> Result<Vec<T>, DecodeError> {
    let b = bytes(p);
    if size == 0 || b.len() % size != 0 {
        return Err(DecodeError::Size {
            param: name,
            len: b.len(),
            size,
        });
    }
    Ok(b.chunks_exact(size).map(read).collect())
}

/// The parameter's bytes as one structure.
pub fn one_struct<T>(
    p: Param<'_>,
    size: usize,
    read: fn(&[u8]) -> T,
    name: &'static str,
) -> Result<T, DecodeError> {
    let b = bytes(p);
    if b.len() != size {
        return Err(DecodeError::Size {
            param: name,
            len: b.len(),
            size,
        });
    }
    Ok(read(b))
}

/// The parameter's bytes as `size`-byte scalars.
pub fn scalars<T: Field>(
    p: Param<'_>,
    size: usize,
    name: &'static str,
) -> Result<Vec<T>, DecodeError> {
    structs(p, size, |b| T::field(b, 0), name)
}

/// The parameter's bytes as a fixed array of `N` scalars.
pub fn fixed<T: Field, const N: usize>(
    p: Param<'_>,
    size: usize,
    name: &'static str,
) -> Result<[T; N], DecodeError> {
    let b = bytes(p);
    if b.len() != size * N {
        return Err(DecodeError::Size {
            param: name,
            len: b.len(),
            size: size * N,
        });
    }
    Ok(std::array::from_fn(|i| T::field(b, i * size)))
}

/// What the elements' pointer members point to: `per_element` parameters for each
/// element, read by `read`.
pub fn nested<T>(
    p: Param<'_>,
    per_element: usize,
    read: fn(&[Param<'_>]) -> Result<T, DecodeError>,
    name: &'static str,
) -> Result<Vec<T>, DecodeError> {
    let all: Params<'_> = p.nested().map(|n| n.iter().collect()).unwrap_or_default();
    if per_element == 0 || all.len() % per_element != 0 {
        return Err(DecodeError::Size {
            param: name,
            len: all.len(),
            size: per_element,
        });
    }
    all.chunks_exact(per_element).map(read).collect()
}

/// The parameter's bytes as text.
pub fn string(p: Param<'_>) -> String {
    String::from_utf8_lossy(bytes(p)).into_owned()
}

/// The parameter's bytes as NUL-terminated strings.
pub fn strings(p: Param<'_>) -> Vec<String> {
    let b = bytes(p);
    let b = b.strip_suffix(&[0]).unwrap_or(b);
    if b.is_empty() {
        return Vec::new();
    }
    b.split(|c| *c == 0)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}
