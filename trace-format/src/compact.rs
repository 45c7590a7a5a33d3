//! Direct records as the recording thread keeps them: the call's values packed one
//! after another, laid out as a flatbuffer later, on the thread that merges them.
//!
//! A program's thread pays for every byte it writes (each new cache line of its block
//! is fetched for ownership) and for every instruction between its Vulkan calls. A
//! compact record is half the size of its flatbuffer (a `vkCmdDraw`: 56 bytes against
//! 112) and is written in one straight pass, without a table layout to look up; the
//! merger thread, which has a core of its own, expands it with
//! [`append_direct`](crate::direct::append_direct) into the very bytes a direct record
//! has (a test compares the two).
//!
//! Layout, from an 8-aligned start: the call type (1 byte), the number of fields (1),
//! two zero bytes, the result (`i32`); the fields' kinds, four bits each from the low
//! end (`u64`); the thread id (`u64`); the timestamp (`u64`); then each field in order:
//! a `u64` in 8 bytes, a `u32` or `i32` in 4, a vector as its element count (`u32`),
//! zeros up to the next 8-byte boundary from the record's start, and its elements. All
//! little-endian.

use crate::direct::{DirectField, MAX_DIRECT_FIELDS};
use crate::generated::trace::Call;
use crate::record_block::RECORD_ALIGN;
use crate::trace::CallMeta;

/// Bytes before the fields.
const HEADER: usize = 32;
/// Bytes a compact record's header and scalar fields take at most.
const SCALARS_MAX: usize = HEADER + 8 * MAX_DIRECT_FIELDS;

/// A field kind's four-bit code.
fn kind_code(field: &DirectField<'_>) -> u64 {
    match field {
        DirectField::U64(_) => 1,
        DirectField::U32(_) => 2,
        DirectField::I32(_) => 3,
        DirectField::Bytes(_) => 4,
        DirectField::U32s(_) => 5,
        DirectField::U64s(_) => 6,
    }
}

/// Appends a compact record of `call_type` with `fields` (at most
/// [`MAX_DIRECT_FIELDS`]) to `out`, from the next 8-byte boundary; returns where it
/// starts. Inlined into a hook, its fixed list of fields compiles to straight stores.
///
/// # Panics
/// With more than [`MAX_DIRECT_FIELDS`] fields (a programming error: the callers pass
/// fixed lists).
#[inline(always)]
pub(crate) fn append_compact(
    out: &mut Vec<u8>,
    meta: CallMeta,
    call_type: Call,
    fields: &[DirectField<'_>],
) -> usize {
    assert!(fields.len() <= MAX_DIRECT_FIELDS, "too many direct fields");
    let start = out.len().next_multiple_of(RECORD_ALIGN);
    let mut kinds = 0u64;
    for (i, field) in fields.iter().enumerate() {
        kinds |= kind_code(field) << (4 * i);
    }
    // The padding, the header and the scalars are stored straight into the reserved
    // room: no zero-filled staging buffer, no call to memcpy.
    out.reserve(start - out.len() + SCALARS_MAX);
    let base = out.as_mut_ptr();
    let put = |at: usize, bytes: &[u8]| {
        debug_assert!(at + bytes.len() <= start + SCALARS_MAX);
        // SAFETY: `at + bytes.len()` is within `start + SCALARS_MAX`, reserved above.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.add(at), bytes.len()) }
    };
    for at in out.len()..start {
        put(at, &[0]);
    }
    put(start, &[call_type.0, fields.len() as u8, 0, 0]);
    put(start + 4, &meta.result.to_le_bytes());
    put(start + 8, &kinds.to_le_bytes());
    put(start + 16, &meta.thread_id.to_le_bytes());
    put(start + 24, &meta.timestamp_ns.to_le_bytes());
    let mut len = HEADER;
    let mut first_vector = None;
    for (i, field) in fields.iter().enumerate() {
        match *field {
            DirectField::U64(v) => {
                put(start + len, &v.to_le_bytes());
                len += 8;
            }
            DirectField::U32(v) => {
                put(start + len, &v.to_le_bytes());
                len += 4;
            }
            DirectField::I32(v) => {
                put(start + len, &v.to_le_bytes());
                len += 4;
            }
            // Vectors, and the fields after them, are appended below.
            _ => {
                first_vector = Some(i);
                break;
            }
        }
    }
    // SAFETY: every byte up to `start + len` was written above.
    unsafe { out.set_len(start + len) };
    if let Some(i) = first_vector {
        append_vectors(out, start, &fields[i..]);
    }
    start
}

/// Appends `fields`, a compact record's fields from its first vector on (the scalars
/// before it are written already), to the record that begins at `start`.
#[inline(never)]
fn append_vectors(out: &mut Vec<u8>, start: usize, fields: &[DirectField<'_>]) {
    for field in fields {
        match *field {
            DirectField::U64(v) => out.extend_from_slice(&v.to_le_bytes()),
            DirectField::U32(v) => out.extend_from_slice(&v.to_le_bytes()),
            DirectField::I32(v) => out.extend_from_slice(&v.to_le_bytes()),
            DirectField::Bytes(b) => {
                start_vector(out, start, b.len());
                out.extend_from_slice(b);
            }
            DirectField::U32s(v) => {
                start_vector(out, start, v.len());
                v.iter()
                    .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            }
            DirectField::U64s(v) => {
                start_vector(out, start, v.len());
                v.iter()
                    .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            }
        }
    }
}

/// Writes a vector's element count and pads its elements to 8 bytes from the record's
/// start.
fn start_vector(out: &mut Vec<u8>, start: usize, len: usize) {
    out.extend_from_slice(&(len as u32).to_le_bytes());
    let aligned = start + (out.len() - start).next_multiple_of(8);
    out.resize(aligned, 0);
}

/// A compact record read back: its call type, envelope and fields, borrowing the
/// record's bytes where they are aligned for their elements.
pub(crate) struct Decoded<'a> {
    pub call_type: Call,
    pub meta: CallMeta,
    pub fields: [DirectField<'a>; MAX_DIRECT_FIELDS],
    pub len: usize,
}

/// Reads back the compact record `bytes` (as [`append_compact`] wrote it, from an
/// 8-aligned start); `None` when it is cut short, names an unknown kind, or holds a
/// vector whose elements are not aligned in memory (the block's bytes are allocated
/// 16-aligned, so that does not happen; the caller reports it rather than guess).
pub(crate) fn decode(bytes: &[u8]) -> Option<Decoded<'_>> {
    let header = bytes.get(..HEADER)?;
    let n = usize::from(header[1]);
    if n > MAX_DIRECT_FIELDS {
        return None;
    }
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    let u64_at = |at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
    };
    let kinds = u64_at(8)?;
    let meta = CallMeta {
        result: u32_at(4)? as i32,
        thread_id: u64_at(16)?,
        timestamp_ns: u64_at(24)?,
    };
    let mut fields = [DirectField::U32(0); MAX_DIRECT_FIELDS];
    let mut at = HEADER;
    for (i, field) in fields.iter_mut().take(n).enumerate() {
        *field = match (kinds >> (4 * i)) & 0xf {
            1 => {
                at += 8;
                DirectField::U64(u64_at(at - 8)?)
            }
            2 => {
                at += 4;
                DirectField::U32(u32_at(at - 4)?)
            }
            3 => {
                at += 4;
                DirectField::I32(u32_at(at - 4)? as i32)
            }
            code @ 4..=6 => {
                let count = u32_at(at)? as usize;
                at = (at + 4).next_multiple_of(8);
                let size = [1, 4, 8][code as usize - 4];
                let elements = bytes.get(at..at.checked_add(count.checked_mul(size)?)?)?;
                at += elements.len();
                match code {
                    4 => DirectField::Bytes(elements),
                    5 => DirectField::U32s(aligned(elements)?),
                    _ => DirectField::U64s(aligned(elements)?),
                }
            }
            _ => return None,
        };
    }
    Some(Decoded {
        call_type: Call(header[0]),
        meta,
        fields,
        len: n,
    })
}

