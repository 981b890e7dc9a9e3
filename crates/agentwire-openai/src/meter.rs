//! What a turn spends, reported with the usage extension ([`agentwire_types::USAGE_EXTENSION`]):
//! the model's own token counts where its server gives them (`stream_options.include_usage`),
//! else an estimate from the bytes sent and received.

use std::sync::{Mutex, PoisonError};

use agentwire_types::{AgentExtension, Task, Usage, UsageFigures, USAGE_EXTENSION};
use tokio::time::Instant;

use crate::model::Reported;

/// Bytes per token, for an estimate: about what OpenAI's tokenizers average on English text.
const BYTES_PER_TOKEN: usize = 4;

/// The usage extension as the agent's card declares it.
pub(crate) fn declared() -> AgentExtension {
    AgentExtension {
        uri: USAGE_EXTENSION.to_owned(),
        description: "Reports what each task spent (model tokens, model calls, tool rounds, time) in its metadata"
            .to_owned(),
        required: false,
        params: None,
    }
}

/// The spending of one turn of a task, added to what its earlier turns spent.
pub(crate) struct Meter {
    model: String,
    /// The task's usage before this turn, if it had any.
    before: Option<Usage>,
    started: Instant,
    spent: Mutex<Spent>,
}

#[derive(Default)]
struct Spent {
    figures: UsageFigures,
    estimated: bool,
}

impl Meter {
    /// A meter for a turn of `model` on `task` (none yet for a new task).
    pub(crate) fn start(model: &str, task: Option<&Task>) -> Self {
        let before = task.and_then(|task| Usage::in_metadata(task.metadata.as_ref()));
        Self { model: model.to_owned(), before, started: Instant::now(), spent: Mutex::default() }
    }

    /// Counts a request to the model: the tokens its server `reported`, else an estimate from the
    /// bytes of the request (`sent`, only computed then) and of the answer that came (`received`).
    /// Returns what the request spent.
    pub(crate) fn model_call(
        &self,
        reported: Option<Reported>,
        sent: impl FnOnce() -> usize,
        received: usize,
    ) -> UsageFigures {
        let (input, output, estimated) = match reported {
            Some(reported) => (reported.input, reported.output, false),
            None => (estimate(sent()), estimate(received), true),
        };
        let call =
            UsageFigures { input_tokens: input, output_tokens: output, model_calls: 1, ..UsageFigures::default() };
        let mut spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        spent.figures = spent.figures.plus(call);
        spent.estimated |= estimated;
        call
    }

    /// Counts a round of tool calls the model asked for.
    pub(crate) fn tool_round(&self) {
        let mut spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        spent.figures.tool_rounds = spent.figures.tool_rounds.saturating_add(1);
    }

    /// The task's usage so far.
    pub(crate) fn usage(&self) -> Usage {
        let spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        let millis = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let turn = UsageFigures { wall_time_ms: millis, ..spent.figures };
        match self.before.clone() {
            Some(before) => before.then(self.model.clone(), turn, spent.estimated),
            None => Usage::first(self.model.clone(), turn, spent.estimated),
        }
    }
}

/// Tokens in about `bytes` bytes of text, rounded up.
pub(crate) fn estimate(bytes: usize) -> u64 {
    u64::try_from(bytes.div_ceil(BYTES_PER_TOKEN)).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reported_counts_win_and_estimates_say_so() {
        let meter = Meter::start("m", None);
        let reported = Reported { input: 11, output: 3 };
        meter.model_call(Some(reported), || unreachable!("no estimate when the server reports"), 100);
        meter.tool_round();
        let usage = Usage::in_metadata(Some(&meter.usage().metadata())).unwrap();
        assert_eq!((usage.total.input_tokens, usage.total.output_tokens, usage.estimated), (11, 3, false));
        meter.model_call(None, || 41, 8);
        let usage = Usage::in_metadata(Some(&meter.usage().metadata())).unwrap();
        assert_eq!((usage.total.input_tokens, usage.total.output_tokens), (22, 5));
        assert_eq!((usage.total.model_calls, usage.total.tool_rounds, usage.estimated), (2, 1, true));
    }

    #[test]
    fn a_later_turn_adds_to_the_task() {
        let before = Usage::first("m", UsageFigures { input_tokens: 100, model_calls: 1, ..Default::default() }, false);
        let task = Task { metadata: Some(before.metadata()), ..Task::default() };
        let meter = Meter::start("m", Some(&task));
        meter.model_call(None, || 4, 4);
        let usage = Usage::in_metadata(Some(&meter.usage().metadata())).unwrap();
        assert_eq!(usage.total.input_tokens, 101);
        assert_eq!(usage.latest().input_tokens, 1);
        assert_eq!(serde_json::to_value(&usage).unwrap()["turn"]["modelCalls"], json!(1));
    }
}
