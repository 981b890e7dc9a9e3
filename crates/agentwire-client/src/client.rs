//! The client: one agent, found by its card, called over the first interface it can use.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use agentwire_types::{
    AgentCard, CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, SendMessageRequest,
    SendMessageResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};
use http::header::{HeaderName, HeaderValue, ACCEPT, AUTHORIZATION};
use http::{HeaderMap, Method};
use serde::de::DeserializeOwned;

use crate::discovery::fetch_card;
use crate::error::{Error, Result};
use crate::stream::{events, resumable, EventStream, Reconnect};
use crate::transport::{encode, read_answer, read_refusal, Binding, Endpoint, Operation, Rest};

/// A client of one agent.
///
/// [`Client::connect`] reads the agent's card and calls the first interface in the card's order
/// whose binding (JSON-RPC or HTTP+JSON) and version (1.0) it speaks; when that interface cannot
/// be reached, the next one. Cloning is cheap: clones share the connection pool.
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
    http: reqwest::Client,
    card: AgentCard,
    endpoints: Vec<Endpoint>,
    /// The endpoint in use: the first that could be reached.
    current: AtomicUsize,
    next_request_id: AtomicU64,
    /// The limit on a unary call; streams have none.
    timeout: Option<Duration>,
    reconnect: Reconnect,
}

/// How to build a [`Client`]: credentials, the preferred binding, timeouts, and reconnection.
///
/// ```no_run
/// # async fn run() -> agentwire_client::Result<()> {
/// use agentwire_client::{Binding, Client};
///
/// let client = Client::builder("https://agent.example.com")
///     .bearer_token("secret")
///     .prefer(Binding::HttpJson)
///     .connect()
///     .await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    url: String,
    headers: HeaderMap,
    prefer: Vec<Binding>,
    only: Option<Binding>,
    timeout: Option<Duration>,
    reconnect: Reconnect,
    invalid_header: Option<String>,
}

impl ClientBuilder {
    /// Sends `Authorization: Bearer TOKEN` with every request.
    pub fn bearer_token(self, token: &str) -> Self {
        self.header(AUTHORIZATION.as_str(), &format!("Bearer {token}"))
    }

    /// Sends the API key `key` in the header `name` with every request.
    pub fn api_key(self, name: &str, key: &str) -> Self {
        self.header(name, key)
    }

    /// Sends the header `name: value` with every request.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            (Ok(name), Ok(mut value)) => {
                value.set_sensitive(name == AUTHORIZATION);
                self.headers.insert(name, value);
            }
            _ => self.invalid_header = Some(name.to_owned()),
        }
        self
    }

    /// Tries interfaces of `binding` before the others (repeatable: earlier calls first).
    pub fn prefer(mut self, binding: Binding) -> Self {
        self.prefer.push(binding);
        self
    }

    /// Uses interfaces of `binding` only.
    pub fn only(mut self, binding: Binding) -> Self {
        self.only = Some(binding);
        self
    }

    /// The limit on a unary call, from connecting to the whole answer (none by default; streams
    /// are never limited).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// How a dropped stream is resumed.
    pub fn reconnect(mut self, reconnect: Reconnect) -> Self {
        self.reconnect = reconnect;
        self
    }

    /// Reads the card and chooses the interface.
    pub async fn connect(self) -> Result<Client> {
        if let Some(name) = self.invalid_header {
            return Err(Error::Decode { url: self.url, detail: format!("the header {name:?} is not a valid header") });
        }
        let http = reqwest::Client::builder()
            .default_headers(self.headers)
            .build()
            .map_err(|source| Error::Connection { url: self.url.clone(), source })?;
        let card = fetch_card(&http, &self.url).await?;
        let interfaces = &card.supported_interfaces;
        let mut endpoints: Vec<Endpoint> = interfaces.iter().filter_map(Endpoint::of).collect();
        endpoints.retain(|e| self.only.is_none_or(|only| e.binding == only));
        // A stable sort keeps the card's order among equally preferred bindings.
        endpoints.sort_by_key(|e| self.prefer.iter().position(|p| *p == e.binding).unwrap_or(self.prefer.len()));
        if endpoints.is_empty() {
            let offered: Vec<String> =
                interfaces.iter().map(|i| format!("{} {} {}", i.protocol_binding, i.protocol_version, i.url)).collect();
            let offered = if offered.is_empty() { "none".to_owned() } else { offered.join(", ") };
            return Err(Error::NoInterface { offered });
        }
        let inner = Inner {
            http,
            card,
            endpoints,
            current: AtomicUsize::new(0),
            next_request_id: AtomicU64::new(1),
            timeout: self.timeout,
            reconnect: self.reconnect,
        };
        Ok(Client { inner: Arc::new(inner) })
    }
}

