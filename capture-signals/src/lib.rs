//! `libmacroscope_signals.so`, which `macroscope capture` preloads into the program it
//! runs: it stands in for the C library's `sigaction` and `signal` so that a program
//! installing its own SIGSEGV handler after the capture layer has installed its own
//! (ioquake3 does, once its renderer is up) does not take the layer's away.
//!
//! The layer finds mapped-memory writes by page protection (its `write_watch`): a write
//! to a watched page faults into its handler, which hands every other fault on to the
//! program's. A program that replaced that handler would get the layer's faults and die
//! of them. While the layer has claimed SIGSEGV ([`macroscope_signals_claim_sigsegv`]),
//! the program's calls for SIGSEGV go to the layer, which keeps the program's action as
//! the one to hand its faults to and reports it back as the one installed; every other
//! call goes to the C library. Without the layer, or before it claims, nothing changes.

#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, c_int, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The layer's side of a claim: gives the program's action for SIGSEGV in `old` (when
/// not null) and, when `new` is not null, takes `*new` as the program's action.
pub type SwapProgramAction =
    unsafe extern "C" fn(new: *const libc::sigaction, old: *mut libc::sigaction);

type Sigaction = unsafe extern "C" fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int;
type Signal = unsafe extern "C" fn(c_int, libc::sighandler_t) -> libc::sighandler_t;

/// The claiming layer's [`SwapProgramAction`], 0 while none claims.
static CLAIM: AtomicUsize = AtomicUsize::new(0);
static REAL_SIGACTION: AtomicUsize = AtomicUsize::new(0);
static REAL_SIGNAL: AtomicUsize = AtomicUsize::new(0);
static REAL_SYSV_SIGNAL: AtomicUsize = AtomicUsize::new(0);

/// Hands the program's SIGSEGV calls to `swap` from now on (`None` gives them back to
/// the C library); 1 on success. The caller must have installed its own action first.
#[no_mangle]
pub unsafe extern "C" fn macroscope_signals_claim_sigsegv(
    swap: Option<SwapProgramAction>,
) -> c_int {
    CLAIM.store(swap.map_or(0, |f| f as usize), Ordering::Release);
    1
}

/// The C library's definition of `name`, looked up past this library once and kept.
unsafe fn next_definition(cache: &AtomicUsize, name: &CStr) -> usize {
    let mut f = cache.load(Ordering::Acquire);
    if f == 0 {
        f = libc::dlsym(libc::RTLD_NEXT, name.as_ptr() as *const c_char) as usize;
        cache.store(f, Ordering::Release);
    }
    f
}

fn claimed() -> Option<SwapProgramAction> {
    match CLAIM.load(Ordering::Acquire) {
        0 => None,
        // SAFETY: only a SwapProgramAction is ever stored.
        f => Some(unsafe { std::mem::transmute::<usize, SwapProgramAction>(f) }),
    }
}

fn fail(errno: c_int) -> c_int {
    // SAFETY: errno is thread-local and always writable.
    unsafe { *libc::__errno_location() = errno };
    -1
}

/// POSIX `sigaction`: for SIGSEGV while the layer has claimed it, the program's action is
/// the layer's to keep; otherwise the C library's.
#[no_mangle]
pub unsafe extern "C" fn sigaction(
    signal: c_int,
    new: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    if signal == libc::SIGSEGV {
        if let Some(swap) = claimed() {
            swap(new, old);
            return 0;
        }
    }
    match next_definition(&REAL_SIGACTION, c"sigaction") {
        0 => fail(libc::ENOSYS),
        // SAFETY: the C library's sigaction has this type.
        f => std::mem::transmute::<usize, Sigaction>(f)(signal, new, old),
    }
}

/// The action `signal(2)` installs under `flags`, as the C library builds it.
fn action_of(
    signal: c_int,
    handler: libc::sighandler_t,
    flags: c_int,
    masked: bool,
) -> libc::sigaction {
    // SAFETY: a zeroed sigaction is a valid value to fill.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = handler;
    action.sa_flags = flags;
    // SAFETY: the mask is ours to fill.
    unsafe {
        libc::sigemptyset(&mut action.sa_mask);
        if masked {
            libc::sigaddset(&mut action.sa_mask, signal);
        }
    }
    action
}

/// A `signal(2)` flavour: for a claimed SIGSEGV the action it stands for (`flags`, the
/// signal blocked in its handler where `masked`) goes to the layer and the handler it
/// replaces comes back; otherwise the C library's definition of `name` does the work.
unsafe fn signal_flavour(
    signal: c_int,
    handler: libc::sighandler_t,
    flags: c_int,
    masked: bool,
    real: &AtomicUsize,
    name: &CStr,
) -> libc::sighandler_t {
    if signal == libc::SIGSEGV {
        if let Some(swap) = claimed() {
            let mut old: libc::sigaction = std::mem::zeroed();
            swap(&action_of(signal, handler, flags, masked), &mut old);
            return old.sa_sigaction;
        }
    }
    match next_definition(real, name) {
        0 => {
            fail(libc::ENOSYS);
            libc::SIG_ERR
        }
        // SAFETY: the C library's signal functions have this type.
        f => std::mem::transmute::<usize, Signal>(f)(signal, handler),
    }
}

/// BSD `signal` (glibc's `signal` under the default feature macros): restarting
/// calls, the signal blocked in its own handler.
#[no_mangle]
pub unsafe extern "C" fn signal(signal: c_int, handler: libc::sighandler_t) -> libc::sighandler_t {
    signal_flavour(
        signal,
        handler,
        libc::SA_RESTART,
        true,
        &REAL_SIGNAL,
        c"signal",
    )
}

/// `bsd_signal`: `signal` by another name.
#[no_mangle]
pub unsafe extern "C" fn bsd_signal(sig: c_int, handler: libc::sighandler_t) -> libc::sighandler_t {
    signal(sig, handler)
}

/// System V `signal` (what strict ISO C programs call, as `__sysv_signal`): the
/// handler runs once, unblocked, and is then reset.
#[no_mangle]
pub unsafe extern "C" fn __sysv_signal(
    signal: c_int,
    handler: libc::sighandler_t,
) -> libc::sighandler_t {
    let flags = libc::SA_RESETHAND | libc::SA_NODEFER;
    signal_flavour(
        signal,
        handler,
        flags,
        false,
        &REAL_SYSV_SIGNAL,
        c"__sysv_signal",
    )
}

/// `sysv_signal`: `__sysv_signal` by its public name.
#[no_mangle]
pub unsafe extern "C" fn sysv_signal(
    sig: c_int,
    handler: libc::sighandler_t,
) -> libc::sighandler_t {
    __sysv_signal(sig, handler)
}
