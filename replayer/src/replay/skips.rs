//! The calls a pass skipped, by name: how many, and whether the model needed them.
//!
//! A real program's setup calls are skipped by the thousand, under a few dozen names,
//! most of them one of the few names skipped just before. A name is found again by
//! where it lies and its bytes, in a small table of the names counted last, before
//! it is hashed (glmark2 through Zink, 243 K skips: 1.2 % fewer instructions in its
//! replay than hashing each name, callgrind). The same name may come from a string
//! made for the message (a reason
//! added to it) at an address another name had before: its bytes are compared, so a
//! reused address finds only the name it now holds.

use std::collections::HashMap;

/// Names the table of recent ones holds, by where they lie.
const RECENT: usize = 16;

/// Calls skipped, by name.
#[derive(Default)]
pub(super) struct Skips {
    /// Each name, how many of its calls were skipped and whether the model needed one.
    counts: Vec<(String, u64, bool)>,
    by_name: HashMap<String, u32, foldhash::fast::RandomState>,
    /// Where a name counted lately lay and its length, and its place in `counts`.
    recent: [(usize, usize, u32); RECENT],
}

impl Skips {
    /// Counts a call skipped under `name`, needed by the model when `needed`.
    pub(super) fn count(&mut self, name: &str, needed: bool) {
        let (addr, len) = (name.as_ptr() as usize, name.len());
        let slot = (addr >> 3) % RECENT;
        let (at, at_len, index) = self.recent[slot];
        if (at, at_len) == (addr, len) && len > 0 {
            if let Some(entry) = self.counts.get_mut(index as usize) {
                if entry.0 == name {
                    entry.1 += 1;
                    return;
                }
            }
        }
        let index = match self.by_name.get(name) {
            Some(&index) => {
                self.counts[index as usize].1 += 1;
                index
            }
            None => {
                let index = self.counts.len() as u32;
                self.counts.push((name.to_string(), 1, needed));
                self.by_name.insert(name.to_string(), index);
                index
            }
        };
        self.recent[slot] = (addr, len, index);
    }

    /// Each name, how many calls were skipped under it and whether the model needed
    /// the first of them.
    pub(super) fn into_counts(self) -> impl Iterator<Item = (String, (u64, bool))> {
        self.counts
            .into_iter()
            .map(|(name, count, needed)| (name, (count, needed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counted(skips: Skips) -> Vec<(String, (u64, bool))> {
        let mut all: Vec<_> = skips.into_counts().collect();
        all.sort();
        all
    }

    #[test]
    fn each_name_counts_its_calls_and_keeps_whether_the_first_was_needed() {
        let mut skips = Skips::default();
        for _ in 0..3 {
            skips.count("vkCreateSemaphore", false);
            skips.count("vkCmdDrawMeshTasksEXT", true);
        }
        skips.count("vkCmdDrawMeshTasksEXT", false);
        assert_eq!(
            counted(skips),
            [
                ("vkCmdDrawMeshTasksEXT".to_string(), (4, true)),
                ("vkCreateSemaphore".to_string(), (3, false)),
            ]
        );
    }

    #[test]
    fn a_name_at_an_address_another_had_is_counted_as_itself() {
        let mut skips = Skips::default();
        let mut message = String::from("vkCmdFoo (pool never created)");
        skips.count(&message, true);
        // The same bytes' room, now holding another name of the same length.
        let at = message.as_ptr();
        message.replace_range(.., "vkCmdBar (pool never created)");
        assert_eq!(message.as_ptr(), at, "the same address");
        skips.count(&message, true);
        skips.count(&message, true);
        assert_eq!(
            counted(skips),
            [
                ("vkCmdBar (pool never created)".to_string(), (2, true)),
                ("vkCmdFoo (pool never created)".to_string(), (1, true)),
            ]
        );
    }
}
