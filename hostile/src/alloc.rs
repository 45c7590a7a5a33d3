//! A global allocator that counts what each thread holds, so a harness can bound what
//! one input makes a reader allocate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

thread_local! {
    static HELD: Cell<u64> = const { Cell::new(0) };
    static PEAK: Cell<u64> = const { Cell::new(0) };
}

/// The system allocator, counting per thread. Install it with `#[global_allocator]`.
pub struct Counting;

fn add(bytes: u64) {
    // `try_with`: a thread being torn down has no counters left; it is not counted.
    let _ = HELD.try_with(|held| {
        let now = held.get().saturating_add(bytes);
        held.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

fn sub(bytes: u64) {
    let _ = HELD.try_with(|held| held.set(held.get().saturating_sub(bytes)));
}

// SAFETY: every call is forwarded to `System` unchanged; only counters change.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as u64);
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as u64);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        sub(layout.size() as u64);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as u64);
        sub(layout.size() as u64);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Starts measuring this thread's peak from what it holds now.
pub fn reset_peak() {
    let held = HELD.with(Cell::get);
    PEAK.with(|p| p.set(held));
}

/// The most this thread held since [`reset_peak`], above what it held then.
pub fn peak_since(start_held: u64) -> u64 {
    PEAK.with(Cell::get).saturating_sub(start_held)
}

/// What this thread holds now.
pub fn held() -> u64 {
    HELD.with(Cell::get)
}
