//! How a recording thread keeps its records in its [`RecordBlock`](crate::record_block::RecordBlock):
//! one stream of bytes, each record framed by a header word and carrying only what
//! changed since the block's previous record. Trace chunks store their records in the
//! same stream (`record_block::ChunkBody`); the reader lays them out as flatbuffers.
//!
//! A program's thread pays for every byte it writes (each new cache line of its block
//! is fetched for ownership) and for every instruction between its Vulkan calls. Most
//! of a flatbuffer record is the same at every call or repeats its neighbour's: its
//! vtables, its thread, the order key that a run of commands shares, a timestamp that
//! commands between two readings of the clock share. A compact `vkCmdDraw` is 32 bytes
//! (its flatbuffer: 112), written front to back in one pass, in one stream: where it
//! lies and what it holds are read back from the stream itself. The merger expands it
//! with [`append_direct`](crate::direct::append_direct) into the very bytes a direct
//! record has (a test compares the two).
//!
//! Layout of a record, from an 8-aligned start, all little-endian. The header word:
//! the call type (bits 0–7), the number of fields (8–12), the flags (13–18: `FINISHED`,
//! `KEY`, `THREAD`, `TIME`, `RESULT`, `BOUNDARY`), a compact record's length in 8-byte
//! words, header and padding included (19–31; 0 for one longer than that holds: its
//! fields are walked to find its end), the kinds of the first eight fields, four bits
//! each, from bit 32. Then a `u64` for each flag of `KEY` (the order key),
//! `THREAD` (the thread id), `TIME` (the timestamp) and `RESULT` (the result, sign
//! extended) that is set: a record without one carries the previous record's (the
//! first record of a block, a key, thread and timestamp of 0). Then, with more than
//! eight fields, the kinds of the rest (`u64`). Then, for a compact record, each field
//! in order: a `u64` in 8 bytes, a `u32` or `i32` in 4, a vector as its element count
//! (`u32`), zeros up to the next 8-byte boundary, and its elements; a byte vector may be
//! stored as byte planes ([`crate::byte_planes`]; its own kind), which the reader lays
//! out as the bytes they hold. The kind codes: 1 `u64`, 2 `u32`, 3 `i32`, 4 bytes,
//! 5 `u32`s, 6 `u64`s, 7 byte planes, 8 a string (its bytes, as a byte vector), 9 a
//! field left out (nothing stored). A `FINISHED`
//! record is a finished flatbuffer instead (its envelope holds its thread, timestamp
//! and result): its length (`u64`), then its bytes.

use crate::direct::{DirectField, MAX_DIRECT_FIELDS};
use crate::generated::trace::Call;
use crate::record_block::{EncodedRecord, RecordBody, RECORD_ALIGN};
use crate::trace::CallMeta;

/// The values a block's records carry over from one to the next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Carried {
    /// The order key.
    pub key: u64,
    /// The thread id.
    pub thread_id: u64,
    /// The timestamp.
    pub timestamp_ns: u64,
}

const FIELD_COUNT_SHIFT: u32 = 8;
/// The record is a finished flatbuffer.
const FINISHED: u64 = 1 << 13;
/// An order key follows.
const KEY: u64 = 1 << 14;
/// A thread id follows.
const THREAD: u64 = 1 << 15;
/// A timestamp follows.
const TIME: u64 = 1 << 16;
/// A result follows (else it is 0).
const RESULT: u64 = 1 << 17;
/// The record is a frame boundary.
const BOUNDARY: u64 = 1 << 18;
const KINDS_SHIFT: u32 = 32;
/// Where a compact record's length (in 8-byte words) sits in its header word.
const LEN_SHIFT: u32 = 19;
/// The longest length the header word holds.
const LEN_MAX_WORDS: usize = (1 << 13) - 1;

/// Puts the length of the compact record from `start` to `end` into its header word,
/// where it fits.
///
/// # Safety
/// `base + start` must be the record's header word, written.
#[inline(always)]
unsafe fn put_len(base: *mut u8, start: usize, end: usize) {
    let words = (end - start).div_ceil(8);
    if words <= LEN_MAX_WORDS {
        let header = base.add(start).cast::<u64>();
        let value = u64::from_le(header.read_unaligned()) | (words as u64) << LEN_SHIFT;
        header.write_unaligned(value.to_le());
    }
}
/// Fields whose kinds the header word holds.
const KINDS_IN_HEADER: usize = 8;

/// Bytes a record's words take at most: the header, the four carried or optional
/// values, the kinds past the eighth field.
const WORDS_MAX: usize = 8 * 6;
/// Bytes a compact record's words and scalar fields take at most.
const SCALARS_MAX: usize = WORDS_MAX + 8 * MAX_DIRECT_FIELDS;

/// What a compact record holds besides its fields' values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactHead {
    /// The call.
    pub call_type: Call,
    /// How many fields it has.
    pub field_count: u8,
    /// Each field's kind, four bits each from the low end.
    pub kinds: u64,
    /// Its envelope but the sequence number.
    pub meta: CallMeta,
}

/// The four-bit codes of a compact record's field kinds, as its header holds them.
pub(crate) mod kind {
    /// A `u64`.
    pub const U64: u64 = 1;
    /// A `u32`.
    pub const U32: u64 = 2;
    /// An `i32`.
    pub const I32: u64 = 3;
    /// A byte vector.
    pub const BYTES: u64 = 4;
    /// A `u32` vector.
    pub const U32S: u64 = 5;
    /// A `u64` vector.
    pub const U64S: u64 = 6;
    /// A byte vector stored as byte planes.
    pub const BYTE_PLANES: u64 = 7;
    /// A string: its bytes, stored as a byte vector (UTF-8, checked when read back).
    pub const STRING: u64 = 8;
    /// A field left out: no bytes.
    pub const ABSENT: u64 = 9;
}

/// A field kind's four-bit code.
#[inline(always)]
fn kind_code(field: &DirectField<'_>) -> u64 {
    match field {
        DirectField::U64(_) => kind::U64,
        DirectField::U32(_) => kind::U32,
        DirectField::I32(_) => kind::I32,
        DirectField::Bytes(_) => kind::BYTES,
        DirectField::U32s(_) => kind::U32S,
        DirectField::U64s(_) => kind::U64S,
        DirectField::BytePlanes(_) | DirectField::BytesAsPlanes(_) => kind::BYTE_PLANES,
        DirectField::Str(_) => kind::STRING,
        DirectField::Absent => kind::ABSENT,
    }
}

