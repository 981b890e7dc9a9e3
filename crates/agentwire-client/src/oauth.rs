//! OAuth 2.0 client credentials (RFC 6749 §4.4): the access token a client presents as
//! `Authorization: Bearer`, fetched from the identity provider and kept until shortly before it
//! expires.

use std::time::Duration;

use http::HeaderValue;
use serde::Deserialize;
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::error::{Error, Result};

/// How long before its expiry a token is replaced: a call made with it must still arrive in time.
pub(crate) const EARLY: Duration = Duration::from_secs(30);

/// The largest token response read.
const MAX_RESPONSE: usize = 64 * 1024;

/// An OAuth 2.0 client of an identity provider's token endpoint, with the client credentials
/// grant: every call carries a current access token, fetched on first use and again 30 seconds
/// before it expires (or, without an `expires_in`, every five minutes). Clones share the token.
///
/// ```no_run
/// # async fn run() -> agentwire_client::Result<()> {
/// use agentwire_client::{Client, ClientCredentials};
///
/// let tokens = ClientCredentials::new("https://idp.example/oauth2/token", "my-agent", "s3cret")
///     .scope("a2a:read a2a:write")
///     .audience("urn:agent:billing");
/// let client = Client::builder("https://billing.example").oauth2(tokens).connect().await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct ClientCredentials {
    endpoint: TokenEndpoint,
    form: Vec<(&'static str, String)>,
    current: std::sync::Arc<Mutex<Option<(HeaderValue, Instant)>>>,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials").field("endpoint", &self.endpoint).finish_non_exhaustive()
    }
}

impl ClientCredentials {
    /// Authenticates as `client_id` with `client_secret` (HTTP Basic, RFC 6749 §2.3.1) at
    /// `token_url`.
    pub fn new(token_url: impl Into<String>, client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        Self {
            endpoint: TokenEndpoint::new(token_url.into(), client_id.into(), client_secret.into()),
            form: vec![("grant_type", "client_credentials".to_owned())],
            current: Default::default(),
        }
    }

    /// Asks for these scopes (space-separated).
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.form.push(("scope", scope.into()));
        self
    }

    /// Asks for a token meant for `audience` (the `audience` parameter many providers take).
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.form.push(("audience", audience.into()));
        self
    }

    /// `Bearer ACCESS_TOKEN` with a token that is current.
    pub(crate) async fn authorization(&self) -> Result<HeaderValue> {
        let mut current = self.current.lock().await;
        if let Some((value, until)) = current.as_ref()
            && Instant::now() < *until
        {
            return Ok(value.clone());
        }
        let (value, lifetime) = self.endpoint.token(&self.form).await?;
        *current = Some((value.clone(), Instant::now() + lifetime.saturating_sub(EARLY)));
        Ok(value)
    }
}

/// An identity provider's token endpoint, as one client authenticated by its id and secret
/// (HTTP Basic, RFC 6749 §2.3.1) calls it: each grant is a form posted there.
#[derive(Clone)]
pub(crate) struct TokenEndpoint {
    token_url: String,
    client_id: String,
    client_secret: String,
    http: reqwest::Client,
}

impl std::fmt::Debug for TokenEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenEndpoint")
            .field("token_url", &self.token_url)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
}

impl TokenEndpoint {
    pub(crate) fn new(token_url: String, client_id: String, client_secret: String) -> Self {
        let http = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap_or_default();
        Self { token_url, client_id, client_secret, http }
    }

    /// The URL tokens are asked of.
    pub(crate) fn url(&self) -> &str {
        &self.token_url
    }

    /// A token granted for `form`, as `Bearer TOKEN`, and how long it is valid (five minutes
    /// when the answer does not say).
    pub(crate) async fn token(&self, form: &[(&str, String)]) -> Result<(HeaderValue, Duration)> {
        let url = &self.token_url;
        let form = serde_urlencoded::to_string(form).map_err(|e| Error::Encode(e.to_string()))?;
        let id = form_encoded(&self.client_id);
        let secret = form_encoded(&self.client_secret);
        let response = self
            .http
            .post(url)
            .basic_auth(id, Some(secret))
            .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .map_err(|source| Error::transport(url, source))?;
        let status = response.status();
        let body = crate::limits::read_limited(response, MAX_RESPONSE).await?;
        if !status.is_success() {
            return Err(Error::http(url, status, &body));
        }
        let token: TokenResponse =
            serde_json::from_slice(&body).map_err(|e| Error::decode(url, format!("not a token response: {e}")))?;
        // RFC 8693 answers `N_A` for a token that is not an access token.
        if token.token_type.as_deref().is_some_and(|t| !t.eq_ignore_ascii_case("bearer")) {
            return Err(Error::decode(url, format!("a token of type {:?}, not Bearer", token.token_type)));
        }
        let mut value = HeaderValue::try_from(format!("Bearer {}", token.access_token))
            .map_err(|_| Error::decode(url, "the access token is not a header value"))?;
        value.set_sensitive(true);
        Ok((value, Duration::from_secs(token.expires_in.unwrap_or(300))))
    }
}

/// What `application/x-www-form-urlencoded` leaves as it is: letters, digits and `*-._`.
const FORM: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'*').remove(b'-').remove(b'.').remove(b'_');

/// RFC 6749 §2.3.1: the client id and secret are form-encoded before Basic encodes them.
fn form_encoded(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, FORM).to_string()
}
