//! The commands each command buffer holds, as recorded so far in a pass.
//!
//! Every recorded command is pushed into its command buffer's list, and a program
//! records into one command buffer at a time, mostly: the list pushed to last is
//! found again by a compare, not a hash lookup (glmark2 through Zink, 14,242 frames
//! and 850 K commands: 1 % fewer instructions in its replay, callgrind).
//!
//! A command buffer's list lives as long as the command buffer: freeing it
//! (`vkFreeCommandBuffers`, or destroying its pool) empties the list and keeps its
//! room for the next command buffer allocated. (Resetting a pool leaves its command
//! buffers' lists be: a command buffer is begun again before it is submitted again,
//! which empties its list, and Zink resets a pool every frame.) A program that
//! allocates its command buffers anew each frame keeps a replay's memory to the
//! command buffers alive at once, whether or not the driver hands the same handles out
//! again (a GFXReconstruct capture never does: its handles are ids).

use crate::commands::Cmd;
use crate::handles::HandleMap;

/// Room a command buffer's list is made with the first time it is seen: a program's
/// command buffers each hold tens of commands (a Zink frame's 30 to 40), and growing
/// from nothing copies them several times over.
const FIRST_ROOM: usize = 32;

/// Each command buffer's recorded commands, by its handle.
#[derive(Default)]
pub(super) struct Recordings {
    lists: Vec<Vec<Cmd>>,
    by_handle: HandleMap<u32>,
    /// Lists of freed command buffers, emptied, their room kept for the next ones.
    free_lists: Vec<u32>,
    /// The pool each command buffer was allocated from.
    pool_of: HandleMap<u64>,
    /// The command buffer pushed to last, and its list.
    last: Option<(u64, u32)>,
}

impl Recordings {
    /// The commands recorded so far into command buffer `cb` (an empty list, made now,
    /// for one not seen before).
    #[inline]
    pub(super) fn of(&mut self, cb: u64) -> &mut Vec<Cmd> {
        let at = match self.last {
            Some((last, at)) if last == cb => at,
            _ => self.find_or_make(cb),
        };
        &mut self.lists[at as usize]
    }

    /// Where `cb`'s list lies (a list made now, or a freed one's, for one not seen
    /// before), remembered as the list pushed to last.
    #[inline(never)]
    fn find_or_make(&mut self, cb: u64) -> u32 {
        let at = match self.by_handle.get(&cb) {
            Some(&at) => at,
            None => {
                let at = self.free_lists.pop().unwrap_or_else(|| {
                    self.lists.push(Vec::with_capacity(FIRST_ROOM));
                    self.lists.len() as u32 - 1
                });
                self.by_handle.insert(cb, at);
                at
            }
        };
        self.last = Some((cb, at));
        at
    }

    /// Takes command buffer `cb`'s commands out (to run them), to be put back with
    /// [`Recordings::put_back`]: it may be submitted again.
    pub(super) fn take(&mut self, cb: u64) -> Vec<Cmd> {
        self.by_handle
            .get(&cb)
            .map(|&at| std::mem::take(&mut self.lists[at as usize]))
            .unwrap_or_default()
    }

    /// Puts back the commands [`Recordings::take`] took out of `cb`.
    pub(super) fn put_back(&mut self, cb: u64, cmds: Vec<Cmd>) {
        *self.of(cb) = cmds;
    }

    /// Command buffers `cbs` were allocated from `pool` (vkAllocateCommandBuffers).
    pub(super) fn allocated(&mut self, pool: u64, cbs: impl IntoIterator<Item = u64>) {
        for cb in cbs {
            self.pool_of.insert(cb, pool);
        }
    }

    /// Command buffer `cb` is freed (vkFreeCommandBuffers): its commands go, and its
    /// list's room waits for the next command buffer.
    pub(super) fn free(&mut self, cb: u64) {
        self.pool_of.remove(&cb);
        if self.last.is_some_and(|(last, _)| last == cb) {
            self.last = None;
        }
        if let Some(at) = self.by_handle.remove(&cb) {
            self.lists[at as usize].clear();
            self.free_lists.push(at);
        }
    }

    /// The command buffers allocated from `pool`.
    pub(super) fn in_pool(&self, pool: u64) -> Vec<u64> {
        let mut cbs: Vec<u64> = self
            .pool_of
            .iter()
            .filter(|&(_, &p)| p == pool)
            .map(|(&cb, _)| cb)
            .collect();
        cbs.sort_unstable();
        cbs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end(seq: u64) -> Cmd {
        Cmd::Work {
            seq,
            args: crate::commands::WorkArgs::PipelineBarrier(Vec::new().into()),
        }
    }

    #[test]
    fn each_command_buffer_keeps_its_own_commands_in_order() {
        let mut r = Recordings::default();
        r.of(7).push(end(1));
        r.of(9).push(end(2));
        r.of(7).push(end(3));
        r.of(7).push(end(4));
        assert_eq!(r.of(7), &[end(1), end(3), end(4)]);
        assert_eq!(r.of(9), &[end(2)]);
        assert!(r.of(11).is_empty(), "one not seen before");
    }

    #[test]
    fn commands_taken_out_to_run_come_back_and_take_more() {
        let mut r = Recordings::default();
        r.of(7).push(end(1));
        let taken = r.take(7);
        assert_eq!(taken, [end(1)]);
        assert!(r.of(7).is_empty(), "out while they run");
        r.put_back(7, taken);
        r.of(7).push(end(2));
        assert_eq!(r.of(7), &[end(1), end(2)]);
        assert!(r.take(12).is_empty(), "a command buffer never recorded");
    }

    #[test]
    fn a_freed_command_buffer_leaves_its_room_to_the_next_and_no_commands() {
        let mut r = Recordings::default();
        r.allocated(100, [7, 9]);
        for seq in 0..1000 {
            r.of(7).push(end(seq));
        }
        r.of(9).push(end(5000));
        let room = r.of(7).capacity();
        r.free(7);
        assert!(r.take(7).is_empty(), "freed: nothing to run");
        r.allocated(100, [11]);
        assert!(r.of(11).is_empty(), "a new command buffer starts empty");
        assert_eq!(r.of(11).capacity(), room, "in the freed one's room");
        assert_eq!(r.of(9), &[end(5000)], "the other keeps its commands");
        assert_eq!(r.lists.len(), 2, "no third list made");
    }

    #[test]
    fn a_pools_command_buffers_are_found_by_it_until_freed() {
        let mut r = Recordings::default();
        r.allocated(100, [9, 7]);
        r.allocated(200, [11]);
        assert_eq!(r.in_pool(100), [7, 9]);
        r.free(9);
        assert_eq!(r.in_pool(100), [7]);
        assert_eq!(r.in_pool(200), [11]);
        assert!(r.in_pool(300).is_empty());
    }
}
