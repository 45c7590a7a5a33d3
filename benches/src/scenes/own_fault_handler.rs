//! A SIGSEGV handler of the scene's own, installed after the capture layer has
//! installed its own, as ioquake3 installs its once its renderer is up: it expects one
//! fault only, the scene's own write to a page it made read-only, which it opens and
//! counts; any other fault (one of the layer's watched pages, handed to it) ends the
//! scene with status 3, as a program's crash handler would end the program.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The read-only page the scene writes to, 0 until it is made.
static PAGE: AtomicUsize = AtomicUsize::new(0);
/// The faults the handler took on it.
static TAKEN: AtomicUsize = AtomicUsize::new(0);

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as usize,
        _ => 4096,
    }
}

extern "C" fn on_fault(_signal: libc::c_int) {
    let page = PAGE.load(Ordering::Acquire);
    // SAFETY: write(2), mprotect(2) and _exit(2) are async-signal-safe.
    unsafe {
        if page == 0 {
            let message = b"scene: a SIGSEGV the scene did not cause reached its own handler\n";
            libc::write(2, message.as_ptr().cast(), message.len());
            libc::_exit(3);
        }
        libc::mprotect(
            page as *mut libc::c_void,
            page_size(),
            libc::PROT_READ | libc::PROT_WRITE,
        );
    }
    TAKEN.fetch_add(1, Ordering::AcqRel);
}

/// Installs the scene's handler with `signal(2)`, as most programs do.
pub fn install() {
    // SAFETY: installing a handler that is async-signal-safe.
    unsafe { libc::signal(libc::SIGSEGV, on_fault as *const () as libc::sighandler_t) };
}

/// Writes to a page of the scene's own made read-only: the fault it takes must reach
/// the scene's handler, which opens the page; how many faults it took (1 when the
/// handler got the fault, as it would without the layer).
pub fn fault_once() -> Result<usize, String> {
    let size = page_size();
    // SAFETY: an anonymous private mapping of one page, written once and unmapped.
    unsafe {
        let page = libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if page == libc::MAP_FAILED {
            return Err("cannot map a page".into());
        }
        PAGE.store(page as usize, Ordering::Release);
        std::ptr::write_volatile(page.cast::<u32>(), 0x5ca1ab1e);
        PAGE.store(0, Ordering::Release);
        libc::munmap(page, size);
    }
    Ok(TAKEN.load(Ordering::Acquire))
}
