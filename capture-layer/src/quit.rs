//! Ending the program once its window of frames is in the trace
//! (`MACROSCOPE_CAPTURE_QUIT=1`, `macroscope capture --quit-after-frames`): a program
//! that runs until a user closes it (a game at its menu, a demo in a loop) ends by
//! itself when there is nothing more to record.
//!
//! The program is asked first, as a user's `kill` would ask it: `SIGTERM`, which most
//! programs either die of or turn into a quit of their own (SDL makes it a quit event).
//! One that has not ended [`GRACE`] later (it ignores the signal, or hangs on its way
//! out) is ended with `SIGKILL`. The trace is finished before either is sent, so
//! nothing recorded is lost however the program ends.

use std::time::Duration;

use crate::recorder::log;
use crate::settings::LogLevel;

/// How long the program has to end after `SIGTERM` before it is killed.
pub const GRACE: Duration = Duration::from_secs(10);

/// Asks the program to end now, and kills it should it still run [`GRACE`] later.
/// Called once the trace is finished, outside the recorder's lock (a program that
/// quits through its own exit path finishes nothing more, but must not wait on it).
pub fn end_program() {
    log(
        LogLevel::Info,
        "the last frame asked for is in the trace: ending the program (SIGTERM)",
    );
    // A watchdog that outlives the polite request only if the program does.
    let watchdog = std::thread::Builder::new()
        .name("macroscope-quit".into())
        .spawn(|| {
            std::thread::sleep(GRACE);
            log(
                LogLevel::Error,
                &format!(
                    "the program still runs {} s after SIGTERM: killing it",
                    GRACE.as_secs()
                ),
            );
            // SAFETY: signalling our own process has no preconditions.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        });
    if watchdog.is_err() {
        log(
            LogLevel::Error,
            "no thread for the quit watchdog: the program is only asked to end",
        );
    }
    // SAFETY: as above.
    unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
}
