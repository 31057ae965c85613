//! What the views show, computed once from a [`Trace`]: series over the time bins, the
//! source split into lines, lookups from lines to their costs and instructions, and the ISA
//! as rows grouped by block.
//!
//! Everything here tolerates odd traces: no bins, zero cycles, no sources, costs for lines
//! a file does not have, instructions without a source line.

use std::collections::BTreeMap;

use metalsim_traces::{Bin, LevelTraffic, MemoryTraffic, Trace};

use crate::format::ratio;

/// A level of the memory hierarchy whose bandwidth the views chart against its peak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// The per-core L1 caches together.
    L1,
    /// The GPU L2.
    L2,
    /// The system-level cache.
    Slc,
    /// DRAM.
    Dram,
}

impl Level {
    /// Every level, nearest the cores first.
    pub const ALL: [Level; 4] = [Level::L1, Level::L2, Level::Slc, Level::Dram];

    /// Its short name.
    pub fn name(self) -> &'static str {
        match self {
            Level::L1 => "L1",
            Level::L2 => "L2",
            Level::Slc => "SLC",
            Level::Dram => "DRAM",
        }
    }

    /// Its traffic in `memory`.
    pub fn traffic(self, memory: &MemoryTraffic) -> &LevelTraffic {
        match self {
            Level::L1 => &memory.l1,
            Level::L2 => &memory.l2,
            Level::Slc => &memory.slc,
            Level::Dram => &memory.dram,
        }
    }

    /// The model's peak bandwidth of this level in GB/s (0 when the trace has none).
    pub fn peak(self, trace: &Trace) -> f64 {
        let p = &trace.model.peaks;
        match self {
            Level::L1 => p.l1_gb_per_s,
            Level::L2 => p.l2_gb_per_s,
            Level::Slc => p.slc_gb_per_s,
            Level::Dram => p.dram_gb_per_s,
        }
    }
}

/// Per-bin series, each as long as the trace has bins.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// First cycle of each bin.
    pub start: Vec<u64>,
    /// Cycles each bin covers (the last may be shorter).
    pub cycles: Vec<u64>,
    /// Achieved occupancy: resident SIMD-groups over all cores' maximum, 0 to 1.
    pub occupancy: Vec<f64>,
    /// Active lanes / (32 × SIMD-group instructions), 0 to 1.
    pub simd_efficiency: Vec<f64>,
    /// Issued instructions / issue slots of all cores, 0 to 1.
    pub issue: Vec<f64>,
    /// Bandwidth per [`Level::ALL`] entry, GB/s of modeled time.
    pub bandwidth: [Vec<f64>; 4],
    /// Per core, issue-slot utilisation per bin, 0 to 1.
    pub core_issue: Vec<Vec<f64>>,
    /// Per core, resident SIMD-groups over the core's maximum per bin, 0 to 1.
    pub core_residency: Vec<Vec<f64>>,
}

impl Series {
    /// Bins in the series.
    pub fn len(&self) -> usize {
        self.start.len()
    }

    /// Whether the trace has no bins.
    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    fn from_trace(trace: &Trace) -> Series {
        let counters = &trace.profile.counters;
        let cores = counters.cores.max(trace.model.cores) as usize;
        let max_per_core = trace.model.max_simdgroups_per_core as f64;
        let schedulers = trace
            .profile
            .schedulers_per_core
            .max(trace.model.schedulers_per_core) as f64
            * trace.model.issue_width.max(1) as f64;
        let end = trace.report.cycles;
        let mut s = Series {
            core_issue: vec![Vec::new(); cores],
            core_residency: vec![Vec::new(); cores],
            ..Series::default()
        };
        for bin in &counters.bins {
            let nominal = counters.bin_cycles.max(1);
            let cycles = if end > bin.start {
                nominal.min(end - bin.start)
            } else {
                nominal
            };
            s.start.push(bin.start);
            s.cycles.push(cycles);
            s.occupancy
                .push(ratio(bin.resident_simdgroups, cores as f64 * max_per_core));
            s.simd_efficiency.push(bin.simd_efficiency());
            s.issue.push(ratio(
                bin.simd_instructions() as f64,
                cycles as f64 * cores as f64 * schedulers,
            ));
            for (i, level) in Level::ALL.iter().enumerate() {
                let bytes = level.traffic(&bin.memory).bytes() as f64;
                s.bandwidth[i].push(gb_per_s(bytes, cycles, trace.model.clock_mhz));
            }
            for core in 0..cores {
                s.core_issue[core].push(core_issue(bin, core, cycles as f64 * schedulers));
                let resident = bin.core_resident_simdgroups.get(core).copied();
                s.core_residency[core].push(ratio(resident.unwrap_or(0.0), max_per_core));
            }
        }
        s
    }
}

