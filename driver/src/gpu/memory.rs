//! GPU memory for the model: sparse 4 KiB pages of dwords, zero where never written.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

const PAGE_DWORDS: usize = 1024;
/// Bytes a page.
const PAGE_BYTES: u64 = 4 * PAGE_DWORDS as u64;

/// Hashes page numbers with one multiply: they are already well spread, and the
/// default SipHash dominated the model's memory writes.
#[derive(Default)]
struct PageHasher(u64);

impl Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_u64(&mut self, page: u64) {
        self.0 = page.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Sparse, dword-addressed memory. Pages live in a vector, found through an index by
/// page number; the last page touched is remembered, as a replay writes and reads the
/// same few pages (the root table, the query pool) over and over. A page released
/// ([`Memory::release`]) leaves its place to the next page made, so memory a program
/// frees and allocates anew frame after frame takes no more room, however long the
/// replay.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    pages: Vec<Box<[u32; PAGE_DWORDS]>>,
    index: HashMap<u64, usize, BuildHasherDefault<PageHasher>>,
    /// The last page found: its number and its place in `pages`.
    last: std::cell::Cell<Option<(u64, usize)>>,
    /// Dwords written so far (so that a reader can tell whether anything changed).
    writes: u64,
    /// Pages writes may still make, while a limit is set ([`Memory::limit_fresh_pages`]).
    fresh_pages_left: Option<usize>,
    /// Dwords not written because they would have made a page past the limit.
    refused: u64,
    /// Places in `pages` of pages released, for the next pages made.
    spare: Vec<usize>,
}

impl Memory {
    /// Empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// The dword at `addr` (which must be 4-aligned; the low bits are ignored).
    pub fn read_u32(&self, addr: u64) -> u32 {
        self.find(addr >> 12).map_or(0, |i| {
            self.pages[i][((addr >> 2) as usize) & (PAGE_DWORDS - 1)]
        })
    }

    /// How many dwords have been written since the memory was made: unchanged between
    /// two looks, nothing was written in between.
    pub fn writes(&self) -> u64 {
        self.writes
    }

    /// The place of page `page` in `pages`, where it is the page found last.
    #[inline(always)]
    fn last_found(&self, page: u64) -> Option<usize> {
        match self.last.get() {
            Some((p, i)) if p == page => Some(i),
            _ => None,
        }
    }

    /// The place of page `page` in `pages`, if it was ever written.
    fn find(&self, page: u64) -> Option<usize> {
        self.last_found(page).or_else(|| {
            let i = *self.index.get(&page)?;
            self.last.set(Some((page, i)));
            Some(i)
        })
    }

    /// Writes the dword at `addr`.
    #[inline]
    pub fn write_u32(&mut self, addr: u64, value: u32) {
        // Most writes land in the page written last.
        let page = addr >> 12;
        let Some(i) = self.last_found(page).or_else(|| self.page_index(page)) else {
            self.refused += 1;
            return;
        };
        self.pages[i][((addr >> 2) as usize) & (PAGE_DWORDS - 1)] = value;
        self.writes += 1;
    }

    /// Until [`Memory::unlimit_fresh_pages`], writes may make at most `pages` pages
    /// that were never written; a write that would make another is refused and
    /// counted ([`Memory::refused_writes`]). The GPU model sets it around a macro
    /// run, whose writes (reports, constant-buffer loads) a macro's loop could
    /// otherwise spread over more memory than the trace names.
    pub fn limit_fresh_pages(&mut self, pages: usize) {
        self.fresh_pages_left = Some(pages);
    }

    /// Lifts [`Memory::limit_fresh_pages`]'s limit.
    pub fn unlimit_fresh_pages(&mut self) {
        self.fresh_pages_left = None;
    }

    /// Dwords refused so far for lack of fresh pages.
    pub fn refused_writes(&self) -> u64 {
        self.refused
    }

    /// The index of `page` in `pages`, made (zeroed) if it was never written and the
    /// fresh-page limit allows; `None` where it does not.
    #[inline(never)]
    fn page_index(&mut self, page: u64) -> Option<usize> {
        if let Some(i) = self.find(page) {
            return Some(i);
        }
        if !self.take_fresh_page() {
            return None;
        }
        if let Some(i) = self.spare.pop() {
            self.pages[i].fill(0);
            return Some(self.place_page(page, i));
        }
        Some(self.insert_page(page, Box::new([0; PAGE_DWORDS])))
    }

