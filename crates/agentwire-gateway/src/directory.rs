//! The agents a gateway serves under `/agents/NAME` as they stand now: those given when it was
//! built and those registered since, each with its operations, its routes and who may see it.
//! Requests to an agent's path are routed here when they arrive, so an agent registered a moment
//! ago is served at once, and one a caller may not see is, to that caller, no agent at all.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use agentwire_server::{App, Operations, Principal};
use agentwire_store::registry::Visibility;
use agentwire_types::Access;
use agentwire_types::{A2AError, Front, Peer, RequestContext};
use axum::extract::Request;
use axum::response::Response;
use axum::Router;
use tower::ServiceExt;

use crate::upstream::Upstream;

/// One agent served under `/agents/NAME`.
pub(crate) struct Mounted {
    pub(crate) upstream: Upstream,
    /// Who may see and call it.
    pub(crate) visibility: Visibility,
    /// Its operations, with the gateway's layers in front.
    pub(crate) operations: Operations,
    /// Its routes, as if it were served at the root.
    pub(crate) router: LazyRouter,
}

/// An agent's routes, made at its first HTTP request: a router holds a few hundred KB, and most
/// registered agents of a large registry are seldom called over HTTP (gRPC and MCP reach them
/// through their operations).
pub(crate) struct LazyRouter {
    made: std::sync::OnceLock<Router>,
    make: Box<dyn Fn() -> Router + Send + Sync>,
}

impl LazyRouter {
    pub(crate) fn new(make: impl Fn() -> Router + Send + Sync + 'static) -> Self {
        Self { made: std::sync::OnceLock::new(), make: Box::new(make) }
    }

    /// The routes, made now if they were not yet.
    pub(crate) fn get(&self) -> &Router {
        self.made.get_or_init(|| (self.make)())
    }
}

/// The agents by name. Cloning is cheap: clones share the agents.
#[derive(Clone, Default)]
pub(crate) struct Directory(Arc<RwLock<BTreeMap<String, Arc<Mounted>>>>);

impl Directory {
    pub(crate) fn get(&self, name: &str) -> Option<Arc<Mounted>> {
        self.read().get(name).cloned()
    }

    pub(crate) fn insert(&self, name: &str, mounted: Mounted) {
        self.0.write().unwrap_or_else(std::sync::PoisonError::into_inner).insert(name.to_owned(), Arc::new(mounted));
    }

    pub(crate) fn remove(&self, name: &str) -> bool {
        self.0.write().unwrap_or_else(std::sync::PoisonError::into_inner).remove(name).is_some()
    }

    /// The agents, by name.
    pub(crate) fn agents(&self) -> Vec<(String, Arc<Mounted>)> {
        self.read().iter().map(|(name, mounted)| (name.clone(), Arc::clone(mounted))).collect()
    }

    /// The names of the agents `caller` may not see.
    pub(crate) fn hidden_from(&self, caller: &Caller) -> Vec<String> {
        let agents = self.read();
        let hidden =
            agents.iter().filter(|(_, mounted)| !mounted.visibility.is_public() && !caller.sees(&mounted.visibility));
        hidden.map(|(name, _)| name.clone()).collect()
    }

