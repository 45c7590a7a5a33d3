//! Which thread records each command buffer, for the trace's order.
//!
//! A command takes its place in the trace by reading the numbered-call counter, not by
//! writing it (see [`trace_format::sequencer`]), so two commands that read the same
//! value on two threads have no order between them. That is right for two command
//! buffers, and wrong for one that a program hands from one thread to another in the
//! middle of recording (Vulkan allows it, with the program's own synchronization): the
//! first command a thread records into a command buffer that another thread recorded
//! last is made a numbered call, which orders it after everything the other thread
//! recorded.
//!
//! Each thread remembers the few command buffers it recorded last ([`OwnCache`]) and
//! checks them against the epoch, a counter that changes whenever a command buffer
//! changes threads: the common case, a thread recording its own command buffer, reads
//! one value that stays in every core's cache. The shared map is looked at only when the
//! cache misses.

use foldhash::{HashMap, HashMapExt};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use crate::cache_line::CacheLine;

/// Changes whenever a command buffer changes threads.
static EPOCH: CacheLine<AtomicU64> = CacheLine(AtomicU64::new(0));
/// Each command buffer's recording thread.
static RECORDERS: Mutex<Option<HashMap<u64, u64>>> = Mutex::new(None);
/// Command buffers the map holds at most (freed ones are forgotten; a program that
/// destroys pools with command buffers in them leaves theirs); past that it is emptied
/// (a command buffer it forgot makes its next command numbered, always a correct
/// order).
const MAX_TRACKED: usize = 1 << 16;

/// The current epoch.
pub fn epoch() -> u64 {
    EPOCH.load(Ordering::Acquire)
}

/// Makes `thread` the recorder of `command_buffer`; true when it already was.
fn claim(command_buffer: u64, thread: u64) -> bool {
    let mut map = RECORDERS.lock().unwrap_or_else(|e| e.into_inner());
    let map = map.get_or_insert_with(HashMap::new);
    if map.get(&command_buffer) == Some(&thread) {
        return true;
    }
    if map.len() >= MAX_TRACKED {
        map.clear();
    }
    map.insert(command_buffer, thread);
    // Every thread's remembered command buffers are checked again.
    EPOCH.fetch_add(1, Ordering::AcqRel);
    false
}

/// `vkFreeCommandBuffers`: forgets the `count` command buffers at `command_buffers`
/// (a handle used again is claimed again at its next begin or command).
///
/// # Safety
/// `command_buffers` must point to `count` handles (or be null).
pub unsafe fn freed(command_buffers: *const ash::vk::CommandBuffer, count: u32) {
    if command_buffers.is_null() {
        return;
    }
    let freed = std::slice::from_raw_parts(command_buffers, count as usize);
    let mut map = RECORDERS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(map) = map.as_mut() {
        for cb in freed {
            map.remove(&ash::vk::Handle::as_raw(*cb));
        }
    }
}

/// `vkBeginCommandBuffer` on `thread`: it records `command_buffer` from now on.
pub fn begun(command_buffer: u64, thread: u64) {
    claim(command_buffer, thread);
}

/// The command buffers one thread recorded last, as of an epoch.
#[derive(Default)]
pub struct OwnCache {
    epoch: u64,
    command_buffers: [u64; 4],
    next: usize,
}

impl OwnCache {
    /// Whether a command `thread` records into `command_buffer` now follows that
    /// thread's own last command there (no other thread recorded into it since): from
    /// the cache, or from the shared map, which a take-over updates.
    #[inline(always)]
    pub fn recorded_here(&mut self, command_buffer: u64, thread: u64) -> bool {
        let epoch = epoch();
        if self.epoch == epoch && self.command_buffers.contains(&command_buffer) {
            return true;
        }
        self.look_up(command_buffer, thread, epoch)
    }

    /// The shared map's answer (read after `epoch`, so a change after this look is
    /// seen at the next), remembered when it is this thread.
    #[cold]
    fn look_up(&mut self, command_buffer: u64, thread: u64, epoch: u64) -> bool {
        if !claim(command_buffer, thread) {
            return false;
        }
        if self.epoch != epoch {
            *self = OwnCache {
                epoch,
                ..OwnCache::default()
            };
        }
        self.command_buffers[self.next] = command_buffer;
        self.next = (self.next + 1) % self.command_buffers.len();
        true
    }
}
