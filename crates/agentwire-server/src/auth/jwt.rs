//! Bearer JWTs from an identity provider: the keys found by OIDC discovery (or given), kept
//! fresh, and a token's scopes checked against the operation it calls.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;

use agentwire_jose::{JoseError, PublicKeys, Validation};
use agentwire_types::Access;
use agentwire_types::{A2AError, HttpAuthSecurityScheme, OpenIdConnectSecurityScheme, RequestContext, SecurityScheme};
use futures_util::StreamExt as _;
use serde_json::{Map, Value};
use tokio::time::Instant;

use super::{async_trait, bearer_token, Authenticator};
use crate::Principal;

/// Validates bearer JWTs: signed by a key of the issuer's key set with an asymmetric algorithm,
/// issued by the configured issuer for the configured audience, unexpired and already valid. The
/// principal is `ISSUER#SUBJECT`, with the token's claims; a [`ScopeMap`] decides which scopes
/// each operation needs.
///
/// The key set comes from OIDC discovery ([`discover`](Self::discover)), a JWKS URL, or is
/// given. A fetched set is refetched on a timer (hourly by default) and, at most once per
/// minimum interval, when a token names a key it lacks: a rotation at the identity provider is
/// picked up on the first token signed with the new key.
///
/// ```
/// use agentwire_jose::{Algorithm, PublicKeys, SigningKey, Validation};
/// use agentwire_server::auth::{Authenticator, JwtAuth, ScopeMap};
/// use agentwire_server::RequestContext;
/// use agentwire_types::{Access, ErrorKind, Operation};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let idp = SigningKey::generate(Algorithm::ES256).unwrap();
/// let auth = JwtAuth::with_keys(
///     Validation::new("https://idp.example", "my-agent"),
///     PublicKeys::from_keys([idp.public_key()]),
/// )
/// .with_scopes(ScopeMap::read_write("a2a:read", "a2a:write"));
///
/// let exp = agentwire_jose::unix_now() + 300;
/// let claims = json!({"iss": "https://idp.example", "sub": "alice", "aud": "my-agent", "exp": exp, "scope": "a2a:read"});
/// let mut ctx = RequestContext::default();
/// let bearer = format!("Bearer {}", idp.sign_jwt(claims.as_object().unwrap()));
/// ctx.metadata.insert("authorization", bearer.parse().unwrap());
///
/// let alice = auth.authenticate(&ctx, Access::from(Operation::GetTask)).await.unwrap();
/// assert_eq!(alice.name, "https://idp.example#alice");
/// let refused = auth.authenticate(&ctx, Access::from(Operation::SendMessage)).await.unwrap_err();
/// // MCP is a read of its own; its tool calls are asked about again as the sends they make.
/// assert!(auth.authenticate(&ctx, Access::UseMcp).await.is_ok());
/// assert_eq!(refused.kind(), ErrorKind::PermissionDenied);
/// assert!(refused.challenge().unwrap().contains(r#"error="insufficient_scope", scope="a2a:write""#));
/// # });
/// ```
#[derive(Clone)]
pub struct JwtAuth {
    validation: Validation,
    keys: Arc<KeyCache>,
    scopes: ScopeMap,
    /// Where clients learn to get a token: the discovery document, if the keys came from one.
    discovery_url: Option<String>,
}

impl std::fmt::Debug for JwtAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtAuth").field("issuer", &self.validation.issuer()).finish_non_exhaustive()
    }
}

/// Why a key set could not be had.
#[derive(Debug, thiserror::Error)]
pub enum KeySetError {
    /// The request failed, or the server answered with an error.
    #[error("cannot fetch {url}: {reason}")]
    Fetch {
        /// What was fetched.
        url: String,
        /// Why it failed.
        reason: String,
    },
    /// The document is not what it should be.
    #[error("{url} is not {what}: {reason}")]
    Invalid {
        /// What was fetched.
        url: String,
        /// What it should have been.
        what: &'static str,
        /// Why it is not.
        reason: String,
    },
}

