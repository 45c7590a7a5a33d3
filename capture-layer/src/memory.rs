//! Host writes to mapped memory, found by comparison: each mapped allocation keeps a
//! shadow copy of what the trace already holds, and at a submit, a flush or an unmap
//! the pages the program wrote (found by page protection, [`crate::write_watch`];
//! every page where a mapping cannot be protected) are compared with it; within a
//! changed page the changed bytes are found by 64-byte blocks and words, and those
//! ranges (merged where less than [`MERGE_GAP`] bytes apart, across pages too) go into
//! the trace and into the shadow. A rewrite that left the bytes equal records nothing.
//! A watched page is shadowed from its second write on (see [`scan`]).
//!
//! The shadow outlives the mapping: what the trace holds of an allocation is still
//! there when the program maps it again, and a program that writes a zero where an
//! earlier mapping wrote something else must have that zero recorded (a shadow begun
//! anew as zeros took it for no change, and the replay drew with the old byte).
//!
//! Bytes bound to optimal-tiling images are the driver's and left out
//! ([`crate::bindings`]).

use std::collections::HashMap;

use crate::bindings::{visible_parts, Bindings};
use crate::write_watch::Watch;

/// How host writes to mapped memory are found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tracking {
    /// Every mapped byte compared with the shadow at each look.
    #[default]
    Compare,
    /// Pages write-protected, and only those written compared ([`crate::write_watch`]);
    /// a mapping that cannot be protected is compared whole.
    Protect,
}

/// How a new mapping is tracked ([`MappedMemory::mapped`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watched {
    /// Its written pages are found by page protection.
    Protected,
    /// It is compared whole at each look (asked for, or it could not be protected).
    Compared,
    /// Not at all: capture is over.
    Not,
}

/// Bytes compared as a unit.
pub const PAGE: usize = 4096;

/// Changed ranges closer than this are recorded as one: each record has its own
/// envelope, and one longer copy compresses against the previous one about as well
/// (glmark2 through Zink: 4.22 KiB a frame with this gap, 4.35 with whole pages,
/// 5.43 with a 64-byte gap).
pub const MERGE_GAP: usize = 1024;

/// The granule ranges are found at.
const WORD: usize = 8;

/// One mapped range.
struct Mapping {
    /// Where the program sees it.
    ptr: SendPtr,
    /// What the trace holds of it.
    shadow: Shadow,
    /// The page protection that finds its written pages, when it is watched.
    watch: Option<Watch>,
    /// Whether it was written at each of the last eight looks while watched, the
    /// latest in bit 0.
    written_at: u8,
    /// Set while it is hot ([`HOT_MAX_BYTES`]): unwatched and recorded whole at every
    /// look; how many looks in a row it was found unchanged.
    hot_unchanged: Option<u8>,
}

/// A mapping at most this large that is written at [`HOT_WRITES`] of eight looks in a
/// row after a submit is no longer watched but recorded whole at every look: a written
/// page goes whole at each look once a submit was made anyway, and its fault and the two
/// protection changes around it cost more than the copy (vkcube on lavapipe, a 1,216-byte
/// uniform buffer written a frame for each of three frames in flight: three faults a
/// frame, where a fault and `mprotect` each interrupt the renderer's threads on every
/// core the program runs on).
pub const HOT_MAX_BYTES: usize = 4 * PAGE;

/// Looks out of eight a small watched mapping is written at before it is hot.
const HOT_WRITES: u32 = 3;

/// Looks in a row a hot mapping is found unchanged at before it is watched again.
const HOT_QUIET_LOOKS: u8 = 8;

/// What the trace holds of a mapped range of an allocation; kept when the mapping ends,
/// to go on with when the same range is mapped again.
struct Shadow {
    /// The range's offset in the allocation.
    offset: u64,
    /// Its bytes as the trace holds them.
    bytes: Vec<u8>,
    /// One bit per page, set once the page was written: an unwritten page holds zeros
    /// and is compared without being read (reading it would map a page only to fault
    /// again when it is written).
    written: Vec<u64>,
    /// One bit per page of a watched mapping, set once its changes went into the trace
    /// while its shadow page was left unwritten (see [`scan`]), or where what the trace
    /// holds is not known to this shadow: the page goes whole at its next look.
    unshadowed: Vec<u64>,
    /// The allocation's bytes the trace has recorded so far, in this mapping and every
    /// earlier one, as one range (start, end).
    recorded: Option<(u64, u64)>,
}

impl Shadow {
    /// Zeros for `len` bytes at `offset`: the first look records every byte the
    /// program has written.
    fn zeros(offset: u64, len: usize) -> Shadow {
        let words = len.div_ceil(PAGE).div_ceil(64);
        Shadow {
            offset,
            bytes: vec![0; len],
            written: vec![0; words],
            unshadowed: vec![0; words],
            recorded: None,
        }
    }

    /// The shadow of a new mapping of `len` bytes at `offset`: this one where the range
    /// is the same; else zeros, with every page that overlaps bytes the trace recorded
    /// marked for recording whole at its next write (what the trace holds there is not
    /// known to the new shadow, and zeros might not be it).
    fn remapped(self, offset: u64, len: usize) -> Shadow {
        if self.offset == offset && self.bytes.len() == len {
            return self;
        }
        let mut fresh = Shadow::zeros(offset, len);
        fresh.recorded = self.recorded;
        if let Some((start, end)) = self.recorded {
            for page in 0..len.div_ceil(PAGE) {
                let from = offset + (page * PAGE) as u64;
                let to = from + PAGE as u64;
                if from < end && start < to {
                    set_bit(&mut fresh.unshadowed, page, true);
                }
            }
        }
        fresh
    }
}

