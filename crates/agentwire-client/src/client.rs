//! The client: one agent, found by its card, called over the first interface it can use.

use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument;

use agentwire_types::{
    AgentCard, CancelTaskRequest, ErrorKind, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, ListTasksRequest,
    ListTasksResponse, SendMessageRequest, SendMessageResponse, SubscribeToTaskRequest, Task,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};

use crate::card::{self, CardCache};
use crate::credentials::Credentials;
use crate::endpoint::{Endpoint, Version};
use crate::error::{Error, Result};
use crate::oauth::ClientCredentials;
use crate::stream::{resumable, EventStream, Events, Reconnect, Reopen};
use crate::tls::TlsSettings;
use crate::transport::Transport;
use crate::verify::{CardSignature, CardVerifier};
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

/// The host of `url`, lowercased; `None` when it is no URL with a host. `localhost`, `127.0.0.1`
/// and `[::1]` are one host: a card written for one names the others (other loopback addresses,
/// such as `127.0.0.2`, can be other services, and stay apart).
fn host_of(url: &str) -> Option<String> {
    // A gRPC interface may be a target without a scheme (`host:port`).
    let url = match url.contains("://") {
        true => reqwest::Url::parse(url).ok()?,
        false => reqwest::Url::parse(&format!("http://{url}")).ok()?,
    };
    let host = url.host_str()?.trim_end_matches('.').to_ascii_lowercase();
    Some(match host.as_str() {
        "127.0.0.1" | "[::1]" => "localhost".to_owned(),
        _ => host,
    })
}

/// How to build a [`Client`]: credentials, the preferred bindings and versions, timeouts,
/// reconnection, and the card cache.
///
/// ```no_run
/// # async fn run() -> agentwire_client::Result<()> {
/// use agentwire_client::{Binding, Client, Version};
///
/// let client = Client::builder("https://agent.example.com")
///     .bearer_token("secret")
///     .prefer(Binding::HttpJson)
///     .prefer_version(Version::V03)
///     .connect()
///     .await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    url: String,
    credentials: Credentials,
    interface_credentials: Vec<(String, Credentials)>,
    prefer: Vec<Binding>,
    only: Option<Binding>,
    prefer_version: Vec<Version>,
    only_version: Option<Version>,
    timeout: Option<Duration>,
    card_timeout: Option<Duration>,
    reconnect: Reconnect,
    max_event_size: usize,
    max_reply_size: usize,
    /// Hosts whose interfaces get the credentials, besides the agent's own.
    allowed_hosts: Vec<String>,
    /// Whether interfaces on other hosts than those are called at all.
    agent_host_only: bool,
    card_cache: CardCache,
    extended_card: bool,
    http: Option<reqwest::Client>,
    card_verifier: Option<CardVerifier>,
    oauth: Option<ClientCredentials>,
    tls: TlsSettings,
}

impl ClientBuilder {
    /// Also trusts the CA certificates of this PEM bundle, on every binding (the web's roots stay
    /// trusted). Applies to the HTTP client the builder makes, not to one given with
    /// [`http_client`](Self::http_client).
    pub fn tls_root_certificates(mut self, pem: &[u8]) -> Self {
        self.tls.roots.push(pem.to_vec());
        self
    }

    /// Presents this client certificate (a PEM chain and its PEM private key) to agents that
    /// ask for one (mutual TLS), on every binding. Applies to the HTTP client the builder makes,
    /// not to one given with [`http_client`](Self::http_client).
    pub fn tls_identity(mut self, certificate_chain: &[u8], private_key: &[u8]) -> Self {
        self.tls.identity = Some((certificate_chain.to_vec(), private_key.to_vec()));
        self
    }

    /// Sends every call (and the extended card's fetch) with an access token of `tokens`, kept
    /// current: OAuth 2.0 client credentials in place of a fixed bearer token.
    pub fn oauth2(mut self, tokens: ClientCredentials) -> Self {
        self.oauth = Some(tokens);
        self
    }

    /// Trusts the agent card only if `verifier` accepts one of its signatures (A2A v1.0 §8.4);
    /// otherwise [`connect`](Self::connect) fails with [`Error::UntrustedCard`].
    pub fn verify_card(mut self, verifier: CardVerifier) -> Self {
        self.card_verifier = Some(verifier);
        self
    }

