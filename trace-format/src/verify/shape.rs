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
const WAYS: usize = 16;
/// Sets of the cache, by layout.
const SETS: usize = 16;

/// What a vtable's bytes say of a table of one layout.
#[derive(Clone, Copy)]
pub(super) struct Shape {
    /// The vtable's first 8 bytes (zero past its end): compared before the rest.
    key: u64,
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
            key: 0,
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
        shape.key = key_at(buf, vtable, vtable_len.min(KEY_BYTES))?;
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

    /// Whether the vtable at `vtable` of `buf`, whose first 8 bytes are `key`, holds
    /// this shape's bytes, for layout `index`: the key first, which tells most shapes
    /// apart, then the bytes past it.
    #[inline]
    fn describes(&self, buf: &[u8], vtable: usize, key: u64, index: usize) -> bool {
        let len = usize::from(self.vtable_len);
        self.key == key
            && usize::from(self.layout) == index
            && (len <= KEY_BYTES
                || buf
                    .get(vtable + KEY_BYTES..vtable.saturating_add(len))
                    .is_some_and(|b| b == &self.bytes[KEY_BYTES..len]))
    }

    /// What a table at `pos` of a `len`-byte payload needs checked beyond what the
    /// shape says, if its present inline fields lie inside the payload and aligned.
    #[inline]
    fn fit(&self, pos: usize, len: usize) -> Option<Fit> {
        let fits = pos.saturating_add(self.inline_end as usize) <= len
            && self.residues & (1 << (pos & 7)) != 0;
        fits.then_some(Fit {
            vtable_len: self.vtable_len,
            inline_apparent: self.inline_apparent,
            rest: self.rest,
            rest_len: self.rest_len,
        })
    }
}

/// What is left to check of a table whose vtable has a known shape: the small part of
/// a [`Shape`] the verifier reads, handed out by value.
#[derive(Clone, Copy)]
pub(super) struct Fit {
    vtable_len: u8,
    /// What the vtable's length word and the inline fields add to the apparent size.
    pub(super) inline_apparent: u32,
    rest: [u8; MAX_REST],
    rest_len: u8,
}

impl Fit {
    /// The vtable's length in bytes.
    pub(super) fn vtable_len(&self) -> usize {
        usize::from(self.vtable_len)
    }

    /// The indices of the fields left to check one by one, in declaration order.
    pub(super) fn rest(&self) -> &[u8] {
        &self.rest[..usize::from(self.rest_len)]
    }
}

/// Bytes of a vtable compared as one word before the rest.
const KEY_BYTES: usize = 8;

