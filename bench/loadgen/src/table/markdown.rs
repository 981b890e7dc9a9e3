//! The results table as GitHub-flavoured markdown.

use std::fmt::Write as _;

use super::row::{Row, REFERENCES};
use crate::summary::thousands;

pub(crate) fn render(rows: &[Row]) -> String {
    let mut out = String::from("| scenario | server | rate | p50 µs | p99 µs | server CPU µs/req | little |");
    for reference in REFERENCES {
        let _ = write!(out, " ÷ {} |", reference.replace("-nodelay", " --nodelay"));
    }
    out.push_str(" notes |\n|---|---|--:|--:|--:|--:|--:|");
    out.push_str(&"--:|".repeat(REFERENCES.len()));
    out.push_str("---|\n");
    for row in rows {
        let rate = row.rate.map(|rate| format!("{} {}", thousands(rate), row.unit));
        let _ = write!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            row.scenario,
            row.server,
            rate.unwrap_or_else(|| "—".to_owned()),
            fixed(row.p50_us, 0),
            fixed(row.p99_us, 0),
            fixed(row.server_cpu_us_per_req, 1),
            fixed(row.littles_law, 2),
        );
        for ratio in &row.ratios {
            let _ = write!(out, " {} |", fixed(*ratio, 2));
        }
        let _ = writeln!(out, " {} |", row.notes.join("; ").replace('|', "/"));
    }
    out
}

fn fixed(value: Option<f64>, decimals: usize) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{v:.decimals$}"))
}
