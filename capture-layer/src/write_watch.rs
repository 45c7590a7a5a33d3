//! Host writes to mapped memory found by page protection: a watched range is made
//! read-only, the first write to each page faults, and the fault handler marks the page
//! dirty and makes it writable again, so the program goes on at full speed until the
//! next look. At a submit, flush or unmap only the dirty pages are compared with the
//! shadow: the cost follows the pages the program writes, not the bytes it maps (a
//! program keeping hundreds of MiB mapped pays for what it touches).
//!
//! The handler chains to the program's own for every fault outside a watched range
//! (and to the default action where there was none), and stays installed when the
//! program installs its own after it ([`crate::fault_chain`]). Taking dirty pages back re-protects
//! them before reading: a write racing with the look either lands before it (and is
//! seen by the comparison) or faults after it (and is seen at the next).
//!
//! What it cannot see: writes the kernel makes for the program (a `read(2)` into mapped
//! memory fails with `EFAULT` instead). `MACROSCOPE_CAPTURE_MEMORY=compare` switches to
//! the comparison of every mapped byte ([`crate::memory`]) for such programs; the layer
//! also falls back to it when the handler cannot be installed or a range cannot be
//! protected, and says which it uses in its log.

use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::bindings::subtract;

/// Bytes per watched page.
pub fn page_size() -> usize {
    static SIZE: OnceLock<usize> = OnceLock::new();
    // SAFETY: sysconf has no preconditions.
    *SIZE.get_or_init(|| match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as usize,
        _ => 4096,
    })
}

/// Watched ranges the fault handler can look up without a lock.
const SLOTS: usize = 1024;

/// Pages a fault marks and opens, an aligned group of them, while a page opened needlessly
/// costs only a comparison (until [`Watch::open_pages_singly`]).
const GROUP: usize = 16;

/// Pages a fault opens past a run of pages written since the last look, at most: a
/// program writing forward faults a few times a MiB.
const MAX_AHEAD: usize = 64;

struct Slot {
    /// First byte (page-aligned); 0 when the slot is free.
    start: AtomicUsize,
    /// Pages watched.
    pages: AtomicUsize,
    /// One bit per page, set when the page was written.
    dirty: AtomicPtr<AtomicU64>,
    /// Faults handled for it.
    faults: AtomicU64,
    /// Pages in the aligned group a fault opens where no run was written before it.
    group: AtomicUsize,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    start: AtomicUsize::new(0),
    pages: AtomicUsize::new(0),
    dirty: AtomicPtr::new(std::ptr::null_mut()),
    faults: AtomicU64::new(0),
    group: AtomicUsize::new(GROUP),
};

static SLOTS_IN_USE: [Slot; SLOTS] = [FREE; SLOTS];
/// Handlers running now: a slot's bitmap is freed only when none is.
static IN_HANDLER: AtomicUsize = AtomicUsize::new(0);
/// Serializes taking and giving back slots.
static REGISTRY: Mutex<()> = Mutex::new(());
/// Installs the fault handler once; false when it cannot be.
fn install() -> bool {
    crate::fault_chain::install(on_fault)
}