/// The default limits of fetching keys.
const REFRESH_EVERY: Duration = Duration::from_secs(3600);
const MIN_REFETCH: Duration = Duration::from_secs(30);
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest discovery document or key set read; a real one is a few KiB.
const MAX_DOCUMENT: usize = 256 * 1024;
/// Tokens remembered as verified; past it, the memory starts afresh.
const MAX_VERIFIED: usize = 10_000;

impl JwtAuth {
    /// Checks tokens against a fixed key set (read from a file, say).
    pub fn with_keys(validation: Validation, keys: PublicKeys) -> Self {
        let keys =
            Arc::new(KeyCache { keys: RwLock::new(Arc::new(keys)), verified: Verified::default(), remote: None });
        Self { validation, keys, scopes: ScopeMap::default(), discovery_url: None }
    }

    /// Finds the issuer's key set by OIDC discovery (`ISSUER/.well-known/openid-configuration`,
    /// whose `issuer` must be the validation's issuer) and fetches it.
    pub async fn discover(validation: Validation) -> Result<Self, KeySetError> {
        let http = http_client();
        let (url, document) = provider_configuration(&http, validation.issuer()).await?;
        let jwks_uri = document.get("jwks_uri").and_then(Value::as_str).ok_or_else(|| KeySetError::Invalid {
            url: url.clone(),
            what: OPENID_CONFIGURATION,
            reason: "it has no jwks_uri".into(),
        })?;
        let mut auth = Self::fetching(validation, jwks_uri, http).await?;
        auth.discovery_url = Some(url);
        Ok(auth)
    }

    /// Fetches the key set at `jwks_uri`.
    pub async fn from_jwks_url(validation: Validation, jwks_uri: &str) -> Result<Self, KeySetError> {
        Self::fetching(validation, jwks_uri, http_client()).await
    }

    async fn fetching(validation: Validation, jwks_uri: &str, http: reqwest::Client) -> Result<Self, KeySetError> {
        let remote = Remote {
            url: jwks_uri.to_owned(),
            http,
            fetching: tokio::sync::Mutex::new(None),
            refresh: std::sync::Mutex::new(Refresh { every: REFRESH_EVERY, min_interval: MIN_REFETCH }),
        };
        let keys = remote.fetch().await?;
        *remote.fetching.lock().await = Some(Instant::now());
        let keys = Arc::new(KeyCache {
            keys: RwLock::new(Arc::new(keys)),
            verified: Verified::default(),
            remote: Some(remote),
        });
        tokio::spawn(refresh_on_timer(Arc::downgrade(&keys)));
        Ok(Self { validation, keys, scopes: ScopeMap::default(), discovery_url: None })
    }

    /// Refetches a fetched key set every `every`, and on an unknown key id at most once per
    /// `min_interval` (defaults: an hour, 30 seconds).
    pub fn with_refresh(self, every: Duration, min_interval: Duration) -> Self {
        if let Some(remote) = &self.keys.remote {
            *remote.refresh.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Refresh { every, min_interval };
        }
        self
    }

    /// Requires the scopes `scopes` maps each operation to.
    pub fn with_scopes(mut self, scopes: ScopeMap) -> Self {
        self.scopes = scopes;
        self
    }

