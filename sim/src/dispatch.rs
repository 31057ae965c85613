//! The grid: which threadgroups a dispatch has, their shapes (edge threadgroups of a
//! `dispatchThreads` grid are partial) and the special registers of their threads.
//!
//! Threadgroups run in linear order, x fastest, then y, then z. A threadgroup's threads
//! are numbered `thread_index_in_threadgroup = lz*Sx*Sy + ly*Sx + lx` over its actual
//! size and split into SIMD-groups of 32 in that order; the last one may be partial.

use metalsim_isa::SpecialReg;
use metalsim_launch::Launch;

/// Lanes per SIMD-group.
pub(crate) const LANES: u32 = 32;

/// The shape of a dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// Threadgroups per grid in each dimension.
    pub groups: [u32; 3],
    /// Threads per grid in each dimension.
    pub threads: [u32; 3],
    /// Threads per threadgroup as dispatched.
    pub group_size: [u32; 3],
}

/// One threadgroup of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Its index in dispatch order.
    pub linear: u64,
    /// `threadgroup_position_in_grid`.
    pub pos: [u32; 3],
    /// `threads_per_threadgroup`: its actual size.
    pub size: [u32; 3],
    /// Its threads.
    pub threads: u32,
}

impl Shape {
    /// SIMD-groups of the threadgroup.
    pub fn simdgroups(&self) -> u32 {
        self.threads.div_ceil(LANES)
    }

    /// The lanes of SIMD-group `simd` that hold threads.
    pub fn lanes(&self, simd: u32) -> u32 {
        let n = self.threads.saturating_sub(simd * LANES).min(LANES);
        if n == LANES {
            u32::MAX
        } else {
            (1u32 << n) - 1
        }
    }

    /// `thread_position_in_threadgroup` of thread `t`.
    pub fn local(&self, t: u32) -> [u32; 3] {
        let [sx, sy, _] = self.size;
        [t % sx, (t / sx) % sy, t / (sx * sy)]
    }
}

impl Geometry {
    /// The geometry of a launch (sizes already validated as non-zero).
    pub fn new(launch: &Launch) -> Geometry {
        Geometry {
            groups: launch.threadgroups_per_grid(),
            threads: launch.threads_per_grid(),
            group_size: launch.threadgroup,
        }
    }

    /// Threadgroups in the grid.
    pub fn count(&self) -> u64 {
        self.groups.iter().map(|&g| g as u64).product()
    }

    /// Threads per dispatched threadgroup.
    pub fn group_threads(&self) -> u32 {
        self.group_size.iter().product()
    }

    /// The threadgroup at `linear` in dispatch order.
    pub fn shape(&self, linear: u64) -> Shape {
        let [gx, gy, _] = self.groups.map(|g| g as u64);
        let pos = [
            (linear % gx) as u32,
            ((linear / gx) % gy) as u32,
            (linear / (gx * gy)) as u32,
        ];
        let mut size = [0; 3];
        for d in 0..3 {
            let start = pos[d] as u64 * self.group_size[d] as u64;
            size[d] = (self.threads[d] as u64 - start.min(self.threads[d] as u64))
                .min(self.group_size[d] as u64) as u32;
        }
        Shape {
            linear,
            pos,
            size,
            threads: size.iter().product(),
        }
    }

    /// `thread_position_in_grid` of thread `t` of a threadgroup.
    pub fn thread_position(&self, shape: &Shape, t: u32) -> [u32; 3] {
        let l = shape.local(t);
        [0, 1, 2].map(|d| shape.pos[d] * self.group_size[d] + l[d])
    }

    /// The value of a special register in each lane of SIMD-group `simd`.
    pub fn special(&self, r: SpecialReg, shape: &Shape, simd: u32) -> [u32; 32] {
        let t0 = simd * LANES;
        fn per_lane(t0: u32, f: impl Fn(u32) -> u32) -> [u32; 32] {
            std::array::from_fn(|lane| f(t0 + lane as u32))
        }
        let uniform = |v: u32| [v; 32];
        let dispatch_threads = self.group_threads();
        use SpecialReg as S;
        match r {
            S::ThreadPositionInGridX => per_lane(t0, |t| self.thread_position(shape, t)[0]),
            S::ThreadPositionInGridY => per_lane(t0, |t| self.thread_position(shape, t)[1]),
            S::ThreadPositionInGridZ => per_lane(t0, |t| self.thread_position(shape, t)[2]),
            S::ThreadPositionInThreadgroupX => per_lane(t0, |t| shape.local(t)[0]),
            S::ThreadPositionInThreadgroupY => per_lane(t0, |t| shape.local(t)[1]),
            S::ThreadPositionInThreadgroupZ => per_lane(t0, |t| shape.local(t)[2]),
            S::ThreadIndexInThreadgroup => per_lane(t0, |t| t),
            S::ThreadgroupPositionInGridX => uniform(shape.pos[0]),
            S::ThreadgroupPositionInGridY => uniform(shape.pos[1]),
            S::ThreadgroupPositionInGridZ => uniform(shape.pos[2]),
            S::ThreadsPerGridX => uniform(self.threads[0]),
            S::ThreadsPerGridY => uniform(self.threads[1]),
            S::ThreadsPerGridZ => uniform(self.threads[2]),
            S::ThreadsPerThreadgroupX => uniform(shape.size[0]),
            S::ThreadsPerThreadgroupY => uniform(shape.size[1]),
            S::ThreadsPerThreadgroupZ => uniform(shape.size[2]),
            S::DispatchThreadsPerThreadgroupX => uniform(self.group_size[0]),
            S::DispatchThreadsPerThreadgroupY => uniform(self.group_size[1]),
            S::DispatchThreadsPerThreadgroupZ => uniform(self.group_size[2]),
            S::ThreadgroupsPerGridX => uniform(self.groups[0]),
            S::ThreadgroupsPerGridY => uniform(self.groups[1]),
            S::ThreadgroupsPerGridZ => uniform(self.groups[2]),
            S::ThreadExecutionWidth | S::ThreadsPerSimdgroup => uniform(LANES),
            S::ThreadIndexInSimdgroup => std::array::from_fn(|lane| lane as u32),
            S::SimdgroupIndexInThreadgroup => uniform(simd),
            S::SimdgroupsPerThreadgroup => uniform(shape.threads.div_ceil(LANES)),
            S::DispatchSimdgroupsPerThreadgroup => uniform(dispatch_threads.div_ceil(LANES)),
            S::ThreadIndexInQuadgroup => per_lane(t0, |t| t % 4),
            S::QuadgroupIndexInThreadgroup => per_lane(t0, |t| t / 4),
            S::QuadgroupsPerThreadgroup => uniform(shape.threads.div_ceil(4)),
            S::DispatchQuadgroupsPerThreadgroup => uniform(dispatch_threads.div_ceil(4)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_threadgroups_are_partial() {
        let g = Geometry {
            groups: [3, 2, 1],
            threads: [10, 5, 1],
            group_size: [4, 4, 1],
        };
        let s = g.shape(5);
        assert_eq!(s.pos, [2, 1, 0]);
        assert_eq!(s.size, [2, 1, 1]);
        assert_eq!(s.threads, 2);
        assert_eq!(s.lanes(0), 0b11);
        assert_eq!(g.thread_position(&s, 1), [9, 4, 0]);
        let x = g.special(SpecialReg::ThreadPositionInGridX, &s, 0);
        assert_eq!(&x[..2], &[8, 9]);
    }
}