    /// Makes page `page`, never written, from the page's worth of little-endian dwords in
    /// `bytes`, as [`Memory::page_index`] makes a page (within the fresh-page limit);
    /// whether it did.
    fn make_page_from(&mut self, page: u64, bytes: &[u8]) -> bool {
        if bytes.len() != 4 * PAGE_DWORDS || !self.take_fresh_page() {
            return false;
        }
        let i = self.spare.pop().unwrap_or_else(|| {
            self.pages.push(Box::new([0; PAGE_DWORDS]));
            self.pages.len() - 1
        });
        fill_dwords(&mut self.pages[i][..], bytes);
        self.place_page(page, i);
        true
    }

    /// Takes one of the fresh pages the limit leaves ([`Memory::limit_fresh_pages`]);
    /// whether there was one (always, without a limit).
    fn take_fresh_page(&mut self) -> bool {
        match &mut self.fresh_pages_left {
            Some(0) => false,
            Some(left) => {
                *left -= 1;
                true
            }
            None => true,
        }
    }

    /// Puts in `words` as page `page`, the page found last; its place in `pages`.
    fn insert_page(&mut self, page: u64, words: Box<[u32; PAGE_DWORDS]>) -> usize {
        self.pages.push(words);
        self.place_page(page, self.pages.len() - 1)
    }

    /// Makes the page at place `i` in `pages` page `page`, the page found last.
    fn place_page(&mut self, page: u64, i: usize) -> usize {
        self.index.insert(page, i);
        self.last.set(Some((page, i)));
        i
    }

    /// Lets go of `len` bytes from `addr` (memory its owner freed): the pages the range
    /// covers whole are released, their room kept for the pages made next, and the
    /// dwords of pages it covers in part are zeroed. They read as zeros after, as
    /// memory never written does.
    pub fn release(&mut self, addr: u64, len: u64) {
        let start = addr & !3;
        let end = addr.saturating_add(len);
        if start >= end {
            return;
        }
        let (first, last) = (start >> 12, (end - 1) >> 12);
        // The range's pages that were written; where the range spans more pages than
        // were ever written (a size no program allocates), found among those.
        let pages: Vec<u64> = match last - first < self.index.len() as u64 {
            true => (first..=last)
                .filter(|p| self.index.contains_key(p))
                .collect(),
            false => self
                .index
                .keys()
                .copied()
                .filter(|p| (first..=last).contains(p))
                .collect(),
        };
        for page in pages {
            let Some(&i) = self.index.get(&page) else {
                continue;
            };
            let page_start = page << 12;
            let (from, to) = (
                start.max(page_start) - page_start,
                end.min(page_start.saturating_add(PAGE_BYTES)) - page_start,
            );
            if from == 0 && to == PAGE_BYTES {
                self.index.remove(&page);
                self.spare.push(i);
                if self.last.get().is_some_and(|(p, _)| p == page) {
                    self.last.set(None);
                }
            } else {
                self.pages[i][(from / 4) as usize..to.div_ceil(4) as usize].fill(0);
            }
        }
    }

    /// The u64 at `addr` (low dword first).
    pub fn read_u64(&self, addr: u64) -> u64 {
        u64::from(self.read_u32(addr)) | (u64::from(self.read_u32(addr + 4)) << 32)
    }

    /// Writes the u64 at `addr` (low dword first).
    pub fn write_u64(&mut self, addr: u64, value: u64) {
        self.write_u32(addr, value as u32);
        self.write_u32(addr + 4, (value >> 32) as u32);
    }

