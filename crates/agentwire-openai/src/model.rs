//! One streamed answer of the model: its text as it comes, the tool calls it assembles, and
//! how it ended.

use std::collections::BTreeMap;

use async_openai::types::chat::{ChatChoiceStream, FinishReason};
use serde::Deserialize;
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

/// A chunk of the stream, as the agent reads it: its choices and the usage it reports. The
/// other members (`id`, `created`, `model`…) are not read, so that a server that leaves them out
/// or spells them oddly does not lose the answer.
#[derive(Debug, Deserialize)]
pub(crate) struct Chunk {
    #[serde(default)]
    choices: Vec<ChatChoiceStream>,
    /// Read leniently ([`Reported::of`]): a usage the agent cannot read loses the figures only.
    #[serde(default)]
    usage: Option<Value>,
    /// A server that fails mid-stream sends an error object instead of a chunk.
    #[serde(default)]
    error: Option<Value>,
}

/// Tokens a server says a request took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reported {
    pub(crate) input: u64,
    pub(crate) output: u64,
}

impl Reported {
    /// The figures of an OpenAI usage object, if it has its two counts as whole numbers.
    fn of(usage: &Value) -> Option<Self> {
        let count = |name: &str| usage.get(name).and_then(Value::as_u64);
        Some(Self { input: count("prompt_tokens")?, output: count("completion_tokens")? })
    }
}

/// The most tool calls one answer may make ([`Answer::push`] fails past it).
pub(crate) const MAX_TOOL_CALLS: usize = 128;

/// Assembles an answer from its stream of chunks, within a bound of bytes: the text (which the
/// caller keeps, not the answer), the refusal, and the ids, names and arguments of tool calls.
#[derive(Debug)]
pub(crate) struct Answer {
    /// Bytes taken in so far.
    size: usize,
    max_bytes: usize,
    refusal: String,
    /// Tool calls by the index the stream gives them, which may be any number: a map, not a
    /// vector that would grow to it.
    calls: BTreeMap<u32, ToolCall>,
    finish: Option<FinishReason>,
    /// The tokens the server says the request took, from the chunk that carries them.
    usage: Option<Reported>,
}

impl Answer {
    /// An answer of at most `max_bytes`.
    pub(crate) fn new(max_bytes: usize) -> Self {
        Self { size: 0, max_bytes, refusal: String::new(), calls: BTreeMap::new(), finish: None, usage: None }
    }

    /// The bytes of answer taken in so far.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// The tokens the server reported for the request, if it did.
    pub(crate) fn usage(&self) -> Option<Reported> {
        self.usage
    }

    /// Takes in a chunk of the stream; returns the text it adds, if any, or why the answer is
    /// refused: it passed the bound of bytes or of tool calls.
    pub(crate) fn push(&mut self, chunk: Chunk) -> Result<Option<String>, String> {
        // Asked for with `include_usage`: a last chunk without choices (or, from some servers,
        // every chunk) carries the request's usage so far.
        if let Some(reported) = chunk.usage.as_ref().and_then(Reported::of) {
            self.usage = Some(reported);
        }
        // One choice is asked for (`n` is not set); a server may still number it otherwise.
        let Some(choice) = chunk.choices.into_iter().next() else { return Ok(None) };
        if let Some(reason) = choice.finish_reason {
            self.finish = Some(reason);
        }
        let delta = choice.delta;
        if let Some(refusal) = delta.refusal {
            self.count(refusal.len())?;
            self.refusal.push_str(&refusal);
        }
        for piece in delta.tool_calls.unwrap_or_default() {
            let id = piece.id.filter(|id| !id.is_empty());
            let (name, arguments) = piece.function.map(|f| (f.name, f.arguments)).unwrap_or_default();
            let (name, arguments) = (name.unwrap_or_default(), arguments.unwrap_or_default());
            self.count(id.as_ref().map_or(0, String::len) + name.len() + arguments.len())?;
            if !self.calls.contains_key(&piece.index) && self.calls.len() == MAX_TOOL_CALLS {
                return Err(format!("the model's answer has more than {MAX_TOOL_CALLS} tool calls"));
            }
            let call = self.calls.entry(piece.index).or_insert_with(|| ToolCall {
                id: String::new(),
                name: String::new(),
                arguments: String::new(),
            });
            if let Some(id) = id {
                call.id = id;
            }
            call.name.push_str(&name);
            call.arguments.push_str(&arguments);
        }
        let Some(text) = delta.content.filter(|text| !text.is_empty()) else { return Ok(None) };
        self.count(text.len())?;
        Ok(Some(text))
    }

