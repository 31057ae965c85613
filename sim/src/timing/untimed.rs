//! The untimed scheduler: functional results only, as fast as possible.

use super::{Timing, TimingReport};
use crate::machine::{Machine, Status};

/// Threadgroups one at a time in dispatch order; within one, each SIMD-group in turn runs
/// until it waits at a barrier or finishes, until all have finished.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Untimed;

impl Timing for Untimed {
    fn run(&mut self, m: &mut Machine) -> TimingReport {
        while let Some(id) = m.start_next() {
            let n = m.group(id).simdgroups.len();
            loop {
                let mut all_done = true;
                for sg in 0..n {
                    if m.status(id, sg) == Status::Ready
                        && let Err(fault) = m.run_until_blocked(id, sg)
                    {
                        return TimingReport {
                            fault: Some(*fault),
                            ..TimingReport::default()
                        };
                    }
                    all_done &= m.status(id, sg) == Status::Done;
                }
                if all_done {
                    break;
                }
            }
            m.retire(id);
        }
        TimingReport::default()
    }
}
