//! Authentication: a pluggable [`Authenticator`], with static bearer tokens and API keys
//! ([`StaticAuth`]), identity-provider JWTs ([`JwtAuth`]) and TLS client certificates
//! ([`CertificateAuth`]) built in, and [`AnyAuth`] to accept any of several; run on the operation
//! service (it sees each operation) by an [`AuthLayer`], which an [`App`](crate::App) puts in its
//! place in front of the service.
//!
//! Every operation except the public agent card requires a principal when an authenticator is
//! configured; each task belongs to the principal that created it.

use std::collections::BTreeMap;
use std::sync::Arc;

use agentwire_types::Access;
use agentwire_types::{
    A2AError, A2aRequest, ApiKeySecurityScheme, Authentication, ErrorKind, HttpAuthSecurityScheme, RequestContext,
    SecurityScheme,
};
pub use async_trait::async_trait;
use subtle::ConstantTimeEq;
use tower::Layer;

use crate::quota::AuthFailures;
use crate::{Admission, Admitted, Principal};

mod any;
mod certificate;
mod jwt;

pub use any::AnyAuth;
pub use certificate::CertificateAuth;
pub use jwt::{token_endpoint, JwtAuth, KeySetError, ScopeMap};

/// Identifies the caller of an operation from its request: the metadata (HTTP headers or gRPC
/// metadata), the peer and its TLS certificate, the tenant and what the caller asks to do (an
/// [`Access`]: the operation, or a call beside the operations such as opening an MCP session).
///
/// Implement it with [`macro@async_trait`]; it may call out (to an identity provider, a token
/// introspection endpoint, a database).
#[async_trait]
pub trait Authenticator: Send + Sync + 'static {
    /// The caller, or `Unauthenticated` (401: no or unknown credentials) or `PermissionDenied`
    /// (403: a known caller without the right to `access`).
    async fn authenticate(&self, ctx: &RequestContext, access: Access) -> Result<Principal, A2AError>;

    /// The schemes the agent card declares, by name.
    fn security_schemes(&self) -> BTreeMap<String, SecurityScheme>;

    /// The `WWW-Authenticate` challenge sent with a 401.
    fn challenge(&self) -> String {
        "Bearer realm=\"agentwire\"".into()
    }
}

/// Static credentials: bearer tokens and API keys, each mapped to a principal.
///
/// A credential may name its principal (`alice=TOKEN`); several credentials with one name are the
/// same principal (for rotating a token). An unnamed credential's principal is a keyed hash of
/// it (HMAC-SHA256), so that logs and stores never show anything a token could be recovered or
/// guessed from. The key is [`with_principal_key`](StaticAuth::with_principal_key)'s, the same
/// in every process given it; without one it is made at random for this process, so such a
/// principal's tasks are another principal's after a restart, or in another process serving the
/// same store.
///
/// ```
/// use agentwire_server::auth::{Authenticator, StaticAuth};
/// use agentwire_server::RequestContext;
/// use agentwire_types::{Access, Operation};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let auth = StaticAuth::default().with_spec("bearer:alice=secret1,secret2").unwrap();
/// let mut ctx = RequestContext::default();
/// let who = async |auth: &StaticAuth, ctx: &RequestContext| auth.authenticate(ctx, Access::from(Operation::GetTask)).await;
/// ctx.metadata.insert("authorization", "Bearer secret1".parse().unwrap());
/// assert_eq!(who(&auth, &ctx).await.unwrap().name, "alice");
/// ctx.metadata.insert("authorization", "Bearer secret2".parse().unwrap());
/// assert!(who(&auth, &ctx).await.unwrap().name.starts_with("bearer-"));
/// ctx.metadata.insert("authorization", "Bearer nope".parse().unwrap());
/// assert!(who(&auth, &ctx).await.is_err());
///
/// // Two processes with one principal key name an unnamed token's principal alike.
/// let keyed = || StaticAuth::default().with_spec("bearer:secret2").unwrap().with_principal_key("0123456789abcdef");
/// ctx.metadata.insert("authorization", "Bearer secret2".parse().unwrap());
/// let first = who(&keyed().unwrap(), &ctx).await.unwrap().name;
/// assert_eq!(first, who(&keyed().unwrap(), &ctx).await.unwrap().name);
/// # });
/// ```
#[derive(Clone, Default)]
pub struct StaticAuth {
    bearer_tokens: Vec<Credential>,
    /// By lowercase header name.
    api_keys: Vec<(String, Credential)>,
    /// The key of unnamed credentials' principal names.
    principal_key: PrincipalKey,
}

