//! Authentication: a pluggable [`Authenticator`], with static bearer tokens and API keys built in,
//! run on the operation service (it sees each operation) by the [`RequestHandler`] that was
//! given one, or by an [`AuthLayer`] around any operation service.
//!
//! Every operation except the public agent card requires a principal when an authenticator is
//! configured; each task belongs to the principal that created it.
//!
//! [`RequestHandler`]: crate::RequestHandler

use std::collections::BTreeMap;
use std::sync::Arc;
use std::task::{Context, Poll};

use agentwire_types::jsonrpc::Operation;
use agentwire_types::{
    A2AError, A2aRequest, A2aResponse, ApiKeySecurityScheme, ErrorKind, HttpAuthSecurityScheme, RequestContext,
    SecurityRequirement, SecurityScheme, StringList,
};
pub use async_trait::async_trait;
use futures_util::future::BoxFuture;
use subtle::ConstantTimeEq;
use tower::{Layer, Service};

use crate::Principal;

/// Identifies the caller of an operation from its request: the metadata (HTTP headers or gRPC
/// metadata), the peer and its TLS certificate, the tenant and the operation itself.
///
/// Implement it with [`macro@async_trait`]; it may call out (to an identity provider, a token
/// introspection endpoint, a database).
#[async_trait]
pub trait Authenticator: Send + Sync + 'static {
    /// The caller, or `Unauthenticated` (401: no or unknown credentials) or `PermissionDenied`
    /// (403: a known caller without the right to `operation`).
    async fn authenticate(&self, ctx: &RequestContext, operation: Operation) -> Result<Principal, A2AError>;

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
/// same principal (for rotating a token). An unnamed credential's principal is a hash of it,
/// keyed per process, so that logs never show anything a token could be recovered or guessed
/// from; name the principals whose tasks should keep their owner across restarts.
///
/// ```
/// use agentwire_server::auth::{Authenticator, StaticAuth};
/// use agentwire_server::RequestContext;
/// use agentwire_types::jsonrpc::Operation;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let auth = StaticAuth::default().with_spec("bearer:alice=secret1,secret2").unwrap();
/// let mut ctx = RequestContext::default();
/// let who = async |ctx: &RequestContext| auth.authenticate(ctx, Operation::GetTask).await;
/// ctx.metadata.insert("authorization", "Bearer secret1".parse().unwrap());
/// assert_eq!(who(&ctx).await.unwrap().name, "alice");
/// ctx.metadata.insert("authorization", "Bearer secret2".parse().unwrap());
/// assert!(who(&ctx).await.unwrap().name.starts_with("bearer-"));
/// ctx.metadata.insert("authorization", "Bearer nope".parse().unwrap());
/// assert!(who(&ctx).await.is_err());
/// # });
/// ```
#[derive(Clone, Default)]
pub struct StaticAuth {
    bearer_tokens: Vec<Credential>,
    /// By lowercase header name.
    api_keys: Vec<(String, Credential)>,
    /// The key of unnamed credentials' principal names.
    hash_key: std::hash::RandomState,
}

#[derive(Clone)]
struct Credential {
    secret: String,
    principal: Principal,
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
    fn credential(&self, kind: &str, text: &str) -> Result<Credential, String> {
        let (name, secret) = match text.split_once('=') {
            Some((name, secret)) if is_principal_name(name) && !secret.is_empty() => (Some(name), secret),
            Some(("", secret)) => (None, secret),
            _ => (None, text),
        };
        if secret.is_empty() {
            return Err(format!("{kind}: a credential needs a secret"));
        }
        let principal = match name {
            Some(name) => Principal::new(name),
            None => {
                use std::hash::BuildHasher as _;
                Principal::new(format!("{kind}-{:016x}", self.hash_key.hash_one(secret)))
            }
        };
        Ok(Credential { secret: secret.to_owned(), principal })
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
    async fn authenticate(&self, ctx: &RequestContext, _: Operation) -> Result<Principal, A2AError> {
        let headers = &ctx.metadata;
        if let Some(token) = headers
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
        {
            if let Some(credential) = self.bearer_tokens.iter().find(|c| same_secret(&c.secret, token)) {
                return Ok(credential.principal.clone());
            }
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

/// One requirement per scheme: any of them will do.
pub(crate) fn requirements(schemes: &BTreeMap<String, SecurityScheme>) -> Vec<SecurityRequirement> {
    schemes
        .keys()
        .map(|name| SecurityRequirement { schemes: BTreeMap::from([(name.clone(), StringList::default())]) })
        .collect()
}

/// `ctx` with the principal `auth` finds for `operation`, or the refusal, with the
/// authenticator's challenge where it refuses for want of credentials. The public card is served
/// to anyone.
pub(crate) async fn authenticate(
    auth: &dyn Authenticator,
    mut ctx: RequestContext,
    operation: Operation,
) -> Result<RequestContext, A2AError> {
    if operation == Operation::GetAgentCard {
        return Ok(ctx);
    }
    match auth.authenticate(&ctx, operation).await {
        Ok(principal) => {
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
/// puts the principal into the operation's [`RequestContext`].
///
/// A [`RequestHandler`](crate::RequestHandler) given an authenticator does this itself; the layer
/// is for other operation services (a remote agent, a test double).
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
}

impl AuthLayer {
    /// Authenticates with `auth`.
    pub fn new(auth: impl Authenticator) -> Self {
        Self { auth: Arc::new(auth) }
    }
}

impl std::fmt::Debug for AuthLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthLayer").finish_non_exhaustive()
    }
}

impl<S> Layer<S> for AuthLayer {
    type Service = Authenticate<S>;

    fn layer(&self, inner: S) -> Authenticate<S> {
        Authenticate { inner, auth: Arc::clone(&self.auth) }
    }
}

/// The service [`AuthLayer`] makes.
#[derive(Clone)]
pub struct Authenticate<S> {
    inner: S,
    auth: Arc<dyn Authenticator>,
}

impl<S> std::fmt::Debug for Authenticate<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authenticate").finish_non_exhaustive()
    }
}

impl<S> Service<(RequestContext, A2aRequest)> for Authenticate<S>
where
    S: Service<(RequestContext, A2aRequest), Response = A2aResponse, Error = A2AError> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = A2aResponse;
    type Error = A2AError;
    type Future = BoxFuture<'static, Result<A2aResponse, A2AError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), A2AError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, (ctx, request): (RequestContext, A2aRequest)) -> Self::Future {
        // The service that was made ready runs the call; its clone waits for the next one.
        let ready = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, ready);
        let auth = Arc::clone(&self.auth);
        Box::pin(async move {
            let ctx = authenticate(auth.as_ref(), ctx, request.operation()).await?;
            inner.call((ctx, request)).await
        })
    }
}
