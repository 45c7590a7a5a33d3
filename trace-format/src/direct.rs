//! Records of the commands a program issues by the thousand, laid out byte by byte
//! without a flatbuffers builder.
//!
//! A builder writes back to front, searches the vtables it wrote for one to share and
//! keeps its own buffer; for a call table of scalars and scalar vectors none of that is
//! needed. [`append_direct`] writes the same flatbuffer a builder would accept (a
//! `Record` root, its envelope, the call's table with every field given, then the
//! vectors), front to back, straight into the buffer it goes to: the record block of the
//! calling thread. Readers and the verifier see an ordinary record (a test decodes both
//! encodings of every field kind and compares them).
//!
//! Layout, from the record's 8-aligned start: the root offset; the `Record` vtable; its
//! table (the vtable offset, the 8-aligned envelope, the call's offset, the call type);
//! the call's vtable; its table (the vtable offset, then the 8-byte fields, then the
//! 4-byte fields and vector offsets, so every field is aligned to its size); each vector
//! (its length, then its elements aligned to their size).

use std::sync::OnceLock;

use crate::compact::kind;
use crate::generated::trace::Call;
use crate::generated::trace_layout::TABLES;
use crate::record_block::RECORD_ALIGN;
use crate::trace::CallMeta;
use crate::verify::Kind;