    /// The names of the agents everyone may see.
    pub(crate) fn public_names(&self) -> Vec<String> {
        let agents = self.read();
        agents.iter().filter(|(_, mounted)| mounted.visibility.is_public()).map(|(name, _)| name.clone()).collect()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Arc<Mounted>>> {
        self.0.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Who is asking, as far as seeing agents goes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Caller {
    /// The principal's name; `None` for an anonymous caller.
    pub(crate) principal: Option<String>,
    /// Its `tenant` claim.
    pub(crate) tenant: Option<String>,
    /// Its `scope` (space-separated) or `scp` (a list, or space-separated) claim.
    pub(crate) scopes: Vec<String>,
    /// Whether it may change the registry, and so sees every agent.
    pub(crate) admin: bool,
}

impl Caller {
    /// The caller `principal` is.
    pub(crate) fn of(principal: Option<&Principal>) -> Self {
        let Some(principal) = principal else { return Self::default() };
        let claim = |name: &str| principal.claims.get(name);
        let mut scopes: Vec<String> = Vec::new();
        for value in [claim("scope"), claim("scp")].into_iter().flatten() {
            match value {
                serde_json::Value::String(text) => scopes.extend(text.split_whitespace().map(str::to_owned)),
                serde_json::Value::Array(items) => {
                    scopes.extend(items.iter().filter_map(serde_json::Value::as_str).map(str::to_owned))
                }
                _ => {}
            }
        }
        Self {
            principal: Some(principal.name.clone()),
            tenant: claim("tenant").and_then(serde_json::Value::as_str).map(str::to_owned),
            scopes,
            admin: false,
        }
    }

    /// Whether it may see an agent seen by `visibility`.
    pub(crate) fn sees(&self, visibility: &Visibility) -> bool {
        let scopes: Vec<&str> = self.scopes.iter().map(String::as_str).collect();
        self.admin || visibility.admits(self.principal.as_deref(), self.tenant.as_deref(), &scopes)
    }
}

/// The context of an HTTP request made beside the operations, for its caller to be identified:
/// its headers and its peer (with its certificate).
pub(crate) fn context_of(request: &Request) -> RequestContext {
    RequestContext::from_http(Front::Gateway, request.headers(), request.extensions())
}

/// The caller of a request with context `ctx` ([`context_of`]) as `app` authenticates it;
/// anonymous when it brings no credentials the gateway accepts.
pub(crate) async fn caller_of(app: &App, ctx: RequestContext) -> Caller {
    match app.identify(ctx, Access::ListAgents, false).await {
        Ok(principal) => Caller::of(principal.as_ref()),
        Err(_) => Caller::default(),
    }
}

/// The refusal of an operation for an agent the gateway does not serve, or that its caller may
/// not see: the same either way.
pub(crate) fn no_such_agent(name: &str) -> A2AError {
    A2AError::invalid_params(format!("no agent named {name:?} at this gateway"))
}

/// Serves a request under `/agents/NAME` with the agent's routes, as if at their root, once the
/// caller may see the agent.
pub(crate) async fn dispatch(directory: &Directory, app: &App, name: &str, mut request: Request) -> Response {
    let Some(mounted) = directory.get(name) else { return not_found(name) };
    if !mounted.visibility.is_public() && !caller_of(app, context_of(&request)).await.sees(&mounted.visibility) {
        return not_found(name);
    }
    let path = request.uri().path();
    let tail = path.strip_prefix("/agents/").and_then(|rest| rest.strip_prefix(name)).unwrap_or_default();
    let tail = if tail.is_empty() { "/" } else { tail };
    let uri = match request.uri().query() {
        Some(query) => format!("{tail}?{query}"),
        None => tail.to_owned(),
    };
    if let Ok(uri) = uri.parse() {
        *request.uri_mut() = uri;
    }
    // The agent's routes see the request as the listener handed it over: the path parameters
    // this route matched would otherwise come before their own.
    let peer = request.extensions().get::<Peer>().cloned();
    *request.extensions_mut() = http::Extensions::new();
    if let Some(peer) = peer {
        request.extensions_mut().insert(peer);
    }
    match mounted.router.get().clone().oneshot(request).await {
        Ok(response) => response,
        Err(infallible) => match infallible {},
    }
}

/// 404, with an AIP-193 body that says which agent.
pub(crate) fn not_found(name: &str) -> Response {
    let message = format!("no agent named {name:?} at this gateway");
    let body = serde_json::json!({ "error": { "code": 404, "status": "NOT_FOUND", "message": message } });
    json_response(http::StatusCode::NOT_FOUND, &body)
}

/// `body`, as JSON, with `status`: what the gateway's own routes answer.
pub(crate) fn json_response(status: http::StatusCode, body: &impl serde::Serialize) -> Response {
    let json = [(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"))];
    // What is written here is JSON values and A2A types, which always serialize.
    let body = serde_json::to_string(body).unwrap_or_default();
    axum::response::IntoResponse::into_response((status, json, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_is_seen_by_its_name_tenant_claim_or_scopes() {
        let principal = Principal::new("https://idp#alice")
            .with_claim("tenant", "acme")
            .with_claim("scope", "read agents:fx")
            .with_claim("scp", serde_json::json!(["ops"]));
        let caller = Caller::of(Some(&principal));
        assert_eq!(caller.scopes, ["read", "agents:fx", "ops"]);
        let only = |principals: &[&str], tenants: &[&str], scopes: &[&str]| Visibility {
            principals: principals.iter().map(|p| (*p).to_owned()).collect(),
            tenants: tenants.iter().map(|t| (*t).to_owned()).collect(),
            scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
        };
        assert!(caller.sees(&only(&["https://idp#alice"], &[], &[])));
        assert!(caller.sees(&only(&[], &["acme"], &[])));
        assert!(caller.sees(&only(&[], &[], &["ops"])));
        assert!(!caller.sees(&only(&["bob"], &["other"], &["admin"])));
        assert!(!Caller::default().sees(&only(&[], &["acme"], &[])), "an anonymous caller has no tenant");
        assert!(Caller::default().sees(&Visibility::default()));
        assert!(Caller { admin: true, ..Caller::default() }.sees(&only(&["bob"], &[], &[])));
    }
}
