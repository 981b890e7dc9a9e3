//! What agents reported spending (the usage extension), counted by caller, agent and model.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use agentwire_types::{Usage, UsageFigures};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::Metrics;

/// Series of the usage counters by default: each is a caller, agent and model seen together.
pub const DEFAULT_USAGE_SERIES: usize = 1000;

/// The most one report adds to a counter: about a trillion. Counters are 64-bit and wrap, and
/// the figures come from agents; a report past this is counted as this.
pub const MAX_COUNTED_PER_REPORT: u64 = 1 << 40;

/// The label every part of a series past the cap takes.
const OTHER: &str = "(other)";

/// Who spent, where, on what. The principal is the caller's name as this server authenticated
/// it (`(anonymous)` without one), the agent the name it is mounted under (`(root)` for the
/// gateway's own root), the model as the agent reported it (`(unknown)` when it did not).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct UsageLabels {
    principal: String,
    agent: String,
    model: String,
}

/// What one caller spent through one agent on one model, as the usage counters hold it
/// ([`Metrics::usage_sums`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageSum {
    /// The caller's principal (`(anonymous)` without one; `(other)` past the series cap).
    pub principal: String,
    /// The agent (`(root)` for a server's own).
    pub agent: String,
    /// The model, as the agent reported it (`(unknown)` when it did not).
    pub model: String,
    /// The tokens, model calls and tool rounds (no wall time).
    pub spent: UsageFigures,
    /// The turns reported.
    pub reports: u64,
}

/// The usage counters, and the series they have: the labels come from callers and agents, so
/// their number is capped.
pub(crate) struct UsageInstruments {
    input_tokens: Family<UsageLabels, Counter>,
    output_tokens: Family<UsageLabels, Counter>,
    model_calls: Family<UsageLabels, Counter>,
    tool_rounds: Family<UsageLabels, Counter>,
    reports: Family<UsageLabels, Counter>,
    series: Mutex<HashSet<UsageLabels>>,
    max_series: AtomicUsize,
}

impl UsageInstruments {
    /// The counters at zero, registered in `registry` (under `agentwire_`).
    pub(crate) fn registered(registry: &mut Registry) -> Self {
        let instruments = Self {
            input_tokens: Family::default(),
            output_tokens: Family::default(),
            model_calls: Family::default(),
            tool_rounds: Family::default(),
            reports: Family::default(),
            series: Mutex::default(),
            max_series: AtomicUsize::new(DEFAULT_USAGE_SERIES),
        };
        let counters = [
            ("usage_input_tokens", "Model tokens read, as agents reported them", &instruments.input_tokens),
            ("usage_output_tokens", "Model tokens written, as agents reported them", &instruments.output_tokens),
            ("usage_model_calls", "Requests agents made to their models", &instruments.model_calls),
            ("usage_tool_rounds", "Rounds of tool calls agents' models asked for", &instruments.tool_rounds),
            ("usage_reports", "Turns of tasks whose usage agents reported", &instruments.reports),
        ];
        for (name, help, family) in counters {
            registry.register(name, help, family.clone());
        }
        instruments
    }

    /// The labels for `principal`, `agent` and `model`: their own series while there is room,
    /// the shared `(other)` series after.
    fn labels(&self, principal: &str, agent: &str, model: &str) -> UsageLabels {
        let or = |name: &str, unnamed: &str| if name.is_empty() { unnamed.to_owned() } else { name.to_owned() };
        let labels = UsageLabels {
            principal: or(principal, "(anonymous)"),
            agent: or(agent, "(root)"),
            model: or(model, "(unknown)"),
        };
        let mut series = self.series.lock().unwrap_or_else(PoisonError::into_inner);
        if series.contains(&labels) {
            return labels;
        }
        if series.len() < self.max_series.load(Ordering::Relaxed) {
            series.insert(labels.clone());
            return labels;
        }
        UsageLabels { principal: OTHER.to_owned(), agent: OTHER.to_owned(), model: OTHER.to_owned() }
    }
}