fn core_issue(bin: &Bin, core: usize, slots: f64) -> f64 {
    ratio(
        bin.core_issued.get(core).copied().unwrap_or(0) as f64,
        slots,
    )
}

/// `bytes` moved in `cycles` at `clock_mhz`, in GB/s; 0 when there is no time.
pub fn gb_per_s(bytes: f64, cycles: u64, clock_mhz: f64) -> f64 {
    // bytes / (cycles / (MHz × 10^6)) / 10^9 = bytes × MHz / (cycles × 1000)
    ratio(bytes * clock_mhz, cycles as f64 * 1000.0)
}

/// One row of the ISA listing.
#[derive(Clone, Debug, PartialEq)]
pub enum IsaRow {
    /// A block's label; `reconvergence` when its first instruction is a reconvergence
    /// point.
    Block {
        /// The block's name (`bb3`).
        name: String,
        /// Whether lanes reconverge at its start.
        reconvergence: bool,
    },
    /// An instruction: its index in the profile's `instructions`.
    Inst(usize),
    /// A line of the ISA text, for traces without per-instruction costs.
    Text(String),
}

/// What the views show, derived once from the trace.
#[derive(Clone, Debug, Default)]
pub struct Digest {
    /// Per-bin series.
    pub series: Series,
    /// Each source file's lines.
    pub files: Vec<Vec<String>>,
    /// `(file, line)` to its index in the profile's `lines`.
    pub line_costs: BTreeMap<(u32, u32), usize>,
    /// The largest cost (issue + stall cycles) of any line.
    pub max_line_cost: u64,
    /// Indices into the profile's `lines`, costliest first.
    pub lines_by_cost: Vec<usize>,
    /// The ISA listing.
    pub isa_rows: Vec<IsaRow>,
    /// The largest issue + stall cycles of any instruction.
    pub max_inst_cost: u64,
    /// Run-wide bandwidth per [`Level::ALL`] entry, GB/s.
    pub bandwidth: [f64; 4],
    /// For each step of the recording, its row in `isa_rows` (when the pc is known).
    pub step_rows: Vec<Option<usize>>,
}

impl Digest {
    /// Computes everything the views need from `trace`.
    pub fn new(trace: &Trace) -> Digest {
        let profile = &trace.profile;
        let files = trace
            .sources
            .iter()
            .map(|f| f.text.lines().map(|l| l.replace('\t', "    ")).collect())
            .collect();
        let line_costs = profile
            .lines
            .iter()
            .enumerate()
            .map(|(i, l)| ((l.file, l.line), i))
            .collect();
        let mut lines_by_cost: Vec<usize> = (0..profile.lines.len()).collect();
        lines_by_cost.sort_by_key(|&i| {
            let l = &profile.lines[i];
            (std::cmp::Reverse(l.cost_cycles()), l.file, l.line)
        });
        let max_line_cost = profile
            .lines
            .iter()
            .map(|l| l.cost_cycles())
            .max()
            .unwrap_or(0);
        let max_inst_cost = profile
            .instructions
            .iter()
            .map(|i| i.issue_cycles + i.stalls.iter().sum::<u64>())
            .max()
            .unwrap_or(0);
        let isa_rows = isa_rows(trace);
        let pc_row: BTreeMap<u32, usize> = isa_rows
            .iter()
            .enumerate()
            .filter_map(|(row, r)| match r {
                IsaRow::Inst(i) => Some((profile.instructions[*i].pc, row)),
                _ => None,
            })
            .collect();
        let step_rows = trace
            .recording
            .as_ref()
            .map(|r| r.steps.iter().map(|s| pc_row.get(&s.pc).copied()).collect())
            .unwrap_or_default();
        let mut bandwidth = [0.0; 4];
        for (i, level) in Level::ALL.iter().enumerate() {
            let bytes = level.traffic(&profile.memory).bytes() as f64;
            bandwidth[i] = gb_per_s(bytes, trace.report.cycles, trace.model.clock_mhz);
        }
        Digest {
            series: Series::from_trace(trace),
            files,
            line_costs,
            max_line_cost,
            lines_by_cost,
            isa_rows,
            max_inst_cost,
            bandwidth,
            step_rows,
        }
    }

