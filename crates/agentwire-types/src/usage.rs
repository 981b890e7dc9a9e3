//! What a task cost: the usage extension's figures (docs/extensions/usage-v1.md), which an agent
//! that calls a model reports in its task's metadata, and a gateway sums.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The usage extension's URI: the key of its figures in a task's and a status event's metadata,
/// and what an agent that reports them declares on its card.
pub const USAGE_EXTENSION: &str = "https://github.com/agentwire/agentwire/blob/main/docs/extensions/usage-v1.md";

/// The longest model name kept from a report, in bytes: the name is a label of metrics.
pub const MAX_MODEL_NAME: usize = 128;

/// Counts of work: tokens, model calls, tool rounds and time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageFigures {
    /// Tokens the model read (its prompts, summed over its calls).
    #[serde(default)]
    pub input_tokens: u64,
    /// Tokens the model wrote.
    #[serde(default)]
    pub output_tokens: u64,
    /// Requests made to the model.
    #[serde(default)]
    pub model_calls: u64,
    /// Rounds of tool calls the model asked for.
    #[serde(default)]
    pub tool_rounds: u64,
    /// Time the agent spent working, in milliseconds.
    #[serde(default)]
    pub wall_time_ms: u64,
}

impl UsageFigures {
    /// Input and output tokens together.
    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// `self` and `other` together; a sum past `u64::MAX` stays there.
    #[must_use]
    pub fn plus(self, other: Self) -> Self {
        Self {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            model_calls: self.model_calls.saturating_add(other.model_calls),
            tool_rounds: self.tool_rounds.saturating_add(other.tool_rounds),
            wall_time_ms: self.wall_time_ms.saturating_add(other.wall_time_ms),
        }
    }
}

/// A task's usage, as the extension carries it: the task's totals, the model, whether the
/// token counts were estimated, and the part of the totals spent since the task's latest
/// message (`turn`), which is what a party relaying that message counts.
///
/// ```
/// use agentwire_types::{Usage, UsageFigures, USAGE_EXTENSION};
/// use serde_json::json;
///
/// let spent = UsageFigures { input_tokens: 30, output_tokens: 12, model_calls: 1, ..UsageFigures::default() };
/// let usage = Usage::first("gpt-4o-mini", spent, false);
/// let metadata = usage.metadata();
/// assert_eq!(metadata[USAGE_EXTENSION]["outputTokens"], json!(12));
/// assert_eq!(Usage::in_metadata(Some(&metadata)), Some(usage));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// The task's totals.
    #[serde(flatten)]
    pub total: UsageFigures,
    /// The model that did the work, as the agent names it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// The token counts are the agent's estimate: the model's server did not report its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
    /// What the work since the task's latest message spent, part of the totals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<UsageFigures>,
}

impl Usage {
    /// The usage of a task's first turn: its totals are the turn's.
    pub fn first(model: impl Into<String>, turn: UsageFigures, estimated: bool) -> Self {
        Self { total: turn, model: model.into(), estimated, turn: Some(turn) }
    }

    /// The usage after another turn of `model` spent `turn`.
    #[must_use]
    pub fn then(self, model: impl Into<String>, turn: UsageFigures, estimated: bool) -> Self {
        Self {
            total: self.total.plus(turn),
            model: model.into(),
            estimated: self.estimated || estimated,
            turn: Some(turn),
        }
    }

    /// The usage `metadata` holds under [`USAGE_EXTENSION`], if it holds a readable one: counts
    /// that are whole numbers from 0 to `u64::MAX`. A model name longer than [`MAX_MODEL_NAME`]
    /// bytes is cut there ([`clip`](crate::text::clip)).
    pub fn in_metadata(metadata: Option<&Map<String, Value>>) -> Option<Self> {
        let value = metadata?.get(USAGE_EXTENSION)?;
        let mut usage = Self::deserialize(value).ok()?;
        if usage.model.len() > MAX_MODEL_NAME {
            usage.model = crate::text::clip(std::mem::take(&mut usage.model), MAX_MODEL_NAME);
        }
        Some(usage)
    }

    /// What the latest turn spent: `turn`, or the totals when the report has no turn.
    pub fn latest(&self) -> UsageFigures {
        self.turn.unwrap_or(self.total)
    }

    /// Metadata that holds this usage under [`USAGE_EXTENSION`].
    pub fn metadata(&self) -> Map<String, Value> {
        // Serializing plain counts and a string cannot fail.
        let value = serde_json::to_value(self).unwrap_or_default();
        Map::from_iter([(USAGE_EXTENSION.to_owned(), value)])
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read(value: Value) -> Option<Usage> {
        Usage::in_metadata(Some(&Map::from_iter([(USAGE_EXTENSION.to_owned(), value)])))
    }

    #[test]
    fn turns_add_up() {
        let one = UsageFigures { input_tokens: 10, output_tokens: 5, model_calls: 1, ..UsageFigures::default() };
        let two = UsageFigures { input_tokens: 20, output_tokens: 7, model_calls: 2, tool_rounds: 1, wall_time_ms: 9 };
        let usage = Usage::first("m", one, false).then("m", two, true);
        assert_eq!(usage.total.tokens(), 42);
        assert_eq!(usage.total.model_calls, 3);
        assert_eq!(usage.latest(), two);
        assert!(usage.estimated);
        let max = UsageFigures { input_tokens: u64::MAX, ..UsageFigures::default() };
        assert_eq!(Usage::first("m", max, false).then("m", one, false).total.input_tokens, u64::MAX);
    }

    #[test]
    fn reports_are_read_within_bounds() {
        let usage = read(json!({"inputTokens": 3, "outputTokens": 4, "model": "m"})).unwrap();
        assert_eq!((usage.total.tokens(), usage.latest().tokens()), (7, 7));
        assert!(read(json!({"inputTokens": -1})).is_none());
        assert!(read(json!({"outputTokens": 1.5})).is_none());
        assert!(read(json!("lots")).is_none());
        let long = read(json!({"model": "x".repeat(1000)})).unwrap().model;
        assert_eq!(long, format!("{}{}", "x".repeat(MAX_MODEL_NAME), crate::text::CLIPPED));
        assert!(Usage::in_metadata(None).is_none());
    }

    #[test]
    fn the_wire_form_is_camel_case_and_flat() {
        let usage = Usage::first("m", UsageFigures { output_tokens: 2, ..UsageFigures::default() }, false);
        let wire = serde_json::to_value(&usage).unwrap();
        assert_eq!(wire["outputTokens"], 2);
        assert_eq!(wire["turn"]["outputTokens"], 2);
        assert!(wire.get("estimated").is_none() && wire.get("total").is_none());
    }
}
