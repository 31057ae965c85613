//! Residency: how many threadgroups of a kernel a core holds at once, and what limits it.
//!
//! Four limits, each a whole number of threadgroups per core:
//! - threads: `max_threads_per_core`;
//! - registers: without Dynamic Caching (Apple7/8) each thread reserves its peak register
//!   count; the register file holds `register_file_bytes / (registers × register_bytes)`
//!   threads, rounded down to `register_granule_threads` (Mesa's table for G13). With
//!   Dynamic Caching (Apple9) registers are allocated as they are used: a thread is
//!   charged its mean live registers, and registers and threadgroup memory share one pool
//!   (`on_chip_memory_bytes`);
//! - threadgroup memory: `threadgroup_memory_per_core` (Apple7/8; Apple9: the pool);
//! - threadgroups: `max_threadgroups_per_core`.
//!
//! A threadgroup is charged its SIMD-groups' full width (the last one's idle lanes hold
//! registers too). A core with nothing resident takes any threadgroup, so a kernel over
//! every limit still runs, one threadgroup per core.

use metalsim_models::Gpu;

use crate::outcome::Limiter;
use crate::regalloc::RegisterUse;

/// What one threadgroup of a kernel costs a core.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Cost {
    /// Threads (whole SIMD-groups).
    pub threads: u32,
    /// Register-file bytes (Apple7/8) or pool bytes for registers (Apple9).
    pub register_bytes: u64,
    /// Threadgroup-memory bytes.
    pub threadgroup_bytes: u64,
}

/// The residency rules of a GPU for one kernel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Residency {
    max_threads: u32,
    max_groups: u32,
    dynamic: bool,
    /// Register bytes one thread is charged.
    bytes_per_thread: f64,
    /// Threads the register file holds (Apple7/8).
    register_threads: u32,
    threadgroup_capacity: u64,
    pool: u64,
    /// Registers per thread charged (peak, or mean with Dynamic Caching).
    pub registers_per_thread: f64,
}

/// What a core holds now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Held {
    /// Resident threadgroups.
    pub groups: u32,
    /// Resident threads (whole SIMD-groups).
    pub threads: u32,
    /// Register bytes charged.
    pub register_bytes: u64,
    /// Threadgroup-memory bytes.
    pub threadgroup_bytes: u64,
}

impl Residency {
    /// The rules of `gpu` for a kernel whose threads use `registers`.
    pub fn new(gpu: &Gpu, registers: RegisterUse) -> Residency {
        let o = &gpu.occupancy;
        let dynamic = o.dynamic_caching;
        let regs = if dynamic {
            registers.mean
        } else {
            registers.peak as f64
        };
        let regs = regs.max(1.0);
        let bytes_per_thread = regs * o.register_bytes as f64;
        let granule = o.register_granule_threads.max(1);
        let fits = (gpu.register_file_bytes as f64 / bytes_per_thread) as u32;
        let register_threads = fits / granule * granule;
        Residency {
            max_threads: gpu.max_threads_per_core,
            max_groups: gpu.max_threadgroups_per_core,
            dynamic,
            bytes_per_thread,
            register_threads,
            threadgroup_capacity: gpu.threadgroup_memory_per_core as u64,
            pool: o.on_chip_memory_bytes as u64,
            registers_per_thread: regs,
        }
    }

    /// What a threadgroup of `threads` threads with `threadgroup_bytes` costs.
    pub fn cost(&self, threads: u32, threadgroup_bytes: u64) -> Cost {
        let threads = threads.div_ceil(32) * 32;
        Cost {
            threads,
            register_bytes: (threads as f64 * self.bytes_per_thread).ceil() as u64,
            threadgroup_bytes,
        }
    }

    /// Whether a core holding `held` can take a threadgroup costing `c` (an empty core
    /// takes any).
    pub fn fits(&self, held: &Held, c: &Cost) -> bool {
        if held.groups == 0 {
            return true;
        }
        let threads = held.threads + c.threads;
        let memory_ok = if self.dynamic {
            held.register_bytes + held.threadgroup_bytes + c.register_bytes + c.threadgroup_bytes
                <= self.pool
        } else {
            threads <= self.register_threads
                && held.threadgroup_bytes + c.threadgroup_bytes <= self.threadgroup_capacity
        };
        held.groups < self.max_groups && threads <= self.max_threads && memory_ok
    }

