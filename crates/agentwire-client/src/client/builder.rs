//! How a [`Client`] is built: credentials, the interfaces to call and in what order, timeouts,
//! reconnection and the card cache, then the card read and the client connected.

use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::Arc;
use std::time::Duration;

use agentwire_types::{AgentCard, Binding};

use super::{rank, Client, Inner};
use crate::card::{self, CardCache};
use crate::credentials::Credentials;
use crate::endpoint::{Endpoint, Version};
use crate::error::{Error, Result};
use crate::oauth::ClientCredentials;
use crate::stream::Reconnect;
use crate::tls::TlsSettings;
use crate::verify::CardVerifier;

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
    /// A builder for a client of the agent at `url`, with default settings.
    pub(super) fn new(url: &str) -> Self {
        Self {
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
