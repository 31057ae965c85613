//! The reconvergence stack of a SIMD-group: which lanes run, from where, and where they
//! wait for the others.
//!
//! Each entry is `(pc, rpc, mask)`: its lanes run from `pc` until they reach `rpc` (the
//! reconvergence point, an immediate post-dominator, or [`EXIT`]). Only the top entry
//! runs. On a divergent branch at block B with `r = ipdom(B)`: if the top already
//! reconverges at `r` it is popped (the entry below waits at `r` for its lanes), otherwise
//! it becomes the waiting entry (`pc = r`); then an entry is pushed for each target other
//! than `r` (else first, then on top, so the taken side runs first). A target equal to `r`
//! needs no entry: its lanes wait in the entry below. Whenever the top reaches its `rpc`
//! it is popped. Lanes that return leave every entry.
//!
//! [`jump`](Reconvergence::jump) and [`diverge`](Reconvergence::diverge) also say which
//! groups of lanes reached a divergent branch's reconvergence point apart ([`Joined`]):
//! the lanes of a target equal to `r` as the branch splits, and each pushed entry as it
//! is popped there. A GPU that runs an instruction for each such arrival (NVIDIA's
//! `BSYNC`) is charged for them where its model says so.

use crate::program::EXIT;

/// A set of lanes, bit `i` for lane `i`.
pub(crate) type LaneMask = u32;

/// One stack entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Entry {
    /// Where its lanes run (or wait) next.
    pub pc: u32,
    /// Where they stop to wait for the entry below, or [`EXIT`].
    pub rpc: u32,
    /// Its lanes.
    pub mask: LaneMask,
}

/// The groups of lanes that reached the reconvergence point of a divergent branch
/// apart, in one step, and their lanes in all.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub(crate) struct Joined {
    /// Groups that arrived.
    pub groups: u32,
    /// Their lanes, summed over the groups.
    pub lanes: u32,
}

impl Joined {
    #[inline(always)]
    fn add(&mut self, mask: LaneMask) {
        self.groups += 1;
        self.lanes += mask.count_ones();
    }
}

/// The reconvergence stack.
#[derive(Clone, Debug, Default)]
pub(crate) struct Reconvergence {
    entries: Vec<Entry>,
}

impl Reconvergence {
    /// Starts `mask`'s lanes at pc 0.
    pub fn reset(&mut self, mask: LaneMask) {
        self.entries.clear();
        if mask != 0 {
            self.entries.push(Entry {
                pc: 0,
                rpc: EXIT,
                mask,
            });
        }
    }

    /// The pc and lanes that run next, or `None` once every lane has finished.
    #[inline(always)]
    pub fn top(&self) -> Option<(u32, LaneMask)> {
        self.entries.last().map(|e| (e.pc, e.mask))
    }

    /// The lanes that have not finished (active or waiting in some entry).
    pub fn live(&self) -> LaneMask {
        self.entries.iter().fold(0, |m, e| m | e.mask)
    }

    /// Every lane has finished.
    pub fn is_done(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, bottom first.
    #[cfg(test)]
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Moves the top to the next instruction.
    #[inline(always)]
    pub fn advance(&mut self) {
        if let Some(e) = self.entries.last_mut() {
            e.pc += 1;
        }
    }

    /// All lanes of the top take a branch to `target`; what arrived at a reconvergence
    /// point.
    #[inline]
    pub fn jump(&mut self, target: u32) -> Joined {
        if let Some(e) = self.entries.last_mut() {
            e.pc = target;
        }
        let mut joined = Joined::default();
        self.pop_reconverged(&mut joined);
        joined
    }

    /// The top's lanes split between `then_` and `else_` (targets with their lanes, both
    /// non-empty), reconverging at `rpc`; what arrived at a reconvergence point (the
    /// lanes of a target that is `rpc`).
    pub fn diverge(&mut self, rpc: u32, then_: (u32, LaneMask), else_: (u32, LaneMask)) -> Joined {
        let mut joined = Joined::default();
        let Some(top) = self.entries.last_mut() else {
            return joined;
        };
        if top.rpc == rpc {
            self.entries.pop();
        } else {
            top.pc = rpc;
        }
        for (target, mask) in [else_, then_] {
            if mask == 0 {
                continue;
            }
            if target == rpc {
                joined.add(mask);
            } else {
                self.entries.push(Entry {
                    pc: target,
                    rpc,
                    mask,
                });
            }
        }
        self.pop_reconverged(&mut joined);
        joined
    }

    /// `lanes` finish: they leave every entry, and emptied entries go.
    pub fn exit(&mut self, lanes: LaneMask) {
        for e in &mut self.entries {
            e.mask &= !lanes;
        }
        self.entries.retain(|e| e.mask != 0);
        // Lanes that finish reach no reconvergence point.
        self.pop_reconverged(&mut Joined::default());
    }

    /// Pops the entries that reached their reconvergence point, each a group arriving
    /// there, into `joined`.
    #[inline(always)]
    fn pop_reconverged(&mut self, joined: &mut Joined) {
        while let Some(e) = self.entries.last() {
            if e.pc == e.rpc {
                joined.add(e.mask);
                self.entries.pop();
            } else {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_else_runs_then_first_and_reconverges() {
        let mut s = Reconvergence::default();
        s.reset(0b1111);
        assert_eq!(s.diverge(30, (10, 0b0011), (20, 0b1100)), Joined::default());
        assert_eq!(s.top(), Some((10, 0b0011)));
        let one_group_of_two = Joined {
            groups: 1,
            lanes: 2,
        };
        assert_eq!(s.jump(30), one_group_of_two);
        assert_eq!(s.top(), Some((20, 0b1100)));
        assert_eq!(s.jump(30), one_group_of_two);
        assert_eq!(s.top(), Some((30, 0b1111)));
        assert_eq!(s.entries().len(), 1);
    }

    #[test]
    fn loop_exit_waits_below_without_growing_the_stack() {
        let mut s = Reconvergence::default();
        s.reset(0b111);
        // Header at 5: lanes 0 and 1 stay in the loop (body 6), lane 2 leaves to 9.
        let one_lane = Joined {
            groups: 1,
            lanes: 1,
        };
        // Each group leaving reaches the exit apart, the last by a uniform jump.
        assert_eq!(s.diverge(9, (6, 0b011), (9, 0b100)), one_lane);
        assert_eq!(s.top(), Some((6, 0b011)));
        assert_eq!(s.jump(5), Joined::default());
        assert_eq!(s.diverge(9, (6, 0b001), (9, 0b010)), one_lane);
        assert_eq!(s.entries().len(), 2);
        s.jump(5);
        assert_eq!(s.jump(9), one_lane);
        assert_eq!(s.top(), Some((9, 0b111)));
    }

    #[test]
    fn returning_lanes_leave_every_entry() {
        let mut s = Reconvergence::default();
        s.reset(0b11);
        // Lanes that return reach no reconvergence point.
        assert_eq!(s.diverge(EXIT, (4, 0b01), (8, 0b10)), Joined::default());
        assert_eq!(s.top(), Some((4, 0b01)));
        s.exit(0b01);
        assert_eq!(s.top(), Some((8, 0b10)));
        s.exit(0b10);
        assert!(s.is_done());
    }
}
