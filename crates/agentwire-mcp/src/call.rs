//! One tool call as A2A: the send, the task followed to its end (progress notifications from its
//! stream), the A2A task canceled with the MCP request, and a question the agent asks
//! (`INPUT_REQUIRED`) put to the user through MCP elicitation where the client supports it.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use agentwire_server::RequestContext;
use agentwire_types::{
    A2AError, A2aRequest, A2aResponse, CancelTaskRequest, ErrorKind, GetTaskRequest, Message, Part, Role,
    SendMessageRequest, SendMessageResponse, StreamResponse, Task, TaskState,
};
use futures_util::StreamExt as _;
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ElicitRequest, ElicitResult, ElicitationAction, InputRequest,
    InputRequests, InputRequiredResult, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer, RequestContext as McpContext};
use rmcp::{ErrorData as McpError, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::agents::McpAgent;
use crate::content::{message_result, question_form, state_name, task_result, ANSWER};

/// How long a call canceled before its A2A task was known reads the agent's stream for the
/// task, to cancel it.
const LEARN_TASK_WITHIN: Duration = Duration::from_secs(10);

/// What a retried call carries back (MCP's `requestState`): the task that asked. A client may
/// change it; it only ever names a task the caller's own A2A calls may reach.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Waiting {
    pub(crate) agent: String,
    pub(crate) task_id: String,
    pub(crate) context_id: String,
}

/// A call to `agent` for the MCP request `mcp`, made with the A2A context `a2a` (the caller's
/// credentials, its peer).
pub(crate) struct Call<'a> {
    pub(crate) agent: &'a McpAgent,
    pub(crate) a2a: RequestContext,
    pub(crate) mcp: &'a McpContext<RoleServer>,
    /// For a client of MCP's tasks extension: how long a call waits for its A2A task before it
    /// answers with an MCP task that follows it.
    pub(crate) task_after: Option<Duration>,
    /// Canceled when the client cancels the call (before or after it started).
    pub(crate) canceled: CancellationToken,
    /// How long a question put to the user (elicitation) waits for its answer.
    pub(crate) asks_within: Duration,
}

/// What one turn of the task came to.
enum Answer {
    Task(Task),
    Message(Message),
    /// The client canceled the call.
    Canceled,
    /// The task goes on past the call's wait (`task_after`).
    Running(Task),
}