    /// Calls the JSON bindings (and fetches cards) with `http`, a `reqwest::Client` configured as
    /// the application needs (a proxy, root certificates, a client certificate, timeouts)
    /// instead of a default one.
    ///
    /// ```no_run
    /// # async fn run() -> agentwire_client::Result<()> {
    /// let http = reqwest::Client::builder().user_agent("my-agent/1.0").build().unwrap();
    /// let client = agentwire_client::Client::builder("https://agent.example.com").http_client(http).connect().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn http_client(mut self, http: reqwest::Client) -> Self {
        self.http = Some(http);
        self
    }

    /// Sends `Authorization: Bearer TOKEN` with every call.
    pub fn bearer_token(mut self, token: &str) -> Self {
        self.credentials = self.credentials.bearer_token(token);
        self
    }

    /// Sends the API key `key` in the header `name` with every call.
    pub fn api_key(mut self, name: &str, key: &str) -> Self {
        self.credentials = self.credentials.api_key(name, key);
        self
    }

    /// Sends the header `name: value` with every call (and the card request).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.credentials = self.credentials.header(name, value);
        self
    }

    /// Sends `credentials` with every call (added to those set already).
    pub fn credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = self.credentials.merged(&credentials);
        self
    }

    /// Sends `credentials` with the calls to the interface at `url` as well, replacing the
    /// general ones of the same names there.
    pub fn interface_credentials(mut self, url: &str, credentials: Credentials) -> Self {
        self.interface_credentials.push((url.trim_end_matches('/').to_owned(), credentials));
        self
    }

    /// Sends the client's credentials (the bearer token, API keys, headers and OAuth tokens) to
    /// interfaces on `host` too (repeatable). By default they go only to interfaces on the host
    /// of the URL the client was given: a card names its interfaces, and whoever writes the
    /// card (or changes it on the way) would otherwise choose where the credentials go.
    /// [`interface_credentials`](Self::interface_credentials) names credentials for one
    /// interface wherever it is.
    ///
    /// ```no_run
    /// # async fn run() -> agentwire_client::Result<()> {
    /// // The card is at agent.example.com; its interfaces are at api.example.com.
    /// let client = agentwire_client::Client::builder("https://agent.example.com")
    ///     .bearer_token("secret")
    ///     .allow_host("api.example.com")
    ///     .connect()
    ///     .await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn allow_host(mut self, host: &str) -> Self {
        if let Some(host) = host_of(&format!("http://{host}")) {
            self.allowed_hosts.push(host);
        }
        self
    }

    /// Calls only the interfaces on the agent's host (the URL the client was given) and on the
    /// hosts [allowed](Self::allow_host): a card that names others is not followed there at
    /// all. What a gateway does, whose callers' messages would otherwise go wherever an agent's
    /// card says.
    pub fn agent_host_only(mut self) -> Self {
        self.agent_host_only = true;
        self
    }

    /// The largest unary answer the client reads over JSON-RPC and HTTP+JSON, in bytes
    /// ([`DEFAULT_MAX_REPLY_SIZE`](crate::DEFAULT_MAX_REPLY_SIZE) by default); a larger one is refused with [`Error::Decode`],
    /// so an agent cannot make the client hold without bound.
    pub fn max_reply_size(mut self, bytes: usize) -> Self {
        self.max_reply_size = bytes;
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

    /// Tries interfaces of protocol `version` before the others (after the binding preferences).
    pub fn prefer_version(mut self, version: Version) -> Self {
        self.prefer_version.push(version);
        self
    }

    /// Uses interfaces of protocol `version` only.
    pub fn only_version(mut self, version: Version) -> Self {
        self.only_version = Some(version);
        self
    }

    /// The limit on a unary call, from connecting to the whole answer, and on finding the card
    /// (none by default; streams are never limited). A call past it fails with
    /// [`Error::Timeout`].
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The limit on finding the agent's card (the extended card too), when it differs from
    /// [`timeout`](Self::timeout): for a client whose calls may wait on the agent's work for
    /// long, of an agent that should answer its card at once.
    pub fn card_timeout(mut self, timeout: Duration) -> Self {
        self.card_timeout = Some(timeout);
        self
    }

    /// How a dropped stream is resumed.
    pub fn reconnect(mut self, reconnect: Reconnect) -> Self {
        self.reconnect = reconnect;
        self
    }

    /// The largest event the client reads from an event stream (JSON-RPC and HTTP+JSON), in
    /// bytes ([`DEFAULT_MAX_REPLY_SIZE`](crate::DEFAULT_MAX_REPLY_SIZE) by default, the largest task an agentwire server keeps):
    /// a larger one ends the stream with [`Error::Decode`], so an agent cannot make the client
    /// hold without bound.
    ///
    /// ```no_run
    /// # async fn run() -> agentwire_client::Result<()> {
    /// let client = agentwire_client::Client::builder("https://agent.example.com")
    ///     .max_event_size(16 * 1024 * 1024)
    ///     .connect()
    ///     .await?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn max_event_size(mut self, bytes: usize) -> Self {
        self.max_event_size = bytes;
        self
    }

    /// Keeps the agent's card in `cache`, shared with the other clients given it.
    pub fn card_cache(mut self, cache: &CardCache) -> Self {
        self.card_cache = cache.clone();
        self
    }

    /// Whether to fetch the extended card when the card offers one and credentials are set (on
    /// by default). [`Client::card`] is then the extended card.
    pub fn extended_card(mut self, fetch: bool) -> Self {
        self.extended_card = fetch;
        self
    }

    /// Reads the card, orders the interfaces, and, where it is offered and credentials are set,
    /// fetches the extended card.
    pub async fn connect(mut self) -> Result<Client> {
        let http = match self.http.take() {
            Some(http) => http,
            None => self.tls.http_client()?,
        };
        let headers = self.credentials.headers()?;
        let card_timeout = self.card_timeout.or(self.timeout);
        let found = card::fetch(&http, &self.url, headers, &self.card_cache, card_timeout).await?;
        let signature = match &self.card_verifier {
            Some(verifier) => Some(verifier.verify(&http, &found).await?),
            None => None,
        };
        let card = found.card;
        let endpoints = self.endpoints(&card)?;
        let has_credentials =
            !self.credentials.is_empty() || !self.interface_credentials.is_empty() || self.oauth.is_some();
        let offers_extended = card.capabilities.extended_agent_card == Some(true);
        let http = crate::http::HttpTransport {
            client: http,
            next_request_id: AtomicU64::new(1),
            timeout: self.timeout,
            max_event_size: self.max_event_size,
            max_reply_size: self.max_reply_size,
        };
        let inner = Inner {
            http,
            oauth: self.oauth.take(),
            #[cfg(feature = "grpc")]
            grpc: crate::grpc::Channels::new(self.tls.clone(), found.url.starts_with("https://"), self.timeout),
            card,
            signature,
            extended: false,
            endpoints,
            current: AtomicUsize::new(0),
            reconnect: self.reconnect,
        };
        let mut client = Client { inner: Arc::new(inner) };
        if self.extended_card && offers_extended && has_credentials {
            let extended = client.extended_card();
            let extended = match card_timeout {
                Some(limit) => tokio::time::timeout(limit, extended)
                    .await
                    .unwrap_or_else(|_| Err(Error::Timeout { url: self.url.clone(), after: limit })),
                None => extended.await,
            };
            match extended {
                // The client is not shared yet: nothing else holds its `Arc`.
                Ok(card) => {
                    if let Some(inner) = Arc::get_mut(&mut client.inner) {
                        (inner.card, inner.extended) = (card, true);
                    }
                }
                Err(error) => tracing::debug!(%error, "the extended card could not be fetched; using the public card"),
            }
        }
        Ok(client)
    }

    /// The card's interfaces this client can call, in the order to try them, each with its
    /// credentials.
    fn endpoints(&self, card: &AgentCard) -> Result<Vec<Endpoint>> {
        let interfaces = &card.supported_interfaces;
        let mut endpoints: Vec<Endpoint> = interfaces.iter().filter_map(Endpoint::of).collect();
        endpoints.retain(|e| self.only.is_none_or(|only| e.binding == only));
        endpoints.retain(|e| self.only_version.is_none_or(|only| e.version == only));
        // A stable sort keeps the card's order among equally preferred interfaces.
        endpoints.sort_by_key(|e| (rank(&self.prefer, e.binding), rank(&self.prefer_version, e.version)));
        endpoints
            .dedup_by(|a, b| (a.binding, a.version, &a.url, &a.tenant) == (b.binding, b.version, &b.url, &b.tenant));
        let agent_host = host_of(&self.url);
        for endpoint in &mut endpoints {
            let host = host_of(&endpoint.url);
            endpoint.trusted =
                host.is_some() && (host == agent_host || self.allowed_hosts.iter().any(|h| Some(h) == host.as_ref()));
        }
        if self.agent_host_only {
            endpoints.retain(|endpoint| endpoint.trusted);
        }
        if endpoints.is_empty() {
            let offered: Vec<String> =
                interfaces.iter().map(|i| format!("{} {} {}", i.protocol_binding, i.protocol_version, i.url)).collect();
            let mut offered = if offered.is_empty() { "none".to_owned() } else { offered.join(", ") };
            if self.agent_host_only && !interfaces.is_empty() {
                let url = reqwest::Url::parse(&self.url).ok();
                let host = url.as_ref().and_then(reqwest::Url::host_str).unwrap_or_default();
                offered.push_str(&format!("; only interfaces on {host} (and hosts allowed) are called"));
            }
            return Err(Error::NoInterface { offered });
        }
        for endpoint in &mut endpoints {
            // The general credentials go to the agent's own host (and the hosts allowed) alone:
            // whoever writes the card would otherwise choose where they go.
            let general = if endpoint.trusted { self.credentials.clone() } else { Credentials::default() };
            let specific = self.interface_credentials.iter().filter(|(url, _)| *url == endpoint.url);
            let credentials = specific.fold(general, |all, (_, more)| all.merged(more));
            endpoint.headers = credentials.headers()?.clone();
        }
        Ok(endpoints)
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
            credentials: Credentials::default(),
            interface_credentials: Vec::new(),
            prefer: Vec::new(),
            only: None,
            prefer_version: Vec::new(),
            only_version: None,
            timeout: None,
            card_timeout: None,
            reconnect: Reconnect::default(),
            max_event_size: crate::limits::DEFAULT_MAX_EVENT_SIZE,
            max_reply_size: crate::limits::DEFAULT_MAX_REPLY_SIZE,
            allowed_hosts: Vec::new(),
            agent_host_only: false,
            card_cache: CardCache::default(),
            extended_card: true,
            http: None,
            card_verifier: None,
            oauth: None,
            tls: TlsSettings::default(),
        }
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
