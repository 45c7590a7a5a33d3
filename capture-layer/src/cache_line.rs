//! A value alone on its cache lines, so that a counter every recording thread writes
//! does not evict, at each write, what every call reads.
//!
//! 128 bytes rather than 64: x86 cores fetch lines in adjacent pairs (the spatial
//! prefetcher), so a write to one line of a pair still costs the other's readers.

use std::ops::Deref;

/// `T` aligned (and padded) to 128 bytes.
#[repr(align(128))]
pub struct CacheLine<T>(pub T);

impl<T> Deref for CacheLine<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}
