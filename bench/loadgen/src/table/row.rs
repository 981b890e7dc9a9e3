//! Records in table order, with each server's rate set against the reference servers'.

use serde::Serialize;

use super::Record;
use crate::summary::{mib, thousands, LoadSummary, RunSummary};

/// The servers every other row is compared with, in column order.
pub(crate) const REFERENCES: &[&str] = &["floor", "official-rust", "official-rust-nodelay"];

/// Above this, the load generator rather than the server may have set the pace.
const LOADGEN_BOUND_PCT: f64 = 90.0;

#[derive(Debug, Serialize)]
pub(crate) struct Row {
    pub(crate) scenario: String,
    pub(crate) server: String,
    /// `ok`, `failed` or `skipped`.
    pub(crate) status: &'static str,
    /// Requests/s, streams/s, or open streams.
    pub(crate) rate: Option<f64>,
    pub(crate) unit: &'static str,
    pub(crate) p50_us: Option<f64>,
    pub(crate) p99_us: Option<f64>,
    pub(crate) server_cpu_us_per_req: Option<f64>,
    pub(crate) littles_law: Option<f64>,
    /// This row's rate divided by each reference's rate in the same scenario, in `REFERENCES` order.
    pub(crate) ratios: Vec<Option<f64>>,
    pub(crate) notes: Vec<String>,
    pub(crate) result: Option<RunSummary>,
}

/// Rows grouped by scenario (in order of first appearance), servers in order of first appearance.
pub(crate) fn rows(records: Vec<Record>) -> Vec<Row> {
    let scenarios = first_appearances(records.iter().map(|r| r.scenario.as_str()));
    let servers = first_appearances(records.iter().map(|r| r.server.as_str()));
    let mut rows: Vec<Row> = records.into_iter().map(Row::from).collect();
    let position = |row: &Row| {
        let scenario = scenarios.iter().position(|s| *s == row.scenario);
        (scenario, servers.iter().position(|s| *s == row.server))
    };
    rows.sort_by_key(position);

    let rates: Vec<(String, String, Option<f64>)> = rows
        .iter()
        .map(|row| (row.scenario.clone(), row.server.clone(), row.rate.filter(|_| row.status == "ok")))
        .collect();
    for row in rows.iter_mut().filter(|row| row.status == "ok" && row.unit != "open") {
        for (ratio, reference) in row.ratios.iter_mut().zip(REFERENCES.iter().copied()) {
            if row.server == reference {
                continue;
            }
            let reference_rate = rates
                .iter()
                .find(|(scenario, server, _)| *scenario == row.scenario && server == reference)
                .and_then(|(_, _, rate)| *rate);
            *ratio = match (row.rate, reference_rate) {
                (Some(rate), Some(reference_rate)) if reference_rate > 0.0 => Some(rate / reference_rate),
                _ => None,
            };
        }
    }
    rows
}

fn first_appearances<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for name in names {
        if !seen.iter().any(|s| s == name) {
            seen.push(name.to_owned());
        }
    }
    seen
}

impl From<Record> for Row {
    fn from(record: Record) -> Self {
        let mut row = Row {
            scenario: record.scenario,
            server: record.server,
            status: "ok",
            rate: None,
            unit: "",
            p50_us: None,
            p99_us: None,
            server_cpu_us_per_req: None,
            littles_law: None,
            ratios: vec![None; REFERENCES.len()],
            notes: Vec::new(),
            result: None,
        };
        match &record.result {
            Some(RunSummary::Rps(load)) => row.fill_load(load, "req/s"),
            Some(RunSummary::Stream(load)) => row.fill_load(load, "streams/s"),
            Some(RunSummary::IdleSse(idle)) => {
                row.rate = Some(idle.open as f64);
                row.unit = "open";
                if let (Some(before), Some(open)) = (idle.server_rss_before_kib, idle.server_rss_open_kib) {
                    row.notes.push(format!("server RSS {:.1} → {:.1} MiB", mib(before), mib(open)));
                }
                if let Some(per_stream) = idle.kib_per_stream {
                    row.notes.push(format!("{per_stream:.1} KiB/stream"));
                }
                row.notes.push(format!("{} streams opened in {:.1} s", idle.requested, idle.open_seconds));
            }
            None => {}
        }
        if let [_, _, ..] = record.round_rates.as_slice() {
            let rates: Vec<String> = record.round_rates.iter().map(|rate| thousands(*rate)).collect();
            row.notes.push(format!("rounds {}", rates.join(", ")));
        }
        if let Some(reason) = record.skipped {
            row.status = "skipped";
            row.notes.insert(0, format!("skipped: {reason}"));
        }
        if let Some(reason) = record.failed {
            row.status = "failed";
            row.notes.insert(0, format!("FAILED: {reason}"));
        }
        row.result = record.result;
        row
    }
}