/// The kinds of `fields`, four bits each from the low end, as a header holds them.
#[inline(always)]
pub(crate) fn kinds_of(fields: &[DirectField<'_>]) -> u64 {
    fields
        .iter()
        .enumerate()
        .fold(0, |kinds, (i, field)| kinds | kind_code(field) << (4 * i))
}

/// Stores `bytes` at `base + at`.
///
/// # Safety
/// `at + bytes.len()` must be within the room reserved at `base`.
#[inline(always)]
unsafe fn put(base: *mut u8, at: usize, bytes: &[u8]) -> usize {
    std::ptr::copy_nonoverlapping(bytes.as_ptr(), base.add(at), bytes.len());
    at + bytes.len()
}

/// Appends a compact record of `call_type` with `fields` (at most
/// [`MAX_DIRECT_FIELDS`]) and order key `key` to `out`, from the next 8-byte boundary,
/// writing only the key, thread and timestamp that differ from `carried` (which it
/// updates). Inlined into a hook, its fixed list of fields compiles to straight stores.
///
/// # Panics
/// With more than [`MAX_DIRECT_FIELDS`] fields (a programming error: the callers pass
/// fixed lists).
#[inline(always)]
pub(crate) fn append_compact(
    out: &mut Vec<u8>,
    carried: &mut Carried,
    key: u64,
    meta: CallMeta,
    call_type: Call,
    fields: &[DirectField<'_>],
) {
    assert!(fields.len() <= MAX_DIRECT_FIELDS, "too many direct fields");
    let start = out.len().next_multiple_of(RECORD_ALIGN);
    let kinds = kinds_of(fields);
    // The padding, the words, the scalars and the vectors are stored straight into the
    // reserved room: no zero-filled staging buffer, one copy a vector.
    let room = SCALARS_MAX + fields.iter().map(vector_room).sum::<usize>();
    out.reserve(start - out.len() + room);
    let base = out.as_mut_ptr();
    // SAFETY (every store below): the padding, the words, the scalars and the vectors
    // end within `start + room`, reserved above.
    unsafe {
        // The padding (up to 7 bytes) in one store, not a call to memset.
        put(base, out.len(), &[0; 8]);
        let head = CompactHead {
            call_type,
            field_count: fields.len() as u8,
            kinds,
            meta,
        };
        let fields_start = put_words(base, start, carried, key, &head);
        let mut at = fields_start;
        // The scalars before the first vector (a hook's fixed list: straight stores),
        // then the vectors and what follows them.
        let mut rest = fields;
        while let Some((field, after)) = rest.split_first() {
            at = match *field {
                DirectField::U64(v) => put(base, at, &v.to_le_bytes()),
                DirectField::U32(v) => put(base, at, &v.to_le_bytes()),
                DirectField::I32(v) => put(base, at, &v.to_le_bytes()),
                _ => break,
            };
            rest = after;
        }
        for field in rest {
            let (elements, count, size) = match *field {
                DirectField::U64(v) => {
                    at = put(base, at, &v.to_le_bytes());
                    continue;
                }
                DirectField::U32(v) => {
                    at = put(base, at, &v.to_le_bytes());
                    continue;
                }
                DirectField::I32(v) => {
                    at = put(base, at, &v.to_le_bytes());
                    continue;
                }
                DirectField::Bytes(b) | DirectField::BytePlanes(b) => (b.as_ptr(), b.len(), 1),
                DirectField::Str(s) => (s.as_ptr(), s.len(), 1),
                DirectField::Absent => continue,
                DirectField::BytesAsPlanes(b) => {
                    at = put_planes(base, fields_start, at, b);
                    continue;
                }
                DirectField::U32s(v) => (v.as_ptr().cast::<u8>(), v.len(), 4),
                DirectField::U64s(v) => (v.as_ptr().cast::<u8>(), v.len(), 8),
            };
            at = put_vector(base, fields_start, at, elements, count, size);
        }
        put_len(base, start, at);
        // Every byte up to `at` was written above.
        out.set_len(at);
    }
}

/// Bytes a field takes beyond [`SCALARS_MAX`]'s share at most: a vector's count,
/// padding and elements.
#[inline(always)]
fn vector_room(field: &DirectField<'_>) -> usize {
    // The count (4), the padding (up to 7) and the elements rounded up to 8.
    4 + 7
        + 7
        + match field {
            DirectField::Bytes(b) | DirectField::BytePlanes(b) | DirectField::BytesAsPlanes(b) => {
                b.len()
            }
            DirectField::Str(s) => s.len(),
            DirectField::U32s(v) => 4 * v.len(),
            DirectField::U64s(v) => 8 * v.len(),
            _ => 0,
        }
}

/// Copies up to this many bytes word by word, in line; more through `memcpy`.
const COPY_IN_LINE: usize = 256;

/// Copies `len` bytes from `src` to the 8-aligned `dst`, where the room reaches at
/// least to the next 8-byte boundary past `len`. A vector a hook records (push
/// constants, descriptor sets, vertex buffers) is a few words long: copied in line, by
/// whole words, the bytes past `len` up to the boundary zeros, rather than by a call
/// into libc's `memcpy` (on the NVIDIA machine those small calls cost the program's
/// thread more than the rest of recording a command).
///
/// # Safety
/// `src` must be readable for `len` bytes; `dst` 8-aligned and writable for `len`
/// rounded up to 8.
#[inline(always)]
unsafe fn copy_to_aligned(src: *const u8, dst: *mut u8, len: usize) {
    if len > COPY_IN_LINE {
        std::ptr::copy_nonoverlapping(src, dst, len);
        return;
    }
    let words = len / 8;
    for i in 0..words {
        let word = src.add(8 * i).cast::<u64>().read_unaligned();
        // A volatile store keeps the loop a loop (the compiler would make a small copy
        // of unknown length a call to `memcpy`).
        dst.add(8 * i).cast::<u64>().write_volatile(word);
    }
    let tail = len % 8;
    if tail != 0 {
        // The last bytes gathered into one word, in memory order.
        let mut last = 0u64;
        for i in 0..tail {
            let byte = u64::from(src.add(8 * words + i).read());
            last |= byte
                << if cfg!(target_endian = "little") {
                    8 * i
                } else {
                    56 - 8 * i
                };
        }
        dst.add(8 * words).cast::<u64>().write_volatile(last);
    }
}

/// Stores a vector of `count` elements of `size` bytes at `elements` at `base + at`,
/// in a record whose fields start at `fields_start`: its element count, zeros to the
/// next 8-byte boundary from there, its elements in little-endian order. Returns where
/// it ends.
///
/// # Safety
/// `elements` must be readable for `count * size` bytes; `base + at` must have
/// [`vector_room`] bytes of room for it.
#[inline(always)]
unsafe fn put_vector(
    base: *mut u8,
    fields_start: usize,
    at: usize,
    elements: *const u8,
    count: usize,
    size: usize,
) -> usize {
    let first = put_vector_count(base, fields_start, at, count);
    let bytes = count * size;
    copy_to_aligned(elements, base.add(first), bytes);
    if cfg!(target_endian = "big") {
        // Each element's bytes reversed in place: little-endian, as the layout says.
        for i in 0..count {
            std::slice::from_raw_parts_mut(base.add(first + i * size), size).reverse();
        }
    }
    first + bytes
}

/// Stores a vector's element `count` at `base + at` and zeros after it, in a record
/// whose fields start at `fields_start`; returns where its elements start (the next
/// 8-byte boundary from the fields' start).
///
/// # Safety
/// `base + at` must have room for the count and 8 bytes after it.
#[inline(always)]
unsafe fn put_vector_count(base: *mut u8, fields_start: usize, at: usize, count: usize) -> usize {
    put(base, at, &(count as u32).to_le_bytes());
    put(base, at + 4, &[0; 8]);
    fields_start + (at + 4 - fields_start).next_multiple_of(8)
}

/// Stores `bytes` as a byte-planes vector at `base + at`, as [`put_vector`] stores a
/// vector of bytes: its count, zeros to the elements' 8-byte boundary, the planes
/// split in place, zeros to the next boundary. Returns where the planes end.
///
/// # Safety
/// As [`put_vector`]'s, for `bytes.len()` elements of one byte.
#[inline(never)]
unsafe fn put_planes(base: *mut u8, fields_start: usize, at: usize, bytes: &[u8]) -> usize {
    let first = put_vector_count(base, fields_start, at, bytes.len());
    crate::byte_planes::split_to(bytes, base.add(first));
    let end = first + bytes.len();
    // The bytes from the planes' end to the boundary, as `copy_to_aligned` leaves them.
    std::ptr::write_bytes(base.add(end), 0, end.next_multiple_of(8) - end);
    end
}

/// Writes the header word of a compact record of `head` with order key `key` at
/// `base + start`, and after it the words it needs: the key, thread and timestamp that
/// differ from `carried` (which it updates), a result other than 0, the kinds of
/// fields past the eighth. Returns where the fields start.
///
/// # Safety
/// `base + start` must have [`WORDS_MAX`] bytes of room.
#[inline(always)]
unsafe fn put_words(
    base: *mut u8,
    start: usize,
    carried: &mut Carried,
    key: u64,
    head: &CompactHead,
) -> usize {
    let meta = head.meta;
    let mut header = u64::from(head.call_type.0)
        | u64::from(head.field_count) << FIELD_COUNT_SHIFT
        | (head.kinds & 0xffff_ffff) << KINDS_SHIFT;
    if head.call_type == Call::FrameBoundary {
        header |= BOUNDARY;
    }
    let mut at = start + 8;
    if key != carried.key {
        header |= KEY;
        put(base, at, &key.to_le_bytes());
        at += 8;
    }
    if meta.thread_id != carried.thread_id {
        header |= THREAD;
        put(base, at, &meta.thread_id.to_le_bytes());
        at += 8;
    }
    if meta.timestamp_ns != carried.timestamp_ns {
        header |= TIME;
        put(base, at, &meta.timestamp_ns.to_le_bytes());
        at += 8;
    }
    if meta.result != 0 {
        header |= RESULT;
        put(base, at, &i64::from(meta.result).to_le_bytes());
        at += 8;
    }
    if usize::from(head.field_count) > KINDS_IN_HEADER {
        put(base, at, &(head.kinds >> 32).to_le_bytes());
        at += 8;
    }
    put(base, start, &header.to_le_bytes());
    *carried = Carried {
        key,
        thread_id: meta.thread_id,
        timestamp_ns: meta.timestamp_ns,
    };
    at
}

/// Appends a compact record read back from another block (its `head` and its
/// `fields`' bytes) with order key `key` to `out`, as [`append_compact`] does.
pub(crate) fn append_compact_fields(
    out: &mut Vec<u8>,
    carried: &mut Carried,
    key: u64,
    head: &CompactHead,
    fields: &[u8],
) {
    let start = out.len().next_multiple_of(RECORD_ALIGN);
    out.resize(start, 0);
    out.reserve(WORDS_MAX);
    // SAFETY: `WORDS_MAX` bytes of room were reserved at `start`, and `put_words` wrote
    // every byte up to where it returns.
    unsafe {
        let at = put_words(out.as_mut_ptr(), start, carried, key, head);
        out.set_len(at);
    }
    out.extend_from_slice(fields);
    // SAFETY: the header word at `start` was written above.
    unsafe { put_len(out.as_mut_ptr(), start, out.len()) };
}

/// Appends the finished flatbuffer record `bytes` with order key `key` to `out`, from
/// the next 8-byte boundary (its envelope holds the rest of what [`Carried`] tracks,
/// which it leaves as it is but the key).
pub(crate) fn append_finished(
    out: &mut Vec<u8>,
    carried: &mut Carried,
    key: u64,
    frame_boundary: bool,
    bytes: &[u8],
) {
    let start = out.len().next_multiple_of(RECORD_ALIGN);
    out.resize(start, 0);
    let new_key = key != carried.key;
    let mut header = FINISHED;
    if frame_boundary {
        header |= BOUNDARY;
    }
    if new_key {
        header |= KEY;
    }
    out.extend_from_slice(&header.to_le_bytes());
    if new_key {
        out.extend_from_slice(&key.to_le_bytes());
    }
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
    carried.key = key;
}

/// The `u64` at `at` in `bytes`.
#[inline(always)]
fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        bytes.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// The order key of the record at `at` (the key it carries, or `carried`'s).
#[inline]
pub(crate) fn peek_key(bytes: &[u8], at: usize, carried: &Carried) -> Option<u64> {
    let header = u64_at(bytes, at)?;
    if header & KEY != 0 {
        u64_at(bytes, at + 8)
    } else {
        Some(carried.key)
    }
}

/// Where a record ends and what it carries over, without its fields: what
/// [`RecordBlock::take_run`](crate::record_block::RecordBlock::take_run) needs of each
/// record it moves whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Skipped {
    /// Its order key.
    pub key: u64,
    /// Whether it is a frame boundary.
    pub frame_boundary: bool,
    /// Where the next record starts.
    pub next: usize,
}

/// Steps over the record at `at` of `bytes` as [`read`] reads it (the same verdict,
/// `carried` and next record), reading only its header words where the header holds
/// its length; other records are read whole.
#[inline(always)]
pub(crate) fn skip(bytes: &[u8], at: usize, carried: &mut Carried) -> Option<Skipped> {
    let header = u64_at(bytes, at)?;
    let words = (header >> LEN_SHIFT) as usize & LEN_MAX_WORDS;
    let given_end = at.checked_add(8 * words)?;
    if header & FINISHED != 0 || words == 0 || given_end > bytes.len() {
        let (record, next) = read(bytes, at, carried)?;
        return Some(Skipped {
            key: record.key,
            frame_boundary: record.frame_boundary,
            next,
        });
    }
    // The header words that follow, in order: the key, thread, time and result each
    // where flagged, then the kinds of fields past the eighth.
    let field_count = ((header >> FIELD_COUNT_SHIFT) & 0x1f) as usize;
    let flagged = |flag: u64| usize::from(header & flag != 0);
    let key_at = at + 8;
    let thread_at = key_at + 8 * flagged(KEY);
    let time_at = thread_at + 8 * flagged(THREAD);
    let fields_at = time_at
        + 8 * (flagged(TIME) + flagged(RESULT) + usize::from(field_count > KINDS_IN_HEADER));
    // Within the given length, every header word lies within `bytes` (`read` checks
    // each one alone, and takes the fields up to that length).
    if fields_at > given_end {
        return None;
    }
    let word_or = |flag: u64, at: usize, old: u64| {
        if header & flag != 0 {
            u64_at(bytes, at)
        } else {
            Some(old)
        }
    };
    *carried = Carried {
        key: word_or(KEY, key_at, carried.key)?,
        thread_id: word_or(THREAD, thread_at, carried.thread_id)?,
        timestamp_ns: word_or(TIME, time_at, carried.timestamp_ns)?,
    };
    Some(Skipped {
        key: carried.key,
        frame_boundary: header & BOUNDARY != 0,
        next: given_end.next_multiple_of(RECORD_ALIGN),
    })
}

/// Reads the record at `at` of `bytes` (as [`append_compact`] or [`append_finished`]
/// wrote it, after the records before it, which left `carried`), updates `carried`,
/// and returns it with where the next record starts; `None` when it is cut short, names
/// an unknown kind, or holds a vector whose elements are not aligned in memory (the
/// block's bytes are allocated 16-aligned, so that does not happen; the caller reports
/// it rather than guess).
#[inline]
pub(crate) fn read<'a>(
    bytes: &'a [u8],
    at: usize,
    carried: &mut Carried,
) -> Option<(EncodedRecord<'a>, usize)> {
    let header = u64_at(bytes, at)?;
    let mut next = at + 8;
    let word = |flag: u64, next: &mut usize| -> Option<Option<u64>> {
        if header & flag == 0 {
            return Some(None);
        }
        *next += 8;
        u64_at(bytes, *next - 8).map(Some)
    };
    let key = word(KEY, &mut next)?.unwrap_or(carried.key);
    let frame_boundary = header & BOUNDARY != 0;
    if header & FINISHED != 0 {
        let len = usize::try_from(u64_at(bytes, next)?).ok()?;
        let body = bytes.get(next + 8..(next + 8).checked_add(len)?)?;
        carried.key = key;
        let record = EncodedRecord {
            key,
            frame_boundary,
            body: RecordBody::Finished(body),
        };
        return Some((record, (next + 8 + len).next_multiple_of(RECORD_ALIGN)));
    }
    let thread_id = word(THREAD, &mut next)?.unwrap_or(carried.thread_id);
    let timestamp_ns = word(TIME, &mut next)?.unwrap_or(carried.timestamp_ns);
    let result = word(RESULT, &mut next)?.map_or(0, |r| r as i64 as i32);
    let field_count = ((header >> FIELD_COUNT_SHIFT) & 0x1f) as u8;
    let mut kinds = header >> KINDS_SHIFT;
    if usize::from(field_count) > KINDS_IN_HEADER {
        kinds |= u64_at(bytes, next)? << 32;
        next += 8;
    }
    let fields = bytes.get(next..)?;
    // The length the writer measured, where the header holds it and the stream holds
    // that much (its last record ends unpadded); else the fields are walked. A reader
    // of a file checks the fields again as it decodes them: fewer bytes than they take
    // fail there.
    let given_end = at + 8 * ((header >> LEN_SHIFT) as usize & LEN_MAX_WORDS);
    let len = if given_end > at && given_end <= bytes.len() {
        given_end.checked_sub(next)?
    } else {
        fields_len(kinds, field_count, fields)?
    };
    let fields = fields.get(..len)?;
    *carried = Carried {
        key,
        thread_id,
        timestamp_ns,
    };
    let head = CompactHead {
        call_type: Call(header as u8),
        field_count,
        kinds,
        meta: CallMeta {
            thread_id,
            timestamp_ns,
            result,
        },
    };
    let record = EncodedRecord {
        key,
        frame_boundary,
        body: RecordBody::Compact { head, fields },
    };
    Some((record, (next + len).next_multiple_of(RECORD_ALIGN)))
}