    /// Threadgroups of cost `c` a core holds at once, at least one, and the limit that
    /// sets it (ties go to the first of threads, registers, threadgroup memory,
    /// threadgroups).
    pub fn groups_per_core(&self, c: &Cost) -> (u32, Limiter) {
        let per = |cap: u64, each: u64| cap.checked_div(each).unwrap_or(u64::MAX);
        let by_threads = per(self.max_threads as u64, c.threads as u64);
        let (by_registers, by_threadgroup) = if self.dynamic {
            let both = per(self.pool, c.register_bytes + c.threadgroup_bytes);
            if c.register_bytes >= c.threadgroup_bytes {
                (both, u64::MAX)
            } else {
                (u64::MAX, both)
            }
        } else {
            (
                per(self.register_threads as u64, c.threads as u64),
                per(self.threadgroup_capacity, c.threadgroup_bytes),
            )
        };
        let by_groups = self.max_groups as u64;
        let limits = [
            (by_threads, Limiter::Threads),
            (by_registers, Limiter::Registers),
            (by_threadgroup, Limiter::ThreadgroupMemory),
            (by_groups, Limiter::Threadgroups),
        ];
        let (n, limiter) = limits
            .iter()
            .copied()
            .fold(limits[0], |best, l| if l.0 < best.0 { l } else { best });
        (n.clamp(1, u32::MAX as u64) as u32, limiter)
    }
}

impl Held {
    /// Adds a threadgroup.
    pub fn add(&mut self, c: &Cost) {
        self.groups += 1;
        self.threads += c.threads;
        self.register_bytes += c.register_bytes;
        self.threadgroup_bytes += c.threadgroup_bytes;
    }

    /// Removes a threadgroup.
    pub fn remove(&mut self, c: &Cost) {
        self.groups -= 1;
        self.threads -= c.threads;
        self.register_bytes -= c.register_bytes;
        self.threadgroup_bytes -= c.threadgroup_bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Threadgroups per core and limiter for a kernel on a built-in model.
    fn check(
        model: &str,
        peak: u32,
        mean: f64,
        threads: u32,
        tg_bytes: u64,
        expect: (u32, Limiter),
    ) {
        let gpu = metalsim_models::builtin(model).unwrap();
        let r = Residency::new(&gpu, RegisterUse { peak, mean });
        let c = r.cost(threads, tg_bytes);
        assert_eq!(
            r.groups_per_core(&c),
            expect,
            "{model} {peak} regs {threads} threads"
        );
        // `fits` agrees: the core takes exactly that many.
        let mut held = Held::default();
        let mut n = 0;
        while r.fits(&held, &c) && n < 1000 {
            held.add(&c);
            n += 1;
        }
        assert_eq!(n, expect.0);
    }

    #[test]
    fn mesa_register_table_on_g13() {
        // apple-gpu.md §2.1: 52 registers -> 1024 threads, 64 -> 832, 128 -> 384.
        check("m1", 52, 52.0, 256, 0, (4, Limiter::Registers));
        check("m1", 64, 64.0, 64, 0, (13, Limiter::Registers));
        check("m1", 128, 128.0, 128, 0, (3, Limiter::Registers));
        // Few registers: threads limit (3072 / 1024).
        check("m1", 16, 16.0, 1024, 0, (3, Limiter::Threads));
    }

    #[test]
    fn threadgroup_memory_and_threadgroup_count_limits() {
        // 60 KB per core, 16 KiB per threadgroup: 3.
        check("m1", 16, 16.0, 128, 16384, (3, Limiter::ThreadgroupMemory));
        // 32-thread threadgroups, nothing else: the threadgroup count.
        check("m1", 8, 8.0, 32, 0, (32, Limiter::Threadgroups));
    }

    #[test]
    fn dynamic_caching_charges_mean_registers_from_one_pool() {
        // Peak 128 but mean 40: Apple9 charges 40 x 4 B x 256 threads = 40 KiB per group;
        // with 16 KiB of threadgroup memory, 56 KiB of the 268 KiB pool: 4 groups.
        check("m3", 128, 40.0, 256, 16384, (4, Limiter::Registers));
        // The same kernel on M1 (peak 128 regs: 384 threads) holds 1.
        check("m1", 128, 40.0, 256, 16384, (1, Limiter::Registers));
        // Threadgroup memory dominating the pool is the limiter.
        check("m3", 8, 8.0, 64, 32768, (7, Limiter::ThreadgroupMemory));
    }

    #[test]
    fn an_empty_core_takes_any_threadgroup() {
        check("m1", 128, 128.0, 1024, 32768, (1, Limiter::Registers));
    }
}