/// A pointer into mapped memory, owned by the device that mapped it.
struct SendPtr(*const u8);

// SAFETY: the pointer is only read, under the device's lock, while the memory is mapped.
unsafe impl Send for SendPtr {}

/// Where found changes go: the allocation, the offset in it, and the bytes there now
/// (read from the mapping, so no copy is made of them).
pub type ChangeSink<'a> = dyn FnMut(u64, u64, &[u8]) + 'a;

/// Zeros, what a shadow page never written holds.
static ZERO_PAGE: [u8; PAGE] = [0; PAGE];

/// Every mapped range of one device.
#[derive(Default)]
pub struct MappedMemory {
    sizes: HashMap<u64, u64>,
    maps: HashMap<u64, Mapping>,
    /// The shadows of allocations mapped before and not mapped now.
    retained: HashMap<u64, Shadow>,
    /// What is bound where: the bytes of optimal-tiling images are not compared, and
    /// their pages are left unprotected.
    bindings: Bindings,
    tracking: Tracking,
    /// Set once capture is over: nothing is watched or shadowed from then on.
    over: bool,
    /// Set at the first submit: from then on the device may have written any mapped
    /// byte where the page protection does not see it (a GPU's writes never fault; a
    /// CPU device's fault only while the memory is mapped).
    submitted: bool,
}

impl MappedMemory {
    /// Tracking that finds host writes the `tracking` way.
    pub fn with_tracking(tracking: Tracking) -> Self {
        MappedMemory {
            tracking,
            ..Default::default()
        }
    }

    /// Stops watching for good, once capture is over (its frame window passed, or it
    /// stopped): every page unprotected, every shadow dropped, and later mappings not
    /// watched. A program captured for a window of frames then runs on at its own speed
    /// (its host writes no longer fault or get compared) and gets back the shadows'
    /// memory.
    pub fn capture_over(&mut self) {
        if self.over {
            return;
        }
        self.over = true;
        // Dropping a mapping's watch makes its pages writable again.
        self.maps.clear();
        self.retained.clear();
    }

    /// Notes an image created with optimal tiling (its bytes are the driver's).
    pub fn optimal_image(&mut self, image: u64) {
        self.bindings.optimal_image(image);
    }

    /// Notes that `object` (a buffer or an image) occupies `size` bytes of `memory` at
    /// `offset`.
    pub fn bound(&mut self, memory: u64, object: u64, offset: u64, size: u64) {
        self.bindings.bound(memory, object, offset, size);
        self.leave_hidden_open(memory);
    }

    /// Forgets `object` (it is destroyed).
    pub fn unbound(&mut self, object: u64) {
        if let Some(memory) = self.bindings.unbound(object) {
            self.leave_hidden_open(memory);
        }
    }

    /// Leaves the pages of `memory`'s mapping that hold only hidden bytes unprotected:
    /// nothing compares them, and where the device renders into host memory its writes
    /// would fault there at every frame.
    fn leave_hidden_open(&mut self, memory: u64) {
        let Some(m) = self.maps.get_mut(&memory) else {
            return;
        };
        if let Some(watch) = m.watch.as_mut() {
            watch.leave_open(&hidden_in_mapping(&self.bindings, memory, &m.shadow));
        }
    }

    /// Notes an allocation's size, to resolve `VK_WHOLE_SIZE` mappings.
    pub fn allocated(&mut self, memory: u64, size: u64) {
        self.sizes.insert(memory, size);
    }

    /// The allocation's size, if known.
    pub fn size_of(&self, memory: u64) -> Option<u64> {
        self.sizes.get(&memory).copied()
    }

    /// Notes a mapping of `len` bytes at `offset`, seen by the program at `ptr`, and
    /// says how it is tracked (once capture is over, it is not).
    ///
    /// # Safety
    /// `ptr` must stay readable for `len` bytes until [`Self::unmapped`] or
    /// [`Self::freed`] is called for `memory`.
    pub unsafe fn mapped(
        &mut self,
        memory: u64,
        offset: u64,
        len: usize,
        ptr: *const u8,
    ) -> Watched {
        if self.over {
            return Watched::Not;
        }
        // Any earlier mapping of it goes first (its pages unprotected).
        if let Some(earlier) = self.maps.remove(&memory) {
            self.retained.insert(memory, earlier.shadow);
        }
        let watch = match self.tracking {
            Tracking::Protect => Watch::new(ptr, len),
            Tracking::Compare => None,
        };
        if let (Some(watch), true) = (&watch, self.submitted) {
            watch.open_pages_singly();
        }
        let watched = match watch {
            Some(_) => Watched::Protected,
            None => Watched::Compared,
        };
        let shadow = match self.retained.remove(&memory) {
            Some(kept) => kept.remapped(offset, len),
            None => Shadow::zeros(offset, len),
        };
        self.maps.insert(
            memory,
            Mapping {
                ptr: SendPtr(ptr),
                shadow,
                watch,
                written_at: 0,
                hot_unchanged: None,
            },
        );
        self.leave_hidden_open(memory);
        watched
    }

    /// Notes a submit: the device may write mapped memory from now on, so every page a
    /// fault opens goes into the trace whole at the next look (see `changes_of`),
    /// and a fault opens no more pages than the program writes.
    pub fn submitting(&mut self) {
        if self.submitted {
            return;
        }
        self.submitted = true;
        for watch in self.maps.values().filter_map(|m| m.watch.as_ref()) {
            watch.open_pages_singly();
        }
    }

