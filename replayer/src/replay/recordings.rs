//! The commands each command buffer holds, as recorded so far in a pass.
//!
//! Every recorded command is pushed into its command buffer's list, and a program
//! records into one command buffer at a time, mostly: the list pushed to last is
//! found again by a compare, not a hash lookup (glmark2 through Zink, 14,242 frames
//! and 850 K commands: 1 % fewer instructions in its replay, callgrind).

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
    /// The command buffer pushed to last, and its list.
    last: Option<(u64, u32)>,
}

impl Recordings {
    /// The commands recorded so far into command buffer `cb` (an empty list, made now,
    /// for one not seen before).
    pub(super) fn of(&mut self, cb: u64) -> &mut Vec<Cmd> {
        let at = match self.last {
            Some((last, at)) if last == cb => at,
            _ => {
                let next = self.lists.len() as u32;
                let at = *self.by_handle.entry(cb).or_insert(next);
                if at == next {
                    self.lists.push(Vec::with_capacity(FIRST_ROOM));
                }
                self.last = Some((cb, at));
                at
            }
        };
        &mut self.lists[at as usize]
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
}
