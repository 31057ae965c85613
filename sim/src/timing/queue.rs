//! A bandwidth queue: a port that serves one request at a time, each occupying it for a
//! fixed (possibly fractional) number of cycles.

/// A first-come first-served port with a fixed service time per request.
#[derive(Clone, Debug)]
pub(crate) struct Queue {
    /// Cycles each request occupies the port.
    cost: f64,
    /// When the port is next free.
    free_at: f64,
}

impl Queue {
    /// A port moving `bytes_per_request` at `bytes_per_cycle`.
    pub fn new(bytes_per_request: u64, bytes_per_cycle: f64) -> Queue {
        Queue {
            cost: bytes_per_request as f64 / bytes_per_cycle.max(f64::MIN_POSITIVE),
            free_at: 0.0,
        }
    }

    /// Serves a request arriving at `t`; returns the cycle its service starts.
    #[inline]
    pub fn serve(&mut self, t: u64) -> u64 {
        let start = self.free_at.max(t as f64);
        self.free_at = start + self.cost;
        start.ceil() as u64
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
    }
}
