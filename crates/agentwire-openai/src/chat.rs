//! The chat-completions request itself: sent on the workspace's reqwest, its event stream read
//! no faster than the agent takes the chunks, within bounds of time and size.

use std::time::Duration;

use agentwire_client::{error_chain, sse_events, SseError};
use async_openai::types::chat::CreateChatCompletionRequest;
use futures_util::stream::{BoxStream, Stream, StreamExt};

use crate::model::{read_chunk, refusal_message, Chunk};

/// The most of an error answer's body that is read for its message.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// What an event may hold beyond the answer's own bytes: the chunk's JSON around them.
const EVENT_OVERHEAD: usize = 64 * 1024;

/// The model's API: where requests go, with which key, within which bounds.
#[derive(Debug)]
pub(crate) struct ChatClient {
    http: reqwest::Client,
    /// `BASE/chat/completions`.
    url: String,
    api_key: Option<String>,
    /// No byte for this long (nor a connection) fails the request.
    idle: Duration,
    /// The largest event of the stream.
    max_event_size: usize,
}

impl ChatClient {
    /// A client of the API at `base_url` whose answers are at most `max_answer_bytes`.
    pub(crate) fn new(base_url: &str, api_key: Option<String>, idle: Duration, max_answer_bytes: usize) -> Self {
        // Building fails only when the TLS backend cannot start, as the default client would.
        let http = reqwest::Client::builder().connect_timeout(idle).build().unwrap_or_default();
        Self {
            http,
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            api_key,
            idle,
            max_event_size: max_answer_bytes.saturating_add(EVENT_OVERHEAD),
        }
    }

    /// Sends `request` (which asks for a stream) and returns its chunks once the server answered
    /// 2xx; otherwise why the request failed, in the server's words when it gave any.
    pub(crate) async fn stream(&self, request: &CreateChatCompletionRequest) -> Result<Chunks, String> {
        let mut sending = self.http.post(&self.url).json(request).header(reqwest::header::ACCEPT, "text/event-stream");
        if let Some(key) = &self.api_key {
            sending = sending.bearer_auth(key);
        }
        let response = match tokio::time::timeout(self.idle, sending.send()).await {
            Err(_) => return Err(stopped(self.idle)),
            Ok(Err(error)) => return Err(format!("the model's server could not be reached: {}", error_chain(&error))),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        let body = idle_bounded(response.bytes_stream(), self.idle);
        if !status.is_success() {
            return Err(refusal_message(status, &error_body(body).await));
        }
        Ok(Chunks { events: sse_events(body, self.max_event_size).boxed(), done: false })
    }
}

/// The chunks of a streamed answer, read as they are taken.
pub(crate) struct Chunks {
    events: BoxStream<'static, Result<eventsource_stream::Event, SseError<BodyError>>>,
    /// `data: [DONE]` came: the answer is over, whatever follows.
    done: bool,
}

impl Chunks {
    /// The next chunk; `None` at `data: [DONE]` or the end of the body; an error ends the stream.
    pub(crate) async fn next(&mut self) -> Option<Result<Chunk, String>> {
        while !self.done {
            let event = match self.events.next().await? {
                Ok(event) => event,
                Err(error) => {
                    self.done = true;
                    return Some(Err(broken(error)));
                }
            };
            // Keep-alives: comments are no events; some servers send named events without data.
            if event.data.is_empty() || event.event == "keepalive" {
                continue;
            }
            if event.data == "[DONE]" {
                self.done = true;
                return None;
            }
            return Some(read_chunk(&event.data));
        }
        None
    }
}

/// Why reading the body stopped.
#[derive(Debug)]
enum BodyError {
    Read(reqwest::Error),
    /// Nothing came for this long.
    Idle(Duration),
}

impl std::fmt::Display for BodyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Read(error) => f.write_str(&error_chain(error)),
            Self::Idle(idle) => f.write_str(&stopped(*idle)),
        }
    }
}

/// The body, failing once nothing came for `idle`.
fn idle_bounded(
    body: impl Stream<Item = reqwest::Result<bytes::Bytes>> + Send + 'static,
    idle: Duration,
) -> impl Stream<Item = Result<bytes::Bytes, BodyError>> + Send + 'static {
    futures_util::stream::unfold(Some(body.boxed()), move |body| async move {
        let mut body = body?;
        match tokio::time::timeout(idle, body.next()).await {
            Err(_) => Some((Err(BodyError::Idle(idle)), None)),
            Ok(None) => None,
            Ok(Some(Ok(bytes))) => Some((Ok(bytes), Some(body))),
            Ok(Some(Err(error))) => Some((Err(BodyError::Read(error)), None)),
        }
    })
}

/// The start of an error answer's body, at most [`MAX_ERROR_BODY`] bytes; what could not be
/// read is left out.
async fn error_body(body: impl Stream<Item = Result<bytes::Bytes, BodyError>>) -> Vec<u8> {
    let mut read = Vec::new();
    let mut body = std::pin::pin!(body);
    while let Some(Ok(bytes)) = body.next().await {
        let room = MAX_ERROR_BODY - read.len();
        read.extend_from_slice(&bytes[..bytes.len().min(room)]);
        if read.len() == MAX_ERROR_BODY {
            break;
        }
    }
    read
}

/// Why a stream that started well ended in an error.
fn broken(error: SseError<BodyError>) -> String {
    match error {
        SseError::Transport(BodyError::Idle(idle)) => stopped(idle),
        SseError::Transport(error) => format!("the model's answer broke off: {error}"),
        SseError::TooLarge(max) => format!("the model sent an event larger than this agent's bound of {max} bytes"),
        SseError::Invalid(detail) => format!("the model's answer could not be read: {detail}"),
    }
}

/// The task's reason when the server went quiet.
fn stopped(idle: Duration) -> String {
    format!("the model's server stopped answering (nothing for {} s)", idle.as_secs_f64())
}
