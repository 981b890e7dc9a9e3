//! Several rounds of one scenario against one server, reported as one row.

use super::Record;
use crate::summary::{LoadSummary, RunSummary};

/// One record per (scenario, server), in order of first appearance. A failed round fails the row
/// and a skipped one skips it; otherwise the rounds' closed-loop runs are taken together: rate and
/// CPU over all their requests, the mean of their medians, the worst of their p99s.
pub(crate) fn merge(records: Vec<Record>) -> Vec<Record> {
    let mut merged: Vec<Record> = Vec::new();
    for record in records {
        match merged.iter_mut().find(|m| m.scenario == record.scenario && m.server == record.server) {
            Some(row) => absorb(row, record),
            None => {
                let mut record = record;
                record.round_rates = rate_of(&record).into_iter().collect();
                merged.push(record);
            }
        }
    }
    merged
}

fn rate_of(record: &Record) -> Option<f64> {
    match &record.result {
        Some(RunSummary::Rps(load) | RunSummary::Stream(load)) => Some(load.rate),
        _ => None,
    }
}

fn absorb(row: &mut Record, round: Record) {
    if row.failed.is_some() || (row.skipped.is_some() && round.failed.is_none()) {
        return;
    }
    if round.failed.is_some() || round.skipped.is_some() {
        *row = Record { round_rates: Vec::new(), ..round };
        return;
    }
    row.round_rates.extend(rate_of(&round));
    row.result = match (row.result.take(), round.result) {
        (Some(RunSummary::Rps(a)), Some(RunSummary::Rps(b))) => Some(RunSummary::Rps(combine(a, b))),
        (Some(RunSummary::Stream(a)), Some(RunSummary::Stream(b))) => Some(RunSummary::Stream(combine(a, b))),
        // Other modes run once; keep the latest.
        (_, latest) => latest,
    };
}

/// Two runs of the same load as one.
fn combine(a: LoadSummary, b: LoadSummary) -> LoadSummary {
    let seconds = a.seconds + b.seconds;
    let requests = a.requests + b.requests;
    let events = a.events + b.events;
    let per_request = |x: f64, y: f64| {
        if requests == 0 {
            (x + y) / 2.0
        } else {
            (x * a.requests as f64 + y * b.requests as f64) / requests as f64
        }
    };
    let per_request_of = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => Some(per_request(x, y)),
        (x, y) => x.or(y),
    };
    let mut latency_us = a.latency_us.clone();
    latency_us.mean = per_request(a.latency_us.mean, b.latency_us.mean);
    latency_us.p50 = (a.latency_us.p50 + b.latency_us.p50) / 2.0;
    latency_us.p90 = a.latency_us.p90.max(b.latency_us.p90);
    latency_us.p99 = a.latency_us.p99.max(b.latency_us.p99);
    latency_us.max = a.latency_us.max.max(b.latency_us.max);
    let rate = if seconds > 0.0 { requests as f64 / seconds } else { 0.0 };
    LoadSummary {
        connections: a.connections,
        seconds,
        requests,
        rate,
        events,
        events_per_sec: if seconds > 0.0 { events as f64 / seconds } else { 0.0 },
        littles_law: latency_us.mean * rate / a.connections.max(1) as f64 / 1e6,
        latency_us,
        server_cpu_us_per_req: per_request_of(a.server_cpu_us_per_req, b.server_cpu_us_per_req),
        server_rss_kib: b.server_rss_kib.or(a.server_rss_kib),
        rss_at: if b.rss_at.is_empty() { a.rss_at } else { b.rss_at },
        loadgen_cpu_pct: a.loadgen_cpu_pct.max(b.loadgen_cpu_pct),
        loadgen_cpu_us_per_req: per_request_of(a.loadgen_cpu_us_per_req, b.loadgen_cpu_us_per_req),
        full_checks: a.full_checks + b.full_checks,
        errors: a.errors + b.errors,
        error_samples: a.error_samples.into_iter().chain(b.error_samples).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rps(server: &str, seconds: f64, requests: u64, p99: f64, cpu: f64) -> Record {
        serde_json::from_str(&format!(
            r#"{{"scenario":"c16","server":"{server}","result":{{"mode":"rps","connections":16,"seconds":{seconds},
            "requests":{requests},"rate":{rate},"events":{requests},"events_per_sec":{rate},
            "latency_us":{{"mean":320.0,"p50":300.0,"p90":400.0,"p99":{p99},"max":900.0}},"littles_law":1.0,
            "server_cpu_us_per_req":{cpu},"server_rss_kib":null,"loadgen_cpu_pct":60.0,"full_checks":1,"errors":0}}}}"#,
            rate = requests as f64 / seconds
        ))
        .unwrap()
    }

    fn load(record: &Record) -> &LoadSummary {
        match &record.result {
            Some(RunSummary::Rps(load)) => load,
            other => panic!("not an rps run: {other:?}"),
        }
    }

    #[test]
    fn rounds_are_taken_together() {
        let rows = merge(vec![
            rps("agentwire", 4.0, 200_000, 600.0, 20.0),
            rps("official-rust", 4.0, 100_000, 1200.0, 40.0),
            rps("agentwire", 4.0, 180_000, 700.0, 22.0),
        ]);
        assert_eq!(rows.len(), 2);
        let agentwire = load(&rows[0]);
        assert_eq!(agentwire.requests, 380_000);
        assert!((agentwire.rate - 47_500.0).abs() < 1e-6, "{}", agentwire.rate);
        assert_eq!(agentwire.latency_us.p99, 700.0);
        let cpu = agentwire.server_cpu_us_per_req.unwrap();
        assert!((cpu - (20.0 * 200_000.0 + 22.0 * 180_000.0) / 380_000.0).abs() < 1e-9, "{cpu}");
        assert_eq!(rows[0].round_rates, [50_000.0, 45_000.0]);
        assert_eq!(rows[1].round_rates, [25_000.0]);
    }

    #[test]
    fn a_failed_round_fails_the_row() {
        let failed: Record =
            serde_json::from_str(r#"{"scenario":"c16","server":"agentwire","failed":"loadgen exited 1"}"#).unwrap();
        let rows = merge(vec![rps("agentwire", 4.0, 200_000, 600.0, 20.0), failed]);
        assert_eq!(rows[0].failed.as_deref(), Some("loadgen exited 1"));
        assert!(rows[0].result.is_none());
    }
}