impl Client {
    /// A client of the agent at `url` (its base URL, or its card's URL), with default settings.
    pub async fn connect(url: &str) -> Result<Client> {
        Client::builder(url).connect().await
    }

    /// A builder for a client of the agent at `url`.
    pub fn builder(url: &str) -> ClientBuilder {
        ClientBuilder {
            url: url.to_owned(),
            headers: HeaderMap::new(),
            prefer: Vec::new(),
            only: None,
            timeout: None,
            reconnect: Reconnect::default(),
            invalid_header: None,
        }
    }

    /// The agent's public card.
    pub fn card(&self) -> &AgentCard {
        &self.inner.card
    }

    /// The interface calls go to.
    pub fn endpoint(&self) -> &Endpoint {
        &self.inner.endpoints[self.inner.current.load(Ordering::Relaxed)]
    }

    pub(crate) fn reconnect(&self) -> Reconnect {
        self.inner.reconnect
    }

    /// SendMessage: the task the message started or continued, or the agent's message reply.
    pub async fn send_message(&self, request: SendMessageRequest) -> Result<SendMessageResponse> {
        self.call(Operation::new("SendMessage", Method::POST, "/message:send".into(), Rest::Body, request)).await
    }

    /// SendStreamingMessage: the task's events as they happen, resumed if the connection drops.
    pub async fn send_streaming_message(&self, request: SendMessageRequest) -> Result<EventStream> {
        let operation =
            Operation::new("SendStreamingMessage", Method::POST, "/message:stream".into(), Rest::Body, request);
        let events = self.open(&operation, None).await?;
        Ok(resumable(self.clone(), events, String::new()))
    }

    /// GetTask.
    pub async fn get_task(&self, request: GetTaskRequest) -> Result<Task> {
        let path = format!("/tasks/{}", encode(&request.id));
        self.call(Operation::new("GetTask", Method::GET, path, Rest::Query, request).in_path(&["id"])).await
    }

    /// ListTasks: one page.
    pub async fn list_tasks(&self, request: ListTasksRequest) -> Result<ListTasksResponse> {
        self.call(Operation::new("ListTasks", Method::GET, "/tasks".into(), Rest::Query, request)).await
    }

    /// CancelTask: the task as the cancellation left it.
    pub async fn cancel_task(&self, request: CancelTaskRequest) -> Result<Task> {
        let path = format!("/tasks/{}:cancel", encode(&request.id));
        self.call(Operation::new("CancelTask", Method::POST, path, Rest::Body, request).in_path(&["id"])).await
    }

    /// SubscribeToTask: the task, then its events as they happen, resumed if the connection drops.
    pub async fn subscribe(&self, request: SubscribeToTaskRequest) -> Result<EventStream> {
        let task_id = request.id.clone();
        let events = self.open(&subscription(request), None).await?;
        Ok(resumable(self.clone(), events, task_id))
    }

    /// SubscribeToTask after the event `last_event_id`.
    pub(crate) async fn open_subscription(
        &self,
        task_id: &str,
        last_event_id: Option<u64>,
    ) -> Result<crate::stream::Events> {
        let request = SubscribeToTaskRequest { id: task_id.to_owned(), ..SubscribeToTaskRequest::default() };
        self.open(&subscription(request), last_event_id).await
    }

    /// CreateTaskPushNotificationConfig.
    pub async fn create_push_config(&self, config: TaskPushNotificationConfig) -> Result<TaskPushNotificationConfig> {
        let path = format!("/tasks/{}/pushNotificationConfigs", encode(&config.task_id));
        let operation = Operation::new("CreateTaskPushNotificationConfig", Method::POST, path, Rest::Body, config);
        self.call(operation.in_path(&["taskId"])).await
    }

