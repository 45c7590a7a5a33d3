//! The host clock that times each row's encoding and execution.
//!
//! A replay reads it three times a draw, so its cost shows: the system's monotonic
//! clock (`clock_gettime` through the vDSO) takes about 25 ns a reading, the CPU's
//! time-stamp counter about 10. Where the counter runs at one rate whatever the core's
//! frequency and sleep state (x86-64 with an invariant TSC, CPUID 0x8000_0007 EDX bit
//! 8), readings are the counter's, turned into nanoseconds by its rate against the
//! monotonic clock, measured once a process; elsewhere they are the monotonic clock's.
//!
//! The rate is measured between two paired readings of both clocks: the first taken
//! when a replay starts ([`start_measuring`]), the second at the first reading, once
//! at least [`LEAST_SPAN`] has passed since. A replay reads the clock first at its
//! first draw, after the setup and the first chunk are read (more than a millisecond
//! for a short trace), so it seldom waits; it used to wait out a 2 ms span at its first
//! draw, a quarter of a short replay's time (the glxgears sample).

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A reading of the clock.
#[derive(Clone, Copy, Debug)]
pub struct Stamp(u64);

/// How readings become nanoseconds.
#[derive(Clone, Copy, Debug)]
enum Source {
    /// The time-stamp counter, at this many nanoseconds a tick.
    Counter { ns_per_tick: f64 },
    /// Nanoseconds since [`epoch`].
    Monotonic,
}

fn source() -> Source {
    static SOURCE: OnceLock<Source> = OnceLock::new();
    *SOURCE.get_or_init(|| match counter_rate() {
        Some(ns_per_tick) => Source::Counter { ns_per_tick },
        None => Source::Monotonic,
    })
}

/// The shortest span the counter's rate is measured over. Each paired reading is off
/// by at most half its bracket (a few tens of nanoseconds on a virtual machine), so
/// over this span the rate is within 2 parts in 10,000: a tenth of a nanosecond in a
/// microsecond's draw, far below what the host times vary by from run to run.
const LEAST_SPAN: Duration = Duration::from_micros(250);

/// Takes the first of the paired readings the counter's rate is measured between, if
/// it is not taken yet: to be called when a replay starts, so that the span has passed
/// by its first draw.
pub fn start_measuring() {
    #[cfg(target_arch = "x86_64")]
    first_pairing();
}

/// The first paired reading, taken once a process.
#[cfg(target_arch = "x86_64")]
fn first_pairing() -> (Instant, u64) {
    static FIRST: OnceLock<(Instant, u64)> = OnceLock::new();
    *FIRST.get_or_init(paired_reading)
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// The counter's nanoseconds a tick, where it is invariant: the monotonic clock's span
/// over the counter's between the first paired reading and one taken now, at least
/// [`LEAST_SPAN`] after it.
#[cfg(target_arch = "x86_64")]
fn counter_rate() -> Option<f64> {
    use std::arch::x86_64::__cpuid;
    // SAFETY: CPUID is on every x86-64 processor; the extended leaf is read only where
    // the processor says it has it. (`__cpuid` is safe from Rust 1.87 on, unsafe before.)
    #[allow(unused_unsafe)]
    let invariant = unsafe {
        __cpuid(0x8000_0000).eax >= 0x8000_0007 && __cpuid(0x8000_0007).edx & (1 << 8) != 0
    };
    if !invariant {
        return None;
    }
    let (start, first) = first_pairing();
    while start.elapsed() < LEAST_SPAN {}
    let (end, last) = paired_reading();
    let ticks = last.wrapping_sub(first);
    (ticks > 0).then(|| (end - start).as_nanos() as f64 / ticks as f64)
}

/// A reading of the monotonic clock and the counter's at the same moment: the counter
/// read just before and just after the clock, the narrowest of a few tries, and the
/// middle of it. A thread preempted between a clock reading and a counter reading
/// would pair them a time slice apart: over the 2 ms the rate was once measured on, one
/// such pairing put it 6 % off (0.410 ns a tick against 0.385 on a virtual machine
/// whose other core was busy).
#[cfg(target_arch = "x86_64")]
fn paired_reading() -> (Instant, u64) {
    use std::arch::x86_64::_rdtsc;
    const TRIES: usize = 8;
    // The bracket's width in ticks, the clock, the bracket's middle.
    let read = || {
        // SAFETY: RDTSC is on every x86-64 processor.
        let before = unsafe { _rdtsc() };
        let clock = Instant::now();
        // SAFETY: as above.
        let width = unsafe { _rdtsc() }.wrapping_sub(before);
        (width, clock, before.wrapping_add(width / 2))
    };
    let mut narrowest = read();
    for _ in 1..TRIES {
        let next = read();
        if next.0 < narrowest.0 {
            narrowest = next;
        }
    }
    (narrowest.1, narrowest.2)
}

#[cfg(not(target_arch = "x86_64"))]
fn counter_rate() -> Option<f64> {
    None
}

/// Reads the clock.
#[inline]
pub fn now() -> Stamp {
    match source() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: RDTSC is on every x86-64 processor.
        Source::Counter { .. } => Stamp(unsafe { std::arch::x86_64::_rdtsc() }),
        _ => Stamp(epoch().elapsed().as_nanos() as u64),
    }
}

/// Nanoseconds from `earlier` to `later` (0 if `later` is not later).
#[inline]
pub fn ns_between(earlier: Stamp, later: Stamp) -> u64 {
    let delta = later.0.saturating_sub(earlier.0);
    match source() {
        Source::Counter { ns_per_tick } => (delta as f64 * ns_per_tick) as u64,
        Source::Monotonic => delta,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_measure_what_the_system_clock_measures() {
        let (a, start) = (now(), Instant::now());
        std::thread::sleep(Duration::from_millis(20));
        let (b, elapsed) = (now(), start.elapsed().as_nanos() as u64);
        let measured = ns_between(a, b);
        // Within 5% of the system clock's span (the readings are a few ns apart).
        assert!(
            measured.abs_diff(elapsed) * 20 <= elapsed,
            "{measured} ns against {elapsed} ns ({:?})",
            source()
        );
        assert_eq!(ns_between(b, a), 0);
    }
}