/// `bytes` as a slice of `T`, when they are aligned for it and fill it exactly.
fn aligned<T: Plain>(bytes: &[u8]) -> Option<&[T]> {
    // SAFETY: `T` is a plain integer type: every bit pattern is a value.
    let (before, items, after) = unsafe { bytes.align_to::<T>() };
    (before.is_empty() && after.is_empty()).then_some(items)
}

/// An element type of a compact record's vectors: an integer, every bit pattern of
/// which is a value.
trait Plain {}
impl Plain for u32 {}
impl Plain for u64 {}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> CallMeta {
        CallMeta {
            thread_id: 7,
            timestamp_ns: 99,
            result: -3,
        }
    }

    #[test]
    fn every_field_kind_reads_back_in_order() {
        let fields = [
            DirectField::U32(5),
            DirectField::Bytes(&[1, 2, 3]),
            DirectField::I32(-9),
            DirectField::U64s(&[u64::MAX, 4]),
            DirectField::U64(0x0102_0304_0506_0708),
            DirectField::U32s(&[10, 20, 30]),
        ];
        let mut out = vec![0xee];
        let start = append_compact(&mut out, meta(), Call::CmdDraw, &fields);
        assert_eq!(start, 8, "records start 8-aligned");
        assert!(out[1..8].iter().all(|b| *b == 0), "padding is zeros");
        let d = decode(&out[start..]).expect("reads back");
        assert_eq!(d.call_type, Call::CmdDraw);
        assert_eq!(d.meta, meta());
        assert_eq!(
            format!("{:?}", &d.fields[..d.len]),
            format!("{:?}", &fields[..])
        );
    }

    #[test]
    fn a_record_cut_short_does_not_read_back() {
        let mut out = Vec::new();
        append_compact(
            &mut out,
            meta(),
            Call::CmdDraw,
            &[DirectField::U64(1), DirectField::U32s(&[1, 2, 3])],
        );
        for len in 0..out.len() {
            assert!(decode(&out[..len]).is_none(), "cut at {len}");
        }
        assert!(decode(&out).is_some());
    }
}
