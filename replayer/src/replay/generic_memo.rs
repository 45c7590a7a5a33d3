//! Generically recorded commands taken before, by their command's name and packed
//! parameters, so that a command a program records again frame after frame is not
//! decoded again.
//!
//! What a `vkCmd*` recorded generically becomes in its command buffer is a function of
//! its name and its parameters' bytes alone for every command but the push descriptor
//! commands (whose uniform buffers are looked up in the objects and layouts the replay
//! holds then): its barriers, its decoded parameters, or a skip. Real programs repeat
//! those bytes exactly: Zink records the same barriers, vertex input and dynamic state
//! into every frame's command buffers (glxgears: about four of every five records a
//! frame). A repeat is found by a hash of its bytes and one comparison, and its command
//! copied, with the sequence number of its own record, where decoding it walked its
//! packed parameters into a tree and decoded that by the command's name.
//!
//! The table lives for one pass and is cleared when it holds
//! [`GenericMemo::MAX_ENTRIES`] commands; parameters longer than
//! [`GenericMemo::MAX_PARAM_BYTES`] are not kept.

use std::collections::HashMap;
use std::hash::BuildHasher;

use crate::commands::Cmd;

/// What a generically recorded command did, where that depends on its bytes alone.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Taken {
    /// `cmd` went into command buffer `cb`.
    Recorded { cb: u64, cmd: Cmd },
    /// The command was skipped as one the model does not execute (or has no reader for).
    Skipped,
}

impl Taken {
    /// The same outcome for the record numbered `seq`: a draw or work row carries the
    /// number of the record it came from.
    pub(super) fn for_record(&self, seq: u64) -> Taken {
        let mut taken = self.clone();
        if let Taken::Recorded {
            cmd: Cmd::Draw { seq: s, .. } | Cmd::Work { seq: s, .. },
            ..
        } = &mut taken
        {
            *s = seq;
        }
        taken
    }
}

/// One command kept: its name, its packed parameters and what it did.
struct Entry {
    name: Box<str>,
    params: Box<[u8]>,
    taken: Taken,
}

/// Generically recorded commands taken in this pass, by a hash of their name and
/// packed parameters.
#[derive(Default)]
pub(super) struct GenericMemo {
    table: HashMap<u64, Vec<Entry>, foldhash::fast::FixedState>,
    entries: usize,
    hasher: foldhash::fast::FixedState,
}

impl GenericMemo {
    /// Commands kept at most; the table is cleared when it is full.
    pub(super) const MAX_ENTRIES: usize = 4096;
    /// The longest packed parameters kept.
    pub(super) const MAX_PARAM_BYTES: usize = 4096;

    /// Whether what a command named `name` does may be kept: not for the push
    /// descriptor commands, whose uniform buffers depend on the replay's objects.
    pub(super) fn may_keep(name: &str) -> bool {
        !name.starts_with("vkCmdPushDescriptorSet")
    }

    /// The table key of a command named `name` with packed parameters `params`.
    pub(super) fn key(&self, name: &str, params: &[u8]) -> u64 {
        self.hasher.hash_one((name, params))
    }

    /// What the command named `name` with `params` did when it was taken before, for
    /// the record numbered `seq`.
    pub(super) fn find(&self, key: u64, name: &str, params: &[u8], seq: u64) -> Option<Taken> {
        self.table
            .get(&key)?
            .iter()
            .find(|e| *e.name == *name && *e.params == *params)
            .map(|e| e.taken.for_record(seq))
    }

    /// Keeps what the command named `name` with `params` did.
    pub(super) fn keep(&mut self, key: u64, name: &str, params: &[u8], taken: Taken) {
        if params.len() > Self::MAX_PARAM_BYTES {
            return;
        }
        if self.entries >= Self::MAX_ENTRIES {
            self.table.clear();
            self.entries = 0;
        }
        self.table.entry(key).or_default().push(Entry {
            name: name.into(),
            params: params.into(),
            taken,
        });
        self.entries += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::WorkArgs;

    fn work(seq: u64) -> Taken {
        Taken::Recorded {
            cb: 7,
            cmd: Cmd::Work {
                seq,
                args: WorkArgs::PipelineBarrier(Vec::new().into()),
            },
        }
    }

    #[test]
    fn a_command_is_found_by_its_name_and_bytes_with_the_number_of_the_record_asking() {
        let mut memo = GenericMemo::default();
        let key = memo.key("vkCmdPipelineBarrier2", &[1, 2, 3]);
        assert_eq!(memo.find(key, "vkCmdPipelineBarrier2", &[1, 2, 3], 9), None);
        memo.keep(key, "vkCmdPipelineBarrier2", &[1, 2, 3], work(5));
        assert_eq!(
            memo.find(key, "vkCmdPipelineBarrier2", &[1, 2, 3], 9),
            Some(work(9))
        );
        // Another name or other bytes under the same key are not the command kept.
        assert_eq!(memo.find(key, "vkCmdSetCullMode", &[1, 2, 3], 9), None);
        assert_eq!(memo.find(key, "vkCmdPipelineBarrier2", &[1, 2, 4], 9), None);
        let skipped = memo.key("vkCmdSetCullMode", &[]);
        memo.keep(skipped, "vkCmdSetCullMode", &[], Taken::Skipped);
        assert_eq!(
            memo.find(skipped, "vkCmdSetCullMode", &[], 10),
            Some(Taken::Skipped)
        );
    }

    #[test]
    fn the_table_stays_within_its_bounds() {
        let mut memo = GenericMemo::default();
        let long = vec![0u8; GenericMemo::MAX_PARAM_BYTES + 1];
        let key = memo.key("vkCmdSetVertexInputEXT", &long);
        memo.keep(key, "vkCmdSetVertexInputEXT", &long, Taken::Skipped);
        assert_eq!(memo.find(key, "vkCmdSetVertexInputEXT", &long, 1), None);
        for i in 0..=GenericMemo::MAX_ENTRIES as u32 {
            let bytes = i.to_le_bytes();
            let key = memo.key("vkCmdSetLineWidth", &bytes);
            memo.keep(key, "vkCmdSetLineWidth", &bytes, Taken::Skipped);
        }
        assert!(memo.entries <= GenericMemo::MAX_ENTRIES);
        let last = GenericMemo::MAX_ENTRIES as u32;
        let key = memo.key("vkCmdSetLineWidth", &last.to_le_bytes());
        assert!(memo
            .find(key, "vkCmdSetLineWidth", &last.to_le_bytes(), 1)
            .is_some());
    }
}
