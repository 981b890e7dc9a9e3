//! Tallies of one run, shared by every virtual user on the thread.

use hdrhistogram::Histogram;
use tokio::time::Duration;

use crate::procfs::Process;

/// Error messages kept for the report; the rest are only counted.
const KEPT_ERRORS: usize = 5;

/// Failed requests: a count and the first few messages.
#[derive(Debug, Default)]
pub(crate) struct ErrorLog {
    pub(crate) count: u64,
    pub(crate) samples: Vec<String>,
}

impl ErrorLog {
    pub(crate) fn push(&mut self, message: impl Into<String>) {
        self.count += 1;
        if self.samples.len() < KEPT_ERRORS {
            self.samples.push(message.into());
        }
    }
}

#[derive(Debug)]
pub(crate) struct Recorder {
    /// Latency of measured requests, in nanoseconds.
    latency: Histogram<u64>,
    latency_sum_ns: u128,
    pub(crate) measured: u64,
    pub(crate) events: u64,
    pub(crate) full_checks: u64,
    pub(crate) errors: ErrorLog,
    /// Server memory probes: read the RSS once `measured` reaches each count.
    rss_probe: Option<Process>,
    rss_at: Vec<u64>,
    pub(crate) rss_readings: Vec<(u64, u64)>,
}

impl Recorder {
    pub(crate) fn new(rss_probe: Option<Process>, mut rss_at: Vec<u64>) -> Self {
        rss_at.sort_unstable();
        // From 1 ns to a minute at 3 significant digits: 0.1 % resolution at any latency.
        let latency = Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid histogram bounds");
        Self {
            latency,
            latency_sum_ns: 0,
            measured: 0,
            events: 0,
            full_checks: 0,
            errors: ErrorLog::default(),
            rss_probe,
            rss_at,
            rss_readings: Vec::new(),
        }
    }

    pub(crate) fn measured(&mut self, latency: Duration, events: u64) {
        let nanos = latency.as_nanos();
        self.latency.saturating_record(nanos.min(u128::from(u64::MAX)) as u64);
        self.latency_sum_ns += nanos;
        self.measured += 1;
        self.events += events;
        if self.rss_at.first() == Some(&self.measured) {
            self.rss_at.remove(0);
            if let Some(rss) = self.rss_probe.as_ref().and_then(|p| p.rss_kib().ok()) {
                self.rss_readings.push((self.measured, rss));
            }
        }
    }

    pub(crate) fn latency(&self) -> &Histogram<u64> {
        &self.latency
    }

    pub(crate) fn mean_latency(&self) -> Duration {
        match self.measured {
            0 => Duration::ZERO,
            n => Duration::from_nanos((self.latency_sum_ns / u128::from(n)) as u64),
        }
    }
}
