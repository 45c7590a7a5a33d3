//! Finishing the trace when the program is interrupted: Ctrl-C in its terminal
//! (`SIGINT`), a `kill` or a `timeout` (`SIGTERM`), its terminal closed (`SIGHUP`).
//!
//! A program that leaves such a signal at its default action dies of it at once,
//! wherever its threads are: the last chunk, written while the signal came, is torn
//! (glxgears under `timeout -s INT` lost up to a second of calls so) and the trace has
//! no footer. For each of these signals whose action is the default when capture
//! starts, the layer installs a handler that only writes the signal's number into a
//! pipe (all a handler may safely do). A thread of the layer, blocking every signal
//! itself, reads it, finishes the trace (last chunk, footer) and then lets the signal
//! do what it would have done: the action set back to the default, the signal sent
//! again, and the process ends of it, its exit status what it would have been without
//! the layer. Another such signal while the trace is being finished ends the process at
//! once (Ctrl-C twice), unless it comes within [`REPEAT_MERGED`] of the first: `timeout`
//! sends its signal to the program and then to the program's process group, and the
//! two are one request.
//!
//! A signal the program handles, ignores or blocks (a `signalfd`) is left to it: the
//! layer only takes signals the program left at their default, and a handler the
//! program installs later replaces the layer's (its own exit path then finishes the
//! trace, `atexit`). A child the program forks without `exec` inherits the handler
//! but not the thread: there the handler ends the process at once, as the default
//! would have.

use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::time::Duration;

use crate::recorder::{self, log};
use crate::settings::LogLevel;

/// The signals whose default action ends the process and that a user sends to end a
/// program.
const SIGNALS: [c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The pipe's write end, -1 until [`watch`] made it.
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
/// The process that watches: a forked child has the handler but not the thread.
static OWNER: AtomicI32 = AtomicI32::new(0);
/// Whether a signal is being handled (the trace being finished).
static PENDING: AtomicBool = AtomicBool::new(false);
/// When the signal being handled came, in nanoseconds of the monotonic clock.
static PENDING_SINCE: AtomicU64 = AtomicU64::new(0);

/// How soon after the first a signal is taken as the same request, not a second one.
const REPEAT_MERGED: Duration = Duration::from_millis(500);

/// Installs the handler for each of [`SIGNALS`] whose action is the default, and
/// starts the thread that finishes the trace when one comes. Called once, when capture
/// starts.
pub fn watch() {
    let mut fds = [-1; 2];
    // SAFETY: `fds` has room for the two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        log(
            LogLevel::Error,
            "no pipe for interrupts: a program interrupted mid-capture leaves its last chunk torn",
        );
        return;
    }
    let [read_end, write_end] = fds;
    if spawn_with_signals_blocked(move || finish_on_signal(read_end)).is_err() {
        log(
            LogLevel::Error,
            "no thread for interrupts: a program interrupted mid-capture leaves its last chunk torn",
        );
        // SAFETY: both descriptors are ours and used nowhere else.
        unsafe {
            libc::close(read_end);
            libc::close(write_end);
        }
        return;
    }
    PIPE_WRITE.store(write_end, Ordering::Release);
    // SAFETY: getpid cannot fail.
    OWNER.store(unsafe { libc::getpid() }, Ordering::Release);
    for signal in SIGNALS {
        if action_is(signal, libc::SIG_DFL) {
            set_action(
                signal,
                on_signal as extern "C" fn(c_int) as libc::sighandler_t,
            );
        }
    }
}

/// Starts `body` on a thread of its own that blocks every signal: process-directed
/// signals go to the program's threads (a program reading them from a `signalfd`
/// blocks them in every thread of its own, and must not lose one to ours).
fn spawn_with_signals_blocked(body: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    // SAFETY: the sets are ours to fill; the calling thread's mask is put back below.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut before);
        // The new thread starts with the mask of the thread that makes it.
        let spawned = std::thread::Builder::new()
            .name("macroscope-interrupt".into())
            .spawn(body);
        libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
        spawned.map(|_| ())
    }
}

/// The thread's work: waits for a signal's number, finishes the trace, and ends the
/// process of that signal.
fn finish_on_signal(read_end: c_int) {
    let signal = loop {
        let mut byte = 0u8;
        // SAFETY: one byte into `byte`.
        let n = unsafe { libc::read(read_end, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            break c_int::from(byte);
        }
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        return; // the pipe is gone: nothing more to watch
    };
    log(
        LogLevel::Info,
        &format!(
            "{}: finishing the trace, then the program ends as the signal asks",
            signal_name(signal)
        ),
    );
    recorder::finish();
    end_of(signal);
}

/// The handler: hands the signal to the thread, or ends the process at once where
/// there is no thread to hand it to (a forked child) or one is already being handled.
/// Async-signal-safe: atomics, `getpid`, `write`, `sigaction` and `kill` only.
extern "C" fn on_signal(signal: c_int) {
    // SAFETY: errno is thread-local; the handler leaves it as it found it.
    let errno = unsafe { *libc::__errno_location() };
    // SAFETY: getpid cannot fail.
    let owner = unsafe { libc::getpid() } == OWNER.load(Ordering::Acquire);
    let now = monotonic_ns();
    if !owner {
        end_of(signal);
    } else if PENDING.swap(true, Ordering::AcqRel) {
        let since = now.saturating_sub(PENDING_SINCE.load(Ordering::Acquire));
        if since >= REPEAT_MERGED.as_nanos() as u64 {
            end_of(signal);
        }
    } else {
        PENDING_SINCE.store(now, Ordering::Release);
        // Signal numbers fit a byte.
        let byte = signal as u8;
        // SAFETY: one byte from `byte` to the pipe `watch` made.
        let written = unsafe {
            libc::write(
                PIPE_WRITE.load(Ordering::Acquire),
                (&byte as *const u8).cast(),
                1,
            )
        };
        if written != 1 {
            end_of(signal);
        }
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

/// Ends the process of `signal`, as its default action does: the layer's handler is
/// replaced by the default and the signal sent again (blocked in a handler, it arrives
/// once the handler returns). Where the program has installed a handler of its own
/// since, that handler gets the signal instead. Async-signal-safe.
fn end_of(signal: c_int) {
    if action_is(
        signal,
        on_signal as extern "C" fn(c_int) as libc::sighandler_t,
    ) {
        set_action(signal, libc::SIG_DFL);
    }
    // SAFETY: signalling our own process has no preconditions.
    unsafe { libc::kill(libc::getpid(), signal) };
}

/// The monotonic clock in nanoseconds. Async-signal-safe.
fn monotonic_ns() -> u64 {
    // SAFETY: a zeroed timespec is a valid place for the time.
    let mut now: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: reading the clock into `now`.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    (now.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(now.tv_nsec as u64)
}

/// Whether `signal`'s action is `handler`. Async-signal-safe.
fn action_is(signal: c_int, handler: libc::sighandler_t) -> bool {
    // SAFETY: a zeroed sigaction is a valid place for the current action.
    let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: reading the action only.
    let read = unsafe { libc::sigaction(signal, std::ptr::null(), &mut current) };
    read == 0 && current.sa_sigaction == handler
}

/// Sets `signal`'s action to `handler`, restarting interrupted calls. Async-signal-safe.
fn set_action(signal: c_int, handler: libc::sighandler_t) {
    // SAFETY: a zeroed sigaction with an empty mask is a valid action to fill.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(signal, &action, std::ptr::null_mut());
    }
}

/// The signal's name as users know it.
fn signal_name(signal: c_int) -> String {
    match signal {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        other => format!("signal {other}"),
    }
}
