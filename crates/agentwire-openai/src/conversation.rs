//! The conversation the model sees, made of A2A tasks: the user's messages, the agent's answers
//! (its artifacts), and in the task at hand the tool calls and results it recorded.

use agentwire_types::{Message, PartContent, Role, Task};
use async_openai::types::chat::{
    ChatCompletionMessageToolCall, ChatCompletionMessageToolCalls, ChatCompletionRequestAssistantMessage,
    ChatCompletionRequestAssistantMessageContent, ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestSystemMessageContent, ChatCompletionRequestToolMessage,
    ChatCompletionRequestToolMessageContent, ChatCompletionRequestUserMessage, ChatCompletionRequestUserMessageContent,
    FunctionCall,
};

use crate::records::{Record, ToolCall, ToolResult};

/// The id of the artifact that holds the model's answer.
pub(crate) const ANSWER: &str = "answer";

/// A message the model cannot take, and why: the task is rejected with the reason.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Unreadable(pub(crate) String);

/// The chat so far, oldest first.
#[derive(Debug, Clone, Default)]
pub(crate) struct Conversation {
    pub(crate) messages: Vec<ChatCompletionRequestMessage>,
}

impl Conversation {
    /// A conversation that starts with `system`, if any.
    pub(crate) fn new(system: Option<&str>) -> Self {
        let mut conversation = Self::default();
        if let Some(system) = system.filter(|s| !s.is_empty()) {
            let content = ChatCompletionRequestSystemMessageContent::Text(system.to_owned());
            conversation.messages.push(ChatCompletionRequestSystemMessage { content, name: None }.into());
        }
        conversation
    }

    /// An earlier task of the context: its user messages and the answer it gave. Its tool calls
    /// are left out (the answer says what came of them), and so are the answers to approvals.
    pub(crate) fn add_earlier(&mut self, task: &Task) -> Result<(), Unreadable> {
        for turn in turns(&task.history) {
            if let Turn::User(message) = turn {
                self.user(message)?;
            }
        }
        let answer: String = task
            .artifacts
            .iter()
            .filter(|artifact| artifact.artifact_id == ANSWER)
            .flat_map(|artifact| artifact.parts.iter().filter_map(|part| part.as_text()))
            .collect();
        if !answer.is_empty() {
            self.assistant(answer, Vec::new());
        }
        Ok(())
    }

    /// The task at hand, in full: `history` (oldest first) with its tool calls and results,
    /// which the model must see again to go on after an approval.
    pub(crate) fn add_current(&mut self, history: &[Message]) -> Result<(), Unreadable> {
        for turn in turns(history) {
            match turn {
                Turn::User(message) => self.user(message)?,
                Turn::Record(Record::ToolCalls { calls, text }) => self.assistant(text, calls),
                Turn::Record(Record::ToolResult(result)) => self.tool_result(&result),
                Turn::Record(Record::Approval { .. }) => {}
            }
        }
        Ok(())
    }

    /// A user message, as text: its text parts, text files and JSON data.
    pub(crate) fn user(&mut self, message: &Message) -> Result<(), Unreadable> {
        let content = ChatCompletionRequestUserMessageContent::Text(user_text(message)?);
        self.messages.push(ChatCompletionRequestUserMessage { content, name: None }.into());
        Ok(())
    }

    /// The model's own turn: what it said and the tools it called.
    pub(crate) fn assistant(&mut self, text: String, calls: Vec<ToolCall>) {
        let tool_calls: Vec<_> = calls
            .into_iter()
            .map(|call| {
                ChatCompletionMessageToolCalls::Function(ChatCompletionMessageToolCall {
                    id: call.id,
                    function: FunctionCall { name: call.name, arguments: call.arguments },
                })
            })
            .collect();
        let message = ChatCompletionRequestAssistantMessage {
            content: (!text.is_empty()).then_some(ChatCompletionRequestAssistantMessageContent::Text(text)),
            tool_calls: (!tool_calls.is_empty()).then_some(tool_calls),
            ..ChatCompletionRequestAssistantMessage::default()
        };
        self.messages.push(message.into());
    }

    /// What a tool call gave back.
    pub(crate) fn tool_result(&mut self, result: &ToolResult) {
        let content = if result.is_error { format!("Error: {}", result.content) } else { result.content.clone() };
        let message = ChatCompletionRequestToolMessage {
            content: ChatCompletionRequestToolMessageContent::Text(content),
            tool_call_id: result.id.clone(),
        };
        self.messages.push(message.into());
    }
}

/// A step of a task's history as the model sees it.
enum Turn<'a> {
    User(&'a Message),
    Record(Record),
}