    /// The token's claims, refetching the key set once if the token names a key it lacks. A token
    /// verified before is not verified again while the same key set holds, but its times,
    /// issuer and audience are checked every time.
    async fn claims(&self, token: &str) -> Result<Arc<Map<String, Value>>, JoseError> {
        let keys = self.keys.current();
        if let Some(claims) = self.keys.verified.get(token).map(|entry| Arc::clone(entry.value())) {
            self.validation.check(&claims, agentwire_jose::unix_now())?;
            return Ok(claims);
        }
        let claims = match self.validation.validate(token, &keys) {
            Err(JoseError::UnknownKey(kid)) => match self.keys.refetch_for(kid.as_deref()).await {
                Some(keys) => self.validation.validate(token, &keys),
                None => Err(JoseError::UnknownKey(kid)),
            },
            outcome => outcome,
        }?;
        let claims = Arc::new(claims);
        if self.keys.verified.len() >= MAX_VERIFIED {
            self.keys.verified.clear();
        }
        // Not if the key set changed meanwhile: its replacement may have withdrawn the key.
        if Arc::ptr_eq(&keys, &self.keys.current()) {
            self.keys.verified.insert(token.into(), Arc::clone(&claims));
        }
        Ok(claims)
    }
}

fn http_client() -> reqwest::Client {
    reqwest::Client::builder().timeout(FETCH_TIMEOUT).build().unwrap_or_default()
}

/// What an issuer's `.well-known/openid-configuration` is, as errors name it.
const OPENID_CONFIGURATION: &str = "an OpenID provider configuration";

/// The token endpoint `issuer` names in its OpenID configuration (`token_endpoint`), if it names
/// one: where a server exchanges its callers' tokens for tokens meant for others (RFC 8693).
///
/// ```no_run
/// # async fn run() -> Result<(), agentwire_server::auth::KeySetError> {
/// let endpoint = agentwire_server::auth::token_endpoint("https://idp.example").await?;
/// # Ok(())
/// # }
/// ```
pub async fn token_endpoint(issuer: &str) -> Result<Option<String>, KeySetError> {
    let (_, document) = provider_configuration(&http_client(), issuer).await?;
    Ok(document.get("token_endpoint").and_then(Value::as_str).map(str::to_owned))
}

/// Where `issuer`'s OpenID configuration is, and what it says; its `issuer` must be `issuer`.
async fn provider_configuration(http: &reqwest::Client, issuer: &str) -> Result<(String, Value), KeySetError> {
    let url = format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'));
    let document: Value = fetch_json(http, &url, OPENID_CONFIGURATION).await?;
    if document.get("issuer").and_then(Value::as_str) != Some(issuer) {
        let reason = format!("its issuer is {}, not {issuer}", document["issuer"]);
        return Err(KeySetError::Invalid { url, what: OPENID_CONFIGURATION, reason });
    }
    Ok((url, document))
}