/// The `n` (at most [`KEY_BYTES`]) bytes of `buf` at `at` as one little-endian word,
/// zero past them; `None` where they are not all in `buf`. One load where a whole word
/// can be read (no copy through memory, which the load after it would wait for).
#[inline(always)]
fn key_at(buf: &[u8], at: usize, n: usize) -> Option<u64> {
    debug_assert!(n <= KEY_BYTES);
    let end = at.checked_add(n).filter(|&end| end <= buf.len())?;
    let mask = match n {
        KEY_BYTES.. => u64::MAX,
        _ => (1u64 << (8 * n)) - 1,
    };
    Some(match buf.get(at..at.saturating_add(KEY_BYTES)) {
        Some(&[b0, b1, b2, b3, b4, b5, b6, b7]) => {
            u64::from_le_bytes([b0, b1, b2, b3, b4, b5, b6, b7]) & mask
        }
        _ => buf[at..end]
            .iter()
            .rev()
            .fold(0, |key, &b| (key << 8) | u64::from(b)),
    })
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
const MIN_INLINE: usize = 1;

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
    /// What is left to check of the table at `pos` of layout `index` whose vtable is
    /// at `vtable`, by the vtable's shape: one kept, or made and kept. `None` where the
    /// vtable has no shape (see [`Shape::of`]), the layout's set has stopped making
    /// them, or the table's inline fields do not fit where it lies: such tables are
    /// walked field by field.
    #[inline]
    pub(super) fn fit(
        &mut self,
        buf: &[u8],
        vtable: usize,
        pos: usize,
        index: usize,
        table: &Table,
    ) -> Option<Fit> {
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
        if !worth || self.misses[set] > 4 * self.hits[set] + 16 || vtable % 2 != 0 {
            return None;
        }
        // The key covers the vtable's own bytes only: its length word, then as many of
        // the bytes it claims as the key holds (a vtable past the payload has none).
        let claimed = buf.get(vtable..vtable.saturating_add(2))?;
        let claimed = usize::from(u16::from_le_bytes([claimed[0], claimed[1]]));
        let key = key_at(buf, vtable, claimed.min(KEY_BYTES))?;
        let len = buf.len();
        if let Some(shape) = self.sets[set]
            .iter()
            .flatten()
            .find(|s| s.describes(buf, vtable, key, index))
        {
            self.hits[set] += 1;
            return shape.fit(pos, len);
        }
        self.misses[set] += 1;
        let shape = Shape::of(buf, vtable, index, table)?;
        let way = usize::from(self.next[set]);
        self.sets[set][way] = Some(shape);
        self.next[set] = ((way + 1) % WAYS) as u8;
        shape.fit(pos, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::Field;

    /// A layout of three `u32` fields (enough inline fields for shapes to be kept).
    const THREE: Table = Table {
        name: "Three",
        fields: &[
            Field::inline("a", 4),
            Field::inline("b", 6),
            Field::inline("c", 8),
        ],
    };

    impl Field {
        const fn inline(name: &'static str, voffset: u16) -> Field {
            Field {
                name,
                voffset,
                required: false,
                kind: Kind::Inline { size: 4, align: 4 },
            }
        }
    }

    /// A vtable of `entries` (after its two lengths) for a table of `table_len` bytes.
    fn vtable(table_len: u16, entries: &[u16]) -> Vec<u8> {
        let len = 4 + 2 * entries.len() as u16;
        [len, table_len]
            .iter()
            .chain(entries)
            .flat_map(|h| h.to_le_bytes())
            .collect()
    }

    #[test]
    fn a_key_reads_only_the_bytes_asked_for_wherever_they_lie() {
        let buf = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
        assert_eq!(key_at(&buf, 0, 8), Some(0x0807_0605_0403_0201));
        assert_eq!(key_at(&buf, 0, 3), Some(0x03_0201));
        // Too near the end for a whole word: read byte by byte, the same value.
        assert_eq!(key_at(&buf, 6, 4), Some(0x0a09_0807));
        assert_eq!(key_at(&buf, 8, 2), Some(0x0a09));
        assert_eq!(key_at(&buf, 9, 2), None);
        assert_eq!(key_at(&buf, usize::MAX, 1), None);
    }

    /// A vtable shorter than the key is found by its own bytes, whatever follows it.
    #[test]
    fn a_short_vtable_is_known_again_whatever_bytes_follow_it() {
        let short = vtable(8, &[4]);
        assert_eq!(short.len(), 6);
        let mut buf = short.clone();
        buf.extend([0xaa; 10]);
        buf.extend(&short);
        buf.extend([0x55; 10]);
        let mut shapes = Shapes::default();
        let first = shapes.fit(&buf, 0, 0, 0, &THREE).map(|f| f.vtable_len());
        let again = shapes.fit(&buf, 16, 0, 0, &THREE).map(|f| f.vtable_len());
        assert_eq!((first, again), (Some(6), Some(6)));
        assert_eq!((shapes.hits[0], shapes.misses[0]), (1, 1));
    }

    /// Vtables alike in their first eight bytes but not after are shapes of their own.
    #[test]
    fn vtables_that_differ_past_the_key_are_told_apart() {
        let one = vtable(16, &[4, 8, 12]);
        let other = vtable(16, &[4, 8, 0]);
        assert_eq!(one[..KEY_BYTES], other[..KEY_BYTES]);
        let buf: Vec<u8> = one.iter().chain(&other).copied().collect();
        let mut shapes = Shapes::default();
        let a = shapes.fit(&buf, 0, 0, 0, &THREE).map(|f| f.inline_apparent);
        let b = shapes
            .fit(&buf, one.len(), 0, 0, &THREE)
            .map(|f| f.inline_apparent);
        // Two bytes for the length and each entry read, four for each present field.
        assert_eq!((a, b), (Some(2 + 6 + 12), Some(2 + 6 + 8)));
        assert_eq!(shapes.misses[0], 2);
    }
}