    /// Gives `out` the changes in every mapping since the last look.
    pub fn changes(&mut self, out: &mut ChangeSink<'_>) {
        if self.maps.values().any(|m| m.watch.is_some()) {
            crate::fault_chain::keep_installed();
        }
        let mut memories: Vec<u64> = self.maps.keys().copied().collect();
        memories.sort_unstable();
        for memory in memories {
            self.changes_of(memory, 0, u64::MAX, out);
        }
    }

    /// Gives `out` the changes in `memory`'s mapping within `offset..offset + size` since
    /// the last look.
    pub fn changes_in(&mut self, memory: u64, offset: u64, size: u64, out: &mut ChangeSink<'_>) {
        self.changes_of(memory, offset, size, out);
    }

    /// Ends `memory`'s mapping, giving `out` what changed in it since the last look;
    /// its shadow is kept for the next mapping.
    pub fn unmapped(&mut self, memory: u64, out: &mut ChangeSink<'_>) {
        self.changes_of(memory, 0, u64::MAX, out);
        if let Some(mapping) = self.maps.remove(&memory) {
            self.retained.insert(memory, mapping.shadow);
        }
    }

    /// Forgets `memory` altogether (it is being freed, which unmaps it), giving `out`
    /// what changed in it since the last look.
    pub fn freed(&mut self, memory: u64, out: &mut ChangeSink<'_>) {
        self.unmapped(memory, out);
        self.retained.remove(&memory);
        self.sizes.remove(&memory);
        self.bindings.freed(memory);
    }

    fn changes_of(&mut self, memory: u64, offset: u64, size: u64, out: &mut ChangeSink<'_>) {
        let Some(m) = self.maps.get_mut(&memory) else {
            return;
        };
        let len = m.shadow.bytes.len();
        // The part of the mapping the range covers, in mapping-relative bytes.
        let start = offset.saturating_sub(m.shadow.offset).min(len as u64) as usize;
        let end = offset
            .saturating_add(size)
            .saturating_sub(m.shadow.offset)
            .min(len as u64) as usize;
        let hidden = hidden_in_mapping(&self.bindings, memory, &m.shadow);
        // A watched mapping is compared where it was written: every page written since
        // the last look, also outside a flushed range (taking them re-protects them,
        // so none may be left for later).
        let wanted: Vec<(usize, usize)> = match &m.watch {
            Some(watch) => watch
                .take_dirty()
                .into_iter()
                .map(|(a, b)| (a.min(len), b.min(len)))
                .filter(|(a, b)| a < b)
                .collect(),
            None if m.hot_unchanged.is_some() => vec![(0, len)],
            None => vec![(start, end)],
        };
        if self.submitted {
            hot_look(m, !wanted.is_empty(), &hidden);
        }
        // A written page of a watched mapping goes whole once a submit was made: the
        // shadow holds what the trace holds, but the device may since have written the
        // page unseen, and the replay's device writes it again; a byte the program
        // then sets back to the shadow's value is no change against the shadow, yet one
        // against what the replay holds (Stellarium through Zink: every frame differed
        // on replay). The price is a page's bytes where a program writes a little of
        // it; a fault then opens only the page written and pages ahead of a run the
        // program writes forward (`Watch::open_pages_singly`), so few go needlessly.
        if self.submitted && (m.watch.is_some() || m.hot_unchanged.is_some()) {
            for &(from, to) in &wanted {
                for page in from / PAGE..to.div_ceil(PAGE) {
                    set_bit(&mut m.shadow.unshadowed, page, true);
                }
            }
        }
        for (from, to) in wanted {
            for (a, b) in visible_parts(from, to, &hidden) {
                scan(memory, m, a, b, self.submitted, out);
            }
        }
    }
}

/// `memory`'s hidden bytes ([`Bindings::hidden`]) within the mapping `shadow` stands
/// for, relative to it.
fn hidden_in_mapping(bindings: &Bindings, memory: u64, shadow: &Shadow) -> Vec<(usize, usize)> {
    let len = shadow.bytes.len() as u64;
    let relative = |at: u64| at.saturating_sub(shadow.offset).min(len) as usize;
    bindings
        .hidden(memory)
        .iter()
        .map(|&(s, e)| (relative(s), relative(e)))
        .filter(|(s, e)| s < e)
        .collect()
}

/// At a look after a submit, before `m` is scanned: a small watched mapping
/// `written` at [`HOT_WRITES`] of its last eight looks turns hot (its watch is
/// dropped, which opens its pages), and a hot one whose visible bytes (outside
/// `hidden`) equal its shadow at [`HOT_QUIET_LOOKS`] looks in a row is watched again.
fn hot_look(m: &mut Mapping, written: bool, hidden: &[(usize, usize)]) {
    let len = m.shadow.bytes.len();
    match m.hot_unchanged {
        None if m.watch.is_some() => {
            m.written_at = m.written_at << 1 | u8::from(written);
            if len <= HOT_MAX_BYTES && m.written_at.count_ones() >= HOT_WRITES {
                m.watch = None;
                m.hot_unchanged = Some(0);
            }
        }
        None => {}
        Some(quiet) => {
            // SAFETY: `mapped`'s caller keeps `len` bytes at `ptr` readable while
            // mapped.
            let live = unsafe { std::slice::from_raw_parts(m.ptr.0, len) };
            let unchanged = visible_parts(0, len, hidden)
                .into_iter()
                .all(|(a, b)| live[a..b] == m.shadow.bytes[a..b]);
            let quiet = if unchanged { quiet + 1 } else { 0 };
            m.hot_unchanged = Some(quiet);
            if quiet >= HOT_QUIET_LOOKS {
                // SAFETY: as for `mapped`: the bytes stay mapped while it is.
                m.watch = unsafe { Watch::new(m.ptr.0, len) };
                if let Some(watch) = &mut m.watch {
                    watch.open_pages_singly();
                    watch.leave_open(hidden);
                    m.hot_unchanged = None;
                    m.written_at = 0;
                }
            }
        }
    }
}

