//! The agent: a context is a conversation with the model, a task one turn of it.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use agentwire_server::agent::{AgentError, AgentEvent, AgentExecutor, EventStream, ExecutionContext, TaskUpdater};
use agentwire_server::budget::{Asked, BudgetBook};
use agentwire_server::Metrics;
use agentwire_types::{AgentCapabilities, AgentCard, AgentSkill, Message, Role, TaskState};
use async_openai::types::chat::{ChatCompletionStreamOptions, CreateChatCompletionRequest};

use crate::artifact::AnswerArtifact;
use crate::caller_tools::CallerTools;
use crate::chat::ChatClient;
use crate::conversation::{Conversation, Unreadable};
use crate::meter::Meter;
use crate::model::{Answer, Chunk, Ending};
use crate::records::{approves, pending_calls, Record, ToolCall, ToolResult};
use crate::toolbox::Toolbox;

/// An agent whose answers come from a chat model behind an OpenAI-compatible chat-completions
/// API (OpenAI, vLLM, llama.cpp's server, Ollama, LiteLLM…), with the tools of MCP servers.
///
/// - A context is a conversation: the user's messages and the answers of the caller's earlier
///   tasks in the same `contextId` are the history the model sees, newest kept within
///   [`max_history_bytes`](crate::OpenAiAgentBuilder::max_history_bytes).
/// - The answer streams: the text the model sends is a chunk of the artifact `answer` every
///   50 ms or 4 KiB at most (`append`, `lastChunk` on the last).
/// - What the model sends is bounded: an answer larger than
///   [`max_answer_bytes`](crate::OpenAiAgentBuilder::max_answer_bytes) or with more than 128 tool
///   calls, a server silent for [`idle_timeout`](crate::OpenAiAgentBuilder::idle_timeout), and a
///   request longer than [`request_timeout`](crate::OpenAiAgentBuilder::request_timeout) fail the task.
/// - How the model stops decides the task's state: a complete answer COMPLETED, a cut one
///   (`length`) COMPLETED with a note saying so, a refusal or a content filter REJECTED, a
///   failed request FAILED with the server's message. Cancelling the task drops the request.
/// - Tool calls run on their MCP server; each call and result is a status message of the task
///   (a data part `{"toolCalls": …}` / `{"toolResult": …}`). A tool that needs approval pauses
///   the task INPUT_REQUIRED (`{"approval": …}`); a next message starting with "yes" (or a data
///   part `{"approve": true}`) approves the calls, anything else refuses them.
/// - What each task spent is in its metadata under the usage extension
///   ([`USAGE_EXTENSION`](agentwire_types::USAGE_EXTENSION), declared on the card): the model's
///   tokens as its server reports them (asked for with `stream_options.include_usage`; estimated
///   from the bytes, and marked so, when it does not), model calls, tool rounds and time, with
///   the task's final or interrupted status.
/// - The user's messages reach the model as text: text parts, text files and JSON data. Files
///   by URL and bytes that are not UTF-8 reject the task, and so does a message in the agent's
///   role (`ROLE_AGENT`), which could pass for the agent's own records.
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
    pub(crate) settings: Arc<Settings>,
    pub(crate) budgets: Option<BudgetBook>,
    pub(crate) metrics: Option<Metrics>,
}

/// What every task of an agent shares.
pub(crate) struct Settings {
    pub(crate) chat: ChatClient,
    pub(crate) model: String,
    pub(crate) system_prompt: Option<String>,
    pub(crate) toolbox: Toolbox,
    /// The MCP servers reached as each task's caller, their tools added to `toolbox`'s.
    pub(crate) caller_tools: CallerTools,
    pub(crate) approve: HashSet<String>,
    pub(crate) max_history_bytes: usize,
    pub(crate) max_tool_rounds: usize,
    pub(crate) max_answer_bytes: usize,
    pub(crate) request_timeout: Duration,
}

impl std::fmt::Debug for OpenAiAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let settings = &self.settings;
        f.debug_struct("OpenAiAgent")
            .field("model", &settings.model)
            .field("tools", &settings.toolbox.names())
            .field("tools_as_callers", &settings.caller_tools.urls().collect::<Vec<_>>())
            .field("approve", &settings.approve)
            .finish_non_exhaustive()
    }
}

