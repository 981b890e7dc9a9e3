//! What a run reports: one human line and one JSON line, which the `report` command reads back.

use serde::{Deserialize, Serialize};

/// The outcome of one loadgen run, tagged by mode in JSON (`"mode":"rps"` ...).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "kebab-case")]
pub(crate) enum RunSummary {
    Rps(LoadSummary),
    Stream(LoadSummary),
    IdleSse(IdleSummary),
}

/// A closed-loop run (`rps` or `stream`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LoadSummary {
    pub(crate) connections: usize,
    /// Length of the measured window.
    pub(crate) seconds: f64,
    /// Successful measured requests (streams, in stream mode).
    pub(crate) requests: u64,
    /// Requests (or streams) per second.
    pub(crate) rate: f64,
    /// SSE `data:` events read (one per response in rps mode).
    pub(crate) events: u64,
    pub(crate) events_per_sec: f64,
    pub(crate) latency_us: Latency,
    /// mean latency × rate ÷ connections: about 1 when every user always had a request in
    /// flight; well below 1 means time was lost outside the request (e.g. a saturated loadgen).
    pub(crate) littles_law: f64,
    pub(crate) server_cpu_us_per_req: Option<f64>,
    /// The server's resident memory at the end of the run.
    pub(crate) server_rss_kib: Option<u64>,
    /// The server's resident memory after given numbers of measured requests (`--rss-at`).
    #[serde(default)]
    pub(crate) rss_at: Vec<RssReading>,
    /// Our own CPU use over the window; near 100 % means the generator was the bottleneck.
    pub(crate) loadgen_cpu_pct: f64,
    /// Our own CPU time per request: 1e6 ÷ this is the most requests/s one core can generate.
    #[serde(default)]
    pub(crate) loadgen_cpu_us_per_req: Option<f64>,
    pub(crate) full_checks: u64,
    pub(crate) errors: u64,
    #[serde(default)]
    pub(crate) error_samples: Vec<String>,
}

/// Latency figures in microseconds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Latency {
    pub(crate) mean: f64,
    pub(crate) p50: f64,
    pub(crate) p90: f64,
    pub(crate) p99: f64,
    pub(crate) max: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct RssReading {
    pub(crate) requests: u64,
    pub(crate) rss_kib: u64,
}

/// An `idle-sse` run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct IdleSummary {
    pub(crate) requested: usize,
    /// Streams that delivered their first event and were still open when memory was read.
    pub(crate) open: usize,
    /// Seconds it took to open them all.
    pub(crate) open_seconds: f64,
    pub(crate) server_rss_before_kib: Option<u64>,
    pub(crate) server_rss_open_kib: Option<u64>,
    /// Server memory growth per open stream.
    pub(crate) kib_per_stream: Option<f64>,
    pub(crate) errors: u64,
    #[serde(default)]
    pub(crate) error_samples: Vec<String>,
}

impl RunSummary {
    pub(crate) fn errors(&self) -> u64 {
        match self {
            Self::Rps(load) | Self::Stream(load) => load.errors,
            Self::IdleSse(idle) => idle.errors,
        }
    }

    pub(crate) fn json(&self) -> String {
        serde_json::to_string(self).expect("summaries serialize")
    }

    pub(crate) fn human(&self) -> String {
        let (line, samples) = match self {
            Self::Rps(load) => (load.human("req"), &load.error_samples),
            Self::Stream(load) => (load.human("streams"), &load.error_samples),
            Self::IdleSse(idle) => (idle.human(), &idle.error_samples),
        };
        samples.iter().fold(line, |text, sample| format!("{text}\n  error: {sample}"))
    }
}

impl LoadSummary {
    fn human(&self, unit: &str) -> String {
        let l = &self.latency_us;
        let mut line = format!(
            "c={} {:.1}s: {:.0} {unit}/s | latency µs mean {:.0} p50 {:.0} p90 {:.0} p99 {:.0} max {:.0} | little {:.2}",
            self.connections, self.seconds, self.rate, l.mean, l.p50, l.p90, l.p99, l.max, self.littles_law
        );
        if unit != "req" {
            line += &format!(" | {:.0} events/s", self.events_per_sec);
        }
        if let Some(cpu) = self.server_cpu_us_per_req {
            line += &format!(" | server {cpu:.1} µs CPU/{unit}");
        }
        if let Some(rss) = self.server_rss_kib {
            line += &format!(" | server RSS {:.1} MiB", mib(rss));
        }
        for reading in &self.rss_at {
            line += &format!(" | RSS@{} {:.1} MiB", reading.requests, mib(reading.rss_kib));
        }
        line + &format!(
            " | loadgen CPU {:.0}% ({:.1} µs/{unit}) | {} full checks | {} errors",
            self.loadgen_cpu_pct,
            self.loadgen_cpu_us_per_req.unwrap_or(f64::NAN),
            self.full_checks,
            self.errors
        )
    }
}

impl IdleSummary {
    fn human(&self) -> String {
        let mut line = format!("idle SSE: {}/{} open after {:.1}s", self.open, self.requested, self.open_seconds);
        if let (Some(before), Some(open)) = (self.server_rss_before_kib, self.server_rss_open_kib) {
            line += &format!(" | server RSS {:.1} → {:.1} MiB", mib(before), mib(open));
        }
        if let Some(per_stream) = self.kib_per_stream {
            line += &format!(" ({per_stream:.1} KiB/stream)");
        }
        line + &format!(" | {} errors", self.errors)
    }
}

pub(crate) fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// `12345.6` → `12,346`.
pub(crate) fn thousands(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0.4), "0");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1234.0), "1,234");
        assert_eq!(thousands(1234567.0), "1,234,567");
    }
}