    /// GetTaskPushNotificationConfig.
    pub async fn get_push_config(&self, request: TaskPushNotificationConfigRef) -> Result<TaskPushNotificationConfig> {
        let path = format!("/tasks/{}/pushNotificationConfigs/{}", encode(&request.task_id), encode(&request.id));
        let operation = Operation::new("GetTaskPushNotificationConfig", Method::GET, path, Rest::Query, request);
        self.call(operation.in_path(&["taskId", "id"])).await
    }

    /// ListTaskPushNotificationConfigs: one page.
    pub async fn list_push_configs(
        &self,
        request: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse> {
        let path = format!("/tasks/{}/pushNotificationConfigs", encode(&request.task_id));
        let operation = Operation::new("ListTaskPushNotificationConfigs", Method::GET, path, Rest::Query, request);
        self.call(operation.in_path(&["taskId"])).await
    }

    /// DeleteTaskPushNotificationConfig.
    pub async fn delete_push_config(&self, request: TaskPushNotificationConfigRef) -> Result<()> {
        let path = format!("/tasks/{}/pushNotificationConfigs/{}", encode(&request.task_id), encode(&request.id));
        let operation = Operation::new("DeleteTaskPushNotificationConfig", Method::DELETE, path, Rest::Query, request);
        self.call::<serde_json::Value>(operation.in_path(&["taskId", "id"])).await.map(drop)
    }

    /// GetExtendedAgentCard: the card an authenticated caller sees.
    pub async fn extended_card(&self) -> Result<AgentCard> {
        let request = GetExtendedAgentCardRequest::default();
        self.call(Operation::new(
            "GetExtendedAgentCard",
            Method::GET,
            "/extendedAgentCard".into(),
            Rest::Query,
            request,
        ))
        .await
    }

    /// Sends `operation` to the endpoint in use, moving on to the next endpoint while one cannot
    /// be reached.
    async fn send(&self, operation: &Operation, answer: Answer) -> Result<(Binding, reqwest::Response)> {
        let first = self.inner.current.load(Ordering::Relaxed);
        let mut last_error = None;
        for index in first..self.inner.endpoints.len() {
            let endpoint = &self.inner.endpoints[index];
            let id = self.inner.next_request_id.fetch_add(1, Ordering::Relaxed);
            let mut request = operation.request(&self.inner.http, endpoint, id);
            match answer {
                Answer::Unary => {
                    if let Some(timeout) = self.inner.timeout {
                        request = request.timeout(timeout);
                    }
                }
                Answer::Events(last_event_id) => {
                    request = request.header(ACCEPT, "text/event-stream");
                    if let Some(seen) = last_event_id {
                        request = request.header("Last-Event-ID", seen.to_string());
                    }
                }
            }
            match request.send().await {
                Ok(response) => {
                    self.inner.current.store(index, Ordering::Relaxed);
                    return Ok((endpoint.binding, response));
                }
                Err(source) => {
                    let error = Error::Connection { url: endpoint.url.clone(), source };
                    if !error.is_unreachable() {
                        return Err(error);
                    }
                    tracing::debug!(url = %endpoint.url, "interface unreachable; trying the next one");
                    last_error = Some(error);
                }
            }
        }
        Err(last_error.expect("a client has at least one endpoint"))
    }

    async fn call<T: DeserializeOwned>(&self, operation: Operation) -> Result<T> {
        let (binding, response) = self.send(&operation, Answer::Unary).await?;
        read_answer(binding, response).await
    }

    async fn open(&self, operation: &Operation, last_event_id: Option<u64>) -> Result<crate::stream::Events> {
        let (binding, response) = self.send(operation, Answer::Events(last_event_id)).await?;
        let is_sse = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            return Err(read_refusal(binding, response).await);
        }
        Ok(events(binding, response))
    }
}

fn subscription(request: SubscribeToTaskRequest) -> Operation {
    let path = format!("/tasks/{}:subscribe", encode(&request.id));
    Operation::new("SubscribeToTask", Method::POST, path, Rest::Body, request).in_path(&["id"])
}

/// What a call expects back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answer {
    /// One answer, within the client's timeout.
    Unary,
    /// An event stream, after the event with this id if given.
    Events(Option<u64>),
}
