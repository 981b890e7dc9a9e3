//! A task's events as a stream that resumes after its connection drops.
//!
//! When the connection breaks (or the server ends the stream) before the task reached a state that
//! ends a stream, the stream subscribes to the task again. Where the agent numbers its events (an
//! SSE `id` on each, as agentwire does), the subscription asks for the events after the last one
//! seen (`Last-Event-ID`): none is lost and none repeated. Where it does not (gRPC, and agents
//! without ids), the new subscription starts with the task as it is then, which sums up what
//! happened while the stream was away. A task that ended while the stream was away can no longer
//! be subscribed to: the stream ends with the task as GetTask reads it.
//!
//! The wait before each new subscription doubles until an event brings news (anything but a
//! repeat of the task or status last seen): an agent that ends every subscription after sending
//! the task as it stands is asked again less and less often, and after [`Reconnect::attempts`]
//! subscriptions in a row without news the stream ends with [`Error::StreamEnded`]. A repeated
//! snapshot of the task, which tells the reader nothing, is not passed on.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use agentwire_types::{Dialect, GetTaskRequest, StreamResponse, Task, TaskState};
use futures_util::stream::{BoxStream, Stream, StreamExt};

use crate::error::{Error, Result};

/// What a stream resumes through: the client that opened it.
pub(crate) trait Reopen: Send + Sync + 'static {
    /// How often, and after how long, to try again.
    fn reconnect(&self) -> Reconnect;

    /// The generation spoken, whose rule says when a stream ends.
    fn dialect(&self) -> Dialect;

    /// SubscribeToTask after the event `last_id` (from the start where there is none).
    fn subscribe(&self, task_id: &str, last_id: Option<u64>) -> impl Future<Output = Result<Events>> + Send;

    /// GetTask.
    fn task(&self, request: GetTaskRequest) -> impl Future<Output = Result<Task>> + Send;
}

/// How a dropped stream is resumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reconnect {
    /// Reconnections tried in a row without news (an event the stream had not seen) before the
    /// stream gives up; 0 turns resuming off.
    pub attempts: u32,
    /// The wait before the first one; it doubles with each one that brings no news.
    pub initial_backoff: Duration,
}

impl Default for Reconnect {
    fn default() -> Self {
        Reconnect { attempts: 5, initial_backoff: Duration::from_millis(100) }
    }
}

/// The events of a task as they happen: a [`Stream`] of [`StreamResponse`]s that ends after the
/// event that ends the task's stream (a terminal state, INPUT_REQUIRED, or a message reply: see
/// `Profile::closes_stream`).
///
/// ```no_run
/// # async fn run(client: agentwire_client::Client) -> agentwire_client::Result<()> {
/// use agentwire_types::{Message, SendMessageRequest};
/// use futures_util::StreamExt;
///
/// let mut events = client.send_streaming_message(SendMessageRequest::new(Message::user("m-1", "hi"))).await?;
/// while let Some(event) = events.next().await {
///     println!("{:?}", event?.task_state());
/// }
/// # Ok(())
/// # }
/// ```
pub struct EventStream {
    inner: Events,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream").finish_non_exhaustive()
    }
}

impl Stream for EventStream {
    type Item = Result<StreamResponse>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.poll_next_unpin(cx).map(|event| event.map(|event| event.map(|(_, event)| event)))
    }
}

impl EventStream {
    /// The events, each with the id the agent numbered it with (SSE's `id`), where it did.
    pub(crate) fn numbered(self) -> Events {
        self.inner
    }
}

/// One connection's events, each with its SSE id where it has one.
pub(crate) type Events = BoxStream<'static, Result<(Option<u64>, StreamResponse)>>;

/// Where a stream stands.
struct Resumable<R> {
    client: R,
    events: Events,
    task_id: String,
    last_id: Option<u64>,
    ended: bool,
    /// Subscriptions made since the last news.
    failures: u32,
    /// Fingerprints of the last task snapshot and status seen, which a resumed subscription may
    /// send again: kept instead of copies, since a task may be large.
    last_snapshot: Option<u64>,
    last_status: Option<u64>,
    /// A resumed subscription that has not delivered an event yet.
    resuming: bool,
    /// A subscription the caller opened, or a send that continues a task, before its first event:
    /// the task as it stands, which leaves the stream open unless the task has ended (an
    /// interrupted task's stream carries on with what follows the interruption).
    opening: bool,
    /// Whether the last event was one after which the server may end the stream: then its end
    /// is the stream's, not a dropped connection.
    may_end: bool,
    /// Whether the stream is being resumed after its connection broke (an error), rather than
    /// after the agent ended it.
    after_break: bool,
}

