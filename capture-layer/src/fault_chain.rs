//! The SIGSEGV action [`crate::write_watch`] installs, kept installed, and the program's
//! own action, to which it hands every fault that is not its own.
//!
//! A program may install its own SIGSEGV handler after the layer has installed its
//! (ioquake3 does once its renderer is up, and would then get the layer's faults and
//! die of them). Where `macroscope capture` preloaded `libmacroscope_signals.so`, the
//! program's `sigaction` and `signal` calls for SIGSEGV come here ([`swap_program`]):
//! the program's action is kept as the one to chain to and reported back as installed,
//! and the layer's stays. Elsewhere (the layer enabled by hand) [`keep_installed`], at
//! each look at the watched pages, finds a replaced handler, keeps the program's as the
//! one to chain to and installs the layer's again; a fault between the two goes to the
//! program (the log says so once, and how to avoid it).

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::recorder::log;
use crate::settings::LogLevel;

/// The preloaded library's file name.
pub const SIGNALS_LIBRARY_FILE: &str = "libmacroscope_signals.so";

/// The handler the layer installs.
pub type Handler = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);

type Sigaction =
    unsafe extern "C" fn(libc::c_int, *const libc::sigaction, *mut libc::sigaction) -> libc::c_int;
type SwapProgramAction = unsafe extern "C" fn(*const libc::sigaction, *mut libc::sigaction);
type Claim = unsafe extern "C" fn(Option<SwapProgramAction>) -> libc::c_int;

/// Program actions kept, most recent last; a handler reading one while the program
/// sets this many more could read a torn one, which no program does.
const KEPT: usize = 8;

/// The program's SIGSEGV action: written by the program's calls (possibly from a signal
/// handler) and read by the fault handler, so with atomics and no lock or allocation.
struct ProgramAction {
    kept: [UnsafeCell<libc::sigaction>; KEPT],
    /// Index of the current one in `kept`.
    current: AtomicUsize,
    next: AtomicUsize,
}

// SAFETY: a slot is written only before its index is published, and published slots
// are written again only KEPT calls later (see KEPT).
unsafe impl Sync for ProgramAction {}

impl ProgramAction {
    fn set(&self, action: &libc::sigaction) {
        let i = self.next.fetch_add(1, Ordering::AcqRel) % KEPT;
        // SAFETY: slot i is not the current one (see KEPT).
        unsafe { *self.kept[i].get() = *action };
        self.current.store(i, Ordering::Release);
    }

    fn get(&self) -> libc::sigaction {
        let i = self.current.load(Ordering::Acquire);
        // SAFETY: the published slot is whole.
        unsafe { *self.kept[i].get() }
    }
}

static PROGRAM: ProgramAction = ProgramAction {
    // SAFETY: a zeroed sigaction is SIG_DFL with no flags and an empty mask.
    kept: [const { UnsafeCell::new(unsafe { std::mem::zeroed() }) }; KEPT],
    current: AtomicUsize::new(0),
    next: AtomicUsize::new(1),
};

/// The layer's action, once installed.
static OURS: OnceLock<libc::sigaction> = OnceLock::new();
/// The C library's `sigaction` (not the preloaded library's), once found.
static REAL: AtomicUsize = AtomicUsize::new(0);
/// Whether the preloaded library hands the program's calls to us.
static CLAIMED: AtomicBool = AtomicBool::new(false);
static REPLACED_SAID: AtomicBool = AtomicBool::new(false);

/// The C library's own `sigaction`: the preloaded library stands in for it under the
/// name, so it is looked up in the C library itself.
fn real_sigaction() -> Option<Sigaction> {
    let mut f = REAL.load(Ordering::Acquire);
    if f == 0 {
        // SAFETY: plain dynamic-linker lookups; RTLD_NOLOAD only finds the loaded libc.
        f = unsafe {
            let libc_handle =
                libc::dlopen(c"libc.so.6".as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
            if libc_handle.is_null() {
                return None;
            }
            libc::dlsym(libc_handle, c"sigaction".as_ptr()) as usize
        };
        REAL.store(f, Ordering::Release);
    }
    // SAFETY: the C library's sigaction has this type.
    (f != 0).then(|| unsafe { std::mem::transmute::<usize, Sigaction>(f) })
}

/// Installs `handler` for SIGSEGV once, keeping the action it replaces as the
/// program's; whether it is installed (a later call with another handler changes
/// nothing).
pub fn install(handler: Handler) -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        let Some(real) = real_sigaction() else {
            return false;
        };
        // SAFETY: a zeroed sigaction is a valid value to fill; the calls follow POSIX.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            if real(libc::SIGSEGV, &action, &mut previous) != 0 {
                return false;
            }
            PROGRAM.set(&previous);
            let _ = OURS.set(action);
            let claim = libc::dlsym(
                libc::RTLD_DEFAULT,
                c"macroscope_signals_claim_sigsegv".as_ptr(),
            );
            if !claim.is_null() {
                let claim: Claim = std::mem::transmute(claim);
                CLAIMED.store(claim(Some(swap_program)) == 1, Ordering::Release);
            }
        }
        true
    })
}

/// What the preloaded library calls for the program's SIGSEGV calls: gives the
/// program's action in `old` and takes `*new` as the program's.
unsafe extern "C" fn swap_program(new: *const libc::sigaction, old: *mut libc::sigaction) {
    if !old.is_null() {
        *old = PROGRAM.get();
    }
    if !new.is_null() {
        PROGRAM.set(&*new);
    }
}

/// Puts the layer's handler back where the program replaced it behind the preloaded
/// library's back (or without it), keeping the program's as the one to chain to.
pub fn keep_installed() {
    if CLAIMED.load(Ordering::Acquire) {
        return;
    }
    let (Some(ours), Some(real)) = (OURS.get(), real_sigaction()) else {
        return;
    };
    // SAFETY: querying and setting an action, as POSIX defines.
    unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        if real(libc::SIGSEGV, std::ptr::null(), &mut current) != 0
            || current.sa_sigaction == ours.sa_sigaction
        {
            return;
        }
        PROGRAM.set(&current);
        real(libc::SIGSEGV, ours, std::ptr::null_mut());
    }
    if !REPLACED_SAID.swap(true, Ordering::Relaxed) {
        log(
            LogLevel::Error,
            "the program installed a SIGSEGV handler of its own over the layer's, which \
             finds mapped-memory writes by page protection: the layer's is installed \
             again and hands the program the faults that are not its own, but one \
             before this could have gone to the program; capture with `macroscope \
             capture` (which preloads libmacroscope_signals.so for this) or with \
             MACROSCOPE_CAPTURE_MEMORY=compare",
        );
    }
}

/// Hands a fault that is not the layer's to the program's action.
///
/// Async-signal-safe: atomics, a copy and the calls the program's action asks for.
pub fn chain(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    let program = PROGRAM.get();
    let handler = program.sa_sigaction;
    // SAFETY: calling the program's own handler as the kernel would have; restoring
    // the default action makes the faulting instruction fault again and end the
    // process as it would have without us.
    unsafe {
        if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
            if let Some(real) = real_sigaction() {
                real(signal, &program, std::ptr::null_mut());
            }
        } else if program.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(handler);
            f(signal, info, context);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
            f(signal);
        }
    }
}