impl Call<'_> {
    /// Sends `message` and follows the task it makes or continues until it ends, or asks for
    /// input the client cannot give here.
    pub(crate) async fn send(&self, mut message: Message) -> Result<CallToolResponse, McpError> {
        // A call canceled before it started sends nothing.
        if self.canceled.is_cancelled() {
            return Ok(canceled());
        }
        let progress = Progress::of(self.mcp);
        let deadline = self.task_after.map(|wait| tokio::time::Instant::now() + wait);
        loop {
            let task = match self.turn(message, &progress, deadline).await? {
                Answer::Message(reply) => return Ok(message_result(&self.agent.name, &reply).into()),
                Answer::Canceled => return Ok(canceled()),
                Answer::Running(task) => return Ok(crate::tasks::created(&self.agent.name, &task)?.into()),
                Answer::Task(task) => task,
            };
            if task.status.state != TaskState::InputRequired {
                return Ok(task_result(&self.agent.name, &task).into());
            }
            // A client of the tasks extension answers the question on the task (`tasks/update`).
            if self.task_after.is_some() {
                return Ok(crate::tasks::created(&self.agent.name, &task)?.into());
            }
            let question = task.status.message.as_deref().map(Message::text).filter(|t| !t.is_empty());
            let question = question.unwrap_or_else(|| "The agent needs more input.".to_owned());
            match self.ask(&task, &question).await? {
                Asked::Answer(text) => message = follow_up(&task.id, &task.context_id, text),
                Asked::Later(result) => return Ok(result.into()),
                Asked::Unsupported => return Ok(task_result(&self.agent.name, &task).into()),
                Asked::Declined => return self.decline(&task.id).await,
                Asked::Canceled => return Ok(canceled()),
                Asked::Unanswered => return Ok(self.unanswered(&task)),
            }
        }
    }

    /// Answers the question the A2A task `task_id` asked with the client's `answer` (its
    /// `tasks/update`), and leaves the task to go on; a declined question cancels the task.
    pub(crate) async fn answer_task(&self, task_id: &str, answer: &Value) -> Result<(), McpError> {
        let Some(text) = answered(serde_json::from_value(answer.clone()).ok()) else {
            self.cancel(task_id).await;
            return Ok(());
        };
        let mut request = SendMessageRequest::new(follow_up(task_id, "", text));
        request.configuration = Some(returning_at_once());
        self.operation(A2aRequest::SendMessage(request)).await.map(drop)
    }

    /// Continues the task `waiting` names with the client's answer to its question (a retried
    /// call, MCP 2026-07-28).
    pub(crate) async fn resume(&self, waiting: &Waiting, answer: &Value) -> Result<CallToolResponse, McpError> {
        match answered(serde_json::from_value(answer.clone()).ok()) {
            Some(text) => self.send(follow_up(&waiting.task_id, &waiting.context_id, text)).await,
            None => self.decline(&waiting.task_id).await,
        }
    }

    /// One turn: the send, followed on the agent's stream when it streams, until the task ends,
    /// waits for input, or (for a streaming agent) `deadline` passes.
    async fn turn(
        &self,
        message: Message,
        progress: &Progress,
        deadline: Option<tokio::time::Instant>,
    ) -> Result<Answer, McpError> {
        let mut request = SendMessageRequest::new(message);
        if self.agent.card.capabilities.streaming != Some(true) {
            // A client of the tasks extension follows the task: the send need not wait for it.
            if deadline.is_some() {
                request.configuration = Some(returning_at_once());
            }
            let sent = self.operation(A2aRequest::SendMessage(request));
            let response = tokio::select! {
                response = sent => response?,
                () = self.canceled.cancelled() => return Ok(Answer::Canceled),
            };
            return match response {
                A2aResponse::Send(SendMessageResponse::Task(task))
                    if deadline.is_some()
                        && !task.status.state.is_terminal()
                        && !task.status.state.is_interrupted() =>
                {
                    Ok(Answer::Running(task))
                }
                A2aResponse::Send(SendMessageResponse::Task(task)) => Ok(Answer::Task(task)),
                A2aResponse::Send(SendMessageResponse::Message(message)) => Ok(Answer::Message(message)),
                _ => Err(McpError::internal_error("the agent answered a send with something else", None)),
            };
        }
        let mut events = match self.operation(A2aRequest::SendStreamingMessage(request)).await? {
            A2aResponse::Stream(events) => events,
            _ => return Err(McpError::internal_error("the agent answered a streaming send with something else", None)),
        };
        let mut task: Option<Task> = None;
        let passed = async {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(passed);
        loop {
            let next = tokio::select! {
                next = events.next() => next,
                () = &mut passed, if task.is_some() => return Ok(Answer::Running(task.unwrap_or_default())),
                () = self.canceled.cancelled() => {
                    // Canceled before the first event named the task: the stream names it soon.
                    let id = match &task {
                        Some(task) => Some(task.id.clone()),
                        None => learn_task_id(&mut events).await,
                    };
                    if let Some(id) = id {
                        self.cancel(&id).await;
                    }
                    return Ok(Answer::Canceled);
                }
            };
            let event = match next {
                None => break,
                Some(Ok(item)) => item.response,
                Some(Err(error)) => return Err(mcp_error(&error)),
            };
            match (&*event, &mut task) {
                (StreamResponse::Message(reply), None) => return Ok(Answer::Message(reply.clone())),
                (event, task) => {
                    task.get_or_insert_with(Task::default).fold(event);
                    progress.report(event).await;
                }
            }
        }
        let task = task.ok_or_else(|| McpError::internal_error("the agent's stream ended without a task", None))?;
        if task.status.state.is_terminal() || task.status.state.is_interrupted() {
            return Ok(Answer::Task(task));
        }
        // The stream broke before the task ended: the task as the agent has it now.
        match self.operation(A2aRequest::GetTask(GetTaskRequest { id: task.id.clone(), ..Default::default() })).await? {
            A2aResponse::Task(task) => Ok(Answer::Task(task)),
            _ => Err(McpError::internal_error("the agent answered GetTask with something else", None)),
        }
    }

    /// Puts `question` to the client's user: an elicitation request now (MCP before
    /// 2026-07-28), or an input-required result that the client retries with the answer.
    async fn ask(&self, task: &Task, question: &str) -> Result<Asked, McpError> {
        let elicits = self.mcp.client_capabilities().is_some_and(|capabilities| capabilities.elicitation.is_some());
        if !elicits {
            return Ok(Asked::Unsupported);
        }
        let params = question_form(question)?;
        if self.mcp.protocol_version().is_some_and(|version| !version.has_initialize()) {
            let waiting = Waiting {
                agent: self.agent.name.clone(),
                task_id: task.id.clone(),
                context_id: task.context_id.clone(),
            };
            let requests =
                InputRequests::from([(ANSWER.to_owned(), InputRequest::Elicitation(ElicitRequest::new(params)))]);
            let state = serde_json::to_string(&waiting).map_err(|e| McpError::internal_error(e.to_string(), None))?;
            return Ok(Asked::Later(InputRequiredResult::new(Some(requests), Some(state))));
        }
        let asked = self.mcp.peer.create_elicitation(params);
        let result = tokio::select! {
            result = asked => result,
            () = self.canceled.cancelled() => {
                self.cancel(&task.id).await;
                return Ok(Asked::Canceled);
            }
            () = tokio::time::sleep(self.asks_within) => return Ok(Asked::Unanswered),
        };
        match result {
            Ok(result) => Ok(answered(Some(result)).map_or(Asked::Declined, Asked::Answer)),
            // A client that could not ask leaves the task waiting, as one without elicitation.
            Err(error) => {
                tracing::debug!(%error, "the client did not answer the elicitation");
                Ok(Asked::Unsupported)
            }
        }
    }

    /// The user declined the agent's question: the task is canceled, and the call says so.
    async fn decline(&self, task_id: &str) -> Result<CallToolResponse, McpError> {
        self.cancel(task_id).await;
        let mut result = CallToolResult::error(vec![ContentBlock::text(
            "The user declined to answer the agent's question; the task was canceled.",
        )]);
        result.structured_content =
            Some(crate::content::facts(&self.agent.name, task_id, "", state_name(TaskState::Canceled)));
        Ok(result.into())
    }

    /// No answer to the agent's question came in time: the call ends, saying so, and the task
    /// waits for input as the agent left it, for an answer sent later.
    fn unanswered(&self, task: &Task) -> CallToolResponse {
        let text = format!(
            "No answer to the agent's question came within {} s, so the call ended. The task still waits \
             for input: answer with send_message and taskId {:?}, or cancel it with cancel_task.",
            self.asks_within.as_secs(),
            task.id
        );
        let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
        result.structured_content = Some(crate::content::facts(
            &self.agent.name,
            &task.id,
            &task.context_id,
            state_name(TaskState::InputRequired),
        ));
        result.into()
    }

    /// Cancels the A2A task `id`, as the caller. A task that already ended stays as it is.
    pub(crate) async fn cancel(&self, id: &str) {
        let request = A2aRequest::CancelTask(CancelTaskRequest { id: id.to_owned(), ..Default::default() });
        if let Err(error) = self.operation(request).await {
            tracing::debug!(task = id, %error, "the A2A task could not be canceled");
        }
    }

    /// Runs `request` on the agent's operations, as the caller.
    pub(crate) async fn operation(&self, request: A2aRequest) -> Result<A2aResponse, McpError> {
        self.agent.operations.clone().oneshot((self.a2a.clone(), request)).await.map_err(|e| mcp_error(&e))
    }
}