/// Walks a compact record's `count` fields of `kinds` at the start of `bytes`, calling
/// `each` with each one's place, kind code and bytes (a scalar's value, a vector's
/// elements); returns the bytes they take. `None` when they are cut short, name an
/// unknown kind or more than [`MAX_DIRECT_FIELDS`], or `each` says so.
#[inline(always)]
fn walk_fields<'a>(
    kinds: u64,
    count: u8,
    bytes: &'a [u8],
    mut each: impl FnMut(usize, u64, &'a [u8]) -> Option<()>,
) -> Option<usize> {
    if usize::from(count) > MAX_DIRECT_FIELDS {
        return None;
    }
    let mut at = 0usize;
    for i in 0..usize::from(count) {
        let code = (kinds >> (4 * i)) & 0xf;
        let (value, next) = match scalar_len(code) {
            Some(len) => (bytes.get(at..at + len)?, at + len),
            None => vector_at(code, bytes, at)?,
        };
        at = next;
        each(i, code, value)?;
    }
    Some(at)
}

/// The bytes a scalar field of kind `code` (a four-bit code) takes (none for a field
/// left out); `None` for a vector or an unknown kind.
#[inline(always)]
fn scalar_len(code: u64) -> Option<usize> {
    // By table: a reader asks this of every field of every record, and a chain of
    // comparisons cost a draw's fields a dozen branches.
    const NOT_SCALAR: u8 = u8::MAX;
    const LENGTHS: [u8; 16] = {
        let mut lengths = [NOT_SCALAR; 16];
        lengths[kind::U64 as usize] = 8;
        lengths[kind::U32 as usize] = 4;
        lengths[kind::I32 as usize] = 4;
        lengths[kind::ABSENT as usize] = 0;
        lengths
    };
    match LENGTHS[(code & 0xf) as usize] {
        NOT_SCALAR => None,
        len => Some(usize::from(len)),
    }
}

