//! Shapes of vtables: what a vtable's bytes say of every table of one layout that uses
//! them, wherever the table and the vtable lie.
//!
//! A table's inline fields (scalars and structs) are checked by flatc's verifier one
//! by one: each present field inside the payload and aligned, two bytes of apparent
//! size for each vtable entry read and its own size for each present field. For a given
//! vtable's bytes all of that depends on the table's position alone, so it folds into
//! three numbers: the end of the farthest present field, the positions modulo 8 at
//! which every field is aligned, and the apparent size they add. A payload's tables of
//! one layout mostly have vtables of the same bytes (a record type's fields are present
//! alike), even where each table has a vtable of its own, so the verifier keeps the
//! last few shapes of each layout and checks a table's inline fields with a compare of
//! its vtable's bytes and two tests.

use super::{Kind, Table};

/// The longest vtable a shape is kept for (18 fields); longer ones are walked field by
/// field.
const MAX_VTABLE: usize = 40;
/// The most fields left to check one by one (offsets to follow, unions) a shape keeps.
const MAX_REST: usize = 8;
/// Shapes kept for the layouts that share a set.
const WAYS: usize = 4;
/// Sets of the cache, by layout.
const SETS: usize = 16;

/// What a vtable's bytes say of a table of one layout.
#[derive(Clone, Copy)]
pub(super) struct Shape {
    bytes: [u8; MAX_VTABLE],
    vtable_len: u8,
    layout: u16,
    /// The end of the farthest present inline field, from the table's start.
    inline_end: u32,
    /// Bit `r` set: a table at a position `r` past a multiple of 8 has every present
    /// inline field aligned.
    residues: u8,
    /// What the vtable's length word and the inline fields add to the apparent size:
    /// 2 for the length and for each vtable entry read, each present field's size.
    pub(super) inline_apparent: u32,
    rest: [u8; MAX_REST],
    rest_len: u8,
}

impl Shape {
    /// The shape of tables of layout `index` (`table`) on the vtable at `vtable`, if the
    /// vtable lies as a vtable must (aligned to 2, whole in `buf`), gives every
    /// required field and is small enough to keep; else `None`, and such tables are
    /// walked field by field, which finds what is wrong with them.
    fn of(buf: &[u8], vtable: usize, index: usize, table: &Table) -> Option<Shape> {
        let entry = |at: usize| -> Option<usize> {
            let b = buf.get(at..at.checked_add(2)?)?;
            Some(usize::from(u16::from_le_bytes([b[0], b[1]])))
        };
        if vtable % 2 != 0 {
            return None;
        }
        let vtable_len = entry(vtable)?;
        // The bytes compared hold the length word itself, so that no other vtable
        // matches them.
        if !(2..=MAX_VTABLE).contains(&vtable_len)
            || (vtable + vtable_len) % 2 != 0
            || vtable + vtable_len > buf.len()
        {
            return None;
        }
        let mut shape = Shape {
            bytes: [0; MAX_VTABLE],
            vtable_len: vtable_len as u8,
            layout: u16::try_from(index).ok()?,
            inline_end: 0,
            residues: 0xff,
            inline_apparent: 2,
            rest: [0; MAX_REST],
            rest_len: 0,
        };
        shape.bytes[..vtable_len].copy_from_slice(&buf[vtable..vtable + vtable_len]);
        for (i, field) in table.fields.iter().enumerate() {
            let voffset = usize::from(field.voffset);
            let Kind::Inline { size, align } = field.kind else {
                let slot = shape.rest.get_mut(usize::from(shape.rest_len))?;
                *slot = u8::try_from(i).ok()?;
                shape.rest_len += 1;
                continue;
            };
            let offset = if voffset < vtable_len {
                shape.inline_apparent += 2;
                entry(vtable + voffset)?
            } else {
                0
            };
            if offset == 0 {
                if field.required {
                    return None;
                }
                continue;
            }
            let (size, align) = (usize::from(size), usize::from(align));
            if !align.is_power_of_two() || align > 8 {
                return None;
            }
            shape.inline_end = shape.inline_end.max((offset + size) as u32);
            shape.inline_apparent += size as u32;
            for r in 0..8 {
                if (r + offset) & (align - 1) != 0 {
                    shape.residues &= !(1 << r);
                }
            }
        }
        Some(shape)
    }

