//! What is bound where in each allocation, for the mapped-memory tracker: the bytes of
//! images created with optimal tiling are the driver's. Their layout is its own, the
//! host cannot meaningfully write them, and a replay does not need them, but on a
//! device whose memory is all host-visible (lavapipe; integrated GPUs) an allocation
//! the program maps for its buffers can hold a depth buffer or a render target too,
//! which the device rewrites every frame. Comparing those bytes would put every frame's
//! rendering into the trace as if the program had written it (glmark2 through Zink: two
//! thirds of the trace). So they are not compared — except where a buffer or a
//! linear-tiling image is bound over the same bytes (aliasing), whose host writes count.

use std::collections::{HashMap, HashSet};

/// One resource bound to an allocation.
#[derive(Clone, Copy, Debug)]
struct Binding {
    object: u64,
    start: u64,
    end: u64,
    /// Bound to an optimal-tiling image: the bytes are the driver's.
    hidden: bool,
}

/// Bindings of every allocation of one device.
#[derive(Debug, Default)]
pub struct Bindings {
    optimal_images: HashSet<u64>,
    by_memory: HashMap<u64, Vec<Binding>>,
    memory_of: HashMap<u64, u64>,
    /// Allocation byte ranges left out of comparisons, sorted and disjoint, by
    /// allocation; recomputed when the allocation's bindings change.
    hidden: HashMap<u64, Vec<(u64, u64)>>,
}

impl Bindings {
    /// Notes an image created with optimal tiling.
    pub fn optimal_image(&mut self, image: u64) {
        self.optimal_images.insert(image);
    }

    /// Notes that `object` (a buffer or an image) occupies `size` bytes of `memory` at
    /// `offset`.
    pub fn bound(&mut self, memory: u64, object: u64, offset: u64, size: u64) {
        self.forget_binding(object);
        let binding = Binding {
            object,
            start: offset,
            end: offset.saturating_add(size),
            hidden: self.optimal_images.contains(&object),
        };
        self.by_memory.entry(memory).or_default().push(binding);
        self.memory_of.insert(object, memory);
        self.recompute(memory);
    }

    /// Forgets `object` (it is destroyed); returns the allocation it was bound to, if
    /// it was.
    pub fn unbound(&mut self, object: u64) -> Option<u64> {
        self.optimal_images.remove(&object);
        self.forget_binding(object)
    }

    /// Forgets where `object` is bound; returns the allocation, if it was.
    fn forget_binding(&mut self, object: u64) -> Option<u64> {
        let memory = self.memory_of.remove(&object)?;
        if let Some(list) = self.by_memory.get_mut(&memory) {
            list.retain(|b| b.object != object);
        }
        self.recompute(memory);
        Some(memory)
    }

    /// Forgets every binding of `memory` (it is freed).
    pub fn freed(&mut self, memory: u64) {
        for b in self.by_memory.remove(&memory).unwrap_or_default() {
            self.memory_of.remove(&b.object);
        }
        self.hidden.remove(&memory);
    }

    /// `memory`'s byte ranges that are not compared, sorted and disjoint.
    pub fn hidden(&self, memory: u64) -> &[(u64, u64)] {
        self.hidden.get(&memory).map_or(&[], Vec::as_slice)
    }

    /// Hidden bindings' ranges, less every visible binding's, merged.
    fn recompute(&mut self, memory: u64) {
        let list = self.by_memory.get(&memory).map_or(&[][..], Vec::as_slice);
        let mut hidden: Vec<(u64, u64)> = list
            .iter()
            .filter(|b| b.hidden)
            .map(|b| (b.start, b.end))
            .collect();
        let mut visible: Vec<(u64, u64)> = list
            .iter()
            .filter(|b| !b.hidden)
            .map(|b| (b.start, b.end))
            .collect();
        hidden.sort_unstable();
        visible.sort_unstable();
        let ranges = subtract(&merge(hidden), &merge(visible));
        if ranges.is_empty() {
            self.hidden.remove(&memory);
        } else {
            self.hidden.insert(memory, ranges);
        }
    }
}

/// Sorted ranges with overlapping and touching ones joined.
fn merge(sorted: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(sorted.len());
    for (s, e) in sorted {
        match out.last_mut() {
            Some((_, last)) if s <= *last => *last = (*last).max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// The parts of `ranges` outside every range of `minus` (both sorted and disjoint).
pub(crate) fn subtract<T: Copy + Ord>(ranges: &[(T, T)], minus: &[(T, T)]) -> Vec<(T, T)> {
    let mut out = Vec::new();
    for &(mut s, e) in ranges {
        for &(ms, me) in minus {
            if me <= s || ms >= e {
                continue;
            }
            if ms > s {
                out.push((s, ms));
            }
            s = s.max(me);
            if s >= e {
                break;
            }
        }
        if s < e {
            out.push((s, e));
        }
    }
    out
}

/// The parts of `start..end` outside every range of `hidden` (sorted and disjoint).
pub fn visible_parts(start: usize, end: usize, hidden: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let as_u64: Vec<(u64, u64)> = hidden.iter().map(|&(s, e)| (s as u64, e as u64)).collect();
    subtract(&[(start as u64, end as u64)], &as_u64)
        .into_iter()
        .map(|(s, e)| (s as usize, e as usize))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optimal_images_are_hidden_unless_a_buffer_aliases_them() {
        let mut b = Bindings::default();
        b.bound(1, 10, 0, 256); // a buffer
        b.optimal_image(20);
        b.bound(1, 20, 4096, 16384); // a depth buffer
        assert_eq!(b.hidden(1), [(4096, 20480)]);
        // A buffer aliasing part of it: those bytes are compared again.
        b.bound(1, 30, 8192, 4096);
        assert_eq!(b.hidden(1), [(4096, 8192), (12288, 20480)]);
        b.unbound(30);
        assert_eq!(b.hidden(1), [(4096, 20480)]);
        // A linear image is the host's to write: not hidden.
        b.bound(1, 40, 65536, 4096);
        assert_eq!(b.hidden(1), [(4096, 20480)]);
        b.unbound(20);
        assert!(b.hidden(1).is_empty());
        b.optimal_image(50);
        b.bound(2, 50, 0, 100);
        b.freed(2);
        assert!(b.hidden(2).is_empty());
    }

    #[test]
    fn visible_parts_leave_out_the_hidden_ranges() {
        assert_eq!(visible_parts(0, 100, &[]), [(0, 100)]);
        assert_eq!(
            visible_parts(0, 100, &[(10, 20), (50, 200)]),
            [(0, 10), (20, 50)]
        );
        assert!(visible_parts(30, 40, &[(0, 100)]).is_empty());
    }
}