/// The elements of the vector field of kind `code` whose count is at `at` of `bytes`,
/// and where the field ends; `None` when it is cut short or `code` is no vector's.
#[inline(always)]
fn vector_at(code: u64, bytes: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let element_size = match code {
        kind::BYTES | kind::BYTE_PLANES | kind::STRING => 1,
        kind::U32S => 4,
        kind::U64S => 8,
        _ => return None,
    };
    let count = u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?);
    let start = (at + 4).next_multiple_of(8);
    let end = start.checked_add((count as usize).checked_mul(element_size)?)?;
    Some((bytes.get(start..end)?, end))
}

/// Bytes a compact record's `count` fields of `kinds` take at the start of `bytes`
/// (what [`decode_fields`] reads, without making the fields); `None` as it says.
#[inline]
fn fields_len(kinds: u64, count: u8, bytes: &[u8]) -> Option<usize> {
    walk_fields(kinds, count, bytes, |_, _, _| Some(()))
}

/// Reads back a compact record's `count` fields of `kinds` from `bytes` (starting
/// 8-aligned in memory) into `fields`, borrowing them where they are aligned for their
/// elements; the fields read. `None` when they are cut short, name an unknown kind or
/// more than [`MAX_DIRECT_FIELDS`], or a vector's elements are not aligned in memory.
/// The caller's array is filled in place: a reader lays out one record after another
/// through the same array, not a fresh one to fill, return and copy each time.
pub(crate) fn decode_fields<'a, 'f>(
    kinds: u64,
    count: u8,
    bytes: &'a [u8],
    fields: &'f mut [DirectField<'a>; MAX_DIRECT_FIELDS],
) -> Option<&'f [DirectField<'a>]> {
    // As `walk_fields` reads them, with one decision per field: a reader of handed-over
    // records decodes every one of them here.
    let fields = fields.get_mut(..usize::from(count))?;
    let mut at = 0usize;
    for (i, field) in fields.iter_mut().enumerate() {
        let (read, next) = field_at((kinds >> (4 * i)) & 0xf, bytes, at)?;
        *field = read;
        at = next;
    }
    Some(fields)
}