/// The key an unnamed credential's principal is derived from.
#[derive(Clone)]
struct PrincipalKey {
    key: ring::hmac::Key,
    /// Whether it was configured, rather than made at random for this process.
    configured: bool,
}

impl Default for PrincipalKey {
    /// A key of this process alone: 244 random bits from two version 4 UUIDs.
    fn default() -> Self {
        let random = [*uuid::Uuid::new_v4().as_bytes(), *uuid::Uuid::new_v4().as_bytes()].concat();
        Self { key: ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &random), configured: false }
    }
}

impl PrincipalKey {
    /// The principal of an unnamed credential of `kind`: the first 64 bits of the secret's HMAC.
    fn principal(&self, kind: &str, secret: &str) -> Principal {
        let tag = ring::hmac::sign(&self.key, secret.as_bytes());
        let hex: String = tag.as_ref()[..8].iter().map(|byte| format!("{byte:02x}")).collect();
        Principal::new(format!("{kind}-{hex}"))
    }
}

/// The shortest principal key taken.
const MIN_PRINCIPAL_KEY_LEN: usize = 16;

#[derive(Clone)]
struct Credential {
    secret: String,
    principal: Principal,
    /// For a credential that names no principal: its kind (`bearer`, `apikey`), the prefix of
    /// the principal derived from it.
    unnamed: Option<&'static str>,
}

/// Lists the principals, never the secrets.
impl std::fmt::Debug for StaticAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let bearer: Vec<&str> = self.bearer_tokens.iter().map(|c| c.principal.name.as_str()).collect();
        let api_keys: Vec<(&str, &str)> =
            self.api_keys.iter().map(|(header, c)| (header.as_str(), c.principal.name.as_str())).collect();
        f.debug_struct("StaticAuth").field("bearer", &bearer).field("api_keys", &api_keys).finish_non_exhaustive()
    }
}

impl StaticAuth {
    /// Derives the principals of unnamed credentials, added before or after, from `key` rather
    /// than from a key of this process alone: every process given the same key (instances
    /// sharing a store, or one server across restarts) names them alike. The key is a secret
    /// of at least 16 characters, such as the output of `openssl rand -hex 32`; changing it
    /// changes those principals, and so who owns their tasks.
    pub fn with_principal_key(mut self, key: &str) -> Result<Self, String> {
        if key.len() < MIN_PRINCIPAL_KEY_LEN {
            return Err(format!("a principal key needs at least {MIN_PRINCIPAL_KEY_LEN} characters"));
        }
        self.principal_key =
            PrincipalKey { key: ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key.as_bytes()), configured: true };
        let credentials = self.bearer_tokens.iter_mut().chain(self.api_keys.iter_mut().map(|(_, c)| c));
        for credential in credentials {
            if let Some(kind) = credential.unnamed {
                credential.principal = self.principal_key.principal(kind, &credential.secret);
            }
        }
        Ok(self)
    }

    /// Whether an unnamed credential's principal is derived from a key of this process alone (no
    /// [`with_principal_key`](Self::with_principal_key)): then it differs in every other process,
    /// and after a restart.
    pub fn has_principals_of_this_process(&self) -> bool {
        let mut credentials = self.bearer_tokens.iter().chain(self.api_keys.iter().map(|(_, c)| c));
        !self.principal_key.configured && credentials.any(|c| c.unnamed.is_some())
    }

    /// Adds credentials from a spec: `bearer:[NAME=]TOKEN,...` or `apikey:HEADER:[NAME=]KEY`.
    /// A secret that contains `=` but names no principal is written with an empty name: `=TOK=EN`.
    pub fn with_spec(mut self, spec: &str) -> Result<Self, String> {
        match spec.split_once(':') {
            Some(("bearer", tokens)) => {
                let tokens: Vec<&str> = tokens.split(',').map(str::trim).filter(|t| !t.is_empty()).collect();
                if tokens.is_empty() {
                    return Err("bearer: needs at least one token".into());
                }
                for token in tokens {
                    let credential = self.credential("bearer", token)?;
                    self.bearer_tokens.push(credential);
                }
            }
            Some(("apikey", rest)) => match rest.split_once(':') {
                Some((header, key)) if !header.is_empty() && !key.is_empty() => {
                    http::HeaderName::try_from(header).map_err(|e| format!("invalid header name {header:?}: {e}"))?;
                    let credential = self.credential("apikey", key)?;
                    self.api_keys.push((header.to_ascii_lowercase(), credential));
                }
                _ => return Err("apikey: expects apikey:HEADER:KEY".into()),
            },
            _ => {
                return Err(format!(
                    "unknown auth spec {spec:?}: use bearer:[NAME=]TOKEN,... or apikey:HEADER:[NAME=]KEY"
                ))
            }
        }
        Ok(self)
    }

    /// `NAME=SECRET` names its principal; a bare secret's principal is its keyed hash.
    fn credential(&self, kind: &'static str, text: &str) -> Result<Credential, String> {
        let (name, secret) = match text.split_once('=') {
            Some((name, secret)) if is_principal_name(name) && !secret.is_empty() => (Some(name), secret),
            Some(("", secret)) => (None, secret),
            _ => (None, text),
        };
        if secret.is_empty() {
            return Err(format!("{kind}: a credential needs a secret"));
        }
        let (principal, unnamed) = match name {
            Some(name) => (Principal::new(name), None),
            None => (self.principal_key.principal(kind, secret), Some(kind)),
        };
        Ok(Credential { secret: secret.to_owned(), principal, unnamed })
    }
}

