//! The agent: a context is a conversation with the model, a task one turn of it.

use std::collections::HashSet;
use std::sync::Arc;

use agentwire_server::agent::{AgentError, AgentExecutor, EventStream, ExecutionContext, TaskUpdater};
use agentwire_types::{AgentCard, AgentSkill, Artifact, Message, Part, TaskState};
use async_openai::config::OpenAIConfig;
use async_openai::types::chat::CreateChatCompletionRequest;
use async_openai::Client;
use futures_util::StreamExt;

use crate::conversation::{Conversation, Unreadable, ANSWER};
use crate::model::{error_message, Answer, Ending};
use crate::records::{approves, pending_calls, Record, ToolCall, ToolResult};
use crate::toolbox::Toolbox;

/// The default bound of the conversation the model is given from earlier tasks
/// ([`OpenAiAgentBuilder::max_history_bytes`]).
pub const DEFAULT_MAX_HISTORY_BYTES: usize = 64 * 1024;

/// The default number of tool-call rounds in one task ([`OpenAiAgentBuilder::max_tool_rounds`]).
pub const DEFAULT_MAX_TOOL_ROUNDS: usize = 8;

/// An agent whose answers come from a chat model behind an OpenAI-compatible chat-completions
/// API (OpenAI, vLLM, llama.cpp's server, Ollama, LiteLLM…), with the tools of MCP servers.
///
/// - A context is a conversation: the user's messages and the answers of the caller's earlier
///   tasks in the same `contextId` are the history the model sees, newest kept within
///   [`max_history_bytes`](OpenAiAgentBuilder::max_history_bytes).
/// - The answer streams: each piece of text the model sends is a chunk of the artifact
///   `answer` (`append`, `lastChunk` on the last).
/// - How the model stops decides the task's state: a complete answer COMPLETED, a cut one
///   (`length`) COMPLETED with a note saying so, a refusal or a content filter REJECTED, a
///   failed request FAILED with the server's message. Cancelling the task drops the request.
/// - Tool calls run on their MCP server; each call and result is a status message of the task
///   (a data part `{"toolCalls": …}` / `{"toolResult": …}`). A tool that needs approval pauses
///   the task INPUT_REQUIRED (`{"approval": …}`); a next message starting with "yes" (or a data
///   part `{"approve": true}`) approves the calls, anything else refuses them.
/// - The user's messages reach the model as text: text parts, text files and JSON data. Files
///   by URL and bytes that are not UTF-8 reject the task.
///
/// ```no_run
/// use agentwire_openai::OpenAiAgent;
/// use agentwire_server::{CardConfig, RequestHandler};
///
/// let agent = OpenAiAgent::builder("http://127.0.0.1:11434/v1", "llama3.2")
///     .system_prompt("You answer in one sentence.")
///     .build();
/// let card = CardConfig { card: agent.card(), ..CardConfig::default() };
/// let handler = RequestHandler::builder(agent).card(card).build();
/// ```
#[derive(Clone)]
pub struct OpenAiAgent {
    settings: Arc<Settings>,
}

struct Settings {
    client: Client<OpenAIConfig>,
    model: String,
    system_prompt: Option<String>,
    toolbox: Toolbox,
    approve: HashSet<String>,
    max_history_bytes: usize,
    max_tool_rounds: usize,
}

impl std::fmt::Debug for OpenAiAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let settings = &self.settings;
        f.debug_struct("OpenAiAgent")
            .field("model", &settings.model)
            .field("tools", &settings.toolbox.names())
            .field("approve", &settings.approve)
            .finish_non_exhaustive()
    }
}

/// Settings of an [`OpenAiAgent`].
#[derive(Debug)]
pub struct OpenAiAgentBuilder {
    base_url: String,
    model: String,
    api_key: Option<String>,
    system_prompt: Option<String>,
    toolbox: Toolbox,
    approve: HashSet<String>,
    max_history_bytes: usize,
    max_tool_rounds: usize,
}

impl OpenAiAgentBuilder {
    /// The API key sent as a bearer token (by default, the `OPENAI_API_KEY` variable's, if set).
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// The system prompt that opens every conversation.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// The tools offered to the model.
    pub fn tools(mut self, toolbox: Toolbox) -> Self {
        self.toolbox = toolbox;
        self
    }

    /// A tool (by the name the model knows it by, or its server's) whose calls wait for the
    /// user's approval.
    pub fn approve(mut self, tool: impl Into<String>) -> Self {
        self.approve.insert(tool.into());
        self
    }

