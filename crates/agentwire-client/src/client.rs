//! The client: one agent, found by its card, called over the first interface it can use.

mod builder;

pub use builder::ClientBuilder;

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tracing::Instrument;

use agentwire_types::{
    AgentCard, CancelTaskRequest, ErrorKind, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, ListTasksRequest,
    ListTasksResponse, SendMessageRequest, SendMessageResponse, SubscribeToTaskRequest, Task,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};

use crate::endpoint::{Endpoint, Version};
use crate::error::{Error, Result};
use crate::oauth::ClientCredentials;
use crate::stream::{resumable, EventStream, Events, Reconnect, Reopen};
use crate::transport::Transport;
use crate::verify::CardSignature;
use agentwire_types::Binding;
use agentwire_types::{A2aRequest, A2aResponse};

/// A client of one agent.
///
/// [`ClientBuilder::connect`] reads the agent's card and orders the card's interfaces whose
/// binding (JSON-RPC, HTTP+JSON, and gRPC with the `grpc` feature) and protocol version (1.0 or
/// 0.3) it speaks: the card's order, with the builder's preferences first. Calls go to the first;
/// when an interface cannot be connected to, to the next; when a v1.0 interface answers
/// VersionNotSupported, to a v0.3 one. The client stays with the interface that answered.
/// Cloning is cheap: clones share the connections.
///
/// ```no_run
/// # async fn run() -> agentwire_client::Result<()> {
/// use agentwire_client::Client;
/// use agentwire_types::{Message, SendMessageRequest, SendMessageResponse};
///
/// let client = Client::connect("http://127.0.0.1:8080").await?;
/// let request = SendMessageRequest::new(Message::user("m-1", "hello"));
/// if let SendMessageResponse::Task(task) = client.send_message(request).await? {
///     println!("{} is {:?}", task.id, task.status.state);
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// JSON-RPC and HTTP+JSON.
    http: crate::http::HttpTransport,
    /// Where calls get their access token, when it is not a fixed credential.
    oauth: Option<ClientCredentials>,
    #[cfg(feature = "grpc")]
    grpc: crate::grpc::Channels,
    card: AgentCard,
    /// The card's signature that verified, when the client was told to verify it.
    signature: Option<CardSignature>,
    extended: bool,
    endpoints: Vec<Endpoint>,
    /// The endpoint in use: the last that answered.
    current: AtomicUsize,
    reconnect: Reconnect,
}

impl Client {
    /// A client of the agent at `url` (its base URL, or its card's URL), with default settings.
    pub async fn connect(url: &str) -> Result<Client> {
        Client::builder(url).connect().await
    }

    /// A builder for a client of the agent at `url`.
    pub fn builder(url: &str) -> ClientBuilder {
        ClientBuilder::new(url)
    }

    /// The agent's card: the extended one when it was fetched, else the public one.
    pub fn card(&self) -> &AgentCard {
        &self.inner.card
    }

    /// The signature of the public card that a trusted key verified, when the client was built
    /// with [`ClientBuilder::verify_card`] (a card that no trusted key verifies is refused, and
    /// no client is made); `None` when it was not asked to verify.
    pub fn card_signature(&self) -> Option<&CardSignature> {
        self.inner.signature.as_ref()
    }

    /// Whether [`Client::card`] is the extended card.
    pub fn has_extended_card(&self) -> bool {
        self.inner.extended
    }

    /// The interface calls go to.
    pub fn endpoint(&self) -> &Endpoint {
        &self.inner.endpoints[self.inner.current.load(Ordering::Relaxed)]
    }

    /// The interfaces this client may call, in the order it tries them.
    pub fn endpoints(&self) -> &[Endpoint] {
        &self.inner.endpoints
    }

    /// SendMessage: the task the message started or continued, or the agent's message reply.
    ///
    /// The send carries a fresh idempotency key (the `Idempotency-Key` header, gRPC metadata):
    /// when the connection breaks after it was sent, it is sent again under the same key, as often and as soon as a
    /// dropped stream is resumed ([`ClientBuilder::reconnect`]), and an agent that keeps keys
    /// answers the retry with the task the first made instead of making another.
    pub async fn send_message(&self, request: SendMessageRequest) -> Result<SendMessageResponse> {
        self.send_message_keyed(request, &new_idempotency_key()).await
    }

