//! `report`: the runs a harness recorded, as one markdown table (with ratios against the floor and
//! the official SDK) and the same rows as JSON.

mod markdown;
mod rounds;
mod row;

use std::io::Write as _;

use anyhow::Context;
use serde::Deserialize;

use crate::opt::ReportOpt;
use crate::summary::RunSummary;

/// One line of the harness's run log.
#[derive(Debug, Deserialize)]
pub(crate) struct Record {
    pub(crate) scenario: String,
    pub(crate) server: String,
    #[serde(default)]
    pub(crate) result: Option<RunSummary>,
    /// Why the run did not happen (the server did not build or start).
    #[serde(default)]
    pub(crate) skipped: Option<String>,
    /// Why the run failed (errors, a crash).
    #[serde(default)]
    pub(crate) failed: Option<String>,
    /// The rate of each round, once rounds are merged.
    #[serde(skip)]
    pub(crate) round_rates: Vec<f64>,
}

pub(crate) fn run(opt: &ReportOpt) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&opt.runs).with_context(|| format!("cannot read {}", opt.runs.display()))?;
    let records = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(n, line)| serde_json::from_str(line).with_context(|| format!("line {}: {line}", n + 1)))
        .collect::<anyhow::Result<Vec<Record>>>()?;
    let rows = row::rows(rounds::merge(records));
    let table = markdown::render(&rows);
    print!("{table}");
    if let Some(path) = &opt.markdown {
        std::fs::write(path, &table).with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let Some(path) = &opt.json {
        let mut file = std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
        serde_json::to_writer_pretty(&mut file, &serde_json::json!({ "rows": rows }))?;
        writeln!(file)?;
    }
    Ok(())
}