    /// The most of the earlier tasks of a context the model is given, as their size in memory
    /// (default [`DEFAULT_MAX_HISTORY_BYTES`]); the newest are kept, the task at hand always.
    pub fn max_history_bytes(mut self, bytes: usize) -> Self {
        self.max_history_bytes = bytes;
        self
    }

    /// How many rounds of tool calls one task may make before it fails (default
    /// [`DEFAULT_MAX_TOOL_ROUNDS`]).
    pub fn max_tool_rounds(mut self, rounds: usize) -> Self {
        self.max_tool_rounds = rounds;
        self
    }

    /// The agent.
    pub fn build(self) -> OpenAiAgent {
        // The client's reqwest uses rustls without choosing its cryptography: the workspace's
        // (ring) is installed for the process, unless one already is.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut config = OpenAIConfig::new().with_api_base(self.base_url.trim_end_matches('/'));
        if let Some(key) = self.api_key {
            config = config.with_api_key(key);
        }
        let settings = Settings {
            client: Client::with_config(config),
            model: self.model,
            system_prompt: self.system_prompt,
            toolbox: self.toolbox,
            approve: self.approve,
            max_history_bytes: self.max_history_bytes,
            max_tool_rounds: self.max_tool_rounds.max(1),
        };
        OpenAiAgent { settings: Arc::new(settings) }
    }
}

impl OpenAiAgent {
    /// An agent of `model` at `base_url`, the API's root as OpenAI's own clients take it
    /// (`https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`…).
    pub fn builder(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiAgentBuilder {
        OpenAiAgentBuilder {
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            system_prompt: None,
            toolbox: Toolbox::default(),
            approve: HashSet::new(),
            max_history_bytes: DEFAULT_MAX_HISTORY_BYTES,
            max_tool_rounds: DEFAULT_MAX_TOOL_ROUNDS,
        }
    }

    /// The names the model knows its tools by.
    pub fn tool_names(&self) -> Vec<&str> {
        self.settings.toolbox.names()
    }

    /// A card for the agent: named after its model, taking text, text files and JSON, with a
    /// `chat` skill and one skill per tool.
    pub fn card(&self) -> AgentCard {
        let settings = &self.settings;
        let mut skills = vec![AgentSkill {
            id: "chat".into(),
            name: "Chat".into(),
            description: format!(
                "Answers in conversation with the model {}; a message in the same context continues it",
                settings.model
            ),
            tags: vec!["chat".into(), "llm".into()],
            ..AgentSkill::default()
        }];
        skills.extend(settings.toolbox.describe().into_iter().map(|(name, description)| AgentSkill {
            id: name.clone(),
            name,
            description,
            tags: vec!["tool".into()],
            ..AgentSkill::default()
        }));
        AgentCard {
            name: settings.model.clone(),
            description: format!("The model {} as an A2A agent", settings.model),
            default_input_modes: vec!["text/*".into(), "application/json".into()],
            default_output_modes: vec!["text/plain".into()],
            skills,
            ..AgentCard::default()
        }
    }
}

impl AgentExecutor for OpenAiAgent {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let settings = Arc::clone(&self.settings);
        // Boxed: the execution's future is held in the server's for as long as the model talks.
        ctx.run(|ctx, updater| Box::pin(Turn { settings, ctx, updater }.run()))
    }
}

/// One task's turn of the conversation.
struct Turn {
    settings: Arc<Settings>,
    ctx: ExecutionContext,
    updater: TaskUpdater,
}

/// Why a turn stopped before the model finished.
enum Stopped {
    Canceled,
    Failed(String),
}

