//! The payload verifier: checks a flatbuffer against layout tables generated from the
//! schema (`gen/layout.py`), so that the generated accessors can read it unchecked.
//!
//! It applies flatc's verifier rules, one for one, and accepts exactly what
//! `flatbuffers::root_with_opts` accepts (a test compares the two on mutated
//! payloads): every offset, vtable, field, vector and string lies inside the buffer and
//! is aligned as the accessors assume, strings are UTF-8 with their terminator, required
//! fields are present, a union's type and value come together, and the depth, table
//! count and apparent size stay within the options. It is several times faster than the
//! generic verifier because it walks a table of fields instead of building an error
//! trace at every step: the path to a bad field is only put together on failure.

use std::fmt;
use std::ops::Range;

use flatbuffers::VerifierOptions;

mod shape;
use shape::Shapes;

/// A table of the schema: its fields in the order flatc declares (and verifies) them.
#[derive(Debug)]
pub(crate) struct Table {
    /// The table's name in the schema.
    pub name: &'static str,
    /// Its fields.
    pub fields: &'static [Field],
}

/// A field of a table.
#[derive(Debug)]
pub(crate) struct Field {
    /// The field's name in the schema.
    pub name: &'static str,
    /// Its vtable offset (for a union, that of the value; the type's is 2 before).
    pub voffset: u16,
    /// Whether the schema marks it `(required)`.
    pub required: bool,
    /// What it holds.
    pub kind: Kind,
}

/// What a field holds.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// A scalar or a struct, inline in the table.
    Inline {
        /// Bytes.
        size: u16,
        /// The alignment the accessor assumes (1 for structs, byte arrays in Rust).
        align: u8,
    },
    /// A string.
    String,
    /// A table, by index in the layout's table list.
    Table(u16),
    /// A vector of scalars or structs.
    Vector {
        /// Bytes per element.
        size: u16,
        /// The elements' alignment.
        align: u8,
    },
    /// A vector of strings.
    Strings,
    /// A vector of tables, by index.
    Tables(u16),
    /// A union of tables: the member tables by type, the first for type 1.
    Union(&'static [u16]),
}

/// Why a payload was rejected, and where.
#[derive(Debug)]
pub struct Invalid {
    problem: Problem,
    /// The path to the bad place, innermost first.
    path: Vec<String>,
}

#[derive(Debug)]
enum Problem {
    OutOfBounds {
        start: usize,
        end: usize,
        len: usize,
    },
    Unaligned {
        pos: usize,
        align: usize,
    },
    BadSoffset {
        pos: usize,
    },
    MissingRequired {
        field: &'static str,
    },
    InconsistentUnion {
        field: &'static str,
    },
    Utf8 {
        range: Range<usize>,
    },
    MissingTerminator {
        range: Range<usize>,
    },
    TooManyTables,
    TooDeep,
    TooLarge,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.problem {
            Problem::OutOfBounds { start, end, len } => write!(
                f,
                "bytes {start:#x}..{end:#x} lie past the end of the {len}-byte payload"
            )?,
            Problem::Unaligned { pos, align } => {
                write!(f, "offset {pos:#x} is not aligned to {align} bytes")?
            }
            Problem::BadSoffset { pos } => write!(
                f,
                "the vtable offset at {pos:#x} points outside the payload"
            )?,
            Problem::MissingRequired { field } => write!(f, "required field `{field}` is missing")?,
            Problem::InconsistentUnion { field } => write!(
                f,
                "union `{field}` has a type without a value, or the reverse"
            )?,
            Problem::Utf8 { range } => write!(
                f,
                "string at {:#x}..{:#x} is not UTF-8",
                range.start, range.end
            )?,
            Problem::MissingTerminator { range } => write!(
                f,
                "string at {:#x}..{:#x} has no terminating zero",
                range.start, range.end
            )?,
            Problem::TooManyTables => f.write_str("more tables than the payload can hold")?,
            Problem::TooDeep => f.write_str("tables nested too deep")?,
            Problem::TooLarge => f.write_str("apparent size past the limit")?,
        }
        if !self.path.is_empty() {
            let path: Vec<&str> = self.path.iter().rev().map(String::as_str).collect();
            write!(f, " (in {})", path.join(" > "))?;
        }
        Ok(())
    }
}

impl std::error::Error for Invalid {}

type Result<T> = std::result::Result<T, Box<Invalid>>;

fn fail<T>(problem: Problem) -> Result<T> {
    Err(Box::new(Invalid {
        problem,
        path: Vec::new(),
    }))
}