/// Letters, digits, `_`, `-`, `.` and `@`: enough for user and service names, and never the
/// start of a base64 secret's padding.
fn is_principal_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '@'))
}

/// Compares in constant time (a length mismatch answers at once: the length is no secret worth
/// hiding).
fn same_secret(a: &str, b: &str) -> bool {
    a.as_bytes().ct_eq(b.as_bytes()).into()
}

#[async_trait]
impl Authenticator for StaticAuth {
    async fn authenticate(&self, ctx: &RequestContext, _: Access) -> Result<Principal, A2AError> {
        let headers = &ctx.metadata;
        if let Some(token) = bearer_token(headers)
            && let Some(credential) = self.bearer_tokens.iter().find(|c| same_secret(&c.secret, token))
        {
            return Ok(credential.principal.clone());
        }
        for (header, credential) in &self.api_keys {
            if headers.get(header).and_then(|v| v.to_str().ok()).is_some_and(|v| same_secret(v, &credential.secret)) {
                return Ok(credential.principal.clone());
            }
        }
        Err(A2AError::unauthenticated("valid credentials are required"))
    }

    fn security_schemes(&self) -> BTreeMap<String, SecurityScheme> {
        let mut schemes = BTreeMap::new();
        if !self.bearer_tokens.is_empty() {
            let scheme = HttpAuthSecurityScheme { scheme: "Bearer".into(), ..HttpAuthSecurityScheme::default() };
            schemes.insert("bearer".into(), SecurityScheme::HttpAuth(scheme));
        }
        for (i, (header, _)) in self.api_keys.iter().enumerate() {
            let name = if i == 0 { "apiKey".to_owned() } else { format!("apiKey{}", i + 1) };
            let scheme = ApiKeySecurityScheme { location: "header".into(), name: header.clone(), ..Default::default() };
            schemes.insert(name, SecurityScheme::ApiKey(scheme));
        }
        schemes
    }
}

