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
        let start = self.free_at.max(t as f64);
        let work = self.cost * n as f64;
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

#[cfg(test)]
mod tests {
    use super::*;

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