/// Adds `segment` (made only on failure) to the path of a failed result.
fn within<T>(result: Result<T>, segment: impl FnOnce() -> String) -> Result<T> {
    result.map_err(|mut e| {
        e.path.push(segment());
        e
    })
}

/// Verifies a trace chunk's payload (a `RecordBatch`) with the options a reader uses.
pub fn verify_trace_payload(payload: &[u8]) -> std::result::Result<(), Box<Invalid>> {
    use crate::generated::trace_layout::{ROOT, TABLES};
    verify(payload, &TABLES, ROOT, &verifier_options(payload.len()))
}

/// Verifies finished trace records one at a time (each a flatbuffer whose root is a
/// `Record`), with the options a reader uses for a payload of its size: what a reader
/// checks of each finished record of a chunk of stored records before laying it out.
/// The shapes of the vtables met are kept from record to record, as within a payload.
#[derive(Default)]
pub struct RecordVerifier {
    shapes: Shapes,
}

impl RecordVerifier {
    /// Verifies `record`.
    pub fn verify(&mut self, record: &[u8]) -> std::result::Result<(), Box<Invalid>> {
        use crate::generated::trace_layout::TABLES;
        static RECORD: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
        let Some(root) = *RECORD.get_or_init(|| TABLES.iter().position(|t| t.name == "Record"))
        else {
            return fail(Problem::MissingRequired { field: "Record" });
        };
        verify_with(
            record,
            &TABLES,
            root,
            &verifier_options(record.len()),
            &mut self.shapes,
        )
    }
}

/// Verifies a trace chunk's payload with other limits than a reader's (for comparing
/// with flatbuffers' own verifier at its limits).
pub fn verify_trace_payload_with(
    payload: &[u8],
    opts: &VerifierOptions,
) -> std::result::Result<(), Box<Invalid>> {
    use crate::generated::trace_layout::{ROOT, TABLES};
    verify(payload, &TABLES, ROOT, opts)
}

/// Verifies a results chunk's payload (a `ResultsBatch`) with the options a reader uses.
pub fn verify_results_payload(payload: &[u8]) -> std::result::Result<(), Box<Invalid>> {
    use crate::generated::results_layout::{ROOT, TABLES};
    verify(payload, &TABLES, ROOT, &verifier_options(payload.len()))
}

/// The verifier's limits for a payload of `payload_len` bytes (flatbuffers' options, so
/// that the generic verifier can be run with the same for comparison).
pub fn verifier_options(payload_len: usize) -> VerifierOptions {
    VerifierOptions {
        max_depth: 32,
        // A table costs at least 4 bytes (its vtable offset).
        max_tables: payload_len / 4 + 1,
        max_apparent_size: payload_len.saturating_mul(4).max(1 << 20),
        ignore_missing_null_terminator: false,
    }
}

/// Verifies `buf` as a flatbuffer whose root is `tables[root]`.
pub(crate) fn verify(
    buf: &[u8],
    tables: &'static [Table],
    root: usize,
    opts: &VerifierOptions,
) -> std::result::Result<(), Box<Invalid>> {
    verify_with(buf, tables, root, opts, &mut Shapes::default())
}

/// [`verify`], with the vtable shapes met before (by the same `tables`).
fn verify_with(
    buf: &[u8],
    tables: &'static [Table],
    root: usize,
    opts: &VerifierOptions,
    shapes: &mut Shapes,
) -> std::result::Result<(), Box<Invalid>> {
    let mut v = Verifier {
        buf,
        tables,
        opts,
        depth: 0,
        num_tables: 0,
        apparent_size: 0,
        shapes,
    };
    let pos = v.follow(0)?;
    v.table(pos, root)
}

struct Verifier<'a, 's> {
    buf: &'a [u8],
    tables: &'static [Table],
    opts: &'a VerifierOptions,
    depth: usize,
    num_tables: usize,
    apparent_size: usize,
    /// The shapes of the vtables met ([`shape`]).
    shapes: &'s mut Shapes,
}

impl Verifier<'_, '_> {
    #[inline(always)]
    fn range(&mut self, start: usize, size: usize) -> Result<()> {
        let end = start.saturating_add(size);
        if end > self.buf.len() {
            return fail(Problem::OutOfBounds {
                start,
                end,
                len: self.buf.len(),
            });
        }
        self.apparent_size = self.apparent_size.saturating_add(size);
        if self.apparent_size > self.opts.max_apparent_size {
            return fail(Problem::TooLarge);
        }
        Ok(())
    }