impl<R: Reopen> Resumable<R> {
    /// The next event, reconnecting as often as the policy allows when the connection drops.
    async fn next(&mut self) -> Option<Result<(Option<u64>, StreamResponse)>> {
        loop {
            if self.ended {
                return None;
            }
            let dropped = match self.events.next().await {
                Some(Ok((id, event))) => {
                    self.last_id = id.or(self.last_id);
                    if self.task_id.is_empty() {
                        self.task_id = event.task_id().to_owned();
                    }
                    self.may_end = self.closes(&event);
                    let snapshot = std::mem::take(&mut self.opening) && matches!(event, StreamResponse::Task(_));
                    self.ended = match snapshot {
                        true => event.task_state().is_some_and(TaskState::is_terminal),
                        false => self.may_end,
                    };
                    self.resuming = false;
                    let news = self.is_news(&event);
                    // A connection that broke (not a stream the agent ended) and was resumed
                    // counts as a success, as it always did: a quiet task behind a flaky link
                    // is followed for as long as each resumption works.
                    if news || std::mem::take(&mut self.after_break) {
                        self.failures = 0;
                    }
                    // The task exactly as the reader saw it last tells it nothing.
                    if !news && matches!(event, StreamResponse::Task(_)) && !self.ended {
                        continue;
                    }
                    return Some(Ok((id, event)));
                }
                Some(Err(error @ Error::Protocol(_))) if self.resuming => return self.refused(error).await,
                Some(Err(error @ Error::Protocol(_))) => {
                    self.ended = true;
                    return Some(Err(error));
                }
                Some(Err(error)) => Some(error),
                None if self.may_end => {
                    self.ended = true;
                    return None;
                }
                None => None,
            };
            let policy = self.client.reconnect();
            let resumable = !self.task_id.is_empty() && self.failures < policy.attempts;
            if !resumable {
                self.ended = true;
                return match dropped {
                    Some(error) => Some(Err(error)),
                    // Ended by the agent each time, as a stream of a running task should not be.
                    None if self.failures > 0 => {
                        Some(Err(Error::StreamEnded { task_id: self.task_id.clone(), times: self.failures }))
                    }
                    None => None,
                };
            }
            let backoff = policy.initial_backoff.saturating_mul(1 << self.failures.min(16));
            self.failures += 1;
            self.after_break = dropped.is_some();
            tracing::debug!(task_id = %self.task_id, last_event_id = ?self.last_id, ?backoff, "resuming a dropped stream");
            tokio::time::sleep(backoff).await;
            match self.client.subscribe(&self.task_id, self.last_id).await {
                Ok(events) => (self.events, self.resuming) = (events, true),
                Err(error @ Error::Protocol(_)) => return self.refused(error).await,
                Err(error) => self.events = futures_util::stream::once(async { Err(error) }).boxed(),
            }
        }
    }

    /// Whether `event` tells the reader something it was not told already: anything but the task
    /// or its status exactly as last seen. Records what it saw.
    fn is_news(&mut self, event: &StreamResponse) -> bool {
        match event {
            StreamResponse::Task(task) => {
                let (snapshot, status) = (Some(fingerprint(task)), Some(fingerprint(&task.status)));
                let news = self.last_snapshot != snapshot;
                (self.last_snapshot, self.last_status) = (snapshot, status);
                news
            }
            StreamResponse::StatusUpdate(update) => {
                let status = Some(fingerprint(&update.status));
                let news = self.last_status != status;
                self.last_status = status;
                news
            }
            StreamResponse::ArtifactUpdate(_) | StreamResponse::Message(_) => true,
        }
    }

    /// Whether the server ends the stream after `event`, by the rule of the generation spoken.
    fn closes(&self, event: &StreamResponse) -> bool {
        self.client.dialect().profile().closes_stream(event)
    }

    /// Ends the stream after the agent refused to resume it: with the task, when it ended while
    /// the stream was away (v1.0 refuses subscriptions to ended tasks), else with the refusal.
    async fn refused(&mut self, refusal: Error) -> Option<Result<(Option<u64>, StreamResponse)>> {
        self.ended = true;
        let request = GetTaskRequest { id: self.task_id.clone(), ..GetTaskRequest::default() };
        match self.client.task(request).await.map(StreamResponse::Task) {
            Ok(task) if self.closes(&task) => Some(Ok((None, task))),
            _ => Some(Err(refusal)),
        }
    }
}

/// A fingerprint of `value` (a hash of its JSON, written into the hasher as it is made), to tell a
/// repeat from news without keeping a copy.
fn fingerprint(value: &impl serde::Serialize) -> u64 {
    use std::hash::Hasher as _;
    struct Hashing(std::collections::hash_map::DefaultHasher);
    impl std::io::Write for Hashing {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.write(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut hashing = Hashing(std::collections::hash_map::DefaultHasher::new());
    // Writing into the hasher cannot fail, nor can serializing the protocol's types.
    let _ = serde_json::to_writer(&mut hashing, value);
    hashing.0.finish()
}

/// A stream over `events` that resumes through `client`; `task_id` is known for a subscription
/// and a send that continues a task, and learnt from the first event of a send that starts one;
/// `last_id` is the event a subscription started after.
pub(crate) fn resumable<R: Reopen>(client: R, events: Events, task_id: String, last_id: Option<u64>) -> EventStream {
    let opening = !task_id.is_empty() && last_id.is_none();
    let state = Resumable {
        client,
        events,
        task_id,
        last_id,
        ended: false,
        failures: 0,
        last_snapshot: None,
        last_status: None,
        resuming: false,
        opening,
        may_end: false,
        after_break: false,
    };
    let inner = futures_util::stream::unfold(state, |mut state| async move {
        let item = state.next().await?;
        Some((item, state))
    });
    EventStream { inner: inner.boxed() }
}
