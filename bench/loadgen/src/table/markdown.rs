//! The results table as GitHub-flavoured markdown.

use std::fmt::Write as _;

use super::row::{Row, REFERENCES};

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

/// `12345.6` → `12,346`.
pub(super) fn thousands(value: f64) -> String {
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