    /// Whether `pos` is a multiple of `align`, a power of two (every alignment the
    /// layouts hold is 1, 2, 4 or 8): a mask, not a division, since it runs for every
    /// field of every record.
    #[inline(always)]
    fn aligned(pos: usize, align: usize) -> Result<()> {
        debug_assert!(align.is_power_of_two());
        if pos & align.wrapping_sub(1) == 0 {
            Ok(())
        } else {
            fail(Problem::Unaligned { pos, align })
        }
    }

    #[inline(always)]
    fn in_buffer(&mut self, pos: usize, size: usize, align: usize) -> Result<()> {
        Self::aligned(pos, align)?;
        self.range(pos, size)
    }

    #[inline(always)]
    fn u16_at(&mut self, pos: usize) -> Result<u16> {
        self.in_buffer(pos, 2, 2)?;
        Ok(u16::from_le_bytes([self.buf[pos], self.buf[pos + 1]]))
    }

    #[inline(always)]
    fn u32_at(&mut self, pos: usize) -> Result<u32> {
        self.in_buffer(pos, 4, 4)?;
        let b = &self.buf[pos..pos + 4];
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The position an offset at `pos` points to.
    #[inline(always)]
    fn follow(&mut self, pos: usize) -> Result<usize> {
        Ok((self.u32_at(pos)? as usize).saturating_add(pos))
    }

    /// The position of a table's vtable, from the signed offset at the table's start.
    fn vtable_of(&mut self, pos: usize) -> Result<usize> {
        let offset = self.u32_at(pos)? as i32;
        let vtable = if offset > 0 {
            pos.checked_sub(offset.unsigned_abs() as usize)
        } else {
            pos.checked_add(offset.unsigned_abs() as usize)
        };
        match vtable {
            Some(at) if at < self.buf.len() => Ok(at),
            _ => fail(Problem::BadSoffset { pos }),
        }
    }

    /// The position of the field at `voffset` of the table at `pos`, if present.
    #[inline(always)]
    fn field(&mut self, table: &TablePos, voffset: u16) -> Result<Option<usize>> {
        let voffset = usize::from(voffset);
        if voffset < table.vtable_len {
            // The vtable was checked whole, aligned and in the buffer, and its length is
            // even: the entry is inside it. Only the apparent size is left to count.
            let at = table.vtable + voffset;
            let offset = match self.buf.get(at..at + 2) {
                Some(&[lo, hi]) => u16::from_le_bytes([lo, hi]),
                _ => self.u16_at(at)?,
            };
            self.apparent_size = self.apparent_size.saturating_add(2);
            if offset > 0 {
                return Ok(Some(table.pos.saturating_add(usize::from(offset))));
            }
        }
        Ok(None)
    }

    fn table(&mut self, pos: usize, index: usize) -> Result<()> {
        let layout = &self.tables[index];
        let vtable = self.vtable_of(pos)?;
        let len = self.buf.len();
        let Some(shape) = self
            .shapes
            .of(self.buf, vtable, index, layout)
            .filter(|s| s.fits(pos, len))
        else {
            return self.table_field_by_field(pos, vtable, index);
        };
        self.enter_table(vtable, shape.vtable_len())?;
        self.apparent_size = self
            .apparent_size
            .saturating_add(shape.inline_apparent as usize);
        if self.apparent_size > self.opts.max_apparent_size {
            return fail(Problem::TooLarge);
        }
        let at = TablePos {
            pos,
            vtable,
            vtable_len: shape.vtable_len(),
        };
        let rest = shape.rest().iter().map(|&f| &layout.fields[usize::from(f)]);
        self.check_fields(&at, layout, rest)
    }

    /// [`Verifier::table`] field by field, as flatc's verifier walks a table.
    fn table_field_by_field(&mut self, pos: usize, vtable: usize, index: usize) -> Result<()> {
        let layout = &self.tables[index];
        let vtable_len = usize::from(self.u16_at(vtable)?);
        Self::aligned(vtable.saturating_add(vtable_len), 2)?;
        self.enter_table(vtable, vtable_len)?;
        let at = TablePos {
            pos,
            vtable,
            vtable_len,
        };
        self.check_fields(&at, layout, layout.fields.iter())
    }

    /// Counts a table entered whose vtable at `vtable` is `vtable_len` bytes, as flatc's
    /// verifier does: the vtable's range, the number of tables, the depth.
    #[inline]
    fn enter_table(&mut self, vtable: usize, vtable_len: usize) -> Result<()> {
        self.range(vtable, vtable_len)?;
        self.num_tables += 1;
        if self.num_tables > self.opts.max_tables {
            return fail(Problem::TooManyTables);
        }
        self.depth += 1;
        if self.depth > self.opts.max_depth {
            return fail(Problem::TooDeep);
        }
        Ok(())
    }

    /// Checks `fields` of the table at `at` (of `layout`) in order, then leaves it.
    #[inline]
    fn check_fields<'f>(
        &mut self,
        at: &TablePos,
        layout: &Table,
        fields: impl Iterator<Item = &'f Field>,
    ) -> Result<()> {
        for field in fields {
            within(self.table_field(at, field), || {
                format!("{}.{}", layout.name, field.name)
            })?;
        }
        self.depth -= 1;
        Ok(())
    }