    /// Whether the vtable at `vtable` of `buf` holds this shape's bytes, for layout
    /// `index`.
    #[inline]
    fn describes(&self, buf: &[u8], vtable: usize, index: usize) -> bool {
        let len = usize::from(self.vtable_len);
        usize::from(self.layout) == index
            && vtable % 2 == 0
            && buf
                .get(vtable..vtable.saturating_add(len))
                .is_some_and(|b| b == &self.bytes[..len])
    }

    /// Whether a table at `pos` of a `len`-byte payload has its present inline fields
    /// inside the payload and aligned.
    #[inline]
    pub(super) fn fits(&self, pos: usize, len: usize) -> bool {
        pos.saturating_add(self.inline_end as usize) <= len && self.residues & (1 << (pos & 7)) != 0
    }

    /// The vtable's length in bytes.
    pub(super) fn vtable_len(&self) -> usize {
        usize::from(self.vtable_len)
    }

    /// The indices of the fields left to check one by one, in declaration order.
    pub(super) fn rest(&self) -> &[u8] {
        &self.rest[..usize::from(self.rest_len)]
    }
}

/// The last few shapes of each layout met in one payload.
pub(super) struct Shapes {
    sets: [[Option<Shape>; WAYS]; SETS],
    /// The way each set replaces next.
    next: [u8; SETS],
    /// Each set's hits and misses: a set whose layouts' vtables rarely repeat stops
    /// making shapes.
    hits: [u32; SETS],
    misses: [u32; SETS],
    /// Per layout, whether its shapes pay: it has at least [`MIN_INLINE`] inline
    /// fields (fewer are checked faster one by one than a vtable is compared) and no
    /// more than [`MAX_REST`] others. Found on first use.
    worth: Vec<Option<bool>>,
}

/// Inline fields a layout has at least for its shapes to be kept.
const MIN_INLINE: usize = 3;

impl Default for Shapes {
    fn default() -> Self {
        Shapes {
            sets: [[None; WAYS]; SETS],
            next: [0; SETS],
            hits: [0; SETS],
            misses: [0; SETS],
            worth: Vec::new(),
        }
    }
}

impl Shapes {
    /// The shape of the table of layout `index` whose vtable is at `vtable`: one kept,
    /// or made and kept; `None` where the vtable has none (see [`Shape::of`]) or the
    /// layout's set has stopped making them.
    #[inline]
    pub(super) fn of(
        &mut self,
        buf: &[u8],
        vtable: usize,
        index: usize,
        table: &Table,
    ) -> Option<Shape> {
        if self.worth.len() <= index {
            self.worth.resize(index + 1, None);
        }
        let worth = *self.worth[index].get_or_insert_with(|| {
            let inline = table
                .fields
                .iter()
                .filter(|f| matches!(f.kind, Kind::Inline { .. }))
                .count();
            inline >= MIN_INLINE && table.fields.len() - inline <= MAX_REST
        });
        let set = index % SETS;
        if !worth || self.misses[set] > 4 * self.hits[set] + 16 {
            return None;
        }
        if let Some(shape) = self.sets[set]
            .iter()
            .flatten()
            .find(|s| s.describes(buf, vtable, index))
        {
            self.hits[set] += 1;
            return Some(*shape);
        }
        self.misses[set] += 1;
        let shape = Shape::of(buf, vtable, index, table)?;
        let way = usize::from(self.next[set]);
        self.sets[set][way] = Some(shape);
        self.next[set] = ((way + 1) % WAYS) as u8;
        Some(shape)
    }
}