/// Whether bit `index` of `bits` is set.
fn bit(bits: &[u64], index: usize) -> bool {
    bits[index / 64] & (1 << (index % 64)) != 0
}

/// Sets bit `index` of `bits` to `value`.
fn set_bit(bits: &mut [u64], index: usize, value: bool) {
    let mask = 1 << (index % 64);
    if value {
        bits[index / 64] |= mask;
    } else {
        bits[index / 64] &= !mask;
    }
}

/// Finds the changes in mapping-relative bytes `start..end` of `m`, into `out` and into
/// its shadow.
///
/// A watched mapping's page is shadowed from its second write on: the first time it is
/// written, its changes (against zeros) go into the trace and its shadow page stays
/// unwritten; the next time it is written, it goes into the trace whole and into the
/// shadow; from then on it is compared with the shadow. A program streaming through a
/// large mapping writes most pages once between wraps, and writing a shadow page costs
/// a page fault the first time: that fault is now paid only by pages written again.
/// An unwatched mapping is compared whole at every look, so its pages are shadowed at
/// once (a page recorded whole at every look would fill the trace).
///
/// Once `submitted`, a watched mapping's written pages go whole at every look (see
/// `changes_of`), so its shadow is not read again: the pages recorded are left
/// unshadowed, and nothing is copied into the shadow for them (on the H200 machine,
/// copying the mapped scene's MiB a frame into fresh shadow pages took it from about 1.2×
/// to 1.4× its time alone).
fn scan(
    memory: u64,
    m: &mut Mapping,
    start: usize,
    end: usize,
    submitted: bool,
    out: &mut ChangeSink<'_>,
) {
    let len = m.shadow.bytes.len();
    let watched = m.watch.is_some();
    let unshadow = |m: &Mapping, page: usize| {
        watched
            && (submitted || (!bit(&m.shadow.written, page) && !bit(&m.shadow.unshadowed, page)))
    };
    // SAFETY: `mapped`'s caller keeps `len` bytes at `ptr` readable while mapped.
    let live = unsafe { std::slice::from_raw_parts(m.ptr.0, len) };
    let mut run: Option<(usize, usize)> = None;
    let mut flush = |(a, b): (usize, usize), m: &mut Mapping| {
        for page in a / PAGE..b.div_ceil(PAGE) {
            let (from, to) = ((page * PAGE).max(a), ((page + 1) * PAGE).min(b));
            if unshadow(m, page) {
                set_bit(&mut m.shadow.unshadowed, page, true);
            } else {
                m.shadow.bytes[from..to].copy_from_slice(&live[from..to]);
                set_bit(&mut m.shadow.written, page, true);
                set_bit(&mut m.shadow.unshadowed, page, false);
            }
        }
        let (start, end) = (m.shadow.offset + a as u64, m.shadow.offset + b as u64);
        m.shadow.recorded = Some(
            m.shadow
                .recorded
                .map_or((start, end), |(s, e)| (s.min(start), e.max(end))),
        );
        out(memory, start, &live[a..b]);
    };
    let mut extend = |run: &mut Option<(usize, usize)>, (s, e): (usize, usize), m: &mut Mapping| {
        *run = match *run {
            Some((rs, re)) if s < re + MERGE_GAP => Some((rs, e.max(re))),
            Some(r) => {
                flush(r, m);
                Some((s, e))
            }
            None => Some((s, e)),
        };
    };
    let mut page = start / PAGE * PAGE;
    while page < end {
        let (a, b) = (page.max(start), (page + PAGE).min(end));
        let index = page / PAGE;
        if bit(&m.shadow.unshadowed, index) {
            // What the trace holds of it is not known here: all of it goes again.
            extend(&mut run, (a, b), m);
        } else {
            let shadow = if bit(&m.shadow.written, index) {
                &m.shadow.bytes[a..b]
            } else {
                &ZERO_PAGE[..b - a]
            };
            if live[a..b] != *shadow {
                for (s, e) in changed_ranges(&live[a..b], shadow) {
                    extend(&mut run, (a + s, a + e), m);
                }
            }
        }
        page += PAGE;
    }
    if let Some(r) = run {
        flush(r, m);
    }
}

/// The ranges where `live` differs from `shadow` (equal lengths), to the word, those
/// closer than [`MERGE_GAP`] merged. Blocks of [`BLOCK`] bytes are compared whole (eight
/// words folded into one, which the compiler makes vector code); words are looked at
/// only in the blocks where a range begins or ends.
fn changed_ranges(live: &[u8], shadow: &[u8]) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    // The open range: where it starts, and the last block that differed in it.
    let mut open: Option<(usize, usize)> = None;
    let end_in = |block: usize| block + last_differing_word(&live[block..], &shadow[block..]);
    let mut at = 0;
    while at < live.len() {
        let end = (at + BLOCK).min(live.len());
        if block_differs(&live[at..end], &shadow[at..end]) {
            open = match open {
                // Within the gap however the two blocks' words lie: no word looked at.
                Some((from, last)) if at + BLOCK < last + MERGE_GAP => Some((from, at)),
                open => {
                    let start = at + first_differing_word(&live[at..end], &shadow[at..end]);
                    match open {
                        Some((from, last)) if start < end_in(last) + MERGE_GAP => Some((from, at)),
                        Some((from, last)) => {
                            ranges.push((from, end_in(last)));
                            Some((start, at))
                        }
                        None => Some((start, at)),
                    }
                }
            };
        }
        at = end;
    }
    if let Some((from, last)) = open {
        ranges.push((from, end_in(last)));
    }
    ranges
}