/// A JSON document of at most [`MAX_DOCUMENT`] bytes.
async fn fetch_json<T: serde::de::DeserializeOwned>(
    http: &reqwest::Client,
    url: &str,
    what: &'static str,
) -> Result<T, KeySetError> {
    let fetch_error = |reason: String| KeySetError::Fetch { url: url.to_owned(), reason };
    let response = http.get(url).send().await.map_err(|e| fetch_error(e.to_string()))?;
    if !response.status().is_success() {
        return Err(fetch_error(format!("HTTP {}", response.status())));
    }
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| fetch_error(e.to_string()))?;
        if body.len() + chunk.len() > MAX_DOCUMENT {
            return Err(fetch_error(format!("the document is larger than {MAX_DOCUMENT} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| KeySetError::Invalid { url: url.to_owned(), what, reason: e.to_string() })
}

/// Tokens whose signature verified, with their claims.
type Verified = dashmap::DashMap<Box<str>, Arc<Map<String, Value>>, foldhash::fast::RandomState>;

/// The keys tokens are checked with, where they come from, and the tokens they verified: a
/// client sends one token with every request until it expires, and checking its signature
/// costs more than the request.
struct KeyCache {
    keys: RwLock<Arc<PublicKeys>>,
    verified: Verified,
    remote: Option<Remote>,
}

struct Remote {
    url: String,
    http: reqwest::Client,
    /// When the keys were last fetched; held while fetching, so that one fetch serves every
    /// token waiting for it.
    fetching: tokio::sync::Mutex<Option<Instant>>,
    refresh: std::sync::Mutex<Refresh>,
}

/// How often a fetched key set is fetched again.
#[derive(Debug, Clone, Copy)]
struct Refresh {
    /// On the timer.
    every: Duration,
    /// At most, for tokens naming a key the set lacks.
    min_interval: Duration,
}

impl Remote {
    fn refresh(&self) -> Refresh {
        *self.refresh.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn fetch(&self) -> Result<PublicKeys, KeySetError> {
        let set: agentwire_jose::JwkSet = fetch_json(&self.http, &self.url, "a JWK set").await?;
        Ok(PublicKeys::from_set(&set))
    }
}

impl KeyCache {
    fn current(&self) -> Arc<PublicKeys> {
        Arc::clone(&self.keys.read().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// Holds `keys` from now on, and forgets the tokens the old set verified: a key withdrawn
    /// from the set no longer vouches for what it signed.
    fn replace(&self, keys: PublicKeys) {
        *self.keys.write().unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(keys);
        self.verified.clear();
    }

    /// The keys after a refetch for a token naming `kid`, unless the set was fetched less than
    /// the minimum interval ago (and still lacks it) or cannot be fetched.
    async fn refetch_for(&self, kid: Option<&str>) -> Option<Arc<PublicKeys>> {
        let remote = self.remote.as_ref()?;
        let mut fetched = remote.fetching.lock().await;
        // Another token's refetch may have brought the key while this one waited.
        let current = self.current();
        if kid.is_some_and(|kid| current.has_kid(kid)) {
            return Some(current);
        }
        if fetched.is_some_and(|at| at.elapsed() < remote.refresh().min_interval) {
            return None;
        }
        *fetched = Some(Instant::now());
        match remote.fetch().await {
            Ok(keys) => {
                tracing::info!(url = %remote.url, keys = keys.len(), "refetched the key set for an unknown key id");
                self.replace(keys);
                Some(self.current())
            }
            Err(error) => {
                tracing::warn!(%error, "cannot refetch the key set; the keys held are kept");
                None
            }
        }
    }
}

/// Refetches the key set every `refresh_every`, for as long as its authenticator lives.
async fn refresh_on_timer(cache: Weak<KeyCache>) {
    loop {
        let Some(every) = cache.upgrade().and_then(|c| c.remote.as_ref().map(|r| r.refresh().every)) else { return };
        tokio::time::sleep(every).await;
        let Some(cache) = cache.upgrade() else { return };
        let Some(remote) = &cache.remote else { return };
        let mut fetched = remote.fetching.lock().await;
        match remote.fetch().await {
            Ok(keys) => {
                *fetched = Some(Instant::now());
                cache.replace(keys);
            }
            Err(error) => tracing::warn!(%error, "cannot refresh the key set; the keys held are kept"),
        }
    }
}

#[async_trait]
impl Authenticator for JwtAuth {
    async fn authenticate(&self, ctx: &RequestContext, access: Access) -> Result<Principal, A2AError> {
        let token =
            bearer_token(&ctx.metadata).ok_or_else(|| A2AError::unauthenticated("a bearer token is required"))?;
        let claims = self.claims(token).await.map_err(|error| {
            let description = error.to_string();
            let challenge = format!(
                "Bearer realm=\"agentwire\", error=\"invalid_token\", error_description=\"{}\"",
                description.replace(['"', '\\'], "'")
            );
            A2AError::unauthenticated(format!("invalid token: {description}")).with_challenge(challenge)
        })?;
        if let Some(scope) = self.scopes.missing(access, &claims) {
            let challenge = format!("Bearer realm=\"agentwire\", error=\"insufficient_scope\", scope=\"{scope}\"");
            let message = format!("{} needs the scope {scope}", access.name());
            return Err(A2AError::permission_denied(message).with_challenge(challenge));
        }
        let issuer = self.validation.issuer();
        Ok(Principal { name: format!("{issuer}#{}", subject(&claims)?), claims: Map::clone(&claims) })
    }

    fn security_schemes(&self) -> BTreeMap<String, SecurityScheme> {
        let scheme = match &self.discovery_url {
            Some(url) => SecurityScheme::OpenIdConnect(OpenIdConnectSecurityScheme {
                open_id_connect_url: url.clone(),
                ..OpenIdConnectSecurityScheme::default()
            }),
            None => SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
                scheme: "Bearer".into(),
                bearer_format: "JWT".into(),
                ..HttpAuthSecurityScheme::default()
            }),
        };
        BTreeMap::from([(if self.discovery_url.is_some() { "oidc" } else { "jwt" }.to_owned(), scheme)])
    }
}

/// Whom a token is for: its `sub`, or, for a token a client got for itself without one, its
/// `client_id` (RFC 9068) or `azp`, marked as a client's. A token that names nobody is refused:
/// every such token would otherwise be one principal, reading the others' tasks.
fn subject(claims: &Map<String, Value>) -> Result<String, A2AError> {
    let text = |name: &str| claims.get(name).and_then(Value::as_str).filter(|value| !value.is_empty());
    if let Some(subject) = text("sub") {
        return Ok(subject.to_owned());
    }
    match text("client_id").or_else(|| text("azp")) {
        Some(client) => Ok(format!("client:{client}")),
        None => {
            let challenge =
                "Bearer realm=\"agentwire\", error=\"invalid_token\", error_description=\"the token names no subject\"";
            Err(A2AError::unauthenticated("invalid token: it names no subject (sub, client_id or azp)")
                .with_challenge(challenge))
        }
    }
}

/// Which scope each [`Access`] needs: the A2A operations, and the calls beside them (opening and
/// using an MCP session, a gateway's directory, registering and removing agents). A token's
/// scopes are its `scope` claim (space-separated, RFC 8693 §4.2) or its `scp` claim (a list or a
/// string). What it maps nothing to needs none.
///
/// ```
/// use agentwire_server::auth::ScopeMap;
///
/// let scopes = ScopeMap::default().with_spec("read=a2a:read").unwrap().with_spec("CancelTask=a2a:admin").unwrap();
/// let registry = ScopeMap::default().with_spec("RegisterAgent,UnregisterAgent=registry:admin").unwrap();
/// assert!(ScopeMap::default().with_spec("everything=x").is_err());
/// # let _ = (scopes, registry);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ScopeMap {
    required: Vec<(Access, String)>,
}

/// The accesses `read` (`changes_state` false) or `write` names: every one but the public card,
/// which anyone may read, and the registry's changes and budgets' resets, which their own admins
/// allow (`RegistrySettings`, `BudgetBook::admins`); a rule may still name those.
fn scoped(changes_state: bool) -> impl Iterator<Item = Access> {
    let registry = [Access::RegisterAgent, Access::UnregisterAgent, Access::ResetBudgets];
    Access::all().filter(move |a| !a.is_public() && a.changes_state() == changes_state && !registry.contains(a))
}

impl ScopeMap {
    /// `read` for what only reads (the operations get, list, subscribe, the push configs' get
    /// and list, the extended card; opening and using an MCP session; a gateway's directory),
    /// `write` for the operations that change something. Registering and removing agents at a
    /// gateway is neither: the registry's admins are its own (a rule may name them too).
    pub fn read_write(read: &str, write: &str) -> Self {
        Self::default().require(scoped(false), read).require(scoped(true), write)
    }

    /// Requires `scope` for each of `accesses` (in place of what it required before).
    pub fn require(mut self, accesses: impl IntoIterator<Item = impl Into<Access>>, scope: &str) -> Self {
        for access in accesses.into_iter().map(Into::into) {
            self.required.retain(|(a, _)| *a != access);
            self.required.push((access, scope.to_owned()));
        }
        self
    }

    /// Adds `ACCESSES=SCOPE`, where ACCESSES is `read`, `write`, a v1.0 method name
    /// (`SendMessage`), the name of an access beside the operations (`OpenMcpSession`,
    /// `UseMcp`, `ListAgents`, `RegisterAgent`, `UnregisterAgent`, `ReadBudgets`, `ResetBudgets`),
    /// or several joined by `,`.
    pub fn with_spec(self, spec: &str) -> Result<Self, String> {
        let Some((names, scope)) = spec.split_once('=').filter(|(names, scope)| !names.is_empty() && !scope.is_empty())
        else {
            return Err(format!("{spec:?}: a scope rule is ACCESSES=SCOPE, e.g. write=a2a:write"));
        };
        let mut accesses = Vec::new();
        for name in names.split(',').map(str::trim) {
            match name {
                "read" => accesses.extend(scoped(false)),
                "write" => accesses.extend(scoped(true)),
                name => match Access::named(name).filter(|a| !a.is_public()) {
                    Some(access) => accesses.push(access),
                    None => {
                        let beside = Access::BESIDE_OPERATIONS.map(Access::name).join(", ");
                        return Err(format!(
                            "{name:?} is not read, write, an operation such as SendMessage or GetTask, or one of {beside}"
                        ));
                    }
                },
            }
        }
        Ok(self.require(accesses, scope))
    }

    /// The scope `access` needs that `claims` do not grant.
    fn missing(&self, access: Access, claims: &Map<String, Value>) -> Option<&str> {
        let (_, scope) = self.required.iter().find(|(a, _)| *a == access)?;
        let granted = |wanted: &str| match (claims.get("scope"), claims.get("scp")) {
            (Some(Value::String(scopes)), _) | (_, Some(Value::String(scopes))) => {
                scopes.split(' ').any(|s| s == wanted)
            }
            (_, Some(Value::Array(scopes))) => scopes.iter().any(|s| s.as_str() == Some(wanted)),
            _ => false,
        };
        (!granted(scope)).then_some(scope.as_str())
    }
}

#[cfg(test)]
mod tests {
    use agentwire_types::Operation;
    use serde_json::json;

    use super::*;

    fn needs(map: &ScopeMap, access: Access, scopes: &str) -> Option<String> {
        let claims = json!({"scope": scopes});
        map.missing(access, claims.as_object().unwrap()).map(str::to_owned)
    }

    #[test]
    fn read_and_write_cover_the_fronts_reads_and_leave_the_registry_to_its_admins() {
        let map = ScopeMap::read_write("r", "w");
        for access in [Access::OpenMcpSession, Access::UseMcp, Access::ListAgents, Operation::GetTask.into()] {
            assert_eq!(needs(&map, access, ""), Some("r".to_owned()), "{access:?}");
        }
        assert_eq!(needs(&map, Operation::SendMessage.into(), "r"), Some("w".to_owned()));
        for access in [Access::RegisterAgent, Access::UnregisterAgent, Operation::GetAgentCard.into()] {
            assert_eq!(needs(&map, access, ""), None, "{access:?}");
        }
    }

    #[test]
    fn a_rule_names_an_access_beside_the_operations() {
        let map = ScopeMap::default().with_spec("read=r").unwrap().with_spec("OpenMcpSession, UseMcp=mcp").unwrap();
        assert_eq!(needs(&map, Access::UseMcp, "r"), Some("mcp".to_owned()), "in place of read's");
        assert_eq!(needs(&map, Access::OpenMcpSession, "mcp"), None);
        assert_eq!(needs(&map, Access::ListAgents, "mcp"), Some("r".to_owned()));
        let refused = ScopeMap::default().with_spec("GetAgentCard=x").unwrap_err();
        assert!(refused.contains("OpenMcpSession, UseMcp, ListAgents, RegisterAgent, UnregisterAgent"), "{refused}");
    }
}
