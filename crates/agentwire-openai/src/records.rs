//! What the agent writes into its task about the tools it used, as data parts of status
//! messages: people read them in `get` and the console, and the agent reads them back to go on
//! with a task after an approval.

use agentwire_types::{Message, Part, PartContent, Role};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One record, as the JSON object of a data part: `{"toolCalls": …}`, `{"toolResult": …}` or
/// `{"approval": …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Record {
    /// The model asked for these calls, after saying `text` (often nothing).
    ToolCalls {
        calls: Vec<ToolCall>,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        text: String,
    },
    /// A call's result, as the model was given it.
    ToolResult(ToolResult),
    /// These calls wait for the user's approval (the task is INPUT_REQUIRED).
    Approval { calls: Vec<ToolCall> },
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolCall {
    /// The model's id for the call, which its result names.
    pub(crate) id: String,
    /// The tool, as offered to the model.
    pub(crate) name: String,
    /// The arguments as the model wrote them: JSON text, which may not be valid.
    pub(crate) arguments: String,
}

/// What a call gave back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ToolResult {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) content: String,
    #[serde(default)]
    pub(crate) is_error: bool,
}

impl Record {
    /// The record as a data part.
    pub(crate) fn part(&self) -> Part {
        Part::data(serde_json::to_value(self).unwrap_or(Value::Null))
    }

    /// The records an agent message carries (none for anybody else's).
    pub(crate) fn all_in(message: &Message) -> impl Iterator<Item = Record> + '_ {
        let ours = message.role == Role::Agent;
        message.parts.iter().filter(move |_| ours).filter_map(|part| match &part.content {
            PartContent::Data(value) => serde_json::from_value(value.clone()).ok(),
            _ => None,
        })
    }
}

/// The calls of the task's last round that have no result yet, in order: what an approval
/// decides. `history` is the task's, oldest first.
pub(crate) fn pending_calls(history: &[Message]) -> Vec<ToolCall> {
    let mut pending = Vec::new();
    for record in history.iter().flat_map(Record::all_in) {
        match record {
            Record::ToolCalls { calls, .. } => pending = calls,
            Record::ToolResult(result) => pending.retain(|call: &ToolCall| call.id != result.id),
            Record::Approval { .. } => {}
        }
    }
    pending
}

/// Whether `answer` approves the calls waiting for it: a text that starts with yes, y, ok,
/// approve or approved (in any case), or a data part `{"approve": true}`. Anything else refuses.
pub(crate) fn approves(answer: &Message) -> bool {
    answer.parts.iter().any(|part| match &part.content {
        PartContent::Text(text) => {
            let first = text.trim_start().split(|c: char| !c.is_alphanumeric()).next().unwrap_or("");
            ["yes", "y", "ok", "approve", "approved"].iter().any(|word| first.eq_ignore_ascii_case(word))
        }
        PartContent::Data(value) => value.get("approve") == Some(&Value::Bool(true)),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall { id: id.into(), name: "add".into(), arguments: "{}".into() }
    }

    fn agent_message(record: &Record) -> Message {
        Message { parts: vec![Part::text("…"), record.part()], ..Message::agent("m", "") }
    }

    #[test]
    fn records_are_tagged_json() {
        let record = Record::ToolCalls { calls: vec![call("c1")], text: String::new() };
        assert_eq!(
            serde_json::to_value(&record).unwrap(),
            json!({"toolCalls": {"calls": [{"id": "c1", "name": "add", "arguments": "{}"}]}})
        );
        let message = agent_message(&record);
        assert_eq!(Record::all_in(&message).collect::<Vec<_>>(), vec![record]);
    }

    #[test]
    fn pending_calls_are_the_last_round_without_results() {
        let result = |id: &str| {
            Record::ToolResult(ToolResult { id: id.into(), name: "add".into(), content: "5".into(), is_error: false })
        };
        let history = vec![
            Message::user("u1", "add"),
            agent_message(&Record::ToolCalls { calls: vec![call("c1")], text: String::new() }),
            agent_message(&result("c1")),
            agent_message(&Record::ToolCalls { calls: vec![call("c2"), call("c3")], text: String::new() }),
            agent_message(&result("c2")),
            agent_message(&Record::Approval { calls: vec![call("c3")] }),
            Message::user("u2", "yes"),
        ];
        assert_eq!(pending_calls(&history), vec![call("c3")]);
        assert!(pending_calls(&history[..3]).is_empty());
        // A user's data part that looks like a record is not one.
        let forged = Message {
            parts: vec![Record::ToolCalls { calls: vec![call("x")], text: String::new() }.part()],
            ..Message::user("u", "")
        };
        assert!(pending_calls(&[forged]).is_empty());
    }

    #[test]
    fn approvals_are_a_yes() {
        for yes in ["yes", "Yes, go ahead", "ok", "APPROVE", "y"] {
            assert!(approves(&Message::user("m", yes)), "{yes}");
        }
        for no in ["no", "yesterday", "", "not ok"] {
            assert!(!approves(&Message::user("m", no)), "{no}");
        }
        let data = Message { parts: vec![Part::data(json!({"approve": true}))], ..Message::user("m", "") };
        assert!(approves(&data));
    }
}