extern "C" fn on_fault(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    IN_HANDLER.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = page_size();
    for slot in &SLOTS_IN_USE {
        let start = slot.start.load(Ordering::Acquire);
        if start == 0 || addr < start {
            continue;
        }
        let index = (addr - start) / page;
        if index >= slot.pages.load(Ordering::Acquire) {
            continue;
        }
        let dirty = slot.dirty.load(Ordering::Acquire);
        if dirty.is_null() {
            continue;
        }
        // The aligned group of pages around the fault is marked and opened at once:
        // a program writing a block sequentially faults once a group, not once a page.
        // One writing forward (the pages just before the fault were written since the
        // last look) gets as many pages opened ahead as it wrote behind, up to
        // MAX_AHEAD: a program streaming a MiB into a mapping faults 6 to 10 times, not
        // 256, and one writing a little past a page boundary opens one page more.
        let pages = slot.pages.load(Ordering::Acquire);
        let group = slot.group.load(Ordering::Relaxed).max(1);
        let first = index / group * group;
        // SAFETY: the bitmap holds a bit for every page of the slot and is not freed
        // while a handler runs.
        let behind = unsafe { dirty_run_before(dirty, index) };
        let last = (first + group).max(index + behind).min(pages);
        slot.faults.fetch_add(1, Ordering::Relaxed);
        let (from, to) = (start + first * page, start + last * page);
        // Opened first, marked after: marked first, a look on another thread could take
        // the marks and protect the pages between the two, and this handler would then
        // open them with no mark left, so that every later write to them went unseen
        // (Zink submits, and so looks, on a thread of its own while the program writes).
        // Opened first, a look that comes between finds no mark and leaves the pages
        // open and marked for the next; one that takes the marks protects the pages
        // again and the faulting write faults once more.
        // SAFETY: the pages lie in the watched (mapped) range.
        unsafe { protect(from, to, Access::ReadWrite) };
        // Marked in every watch that holds them: two mappings share the page between
        // them where neither ends on a page boundary, and a page opened for one is
        // open for the other.
        for other in &SLOTS_IN_USE {
            mark(other, from, to, page);
        }
        IN_HANDLER.fetch_sub(1, Ordering::SeqCst);
        return;
    }
    IN_HANDLER.fetch_sub(1, Ordering::SeqCst);
    crate::fault_chain::chain(signal, info, context);
}

/// Pages marked dirty just before page `index`, counted back from it, at most
/// [`MAX_AHEAD`]. Async-signal-safe (atomic loads only).
///
/// # Safety
/// `dirty` must hold a bit for every page below `index` and stay mapped meanwhile.
unsafe fn dirty_run_before(dirty: *mut AtomicU64, index: usize) -> usize {
    let mut run = 0;
    while run < MAX_AHEAD && run < index {
        let page = index - 1 - run;
        let word = (*dirty.add(page / 64)).load(Ordering::Relaxed);
        if word & (1 << (page % 64)) == 0 {
            break;
        }
        run += 1;
    }
    run
}

/// Marks the pages of `slot` within the page-aligned bytes `from..to` written.
/// Async-signal-safe (atomics only).
fn mark(slot: &Slot, from: usize, to: usize, page: usize) {
    let start = slot.start.load(Ordering::Acquire);
    let pages = slot.pages.load(Ordering::Acquire);
    let dirty = slot.dirty.load(Ordering::Acquire);
    if start == 0 || dirty.is_null() {
        return;
    }
    let (lo, hi) = (from.max(start), to.min(start + pages * page));
    let (mut index, end) = (
        (lo.saturating_sub(start)) / page,
        hi.saturating_sub(start) / page,
    );
    while lo < hi && index < end {
        // The run's pages within this bitmap word.
        let word_end = ((index / 64 + 1) * 64).min(end);
        let mask = (u64::MAX >> (64 - (word_end - index))) << (index % 64);
        // SAFETY: the bitmap holds a bit for every page of the slot and is not freed
        // while a handler runs.
        unsafe { (*dirty.add(index / 64)).fetch_or(mask, Ordering::SeqCst) };
        index = word_end;
    }
}

/// A watched range: while it lives, its pages fault on their first write.
#[derive(Debug)]
pub struct Watch {
    slot: usize,
    start: usize,
    pages: usize,
    /// Offset of the watched range's first byte in its first page.
    lead: usize,
    /// Pages left open for good, sorted and disjoint (see [`Watch::leave_open`]).
    open: Vec<(usize, usize)>,
}