    /// [`send_message`](Self::send_message) under an idempotency key of the caller's (one it
    /// keeps across its own restarts, say): at most 256 visible ASCII characters.
    pub async fn send_message_keyed(&self, request: SendMessageRequest, key: &str) -> Result<SendMessageResponse> {
        let key = idempotency_header(key)?;
        let call = A2aRequest::SendMessage(request);
        let answer = self.resent(|| self.unary_with(call.clone(), Some(&key))).await?;
        Ok(answer.try_into()?)
    }

    /// SendStreamingMessage: the task's events as they happen, resumed if the connection drops.
    /// The send carries an idempotency key, and is sent again under it after a transport error,
    /// as [`send_message`](Self::send_message) is.
    pub async fn send_streaming_message(&self, request: SendMessageRequest) -> Result<EventStream> {
        self.send_streaming_message_keyed(request, &new_idempotency_key()).await
    }

    /// [`send_streaming_message`](Self::send_streaming_message) under an idempotency key of the
    /// caller's.
    pub async fn send_streaming_message_keyed(&self, request: SendMessageRequest, key: &str) -> Result<EventStream> {
        let key = idempotency_header(key)?;
        // A message that continues a task: its stream opens with the task, which a server may
        // show still waiting for the message it was just sent; only the events after it end the
        // stream, as for a subscription.
        let continued = request.message.task_id.clone();
        let call = A2aRequest::SendStreamingMessage(request);
        let events = self.resent(|| self.open_with(call.clone(), None, Some(&key))).await?;
        Ok(resumable(self.clone(), events, continued, None))
    }

    /// Runs `send` again after the connection broke once the request was sent (it may or may
    /// not have reached the agent), waiting as [`Reconnect`] says between attempts. An agent that
    /// could not be reached was sent nothing: the call has tried its other interfaces already.
    async fn resent<T, Send, Sent>(&self, send: Send) -> Result<T>
    where
        Send: Fn() -> Sent,
        Sent: Future<Output = Result<T>>,
    {
        let Reconnect { attempts, initial_backoff } = self.inner.reconnect;
        let mut wait = initial_backoff;
        for _ in 0..attempts {
            match send().await {
                // The request may have reached the agent: only its key makes sending it again safe.
                Err(error @ Error::Connection { .. }) => {
                    tracing::debug!(%error, "sending again under the same idempotency key");
                    tokio::time::sleep(wait).await;
                    wait = wait.saturating_mul(2);
                }
                outcome => return outcome,
            }
        }
        send().await
    }

    /// GetTask.
    pub async fn get_task(&self, request: GetTaskRequest) -> Result<Task> {
        Ok(self.unary(A2aRequest::GetTask(request)).await?.try_into()?)
    }

    /// ListTasks: one page.
    pub async fn list_tasks(&self, request: ListTasksRequest) -> Result<ListTasksResponse> {
        Ok(self.unary(A2aRequest::ListTasks(request)).await?.try_into()?)
    }

    /// CancelTask: the task as the cancellation left it.
    pub async fn cancel_task(&self, request: CancelTaskRequest) -> Result<Task> {
        Ok(self.unary(A2aRequest::CancelTask(request)).await?.try_into()?)
    }

    /// SubscribeToTask: the task's events as they happen, resumed if the connection drops.
    pub async fn subscribe(&self, request: SubscribeToTaskRequest) -> Result<EventStream> {
        self.subscribe_after(request, None).await
    }

    /// SubscribeToTask, with the events after `last_event_id` where the agent numbers its events.
    pub(crate) async fn subscribe_after(
        &self,
        request: SubscribeToTaskRequest,
        last_event_id: Option<u64>,
    ) -> Result<EventStream> {
        let task_id = request.id.clone();
        let events = self.open(A2aRequest::SubscribeToTask(request), last_event_id).await?;
        Ok(resumable(self.clone(), events, task_id, last_event_id))
    }