impl Turn {
    async fn run(self) -> Result<(), AgentError> {
        let mut conversation = match self.conversation().await? {
            Ok(conversation) => conversation,
            Err(Unreadable(reason)) => return self.updater.reject(reason).await,
        };
        self.updater.working().await?;
        let mut answer = AnswerArtifact::of(self.updater.clone(), self.ctx.task.as_deref());
        let pending = self.ctx.task.as_ref().map(|task| pending_calls(&task.history)).unwrap_or_default();
        if !pending.is_empty() {
            let approved = approves(&self.ctx.message);
            for call in &pending {
                let result = if approved {
                    match self.call_tool(call).await {
                        Some(result) => result,
                        None => return self.updater.canceled().await,
                    }
                } else {
                    refused(call, &self.ctx.message)
                };
                self.record_result(&mut conversation, result).await?;
            }
        }
        for _ in 0..self.settings.max_tool_rounds {
            let (text, ending) = match self.ask(&conversation, &mut answer).await? {
                Ok(answered) => answered,
                Err(Stopped::Canceled) => return self.updater.canceled().await,
                Err(Stopped::Failed(reason)) => return self.updater.fail(reason).await,
            };
            let calls = match ending {
                Ending::Stop => {
                    answer.finish().await?;
                    return self.updater.complete().await;
                }
                Ending::Length => {
                    answer.finish().await?;
                    return self
                        .updater
                        .complete_with("The answer was cut short: the model reached its length limit.")
                        .await;
                }
                Ending::Refusal(refusal) => return self.updater.reject(refusal).await,
                Ending::Filtered => return self.updater.reject("The model's content filter stopped the answer.").await,
                Ending::Unfinished => {
                    return self
                        .updater
                        .fail("the model's answer broke off: its stream ended before it finished")
                        .await;
                }
                Ending::ToolCalls(calls) => calls,
            };
            match self.run_tools(&mut conversation, text, calls).await? {
                Round::Answered => {}
                Round::AwaitsApproval => return Ok(()),
                Round::Canceled => return self.updater.canceled().await,
            }
        }
        let rounds = self.settings.max_tool_rounds;
        self.updater.fail(format!("the model called tools {rounds} times in a row without answering")).await
    }

    /// The conversation so far: the system prompt, the earlier tasks of the context, this task.
    async fn conversation(&self) -> Result<Result<Conversation, Unreadable>, AgentError> {
        let settings = &self.settings;
        let mut conversation = Conversation::new(settings.system_prompt.as_deref());
        for task in self.ctx.earlier_tasks(settings.max_history_bytes).await? {
            if let Err(unreadable) = conversation.add_earlier(&task) {
                // An earlier message the model cannot take was refused then; it is left out now.
                tracing::debug!(task_id = %task.id, reason = %unreadable.0, "left out of the conversation");
            }
        }
        let added = match &self.ctx.task {
            Some(task) => conversation.add_current(&task.history),
            None => conversation.user(&self.ctx.message),
        };
        Ok(added.map(|()| conversation))
    }

    /// Asks the model and streams its text into the answer; returns the text and how it ended.
    async fn ask(
        &self,
        conversation: &Conversation,
        answer: &mut AnswerArtifact,
    ) -> Result<Result<(String, Ending), Stopped>, AgentError> {
        let settings = &self.settings;
        let tools = settings.toolbox.definitions();
        let request = CreateChatCompletionRequest {
            model: settings.model.clone(),
            messages: conversation.messages.clone(),
            tools: (!tools.is_empty()).then_some(tools),
            stream: Some(true),
            ..CreateChatCompletionRequest::default()
        };
        let cancel = self.ctx.cancellation();
        let chat = settings.client.chat();
        let started = tokio::select! {
            () = cancel.cancelled() => return Ok(Err(Stopped::Canceled)),
            started = chat.create_stream(request) => started,
        };
        let mut stream = match started {
            Ok(stream) => stream,
            Err(error) => return Ok(Err(Stopped::Failed(error_message(&error)))),
        };
        let mut assembled = Answer::default();
        loop {
            // Dropping the stream on a cancel closes the connection: the server stops generating.
            let chunk = tokio::select! {
                () = cancel.cancelled() => return Ok(Err(Stopped::Canceled)),
                chunk = stream.next() => chunk,
            };
            match chunk {
                None => break,
                Some(Ok(chunk)) => {
                    if let Some(text) = assembled.push(chunk) {
                        answer.push(text).await?;
                    }
                }
                Some(Err(error)) => return Ok(Err(Stopped::Failed(error_message(&error)))),
            }
        }
        let text = assembled.text.clone();
        Ok(Ok((text, assembled.ending())))
    }

    /// Records the model's tool calls and makes those that need no approval; pauses for the others.
    async fn run_tools(
        &self,
        conversation: &mut Conversation,
        text: String,
        calls: Vec<ToolCall>,
    ) -> Result<Round, AgentError> {
        let settings = &self.settings;
        conversation.assistant(text.clone(), calls.clone());
        let summary = calls.iter().map(|call| format!("{}({})", call.name, call.arguments)).collect::<Vec<_>>();
        let record = Record::ToolCalls { calls: calls.clone(), text };
        self.record(TaskState::Working, format!("Calling {}", summary.join(", ")), &record).await?;
        let (gated, free): (Vec<ToolCall>, Vec<ToolCall>) =
            calls.into_iter().partition(|call| settings.toolbox.is_among(&call.name, &settings.approve));
        for call in &free {
            let Some(result) = self.call_tool(call).await else { return Ok(Round::Canceled) };
            self.record_result(conversation, result).await?;
        }
        if gated.is_empty() {
            return Ok(Round::Answered);
        }
        let asks = gated.iter().map(|call| format!("{} with {}", call.name, call.arguments)).collect::<Vec<_>>();
        let question =
            format!("The model wants to call {}. Reply yes to approve, anything else to refuse.", asks.join(" and "));
        self.record(TaskState::InputRequired, question, &Record::Approval { calls: gated }).await?;
        Ok(Round::AwaitsApproval)
    }