impl Watch {
    /// Watches the `len` bytes at `ptr` (the pages that hold them); `None` where the
    /// handler cannot be installed, no slot is free or the pages cannot be protected.
    ///
    /// # Safety
    /// The bytes must stay mapped until the watch is dropped, and nothing else may
    /// change the protection of their pages meanwhile.
    pub unsafe fn new(ptr: *const u8, len: usize) -> Option<Watch> {
        if len == 0 || !install() {
            return None;
        }
        let page = page_size();
        let start = ptr as usize / page * page;
        let end = (ptr as usize).checked_add(len)?.div_ceil(page) * page;
        let pages = (end - start) / page;
        let _registry = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        let slot = SLOTS_IN_USE
            .iter()
            .position(|s| s.start.load(Ordering::Acquire) == 0)?;
        let bitmap = Bitmap::map(pages)?;
        let s = &SLOTS_IN_USE[slot];
        s.pages.store(pages, Ordering::Release);
        s.dirty.store(bitmap, Ordering::Release);
        s.faults.store(0, Ordering::Relaxed);
        s.group.store(GROUP, Ordering::Relaxed);
        s.start.store(start, Ordering::Release);
        if !protect(start, end, Access::ReadOnly) {
            release(slot, start, end - start);
            return None;
        }
        Some(Watch {
            slot,
            start,
            pages,
            lead: ptr as usize - start,
            open: Vec::new(),
        })
    }

    /// Leaves the pages that lie wholly within `ranges` (byte ranges relative to the
    /// watched pointer, sorted and disjoint) open for good: they are not protected
    /// again, and [`Watch::take_dirty`] does not give them. For the bytes the device
    /// writes and nobody compares (an optimal-tiling image bound in a mapped
    /// allocation, [`crate::bindings`]): on a device whose memory is the host's
    /// (lavapipe), the device's own writes would fault there at every frame. Pages open
    /// before and not now are marked written, so the next look compares them and
    /// protects them again.
    pub fn leave_open(&mut self, ranges: &[(usize, usize)]) {
        let page = page_size();
        let open: Vec<(usize, usize)> = ranges
            .iter()
            .map(|&(a, b)| {
                let first = (self.lead + a).div_ceil(page);
                let end = ((self.lead + b) / page).min(self.pages);
                (first, end)
            })
            .filter(|(first, end)| first < end)
            .collect();
        if open == self.open {
            return;
        }
        let slot = &SLOTS_IN_USE[self.slot];
        for &(first, end) in &subtract(&self.open, &open) {
            mark(
                slot,
                self.start + first * page,
                self.start + end * page,
                page,
            );
        }
        for &(first, end) in &subtract(&open, &self.open) {
            // SAFETY: the pages are in the watched range, mapped while we live.
            unsafe {
                protect(
                    self.start + first * page,
                    self.start + end * page,
                    Access::ReadWrite,
                )
            };
        }
        self.open = open;
    }

    /// Faults its pages took (each a first write to a protected group of pages).
    pub fn faults(&self) -> u64 {
        SLOTS_IN_USE[self.slot].faults.load(Ordering::Relaxed)
    }

    /// From now on a fault opens the page written, and pages ahead of it only where
    /// the program writes forward: for a look that records every page opened whole
    /// (see `MappedMemory::submitting`), a page opened needlessly costs its bytes in
    /// the trace, not a comparison.
    pub fn open_pages_singly(&self) {
        SLOTS_IN_USE[self.slot].group.store(1, Ordering::Relaxed);
    }

    /// The pages written since the last call, as byte ranges relative to the watched
    /// pointer (clipped to it at the front), in order; they are read-only again when
    /// this returns, so a later write faults and is found by the next call.
    pub fn take_dirty(&self) -> Vec<(usize, usize)> {
        let page = page_size();
        let dirty = SLOTS_IN_USE[self.slot].dirty.load(Ordering::Acquire);
        // Runs of dirty pages, by page index.
        let mut runs: Vec<(usize, usize)> = Vec::new();
        for word in 0..self.pages.div_ceil(64) {
            // SAFETY: the bitmap lives as long as this watch.
            let bits = unsafe { (*dirty.add(word)).swap(0, Ordering::SeqCst) };
            let mut rest = bits;
            while rest != 0 {
                let index = word * 64 + rest.trailing_zeros() as usize;
                rest &= rest - 1;
                match runs.last_mut() {
                    Some((_, end)) if *end == index => *end = index + 1,
                    _ => runs.push((index, index + 1)),
                }
            }
        }
        let runs = subtract(&runs, &self.open);
        for &(first, end) in &runs {
            // SAFETY: the pages are in the watched range, mapped while we live.
            unsafe {
                protect(
                    self.start + first * page,
                    self.start + end * page,
                    Access::ReadOnly,
                )
            };
        }
        runs.into_iter()
            .map(|(first, end)| {
                (
                    (first * page).saturating_sub(self.lead),
                    (end * page).saturating_sub(self.lead),
                )
            })
            .collect()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _registry = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        release(self.slot, self.start, self.pages * page_size());
    }
}

