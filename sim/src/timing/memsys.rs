//! The device-memory path: per-core L1 (read-allocate, write-through) and its port, a
//! per-core link to the shared L2, the shared L2 and system-level cache (write-back), and
//! DRAM behind one chip-wide bandwidth queue.
//!
//! Latencies are the model's "from the request" figures for the level that serves the
//! line, plus the queueing delay of every port on the way. A line that misses everywhere
//! occupies DRAM for `line_bytes / dram_bytes_per_cycle` cycles; dirty lines evicted from
//! the SLC go back to DRAM the same way.

use metalsim_models::Gpu;

use super::cache::{Cache, Evicted};
use super::queue::Queue;

/// The memory hierarchy's timing state.
#[derive(Clone, Debug)]
pub(crate) struct MemorySystem {
    line_shift: u32,
    line_bytes: u64,
    l1: Vec<Cache>,
    l1_port: Vec<Queue>,
    l2_link: Vec<Queue>,
    l2: Cache,
    slc: Cache,
    slc_port: Queue,
    dram: Queue,
    l1_latency: u64,
    l2_latency: u64,
    slc_latency: u64,
    dram_latency: u64,
    atomic_latency: u64,
    /// Bytes moved to and from DRAM.
    pub dram_bytes: u64,
}

impl MemorySystem {
    /// The hierarchy of a GPU model, empty.
    pub fn new(gpu: &Gpu) -> MemorySystem {
        let m = &gpu.memory;
        let line = m.line_bytes as u64;
        let cores = gpu.cores as usize;
        MemorySystem {
            line_shift: line.trailing_zeros(),
            line_bytes: line,
            l1: (0..cores)
                .map(|_| Cache::new(m.l1.size_bytes, m.l1.ways, line))
                .collect(),
            l1_port: (0..cores)
                .map(|_| Queue::new(line, m.l1.bytes_per_cycle as f64))
                .collect(),
            l2_link: (0..cores)
                .map(|_| Queue::new(line, m.l2.bytes_per_cycle as f64))
                .collect(),
            l2: Cache::new(m.l2.size_bytes, m.l2.ways, line),
            slc: Cache::new(m.slc.size_bytes, m.slc.ways, line),
            slc_port: Queue::new(line, m.slc.bytes_per_cycle as f64 * gpu.cores as f64),
            dram: Queue::new(line, gpu.dram_bytes_per_cycle()),
            l1_latency: m.l1.latency as u64,
            l2_latency: m.l2.latency as u64,
            slc_latency: m.slc.latency as u64,
            dram_latency: m.dram.latency as u64,
            atomic_latency: gpu.latency.atomic as u64,
            dram_bytes: 0,
        }
    }

    /// The line number of an address.
    #[inline]
    pub fn line_of(&self, addr: u64) -> u64 {
        addr >> self.line_shift
    }

    /// A load of `lines` by `core` issued at `now`; the cycle its data is back.
    pub fn load(&mut self, core: usize, now: u64, lines: &[u64]) -> u64 {
        let mut done = now;
        for &line in lines {
            let s = self.l1_port[core].serve(now);
            let t = if self.l1[core].lookup(line) {
                s + self.l1_latency
            } else {
                let s = self.l2_link[core].serve(s);
                let t = self.read_l2(line, s, self.l2_latency);
                self.l1[core].insert(line, false);
                t
            };
            done = done.max(t);
        }
        done
    }

    /// A store of `lines` by `core` issued at `now`: through L1 (no allocation) to L2,
    /// which keeps the line dirty. The cycle the store is done.
    pub fn store(&mut self, core: usize, now: u64, lines: &[u64]) -> u64 {
        let mut done = now;
        for &line in lines {
            let s = self.l1_port[core].serve(now);
            self.l1[core].lookup(line);
            let s = self.l2_link[core].serve(s);
            if !self.l2.mark_dirty(line) {
                let ev = self.l2.insert(line, true);
                self.evict_l2(ev, s);
            }
            done = done.max(s + self.l2_latency);
        }
        done
    }

    /// A device atomic on `lines` by `core` issued at `now`, done at L2: the cycle the old
    /// value is back.
    pub fn atomic(&mut self, core: usize, now: u64, lines: &[u64]) -> u64 {
        let mut done = now;
        for &line in lines {
            let s = self.l2_link[core].serve(now);
            let t = self.read_l2(line, s, self.atomic_latency);
            self.l2.mark_dirty(line);
            done = done.max(t);
        }
        done
    }

    /// A read that reaches L2 at `s`: served there (after `hit_latency`) or below.
    fn read_l2(&mut self, line: u64, s: u64, hit_latency: u64) -> u64 {
        if self.l2.lookup(line) {
            return s + hit_latency;
        }
        let s = self.slc_port.serve(s);
        let t = if self.slc.lookup(line) {
            s + self.slc_latency
        } else {
            let s = self.dram.serve(s);
            self.dram_bytes += self.line_bytes;
            let ev = self.slc.insert(line, false);
            self.evict_slc(ev, s);
            s + self.dram_latency
        };
        let ev = self.l2.insert(line, false);
        self.evict_l2(ev, s);
        t.max(s + hit_latency)
    }

    fn evict_l2(&mut self, ev: Option<Evicted>, t: u64) {
        if let Some(Evicted { line, dirty: true }) = ev {
            let s = self.slc_port.serve(t);
            if !self.slc.mark_dirty(line) {
                let ev = self.slc.insert(line, true);
                self.evict_slc(ev, s);
            }
        }
    }

    fn evict_slc(&mut self, ev: Option<Evicted>, t: u64) {
        if let Some(Evicted { dirty: true, .. }) = ev {
            self.dram.serve(t);
            self.dram_bytes += self.line_bytes;
        }
    }
}
