//! A bandwidth queue: a port that serves one request at a time, each occupying it for a
//! fixed (possibly fractional) number of cycles. Requests wait their turn, so a port's
//! bandwidth limits throughput and its backlog adds latency.

/// A first-come first-served port.
#[derive(Clone, Debug)]
pub(crate) struct Queue {
    /// Cycles each request occupies the port.
    cost: f64,
    /// When the port is next free.
    free_at: f64,
    /// Cycles the port was busy in all.
    pub busy: f64,
}

impl Queue {
    /// A port moving `bytes_per_request` at `bytes_per_cycle`.
    pub fn new(bytes_per_request: u64, bytes_per_cycle: f64) -> Queue {
        Queue::with_cost(bytes_per_request as f64 / bytes_per_cycle.max(f64::MIN_POSITIVE))
    }

    /// A port whose requests each take `cost` cycles.
    pub fn with_cost(cost: f64) -> Queue {
        Queue {
            cost,
            free_at: 0.0,
            busy: 0.0,
        }
    }

    /// Serves `n` requests arriving at `t`; returns the cycle the first one's service
    /// starts (the last ends `n` request times later).
    #[inline]
    pub fn serve_n(&mut self, t: u64, n: u32) -> u64 {
        self.serve_part(t, n as f64)
    }

    /// Serves `share` of one request (a part of its bytes, or several requests' worth)
    /// arriving at `t`; returns the cycle its service starts.
    #[inline]
    pub fn serve_part(&mut self, t: u64, share: f64) -> u64 {
        let start = self.free_at.max(t as f64);
        let work = self.cost * share;
        self.free_at = start + work;
        self.busy += work;
        start.ceil() as u64
    }

    /// Serves one request arriving at `t`; returns the cycle its service starts.
    #[inline]
    pub fn serve(&mut self, t: u64) -> u64 {
        self.serve_n(t, 1)
    }

    /// Cycles one request takes.
    pub fn cost(&self) -> f64 {
        self.cost
    }
}

/// A latency that grows with a port's recent throughput (a loaded-latency curve), for
/// ports whose requests queue in many banks and channels that a single first-come
/// first-served queue does not show: its extra latency is read from measured points at the
/// throughput of the last `window` cycles (an exponentially decayed average). Where a
/// second curve is given for traffic half written, the extra latency moves towards it
/// with the written share of the recent traffic (`min(1, 2 × share)`).
#[derive(Clone, Debug)]
pub(crate) struct LoadedLatency {
    /// `(bytes per cycle, extra cycles)` in ascending throughput.
    points: Vec<(f64, f64)>,
    /// The same with half the traffic written; empty: writes count as reads.
    mixed: Vec<(f64, f64)>,
    /// Bytes each read request moves.
    bytes: u64,
    /// The averaging time constant in cycles.
    window: f64,
    /// Bytes moved recently, decayed to `last`.
    recent: f64,
    /// Of them, bytes written.
    recent_written: f64,
    /// The cycle `recent` is decayed to.
    last: f64,
}

impl LoadedLatency {
    /// A curve of `(bytes per cycle, extra cycles)` points in ascending throughput, for
    /// read requests of `bytes`, averaged over `window` cycles; `mixed`, the curve with
    /// half the traffic written (empty: none).
    pub fn new(
        points: Vec<(f64, f64)>,
        mixed: Vec<(f64, f64)>,
        bytes: u64,
        window: f64,
    ) -> LoadedLatency {
        LoadedLatency {
            points,
            mixed,
            bytes,
            window: window.max(1.0),
            recent: 0.0,
            recent_written: 0.0,
            last: 0.0,
        }
    }

    /// Counts traffic at `t` that no latency waits on: `read` bytes read and `written`
    /// bytes written (a write-back, with what it merges).
    #[inline]
    pub fn record(&mut self, t: u64, read: u64, written: u64) {
        let t = t as f64;
        if t > self.last {
            let decay = (-(t - self.last) / self.window).exp();
            self.recent *= decay;
            self.recent_written *= decay;
            self.last = t;
        }
        self.recent += (read + written) as f64;
        self.recent_written += written as f64;
    }