/// One field of a call table, in the schema's field order.
#[derive(Clone, Copy, Debug)]
pub enum DirectField<'a> {
    /// A `ulong` (handles, sizes, offsets).
    U64(u64),
    /// A `uint`.
    U32(u32),
    /// An `int`.
    I32(i32),
    /// A `[ubyte]`.
    Bytes(&'a [u8]),
    /// A `[ubyte]` stored as byte planes ([`crate::byte_planes`]): these are the
    /// planes; the record lays out to the bytes they hold.
    BytePlanes(&'a [u8]),
    /// A `[ubyte]` of these bytes, to be stored as byte planes: a compact record
    /// splits them as it is written (no buffer of planes in between); a finished
    /// record holds them as they are. The record's reader sees the bytes.
    BytesAsPlanes(&'a [u8]),
    /// A `[uint]`.
    U32s(&'a [u32]),
    /// A `[ulong]`.
    U64s(&'a [u64]),
    /// A `string`, laid out with the terminating NUL (read back, checked UTF-8 once).
    Str(&'a str),
    /// A field left out (a vector of tables, say, that the record does not hold): no
    /// place in the table, 0 in the vtable. Never for a field the schema requires.
    Absent,
}

impl DirectField<'_> {
    /// Bytes the field takes inline in the table.
    /// Bytes the field takes in its table: a field left out keeps the place of the
    /// offset it stands for, so that a call's table has one layout however many of
    /// its fields a record leaves out (the layout is made once a call type).
    fn inline_size(&self) -> usize {
        match self {
            DirectField::U64(_) => 8,
            _ => 4,
        }
    }
}

/// Fields a direct record's call table has at most.
pub const MAX_DIRECT_FIELDS: usize = 16;

/// Where the `Record` table starts, from the record's start: after the root offset
/// (4 bytes), the 10-byte vtable and padding that puts the envelope at 24.
const RECORD_TABLE: usize = 20;
/// The `Record` table's inline bytes: its vtable offset, the envelope (32), the call's
/// offset (4), the call type (1) and padding.
const RECORD_TABLE_BYTES: usize = 44;
/// Where the call's vtable starts, from the record's start.
const CALL_VTABLE: usize = RECORD_TABLE + RECORD_TABLE_BYTES;

/// Bytes of a record before its vectors at most: the root offset, the `Record` vtable
/// and table, the call's vtable (up to [`MAX_DIRECT_FIELDS`] entries) and table.
const HEAD_MAX: usize = CALL_VTABLE + 4 + 2 * MAX_DIRECT_FIELDS + 4 + 4 + 8 * MAX_DIRECT_FIELDS;

/// The fixed part of a call type's records: every byte before the vectors but the
/// envelope and the field values, and where the fields go.
struct Head {
    bytes: [u8; HEAD_MAX],
    len: usize,
    /// Each field's place, from the record's start.
    field_at: [u16; MAX_DIRECT_FIELDS],
}

impl Head {
    /// The head of records of `call_type` with fields of the kinds of `fields`.
    fn new(call_type: Call, fields: &[DirectField<'_>]) -> Self {
        // The call table's place: after its vtable, 4 bytes before an 8-byte boundary
        // when it holds 8-byte fields (so they are aligned after the vtable offset).
        let vtable_len = 4 + 2 * fields.len();
        let has_u64 = fields.iter().any(|f| f.inline_size() == 8);
        let mut table = (CALL_VTABLE + vtable_len).next_multiple_of(4);
        if has_u64 && (table + 4) % 8 != 0 {
            table += 4;
        }
        // Each field's place in the table: 8-byte fields first.
        let mut field_at = [0u16; MAX_DIRECT_FIELDS];
        let mut at = 4;
        for size in [8, 4] {
            for (i, field) in fields.iter().enumerate() {
                if field.inline_size() == size {
                    field_at[i] = at as u16;
                    at += size;
                }
            }
        }
        let table_len = at;
        let mut head = Head {
            bytes: [0; HEAD_MAX],
            len: table + table_len,
            field_at: [0; MAX_DIRECT_FIELDS],
        };
        let buf = &mut head.bytes;
        // The root offset and the Record vtable: 10 bytes, the table's size, the
        // envelope at 4, the call type at 40, the call at 36.
        put(buf, 0, &(RECORD_TABLE as u32).to_le_bytes());
        for (i, half) in [10u16, RECORD_TABLE_BYTES as u16, 4, 40, 36]
            .iter()
            .enumerate()
        {
            put(buf, 4 + 2 * i, &half.to_le_bytes());
        }
        // The Record table: its vtable 16 bytes before it, the envelope (left to each
        // record), the call's offset and type.
        put(
            buf,
            RECORD_TABLE,
            &((RECORD_TABLE - 4) as i32).to_le_bytes(),
        );
        let call_offset_at = RECORD_TABLE + 36;
        put(
            buf,
            call_offset_at,
            &((table - call_offset_at) as u32).to_le_bytes(),
        );
        buf[RECORD_TABLE + 40] = call_type.0;
        // The call's vtable, and its table's vtable offset.
        put(buf, CALL_VTABLE, &(vtable_len as u16).to_le_bytes());
        put(buf, CALL_VTABLE + 2, &(table_len as u16).to_le_bytes());
        // Every field has its place; one a record leaves out is marked so in that
        // record's copy of the vtable (`append_direct`).
        for (i, at) in field_at[..fields.len()].iter().enumerate() {
            put(buf, CALL_VTABLE + 4 + 2 * i, &at.to_le_bytes());
            head.field_at[i] = (table + usize::from(*at)) as u16;
        }
        put(buf, table, &((table - CALL_VTABLE) as i32).to_le_bytes());
        head
    }
}

/// Each call type's head, made at its first record.
static HEADS: [OnceLock<Head>; 256] = [const { OnceLock::new() }; 256];

/// Appends a record of `call_type` whose call table holds `fields` (by field id; an
/// offset field may be [`DirectField::Absent`], in one record and not the next) to
/// `out`, starting at the next 8-byte boundary; returns where it starts. A call type's
/// fields must be of the schema's kinds (checked in debug builds).
///
/// # Panics
/// With more than [`MAX_DIRECT_FIELDS`] fields (a programming error: the callers pass
/// fixed lists).
pub fn append_direct(
    out: &mut Vec<u8>,
    seq: u64,
    meta: CallMeta,
    call_type: Call,
    fields: &[DirectField<'_>],
) -> usize {
    assert!(fields.len() <= MAX_DIRECT_FIELDS, "too many direct fields");
    debug_assert_eq!(schema_mismatch(call_type, fields), None);
    let head = HEADS[usize::from(call_type.0)].get_or_init(|| Head::new(call_type, fields));
    let start = out.len().next_multiple_of(RECORD_ALIGN);

    // The head and the scalars in place, then each vector appended after its padding,
    // in one pass: nothing is written twice (a large vector, mapped memory's contents,
    // is copied once, not zero-filled first).
    out.reserve(HEAD_COPY + RECORD_ALIGN);
    pad_to(out, start);
    if head.len <= HEAD_COPY {
        // A copy of a constant size is a few vector moves, not a call to memcpy (and
        // the memset before it): on the NVIDIA machine the layer's calls into libc's
        // small copies took as long as the rest of recording a call.
        out.extend_from_slice(&head.bytes[..HEAD_COPY]);
        out.truncate(start + head.len);
    } else {
        out.extend_from_slice(&head.bytes[..head.len]);
    }
    let buf = &mut out[start..];
    put(buf, RECORD_TABLE + 4, &seq.to_le_bytes());
    put(buf, RECORD_TABLE + 12, &meta.thread_id.to_le_bytes());
    put(buf, RECORD_TABLE + 20, &meta.timestamp_ns.to_le_bytes());
    put(buf, RECORD_TABLE + 28, &meta.result.to_le_bytes());
    for (i, field) in fields.iter().enumerate() {
        let at = usize::from(head.field_at[i]);
        match *field {
            DirectField::U64(v) => put(&mut out[start..], at, &v.to_le_bytes()),
            DirectField::U32(v) => put(&mut out[start..], at, &v.to_le_bytes()),
            DirectField::I32(v) => put(&mut out[start..], at, &v.to_le_bytes()),
            DirectField::Bytes(b) | DirectField::BytesAsPlanes(b) => {
                push_vector(out, start, at, b.len(), 1);
                out.extend_from_slice(b);
            }
            DirectField::BytePlanes(planes) => {
                push_vector(out, start, at, planes.len(), 1);
                crate::byte_planes::join_into(planes, out);
            }
            DirectField::U32s(v) => {
                push_vector(out, start, at, v.len(), 4);
                v.iter()
                    .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            }
            DirectField::U64s(v) => {
                push_vector(out, start, at, v.len(), 8);
                v.iter()
                    .for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            }
            DirectField::Str(s) => {
                push_vector(out, start, at, s.len(), 1);
                out.extend_from_slice(s.as_bytes());
                out.push(0);
            }
            // Absent in this record: 0 in its vtable entry, its place left zero.
            DirectField::Absent => put(
                &mut out[start..],
                CALL_VTABLE + 4 + 2 * i,
                &0u16.to_le_bytes(),
            ),
        }
    }
    start
}

/// Starts a vector of `len` elements of `align` bytes at the end of the record that
/// begins at `start`: its length 4-aligned, its elements aligned to their size, and the
/// table's field at `at` pointing to it.
#[inline(always)]
fn push_vector(out: &mut Vec<u8>, start: usize, at: usize, len: usize, align: usize) {
    let mut length_at = (out.len() - start).next_multiple_of(4);
    if align == 8 && (length_at + 4) % 8 != 0 {
        length_at += 4;
    }
    pad_to(out, start + length_at);
    put(
        &mut out[start..],
        at,
        &((length_at - at) as u32).to_le_bytes(),
    );
    out.extend_from_slice(&(len as u32).to_le_bytes());
}

/// Bytes of a record's head copied in one constant-size move when the head fits (the
/// head's bytes past its length are zeros, and are cut off again).
const HEAD_COPY: usize = 128;

/// Appends zeros up to `len` (a few bytes of padding: a loop, not a call to memset).
#[inline(always)]
fn pad_to(out: &mut Vec<u8>, len: usize) {
    while out.len() < len {
        out.push(0);
    }
}

/// Writes `bytes` at `at`.
#[inline(always)]
fn put(buf: &mut [u8], at: usize, bytes: &[u8]) {
    buf[at..at + bytes.len()].copy_from_slice(bytes);
}

/// How `fields` differ from the schema's table for `call_type`, if they do: a field
/// missing, extra, or of another kind or size.
pub fn schema_mismatch(call_type: Call, fields: &[DirectField<'_>]) -> Option<String> {
    let record = TABLES.iter().find(|t| t.name == "Record")?;
    let members = record.fields.iter().find_map(|f| match f.kind {
        Kind::Union(members) => Some(members),
        _ => None,
    })?;
    let Some(&table) = usize::from(call_type.0)
        .checked_sub(1)
        .and_then(|i| members.get(i))
    else {
        return Some(format!("call type {} is not in the schema", call_type.0));
    };
    let table = &TABLES[usize::from(table)];
    if table.fields.len() != fields.len() {
        return Some(format!(
            "{}: {} fields given, the schema has {}",
            table.name,
            fields.len(),
            table.fields.len()
        ));
    }
    for field in table.fields {
        let index = usize::from(field.voffset.saturating_sub(4) / 2);
        let given = fields.get(index);
        let fits = matches!(
            (field.kind, given),
            (Kind::Inline { size: 8, .. }, Some(DirectField::U64(_)))
                | (
                    Kind::Inline { size: 4, .. },
                    Some(DirectField::U32(_) | DirectField::I32(_))
                )
                | (
                    Kind::Vector { size: 1, .. },
                    Some(
                        DirectField::Bytes(_)
                            | DirectField::BytePlanes(_)
                            | DirectField::BytesAsPlanes(_)
                    )
                )
                | (Kind::Vector { size: 4, .. }, Some(DirectField::U32s(_)))
                | (Kind::Vector { size: 8, .. }, Some(DirectField::U64s(_)))
                | (Kind::String, Some(DirectField::Str(_)))
        ) || (may_be_absent(field) && matches!(given, Some(DirectField::Absent)));
        if !fits {
            return Some(format!(
                "{}.{}: the schema's {:?}, given {:?}",
                table.name, field.name, field.kind, given
            ));
        }
    }
    None
}

/// Whether a record may leave `field` out: a field reached through an offset (a vector,
/// a string, a table) that the schema does not require.
fn may_be_absent(field: &crate::verify::Field) -> bool {
    !field.required && !matches!(field.kind, Kind::Inline { .. } | Kind::Union(_))
}

/// Whether a stored compact record of `call_type` with `count` fields of `kinds` (four
/// bits a field, [`crate::compact`]'s codes) lays out as the schema's table for that
/// call: the table's fields, in order, each of its kind and size — all of them, or the
/// first of them where the record was written before the table grew and the rest are
/// ones a record may lack. What a reader checks before laying out a record it read from
/// a file.
pub(crate) fn stored_fields_fit(call_type: Call, count: u8, kinds: u64) -> bool {
    let Some(expected) = expected_fields(call_type) else {
        return false;
    };
    if count > expected.count {
        return false;
    }
    // A record written before its table grew holds fewer fields: each it lacks must be
    // one it can be laid out without ([`table_defaults`]).
    (0..usize::from(expected.count)).all(|i| match i < usize::from(count) {
        true => expected.allowed[i] & (1 << ((kinds >> (4 * i)) & 0xf)) != 0,
        false => expected.default[i].is_some(),
    })
}

/// What the schema's table for `call_type` holds, where a direct record can hold its
/// call.
fn expected_fields(call_type: Call) -> Option<&'static ExpectedFields> {
    static EXPECTED: OnceLock<[Option<ExpectedFields>; 256]> = OnceLock::new();
    let expected =
        EXPECTED.get_or_init(|| std::array::from_fn(|t| ExpectedFields::of(Call(t as u8))));
    expected[usize::from(call_type.0)].as_ref()
}

/// Each field of the schema's table for `call_type`, as a stored record of fewer
/// fields (written before the table grew) is laid out with it where it lacks it: a
/// scalar as 0, its default; a vector, string or table left out. Empty where a direct
/// record cannot hold the call; `None` for a field no record may lack.
fn table_defaults(call_type: Call) -> &'static [Option<DirectField<'static>>] {
    expected_fields(call_type).map_or(&[], |e| &e.default[..usize::from(e.count)])
}

/// The `given` fields of a stored record of `call_type` in `room`, followed by the
/// defaults ([`table_defaults`]) of those its table has beyond them: every field of the
/// table, as each call type is laid out (and handed over) with one list of fields.
pub(crate) fn with_lacked_fields<'r, 'a>(
    call_type: Call,
    room: &'r mut [DirectField<'a>; MAX_DIRECT_FIELDS],
    given: usize,
) -> &'r [DirectField<'a>] {
    let defaults = table_defaults(call_type);
    let all = defaults.len().clamp(given, MAX_DIRECT_FIELDS);
    let lacked = defaults.get(given..).unwrap_or_default();
    for (slot, default) in room[given..all].iter_mut().zip(lacked) {
        *slot = default.unwrap_or(DirectField::Absent);
    }
    &room[..all]
}

/// The record shapes (call type, field count, kinds) a reader found to fit the schema
/// ([`stored_fields_fit`]) most recently: a chunk's records take a few shapes over and
/// over (a draw, a bind, a push), so each is checked against the schema once, not at
/// every record.
#[derive(Clone, Copy, Default)]
pub(crate) struct FittingShapes {
    /// `(call type, field count, kinds)`, newest first; a call type of 0 (no call)
    /// marks an empty entry.
    shapes: [(u8, u8, u64); 4],
}

impl FittingShapes {
    /// Whether a stored record of `call_type` with `count` fields of `kinds` fits its
    /// call's table, as [`stored_fields_fit`] says.
    #[inline(always)]
    pub(crate) fn fit(&mut self, call_type: Call, count: u8, kinds: u64) -> bool {
        let shape = (call_type.0, count, kinds);
        if call_type.0 != 0 && self.shapes.contains(&shape) {
            return true;
        }
        self.check(shape)
    }

    #[inline(never)]
    fn check(&mut self, shape: (u8, u8, u64)) -> bool {
        let (call_type, count, kinds) = shape;
        if !stored_fields_fit(Call(call_type), count, kinds) {
            return false;
        }
        self.shapes.copy_within(..3, 1);
        self.shapes[0] = shape;
        true
    }
}

/// The fields the schema's table for one call has, as compact kind codes.
struct ExpectedFields {
    count: u8,
    /// For each field, a bit per kind code it may be stored as.
    allowed: [u16; MAX_DIRECT_FIELDS],
    /// For each field, what a record that lacks it is laid out with.
    default: [Option<DirectField<'static>>; MAX_DIRECT_FIELDS],
}

impl ExpectedFields {
    /// What records of `call_type` must hold; `None` when the call is not in the schema
    /// or its table holds a field a direct record cannot (a string, a table, a union).
    fn of(call_type: Call) -> Option<Self> {
        let record = TABLES.iter().find(|t| t.name == "Record")?;
        let members = record.fields.iter().find_map(|f| match f.kind {
            Kind::Union(members) => Some(members),
            _ => None,
        })?;
        let table = usize::from(call_type.0)
            .checked_sub(1)
            .and_then(|i| members.get(i))?;
        let table = &TABLES[usize::from(*table)];
        if table.fields.len() > MAX_DIRECT_FIELDS {
            return None;
        }
        let mut allowed = [0u16; MAX_DIRECT_FIELDS];
        let mut default = [None; MAX_DIRECT_FIELDS];
        for field in table.fields {
            let index = usize::from(field.voffset.checked_sub(4)? / 2);
            if index >= MAX_DIRECT_FIELDS {
                return None;
            }
            // The codes of `compact::kind`.
            let absent = match may_be_absent(field) {
                true => 1 << kind::ABSENT,
                false => 0,
            };
            allowed[index] = absent
                | match field.kind {
                    Kind::Inline { size: 8, .. } => 1 << kind::U64,
                    Kind::Inline { size: 4, .. } => 1 << kind::U32 | 1 << kind::I32,
                    Kind::Vector { size: 1, .. } => 1 << kind::BYTES | 1 << kind::BYTE_PLANES,
                    Kind::Vector { size: 4, .. } => 1 << kind::U32S,
                    Kind::Vector { size: 8, .. } => 1 << kind::U64S,
                    Kind::String => 1 << kind::STRING,
                    Kind::Table(_) | Kind::Tables(_) | Kind::Strings => 0,
                    _ => return None,
                };
            if allowed[index] == 0 {
                return None;
            }
            default[index] = match field.kind {
                Kind::Inline { size: 8, .. } => Some(DirectField::U64(0)),
                Kind::Inline { size: 4, .. } => Some(DirectField::U32(0)),
                _ if absent != 0 => Some(DirectField::Absent),
                _ => None,
            };
        }
        Some(ExpectedFields {
            count: table.fields.len() as u8,
            allowed,
            default,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shape the schema's table for `call_type` takes (each field its first allowed
    /// kind), if the call has a table a direct record can hold.
    fn fitting_shape(call_type: Call) -> Option<(u8, u64)> {
        let expected = ExpectedFields::of(call_type)?;
        let kinds = (0..usize::from(expected.count)).fold(0u64, |kinds, i| {
            let code = u64::from(expected.allowed[i].trailing_zeros());
            kinds | code << (4 * i)
        });
        Some((expected.count, kinds))
    }

    #[test]
    fn fitting_shapes_answer_as_the_schema_does_for_shapes_seen_and_new() {
        let calls: Vec<(Call, u8, u64)> = (1..=u8::MAX)
            .filter_map(|t| fitting_shape(Call(t)).map(|(n, k)| (Call(t), n, k)))
            .collect();
        assert!(
            calls.len() > 8,
            "only {} calls hold direct records",
            calls.len()
        );
        let mut shapes = FittingShapes::default();
        // Each fitting shape, then the same call with its first field of another kind,
        // with another count, and as another call's shape; three rounds, so that the
        // shapes kept are asked again.
        for _ in 0..3 {
            for (i, &(call, count, kinds)) in calls.iter().enumerate() {
                let (other, _, other_kinds) = calls[(i + 1) % calls.len()];
                let wrong_kind = kinds ^ 0xf;
                for (c, n, k) in [
                    (call, count, kinds),
                    (call, count, wrong_kind),
                    (call, count.wrapping_add(1), kinds),
                    (other, count, kinds),
                    (call, count, other_kinds),
                    (Call::NONE, 0, 0),
                ] {
                    assert_eq!(
                        shapes.fit(c, n, k),
                        stored_fields_fit(c, n, k),
                        "call {} with {n} fields of kinds {k:#x}",
                        c.0
                    );
                }
            }
        }
    }
}