    /// The text of `line` (1-based) of `file`, if the trace has it.
    pub fn source_line(&self, file: u32, line: u32) -> Option<&str> {
        let lines = self.files.get(file as usize)?;
        lines
            .get((line as usize).checked_sub(1)?)
            .map(String::as_str)
    }

    /// The rows of the instructions that came from `(file, line)`.
    pub fn rows_of_line<'a>(
        &'a self,
        trace: &'a Trace,
        file: u32,
        line: u32,
    ) -> impl Iterator<Item = usize> + 'a {
        self.isa_rows
            .iter()
            .enumerate()
            .filter_map(move |(row, r)| match r {
                IsaRow::Inst(i) => {
                    let inst = &trace.profile.instructions[*i];
                    (inst.file == file && inst.line == line).then_some(row)
                }
                _ => None,
            })
    }
}

/// The instructions grouped under block labels, or the ISA text when the trace has no
/// per-instruction costs.
fn isa_rows(trace: &Trace) -> Vec<IsaRow> {
    let instructions = &trace.profile.instructions;
    if instructions.is_empty() {
        return trace
            .isa
            .lines()
            .map(|l| IsaRow::Text(l.replace('\t', "    ")))
            .collect();
    }
    let mut rows = Vec::with_capacity(instructions.len() * 5 / 4);
    let mut block: Option<&str> = None;
    for (i, inst) in instructions.iter().enumerate() {
        if block != Some(inst.block.as_str()) {
            rows.push(IsaRow::Block {
                name: inst.block.clone(),
                reconvergence: inst.reconvergence,
            });
            block = Some(inst.block.as_str());
        }
        rows.push(IsaRow::Inst(i));
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;

    fn check(trace: &Trace, expect: impl Fn(&Digest)) {
        expect(&Digest::new(trace));
    }

    #[test]
    fn series_follow_the_bins() {
        check(&fixture::trace(), |d| {
            assert_eq!(d.series.len(), fixture::BINS);
            assert!(d.series.occupancy.iter().all(|v| (0.0..=1.0).contains(v)));
            assert!(d.series.bandwidth[3].iter().any(|v| *v > 0.0));
            assert_eq!(d.series.core_issue.len(), 4);
        });
    }

    #[test]
    fn an_empty_trace_digests_to_nothing() {
        check(&fixture::empty(), |d| {
            assert!(d.series.is_empty());
            assert!(d.isa_rows.is_empty());
            assert_eq!(d.source_line(0, 1), None);
            assert_eq!(d.bandwidth, [0.0; 4]);
        });
    }

    #[test]
    fn lines_sort_by_cost_and_map_to_their_instructions() {
        let t = fixture::trace();
        check(&t, |d| {
            let first = &t.profile.lines[d.lines_by_cost[0]];
            assert_eq!(first.cost_cycles(), d.max_line_cost);
            let rows: Vec<usize> = d.rows_of_line(&t, first.file, first.line).collect();
            assert!(!rows.is_empty());
            assert_eq!(d.source_line(0, 0), None);
            assert_eq!(d.source_line(0, 10_000), None);
        });
    }

    #[test]
    fn blocks_head_their_instructions() {
        check(&fixture::trace(), |d| {
            assert!(matches!(&d.isa_rows[0], IsaRow::Block { name, .. } if name == "bb0"));
            let reconverging = d
                .isa_rows
                .iter()
                .filter(|r| {
                    matches!(
                        r,
                        IsaRow::Block {
                            reconvergence: true,
                            ..
                        }
                    )
                })
                .count();
            assert_eq!(reconverging, 1);
        });
    }

    #[test]
    fn zero_cycles_give_zero_bandwidth() {
        assert_eq!(gb_per_s(1e6, 0, 1000.0), 0.0);
        // 10^6 bytes in 1000 cycles at 1 GHz (1 us) is 10^12 B/s.
        assert_eq!(gb_per_s(1e6, 1000, 1000.0), 1000.0);
    }
}
