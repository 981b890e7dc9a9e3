//! Sending a message from the page: the form, and the message (with a file) it sends.

use std::convert::Infallible;
use std::sync::Arc;

use agentwire_types::{
    A2AError, A2aRequest, AgentCard, GetTaskRequest, Message, Part, Role, SendMessageRequest, StreamResponse, Task,
    TaskState,
};
use axum::extract::{Query, State};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use futures_util::StreamExt;
use http::request::Parts;
use serde::Deserialize;

use crate::http::errors::http_status;

use super::pages;
use super::state::{context, page, run, ConsoleState};

/// The largest file a message sent from the console may carry.
pub(super) const MAX_FILE_BYTES: usize = 2 * 1024 * 1024;

/// The task a message is sent to, when it continues one.
#[derive(Debug, Default, Deserialize)]
pub(super) struct SendQuery {
    #[serde(default)]
    pub(super) task: String,
    #[serde(default)]
    pub(super) context: String,
}

pub(super) async fn send_page(
    State(state): State<ConsoleState>,
    mut parts: Parts,
    Query(query): Query<SendQuery>,
) -> Response {
    let result = async {
        let ctx = context(&mut parts)?;
        let card: AgentCard = run(&state, &ctx, A2aRequest::GetAgentCard).await?;
        // A reply to a task that asked for input shows what it asked.
        let question = match query.task.trim() {
            "" => None,
            id => {
                let get = GetTaskRequest { id: id.to_owned(), history_length: Some(0), ..GetTaskRequest::default() };
                let task: Option<Task> = run(&state, &ctx, A2aRequest::GetTask(get)).await.ok();
                task.filter(|task| task.status.state.is_interrupted()).and_then(|task| task.status.message.map(|m| *m))
            }
        };
        Ok(pages::send_page(&state.console.site, &card, &query.task, &query.context, question.as_ref()))
    }
    .await;
    page(&state.console.site, result)
}

/// A message written in the console's form.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Outgoing {
    #[serde(default)]
    pub(super) text: String,
    #[serde(default)]
    pub(super) task_id: String,
    #[serde(default)]
    pub(super) context_id: String,
    #[serde(default)]
    pub(super) file: Option<OutgoingFile>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct OutgoingFile {
    pub(super) name: String,
    #[serde(default)]
    pub(super) media_type: String,
    /// The content, base64.
    pub(super) bytes: String,
}

impl Outgoing {
    pub(super) fn message(self) -> Result<Message, A2AError> {
        let mut parts = Vec::new();
        if !self.text.trim().is_empty() {
            parts.push(Part::text(self.text));
        }
        if let Some(file) = self.file {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(file.bytes.as_bytes())
                .map_err(|_| A2AError::invalid_params("the file's content is not base64"))?;
            if bytes.len() > MAX_FILE_BYTES {
                return Err(A2AError::invalid_params(format!(
                    "the file is larger than the console sends ({} MiB)",
                    MAX_FILE_BYTES / (1024 * 1024)
                )));
            }
            let media_type =
                if file.media_type.is_empty() { "application/octet-stream".into() } else { file.media_type };
            parts.push(Part::raw(bytes, file.name, media_type));
        }
        if parts.is_empty() {
            return Err(A2AError::invalid_params("write a text or choose a file to send"));
        }
        let mut message = Message::new(Role::User, uuid::Uuid::new_v4().to_string(), parts);
        message.task_id = self.task_id.trim().to_owned();
        message.context_id = self.context_id.trim().to_owned();
        Ok(message)
    }
}

/// Sends the form's message and answers with its stream as server-sent events: a row per event
/// (`entry`), then where it ended (`end`). An agent without streaming answers once.
pub(super) async fn send_message(
    State(state): State<ConsoleState>,
    mut parts: Parts,
    body: axum::body::Bytes,
) -> Response {
    let started = async {
        let ctx = context(&mut parts)?;
        let outgoing: Outgoing = serde_json::from_slice(&body)
            .map_err(|error| A2AError::invalid_params(format!("the message form: {error}")))?;
        let request = SendMessageRequest::new(outgoing.message()?);
        let card: AgentCard = run(&state, &ctx, A2aRequest::GetAgentCard).await?;
        if card.capabilities.streaming == Some(true) {
            run(&state, &ctx, A2aRequest::SendStreamingMessage(request)).await
        } else {
            let sent: agentwire_types::SendMessageResponse =
                run(&state, &ctx, A2aRequest::SendMessage(request)).await?;
            let response = match sent {
                agentwire_types::SendMessageResponse::Task(task) => StreamResponse::Task(task),
                agentwire_types::SendMessageResponse::Message(message) => StreamResponse::Message(message),
            };
            let item = agentwire_types::StreamItem { seq: 0, response: Arc::new(response) };
            Ok(Box::pin(futures_util::stream::iter([Ok(item)])) as agentwire_types::TaskEventStream)
        }
    }
    .await;
    let events = match started {
        Ok(events) => events,
        Err(error) => {
            return (http_status(error.kind()), error.message().to_owned()).into_response();
        }
    };
    let mut last = None::<(String, TaskState)>;
    let mut state = pages::StateBefore::default();
    let rows = events
        .map(move |item| match item {
            Ok(item) => {
                let before = state.next(&item.response);
                if let Some(seen) = pages::task_of(&item.response) {
                    last = Some(seen);
                }
                let entry = pages::Entry { seq: item.seq, event: item.response };
                let row = pages::entry_row(&entry, before).into_string();
                let mut events = vec![Event::default().event("entry").data(row)];
                if let Some((id, state)) = last.as_ref().filter(|(_, state)| pages::ends_a_turn(*state)) {
                    events.push(Event::default().event("end").data(pages::outcome(id, *state).into_string()));
                }
                events
            }
            Err(error) => vec![Event::default().event("failed").data(error.message())],
        })
        .flat_map(|events| futures_util::stream::iter(events.into_iter().map(Ok::<_, Infallible>)));
    Sse::new(rows).into_response()
}