    #[inline]
    fn table_field(&mut self, table: &TablePos, field: &Field) -> Result<()> {
        if let Kind::Union(members) = field.kind {
            let value = self.field(table, field.voffset)?;
            let key = self.field(table, field.voffset.wrapping_sub(2))?;
            return match (key, value) {
                (None, None) if field.required => {
                    fail(Problem::MissingRequired { field: field.name })
                }
                (None, None) => Ok(()),
                (Some(key), Some(value)) => {
                    self.in_buffer(key, 1, 1)?;
                    // Type 0 is NONE; types past the members are from a newer
                    // schema: both are accepted and read as no value.
                    let member = usize::from(self.buf[key])
                        .checked_sub(1)
                        .and_then(|i| members.get(i));
                    match member {
                        Some(&member) => {
                            let pos = self.follow(value)?;
                            self.table(pos, usize::from(member))
                        }
                        None => Ok(()),
                    }
                }
                _ => fail(Problem::InconsistentUnion { field: field.name }),
            };
        }
        match self.field(table, field.voffset)? {
            Some(pos) => self.value(pos, field.kind),
            None if field.required => fail(Problem::MissingRequired { field: field.name }),
            None => Ok(()),
        }
    }

    #[inline]
    fn value(&mut self, pos: usize, kind: Kind) -> Result<()> {
        match kind {
            Kind::Inline { size, align } => {
                self.in_buffer(pos, usize::from(size), usize::from(align))
            }
            Kind::String => {
                let at = self.follow(pos)?;
                self.string(at)
            }
            Kind::Table(index) => {
                let at = self.follow(pos)?;
                self.table(at, usize::from(index))
            }
            Kind::Vector { size, align } => {
                let at = self.follow(pos)?;
                self.vector(at, usize::from(size), usize::from(align))
                    .map(drop)
            }
            Kind::Strings => {
                let at = self.follow(pos)?;
                for (i, element) in self.vector(at, 4, 4)?.step_by(4).enumerate() {
                    let string = self.follow(element)?;
                    within(self.string(string), || format!("[{i}]"))?;
                }
                Ok(())
            }
            Kind::Tables(index) => {
                let at = self.follow(pos)?;
                for (i, element) in self.vector(at, 4, 4)?.step_by(4).enumerate() {
                    let table = self.follow(element)?;
                    within(self.table(table, usize::from(index)), || format!("[{i}]"))?;
                }
                Ok(())
            }
            // Unions are fields of two slots, handled by `table_field`.
            Kind::Union(_) => Ok(()),
        }
    }

    /// The byte range of the elements of the vector at `pos`.
    fn vector(&mut self, pos: usize, size: usize, align: usize) -> Result<Range<usize>> {
        let len = self.u32_at(pos)? as usize;
        let start = pos.saturating_add(4);
        Self::aligned(start, align)?;
        let bytes = len.saturating_mul(size);
        self.range(start, bytes)?;
        Ok(start..start.saturating_add(bytes))
    }

    fn string(&mut self, pos: usize) -> Result<()> {
        let range = self.vector(pos, 1, 1)?;
        let terminated = self.buf.get(range.end) == Some(&0);
        if std::str::from_utf8(&self.buf[range.clone()]).is_err() {
            return fail(Problem::Utf8 { range });
        }
        if !self.opts.ignore_missing_null_terminator && !terminated {
            return fail(Problem::MissingTerminator { range });
        }
        Ok(())
    }
}

/// Where a table and its vtable are.
struct TablePos {
    pos: usize,
    vtable: usize,
    vtable_len: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `aligned` masks instead of dividing: right only for powers of two.
    #[test]
    fn every_alignment_the_layouts_hold_is_a_power_of_two() {
        use crate::generated::{results_layout, trace_layout};
        for table in trace_layout::TABLES
            .iter()
            .chain(results_layout::TABLES.iter())
        {
            for field in table.fields {
                if let Kind::Inline { align, .. } | Kind::Vector { align, .. } = field.kind {
                    assert!(
                        align.is_power_of_two(),
                        "{}.{}: {align}",
                        table.name,
                        field.name
                    );
                }
            }
        }
    }
}
