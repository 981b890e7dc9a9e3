//! One streamed answer of the model: its text as it comes, the tool calls it assembles, and
//! how it ended.

use async_openai::error::OpenAIError;
use async_openai::types::chat::{CreateChatCompletionStreamResponse, FinishReason};
use serde_json::Value;

use crate::records::ToolCall;

/// How an answer ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ending {
    /// The answer is complete.
    Stop,
    /// The model reached its token limit: the answer is cut short.
    Length,
    /// The model wants these tools called before it goes on.
    ToolCalls(Vec<ToolCall>),
    /// The model declined, saying this.
    Refusal(String),
    /// The provider's content filter stopped the answer.
    Filtered,
    /// The stream ended without saying how the answer did: the server broke off.
    Unfinished,
}

/// Assembles an answer from its stream of chunks.
#[derive(Debug, Default)]
pub(crate) struct Answer {
    /// The text so far.
    pub(crate) text: String,
    refusal: String,
    /// Tool calls by their index in the stream.
    calls: Vec<ToolCall>,
    finish: Option<FinishReason>,
}

impl Answer {
    /// Takes in a chunk of the stream; returns the text it adds, if any.
    pub(crate) fn push(&mut self, chunk: CreateChatCompletionStreamResponse) -> Option<String> {
        // One choice is asked for (`n` is not set); a server may still number it otherwise.
        let choice = chunk.choices.into_iter().next()?;
        if let Some(reason) = choice.finish_reason {
            self.finish = Some(reason);
        }
        let delta = choice.delta;
        if let Some(refusal) = delta.refusal {
            self.refusal.push_str(&refusal);
        }
        for piece in delta.tool_calls.unwrap_or_default() {
            let index = piece.index as usize;
            if self.calls.len() <= index {
                let blank = ToolCall { id: String::new(), name: String::new(), arguments: String::new() };
                self.calls.resize(index + 1, blank);
            }
            let call = &mut self.calls[index];
            if let Some(id) = piece.id.filter(|id| !id.is_empty()) {
                call.id = id;
            }
            if let Some(function) = piece.function {
                call.name.push_str(function.name.as_deref().unwrap_or(""));
                call.arguments.push_str(function.arguments.as_deref().unwrap_or(""));
            }
        }
        let text = delta.content.filter(|text| !text.is_empty())?;
        self.text.push_str(&text);
        Some(text)
    }

    /// How the answer ended, once its stream is over. Tool calls count whatever the finish
    /// reason says (some servers end a tool call with `stop`); without a finish reason the
    /// server broke off, and a tool call may be cut short too.
    pub(crate) fn ending(self) -> Ending {
        let Some(finish) = self.finish else { return Ending::Unfinished };
        if !self.refusal.is_empty() {
            return Ending::Refusal(self.refusal);
        }
        let calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .enumerate()
            .filter(|(_, call)| !call.name.is_empty())
            .map(|(index, mut call)| {
                if call.id.is_empty() {
                    call.id = format!("call_{index}");
                }
                call
            })
            .collect();
        if !calls.is_empty() {
            return Ending::ToolCalls(calls);
        }
        match finish {
            FinishReason::Length => Ending::Length,
            FinishReason::ContentFilter => Ending::Filtered,
            _ => Ending::Stop,
        }
    }
}

/// What went wrong with a model request, in the words the server used when it gave any.
pub(crate) fn error_message(error: &OpenAIError) -> String {
    match error {
        OpenAIError::ApiError(response) => {
            let message = &response.api_error.message;
            // A server error's body is kept whole by the client: it is often an error object too.
            let message = inner_message(message).unwrap_or_else(|| message.clone());
            format!("the model's server answered {}: {message}", response.status_code)
        }
        OpenAIError::JSONDeserialize(error, content) => match inner_message(content) {
            Some(message) => format!("the model's server failed: {message}"),
            None => format!("the model's answer could not be read: {error}"),
        },
        OpenAIError::Reqwest(error) => format!("the model's server could not be reached: {error}"),
        OpenAIError::StreamError(error) => format!("the model's answer broke off: {error}"),
        other => format!("the model request failed: {other}"),
    }
}

/// The `error.message` of an OpenAI error object, if `text` is one.
fn inner_message(text: &str) -> Option<String> {
    let value: Value = serde_json::from_str(text).ok()?;
    let error = value.get("error")?;
    error.get("message").and_then(Value::as_str).or_else(|| error.as_str()).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn chunk(delta: Value, finish: Option<&str>) -> CreateChatCompletionStreamResponse {
        serde_json::from_value(json!({
            "id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }))
        .unwrap()
    }

    #[test]
    fn text_arrives_as_it_comes() {
        let mut answer = Answer::default();
        assert_eq!(answer.push(chunk(json!({"role": "assistant", "content": ""}), None)), None);
        assert_eq!(answer.push(chunk(json!({"content": "Hel"}), None)).as_deref(), Some("Hel"));
        assert_eq!(answer.push(chunk(json!({"content": "lo"}), Some("stop"))).as_deref(), Some("lo"));
        assert_eq!(answer.text, "Hello");
        assert_eq!(answer.ending(), Ending::Stop);
    }

    #[test]
    fn finish_reasons_map_to_endings() {
        let end = |finish: &str| {
            let mut answer = Answer::default();
            answer.push(chunk(json!({"content": "x"}), Some(finish)));
            answer.ending()
        };
        assert_eq!(end("length"), Ending::Length);
        let mut cut = Answer::default();
        cut.push(chunk(json!({"content": "The answer is"}), None));
        assert_eq!(cut.ending(), Ending::Unfinished);
        assert_eq!(end("content_filter"), Ending::Filtered);
        let mut refused = Answer::default();
        refused.push(chunk(json!({"refusal": "I can't help with that."}), Some("stop")));
        assert_eq!(refused.ending(), Ending::Refusal("I can't help with that.".into()));
    }

    #[test]
    fn tool_calls_are_assembled_by_index() {
        let mut answer = Answer::default();
        let piece = |index: u32, id: Option<&str>, name: Option<&str>, arguments: &str| {
            json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                   "function": {"name": name, "arguments": arguments}}]})
        };
        answer.push(chunk(piece(0, Some("call_a"), Some("add"), ""), None));
        answer.push(chunk(piece(1, None, Some("shout"), "{\"text\":"), None));
        answer.push(chunk(piece(0, None, None, "{\"a\":2}"), None));
        answer.push(chunk(piece(1, None, None, "\"hi\"}"), Some("stop")));
        let Ending::ToolCalls(calls) = answer.ending() else { panic!("tool calls expected") };
        assert_eq!(calls[0], ToolCall { id: "call_a".into(), name: "add".into(), arguments: "{\"a\":2}".into() });
        assert_eq!(
            calls[1],
            ToolCall { id: "call_1".into(), name: "shout".into(), arguments: "{\"text\":\"hi\"}".into() }
        );
    }

    #[test]
    fn error_messages_are_the_servers() {
        let body = r#"{"error":{"message":"litellm.InternalServerError: out of order","type":null}}"#;
        let error = OpenAIError::JSONDeserialize(serde_json::from_str::<u8>("x").unwrap_err(), body.into());
        assert_eq!(error_message(&error), "the model's server failed: litellm.InternalServerError: out of order");
        assert!(inner_message("not json").is_none());
    }
}
