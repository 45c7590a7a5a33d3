//! Generically recorded commands taken before, by their command's name and packed
//! parameters, so that a command a program records again frame after frame is not
//! decoded again.
//!
//! What a `vkCmd*` recorded generically becomes in its command buffer is a function of
//! its name and its parameters' bytes alone for every command but the push descriptor
//! commands (whose uniform buffers are looked up in the objects and layouts the replay
//! holds then): its barriers, its decoded parameters, or a skip. Many programs repeat
//! those bytes exactly: Zink records the same barriers, vertex input and dynamic state
//! into every frame's command buffers (glxgears: three of every four it may keep). A
//! repeat is found by a hash of its bytes and one comparison, and its command copied,
//! with the sequence number of its own record, where decoding it walked its packed
//! parameters into a tree and decoded that by the command's name.
//!
//! Other programs' commands seldom repeat (DDNet's barriers and blits name other images
//! each time): keeping them would cost every one a copy for nothing. So each command
//! name's calls are kept only while they are found often enough, as the macro memo
//! does for macros (`driver::gpu::memo`): after a trial of [`Usage::TRIAL`] look-ups,
//! a name found at fewer than one look-up in four is looked up (and kept) only at one
//! call in [`Usage::SAMPLE_EVERY`], which keeps its rate current.
//!
//! The table lives for one pass: the names and parameters it keeps lie one after
//! another in one buffer, and it is cleared when it holds [`GenericMemo::MAX_ENTRIES`]
//! commands or [`GenericMemo::MAX_BYTES`] bytes; parameters longer than
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

/// How often one command name's calls were found: a name whose calls do not repeat
/// is looked up, and kept, only now and then.
#[derive(Clone, Copy, Default)]
struct Usage {
    lookups: u32,
    hits: u32,
    /// Calls passed by since the last one looked up, while the name is not kept.
    passed: u32,
}

impl Usage {
    /// Look-ups a name is kept for before its rate decides.
    const TRIAL: u32 = 64;
    /// While a name is not kept, one call in this many is looked up (and kept).
    const SAMPLE_EVERY: u32 = 16;

    fn worth_keeping(self) -> bool {
        self.lookups < Self::TRIAL || self.hits * 4 >= self.lookups
    }

    /// Whether to look the call about to be taken up (and keep it if it is not found).
    fn look_up(&mut self) -> bool {
        if self.worth_keeping() {
            return true;
        }
        self.passed += 1;
        if self.passed < Self::SAMPLE_EVERY {
            return false;
        }
        self.passed = 0;
        true
    }

    fn count(&mut self, hit: bool) {
        if self.lookups == u32::MAX {
            *self = Usage::default();
        }
        self.lookups += 1;
        self.hits += u32::from(hit);
    }
}

/// One command kept: where its name and parameters lie in the table's bytes, what it
/// did, and the entry kept before it under the same key.
struct Entry {
    start: u32,
    name_len: u32,
    params_len: u32,
    taken: Taken,
    earlier: Option<u32>,
}

/// A command the table looks up: its name's usage slot and its key.
#[derive(Clone, Copy, Debug)]
pub(super) struct Asked {
    slot: u8,
    key: u64,
}

/// Generically recorded commands taken in this pass, by a hash of their name and
/// packed parameters.
pub(super) struct GenericMemo {
    /// The newest entry of each key.
    newest: HashMap<u64, u32, foldhash::fast::FixedState>,
    entries: Vec<Entry>,
    /// The kept commands' names and parameters, one after another.
    bytes: Vec<u8>,
    /// Usage by name, in slots a name's length and ends pick (two names sharing a
    /// slot share its rate).
    usage: [Usage; 256],
    hasher: foldhash::fast::FixedState,
}

impl Default for GenericMemo {
    fn default() -> Self {
        GenericMemo {
            newest: HashMap::default(),
            entries: Vec::new(),
            bytes: Vec::new(),
            usage: [Usage::default(); 256],
            hasher: foldhash::fast::FixedState::default(),
        }
    }
}

impl GenericMemo {
    /// Commands kept at most; the table is cleared when it is full.
    pub(super) const MAX_ENTRIES: usize = 4096;
    /// Bytes of names and parameters kept at most; likewise.
    pub(super) const MAX_BYTES: usize = 4 << 20;
    /// The longest packed parameters kept.
    pub(super) const MAX_PARAM_BYTES: usize = 4096;
    /// Commands the table makes room for when it keeps its first.
    const FIRST_ENTRIES: usize = 1024;

