//! Delegation: an agent that hands work on to other agents keeps, for the task it works on (the
//! parent), the tasks it started downstream, and cancels them when the parent is canceled.

use std::sync::{Arc, Mutex};

use agentwire_types::{CancelTaskRequest, SendMessageRequest, SendMessageResponse, StreamResponse};
use futures_util::stream::BoxStream;
use futures_util::StreamExt;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::{Client, Result};

/// The message metadata that names the task a downstream task was delegated by.
pub const DELEGATED_BY: &str = "agentwire.delegatedBy";

/// The tasks one parent task delegated, on whichever agents, generations and bindings they run:
/// canceled together when the parent's cancellation fires (a CancelTask, or the server's expiry
/// of an execution past its limit).
///
/// Each message sent through it names the parent in its metadata ([`DELEGATED_BY`]: the parent's
/// `taskId` and `contextId`), so the downstream agent and its operators can tell where a task came
/// from. `referenceTaskIds` is left to the caller: it names tasks of the agent it is sent to.
///
/// ```no_run
/// # async fn run(weather: agentwire_client::Client) -> agentwire_client::Result<()> {
/// use agentwire_client::Delegation;
/// use agentwire_types::{Message, SendMessageRequest};
/// use tokio_util::sync::CancellationToken;
///
/// // In an agent's execution: Delegation::new(&ctx.task_id, &ctx.context_id, ctx.cancellation().clone())
/// let delegation = Delegation::new("parent-task", "parent-context", CancellationToken::new());
/// let asked = SendMessageRequest::new(Message::user("m-1", "the forecast for Paris"));
/// let answer = delegation.send_message(&weather, asked).await?;
/// # Ok(()) }
/// ```
pub struct Delegation {
    parent_task_id: String,
    parent_context_id: String,
    delegated: Arc<Mutex<Delegated>>,
    cancellation: CancellationToken,
    watcher: tokio::task::AbortHandle,
}

/// What a delegation has sent, whether its parent was canceled, and what each of its calls
/// carries besides the client's own headers ([`Delegation::as_caller`]).
#[derive(Default)]
struct Delegated {
    tasks: Vec<(Client, String)>,
    canceled: bool,
    headers: http::HeaderMap,
}

impl std::fmt::Debug for Delegation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delegation").field("parent_task_id", &self.parent_task_id).finish_non_exhaustive()
    }
}

impl Delegation {
    /// The delegation of the task `task_id` (in `context_id`), whose downstream tasks are
    /// canceled once `cancellation` fires (in an agent: `ctx.cancellation().clone()`). Dropped
    /// before that, it stops watching: the tasks it sent run on.
    pub fn new(task_id: &str, context_id: &str, cancellation: CancellationToken) -> Self {
        let delegated = Arc::new(Mutex::new(Delegated::default()));
        let (watched, fired) = (Arc::clone(&delegated), cancellation.clone());
        let watcher = tokio::spawn(async move {
            fired.cancelled().await;
            cancel_all(&watched).await;
        });
        Self {
            parent_task_id: task_id.to_owned(),
            parent_context_id: context_id.to_owned(),
            delegated,
            cancellation,
            watcher: watcher.abort_handle(),
        }
    }

    /// Calls the downstream agents as the parent task's caller: every call of this delegation
    /// (its sends, the first request of its streams, the cancels of its tasks) carries
    /// `authorization` in place of the client's own credentials: the caller's own token (the
    /// parent's `Authorization`, where the downstream agent accepts it), or one exchanged for it
    /// with [`TokenExchange`](crate::TokenExchange). The downstream agent then sees the caller as
    /// its principal: the delegated tasks are the caller's, within the caller's quotas. Use a
    /// client without credentials of its own.
    ///
    /// ```no_run
    /// # async fn run(ctx: agentwire_types::RequestContext, weather: agentwire_client::Client) -> agentwire_client::Result<()> {
    /// use agentwire_client::{Delegation, TokenExchange};
    /// use tokio_util::sync::CancellationToken;
    ///
    /// // In an agent's execution, ctx being its request's context (`ExecutionContext::request`).
    /// let exchange = TokenExchange::new("https://idp.example/oauth2/token", "planner", "s3cret");
    /// let token = ctx.metadata.get("authorization").and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    /// let delegation = Delegation::new("parent-task", "parent-context", CancellationToken::new());
    /// let delegation = match token {
    ///     Some(token) => delegation.as_caller(exchange.exchange(token, "https://weather.example").await?),
    ///     None => delegation,
    /// };
    /// # drop((delegation, weather));
    /// # Ok(()) }
    /// ```
    pub fn as_caller(self, mut authorization: http::HeaderValue) -> Self {
        authorization.set_sensitive(true);
        self.delegated().headers.insert(http::header::AUTHORIZATION, authorization);
        self
    }