/// The field of kind `code` stored at `at` of `bytes`, and where it ends; `None` when
/// it is cut short, names an unknown kind, or its elements are not aligned in memory.
#[inline(always)]
fn field_at(code: u64, bytes: &[u8], at: usize) -> Option<(DirectField<'_>, usize)> {
    Some(match code {
        kind::U64 => (
            DirectField::U64(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?)),
            at + 8,
        ),
        kind::U32 => (
            DirectField::U32(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?)),
            at + 4,
        ),
        kind::I32 => (
            DirectField::I32(i32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?)),
            at + 4,
        ),
        kind::ABSENT => (DirectField::Absent, at),
        _ => vector_field(code, bytes, at)?,
    })
}

/// [`field_at`] for the vector kinds.
#[inline]
fn vector_field(code: u64, bytes: &[u8], at: usize) -> Option<(DirectField<'_>, usize)> {
    let (value, next) = vector_at(code, bytes, at)?;
    let field = match code {
        kind::BYTES => DirectField::Bytes(value),
        kind::U32S => DirectField::U32s(aligned(value)?),
        kind::U64S => DirectField::U64s(aligned(value)?),
        // A flatbuffers string is UTF-8: its readers take it so, unchecked.
        kind::STRING => DirectField::Str(utf8(value)?),
        _ => DirectField::BytePlanes(value),
    };
    Some((field, next))
}