impl OpenAiAgent {
    /// The agent, charging what each model call spends (its tokens, and a round of tool calls)
    /// to the budgets of the task's caller in `book`. A call whose request alone (estimated at 4
    /// bytes a token) would pass the caller's budget of tokens is not made, nor a round of tool
    /// calls past its budget of rounds: the task fails, saying the budget, what was spent and
    /// when it resets.
    ///
    /// ```
    /// use std::time::Duration;
    /// use agentwire_openai::OpenAiAgent;
    /// use agentwire_server::budget::{Budget, BudgetBook, Budgets};
    ///
    /// let daily = Budget { tokens: Some(200_000), tool_rounds: Some(100), window: Duration::from_secs(86_400) };
    /// let book = BudgetBook::new(Budgets { each_principal: Some(daily), ..Budgets::default() });
    /// let agent = OpenAiAgent::builder("http://127.0.0.1:11434/v1", "llama3.2").build().with_budgets(book);
    /// # drop(agent);
    /// ```
    pub fn with_budgets(mut self, book: BudgetBook) -> Self {
        self.budgets = Some(book);
        self
    }

    /// The agent, counting what each turn of a task spent in `metrics`' usage counters
    /// (`agentwire_usage_*_total`), by the task's caller and the model, as a gateway counts what
    /// its agents report.
    ///
    /// ```
    /// use agentwire_openai::OpenAiAgent;
    /// use agentwire_server::Metrics;
    ///
    /// let agent = OpenAiAgent::builder("http://127.0.0.1:11434/v1", "llama3.2").build().with_metrics(&Metrics::new());
    /// # drop(agent);
    /// ```
    pub fn with_metrics(mut self, metrics: &Metrics) -> Self {
        self.metrics = Some(metrics.clone());
        self
    }

    /// The names the model knows its tools by.
    pub fn tool_names(&self) -> Vec<&str> {
        self.settings.toolbox.names()
    }

    /// A card for the agent: named after its model, taking text, text files and JSON, with a
    /// `chat` skill that names its tools, and the usage extension.
    pub fn card(&self) -> AgentCard {
        let settings = &self.settings;
        // One skill: the model is asked in free text, and calls its tools itself. A skill per
        // tool would read as a tool of its own to a caller that maps skills to tools (MCP),
        // which would then chat with the model under the tool's description.
        let tools = settings.toolbox.describe();
        let mut description = format!(
            "Answers in conversation with the model {}; a message in the same context continues it",
            settings.model
        );
        if !tools.is_empty() {
            let named: Vec<String> = tools
                .iter()
                .map(|(name, about)| if about.is_empty() { name.clone() } else { format!("{name} ({about})") })
                .collect();
            description.push_str(&format!(". The model may call these tools to answer: {}", named.join("; ")));
        }
        let mut tags = vec!["chat".to_owned(), "llm".to_owned()];
        tags.extend(tools.into_iter().map(|(name, _)| format!("tool:{name}")));
        let skills =
            vec![AgentSkill { id: "chat".into(), name: "Chat".into(), description, tags, ..AgentSkill::default() }];
        AgentCard {
            name: settings.model.clone(),
            description: format!("The model {} as an A2A agent", settings.model),
            default_input_modes: vec!["text/*".into(), "application/json".into()],
            default_output_modes: vec!["text/plain".into()],
            skills,
            capabilities: AgentCapabilities {
                extensions: vec![crate::meter::declared()],
                ..AgentCapabilities::default()
            },
            ..AgentCard::default()
        }
    }
}

impl AgentExecutor for OpenAiAgent {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let (settings, budgets, metrics) = (Arc::clone(&self.settings), self.budgets.clone(), self.metrics.clone());
        // Boxed: the execution's future is held in the server's for as long as the model talks.
        ctx.run(|ctx, updater| {
            Box::pin(async move {
                let toolbox = match settings.caller_tools.toolbox(&settings.toolbox, &ctx.request).await {
                    Ok(toolbox) => toolbox,
                    Err(refused) => return updater.fail(refused.message()).await,
                };
                let meter = Meter::start(&settings.model, ctx.task.as_deref());
                Turn { settings, ctx, updater, toolbox, meter, budgets, metrics }.run().await
            })
        })
    }
}

/// One task's turn of the conversation.
struct Turn {
    settings: Arc<Settings>,
    ctx: ExecutionContext,
    updater: TaskUpdater,
    /// The tools, as this task's caller reaches them.
    toolbox: Toolbox,
    meter: Meter,
    budgets: Option<BudgetBook>,
    metrics: Option<Metrics>,
}