    /// SendMessage to the agent `client` calls, as part of the parent task; a task it makes is
    /// canceled with the parent.
    pub async fn send_message(&self, client: &Client, request: SendMessageRequest) -> Result<SendMessageResponse> {
        let headers = self.delegated().headers.clone();
        let answer = with_headers(&headers, client.send_message(self.marked(request))).await?;
        if let SendMessageResponse::Task(task) = &answer
            && !task.status.state.is_terminal()
        {
            self.track(client, &task.id).await;
        }
        Ok(answer)
    }

    /// SendStreamingMessage to the agent `client` calls, as part of the parent task; the task
    /// its first event names is canceled with the parent.
    pub async fn send_streaming_message(
        &self,
        client: &Client,
        request: SendMessageRequest,
    ) -> Result<BoxStream<'static, Result<StreamResponse>>> {
        let headers = self.delegated().headers.clone();
        let events = with_headers(&headers, client.send_streaming_message(self.marked(request))).await?;
        let (client, delegated) = (client.clone(), Arc::clone(&self.delegated));
        let mut tracked = false;
        let events = events.then(move |event| {
            let task_id = match &event {
                Ok(event) if !tracked => task_id_of(event),
                _ => None,
            };
            tracked |= task_id.is_some();
            let (client, delegated) = (client.clone(), Arc::clone(&delegated));
            async move {
                if let Some(task_id) = task_id {
                    track(&delegated, &client, &task_id).await;
                }
                event
            }
        });
        Ok(events.boxed())
    }

    /// Counts `task_id`, on the agent `client` calls, among the parent's downstream tasks (for a
    /// task started otherwise than through this delegation).
    pub async fn track(&self, client: &Client, task_id: &str) {
        track(&self.delegated, client, task_id).await;
    }

    /// The downstream tasks so far: each agent's card URL (as its client was made) and task id.
    pub fn tasks(&self) -> Vec<(String, String)> {
        let delegated = self.delegated();
        delegated.tasks.iter().map(|(client, task_id)| (client.endpoint().url.clone(), task_id.clone())).collect()
    }

    fn delegated(&self) -> std::sync::MutexGuard<'_, Delegated> {
        self.delegated.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `request`, its message naming the parent in its metadata.
    fn marked(&self, mut request: SendMessageRequest) -> SendMessageRequest {
        let parent = json!({"taskId": self.parent_task_id, "contextId": self.parent_context_id});
        request.message.metadata.get_or_insert_default().insert(DELEGATED_BY.to_owned(), parent);
        request
    }
}

impl Drop for Delegation {
    /// Stops watching; a parent canceled meanwhile has its downstream tasks canceled still (the
    /// agent may drop its delegation before the watcher has run).
    fn drop(&mut self) {
        if !self.cancellation.is_cancelled() {
            self.watcher.abort();
            return;
        }
        let delegated = Arc::clone(&self.delegated);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { cancel_all(&delegated).await });
        }
    }
}

/// Cancels every downstream task, once: the tasks are taken, and any tracked later is canceled
/// at once.
async fn cancel_all(delegated: &Mutex<Delegated>) {
    let (tasks, headers) = {
        let mut delegated = delegated.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        delegated.canceled = true;
        (std::mem::take(&mut delegated.tasks), delegated.headers.clone())
    };
    let cancels = tasks.iter().map(|(client, task_id)| cancel(client, task_id));
    with_headers(&headers, futures_util::future::join_all(cancels)).await;
}

/// Runs `call` with `headers` added to the call headers around it, if any.
async fn with_headers<F: std::future::Future>(headers: &http::HeaderMap, call: F) -> F::Output {
    if headers.is_empty() {
        return call.await;
    }
    let mut all = crate::scoped::call_headers();
    all.extend(headers.clone());
    crate::with_call_headers(all, call).await
}

/// Counts a downstream task; once the parent is canceled, cancels it at once.
async fn track(delegated: &Mutex<Delegated>, client: &Client, task_id: &str) {
    let (canceled, headers) = {
        let mut delegated = delegated.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if !delegated.canceled {
            delegated.tasks.push((client.clone(), task_id.to_owned()));
        }
        (delegated.canceled, delegated.headers.clone())
    };
    if canceled {
        with_headers(&headers, cancel(client, task_id)).await;
    }
}

/// Cancels a downstream task; one that ended already stays as it ended.
async fn cancel(client: &Client, task_id: &str) {
    let request = CancelTaskRequest { id: task_id.to_owned(), ..CancelTaskRequest::default() };
    match client.cancel_task(request).await {
        Ok(_) => tracing::debug!(%task_id, "canceled a delegated task with its parent"),
        Err(error) => tracing::debug!(%task_id, %error, "could not cancel a delegated task"),
    }
}

/// The task an event of a stream names.
fn task_id_of(event: &StreamResponse) -> Option<String> {
    let id = match event {
        StreamResponse::Task(task) => &task.id,
        StreamResponse::StatusUpdate(update) => &update.task_id,
        StreamResponse::ArtifactUpdate(update) => &update.task_id,
        StreamResponse::Message(message) => &message.task_id,
    };
    Some(id.clone()).filter(|id| !id.is_empty())
}