/// A compact record's fields read one at a time, in order, as [`decode_fields`] reads
/// them all: a consumer that takes each field once, front to back (a replay's draws and
/// binds), decodes only what it takes, with no array of fields in between. Past the
/// last field, or where the bytes do not read back, every field reads as
/// [`DirectField::Absent`].
#[derive(Clone, Copy, Debug)]
pub struct FieldCursor<'a> {
    /// The kinds of the fields not read yet, the next one's in the low four bits.
    kinds: u64,
    left: u8,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> FieldCursor<'a> {
    /// The first of `count` fields of `kinds` stored at the start of `bytes`.
    pub(crate) fn new(kinds: u64, count: u8, bytes: &'a [u8]) -> Self {
        FieldCursor {
            kinds,
            left: count.min(MAX_DIRECT_FIELDS as u8),
            bytes,
            at: 0,
        }
    }

    /// The next field, [`DirectField::Absent`] past the last.
    #[inline(always)]
    pub fn next_field(&mut self) -> DirectField<'a> {
        if self.left == 0 {
            return DirectField::Absent;
        }
        let code = self.kinds & 0xf;
        self.kinds >>= 4;
        self.left -= 1;
        let read = field_at(code, self.bytes, self.at);
        match read {
            Some((field, next)) => {
                self.at = next;
                field
            }
            // Bytes that do not read back end the record: nothing after them is read.
            None => {
                self.left = 0;
                DirectField::Absent
            }
        }
    }

    /// The next field's `N` bytes, where it is a scalar of kind `code` that reads back;
    /// else `None`, the field not taken.
    #[inline(always)]
    fn scalar<const N: usize>(&mut self, code: u64) -> Option<[u8; N]> {
        if self.left == 0 || self.kinds & 0xf != code {
            return None;
        }
        let bytes: [u8; N] = self.bytes.get(self.at..self.at + N)?.try_into().ok()?;
        self.kinds >>= 4;
        self.left -= 1;
        self.at += N;
        Some(bytes)
    }

    /// The next field, where it is a `u64`; else `None`, with the field taken.
    #[inline(always)]
    pub fn u64(&mut self) -> Option<u64> {
        match self.scalar(kind::U64) {
            Some(bytes) => Some(u64::from_le_bytes(bytes)),
            None => self.other_field(),
        }
    }

    /// The next field, where it is a `u32`; else `None`, with the field taken.
    #[inline(always)]
    pub fn u32(&mut self) -> Option<u32> {
        match self.scalar(kind::U32) {
            Some(bytes) => Some(u32::from_le_bytes(bytes)),
            None => self.other_field(),
        }
    }

    /// The next field, where it is an `i32`; else `None`, with the field taken.
    #[inline(always)]
    pub fn i32(&mut self) -> Option<i32> {
        match self.scalar(kind::I32) {
            Some(bytes) => Some(i32::from_le_bytes(bytes)),
            None => self.other_field(),
        }
    }

    /// Takes a field of a kind other than the one asked for (or past the last): `None`.
    #[cold]
    fn other_field<T>(&mut self) -> Option<T> {
        self.next_field();
        None
    }
}

/// Whether a compact record's `count` fields of `kinds` read back from `bytes` as
/// [`decode_fields`] reads them (the same checks, without making the fields): what a
/// reader checks of a record it hands over unread.
///
/// Scalars are only counted, their bytes checked once at the end (each field starts
/// where the one before it ends, so the last end bounds them all): a reader checks
/// every record it hands over so, and slicing each scalar cost a draw's four fields
/// four bounds checks.
pub(crate) fn fields_read_back(kinds: u64, count: u8, bytes: &[u8]) -> bool {
    if usize::from(count) > MAX_DIRECT_FIELDS {
        return false;
    }
    let mut at = 0usize;
    for i in 0..usize::from(count) {
        let code = (kinds >> (4 * i)) & 0xf;
        if let Some(len) = scalar_len(code) {
            at += len;
            continue;
        }
        let Some((value, next)) = vector_at(code, bytes, at) else {
            return false;
        };
        let reads_back = match code {
            kind::U32S => aligned::<u32>(value).is_some(),
            kind::U64S => aligned::<u64>(value).is_some(),
            kind::STRING => utf8(value).is_some(),
            // Byte vectors are taken as they are.
            _ => true,
        };
        if !reads_back {
            return false;
        }
        at = next;
    }
    at <= bytes.len()
}