/// The user's messages and the agent's records in `history`, without the answers to approvals:
/// an approval's outcome is the tool result recorded after it.
fn turns(history: &[Message]) -> impl Iterator<Item = Turn<'_>> {
    let mut awaiting_approval = false;
    history.iter().flat_map(move |message| {
        let turns: Vec<Turn<'_>> = if message.role == Role::User {
            let answer = std::mem::take(&mut awaiting_approval);
            if answer {
                Vec::new()
            } else {
                vec![Turn::User(message)]
            }
        } else {
            let records: Vec<Record> = Record::all_in(message).collect();
            awaiting_approval |= records.iter().any(|r| matches!(r, Record::Approval { .. }));
            records.into_iter().map(Turn::Record).collect()
        };
        turns
    })
}

/// A user message as the text the model reads: text parts as they are, data parts as JSON, and
/// files of text (UTF-8) with their name. The server has already refused the media types the
/// agent's card does not accept; files by URL are not fetched.
fn user_text(message: &Message) -> Result<String, Unreadable> {
    let mut pieces = Vec::with_capacity(message.parts.len());
    for part in &message.parts {
        let name = part.filename.as_deref().filter(|n| !n.is_empty()).unwrap_or("a file");
        match &part.content {
            PartContent::Text(text) => pieces.push(text.clone()),
            PartContent::Data(value) => pieces.push(value.to_string()),
            PartContent::Raw(bytes) => {
                let text = std::str::from_utf8(bytes)
                    .map_err(|_| Unreadable(format!("{name} is not UTF-8 text, which is all this agent reads")))?;
                pieces.push(format!("File {name}:\n{text}"));
            }
            PartContent::Url(url) => {
                return Err(Unreadable(format!(
                    "{name} is sent by URL ({url}), which this agent does not fetch: send its content instead"
                )));
            }
        }
    }
    Ok(pieces.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use agentwire_types::{Artifact, Part};
    use serde_json::json;

    use super::*;

    fn roles(conversation: &Conversation) -> Vec<String> {
        conversation
            .messages
            .iter()
            .map(|m| serde_json::to_value(m).unwrap()["role"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn parts_become_text_and_urls_are_refused() {
        let message = Message {
            parts: vec![
                Part::text("Summarize:"),
                Part::raw(b"a,b\n1,2".to_vec(), "data.csv", "text/csv"),
                Part::data(json!({"k": 1})),
            ],
            ..Message::user("m", "")
        };
        assert_eq!(user_text(&message).unwrap(), "Summarize:\n\nFile data.csv:\na,b\n1,2\n\n{\"k\":1}");
        let binary =
            Message { parts: vec![Part::raw(vec![0xff, 0xfe], "x.txt", "text/plain")], ..Message::user("m", "") };
        assert!(user_text(&binary).unwrap_err().0.contains("x.txt is not UTF-8"));
        let url = Message {
            parts: vec![Part { content: PartContent::Url("https://example.com/a.txt".into()), ..Part::text("") }],
            ..Message::user("m", "")
        };
        assert!(user_text(&url).unwrap_err().0.contains("does not fetch"));
    }

    #[test]
    fn earlier_tasks_give_their_messages_and_answer() {
        let approval =
            Message { parts: vec![Record::Approval { calls: Vec::new() }.part()], ..Message::agent("a1", "") };
        let task = Task {
            history: vec![Message::user("u1", "add 2 and 3"), approval, Message::user("u2", "yes")],
            artifacts: vec![Artifact {
                artifact_id: ANSWER.into(),
                parts: vec![Part::text("It is "), Part::text("5")],
                ..Artifact::default()
            }],
            ..Task::default()
        };
        let mut conversation = Conversation::new(Some("Be brief."));
        conversation.add_earlier(&task).unwrap();
        assert_eq!(roles(&conversation), ["system", "user", "assistant"]);
        let answer = serde_json::to_value(&conversation.messages[2]).unwrap();
        assert_eq!(answer["content"], "It is 5");
    }

    #[test]
    fn the_current_task_keeps_its_tool_calls() {
        let call = ToolCall { id: "c1".into(), name: "add".into(), arguments: "{\"a\":2}".into() };
        let result = ToolResult { id: "c1".into(), name: "add".into(), content: "5".into(), is_error: false };
        let agent = |record: Record| Message { parts: vec![record.part()], ..Message::agent("a", "") };
        let history = vec![
            Message::user("u1", "add"),
            agent(Record::ToolCalls { calls: vec![call.clone()], text: String::new() }),
            agent(Record::Approval { calls: vec![call] }),
            // The answer to the approval is not a turn of the user's: its outcome, the result, is.
            Message::user("u2", "yes"),
            agent(Record::ToolResult(result)),
        ];
        let mut conversation = Conversation::new(None);
        conversation.add_current(&history).unwrap();
        assert_eq!(roles(&conversation), ["user", "assistant", "tool"]);
        let wire = serde_json::to_value(&conversation.messages[1]).unwrap();
        assert_eq!(wire["tool_calls"][0]["function"]["name"], "add");
        assert_eq!(serde_json::to_value(&conversation.messages[2]).unwrap()["tool_call_id"], "c1");
    }
}
