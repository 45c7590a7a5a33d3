//! A full fence split between a side that runs at every call and a side that runs now
//! and then: the owner of a recording block and the collectors that take it
//! ([`crate::owned_cell`]) must each see the other's flag, which takes a full fence
//! between each one's store and load. With the kernel's `membarrier` the collector's
//! side does the work for both: `MEMBARRIER_CMD_PRIVATE_EXPEDITED` makes every running
//! thread of the process execute a full memory barrier before the call returns (and a
//! thread not running passes one when it is switched back in), so the owner needs only
//! to keep the compiler from moving its load above its store. Where `membarrier` is
//! missing (a kernel before 4.14, a sandbox that filters it), each owner fences itself.

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

/// Registers the process for expedited `membarrier`; says how calls are fenced.
pub fn start() -> String {
    if HEAVY_SIDE.load(Ordering::Relaxed) {
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
    HEAVY_SIDE.load(Ordering::Relaxed)
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