    /// Copies `len` bytes from `from` to `to` (both 4-aligned; a trailing part of a
    /// dword is copied whole). Pages never written read as zeros and are not copied:
    /// the destination is expected to be fresh memory.
    pub fn copy(&mut self, from: u64, to: u64, len: u64) {
        let mut at = 0;
        while at < len {
            let page_left = PAGE_BYTES - ((from + at) & (PAGE_BYTES - 1));
            let n = page_left.min(len - at);
            if self.find((from + at) >> 12).is_some() {
                for dword in (0..n).step_by(4) {
                    let value = self.read_u32(from + at + dword);
                    self.write_u32(to + at + dword, value);
                }
            }
            at += n;
        }
    }

    /// Writes `bytes` from `addr` on (any alignment).
    pub fn write_bytes(&mut self, addr: u64, bytes: &[u8]) {
        let lead = ((4 - (addr & 3)) & 3).min(bytes.len() as u64) as usize;
        let (head, rest) = bytes.split_at(lead);
        for (i, b) in head.iter().enumerate() {
            self.write_u8(addr + i as u64, *b);
        }
        let at = addr + lead as u64;
        let words = rest.len() / 4;
        let (whole, tail) = rest.split_at(4 * words);
        // Page by page, as `write_words` goes: one lookup each, the words read from the
        // bytes straight into the page.
        let mut page_at = at;
        let mut left = whole;
        while !left.is_empty() {
            let first = ((page_at >> 2) as usize) & (PAGE_DWORDS - 1);
            let n = (left.len() / 4).min(PAGE_DWORDS - first);
            let (now, later) = left.split_at(4 * n);
            let page = page_at >> 12;
            if n == PAGE_DWORDS && self.find(page).is_none() {
                // A page never written, written whole: made from the bytes, not zeroed
                // first (a program's mapped memory is mostly such pages).
                match self.make_page_from(page, now) {
                    true => self.writes += n as u64,
                    false => self.refused += n as u64,
                }
                page_at = page_at.wrapping_add(PAGE_BYTES);
                left = later;
                continue;
            }
            match self.page_index(page) {
                Some(i) => {
                    fill_dwords(&mut self.pages[i][first..first + n], now);
                    self.writes += n as u64;
                }
                None => self.refused += n as u64,
            }
            page_at = page_at.wrapping_add(4 * n as u64);
            left = later;
        }
        for (i, b) in tail.iter().enumerate() {
            self.write_u8(at + (4 * words + i) as u64, *b);
        }
    }

    fn write_u8(&mut self, addr: u64, byte: u8) {
        let word = addr & !3;
        let shift = (addr & 3) * 8;
        let old = self.read_u32(word);
        self.write_u32(word, (old & !(0xff << shift)) | (u32::from(byte) << shift));
    }

    /// Writes `words` from `addr` on.
    #[inline]
    pub fn write_words(&mut self, addr: u64, words: &[u32]) {
        // Most writes are a few words within the page written last (the root table's).
        let first = ((addr >> 2) as usize) & (PAGE_DWORDS - 1);
        if let Some(i) = self.last_found(addr >> 12) {
            if addr & 3 == 0 && words.len() <= PAGE_DWORDS - first {
                for (dword, word) in self.pages[i][first..first + words.len()]
                    .iter_mut()
                    .zip(words)
                {
                    *dword = *word;
                }
                self.writes += words.len() as u64;
                return;
            }
        }
        self.write_words_through_pages(addr, words);
    }

    /// [`Memory::write_words`] in general: any alignment, any pages.
    #[inline(never)]
    fn write_words_through_pages(&mut self, addr: u64, words: &[u32]) {
        if addr & 3 != 0 {
            for (i, w) in words.iter().enumerate() {
                self.write_u32(addr + 4 * i as u64, *w);
            }
            return;
        }
        // Page by page: one lookup and one copy each.
        let mut at = addr;
        let mut rest = words;
        while !rest.is_empty() {
            let first = ((at >> 2) as usize) & (PAGE_DWORDS - 1);
            let n = rest.len().min(PAGE_DWORDS - first);
            match self.page_index(at >> 12) {
                Some(i) => {
                    self.pages[i][first..first + n].copy_from_slice(&rest[..n]);
                    self.writes += n as u64;
                }
                None => self.refused += n as u64,
            }
            at = at.wrapping_add(4 * n as u64);
            rest = &rest[n..];
        }
    }