    /// Makes `call`, unless the task is canceled first (`None`).
    async fn call_tool(&self, call: &ToolCall) -> Option<ToolResult> {
        tokio::select! {
            () = self.ctx.cancellation().cancelled() => None,
            result = self.settings.toolbox.call(call) => Some(result),
        }
    }

    /// Gives the model `result` and records it in the task.
    async fn record_result(&self, conversation: &mut Conversation, result: ToolResult) -> Result<(), AgentError> {
        conversation.tool_result(&result);
        let outcome = if result.is_error { "failed" } else { "answered" };
        let summary = format!("{} {outcome}: {}", result.name, first_line(&result.content));
        self.record(TaskState::Working, summary, &Record::ToolResult(result)).await
    }

    /// A status of the task with a message saying `text`, carrying `record`.
    async fn record(&self, state: TaskState, text: String, record: &Record) -> Result<(), AgentError> {
        let mut message = self.updater.message(text);
        message.parts.push(record.part());
        self.updater.status(state, Some(message)).await
    }
}

/// What came of a round of tool calls.
enum Round {
    /// Every call has its result: the model goes on.
    Answered,
    /// Some calls wait for the user's approval: the task is INPUT_REQUIRED.
    AwaitsApproval,
    Canceled,
}

/// A refused call's result: the model reads that the user said no, and what else they said.
fn refused(call: &ToolCall, answer: &Message) -> ToolResult {
    let said = answer.text();
    let content = if said.trim().is_empty() {
        "The user did not approve this call.".to_owned()
    } else {
        format!("The user did not approve this call; they said: {said}")
    };
    ToolResult { id: call.id.clone(), name: call.name.clone(), content, is_error: true }
}

/// The first line of `text`, at most 200 bytes, for a status line.
fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    let mut end = line.len().min(200);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    if end < text.len() {
        format!("{}…", &line[..end])
    } else {
        line.to_owned()
    }
}

/// The artifact `answer`: each piece of text a chunk appended as it comes, then the whole text
/// as the last chunk, which replaces the pieces. A reader of the stream sees the text grow; the
/// stored task keeps it as one part (the pieces would be a part each, hundreds in a long answer).
struct AnswerArtifact {
    updater: TaskUpdater,
    /// The text so far, the earlier rounds' and turns' included.
    text: String,
    /// The artifact exists: pieces append to it.
    started: bool,
}

impl AnswerArtifact {
    /// The answer of `task`, so far (none for a new task).
    fn of(updater: TaskUpdater, task: Option<&agentwire_types::Task>) -> Self {
        let artifact = task.and_then(|task| task.artifacts.iter().find(|artifact| artifact.artifact_id == ANSWER));
        let text = artifact.map(|a| a.parts.iter().filter_map(Part::as_text).collect()).unwrap_or_default();
        Self { updater, text, started: artifact.is_some() }
    }

    async fn push(&mut self, piece: String) -> Result<(), AgentError> {
        self.text.push_str(&piece);
        let append = std::mem::replace(&mut self.started, true);
        self.send(piece, append, false).await
    }

    /// Ends the artifact with the whole text (empty when the model said nothing).
    async fn finish(&mut self) -> Result<(), AgentError> {
        self.started = true;
        self.send(self.text.clone(), false, true).await
    }

    async fn send(&self, text: String, append: bool, last: bool) -> Result<(), AgentError> {
        let artifact = Artifact {
            artifact_id: ANSWER.into(),
            name: ANSWER.into(),
            parts: vec![Part::text(text)],
            ..Artifact::default()
        };
        self.updater.artifact_chunk(artifact, append, last).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_are_short() {
        assert_eq!(first_line("5"), "5");
        assert_eq!(first_line("a\nb"), "a…");
        assert_eq!(first_line(&"é".repeat(300)).chars().count(), 101);
    }

    #[test]
    fn refusals_quote_the_user() {
        let call = ToolCall { id: "c".into(), name: "rm".into(), arguments: "{}".into() };
        let result = refused(&call, &Message::user("m", "no, keep it"));
        assert!(result.is_error);
        assert!(result.content.ends_with("they said: no, keep it"));
    }
}
