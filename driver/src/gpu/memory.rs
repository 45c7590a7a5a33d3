//! GPU memory for the model: sparse 4 KiB pages of dwords, zero where never written.

use std::collections::HashMap;

const PAGE_DWORDS: usize = 1024;

/// Sparse, dword-addressed memory.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    pages: HashMap<u64, Box<[u32; PAGE_DWORDS]>>,
}

impl Memory {
    /// Empty memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// The dword at `addr` (which must be 4-aligned; the low bits are ignored).
    pub fn read_u32(&self, addr: u64) -> u32 {
        self.pages
            .get(&(addr >> 12))
            .map_or(0, |p| p[((addr >> 2) as usize) & (PAGE_DWORDS - 1)])
    }

    /// Writes the dword at `addr`.
    pub fn write_u32(&mut self, addr: u64, value: u32) {
        let page = self
            .pages
            .entry(addr >> 12)
            .or_insert_with(|| Box::new([0; PAGE_DWORDS]));
        page[((addr >> 2) as usize) & (PAGE_DWORDS - 1)] = value;
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

    /// Writes `words` from `addr` on.
    pub fn write_words(&mut self, addr: u64, words: &[u32]) {
        for (i, w) in words.iter().enumerate() {
            self.write_u32(addr + 4 * i as u64, *w);
        }
    }

    /// Whether anything was ever written in the page holding `addr`.
    pub fn is_mapped(&self, addr: u64) -> bool {
        self.pages.contains_key(&(addr >> 12))
    }
}