/// Why a turn stopped before the model finished.
enum Stopped {
    Canceled,
    Failed(String),
}

impl Turn {
    async fn run(self) -> Result<(), AgentError> {
        // The agent reads its own records (tool calls, approvals) back from the task's agent
        // messages: a client's message in the agent's role could pass for one, and make a "yes"
        // run a call the model never asked for. The task ends before it is ever read.
        if self.ctx.message.role == Role::Agent {
            return self
                .updater
                .reject("this agent takes messages in the user's role only (ROLE_USER), not the agent's")
                .await;
        }
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
                        None => return self.end(TaskState::Canceled, None).await,
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
                Err(Stopped::Canceled) => return self.end(TaskState::Canceled, None).await,
                Err(Stopped::Failed(reason)) => return self.end(TaskState::Failed, Some(reason)).await,
            };
            let calls = match ending {
                Ending::Stop => {
                    answer.finish().await?;
                    return self.end(TaskState::Completed, None).await;
                }
                Ending::Length => {
                    answer.finish().await?;
                    let note = "The answer was cut short: the model reached its length limit.";
                    return self.end(TaskState::Completed, Some(note.to_owned())).await;
                }
                Ending::Refusal(refusal) => return self.end(TaskState::Rejected, Some(refusal)).await,
                Ending::Filtered => {
                    let note = "The model's content filter stopped the answer.";
                    return self.end(TaskState::Rejected, Some(note.to_owned())).await;
                }
                Ending::Unfinished => {
                    let reason = "the model's answer broke off: its stream ended before it finished";
                    return self.end(TaskState::Failed, Some(reason.to_owned())).await;
                }
                Ending::ToolCalls(calls) => {
                    if let Some(book) = &self.budgets
                        && let Err(refused) = book.admit(self.ctx.request.principal.as_ref(), Asked::tool_round()).await
                    {
                        return self.end(TaskState::Failed, Some(refused.message().to_owned())).await;
                    }
                    self.meter.tool_round();
                    self.charge(0, 1).await;
                    calls
                }
            };
            match self.run_tools(&mut conversation, text, calls).await? {
                Round::Answered => {}
                Round::AwaitsApproval => return Ok(()),
                Round::Canceled => return self.end(TaskState::Canceled, None).await,
            }
        }
        let rounds = self.settings.max_tool_rounds;
        let reason = format!("the model called tools {rounds} times in a row without answering");
        self.end(TaskState::Failed, Some(reason)).await
    }

    /// Ends the turn in `state`, saying `text` if any, with what the task spent.
    async fn end(&self, state: TaskState, text: Option<String>) -> Result<(), AgentError> {
        let message = text.map(|text| self.updater.message(text));
        self.updater.send(AgentEvent::Status { state, message, metadata: Some(self.turn_spent()) }).await
    }

    /// What the task spent by the end of this turn, as status metadata; counted in the metrics,
    /// if the agent keeps any.
    fn turn_spent(&self) -> serde_json::Map<String, serde_json::Value> {
        let usage = self.meter.usage();
        if let Some(metrics) = &self.metrics {
            let principal = self.ctx.request.principal.as_ref().map_or("", |principal| principal.name.as_str());
            metrics.count_usage(principal, "", &usage);
        }
        usage.metadata()
    }

    /// Charges `tokens` and `tool_rounds` to the caller's budgets, if the agent keeps any; a
    /// budget this spends is refused at the next model call.
    async fn charge(&self, tokens: u64, tool_rounds: u64) {
        if let Some(book) = &self.budgets {
            let _spent = book.charge(self.ctx.request.principal.as_ref(), tokens, tool_rounds).await;
        }
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

    /// Asks the model and streams its text into the answer; returns this round's text and how
    /// the answer ended. The request is metered, once its server answered, however it ends.
    async fn ask(
        &self,
        conversation: &Conversation,
        answer: &mut AnswerArtifact,
    ) -> Result<Result<(String, Ending), Stopped>, AgentError> {
        let settings = &self.settings;
        let tools = self.toolbox.definitions();
        let request = CreateChatCompletionRequest {
            model: settings.model.clone(),
            messages: conversation.messages.clone(),
            tools: (!tools.is_empty()).then_some(tools),
            stream: Some(true),
            stream_options: Some(ChatCompletionStreamOptions { include_usage: Some(true), ..Default::default() }),
            ..CreateChatCompletionRequest::default()
        };
        let size = || serde_json::to_vec(&request).map_or(0, |body| body.len());
        // A call whose request alone would pass the caller's budget is not made.
        if let Some(book) = &self.budgets {
            let asked = Asked::tokens(crate::meter::estimate(size()));
            if let Err(refused) = book.admit(self.ctx.request.principal.as_ref(), asked).await {
                return Ok(Err(Stopped::Failed(refused.message().to_owned())));
            }
        }
        let mut assembled = Answer::new(settings.max_answer_bytes);
        let mut answered = false;
        let asked = self.stream_answer(&request, answer, &mut assembled, &mut answered).await;
        if answered {
            let call = self.meter.model_call(assembled.usage(), size, assembled.size());
            self.charge(call.tokens(), 0).await;
        }
        Ok(asked?.map(|text| (text, assembled.ending())))
    }

    /// Sends `request` and streams the model's text into `answer`, assembling the rest in
    /// `assembled`; sets `answered` once the server answered; returns this round's text.
    async fn stream_answer(
        &self,
        request: &CreateChatCompletionRequest,
        answer: &mut AnswerArtifact,
        assembled: &mut Answer,
        answered: &mut bool,
    ) -> Result<Result<String, Stopped>, AgentError> {
        let settings = &self.settings;
        let cancel = self.ctx.cancellation();
        let timeout = settings.request_timeout;
        let too_long = || Stopped::Failed(format!("the model took longer than {} s to answer", timeout.as_secs_f64()));
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        // Dropping the request on a cancel or a bound closes the connection: the server stops.
        let started = tokio::select! {
            () = cancel.cancelled() => return Ok(Err(Stopped::Canceled)),
            () = &mut deadline => return Ok(Err(too_long())),
            started = settings.chat.stream(request) => started,
        };
        let mut chunks = match started {
            Ok(chunks) => chunks,
            Err(reason) => return Ok(Err(Stopped::Failed(reason))),
        };
        *answered = true;
        let start = answer.len();
        loop {
            let step = tokio::select! {
                () = cancel.cancelled() => return Ok(Err(Stopped::Canceled)),
                () = &mut deadline => return Ok(Err(too_long())),
                () = answer.due() => Step::Flush,
                chunk = chunks.next() => Step::Chunk(chunk.map(|chunk| chunk.map(Box::new))),
            };
            let chunk = match step {
                Step::Flush => {
                    answer.flush().await?;
                    continue;
                }
                Step::Chunk(None) => break,
                Step::Chunk(Some(Ok(chunk))) => chunk,
                Step::Chunk(Some(Err(reason))) => return Ok(Err(Stopped::Failed(reason))),
            };
            match assembled.push(*chunk) {
                Ok(Some(text)) => answer.push(&text).await?,
                Ok(None) => {}
                Err(reason) => return Ok(Err(Stopped::Failed(reason))),
            }
        }
        answer.flush().await?;
        Ok(Ok(answer.since(start).to_owned()))
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
            calls.into_iter().partition(|call| self.toolbox.is_among(&call.name, &settings.approve));
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
            result = self.toolbox.call(call) => Some(result),
        }
    }

    /// Gives the model `result` and records it in the task.
    async fn record_result(&self, conversation: &mut Conversation, result: ToolResult) -> Result<(), AgentError> {
        conversation.tool_result(&result);
        let outcome = if result.is_error { "failed" } else { "answered" };
        let summary = format!("{} {outcome}: {}", result.name, first_line(&result.content));
        self.record(TaskState::Working, summary, &Record::ToolResult(result)).await
    }

    /// A status of the task with a message saying `text`, carrying `record`; one that pauses
    /// the task carries what it spent so far.
    async fn record(&self, state: TaskState, text: String, record: &Record) -> Result<(), AgentError> {
        let mut message = self.updater.message(text);
        message.parts.push(record.part());
        let metadata = state.is_interrupted().then(|| self.turn_spent());
        self.updater.send(AgentEvent::Status { state, message: Some(message), metadata }).await
    }
}

/// What woke a turn reading the model's answer.
enum Step {
    /// The text waiting is due to be sent.
    Flush,
    Chunk(Option<Result<Box<Chunk>, String>>),
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
    let clipped = agentwire_types::text::clip(line.to_owned(), 200);
    if clipped.len() == line.len() && line.len() < text.trim_end().len() {
        format!("{clipped}{}", agentwire_types::text::CLIPPED)
    } else {
        clipped
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