    /// Whether what a command named `name` does may be kept: not for the push
    /// descriptor commands, whose uniform buffers depend on the replay's objects.
    pub(super) fn may_keep(name: &str) -> bool {
        !name.starts_with("vkCmdPushDescriptorSet")
    }

    /// The usage slot of `name`: from its length and its first and last eight bytes
    /// (command names differ there), without hashing it whole.
    fn slot(name: &str) -> u8 {
        let b = name.as_bytes();
        let word = |at: usize| {
            b.get(at..at + 8)
                .map_or(0, |w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])))
        };
        let mixed = (word(0) ^ word(b.len().saturating_sub(8)).rotate_left(29) ^ b.len() as u64)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (mixed >> 56) as u8
    }

    /// Asks about a command named `name` with `params`: what to look it up and keep it
    /// by, or `None` where its name is not looked up this time.
    pub(super) fn ask(&mut self, name: &str, params: &[u8]) -> Option<Asked> {
        let slot = Self::slot(name);
        // The parameters' hash, seeded by the name's slot: names are told apart by the
        // comparison a key's entries take anyway.
        self.usage[usize::from(slot)].look_up().then(|| Asked {
            slot,
            key: self.hasher.hash_one((slot, params)),
        })
    }

    /// What the command named `name` with `params` did when it was taken before, for
    /// the record numbered `seq`; counted in its name's usage.
    pub(super) fn find(
        &mut self,
        asked: Asked,
        name: &str,
        params: &[u8],
        seq: u64,
    ) -> Option<Taken> {
        let mut at = self.newest.get(&asked.key).copied();
        let mut found = None;
        while let Some(i) = at {
            let e = &self.entries[i as usize];
            let start = e.start as usize;
            let name_end = start + e.name_len as usize;
            let end = name_end + e.params_len as usize;
            if self.bytes[start..name_end] == *name.as_bytes()
                && self.bytes[name_end..end] == *params
            {
                found = Some(e.taken.for_record(seq));
                break;
            }
            at = e.earlier;
        }
        self.usage[usize::from(asked.slot)].count(found.is_some());
        found
    }

    /// Keeps what the command named `name` with `params`, looked up as `asked` and not
    /// found, did.
    pub(super) fn keep(&mut self, asked: Asked, name: &str, params: &[u8], taken: Taken) {
        if params.len() > Self::MAX_PARAM_BYTES {
            return;
        }
        if self.entries.len() >= Self::MAX_ENTRIES
            || self.bytes.len() + name.len() + params.len() > Self::MAX_BYTES
        {
            self.newest.clear();
            self.entries.clear();
            self.bytes.clear();
        }
        if self.entries.capacity() == 0 {
            // Room for a frame's commands at once, not grown from nothing a few at a time.
            self.entries.reserve(Self::FIRST_ENTRIES);
            self.bytes.reserve(Self::FIRST_ENTRIES * 64);
            self.newest.reserve(Self::FIRST_ENTRIES);
        }
        let index = self.entries.len() as u32;
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.extend_from_slice(params);
        let earlier = self.newest.insert(asked.key, index);
        self.entries.push(Entry {
            start,
            name_len: name.len() as u32,
            params_len: params.len() as u32,
            taken,
            earlier,
        });
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

    /// Asks about and, when looked up and not found, keeps a command; what was found.
    fn take(memo: &mut GenericMemo, name: &str, params: &[u8], seq: u64) -> Option<Taken> {
        let asked = memo.ask(name, params)?;
        let found = memo.find(asked, name, params, seq);
        if found.is_none() {
            memo.keep(asked, name, params, work(seq));
        }
        found
    }

    /// A place under `key`, whatever the bytes kept there hash to.
    fn forced(key: u64) -> Asked {
        Asked { slot: 0, key }
    }

    #[test]
    fn a_command_is_found_by_its_name_and_bytes_with_the_number_of_the_record_asking() {
        let mut memo = GenericMemo::default();
        assert_eq!(
            take(&mut memo, "vkCmdPipelineBarrier2", &[1, 2, 3], 5),
            None
        );
        assert_eq!(
            take(&mut memo, "vkCmdPipelineBarrier2", &[1, 2, 3], 9),
            Some(work(9))
        );
        // Another name, or other bytes, is another command.
        assert_eq!(take(&mut memo, "vkCmdSetCullMode", &[1, 2, 3], 10), None);
        assert_eq!(
            take(&mut memo, "vkCmdPipelineBarrier2", &[1, 2, 4], 11),
            None
        );
        assert_eq!(
            take(&mut memo, "vkCmdSetCullMode", &[1, 2, 3], 12),
            Some(work(12))
        );
        let asked = memo.ask("vkCmdSetLineWidth", &[]).expect("looked up");
        memo.keep(asked, "vkCmdSetLineWidth", &[], Taken::Skipped);
        assert_eq!(
            memo.find(asked, "vkCmdSetLineWidth", &[], 13),
            Some(Taken::Skipped)
        );
    }

    #[test]
    fn commands_sharing_a_key_are_told_apart_by_their_bytes() {
        let mut memo = GenericMemo::default();
        memo.keep(forced(42), "vkCmdSetCullMode", &[1], Taken::Skipped);
        memo.keep(forced(42), "vkCmdSetFrontFace", &[1], work(3));
        assert_eq!(
            memo.find(forced(42), "vkCmdSetCullMode", &[1], 4),
            Some(Taken::Skipped)
        );
        assert_eq!(
            memo.find(forced(42), "vkCmdSetFrontFace", &[1], 4),
            Some(work(4))
        );
        assert_eq!(memo.find(forced(42), "vkCmdSetFrontFace", &[2], 4), None);
    }

    #[test]
    fn a_name_whose_calls_do_not_repeat_is_sampled_and_kept_again_once_they_do() {
        let mut memo = GenericMemo::default();
        let name = "vkCmdBlitImage";
        // Every call different: each looked up and kept through the trial, then one
        // call in SAMPLE_EVERY.
        for i in 0..Usage::TRIAL {
            assert_eq!(take(&mut memo, name, &i.to_le_bytes(), 0), None);
        }
        assert_eq!(memo.entries.len(), Usage::TRIAL as usize);
        let mut looked_up = 0;
        for i in 0..Usage::SAMPLE_EVERY * 4 {
            let params = (1000 + i).to_le_bytes();
            if let Some(asked) = memo.ask(name, &params) {
                looked_up += 1;
                assert_eq!(memo.find(asked, name, &params, 0), None);
                memo.keep(asked, name, &params, work(0));
            }
        }
        assert_eq!(looked_up, 4);
        // The same call from now on: the samples find it, until the rate has the name
        // looked up at every call again.
        let mut found = 0;
        for seq in 0..2000 {
            found += usize::from(take(&mut memo, name, &[9], seq).is_some());
        }
        assert!(found > 1000, "{found} of 2,000 repeats found");
        assert!(memo.ask(name, &[9]).is_some());
    }

    #[test]
    fn the_table_stays_within_its_bounds() {
        let mut memo = GenericMemo::default();
        let long = vec![0u8; GenericMemo::MAX_PARAM_BYTES + 1];
        memo.keep(forced(7), "vkCmdSetVertexInputEXT", &long, Taken::Skipped);
        assert_eq!(
            memo.find(forced(7), "vkCmdSetVertexInputEXT", &long, 1),
            None
        );
        for i in 0..=GenericMemo::MAX_ENTRIES as u64 {
            let bytes = i.to_le_bytes();
            memo.keep(forced(i), "vkCmdSetLineWidth", &bytes, Taken::Skipped);
        }
        assert!(memo.entries.len() <= GenericMemo::MAX_ENTRIES);
        let last = GenericMemo::MAX_ENTRIES as u64;
        assert!(memo
            .find(forced(last), "vkCmdSetLineWidth", &last.to_le_bytes(), 1)
            .is_some());
        let big = vec![1u8; GenericMemo::MAX_PARAM_BYTES];
        for i in 0..2 * (GenericMemo::MAX_BYTES / big.len()) as u64 {
            memo.keep(forced(i), "vkCmdSetLineWidth", &big, Taken::Skipped);
        }
        assert!(memo.bytes.len() <= GenericMemo::MAX_BYTES);
    }
}