/// What asking the user came to.
enum Asked {
    Answer(String),
    Later(InputRequiredResult),
    Unsupported,
    Declined,
    /// The client canceled the call while it was asked.
    Canceled,
    /// No answer came within the call's wait.
    Unanswered,
}

/// The id of the task `events` is about, from its first event: for a call canceled before it
/// knew it. `None` when the stream ends or names no task in time.
async fn learn_task_id(events: &mut agentwire_types::TaskEventStream) -> Option<String> {
    // The first event of a task's stream names it (or is a message, and there is no task).
    let first = tokio::time::timeout(LEARN_TASK_WITHIN, events.next()).await.ok()??.ok()?;
    match &*first.response {
        StreamResponse::Task(task) => Some(task.id.clone()),
        StreamResponse::StatusUpdate(update) => Some(update.task_id.clone()),
        StreamResponse::ArtifactUpdate(update) => Some(update.task_id.clone()),
        StreamResponse::Message(_) => None,
    }
}

/// The text of an accepted answer; `None` when the user declined or canceled.
fn answered(result: Option<ElicitResult>) -> Option<String> {
    let result = result?;
    if result.action != ElicitationAction::Accept {
        return None;
    }
    let content = result.content.unwrap_or(Value::Null);
    Some(match content.get(ANSWER) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    })
}