/// The token of an `Authorization: Bearer` header.
pub(crate) fn bearer_token(headers: &http::HeaderMap) -> Option<&str> {
    headers
        .get(http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
}

/// Whether `ctx`'s request carries anything the declared schemes read credentials from: an
/// `Authorization` header, an API key's header, a client certificate.
fn presents_credentials(ctx: &RequestContext, declared: &Authentication) -> bool {
    let certificate = ctx.peer.as_ref().is_some_and(|peer| peer.certificate.is_some());
    let api_key = declared.schemes.values().any(|scheme| match scheme {
        SecurityScheme::ApiKey(key) => key.location == "header" && ctx.metadata.contains_key(key.name.as_str()),
        _ => false,
    });
    certificate || api_key || ctx.metadata.contains_key(http::header::AUTHORIZATION)
}

/// The headers the declared schemes read credentials from besides `Authorization`: each API
/// key's.
fn credential_headers(declared: &Authentication) -> Vec<http::HeaderName> {
    let api_key = |scheme: &SecurityScheme| match scheme {
        SecurityScheme::ApiKey(key) if key.location == "header" => {
            http::HeaderName::from_bytes(key.name.as_bytes()).ok()
        }
        _ => None,
    };
    declared.schemes.values().filter_map(api_key).collect()
}

/// `ctx` with the principal `auth` finds for `access`, or the refusal, with the
/// authenticator's challenge where it refuses for want of credentials. The public card is served
/// to anyone.
pub(crate) async fn authenticate(
    auth: &dyn Authenticator,
    failures: &AuthFailures,
    mut ctx: RequestContext,
    access: Access,
) -> Result<RequestContext, A2AError> {
    if access.is_public() {
        return Ok(ctx);
    }
    let fingerprint = failures.fingerprint(&ctx);
    failures.check(&ctx, fingerprint)?;
    let outcome = auth.authenticate(&ctx, access).await;
    failures.note(&ctx, &outcome, fingerprint);
    match outcome {
        Ok(principal) => {
            crate::spans::record_caller(&principal);
            ctx.principal = Some(principal);
            Ok(ctx)
        }
        Err(error) if error.kind() == ErrorKind::Unauthenticated && error.challenge().is_none() => {
            Err(error.with_challenge(auth.challenge()))
        }
        Err(error) => Err(error),
    }
}

/// Authenticates every operation but the public card before the service it wraps runs it, and
/// puts the principal into the operation's [`RequestContext`], with the schemes it checks
/// ([`RequestContext::authentication`]) for the cards the service serves to declare: a
/// [`RequestHandler`](crate::RequestHandler) behind it declares them, and serves its extended
/// card to the callers it lets in. An [`App`](crate::App) puts it in its place among the other
/// layers.
///
/// ```
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::auth::{AuthLayer, StaticAuth};
/// use agentwire_server::{RequestContext, RequestHandler};
/// use agentwire_types::{A2aRequest, ErrorKind, ListTasksRequest};
/// use tower::{Layer, ServiceExt};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let auth = StaticAuth::default().with_spec("bearer:alice=secret").unwrap();
/// let service = AuthLayer::new(auth).layer(RequestHandler::builder(EchoAgent).build());
/// let list = A2aRequest::ListTasks(ListTasksRequest::default());
/// let refused = service.oneshot((RequestContext::default(), list)).await.unwrap_err();
/// assert_eq!(refused.kind(), ErrorKind::Unauthenticated);
/// assert!(refused.challenge().unwrap().starts_with("Bearer"));
/// # });
/// ```
#[derive(Clone)]
pub struct AuthLayer {
    auth: Arc<dyn Authenticator>,
    failures: Arc<AuthFailures>,
    declared: Arc<Authentication>,
}

impl AuthLayer {
    /// Authenticates with `auth`. Past 50 failed authentications from one address (an IPv6
    /// /64), refilled at 5 a second, its requests are refused with ResourceExhausted before
    /// their credentials are checked ([`failure_limit`](Self::failure_limit)).
    pub fn new(auth: impl Authenticator) -> Self {
        let declared = Arc::new(Authentication::new(auth.security_schemes()));
        let failures = Arc::new(AuthFailures::default().reading(credential_headers(&declared)));
        Self { auth: Arc::new(auth), failures, declared }
    }

    /// The schemes it checks, as the cards behind it declare them.
    pub fn authentication(&self) -> &Arc<Authentication> {
        &self.declared
    }

    /// The caller of `ctx` as the authenticator finds it for `access`, counted against its
    /// address's failed authentications like any call, for routes beside the operations (a
    /// gateway's registry) that decide what a caller may see or change. A caller that presents
    /// no credentials at all is `None` unless `required` (then refused with the challenge), and
    /// costs its address nothing.
    pub(crate) async fn identify(
        &self,
        ctx: RequestContext,
        access: Access,
        required: bool,
    ) -> Result<Option<Principal>, A2AError> {
        if !required && !presents_credentials(&ctx, &self.declared) {
            return Ok(None);
        }
        let ctx = authenticate(self.auth.as_ref(), &self.failures, ctx, access).await?;
        Ok(ctx.principal)
    }

    /// Lets one address fail `burst` authentications, then `per_second` (0: no limit).
    pub fn failure_limit(mut self, per_second: f64, burst: usize) -> Self {
        let failures = AuthFailures::new(per_second, burst).reading(credential_headers(&self.declared));
        self.failures = Arc::new(failures);
        self
    }
}

impl std::fmt::Debug for AuthLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthLayer").finish_non_exhaustive()
    }
}

impl Admission for AuthLayer {
    type Held = ();

    /// Every call, the public card's too: each learns the schemes its cards declare.
    async fn admit(
        &self,
        mut ctx: RequestContext,
        request: &A2aRequest,
    ) -> Result<(RequestContext, Option<()>), A2AError> {
        ctx.authentication = Some(Arc::clone(&self.declared));
        let ctx = authenticate(self.auth.as_ref(), &self.failures, ctx, request.operation().into()).await?;
        Ok((ctx, None))
    }
}

impl<S> Layer<S> for AuthLayer {
    type Service = Authenticate<S>;

    fn layer(&self, inner: S) -> Authenticate<S> {
        Admitted::new(inner, self.clone())
    }
}

/// The service [`AuthLayer`] makes.
pub type Authenticate<S> = Admitted<S, AuthLayer>;