impl Metrics {
    /// Counts what the latest turn of a task spent ([`Usage::latest`]), as the agent `agent`
    /// reported it to the caller `principal`, in the counters `agentwire_usage_*_total`, by
    /// principal, agent and model; a figure past [`MAX_COUNTED_PER_REPORT`] counts as that. A gateway counts what its agents report on the sends it
    /// relays; docs/OPERATIONS.md lists the counters.
    ///
    /// ```
    /// use agentwire_server::Metrics;
    /// use agentwire_types::{Usage, UsageFigures};
    ///
    /// let metrics = Metrics::new();
    /// let spent = UsageFigures { input_tokens: 30, output_tokens: 12, model_calls: 1, ..UsageFigures::default() };
    /// metrics.count_usage("alice", "writer", &Usage::first("gpt-4o-mini", spent, false));
    /// let text = metrics.encode();
    /// assert!(text.contains(r#"agentwire_usage_output_tokens_total{principal="alice",agent="writer",model="gpt-4o-mini"} 12"#));
    /// ```
    pub fn count_usage(&self, principal: &str, agent: &str, usage: &Usage) {
        let usage_instruments = &self.instruments.usage;
        let labels = usage_instruments.labels(principal, agent, &usage.model);
        let spent = usage.latest();
        let add = |family: &Family<UsageLabels, Counter>, figure: u64| {
            family.get_or_create(&labels).inc_by(figure.min(MAX_COUNTED_PER_REPORT));
        };
        add(&usage_instruments.input_tokens, spent.input_tokens);
        add(&usage_instruments.output_tokens, spent.output_tokens);
        add(&usage_instruments.model_calls, spent.model_calls);
        add(&usage_instruments.tool_rounds, spent.tool_rounds);
        usage_instruments.reports.get_or_create(&labels).inc();
    }

    /// What the usage counters hold, a row per combination of caller, agent and model counted
    /// (those past the cap in one row of `(other)`), in no particular order.
    ///
    /// ```
    /// use agentwire_server::Metrics;
    /// use agentwire_types::{Usage, UsageFigures};
    ///
    /// let metrics = Metrics::new();
    /// let spent = UsageFigures { input_tokens: 30, output_tokens: 12, model_calls: 1, ..UsageFigures::default() };
    /// metrics.count_usage("alice", "writer", &Usage::first("gpt-4o-mini", spent, false));
    /// let sums = metrics.usage_sums();
    /// assert_eq!((sums[0].principal.as_str(), sums[0].spent.output_tokens, sums[0].reports), ("alice", 12, 1));
    /// ```
    pub fn usage_sums(&self) -> Vec<UsageSum> {
        let usage = &self.instruments.usage;
        let mut labels: Vec<UsageLabels> =
            usage.series.lock().unwrap_or_else(PoisonError::into_inner).iter().cloned().collect();
        labels.push(UsageLabels { principal: OTHER.to_owned(), agent: OTHER.to_owned(), model: OTHER.to_owned() });
        let read = |family: &Family<UsageLabels, Counter>, labels: &UsageLabels| {
            family.get(labels).map_or(0, |counter| counter.get())
        };
        let sums = labels.into_iter().filter_map(|labels| {
            let reports = read(&usage.reports, &labels);
            let spent = UsageFigures {
                input_tokens: read(&usage.input_tokens, &labels),
                output_tokens: read(&usage.output_tokens, &labels),
                model_calls: read(&usage.model_calls, &labels),
                tool_rounds: read(&usage.tool_rounds, &labels),
                ..UsageFigures::default()
            };
            let UsageLabels { principal, agent, model } = labels;
            (reports > 0).then_some(UsageSum { principal, agent, model, spent, reports })
        });
        sums.collect()
    }

    /// Gives at most `series` combinations of caller, agent and model a series of their own in
    /// the usage counters ([`DEFAULT_USAGE_SERIES`] by default); the others are counted in one,
    /// labelled `(other)`. Callers and the models agents report are not the operator's to
    /// choose: without a cap, each would add series to every scrape.
    ///
    /// ```
    /// let metrics = agentwire_server::Metrics::new();
    /// metrics.limit_usage_series(100);
    /// ```
    pub fn limit_usage_series(&self, series: usize) {
        self.instruments.usage.max_series.store(series, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_past_the_cap_share_one() {
        let metrics = Metrics::new();
        metrics.limit_usage_series(2);
        let spent = |tokens| UsageFigures { input_tokens: tokens, ..UsageFigures::default() };
        for (principal, tokens) in [("alice", 1), ("bob", 2), ("carol", 4), ("dave", 8), ("alice", 16)] {
            metrics.count_usage(principal, "", &Usage::first("", spent(tokens), false));
        }
        let text = metrics.encode();
        let line = |principal: &str| {
            format!(
                "agentwire_usage_input_tokens_total{{principal=\"{principal}\",agent=\"(root)\",model=\"(unknown)\"}}"
            )
        };
        assert!(text.contains(&format!("{} 17", line("alice"))), "{text}");
        assert!(text.contains(&format!("{} 2", line("bob"))), "{text}");
        let other = "agentwire_usage_input_tokens_total{principal=\"(other)\",agent=\"(other)\",model=\"(other)\"} 12";
        assert!(text.contains(other), "{text}");
        assert!(
            text.contains("agentwire_usage_reports_total{principal=\"(other)\",agent=\"(other)\",model=\"(other)\"} 2")
        );
    }
}
