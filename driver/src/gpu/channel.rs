//! A GPU channel's own state, apart from the memory every channel shares.
//!
//! NVK gives each queue a channel of its own (`nvk_queue_init`: a context per queue),
//! and the hardware keeps a context per channel: the 3D class's method shadow (the MME
//! shadow scratch in it), the selected constant buffer, the macro RAM, a macro call
//! half made. A queue's command buffers run against what that queue's channel was
//! left with, not another's: NVK's macros compare a value with the scratch that holds
//! the last one (`SET_VB_ENABLES`, `SET_ANTI_ALIAS`, the draws' root-table writes) and
//! emit only what changed. A program with two devices, or two queues, runs its work
//! on two such states; a [`Gpu`] runs one at a time and is handed another with
//! [`Gpu::exchange_channel`].

use super::{Gpu, MacroMemo, MacroStore};
use crate::mme::Arch;

use std::collections::BTreeMap;

/// The part of a [`super::GpuState`] that is the channel's: the method shadow and what
/// the methods select and count.
pub(super) struct ChannelState {
    pub(super) shadow: Box<[u32; 0x1000]>,
    pub(super) cb_addr: u64,
    pub(super) cb_size: u32,
    pub(super) cb_offset: u32,
    pub(super) root_addr: u64,
    pub(super) rt_layer: u32,
    pub(super) begin: u32,
    pub(super) instance: u32,
    pub(super) zpass_enabled: bool,
    pub(super) zpass_count: u64,
    /// The pending macro call's parameters, and how many the macro has loaded.
    pub(super) params: Vec<u32>,
    pub(super) params_loaded: usize,
    pub(super) first_layer_at: Option<std::time::Instant>,
    pub(super) in_macro: bool,
}

impl ChannelState {
    fn new() -> Self {
        ChannelState {
            shadow: Box::new([0; 0x1000]),
            cb_addr: 0,
            cb_size: 0,
            cb_offset: 0,
            root_addr: 0,
            rt_layer: 0,
            begin: 0,
            instance: 0,
            zpass_enabled: false,
            zpass_count: 0,
            params: Vec::new(),
            params_loaded: 0,
            first_layer_at: None,
            in_macro: false,
        }
    }
}

/// One channel's state as a [`Gpu`] holds it while that channel runs; a fresh one is
/// a channel before NVK's set-up (`nvk_queue_init_context_state`) ran on it.
pub struct Channel {
    pub(super) state: ChannelState,
    pub(super) macros: MacroStore,
    pub(super) pending_call: Option<u16>,
    /// The channel's remembered macro runs (they are runs of its macros); `None` when
    /// every call is simulated.
    pub(super) memo: Option<MacroMemo>,
}

impl Channel {
    /// A channel of a GPU whose 3D class runs the `arch` MME, nothing set up on it;
    /// its macro runs are remembered when `memo` is on ([`Gpu::set_macro_memo`]).
    pub fn new(arch: Arch, memo: bool) -> Self {
        Channel {
            state: ChannelState::new(),
            macros: MacroStore {
                arch,
                ram: Vec::new(),
                ram_ptr: 0,
                starts: BTreeMap::new(),
                start_ptr: 0,
                decoded: Vec::new(),
            },
            pending_call: None,
            memo: memo.then(MacroMemo::new),
        }
    }
}

impl Gpu {
    /// Puts `other`'s channel state in place of this GPU's, and this GPU's in `other`:
    /// the GPU then runs the other channel's pushes against what that channel was left
    /// with. Memory, the draws and reports recorded, the counters and the method log are
    /// the GPU's own, shared by every channel.
    pub fn exchange_channel(&mut self, other: &mut Channel) {
        std::mem::swap(&mut self.state.channel, &mut other.state);
        std::mem::swap(&mut self.macros, &mut other.macros);
        std::mem::swap(&mut self.pending_call, &mut other.pending_call);
        std::mem::swap(&mut self.memo, &mut other.memo);
    }

    /// Whether this GPU remembers macro runs ([`Gpu::set_macro_memo`]): a fresh
    /// [`Channel`] for it should do the same.
    pub fn remembers_macro_runs(&self) -> bool {
        self.memo.is_some()
    }
}