    /// CreateTaskPushNotificationConfig.
    pub async fn create_push_config(&self, config: TaskPushNotificationConfig) -> Result<TaskPushNotificationConfig> {
        Ok(self.unary(A2aRequest::CreatePushConfig(config)).await?.try_into()?)
    }

    /// GetTaskPushNotificationConfig.
    pub async fn get_push_config(&self, request: TaskPushNotificationConfigRef) -> Result<TaskPushNotificationConfig> {
        Ok(self.unary(A2aRequest::GetPushConfig(request)).await?.try_into()?)
    }

    /// ListTaskPushNotificationConfigs: one page.
    pub async fn list_push_configs(
        &self,
        request: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse> {
        Ok(self.unary(A2aRequest::ListPushConfigs(request)).await?.try_into()?)
    }

    /// DeleteTaskPushNotificationConfig.
    pub async fn delete_push_config(&self, request: TaskPushNotificationConfigRef) -> Result<()> {
        Ok(self.unary(A2aRequest::DeletePushConfig(request)).await?.try_into()?)
    }

    /// GetExtendedAgentCard: the card an authenticated caller sees.
    pub async fn extended_card(&self) -> Result<AgentCard> {
        Ok(self.unary(A2aRequest::GetExtendedAgentCard(GetExtendedAgentCardRequest::default())).await?.try_into()?)
    }

    /// Sends `call` to the endpoint in use, moving on while an endpoint cannot be reached or does
    /// not speak the version.
    pub(crate) async fn unary(&self, call: A2aRequest) -> Result<A2aResponse> {
        self.unary_with(call, None).await
    }

    /// [`unary`](Self::unary), with an idempotency key.
    async fn unary_with(&self, call: A2aRequest, key: Option<&::http::HeaderValue>) -> Result<A2aResponse> {
        let span = crate::trace::call_span(call.operation());
        let answer = self.routed(call, |endpoint, call| async move {
            let endpoint = keyed(endpoint, key);
            self.unary_at(&endpoint, &call).await
        });
        answer.instrument(span).await
    }

    /// Runs `attempt` at the endpoint in use, then, while [`Route::moves_on`] says so, at others.
    async fn routed<'a, T, F, Attempt>(&'a self, call: A2aRequest, attempt: F) -> Result<T>
    where
        F: Fn(&'a Endpoint, A2aRequest) -> Attempt,
        Attempt: Future<Output = Result<T>>,
    {
        let mut route = Route::new(self);
        loop {
            let endpoint = &self.inner.endpoints[route.index];
            let outcome = attempt(endpoint, call.clone().with_tenant(&endpoint.tenant)).await;
            if !route.moves_on(self, outcome.as_ref().err()) {
                return outcome;
            }
        }
    }

    /// The current access token's `Authorization` for `endpoint`, when calls get one from a
    /// token source and the endpoint gets the client's credentials.
    async fn authorization(&self, endpoint: &Endpoint) -> Result<Option<::http::HeaderValue>> {
        match &self.inner.oauth {
            Some(tokens) if endpoint.trusted => Ok(Some(tokens.authorization().await?)),
            _ => Ok(None),
        }
    }

    async fn unary_at(&self, endpoint: &Endpoint, call: &A2aRequest) -> Result<A2aResponse> {
        let authorization = self.authorization(endpoint).await?;
        self.transport(endpoint).unary(endpoint, authorization, call).await
    }

    /// The transport of `endpoint`'s binding.
    fn transport(&self, endpoint: &Endpoint) -> &dyn Transport {
        match endpoint.binding {
            #[cfg(feature = "grpc")]
            Binding::Grpc => &self.inner.grpc,
            _ => &self.inner.http,
        }
    }

    /// Opens the event stream of `call`, moving on between endpoints as [`Client::unary`] does.
    async fn open(&self, call: A2aRequest, last_event_id: Option<u64>) -> Result<Events> {
        self.open_with(call, last_event_id, None).await
    }

    /// [`open`](Self::open), with an idempotency key.
    async fn open_with(
        &self,
        call: A2aRequest,
        last_event_id: Option<u64>,
        key: Option<&::http::HeaderValue>,
    ) -> Result<Events> {
        let span = crate::trace::call_span(call.operation());
        let opened = self.routed(call, |endpoint, call| async move {
            let endpoint = keyed(endpoint, key);
            self.open_at(&endpoint, &call, last_event_id).await
        });
        opened.instrument(span).await
    }

    async fn open_at(&self, endpoint: &Endpoint, call: &A2aRequest, last_event_id: Option<u64>) -> Result<Events> {
        let authorization = self.authorization(endpoint).await?;
        self.transport(endpoint).open(endpoint, authorization, call, last_event_id).await
    }
}

/// A fresh idempotency key: a random UUID.
fn new_idempotency_key() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `key` as the header value it is sent in.
fn idempotency_header(key: &str) -> Result<::http::HeaderValue> {
    if key.is_empty() || key.len() > 256 || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Error::Encode("an idempotency key is 1 to 256 visible ASCII characters".into()));
    }
    ::http::HeaderValue::from_str(key).map_err(|e| Error::Encode(e.to_string()))
}