/// A send that answers with the task as soon as it is accepted.
fn returning_at_once() -> agentwire_types::SendMessageConfiguration {
    agentwire_types::SendMessageConfiguration { return_immediately: true, ..Default::default() }
}

/// The user's `text` as the next message of a task.
fn follow_up(task_id: &str, context_id: &str, text: String) -> Message {
    let mut message = Message::new(Role::User, uuid::Uuid::new_v4().to_string(), vec![Part::text(text)]);
    task_id.clone_into(&mut message.task_id);
    context_id.clone_into(&mut message.context_id);
    message
}

/// The answer to a call its client canceled. The client reads no answer, and the cancel is no
/// error of the server's, so it is a result.
fn canceled() -> CallToolResponse {
    CallToolResult::error(vec![ContentBlock::text("The call was canceled, and its A2A task with it.")]).into()
}

/// An A2A refusal as the MCP error a client reads: bad input is invalid params, an unknown task
/// is a resource not found, anything else an internal error with the agent's message.
pub(crate) fn mcp_error(error: &A2AError) -> McpError {
    let data = Some(serde_json::json!({"a2aError": format!("{:?}", error.kind())}));
    match error.kind() {
        ErrorKind::InvalidParams | ErrorKind::InvalidRequest | ErrorKind::ContentTypeNotSupported => {
            McpError::invalid_params(error.message().to_owned(), data)
        }
        ErrorKind::TaskNotFound => McpError::resource_not_found(error.message().to_owned(), data),
        _ => McpError::internal_error(error.message().to_owned(), data),
    }
}

/// Progress notifications for a call whose client asked for them (a progress token), one per
/// event of the A2A task.
struct Progress {
    token: Option<ProgressToken>,
    peer: Peer<RoleServer>,
    sent: AtomicU32,
}

impl Progress {
    fn of(mcp: &McpContext<RoleServer>) -> Self {
        Self { token: mcp.meta.get_progress_token(), peer: mcp.peer.clone(), sent: AtomicU32::new(0) }
    }

    async fn report(&self, event: &StreamResponse) {
        let Some(token) = &self.token else { return };
        let Some(message) = describe(event) else { return };
        let progress = self.sent.fetch_add(1, Ordering::Relaxed) + 1;
        let notification = ProgressNotificationParam::new(token.clone(), f64::from(progress)).with_message(message);
        if let Err(error) = self.peer.notify_progress(notification).await {
            tracing::debug!(%error, "a progress notification could not be sent");
        }
    }
}

/// An event as one line of progress.
fn describe(event: &StreamResponse) -> Option<String> {
    const MAX: usize = 500;
    let line = match event {
        StreamResponse::Task(task) => state_name(task.status.state).to_owned(),
        StreamResponse::StatusUpdate(update) => {
            let said = update.status.message.as_deref().map(Message::text).unwrap_or_default();
            match said.is_empty() {
                true => state_name(update.status.state).to_owned(),
                false => format!("{}: {said}", state_name(update.status.state)),
            }
        }
        StreamResponse::ArtifactUpdate(update) => {
            let text: String = update.artifact.parts.iter().filter_map(Part::as_text).collect();
            let name =
                if update.artifact.name.is_empty() { &update.artifact.artifact_id } else { &update.artifact.name };
            format!("artifact {name}: {text}")
        }
        StreamResponse::Message(message) => message.text(),
    };
    Some(agentwire_types::text::clip(line, MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_from_the_form() {
        let accept = |content| ElicitResult::new(ElicitationAction::Accept).with_content(content);
        assert_eq!(answered(Some(accept(serde_json::json!({"answer": "EUR"})))).as_deref(), Some("EUR"));
        assert_eq!(answered(Some(accept(serde_json::json!({"answer": 3})))).as_deref(), Some("3"));
        let decline = ElicitResult::new(ElicitationAction::Decline);
        assert_eq!(answered(Some(decline)), None);
        assert_eq!(answered(None), None);
    }

    #[test]
    fn progress_lines_are_bounded() {
        let long = Message::agent("m", "é".repeat(400));
        let line = describe(&StreamResponse::Message(long)).unwrap();
        assert!(line.len() <= 500 + '…'.len_utf8() && line.ends_with('…'));
    }
}
