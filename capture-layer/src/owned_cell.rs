//! A value one thread uses at every call and other threads take now and then: a
//! recording thread's block, which collectors take at submits.
//!
//! A lock taken by every thread at every call would be shared by every recording
//! thread. Here the owner announces itself on its own flag and then looks at the
//! collectors' flag; a collector raises its flag, fences, and waits while the owner is
//! inside. Of two that enter at once, at least one sees the other (the store-buffer
//! pattern, a full fence on each side): the owner steps back until the collector is
//! done, or the collector waits for the owner. The fence of the owner's side is made by
//! the collector where the kernel allows ([`crate::asymmetric_fence`]), so the owner's
//! call executes no fence at all; else the owner's store is an exchange (a full fence
//! that touches no line another thread writes). Whatever the owner reads after
//! entering (the trace's numbered-call counter) it reads after every fence of a
//! collector that it did not see inside.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{fence, AtomicBool, Ordering};

use crate::asymmetric_fence;

/// A value its owner thread enters without a locked instruction of its own, and that
/// collectors take exclusively.
pub struct OwnedCell<T> {
    /// Set by the owner while it uses the value.
    owner_inside: AtomicBool,
    /// Set by a collector while it uses the value (collectors exclude each other with it).
    collecting: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is only reached through a guard, and the protocol above lets one
// guard exist at a time.
unsafe impl<T: Send> Sync for OwnedCell<T> {}

impl<T> OwnedCell<T> {
    /// A cell holding `value`.
    pub fn new(value: T) -> Self {
        OwnedCell {
            owner_inside: AtomicBool::new(false),
            collecting: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// Enters as the owner (only the one owner thread may call this), after any
    /// collector holding the value is done.
    #[inline(always)]
    pub fn enter(&self) -> OwnerGuard<'_, T> {
        // Its flag is seen before it looks: by the collectors' fence, or by its own.
        if asymmetric_fence::collectors_fence() {
            self.owner_inside.store(true, Ordering::Relaxed);
            asymmetric_fence::light();
        } else {
            self.owner_inside.swap(true, Ordering::SeqCst);
        }
        // Sequentially consistent, as the side read above is: an owner that read the
        // collectors' side sees the flag of a collector that read the owners' side
        // (`asymmetric_fence`). A plain load on x86-64, as an acquiring one is.
        if self.collecting.load(Ordering::SeqCst) {
            self.wait_for_collector();
        }
        OwnerGuard(self)
    }

    /// Steps back while a collector holds the value, then enters again.
    #[cold]
    fn wait_for_collector(&self) {
        loop {
            self.owner_inside.store(false, Ordering::Release);
            while self.collecting.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            self.owner_inside.store(true, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            if !self.collecting.load(Ordering::Acquire) {
                return;
            }
        }
    }

    /// Takes the value as a collector (any thread, the owner's too), waiting for the
    /// owner to leave and for other collectors.
    pub fn collect(&self) -> CollectorGuard<'_, T> {
        self.raise();
        asymmetric_fence::heavy();
        self.wait_for_owner()
    }

    /// Takes every cell of `cells` as [`collect`](Self::collect) does, with one fence
    /// for all (the collectors' side of the fence is a system call where it is made for
    /// the owners too): raises every flag, fences, then waits for each owner.
    pub fn collect_all<'a>(cells: &[&'a OwnedCell<T>]) -> Vec<CollectorGuard<'a, T>> {
        cells.iter().for_each(|cell| cell.raise());
        asymmetric_fence::heavy();
        cells.iter().map(|cell| cell.wait_for_owner()).collect()
    }

    /// Raises the collectors' flag, after any other collector.
    fn raise(&self) {
        while self
            .collecting
            .compare_exchange_weak(false, true, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            std::thread::yield_now();
        }
    }

    /// Waits for the owner to leave (the flag raised, and a fence made since).
    fn wait_for_owner(&self) -> CollectorGuard<'_, T> {
        while self.owner_inside.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
        CollectorGuard(self)
    }
}

/// The owner inside its cell; dropping it leaves.
pub struct OwnerGuard<'a, T>(&'a OwnedCell<T>);

/// A collector holding a cell; dropping it lets the owner in again.
pub struct CollectorGuard<'a, T>(&'a OwnedCell<T>);

macro_rules! guard_access {
    ($guard:ident, $flag:ident) => {
        impl<T> Deref for $guard<'_, T> {
            type Target = T;

            fn deref(&self) -> &T {
                // SAFETY: this guard is the one access the protocol allows now.
                unsafe { &*self.0.value.get() }
            }
        }

        impl<T> DerefMut for $guard<'_, T> {
            fn deref_mut(&mut self) -> &mut T {
                // SAFETY: as for `deref`, and `&mut self` makes it unique.
                unsafe { &mut *self.0.value.get() }
            }
        }

        impl<T> Drop for $guard<'_, T> {
            fn drop(&mut self) {
                self.0.$flag.store(false, Ordering::Release);
            }
        }
    };
}

guard_access!(OwnerGuard, owner_inside);
guard_access!(CollectorGuard, collecting);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Spins a while, to widen the windows the protocol must keep apart.
    fn pause() {
        for _ in 0..64 {
            std::hint::spin_loop();
        }
    }

    #[test]
    fn owner_and_collectors_never_hold_the_value_at_once() {
        // Each owner fencing itself; then the sides changing while they take turns (the
        // registration waits for an RCU grace period, the turns take longer); then
        // (where the kernel has membarrier) the collectors fencing for it.
        take_turns();
        let registering = std::thread::spawn(crate::asymmetric_fence::register);
        take_turns();
        registering.join().unwrap();
        take_turns();
    }

    /// The owner counts up in two steps (a collector between them would see them
    /// differ, or change under it); collectors on two threads take what was counted, one
    /// cell at a time and as a list of cells.
    fn take_turns() {
        let cell = Arc::new(OwnedCell::new((0u64, 0u64)));
        let stop = Arc::new(AtomicBool::new(false));
        let collectors: Vec<_> = (0..2)
            .map(|_| {
                let (cell, stop) = (Arc::clone(&cell), Arc::clone(&stop));
                std::thread::spawn(move || {
                    let mut taken = 0;
                    let mut round = 0;
                    while !stop.load(Ordering::Relaxed) {
                        round += 1;
                        {
                            let mut guard = match round % 2 {
                                0 => cell.collect(),
                                _ => OwnedCell::collect_all(&[&*cell]).remove(0),
                            };
                            let counts = &mut *guard;
                            let seen = *counts;
                            pause();
                            assert!(
                                seen.0 == seen.1 && seen == *counts,
                                "a collector saw the owner inside: {seen:?} then {counts:?}"
                            );
                            taken += std::mem::take(&mut counts.0);
                            counts.1 = 0;
                        }
                        std::thread::yield_now();
                    }
                    taken
                })
            })
            .collect();
        let rounds = 50_000;
        for _ in 0..rounds {
            let mut guard = cell.enter();
            let counts = &mut *guard;
            counts.0 += 1;
            pause();
            counts.1 += 1;
            drop(guard);
            pause();
        }
        stop.store(true, Ordering::Relaxed);
        let taken: u64 = collectors.into_iter().map(|c| c.join().unwrap()).sum();
        let left = (*cell.collect()).0;
        assert_eq!(taken + left, rounds, "every count was taken once");
    }
}
