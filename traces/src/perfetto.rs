//! A trace as Chrome trace-event JSON, which ui.perfetto.dev and chrome://tracing open:
//! one track per GPU core with a slice per threadgroup resident on it, and counter tracks
//! over time for occupancy, SIMD efficiency and bandwidth per memory level.
//!
//! Trace-event times are microseconds; the modeled cycles are converted at the model's
//! clock, so the timeline shows modeled time.

use serde_json::{Value, json};

use crate::trace::Trace;

/// The process id every event carries: the GPU is one process, its cores its threads.
const GPU_PID: u32 = 1;

/// The thread id of the counter tracks' owner (cores are 1 and up).
const COUNTER_TID: u32 = 0;

/// The trace as trace-event JSON (`{"traceEvents": [...], "displayTimeUnit": "ns"}`).
pub fn perfetto_json(trace: &Trace) -> String {
    let us_per_cycle = if trace.model.clock_mhz > 0.0 {
        1.0 / trace.model.clock_mhz
    } else {
        1.0
    };
    let mut events = Vec::new();
    events.push(json!({
        "name": "process_name", "ph": "M", "pid": GPU_PID,
        "args": {"name": format!("{} on {}", trace.report.kernel, display_name(trace))},
    }));
    events.push(json!({
        "name": "thread_name", "ph": "M", "pid": GPU_PID, "tid": COUNTER_TID,
        "args": {"name": "counters"},
    }));
    let cores = trace.model.cores.max(trace.profile.counters.cores);
    for core in 0..cores {
        let tid = core + 1;
        events.push(json!({
            "name": "thread_name", "ph": "M", "pid": GPU_PID, "tid": tid,
            "args": {"name": format!("core {core}")},
        }));
        events.push(json!({
            "name": "thread_sort_index", "ph": "M", "pid": GPU_PID, "tid": tid,
            "args": {"sort_index": tid},
        }));
    }
    for span in &trace.profile.threadgroup_spans {
        let [x, y, z] = span.position;
        events.push(json!({
            "name": format!("threadgroup ({x}, {y}, {z})"),
            "cat": "threadgroup",
            "ph": "X",
            "pid": GPU_PID,
            "tid": span.core + 1,
            "ts": span.start as f64 * us_per_cycle,
            "dur": span.end.saturating_sub(span.start) as f64 * us_per_cycle,
            "args": {"position": [x, y, z], "core": span.core, "start_cycle": span.start, "end_cycle": span.end},
        }));
    }
    counters(trace, us_per_cycle, &mut events);
    let doc = json!({
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "kernel": trace.report.kernel,
            "model": trace.model.name,
            "cycles": trace.report.cycles,
            "clock_mhz": trace.model.clock_mhz,
            "threadgroups_not_shown": trace.profile.threadgroup_spans_dropped,
        },
    });
    doc.to_string()
}

fn display_name(trace: &Trace) -> &str {
    if trace.model.display_name.is_empty() {
        &trace.model.name
    } else {
        &trace.model.display_name
    }
}

/// One counter event per bin for each counter track.
fn counters(trace: &Trace, us_per_cycle: f64, events: &mut Vec<Value>) {
    let c = &trace.profile.counters;
    let max_simdgroups =
        f64::from(trace.model.max_simdgroups_per_core) * f64::from(trace.model.cores.max(1));
    for (i, bin) in c.bins.iter().enumerate() {
        let ts = bin.start as f64 * us_per_cycle;
        let len = bin_cycles(trace, i);
        // Bytes per bin over the bin's modeled seconds, in GB/s.
        let gbps = |bytes: u64| {
            if len == 0 {
                0.0
            } else {
                bytes as f64 / (len as f64 * us_per_cycle * 1e3)
            }
        };
        let occupancy = if max_simdgroups > 0.0 {
            bin.resident_simdgroups / max_simdgroups * 100.0
        } else {
            0.0
        };
        let counter = |name: &str, args: Value| json!({"name": name, "ph": "C", "pid": GPU_PID, "tid": COUNTER_TID, "ts": ts, "args": args});
        events.push(counter("occupancy (%)", json!({"achieved": occupancy})));
        events.push(counter(
            "resident",
            json!({"SIMD-groups": bin.resident_simdgroups, "threadgroups": bin.resident_threadgroups}),
        ));
        events.push(counter(
            "SIMD efficiency (%)",
            json!({"active lanes": bin.simd_efficiency() * 100.0}),
        ));
        let m = &bin.memory;
        events.push(counter(
            "bandwidth (GB/s)",
            json!({
                "L1": gbps(m.l1.bytes()),
                "L2": gbps(m.l2.bytes()),
                "SLC": gbps(m.slc.bytes()),
                "DRAM": gbps(m.dram.bytes()),
            }),
        ));
    }
}

/// The cycles bin `i` covers (the last one ends with the run).
pub(crate) fn bin_cycles(trace: &Trace, i: usize) -> u64 {
    let c = &trace.profile.counters;
    let start = c.bins[i].start;
    let end = match c.bins.get(i + 1) {
        Some(next) => next.start,
        None => (start + c.bin_cycles).min(trace.report.cycles.max(start + 1)),
    };
    end.saturating_sub(start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_trace::sample_trace;

    #[test]
    fn has_a_track_per_core_slices_and_counters() {
        let t = sample_trace();
        let v: Value = serde_json::from_str(&perfetto_json(&t)).unwrap();
        let events = v["traceEvents"].as_array().unwrap();
        let threads: Vec<&str> = events
            .iter()
            .filter(|e| e["name"] == "thread_name")
            .map(|e| e["args"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(threads, ["counters", "core 0", "core 1"]);
        let slices: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(slices.len(), t.profile.threadgroup_spans.len());
        // Core 1 at 1000 MHz: cycle 100 is 0.1 us.
        assert_eq!(slices[1]["tid"], 2);
        assert_eq!(slices[1]["ts"], 0.1);
        let bandwidth: Vec<&Value> = events
            .iter()
            .filter(|e| e["ph"] == "C" && e["name"] == "bandwidth (GB/s)")
            .collect();
        assert_eq!(bandwidth.len(), t.profile.counters.bins.len());
        // 1000 DRAM bytes in 100 cycles of 1 ns: 10 GB/s.
        assert_eq!(bandwidth[0]["args"]["DRAM"], 10.0);
    }
}
