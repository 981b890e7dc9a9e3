//! OAuth 2.0 token exchange (RFC 8693): a caller's token exchanged, at an identity provider's
//! token endpoint, for a token meant for another audience, so that a server calls an agent on the
//! caller's behalf as the caller, with a token the agent accepts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use http::HeaderValue;
use tokio::time::Instant;

use crate::error::Result;
use crate::oauth::{TokenEndpoint, EARLY};

/// The grant type of RFC 8693.
const GRANT_TYPE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// What the subject token is: the access token the caller presented.
const ACCESS_TOKEN: &str = "urn:ietf:params:oauth:token-type:access_token";

/// The exchanged tokens kept, by audience and the caller's token, with when each is replaced.
type Issued = HashMap<(String, String), (HeaderValue, Instant)>;

/// Most exchanged tokens kept: a caller sending many distinct tokens cannot grow the cache past it
/// (the expired go first, then all).
const MAX_CACHED: usize = 4096;

/// Exchanges callers' tokens for tokens meant for an audience (RFC 8693), as the client
/// `client_id` of the identity provider's token endpoint: the caller's token goes as the
/// `subject_token`, the client authenticates with its secret (HTTP Basic), and the issued token
/// (whose `act` claim, where the provider sets it, names the client) is kept for that caller's
/// token and audience until 30 seconds before it expires. A refused exchange is an error, never
/// a token of another. Clones share the tokens kept.
///
/// ```no_run
/// # async fn run(caller_token: &str) -> agentwire_client::Result<()> {
/// use agentwire_client::TokenExchange;
///
/// let exchange = TokenExchange::new("https://idp.example/oauth2/token", "my-gateway", "s3cret").scope("a2a:write");
/// let authorization = exchange.exchange(caller_token, "https://weather.example").await?;
/// # drop(authorization);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct TokenExchange {
    endpoint: TokenEndpoint,
    scope: Option<String>,
    issued: Arc<Mutex<Issued>>,
}

impl TokenExchange {
    /// Exchanges at `token_url`, authenticated as `client_id` with `client_secret`.
    pub fn new(token_url: impl Into<String>, client_id: impl Into<String>, client_secret: impl Into<String>) -> Self {
        let endpoint = TokenEndpoint::new(token_url.into(), client_id.into(), client_secret.into());
        Self { endpoint, scope: None, issued: Arc::default() }
    }

    /// Asks for these scopes (space-separated) in every exchange.
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// The token endpoint.
    pub fn token_url(&self) -> &str {
        self.endpoint.url()
    }

    /// `Bearer TOKEN`, a token the provider issued for `subject_token`'s subject, meant for
    /// `audience`: the one kept while it is current, else a new exchange.
    pub async fn exchange(&self, subject_token: &str, audience: &str) -> Result<HeaderValue> {
        let key = (audience.to_owned(), subject_token.to_owned());
        if let Some((value, until)) = self.kept().get(&key)
            && Instant::now() < *until
        {
            return Ok(value.clone());
        }
        let mut form = vec![
            ("grant_type", GRANT_TYPE.to_owned()),
            ("subject_token", subject_token.to_owned()),
            ("subject_token_type", ACCESS_TOKEN.to_owned()),
            ("requested_token_type", ACCESS_TOKEN.to_owned()),
            ("audience", audience.to_owned()),
        ];
        if let Some(scope) = &self.scope {
            form.push(("scope", scope.clone()));
        }
        let (value, lifetime) = self.endpoint.token(&form).await?;
        let mut kept = self.kept();
        let now = Instant::now();
        if kept.len() >= MAX_CACHED {
            kept.retain(|_, (_, until)| now < *until);
            if kept.len() >= MAX_CACHED {
                kept.clear();
            }
        }
        kept.insert(key, (value.clone(), now + lifetime.saturating_sub(EARLY)));
        Ok(value)
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Issued> {
        self.issued.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
