//! How far a run has come, readable from another thread while it runs (a progress bar).
//!
//! The machine bumps the count once per retired threadgroup (a relaxed atomic store, far
//! from the per-instruction loop), so watching costs the run nothing measurable and never
//! changes its results.

use std::sync::atomic::{AtomicU64, Ordering};

/// Threadgroups finished and in all, shared between a run and whoever watches it.
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicU64,
    total: AtomicU64,
}

impl Progress {
    /// A progress record of a run not started yet (0 of 0).
    pub fn new() -> Self {
        Self::default()
    }

    /// Threadgroups that have finished.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Threadgroups in the dispatch (0 until the run has checked its launch).
    pub fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// Sets the dispatch's size and clears the count.
    pub(crate) fn start(&self, total: u64) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
    }

    /// One more threadgroup finished.
    #[inline]
    pub(crate) fn finished_one(&self) {
        // Only the running thread writes, so a load and a store suffice.
        self.done
            .store(self.done.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_from_zero_after_start() {
        let p = Progress::new();
        p.start(3);
        p.finished_one();
        p.finished_one();
        assert_eq!((p.done(), p.total()), (2, 3));
        p.start(5);
        assert_eq!((p.done(), p.total()), (0, 5));
    }
}