    /// Counts `bytes` more, unless they take the answer past its bound.
    fn count(&mut self, bytes: usize) -> Result<(), String> {
        self.size = self.size.saturating_add(bytes);
        if self.size > self.max_bytes {
            return Err(too_large(self.max_bytes));
        }
        Ok(())
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

/// Why an answer past `max_bytes` fails its task.
pub(crate) fn too_large(max_bytes: usize) -> String {
    format!("the model's answer is larger than this agent's bound of {max_bytes} bytes")
}

/// Why a chat request failed with `status`, in the words of the server's `body` (an OpenAI error
/// object, or text) when it gave any.
pub(crate) fn refusal_message(status: impl std::fmt::Display, body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let message = inner_message(&text).unwrap_or_else(|| text.trim().to_owned());
    if message.is_empty() {
        return format!("the model's server answered {status}");
    }
    format!("the model's server answered {status}: {message}")
}

/// A chunk of the stream, from the data of its event; a server that fails mid-stream sends an
/// error object instead, whose message is kept.
pub(crate) fn read_chunk(data: &str) -> Result<Chunk, String> {
    let failed = |message: String| format!("the model's server failed: {message}");
    match serde_json::from_str::<Chunk>(data) {
        Ok(chunk) if chunk.error.is_none() => Ok(chunk),
        Ok(_) => Err(failed(inner_message(data).unwrap_or_else(|| agentwire_types::text::clip(data.to_owned(), 1024)))),
        Err(error) => Err(match inner_message(data) {
            Some(message) => failed(message),
            None => format!("the model's answer could not be read: {error}"),
        }),
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

    fn chunk(delta: Value, finish: Option<&str>) -> Chunk {
        serde_json::from_value(json!({
            "id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }))
        .unwrap()
    }

    fn piece(index: u32, id: Option<&str>, name: Option<&str>, arguments: &str) -> Value {
        json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                               "function": {"name": name, "arguments": arguments}}]})
    }

    #[test]
    fn text_arrives_as_it_comes() {
        let mut answer = Answer::new(1024);
        assert_eq!(answer.push(chunk(json!({"role": "assistant", "content": ""}), None)), Ok(None));
        assert_eq!(answer.push(chunk(json!({"content": "Hel"}), None)), Ok(Some("Hel".into())));
        assert_eq!(answer.push(chunk(json!({"content": "lo"}), Some("stop"))), Ok(Some("lo".into())));
        assert_eq!(answer.ending(), Ending::Stop);
    }

    #[test]
    fn the_usage_chunk_is_kept() {
        let mut answer = Answer::new(1024);
        answer.push(chunk(json!({"content": "Hi"}), Some("stop"))).unwrap();
        assert!(answer.usage().is_none());
        let usage = json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
                           "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}});
        assert_eq!(answer.push(serde_json::from_value(usage).unwrap()), Ok(None));
        assert_eq!(answer.usage(), Some(Reported { input: 9, output: 1 }));
        assert_eq!(answer.size(), 2);
        assert_eq!(answer.ending(), Ending::Stop);
    }

    #[test]
    fn odd_usage_and_missing_members_lose_no_answer() {
        let mut answer = Answer::new(1024);
        // No id, created, object or model; a usage whose counts are not whole numbers.
        let odd = json!({"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": "stop"}],
                         "usage": {"prompt_tokens": -3, "completion_tokens": 1.5}});
        assert_eq!(answer.push(read_chunk(&odd.to_string()).unwrap()), Ok(Some("Hi".into())));
        assert_eq!(answer.usage(), None);
        let without_total = json!({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 8}});
        answer.push(read_chunk(&without_total.to_string()).unwrap()).unwrap();
        assert_eq!(answer.usage(), Some(Reported { input: 5, output: 8 }));
        assert_eq!(answer.ending(), Ending::Stop);
    }

    #[test]
    fn finish_reasons_map_to_endings() {
        let end = |finish: &str| {
            let mut answer = Answer::new(1024);
            answer.push(chunk(json!({"content": "x"}), Some(finish))).unwrap();
            answer.ending()
        };
        assert_eq!(end("length"), Ending::Length);
        let mut cut = Answer::new(1024);
        cut.push(chunk(json!({"content": "The answer is"}), None)).unwrap();
        assert_eq!(cut.ending(), Ending::Unfinished);
        assert_eq!(end("content_filter"), Ending::Filtered);
        let mut refused = Answer::new(1024);
        refused.push(chunk(json!({"refusal": "I can't help with that."}), Some("stop"))).unwrap();
        assert_eq!(refused.ending(), Ending::Refusal("I can't help with that.".into()));
    }

    #[test]
    fn tool_calls_are_assembled_by_index() {
        let mut answer = Answer::new(1024);
        answer.push(chunk(piece(0, Some("call_a"), Some("add"), ""), None)).unwrap();
        answer.push(chunk(piece(1, None, Some("shout"), "{\"text\":"), None)).unwrap();
        answer.push(chunk(piece(0, None, None, "{\"a\":2}"), None)).unwrap();
        answer.push(chunk(piece(1, None, None, "\"hi\"}"), Some("stop"))).unwrap();
        let Ending::ToolCalls(calls) = answer.ending() else { panic!("tool calls expected") };
        assert_eq!(calls[0], ToolCall { id: "call_a".into(), name: "add".into(), arguments: "{\"a\":2}".into() });
        assert_eq!(
            calls[1],
            ToolCall { id: "call_1".into(), name: "shout".into(), arguments: "{\"text\":\"hi\"}".into() }
        );
    }

    #[test]
    fn any_index_costs_one_call_and_calls_are_bounded() {
        let mut answer = Answer::new(1024 * 1024);
        answer.push(chunk(piece(u32::MAX, Some("call_x"), Some("nope"), "{}"), Some("tool_calls"))).unwrap();
        let Ending::ToolCalls(calls) = answer.ending() else { panic!("tool calls expected") };
        assert_eq!(calls.len(), 1);
        let mut many = Answer::new(1024 * 1024);
        for index in 0..MAX_TOOL_CALLS as u32 {
            many.push(chunk(piece(index * 1000, None, Some("add"), "{}"), None)).unwrap();
        }
        // More pieces of a call it has are welcome; a new call is not.
        many.push(chunk(piece(0, None, None, " "), None)).unwrap();
        let refused = many.push(chunk(piece(7, None, Some("add"), "{}"), None)).unwrap_err();
        assert_eq!(refused, "the model's answer has more than 128 tool calls");
    }

    #[test]
    fn text_refusal_names_and_arguments_count_against_the_bound() {
        let mut answer = Answer::new(10);
        answer.push(chunk(json!({"content": "12345"}), None)).unwrap();
        answer.push(chunk(piece(0, None, Some("ab"), "cd"), None)).unwrap();
        let refused = answer.push(chunk(json!({"refusal": "xy"}), None)).unwrap_err();
        assert!(refused.contains("larger than this agent's bound of 10 bytes"), "{refused}");
    }

    #[test]
    fn error_messages_are_the_servers() {
        let body = r#"{"error":{"message":"litellm.InternalServerError: out of order","type":null}}"#;
        assert_eq!(
            read_chunk(body).unwrap_err(),
            "the model's server failed: litellm.InternalServerError: out of order"
        );
        assert!(read_chunk("{").unwrap_err().starts_with("the model's answer could not be read: "));
        assert_eq!(
            refusal_message("500 Internal Server Error", body.as_bytes()),
            "the model's server answered 500 Internal Server Error: litellm.InternalServerError: out of order"
        );
        assert_eq!(refusal_message(404, b" no such model\n"), "the model's server answered 404: no such model");
        assert_eq!(refusal_message(502, b""), "the model's server answered 502");
        assert!(inner_message("not json").is_none());
    }
}