    /// Whether anything was ever written in the page holding `addr`.
    pub fn is_mapped(&self, addr: u64) -> bool {
        self.index.contains_key(&(addr >> 12))
    }
}

/// Fills `dwords` from the little-endian dwords in `bytes`, as many as both hold.
#[inline]
fn fill_dwords(dwords: &mut [u32], bytes: &[u8]) {
    for (dword, b) in dwords.iter_mut().zip(bytes.chunks_exact(4)) {
        *dword = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
}

#[cfg(test)]
mod tests {
    use super::Memory;

    #[test]
    fn bytes_at_any_alignment_land_little_endian_and_leave_neighbours() {
        let mut m = Memory::new();
        m.write_u32(0x1000, 0xaaaa_aaaa);
        m.write_u32(0x1008, 0xbbbb_bbbb);
        m.write_bytes(0x1003, &[1, 2, 3, 4, 5, 6]);
        assert_eq!(m.read_u32(0x1000), 0x01aa_aaaa);
        assert_eq!(m.read_u32(0x1004), 0x0504_0302);
        assert_eq!(m.read_u32(0x1008), 0xbbbb_bb06);
        m.write_bytes(0xfff, &[9, 8]);
        assert_eq!(m.read_u32(0xffc) >> 24, 9);
        assert_eq!(m.read_u32(0x1000) & 0xff, 8);
        assert_eq!(m.read_u64(0x5000), 0);
    }

    #[test]
    fn released_memory_reads_as_zeros_and_its_pages_make_the_next_ones() {
        let mut m = Memory::new();
        let page: Vec<u8> = (0..4096u32).map(|i| (i % 251) as u8 + 1).collect();
        // Three pages from 0x10000, a neighbour's dword either side.
        m.write_u32(0xfffc, 0x1111);
        m.write_bytes(0x10000, &page.repeat(3));
        m.write_u32(0x13000, 0x2222);
        let made = m.pages.len();

        // Two pages and a half: the whole ones go, the half is zeroed.
        m.release(0x10000, 0x2800);
        for addr in (0x10000..0x12800).step_by(4) {
            assert_eq!(m.read_u32(addr), 0, "{addr:#x}");
        }
        let word =
            |at: usize| u32::from_le_bytes([page[at], page[at + 1], page[at + 2], page[at + 3]]);
        assert_eq!(m.read_u32(0x12800), word(0x800));
        assert_eq!((m.read_u32(0xfffc), m.read_u32(0x13000)), (0x1111, 0x2222));

        // Pages made after take the released pages' room, zeroed or filled anew.
        m.write_u32(0x40004, 5);
        m.write_bytes(0x50000, &page);
        assert_eq!(m.pages.len(), made);
        assert_eq!((m.read_u32(0x40000), m.read_u32(0x40004)), (0, 5));
        assert_eq!(m.read_u32(0x50ffc), word(0xffc));
        // And the last page found is not one released.
        m.release(0x50000, 0x1000);
        assert_eq!(m.read_u32(0x50ffc), 0);
    }

    #[test]
    fn a_release_of_a_vast_range_walks_the_pages_written_not_the_range() {
        let mut m = Memory::new();
        m.write_u32(0x7000, 1);
        m.write_u32(u64::MAX - 3, 2);
        m.write_u32(0x1_0000_0000_0000, 3);
        // Every address there is: the written pages go, in no time.
        m.release(0, u64::MAX);
        assert_eq!(m.read_u32(0x7000), 0);
        assert_eq!(m.read_u32(0x1_0000_0000_0000), 0);
        assert_eq!(m.read_u32(u64::MAX - 3), 0);
        m.release(u64::MAX - 3, 4);
        m.release(5, 0);
    }

    #[test]
    fn a_copy_carries_written_pages_and_skips_those_never_written() {
        let mut m = Memory::new();
        m.write_u32(0x10_0ffc, 7);
        m.write_u32(0x10_1000, 8);
        m.write_u32(0x10_3000, 9);
        m.copy(0x10_0000, 0x80_0000, 0x4000);
        assert_eq!(m.read_u32(0x80_0ffc), 7);
        assert_eq!(m.read_u32(0x80_1000), 8);
        assert_eq!(m.read_u32(0x80_3000), 9);
        // The page between was never written: nothing was made for it.
        assert_eq!(m.read_u32(0x80_2000), 0);
        assert_eq!(m.pages.len(), 3 + 3);
        // From within a page to another offset: the dwords keep their order.
        m.copy(0x10_0ffc, 0x90_0010, 8);
        assert_eq!((m.read_u32(0x90_0010), m.read_u32(0x90_0014)), (7, 8));
    }

    #[test]
    fn bytes_over_several_pages_land_where_they_are_written() {
        let bytes: Vec<u8> = (0..3 * 4096 + 7)
            .map(|i| (i * 13 + i / 256) as u8)
            .collect();
        let mut m = Memory::new();
        m.write_bytes(0x1ffd, &bytes);
        let at = |i: usize| (m.read_u32((0x1ffd + i as u64) & !3) >> ((0x1ffd + i) % 4 * 8)) as u8;
        for (i, byte) in bytes.iter().enumerate() {
            assert_eq!(at(i), *byte, "byte {i}");
        }
        // Three bytes up to the first whole dword, then whole dwords (no tail left).
        assert_eq!(
            m.writes(),
            3 + (bytes.len() as u64 - 3) / 4,
            "one write a dword"
        );
        assert_eq!(m.read_u32(0x1ff8), 0, "the bytes before stay");
    }

    #[test]
    fn words_land_where_written_within_a_page_across_pages_and_unaligned() {
        let mut m = Memory::new();
        m.write_u32(0x1000, 9);
        // Within the page written last, up to its end.
        m.write_words(0x1ff8, &[1, 2]);
        // From the page written last into the next, which is made.
        m.write_words(0x1ffc, &[3, 4, 5]);
        // Unaligned: each word at the dword holding its address, as `write_u32` puts it.
        m.write_words(0x3002, &[0x0807_0605]);
        assert_eq!(
            (m.read_u32(0x1000), m.read_u32(0x1ff8), m.read_u32(0x1ffc)),
            (9, 1, 3)
        );
        assert_eq!((m.read_u32(0x2000), m.read_u32(0x2004)), (4, 5));
        assert_eq!((m.read_u32(0x3000), m.read_u32(0x3004)), (0x0807_0605, 0));
        assert_eq!(m.writes(), 1 + 2 + 3 + 1);
    }

    #[test]
    fn whole_pages_of_bytes_land_over_pages_made_before_and_within_the_fresh_page_limit() {
        let page: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 1) as u8).collect();
        let mut m = Memory::new();
        m.write_u32(0x2010, 5);
        // Over a page written before, and onto one never written.
        m.write_bytes(0x2000, &page);
        m.write_bytes(0x5000, &page);
        for base in [0x2000u64, 0x5000] {
            for (i, word) in page.chunks_exact(4).enumerate() {
                let want = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
                assert_eq!(m.read_u32(base + 4 * i as u64), want, "{base:#x} + {i}");
            }
        }
        assert_eq!(m.writes(), 1 + 2 * 1024);
        // Under a limit of one fresh page, the second whole page is refused.
        m.limit_fresh_pages(1);
        m.write_bytes(0x7000, &page);
        m.write_bytes(0x9000, &page);
        assert_eq!(m.read_u32(0x7000), m.read_u32(0x5000));
        assert_eq!((m.read_u32(0x9000), m.refused_writes()), (0, 1024));
    }

    #[test]
    fn writes_past_the_fresh_page_limit_are_refused_and_counted() {
        let mut m = Memory::new();
        m.write_u32(0x1000, 1);
        m.limit_fresh_pages(1);
        m.write_u32(0x1004, 2); // a page already made
        m.write_u32(0x2000, 3); // the one fresh page allowed
        m.write_u32(0x3000, 4);
        m.write_words(0x4000, &[5, 6]);
        assert_eq!(
            (m.read_u32(0x1004), m.read_u32(0x2000), m.read_u32(0x3000)),
            (2, 3, 0)
        );
        assert_eq!(m.refused_writes(), 3);
        m.unlimit_fresh_pages();
        m.write_u32(0x3000, 4);
        assert_eq!(m.read_u32(0x3000), 4);
    }
}