    /// Counts a read request at `t`: the cycles its latency grows by at the throughput
    /// so far.
    #[inline]
    pub fn request(&mut self, t: u64) -> u64 {
        self.record(t, self.bytes, 0);
        let rate = self.recent / self.window;
        let read = extra(&self.points, rate);
        if self.mixed.is_empty() || self.recent_written <= 0.0 {
            return read.round() as u64;
        }
        let towards_mixed = (2.0 * self.recent_written / self.recent).min(1.0);
        (read + towards_mixed * (extra(&self.mixed, rate) - read)).round() as u64
    }
}

/// The extra latency at `rate` bytes per cycle on a curve of `(rate, extra)` points:
/// linear between the points, none below the first point's throughput scaled from zero,
/// the last point's beyond it.
fn extra(points: &[(f64, f64)], rate: f64) -> f64 {
    let mut below = (0.0, 0.0);
    for &(x, y) in points {
        if rate <= x {
            let span = x - below.0;
            let f = if span > 0.0 {
                (rate - below.0) / span
            } else {
                1.0
            };
            return below.1 + f * (y - below.1);
        }
        below = (x, y);
    }
    below.1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loaded_latency_follows_the_curve_of_recent_throughput() {
        let points = vec![(10.0, 50.0), (20.0, 250.0)];
        // A lone request: next to no extra latency.
        let mut l = LoadedLatency::new(points.clone(), Vec::new(), 128, 1000.0);
        assert!(l.request(1_000_000) <= 1);
        // A steady 15 bytes per cycle: half-way between the points, once the average settles.
        let mut l = LoadedLatency::new(points.clone(), Vec::new(), 15, 1000.0);
        let mut extra = 0;
        for t in 0..20_000 {
            extra = l.request(t);
        }
        assert!((145..=155).contains(&extra), "{extra}");
        // Far above the last point: held at it.
        let mut l = LoadedLatency::new(points, Vec::new(), 1000, 1000.0);
        for t in 0..20_000 {
            extra = l.request(t);
        }
        assert_eq!(extra, 250);
    }

    #[test]
    fn written_traffic_moves_the_latency_towards_the_mixed_curve() {
        let reads = vec![(10.0, 50.0), (20.0, 250.0)];
        let mixed = vec![(10.0, 150.0), (20.0, 650.0)];
        // 15 bytes per cycle, every `every`-th request a write: the extra latency once the
        // average settles.
        let settle = |every: u64| {
            let mut l = LoadedLatency::new(reads.clone(), mixed.clone(), 15, 1000.0);
            let mut extra = 0;
            for t in 0..40_000u64 {
                if t % every == every - 1 {
                    l.record(t, 0, 15);
                } else {
                    extra = l.request(t);
                }
            }
            extra
        };
        // Reads alone follow the read curve, even with a mixed curve given.
        let mut l = LoadedLatency::new(reads.clone(), mixed.clone(), 15, 1000.0);
        let mut alone = 0;
        for t in 0..20_000 {
            alone = l.request(t);
        }
        assert!((145..=155).contains(&alone), "{alone}");
        // Half written: on the mixed curve (400 at 15 bytes per cycle).
        assert!((390..=410).contains(&settle(2)), "{}", settle(2));
        // A quarter written: half-way between the curves (275).
        assert!((265..=285).contains(&settle(4)), "{}", settle(4));
    }

    #[test]
    fn back_to_back_requests_queue_at_the_rate() {
        let mut q = Queue::new(128, 64.0);
        assert_eq!(q.serve(10), 10);
        assert_eq!(q.serve(10), 12);
        assert_eq!(q.serve(10), 14);
        assert_eq!(q.serve(100), 100);
        assert_eq!(q.serve_n(100, 3), 102);
        assert_eq!(q.serve(100), 108);
        assert_eq!(q.busy, 16.0);
    }
}