/// What a watched page lets the program do.
#[derive(Clone, Copy)]
enum Access {
    /// Reads only: a write faults into the handler (a watched page not written since
    /// the last look).
    ReadOnly,
    /// Reads and writes: a page written since the last look, or no longer watched.
    ReadWrite,
}

/// Sets the access of the pages from `start` to `end` (page-aligned addresses);
/// whether the kernel did. Async-signal-safe: the fault handler calls it.
///
/// # Safety
/// The range must be mapped, and the program must not need more access to it than
/// `access` gives until the watch changes it again.
unsafe fn protect(start: usize, end: usize, access: Access) -> bool {
    let prot = match access {
        Access::ReadOnly => libc::PROT_READ,
        Access::ReadWrite => libc::PROT_READ | libc::PROT_WRITE,
    };
    libc::mprotect(start as *mut libc::c_void, end - start, prot) == 0
}

/// Makes the pages writable again, frees the slot and, once no handler runs, its bitmap.
/// A page another watch holds stays protected: that watch still finds its writes.
fn release(slot: usize, start: usize, len: usize) {
    let s = &SLOTS_IN_USE[slot];
    let page = page_size();
    let held_elsewhere = |at: usize| {
        SLOTS_IN_USE.iter().enumerate().any(|(i, o)| {
            let o_start = o.start.load(Ordering::Acquire);
            i != slot
                && o_start != 0
                && (o_start..o_start + o.pages.load(Ordering::Acquire) * page).contains(&at)
        })
    };
    // Only the first and the last page can be another watch's: watched ranges are
    // mapped allocations, which share no byte.
    let mut open = (start, start + len);
    if len > 0 && held_elsewhere(open.0) {
        open.0 += page;
    }
    if open.0 < open.1 && held_elsewhere(open.1 - page) {
        open.1 -= page;
    }
    if open.0 < open.1 {
        // SAFETY: the range was mapped read-write before it was watched.
        unsafe { protect(open.0, open.1, Access::ReadWrite) };
    }
    s.start.store(0, Ordering::SeqCst);
    while IN_HANDLER.load(Ordering::SeqCst) != 0 {
        std::thread::yield_now();
    }
    let pages = s.pages.load(Ordering::Acquire);
    let dirty = s.dirty.swap(std::ptr::null_mut(), Ordering::SeqCst);
    if !dirty.is_null() {
        // SAFETY: made by `Bitmap::map` for `pages` pages; no handler can still hold it.
        unsafe { Bitmap::free(dirty, pages) };
    }
}

/// A watched range's dirty bits, in pages of their own. A mapping need not start or end
/// on a page boundary (lavapipe's come from the heap), so the pages protected for it can
/// hold other heap objects; a bitmap among them would fault in the handler that writes
/// it. Pages mapped for the bitmap alone hold nothing a watch protects.
struct Bitmap;

impl Bitmap {
    /// Bytes of the bitmap for `pages` pages, whole pages.
    fn bytes(pages: usize) -> usize {
        (pages.div_ceil(64) * 8).div_ceil(page_size()) * page_size()
    }

    /// Zeroed bits for `pages` pages; `None` when they cannot be mapped.
    fn map(pages: usize) -> Option<*mut AtomicU64> {
        // SAFETY: an anonymous private mapping, zero-filled by the kernel.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                Self::bytes(pages),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        (p != libc::MAP_FAILED).then_some(p.cast())
    }

