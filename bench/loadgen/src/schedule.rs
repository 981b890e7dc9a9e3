//! When a virtual user may send, and which of its requests are measured.

use std::cell::Cell;

use tokio::time::{Duration, Instant};

/// Warmup first, then a measured window that ends at a time or after a number of requests.
#[derive(Debug)]
pub(crate) struct Schedule {
    start: Instant,
    pub(crate) measure_from: Instant,
    /// The end of the measured window, or the give-up time of a counted run.
    pub(crate) until: Instant,
    /// Measured requests still to send, for a counted run.
    tickets: Option<Cell<u64>>,
}

/// When a request was sent. A counted run measures the requests it sends after the warmup; a
/// timed run measures the answers that arrive inside its window, whenever they were sent, so
/// slow servers are measured too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Warmup,
    Measured,
}

/// Everything of the first second is validated in full: faults show up early, and loudly.
const FULL_CHECK_PERIOD: Duration = Duration::from_secs(1);

impl Schedule {
    /// A timed run: `warmup`, then `duration` measured.
    pub(crate) fn timed(start: Instant, warmup: Duration, duration: Duration) -> Self {
        let measure_from = start + warmup;
        Self { start, measure_from, until: measure_from + duration, tickets: None }
    }

    /// A counted run: `warmup`, then `requests` measured, giving up after `timeout`.
    pub(crate) fn counted(start: Instant, warmup: Duration, requests: u64, timeout: Duration) -> Self {
        let measure_from = start + warmup;
        Self { start, measure_from, until: measure_from + timeout, tickets: Some(Cell::new(requests)) }
    }

    /// May a request start `now`, and in which phase? `None` means the user is done.
    pub(crate) fn claim(&self, now: Instant) -> Option<Phase> {
        if now >= self.until {
            return None;
        }
        if now < self.measure_from {
            return Some(Phase::Warmup);
        }
        match &self.tickets {
            None => Some(Phase::Measured),
            Some(left) if left.get() > 0 => {
                left.set(left.get() - 1);
                Some(Phase::Measured)
            }
            Some(_) => None,
        }
    }

    /// Does a request sent in `phase` that finished at `finished` count?
    pub(crate) fn counts(&self, phase: Phase, finished: Instant) -> bool {
        match self.tickets {
            Some(_) => phase == Phase::Measured,
            None => self.measure_from <= finished && finished < self.until,
        }
    }

    /// Measured requests a counted run did not get to send (0 for a timed run).
    pub(crate) fn unsent(&self) -> u64 {
        self.tickets.as_ref().map_or(0, Cell::get)
    }

    /// No request may start any more.
    pub(crate) fn is_over(&self, now: Instant) -> bool {
        now >= self.until || self.tickets.as_ref().is_some_and(|left| left.get() == 0)
    }

    pub(crate) fn is_counted(&self) -> bool {
        self.tickets.is_some()
    }

    pub(crate) fn in_full_check_period(&self, now: Instant) -> bool {
        now < self.start + FULL_CHECK_PERIOD
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_run_warms_up_then_measures_then_stops() {
        let t0 = Instant::now();
        let schedule = Schedule::timed(t0, Duration::from_secs(1), Duration::from_secs(2));
        assert_eq!(schedule.claim(t0), Some(Phase::Warmup));
        assert_eq!(schedule.claim(t0 + Duration::from_millis(1500)), Some(Phase::Measured));
        assert_eq!(schedule.claim(t0 + Duration::from_secs(3)), None);
        assert!(!schedule.counts(Phase::Measured, t0 + Duration::from_secs(4)));
        // A slow answer to a warmup request still counts when it arrives inside the window.
        assert!(schedule.counts(Phase::Warmup, t0 + Duration::from_millis(1500)));
    }

    #[test]
    fn a_counted_run_hands_out_exactly_its_tickets() {
        let t0 = Instant::now();
        let schedule = Schedule::counted(t0, Duration::ZERO, 2, Duration::from_secs(60));
        assert_eq!(schedule.claim(t0), Some(Phase::Measured));
        assert_eq!(schedule.claim(t0), Some(Phase::Measured));
        assert_eq!(schedule.claim(t0), None);
        assert_eq!(schedule.unsent(), 0);
    }
}