impl Row {
    fn fill_load(&mut self, load: &LoadSummary, unit: &'static str) {
        self.rate = Some(load.rate);
        self.unit = unit;
        self.p50_us = Some(load.latency_us.p50);
        self.p99_us = Some(load.latency_us.p99);
        self.server_cpu_us_per_req = load.server_cpu_us_per_req;
        self.littles_law = Some(load.littles_law);
        if unit == "streams/s" && load.requests > 0 {
            let per_stream = load.events as f64 / load.requests as f64;
            self.notes.push(format!("{:.0} events/s ({per_stream:.1}/stream)", load.events_per_sec));
        }
        if let [first, .., last] = load.rss_at.as_slice() {
            let growth = last.rss_kib as f64 / first.rss_kib.max(1) as f64;
            self.notes.push(format!(
                "RSS after {} tasks {:.1} MiB, after {} {:.1} MiB (×{growth:.2})",
                first.requests,
                mib(first.rss_kib),
                last.requests,
                mib(last.rss_kib)
            ));
        }
        if load.loadgen_cpu_pct > LOADGEN_BOUND_PCT {
            self.notes.push(format!("loadgen CPU {:.0}%: may be loadgen-bound", load.loadgen_cpu_pct));
        }
        if let Some(sample) = load.error_samples.first() {
            self.notes.push(format!("{} errors, first: {sample}", load.errors));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(line: &str) -> Record {
        serde_json::from_str(line).unwrap()
    }

    fn rps(scenario: &str, server: &str, rate: f64) -> Record {
        record(&format!(
            r#"{{"scenario":"{scenario}","server":"{server}","result":{{"mode":"rps","connections":16,"seconds":1.0,
            "requests":1,"rate":{rate},"events":1,"events_per_sec":1.0,
            "latency_us":{{"mean":1.0,"p50":1.0,"p90":1.0,"p99":1.0,"max":1.0}},"littles_law":1.0,
            "server_cpu_us_per_req":null,"server_rss_kib":null,"loadgen_cpu_pct":10.0,"full_checks":1,"errors":0}}}}"#
        ))
    }

    #[test]
    fn rows_are_grouped_by_scenario_and_compared_with_the_references() {
        let rows = rows(vec![
            rps("c16", "floor", 100.0),
            rps("c1", "floor", 10.0),
            rps("c16", "agentwire", 50.0),
            record(r#"{"scenario":"c16","server":"official-rust","skipped":"did not build"}"#),
            rps("c1", "agentwire", 5.0),
        ]);
        let order: Vec<_> = rows.iter().map(|r| (r.scenario.as_str(), r.server.as_str())).collect();
        assert_eq!(
            order,
            [("c16", "floor"), ("c16", "agentwire"), ("c16", "official-rust"), ("c1", "floor"), ("c1", "agentwire")]
        );
        assert_eq!(rows[1].ratios, [Some(0.5), None, None]);
        assert_eq!(rows[0].ratios, [None, None, None]);
        assert_eq!(rows[2].status, "skipped");
        assert_eq!(rows[4].ratios[0], Some(0.5));
    }
}
