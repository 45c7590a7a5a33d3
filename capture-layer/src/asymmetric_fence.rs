//! A full fence split between a side that runs at every call and a side that runs now
//! and then: the owner of a recording block and the collectors that take it
//! ([`crate::owned_cell`]) must each see the other's flag, which takes a full fence
//! between each one's store and load. With the kernel's `membarrier` the collector's
//! side does the work for both: `MEMBARRIER_CMD_PRIVATE_EXPEDITED` makes every running
//! thread of the process execute a full memory barrier before the call returns (and a
//! thread not running passes one when it is switched back in), so the owner needs only
//! to keep the compiler from moving its load above its store. Where `membarrier` is
//! missing (a kernel before 4.14, a sandbox that filters it), each owner fences itself.
//!
//! Registering for it waits for an RCU grace period where the process has more than one
//! thread (`sync_runqueues_membarrier_state`): 12 ms on a 2-core virtual machine, paid by
//! the program's thread at the start of capture while the layer registered at
//! `vkCreateInstance` (vkcube for 2 frames took 82 ms under the layer against 62 ms
//! alone). So a thread of the layer's own registers, and owners fence themselves until
//! it has. The change of sides while owners and collectors run is safe: a collector
//! that read the old side raised its flag before it read it, and an owner that reads
//! the new side reads the collectors' flags after it, so it sees that collector's flag
//! (every read and write of the side, and the flags read around it, are sequentially
//! consistent).

use std::sync::atomic::{compiler_fence, fence, AtomicBool, Ordering};

use crate::cache_line::CacheLine;

/// `membarrier` commands (`linux/membarrier.h`).
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

/// Whether the collectors' side fences for both (set once, before recording starts).
static HEAVY_SIDE: CacheLine<AtomicBool> = CacheLine(AtomicBool::new(false));

fn membarrier(command: libc::c_int) -> std::io::Result<()> {
    // SAFETY: membarrier takes two integers and touches no memory of ours.
    let r = unsafe { libc::syscall(libc::SYS_membarrier, command, 0 as libc::c_uint) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Registers the process for expedited `membarrier` on a thread of the layer's own,
/// which logs how calls are fenced through `say`; until it has, each owner fences
/// itself. Registers on the calling thread where no thread can be started.
pub fn start(say: fn(&str)) {
    if HEAVY_SIDE.load(Ordering::SeqCst) {
        return;
    }
    let started = std::thread::Builder::new()
        .name("macroscope-fence".into())
        .spawn(move || say(&register()));
    if started.is_err() {
        say(&register());
    }
}

/// Registers the process for expedited `membarrier` now, on the calling thread; says
/// how calls are fenced.
pub fn register() -> String {
    if HEAVY_SIDE.load(Ordering::SeqCst) {
        return "calls fenced by the collectors (membarrier)".into();
    }
    match membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) {
        Ok(()) => {
            HEAVY_SIDE.store(true, Ordering::SeqCst);
            "calls fenced by the collectors (membarrier)".into()
        }
        Err(e) => format!("each call fences itself (membarrier unavailable: {e})"),
    }
}

/// Whether the collectors fence for the owners.
#[inline(always)]
pub fn collectors_fence() -> bool {
    // Sequentially consistent, for the change of sides (see the module's doc): a plain
    // load on x86-64, as a relaxed one is.
    HEAVY_SIDE.load(Ordering::SeqCst)
}

/// The owners' side, where the collectors fence for them: keeps the compiler from
/// moving the load after this above the store before it.
#[inline(always)]
pub fn light() {
    compiler_fence(Ordering::SeqCst);
}

/// The collectors' side: a full fence on this thread and on every thread of the
/// process (with `membarrier`), or on this thread alone.
pub fn heavy() {
    // A failure does not follow a registration that succeeded; should it happen, the
    // owners fence themselves from now on (one collection's window stays open).
    if collectors_fence() && membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED).is_err() {
        HEAVY_SIDE.store(false, Ordering::SeqCst);
    }
    fence(Ordering::SeqCst);
}