    /// Unmaps the bits `map` made for `pages` pages.
    ///
    /// # Safety
    /// `bits` must come from `map(pages)` and no longer be used.
    unsafe fn free(bits: *mut AtomicU64, pages: usize) {
        libc::munmap(bits.cast(), Self::bytes(pages));
    }
}

/// Anonymous read-write pages for tests, unmapped on drop.
#[cfg(test)]
pub(crate) struct Pages(pub *mut u8, pub usize);

#[cfg(test)]
impl Pages {
    /// `len` bytes of fresh pages.
    pub fn new(len: usize) -> Pages {
        // SAFETY: an anonymous private mapping.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(p, libc::MAP_FAILED);
        Pages(p.cast(), len)
    }
}

#[cfg(test)]
impl Drop for Pages {
    fn drop(&mut self) {
        // SAFETY: mapped by `new`.
        unsafe { libc::munmap(self.0.cast(), self.1) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_pages_are_found_once_and_watched_again() {
        let page = page_size();
        let mem = Pages::new(64 * page);
        // SAFETY: the pages stay mapped for the watch's life.
        let watch = unsafe { Watch::new(mem.0, 64 * page) }.expect("protection works here");
        assert!(watch.take_dirty().is_empty());
        // SAFETY: in bounds of the mapping; the writes fault once a group and go through.
        unsafe {
            *mem.0.add(10) = 1;
            *mem.0.add(page + 3) = 2;
            *mem.0.add(40 * page) = 3;
            *mem.0.add(40 * page + 7) = 4;
        }
        // A fault opens its aligned group of GROUP pages.
        let group = GROUP * page;
        assert_eq!(watch.take_dirty(), [(0, group), (2 * group, 3 * group)]);
        assert!(watch.take_dirty().is_empty(), "taken pages are clean");
        // SAFETY: as above.
        unsafe { *mem.0.add(40 * page + 9) = 5 };
        assert_eq!(watch.take_dirty(), [(2 * group, 3 * group)]);
        // SAFETY: as above.
        assert_eq!(unsafe { *mem.0.add(40 * page + 7) }, 4);
        drop(watch);
        // Unwatched, the pages are writable as before.
        // SAFETY: as above.
        unsafe { *mem.0.add(2 * page) = 6 };
    }

    #[test]
    fn a_program_writing_forward_faults_a_few_times_a_mib() {
        let page = page_size();
        let pages = 256;
        let mem = Pages::new(pages * page);
        // SAFETY: the pages stay mapped for the watch's life.
        let watch = unsafe { Watch::new(mem.0, pages * page) }.expect("protection works here");
        // SAFETY: in bounds of the mapping; each write faults or goes through.
        unsafe { std::ptr::write_bytes(mem.0, 7, pages * page) };
        // Groups 0 and 16 fault, then each fault opens as many pages ahead as were
        // written behind it, 64 at most: at 32, 64, 128 and 192.
        assert_eq!(watch.faults(), 6);
        assert_eq!(watch.take_dirty(), [(0, pages * page)]);
        // A write far ahead of what was written (nothing before it dirty) opens one
        // group again.
        // SAFETY: as above.
        unsafe { *mem.0.add(100 * page) = 1 };
        assert_eq!(watch.take_dirty(), [(96 * page, 112 * page)]);
        // SAFETY: as above.
        unsafe { *mem.0.add(129 * page) = 1 };
        assert_eq!(watch.take_dirty(), [(128 * page, 144 * page)]);
    }

    /// Opening pages singly (once a submit was made, when each page opened goes into
    /// the trace whole), a write opens the page it lands in, and a program writing
    /// forward gets as many pages ahead opened as it wrote behind.
    #[test]
    fn pages_opened_singly_are_the_pages_written() {
        let page = page_size();
        let pages = 128;
        let mem = Pages::new(pages * page);
        // SAFETY: the pages stay mapped for the watch's life.
        let watch = unsafe { Watch::new(mem.0, pages * page) }.expect("protection works here");
        watch.open_pages_singly();
        // SAFETY: in bounds of the mapping; each write faults or goes through.
        unsafe {
            *mem.0.add(5 * page + 8) = 1;
            *mem.0.add(40 * page) = 2;
        }
        assert_eq!(
            watch.take_dirty(),
            [(5 * page, 6 * page), (40 * page, 41 * page)]
        );
        assert_eq!(watch.faults(), 2);
        // A write a little past a page boundary opens the next page alone.
        // SAFETY: as above.
        unsafe { std::ptr::write_bytes(mem.0.add(10 * page - 8), 3, 16) };
        assert_eq!(watch.take_dirty(), [(9 * page, 11 * page)]);
        // Writing 64 pages forward: faults at 64, 65, 66, 68, 72, 80, 96 open 1, 1, 2,
        // 4, 8, 16 and 32 pages.
        let before = watch.faults();
        // SAFETY: as above.
        unsafe { std::ptr::write_bytes(mem.0.add(64 * page), 4, 64 * page) };
        assert_eq!(watch.faults() - before, 7);
        assert_eq!(watch.take_dirty(), [(64 * page, 128 * page)]);
    }

    /// Two mappings that share the page between them (neither ends on a page
    /// boundary, as heap allocations do not): a write there is found by both watches,
    /// and still by the second once the first is gone.
    #[test]
    fn a_page_two_watches_share_is_found_by_both_and_kept_by_the_last() {
        let page = page_size();
        let mem = Pages::new(8 * page);
        // The first ends, and the second begins, half way into page 3.
        let half = 3 * page + page / 2;
        // SAFETY: the pages stay mapped for the watches' lives.
        let first = unsafe { Watch::new(mem.0, half) }.expect("protection works here");
        // SAFETY: as above.
        let second =
            unsafe { Watch::new(mem.0.add(half), 8 * page - half) }.expect("protection works here");
        // SAFETY: in bounds of the second mapping.
        unsafe { *mem.0.add(half + 8) = 1 };
        // The first watch's group opened (its pages 0 to 3) is marked in it; of them
        // the second holds the shared page, its first.
        assert_eq!(first.take_dirty(), [(0, 4 * page)]);
        assert_eq!(second.take_dirty(), [(0, 4 * page - half)]);
        // The first mapping ends: the shared page stays protected for the second.
        drop(first);
        // SAFETY: as above.
        unsafe { *mem.0.add(half + 16) = 2 };
        assert_eq!(second.take_dirty(), [(0, 8 * page - half)]);
    }

    #[test]
    fn a_short_watch_clips_its_groups() {
        let page = page_size();
        let mem = Pages::new(8 * page);
        // SAFETY: the pages stay mapped for the watch's life.
        let watch = unsafe { Watch::new(mem.0, 5 * page) }.expect("protection works here");
        // SAFETY: in bounds of the watched range.
        unsafe { *mem.0.add(4 * page) = 1 };
        assert_eq!(watch.take_dirty(), [(0, 5 * page)]);
        // Past the watched pages, nothing faults or is found.
        // SAFETY: in bounds of the mapping.
        unsafe { *mem.0.add(6 * page) = 1 };
        assert!(watch.take_dirty().is_empty());
    }

    #[test]
    fn writes_from_other_threads_are_seen() {
        let page = page_size();
        let mem = Pages::new(64 * page);
        // SAFETY: the pages stay mapped for the watch's life.
        let watch = unsafe { Watch::new(mem.0, 64 * page) }.expect("protection works here");
        let base = mem.0 as usize;
        std::thread::scope(|s| {
            for t in 0..4 {
                s.spawn(move || {
                    for i in 0..16 {
                        // SAFETY: within the mapping.
                        unsafe { *((base + (t * 16 + i) * page + t) as *mut u8) = 1 };
                    }
                });
            }
        });
        assert_eq!(watch.take_dirty(), [(0, 64 * page)]);
    }
}