/// Bytes compared as one block by [`changed_ranges`].
const BLOCK: usize = 64;

/// Whether two blocks of equal length differ.
#[inline(always)]
fn block_differs(a: &[u8], b: &[u8]) -> bool {
    match (<&[u8; BLOCK]>::try_from(a), <&[u8; BLOCK]>::try_from(b)) {
        (Ok(a), Ok(b)) => {
            let mut diff = 0u64;
            for i in 0..BLOCK / WORD {
                diff |= word_at(a, i) ^ word_at(b, i);
            }
            diff != 0
        }
        _ => a != b,
    }
}

#[inline(always)]
fn word_at(block: &[u8; BLOCK], i: usize) -> u64 {
    let mut w = [0u8; WORD];
    w.copy_from_slice(&block[i * WORD..(i + 1) * WORD]);
    u64::from_ne_bytes(w)
}

/// Where the first differing word of `a` and `b` starts (0 when none differs).
fn first_differing_word(a: &[u8], b: &[u8]) -> usize {
    a.chunks(WORD)
        .zip(b.chunks(WORD))
        .position(|(x, y)| x != y)
        .map_or(0, |i| i * WORD)
}

/// Where the last differing word within the first block of `a` and `b` ends.
fn last_differing_word(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len()).min(BLOCK);
    let words = n.div_ceil(WORD);
    (0..words)
        .rev()
        .find(|&i| {
            let end = ((i + 1) * WORD).min(n);
            a[i * WORD..end] != b[i * WORD..end]
        })
        .map_or(0, |i| ((i + 1) * WORD).min(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A change found: where, and the bytes.
    #[derive(Debug, PartialEq)]
    struct Change {
        offset: u64,
        data: Vec<u8>,
    }

    /// What `look` gives its sink.
    fn look_with(look: impl FnOnce(&mut ChangeSink<'_>)) -> Vec<Change> {
        let mut out = Vec::new();
        look(&mut |_, offset, data| {
            out.push(Change {
                offset,
                data: data.to_vec(),
            })
        });
        out
    }

    /// Writes a byte at an offset of the test's mapping at `at`, as the program would
    /// (from any thread).
    fn writer(at: usize) -> impl Fn(usize, u8) + Copy + Send {
        move |offset, value| {
            // SAFETY: every test writes within its mapping, which outlives the writes.
            unsafe { *((at + offset) as *mut u8) = value }
        }
    }

    /// The permissions (`rw-`, `r--`, ...) of the mapping that holds `addr`, as the
    /// kernel lists them.
    fn permissions(addr: usize) -> String {
        let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
        maps.lines()
            .find_map(|line| {
                let (range, rest) = line.split_once(' ')?;
                let (start, end) = range.split_once('-')?;
                let start = usize::from_str_radix(start, 16).ok()?;
                let end = usize::from_str_radix(end, 16).ok()?;
                (start..end).contains(&addr).then(|| rest[..3].to_string())
            })
            .expect("a mapping holds the address")
    }

    /// On a device whose memory is the host's (lavapipe), the device renders into the
    /// program's mapped allocations: the pages that hold only an optimal-tiling image
    /// are left writable, so its writes do not fault, and nothing compares them. Once
    /// the image is gone they are compared and protected again.
    #[test]
    fn an_optimal_images_pages_are_left_open_until_it_is_gone() {
        let len = 16 * PAGE;
        let pages = crate::write_watch::Pages::new(len);
        let at = pages.0 as usize;
        let write = writer(at);
        let mut mm = MappedMemory::with_tracking(Tracking::Protect);
        // SAFETY: the mapping outlives the tracking of it.
        unsafe { mm.mapped(5, 0, len, pages.0 as *const u8) };
        mm.bound(5, 10, 0, 100); // a buffer
        mm.optimal_image(20);
        // The image's bytes cover pages 2 to 8 whole, and parts of pages 1 and 9.
        mm.bound(5, 20, PAGE as u64 + 100, 8 * PAGE as u64);
        for (page, expected) in [(0, "r--"), (1, "r--"), (2, "rw-"), (8, "rw-"), (9, "r--")] {
            assert_eq!(permissions(at + page * PAGE), expected, "page {page}");
        }
        write(3 * PAGE, 1); // the device rendering
        write(10, 2); // the program
        let found = |changes: &[Change], offset: u64| {
            changes
                .iter()
                .find(|c| (c.offset..c.offset + c.data.len() as u64).contains(&offset))
                .map(|c| c.data[(offset - c.offset) as usize])
        };
        let changes = look_with(|o| mm.changes(o));
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(found(&changes, 10), Some(2));
        assert_eq!(permissions(at + 3 * PAGE), "rw-", "left open after a look");

        mm.unbound(20);
        write(4 * PAGE, 3);
        let changes = look_with(|o| mm.changes(o));
        assert_eq!(
            (
                found(&changes, 3 * PAGE as u64),
                found(&changes, 4 * PAGE as u64)
            ),
            (Some(1), Some(3))
        );
        for page in 2..=8 {
            assert_eq!(permissions(at + page * PAGE), "r--", "page {page}");
        }
    }

    #[test]
    fn once_capture_is_over_mappings_are_unprotected_and_nothing_is_found() {
        let len = 16 * PAGE;
        let pages = crate::write_watch::Pages::new(len);
        let at = pages.0 as usize;
        let write = writer(at);
        let mut mm = MappedMemory::with_tracking(Tracking::Protect);
        // SAFETY: the mapping outlives the tracking of it.
        assert_eq!(
            unsafe { mm.mapped(5, 0, len, pages.0 as *const u8) },
            Watched::Protected
        );
        assert_eq!(
            permissions(at),
            "r--",
            "a watched mapping is write-protected"
        );
        write(100, 7);
        assert_eq!(look_with(|o| mm.changes(o)).len(), 1);
        mm.capture_over();
        assert_eq!(
            permissions(at),
            "rw-",
            "capture over: the pages are writable again"
        );
        write(200, 8);
        assert!(look_with(|o| mm.changes(o)).is_empty());
        // A mapping made after capture is over is not watched either.
        // SAFETY: as above.
        assert_eq!(
            unsafe { mm.mapped(5, 0, len, pages.0 as *const u8) },
            Watched::Not
        );
        assert_eq!(permissions(at), "rw-");
        write(300, 9);
        assert!(look_with(|o| mm.changes(o)).is_empty());
        assert!(look_with(|o| mm.unmapped(5, o)).is_empty());
    }

    /// Once a submit was made the device may have written a mapped page unseen (its
    /// writes never fault), so a page the program writes goes whole: a byte set back to
    /// what the trace held is recorded too, as the replay's device may hold another.
    #[test]
    fn after_a_submit_a_written_page_goes_whole() {
        let len = 4 * PAGE;
        let pages = crate::write_watch::Pages::new(len);
        let at = pages.0 as usize;
        let write = writer(at);
        let mut mm = MappedMemory::with_tracking(Tracking::Protect);
        // SAFETY: the mapping outlives the tracking of it.
        let watched = unsafe { mm.mapped(3, 0, len, pages.0 as *const u8) };
        assert_eq!(watched, Watched::Protected);
        // Before any submit, what changed: a word, then the page whole on its second
        // write (its shadow begins then), then nothing for a rewrite of the same byte.
        write(PAGE + 8, 7);
        let first = look_with(|o| mm.changes(o));
        assert_eq!(
            first,
            [Change {
                offset: PAGE as u64 + 8,
                data: vec![7, 0, 0, 0, 0, 0, 0, 0]
            }]
        );
        write(PAGE + 8, 7);
        assert_eq!(look_with(|o| mm.changes(o))[0].data.len(), PAGE);
        write(PAGE + 8, 7);
        assert!(look_with(|o| mm.changes(o)).is_empty());
        // The program submits; the device may write the page, the program then sets
        // the byte back to 7: the page its write opened goes whole, and only that one
        // (before the submit, a fault opened its group of 16 pages: here all four).
        mm.submitting();
        write(PAGE + 8, 7);
        let after = look_with(|o| mm.changes(o));
        assert_eq!(after.len(), 1);
        assert_eq!((after[0].offset, after[0].data.len()), (PAGE as u64, PAGE));
        assert_eq!(after[0].data[8], 7);
        // Written again with what the trace holds, it goes whole again: after a submit
        // no page of a watched mapping is compared with a shadow.
        write(PAGE + 8, 7);
        let again = look_with(|o| mm.changes(o));
        assert_eq!((again[0].offset, again[0].data.len()), (PAGE as u64, PAGE));
        // A mapping made after the submit opens single pages too.
        mm.unmapped(3, &mut |_, _, _| {});
        // SAFETY: as above.
        unsafe { mm.mapped(3, 0, len, pages.0 as *const u8) };
        write(3 * PAGE, 9);
        let remapped = look_with(|o| mm.changes(o));
        assert_eq!(remapped.len(), 1);
        assert_eq!(
            (remapped[0].offset, remapped[0].data.len()),
            (3 * PAGE as u64, PAGE)
        );
        // Nothing written since: nothing goes.
        assert!(look_with(|o| mm.changes(o)).is_empty());
    }

    #[test]
    fn a_small_mapping_written_at_most_looks_is_recorded_whole_unwatched_until_it_rests() {
        // A uniform buffer of one frame in flight among three, as vkcube's: written at
        // every third look after the first submit.
        let len = 1216;
        let pages = crate::write_watch::Pages::new(PAGE);
        let at = pages.0 as usize;
        let write = writer(at);
        let mut mm = MappedMemory::with_tracking(Tracking::Protect);
        // SAFETY: the mapping outlives the tracking of it.
        let watched = unsafe { mm.mapped(4, 0, len, pages.0 as *const u8) };
        assert_eq!(watched, Watched::Protected);
        mm.submitting();
        let mut looks = Vec::new();
        for look in 0..7 {
            if look % 3 == 0 {
                write(16, look as u8 + 1);
            }
            looks.push(look_with(|o| mm.changes(o)));
        }
        // Watched, only the looks that followed a write found anything; the third
        // write made the mapping hot: its page is writable again.
        assert_eq!(looks.iter().filter(|l| !l.is_empty()).count(), 3);
        assert_eq!(permissions(at), "rw-", "a hot mapping is not protected");
        // Hot, every look records it whole, written or not (the device may have
        // written it since the last submit), and a write costs no fault.
        write(20, 9);
        let hot = look_with(|o| mm.changes(o));
        assert_eq!(hot.len(), 1);
        assert_eq!((hot[0].offset, hot[0].data.len()), (0, len));
        assert_eq!((hot[0].data[16], hot[0].data[20]), (7, 9));
        assert_eq!(look_with(|o| mm.changes(o))[0].data.len(), len);
        // Unchanged at eight looks in a row, it is watched again: protected, and
        // from then on only a write brings a record.
        for _ in 0..HOT_QUIET_LOOKS {
            look_with(|o| mm.changes(o));
        }
        assert_eq!(permissions(at), "r--", "a mapping at rest is watched again");
        assert!(look_with(|o| mm.changes(o)).is_empty());
        write(16, 10);
        let woken = look_with(|o| mm.changes(o));
        assert_eq!(woken.len(), 1);
        assert_eq!(woken[0].data[16], 10);
    }

    #[test]
    fn a_large_mapping_written_at_every_look_stays_watched() {
        let len = 2 * HOT_MAX_BYTES;
        let pages = crate::write_watch::Pages::new(len);
        let at = pages.0 as usize;
        let mut mm = MappedMemory::with_tracking(Tracking::Protect);
        // SAFETY: the mapping outlives the tracking of it.
        unsafe { mm.mapped(6, 0, len, pages.0 as *const u8) };
        mm.submitting();
        let write = writer(at);
        for look in 0..8u8 {
            write(0, look + 1);
            assert_eq!(look_with(|o| mm.changes(o))[0].data.len(), PAGE);
        }
        assert_eq!(permissions(at), "r--");
    }

    #[test]
    fn protected_mappings_find_the_bytes_written_from_any_thread() {
        let len = 64 * PAGE;
        let pages = crate::write_watch::Pages::new(len);
        let base = pages.0;
        let at = base as usize;
        let write = writer(at);
        let mut mm = MappedMemory::with_tracking(Tracking::Protect);
        // SAFETY: the mapping outlives the tracking of it.
        assert_eq!(
            unsafe { mm.mapped(3, 0, len, base as *const u8) },
            Watched::Protected
        );
        // Four threads write a persistent mapping at once.
        std::thread::scope(|s| {
            for t in 0..4usize {
                s.spawn(move || write(t * 16 * PAGE + 100 + t, t as u8 + 1));
            }
        });
        let found: Vec<(u64, Vec<u8>)> = look_with(|o| mm.changes(o))
            .into_iter()
            .map(|c| (c.offset, c.data))
            .collect();
        assert_eq!(
            found,
            (0..4u64)
                .map(|t| (t * 16 * PAGE as u64 + 96, {
                    let mut w = vec![0u8; 8];
                    w[4 + t as usize] = t as u8 + 1;
                    w
                }))
                .collect::<Vec<_>>()
        );
        // A write after a flush of another range is found by the flush or the next look.
        write(40 * PAGE, 9);
        let flushed = look_with(|o| mm.changes_in(3, 0, 8, o));
        let later = look_with(|o| mm.changes(o));
        let all: Vec<(u64, usize)> = flushed
            .iter()
            .chain(&later)
            .map(|c| (c.offset, c.data.len()))
            .collect();
        // Page 32 shares the fault's group of pages with page 40, so it was looked at
        // again: written once before, it goes into the trace whole this once.
        assert_eq!(all, [(32 * PAGE as u64, PAGE), (40 * PAGE as u64, 8)]);
        // The second write to a page records the page whole (its shadow was left
        // unwritten after the first); its neighbours, written never, record nothing.
        write(40 * PAGE, 9);
        let second = look_with(|o| mm.changes(o));
        assert_eq!(second.len(), 1);
        assert_eq!(
            (second[0].offset, second[0].data.len()),
            (40 * PAGE as u64, PAGE)
        );
        assert_eq!(second[0].data[0], 9);
        // From then on the page is compared with its shadow: rewriting a byte with what
        // it held records nothing, a change records its word.
        write(40 * PAGE, 9);
        assert!(look_with(|o| mm.changes(o)).is_empty());
        write(40 * PAGE + 17, 4);
        let third = look_with(|o| mm.changes(o));
        assert_eq!(third.len(), 1);
        assert_eq!(
            (third[0].offset, third[0].data.len()),
            (40 * PAGE as u64 + 16, 8)
        );
        let last = look_with(|o| mm.unmapped(3, o));
        assert!(last.is_empty());
        // Unwatched, the pages are writable as before.
        write(41 * PAGE, 1);
    }

    #[test]
    fn a_zero_written_over_an_earlier_mapping_s_bytes_is_recorded() {
        for tracking in [Tracking::Protect, Tracking::Compare] {
            let len = 4 * PAGE;
            let pages = crate::write_watch::Pages::new(len);
            let at = pages.0 as usize;
            let write = writer(at);
            let mut mm = MappedMemory::with_tracking(tracking);
            let changes =
                |mm: &mut MappedMemory, look: &dyn Fn(&mut MappedMemory, &mut ChangeSink<'_>)| {
                    look_with(|o| look(mm, o))
                        .into_iter()
                        .map(|c| (c.offset, c.data))
                        .collect::<Vec<_>>()
                };
            // SAFETY: the pages outlive the tracking of them.
            unsafe { mm.mapped(7, 0, len, pages.0 as *const u8) };
            write(100, 5);
            let first = changes(&mut mm, &|mm, o| mm.unmapped(7, o));
            assert_eq!(first, [(96, vec![0, 0, 0, 0, 5, 0, 0, 0])], "{tracking:?}");
            // Mapped again, the program writes the byte back to zero: the trace must
            // say so, though zero is what a fresh shadow would hold.
            // SAFETY: as above.
            unsafe { mm.mapped(7, 0, len, pages.0 as *const u8) };
            write(100, 0);
            let second = changes(&mut mm, &|mm, o| mm.unmapped(7, o));
            // (Watched, the page goes whole: its second write since it was shadowed.)
            let recorded_at_100 = second
                .iter()
                .find(|(o, d)| *o <= 100 && 100 < *o + d.len() as u64)
                .map(|(o, d)| d[(100 - o) as usize]);
            assert_eq!(recorded_at_100, Some(0), "{tracking:?}");
            // Mapped at another offset, a page over recorded bytes goes whole at its
            // next write; pages past them compare with zeros as before.
            write(PAGE + 8, 3);
            // SAFETY: as above; the mapping shows the allocation from PAGE on.
            unsafe { mm.mapped(7, PAGE as u64, 2 * PAGE, (at + PAGE) as *const u8) };
            let lens = |c: Vec<(u64, Vec<u8>)>| {
                c.into_iter().map(|(o, d)| (o, d.len())).collect::<Vec<_>>()
            };
            write(PAGE + 8, 0);
            write(2 * PAGE + 8, 1);
            let third = changes(&mut mm, &|mm, o| mm.unmapped(7, o));
            // The old mapping recorded only bytes of its first page: the second page of
            // the allocation, not overlapping them, is compared with zeros.
            assert_eq!(lens(third), [(2 * PAGE as u64 + 8, 8)], "{tracking:?}");
            // Mapped over recorded bytes at yet another range, a written page goes into
            // the trace whole: the new shadow cannot know what the trace holds there.
            // SAFETY: as above.
            unsafe { mm.mapped(7, 0, 2 * PAGE, pages.0 as *const u8) };
            write(100, 9);
            let fourth = changes(&mut mm, &|mm, o| mm.unmapped(7, o));
            assert_eq!(fourth[0].0, 0, "{tracking:?}");
            assert!(fourth[0].1.len() >= PAGE, "{tracking:?}");
            assert_eq!(fourth[0].1[100], 9, "{tracking:?}");
            // Freed, nothing is kept.
            look_with(|o| mm.freed(7, o));
            assert!(mm.retained.is_empty());
        }
    }

    #[test]
    fn changed_bytes_are_found_merged_and_found_once() {
        let mut bytes = vec![0u8; 5 * PAGE];
        let mut mm = MappedMemory::default();
        mm.allocated(7, 6 * PAGE as u64);
        // SAFETY: `bytes` outlives the mapping and is not reallocated.
        unsafe { mm.mapped(7, PAGE as u64, bytes.len(), bytes.as_ptr()) };
        assert!(
            look_with(|o| mm.changes(o)).is_empty(),
            "zeros are what the shadow holds"
        );
        bytes[10] = 1;
        bytes[40] = 5;
        bytes[PAGE + 5] = 2;
        bytes[3 * PAGE + 1] = 3;
        let changes = look_with(|o| mm.changes(o));
        // Bytes 10 and 40 share a range (closer than MERGE_GAP), words of eight.
        let found: Vec<(u64, usize)> = changes.iter().map(|c| (c.offset, c.data.len())).collect();
        let base = PAGE as u64;
        assert_eq!(
            found,
            [
                (base + 8, 40),
                (base + PAGE as u64, 8),
                (base + 3 * PAGE as u64, 8)
            ]
        );
        assert_eq!(changes[0].data[2], 1);
        assert_eq!(changes[0].data[32], 5);
        assert_eq!(changes[2].data[1], 3);
        assert!(
            look_with(|o| mm.changes(o)).is_empty(),
            "recorded changes are not recorded again"
        );
        // Rewriting a byte with what it held records nothing.
        bytes[10] = 1;
        assert!(look_with(|o| mm.changes(o)).is_empty());
        bytes[2 * PAGE + 15] = 9;
        // A flush of a range elsewhere sees nothing; one covering the write sees it.
        assert!(look_with(|o| mm.changes_in(7, PAGE as u64, 100, o)).is_empty());
        let c = look_with(|o| mm.changes_in(7, 3 * PAGE as u64 + 10, 20, o));
        assert_eq!((c[0].offset, c[0].data.len()), (3 * PAGE as u64 + 10, 8));
        // Writes at the end of one page and the start of the next: one range.
        bytes[2 * PAGE - 1] = 6;
        bytes[2 * PAGE + 2] = 7;
        let c = look_with(|o| mm.unmapped(7, o));
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].offset, c[0].data.len()), (3 * PAGE as u64 - 8, 16));
        assert!(look_with(|o| mm.changes(o)).is_empty());
        assert_eq!(mm.size_of(7), Some(6 * PAGE as u64));
    }

    /// The rule [`changed_ranges`] keeps, word by word: each differing word, merged
    /// with the range before it when it starts less than [`MERGE_GAP`] after its end.
    fn changed_words(live: &[u8], shadow: &[u8]) -> Vec<(usize, usize)> {
        let mut ranges: Vec<(usize, usize)> = Vec::new();
        for (i, (l, s)) in live.chunks(WORD).zip(shadow.chunks(WORD)).enumerate() {
            if l != s {
                let (at, end) = (i * WORD, i * WORD + l.len());
                match ranges.last_mut() {
                    Some((_, e)) if at < *e + MERGE_GAP => *e = end,
                    _ => ranges.push((at, end)),
                }
            }
        }
        ranges
    }

    #[test]
    fn ranges_found_by_blocks_are_those_found_word_by_word() {
        // Sparse and dense writes, gaps on both sides of MERGE_GAP and block edges,
        // lengths that end mid-block and mid-word.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for case in 0..400 {
            let len = 1 + (next() % (3 * PAGE as u64)) as usize;
            let shadow: Vec<u8> = (0..len).map(|_| next() as u8).collect();
            let mut live = shadow.clone();
            let writes = next() % 12;
            for _ in 0..writes {
                let at = (next() % len as u64) as usize;
                let run = 1 + (next() % [1, 8, 70, 1100, 2100][case % 5]) as usize;
                for b in &mut live[at..(at + run).min(len)] {
                    *b = b.wrapping_add(1);
                }
            }
            assert_eq!(
                changed_ranges(&live, &shadow),
                changed_words(&live, &shadow),
                "case {case}, {len} bytes"
            );
        }
    }
}
