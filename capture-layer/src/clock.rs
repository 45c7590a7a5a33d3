//! Call timestamps: nanoseconds since capture started, taken at every recorded call.
//!
//! Reading the system's monotonic clock costs a recording thread more than anything
//! else the layer does per call on a virtual machine (the NVIDIA device machine: a
//! quarter of the layer's time in the storm scene). Where the CPU's time-stamp counter is
//! invariant (it ticks at one rate in every power state, on every core), a call reads the
//! counter alone and scales it: the scale is measured once, against the monotonic clock,
//! over the first [`CALIBRATION`] of capture, and calls before that read the monotonic
//! clock. A scale measured over that long is good to about a microsecond a second.
//! Elsewhere (no invariant counter, another architecture) every call reads the monotonic
//! clock.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long the counter is compared with the monotonic clock before its scale is set.
pub const CALIBRATION: Duration = Duration::from_millis(200);

/// When capture started, in both clocks.
struct Start {
    instant: Instant,
    /// The counter then, where it is invariant.
    ticks: Option<u64>,
}

static START: OnceLock<Start> = OnceLock::new();
/// Nanoseconds per counter tick, once measured.
static SCALE: OnceLock<f64> = OnceLock::new();

/// Starts the clock (the first call does; later calls change nothing).
pub fn start() {
    start_time();
}

fn start_time() -> &'static Start {
    START.get_or_init(|| Start {
        instant: Instant::now(),
        ticks: invariant_ticks(),
    })
}

/// Nanoseconds since the clock started.
pub fn now_ns() -> u64 {
    let start = start_time();
    if let (Some(t0), Some(t)) = (start.ticks, invariant_ticks()) {
        let ticks = t.saturating_sub(t0);
        if let Some(scale) = SCALE.get() {
            return (ticks as f64 * scale) as u64;
        }
        let elapsed = start.instant.elapsed();
        if elapsed >= CALIBRATION && ticks > 0 {
            let scale = *SCALE.get_or_init(|| elapsed.as_nanos() as f64 / ticks as f64);
            return (ticks as f64 * scale) as u64;
        }
        return elapsed.as_nanos() as u64;
    }
    start.instant.elapsed().as_nanos() as u64
}

/// The time-stamp counter, where it is invariant.
#[cfg(target_arch = "x86_64")]
fn invariant_ticks() -> Option<u64> {
    static INVARIANT: OnceLock<bool> = OnceLock::new();
    let invariant = *INVARIANT.get_or_init(|| {
        let max_extended = std::arch::x86_64::__cpuid(0x8000_0000).eax;
        // Leaf 0x80000007, EDX bit 8: the invariant TSC.
        max_extended >= 0x8000_0007 && std::arch::x86_64::__cpuid(0x8000_0007).edx & (1 << 8) != 0
    });
    // SAFETY: RDTSC is present on every x86_64 CPU.
    invariant.then(|| unsafe { std::arch::x86_64::_rdtsc() })
}

#[cfg(not(target_arch = "x86_64"))]
fn invariant_ticks() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_follow_the_monotonic_clock_before_and_after_calibration() {
        start();
        let begun = Instant::now();
        let mut last = 0;
        // Through the calibration and past it, the clock keeps with the monotonic one
        // and never goes back.
        while begun.elapsed() < CALIBRATION + Duration::from_millis(100) {
            let before = start_time().instant.elapsed().as_nanos() as u64;
            let t = now_ns();
            let after = start_time().instant.elapsed().as_nanos() as u64;
            assert!(t >= last, "went back: {t} after {last}");
            // Within 0.1 % (and 20 µs) of the monotonic clock read around it.
            let slack = after / 1000 + 20_000;
            assert!(
                t + slack >= before && t <= after + slack,
                "{t} not within {before}..{after}"
            );
            last = t;
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