/// `endpoint` with the idempotency key among the headers it sends, if there is one.
fn keyed<'a>(endpoint: &'a Endpoint, key: Option<&::http::HeaderValue>) -> std::borrow::Cow<'a, Endpoint> {
    let Some(key) = key else { return std::borrow::Cow::Borrowed(endpoint) };
    let mut endpoint = endpoint.clone();
    endpoint.headers.insert(agentwire_types::IDEMPOTENCY_KEY, key.clone());
    std::borrow::Cow::Owned(endpoint)
}

/// Which endpoint a call tries next, and which it has tried.
struct Route {
    index: usize,
    tried: Vec<bool>,
}

impl Route {
    fn new(client: &Client) -> Self {
        let tried = vec![false; client.inner.endpoints.len()];
        Route { index: client.inner.current.load(Ordering::Relaxed), tried }
    }

    /// Whether the call moves on to another endpoint after the outcome `error` (`None`: success)
    /// at the current one: when the endpoint cannot be reached, or a v1.0 one does not speak the
    /// version, to an endpoint not tried yet. A call that succeeds makes the client stay at its
    /// endpoint; any other error ends the call, since another endpoint would answer it alike.
    fn moves_on(&mut self, client: &Client, error: Option<&Error>) -> bool {
        self.tried[self.index] = true;
        let endpoints = &client.inner.endpoints;
        let here = &endpoints[self.index];
        let untried: Vec<usize> =
            (self.index + 1..endpoints.len()).chain(0..self.index).filter(|i| !self.tried[*i]).collect();
        let next = match error {
            None => {
                client.inner.current.store(self.index, Ordering::Relaxed);
                None
            }
            Some(Error::Unreachable { .. }) => untried.first().copied(),
            Some(error) if error.kind() == Some(ErrorKind::VersionNotSupported) && here.version == Version::V1 => {
                let v03 = |i: &&usize| endpoints[**i].version == Version::V03;
                let same_binding = untried.iter().filter(v03).find(|i| endpoints[**i].binding == here.binding);
                same_binding.or_else(|| untried.iter().find(v03)).copied()
            }
            Some(_) => None,
        };
        let Some(next) = next else { return false };
        tracing::debug!(from = %here, to = %endpoints[next], "trying the next interface");
        self.index = next;
        true
    }
}

/// Where `value` stands among `preferences`: its position, or after all of them.
fn rank<T: PartialEq>(preferences: &[T], value: T) -> usize {
    preferences.iter().position(|p| *p == value).unwrap_or(preferences.len())
}

/// A stream opened by the client resumes through it.
impl Reopen for Client {
    fn reconnect(&self) -> Reconnect {
        self.inner.reconnect
    }

    fn dialect(&self) -> agentwire_types::Dialect {
        self.endpoint().version.dialect()
    }

    async fn subscribe(&self, task_id: &str, last_id: Option<u64>) -> Result<Events> {
        let request = SubscribeToTaskRequest { id: task_id.to_owned(), ..SubscribeToTaskRequest::default() };
        self.open(A2aRequest::SubscribeToTask(request), last_id).await
    }

    async fn task(&self, request: GetTaskRequest) -> Result<Task> {
        self.get_task(request).await
    }
}