/// `bytes` as text, when they are UTF-8. The strings records hold are command names
/// and labels, nearly always ASCII: checked as such first, a word at a time, which
/// costs a fraction of the full check.
#[inline(always)]
fn utf8(bytes: &[u8]) -> Option<&str> {
    if bytes.is_ascii() {
        // SAFETY: ASCII bytes are valid UTF-8.
        return Some(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes).ok()
}

/// An element type of a compact record's vectors: an integer, every bit pattern of
/// which is a value.
trait Plain {}
impl Plain for u32 {}
impl Plain for u64 {}

/// `bytes` as a slice of `T`, when they are aligned for it and fill it exactly.
#[inline(always)]
fn aligned<T: Plain>(bytes: &[u8]) -> Option<&[T]> {
    if bytes.is_empty() {
        return Some(&[]);
    }
    // Two remainders, where `align_to` works out the aligned middle in general: a
    // reader checks every vector of every record so.
    if bytes.as_ptr() as usize % std::mem::align_of::<T>() != 0
        || bytes.len() % std::mem::size_of::<T>() != 0
    {
        return None;
    }
    // SAFETY: `T` is a plain integer type: every bit pattern is a value; the bytes
    // start aligned for it and hold a whole number of its elements.
    Some(unsafe {
        std::slice::from_raw_parts(
            bytes.as_ptr().cast::<T>(),
            bytes.len() / std::mem::size_of::<T>(),
        )
    })
}

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

    /// Reads every record of `bytes` back.
    fn read_all(bytes: &[u8]) -> Vec<EncodedRecord<'_>> {
        let (mut at, mut carried, mut records) = (0, Carried::default(), Vec::new());
        while at < bytes.len() {
            let (record, next) = read(bytes, at, &mut carried).expect("reads back");
            records.push(record);
            at = next;
        }
        records
    }

    /// A block holding one compact record with `fields`, key 1.
    fn one_draw(fields: &[DirectField<'_>]) -> Vec<u8> {
        let mut out = Vec::new();
        append_compact(
            &mut out,
            &mut Carried::default(),
            1,
            meta(),
            Call::CmdDraw,
            fields,
        );
        out
    }

    /// A compact record's head, and its fields decoded and written out for comparison.
    fn decoded(record: &EncodedRecord<'_>) -> (CompactHead, String) {
        let RecordBody::Compact { head, fields } = record.body else {
            panic!("a compact record");
        };
        let mut room = [DirectField::Absent; MAX_DIRECT_FIELDS];
        let decoded = decode_fields(head.kinds, head.field_count, fields, &mut room).unwrap();
        let fields = format!("{decoded:?}");
        (head, fields)
    }

    #[test]
    fn bytes_split_as_written_are_stored_as_the_planes_split_before() {
        for len in [0, 3, 64, 67, 300, 1001] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 13 + i / 7) as u8).collect();
            let mut planes = Vec::new();
            crate::byte_planes::split_into(&bytes, &mut planes);
            let split_before = one_draw(&[DirectField::U64(9), DirectField::BytePlanes(&planes)]);
            let split_in_place =
                one_draw(&[DirectField::U64(9), DirectField::BytesAsPlanes(&bytes)]);
            assert_eq!(split_in_place, split_before, "len {len}");
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
            DirectField::Str("vkCmdSetViewport"),
            DirectField::Absent,
            DirectField::Str(""),
        ];
        let mut out = vec![0xee];
        let mut carried = Carried::default();
        append_compact(&mut out, &mut carried, 5, meta(), Call::CmdDraw, &fields);
        assert!(out[1..8].iter().all(|b| *b == 0), "padding is zeros");
        let mut read_back = Carried::default();
        let (record, end) = read(&out, 8, &mut read_back).expect("reads back");
        assert_eq!(end, out.len().next_multiple_of(8));
        assert_eq!(read_back, carried);
        let (head, decoded) = decoded(&record);
        assert_eq!(
            (record.key, head.call_type, head.meta),
            (5, Call::CmdDraw, meta())
        );
        assert_eq!(decoded, format!("{:?}", &fields[..]));
    }

    #[test]
    fn a_cursor_takes_the_fields_decode_fields_reads_one_at_a_time() {
        let fields = [
            DirectField::U64(0x0102_0304_0506_0708),
            DirectField::U32(5),
            DirectField::I32(-9),
            DirectField::Bytes(&[1, 2, 3]),
            DirectField::U64s(&[u64::MAX, 4]),
            DirectField::Absent,
            DirectField::U32s(&[10, 20, 30]),
            DirectField::U32(6),
            DirectField::Str("vkCmdSetViewport"),
        ];
        let out = one_draw(&fields);
        let (record, _) = read(&out, 0, &mut Carried::default()).expect("reads back");
        let RecordBody::Compact {
            head,
            fields: bytes,
        } = record.body
        else {
            panic!("a compact record");
        };
        let cursor = || FieldCursor::new(head.kinds, head.field_count, bytes);
        let mut taken = cursor();
        let all: Vec<DirectField<'_>> = (0..fields.len() + 2).map(|_| taken.next_field()).collect();
        assert_eq!(
            format!("{all:?}"),
            format!("{:?}", [&fields[..], &[DirectField::Absent; 2]].concat()),
            "past the last field, every one is absent"
        );
        // The typed takes read their kind straight, and take a field of another kind
        // as none.
        let mut typed = cursor();
        assert_eq!(typed.u64(), Some(0x0102_0304_0506_0708));
        assert_eq!(typed.u32(), Some(5));
        assert_eq!(typed.u32(), None, "an i32 is no u32");
        assert_eq!(typed.u64(), None, "bytes are no u64");
        assert!(matches!(
            typed.next_field(),
            DirectField::U64s(&[u64::MAX, 4])
        ));
        assert!(matches!(typed.next_field(), DirectField::Absent));
        assert!(matches!(
            typed.next_field(),
            DirectField::U32s(&[10, 20, 30])
        ));
        assert_eq!(typed.u32(), Some(6));
        assert_eq!(typed.i32(), None);
        assert_eq!(typed.u32(), None, "past the last field");
        // Bytes cut short end the record where they stop reading back.
        let mut cut = FieldCursor::new(head.kinds, head.field_count, &bytes[..10]);
        assert_eq!(cut.u64(), Some(0x0102_0304_0506_0708));
        assert_eq!(cut.u32(), None);
        assert!(matches!(cut.next_field(), DirectField::Absent));
    }

    #[test]
    fn a_string_that_is_not_utf8_does_not_read_back() {
        let mut out = Vec::new();
        let fields = [DirectField::Str("vk\u{7e}"), DirectField::Absent];
        append_compact(
            &mut out,
            &mut Carried::default(),
            1,
            meta(),
            Call::VulkanCall,
            &fields,
        );
        // The string's last byte made one UTF-8 does not allow (as a damaged file has it).
        let last = out
            .iter()
            .rposition(|&b| b == 0x7e)
            .expect("the string is written");
        out[last] = 0xff;
        let (record, _) = read(&out, 0, &mut Carried::default()).expect("reads back");
        let RecordBody::Compact { head, fields } = record.body else {
            panic!("a compact record");
        };
        let mut room = [DirectField::Absent; MAX_DIRECT_FIELDS];
        assert!(decode_fields(head.kinds, head.field_count, fields, &mut room).is_none());
    }

    #[test]
    fn what_repeats_is_written_once_and_read_back_for_every_record() {
        let mut out = Vec::new();
        let mut carried = Carried::default();
        let draw = [DirectField::U64(1), DirectField::U32(3)];
        let same = CallMeta {
            result: 0,
            ..meta()
        };
        append_compact(&mut out, &mut carried, 9, same, Call::CmdDraw, &draw);
        let first = out.len();
        append_compact(&mut out, &mut carried, 9, same, Call::CmdDraw, &draw);
        // The header word and the fields: no key, thread, timestamp or result.
        assert_eq!(out.len() - first.next_multiple_of(8), 8 + 8 + 4);
        let flatbuffer = [1u8, 2, 3, 4, 5];
        append_finished(&mut out, &mut carried, 11, true, &flatbuffer);
        let later = CallMeta {
            timestamp_ns: 150,
            ..same
        };
        append_compact(&mut out, &mut carried, 11, later, Call::CmdDraw, &draw);
        let records = read_all(&out);
        let summary: Vec<_> = records
            .iter()
            .map(|r| match r.body {
                RecordBody::Compact { head, .. } => (r.key, r.frame_boundary, Some(head.meta)),
                RecordBody::Finished(bytes) => {
                    assert_eq!(bytes, flatbuffer);
                    (r.key, r.frame_boundary, None)
                }
            })
            .collect();
        assert_eq!(
            summary,
            [
                (9, false, Some(same)),
                (9, false, Some(same)),
                (11, true, None),
                (11, false, Some(later)),
            ]
        );
    }

    #[test]
    fn more_than_eight_fields_keep_their_kinds() {
        let fields: Vec<_> = (0..12)
            .map(|i| {
                if i % 3 == 0 {
                    DirectField::U64(i)
                } else {
                    DirectField::I32(-(i as i32))
                }
            })
            .collect();
        let out = one_draw(&fields);
        let (record, _) = read(&out, 0, &mut Carried::default()).unwrap();
        assert_eq!(decoded(&record).1, format!("{fields:?}"));
    }

    #[test]
    fn vectors_of_every_length_read_back_whole() {
        // Every tail length copied in line, and the lengths copied by `memcpy`.
        let bytes: Vec<u8> = (0..300u32).map(|i| (i * 7 + 1) as u8).collect();
        let words: Vec<u64> = (0..40u64)
            .map(|i| i.wrapping_mul(0x0101_0101_0101_0101))
            .collect();
        let mut out = Vec::new();
        let mut carried = Carried::default();
        let mut made = Vec::new();
        for len in (0..24).chain([255, 256, 257, 300]) {
            let fields = [
                DirectField::U32(len as u32),
                DirectField::Bytes(&bytes[..len]),
                DirectField::U64s(&words[..len.min(words.len())]),
            ];
            append_compact(&mut out, &mut carried, 1, meta(), Call::CmdDraw, &fields);
            made.push(format!("{fields:?}"));
        }
        let read_back: Vec<_> = read_all(&out).iter().map(|r| decoded(r).1).collect();
        assert_eq!(read_back, made);
    }

    /// Walks `bytes` record by record with [`skip`] and with [`read`] side by side,
    /// asserting that they agree at each record (verdict, carried values, next record);
    /// returns how many records both read.
    fn skip_agrees_with_read(bytes: &[u8], what: &str) -> usize {
        let (mut at, mut by_read, mut by_skip) = (0, Carried::default(), Carried::default());
        let mut count = 0;
        while at < bytes.len() {
            let read = read(bytes, at, &mut by_read).map(|(record, next)| Skipped {
                key: record.key,
                frame_boundary: record.frame_boundary,
                next,
            });
            let skipped = skip(bytes, at, &mut by_skip);
            assert_eq!(skipped, read, "{what}: record {count} at {at}");
            let Some(read) = read else {
                return count;
            };
            assert_eq!(by_skip, by_read, "{what}: carried after record {count}");
            at = read.next;
            count += 1;
        }
        count
    }

    #[test]
    fn skipping_a_record_agrees_with_reading_it() {
        let mut out = Vec::new();
        let mut carried = Carried::default();
        let draw = [DirectField::U64(1), DirectField::U32(3)];
        let many: Vec<_> = (0..11).map(DirectField::U64).collect();
        let words = [5u64; 9];
        let calm = CallMeta {
            result: 0,
            ..meta()
        };
        append_compact(&mut out, &mut carried, 9, meta(), Call::CmdDraw, &draw);
        append_compact(&mut out, &mut carried, 9, calm, Call::CmdDraw, &draw);
        append_compact(&mut out, &mut carried, 13, calm, Call::CmdDraw, &many);
        append_finished(&mut out, &mut carried, 13, true, &[1, 2, 3, 4, 5]);
        let other_thread = CallMeta {
            thread_id: 8,
            timestamp_ns: 120,
            ..calm
        };
        let vectors = [DirectField::U64s(&words), DirectField::Bytes(b"abc")];
        append_compact(
            &mut out,
            &mut carried,
            15,
            other_thread,
            Call::CmdDraw,
            &vectors,
        );
        append_compact(&mut out, &mut carried, 15, other_thread, Call::CmdDraw, &[]);
        assert_eq!(skip_agrees_with_read(&out, "as written"), 6);
        // Cut anywhere, and every byte damaged two ways: the same verdict at each record.
        for len in 0..out.len() {
            skip_agrees_with_read(&out[..len], &format!("cut at {len}"));
        }
        for at in 0..out.len() {
            for damage in [0xff, 0x10] {
                let mut damaged = out.clone();
                damaged[at] ^= damage;
                skip_agrees_with_read(&damaged, &format!("byte {at} ^ {damage:#x}"));
            }
        }
        // Each record's length field set short of, at and past its header words.
        let mut starts = vec![0];
        let mut walked = Carried::default();
        while let Some((_, next)) = read(&out, *starts.last().unwrap(), &mut walked) {
            starts.push(next);
        }
        for &start in &starts[..starts.len() - 1] {
            for words in 0..8u64 {
                let mut damaged = out.clone();
                let header = u64_at(&damaged, start).unwrap();
                let header = header & !((LEN_MAX_WORDS as u64) << LEN_SHIFT) | words << LEN_SHIFT;
                damaged[start..start + 8].copy_from_slice(&header.to_le_bytes());
                skip_agrees_with_read(&damaged, &format!("record at {start} given {words} words"));
            }
        }
        // A record longer than its header's length field holds is read whole.
        let long = vec![7u8; 8 * LEN_MAX_WORDS + 100];
        append_compact(
            &mut out,
            &mut carried,
            15,
            calm,
            Call::CmdDraw,
            &[DirectField::Bytes(&long)],
        );
        append_compact(&mut out, &mut carried, 17, calm, Call::CmdDraw, &draw);
        assert_eq!(skip_agrees_with_read(&out, "with a long record"), 8);
    }

    #[test]
    fn a_record_cut_short_does_not_read_back() {
        let out = one_draw(&[DirectField::U64(1), DirectField::U32s(&[1, 2, 3])]);
        for len in 0..out.len() {
            assert!(
                read(&out[..len], 0, &mut Carried::default()).is_none(),
                "cut at {len}"
            );
        }
        assert!(read(&out, 0, &mut Carried::default()).is_some());
    }
}
