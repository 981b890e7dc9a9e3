//! The registry's routes: `GET /agents` (the search), `POST /agents` (a registration, or the
//! search as JSON-RPC) and `DELETE /agents/NAME`.

use std::sync::Arc;

use agentwire_types::{jsonrpc, A2AError, Access, RequestContext};
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::value::RawValue;
use serde_json::Value;

use super::guard::{foreign_origin, not_json};
use super::search::SearchQuery;
use super::{invalid, Registry};
use crate::directory::{context_of, json_response};

/// The largest body `POST /agents` reads.
const MAX_BODY: usize = 64 * 1024;

/// `GET /agents`, `POST /agents`.
pub(crate) async fn agents_route(registry: Arc<Registry>, request: Request) -> Response {
    match *request.method() {
        http::Method::GET => {
            let ctx = context_of(&request);
            let peer = ctx.peer.clone();
            let query: Result<SearchQuery, _> = serde_urlencoded::from_str(request.uri().query().unwrap_or_default())
                .map_err(|error| invalid(format!("the search's parameters do not read: {error}")));
            let answer = registry.app.beside(ctx, Access::ListAgents, false, |principal| {
                let caller = registry.caller(principal.as_ref(), peer.as_ref());
                let registry = &registry;
                async move { registry.search(&caller, &query?).await }
            });
            respond(answer.await.map(|answer| (StatusCode::OK, answer)))
        }
        http::Method::POST => post(registry, request).await,
        _ => StatusCode::METHOD_NOT_ALLOWED.into_response(),
    }
}

/// `POST /agents`: a JSON-RPC request for `ListAgents`, or a registration (from no other web
/// origin than the gateway's).
async fn post(registry: Arc<Registry>, request: Request) -> Response {
    if let Some(refused) = not_json(&request) {
        return respond(Err(refused));
    }
    let ctx = context_of(&request);
    let peer = ctx.peer.clone();
    let foreign = foreign_origin(&request, &registry.public_url, peer.as_ref());
    let bytes = match axum::body::to_bytes(request.into_body(), MAX_BODY).await {
        Ok(bytes) => bytes,
        Err(_) => return respond(Err(A2AError::payload_too_large(MAX_BODY))),
    };
    let body: Value = match serde_json::from_slice(&bytes) {
        Ok(body) => body,
        Err(error) => return respond(Err(invalid(format!("the body is not JSON: {error}")))),
    };
    if body.get("jsonrpc").is_some() {
        return jsonrpc(&registry, ctx, &bytes).await;
    }
    if let Some(refused) = foreign {
        return respond(Err(refused));
    }
    let required = registry.credentials_required();
    let answer = registry.app.beside(ctx, Access::RegisterAgent, required, |principal| {
        let admitted = registry.admin(principal.as_ref(), peer.as_ref());
        let (registry, body) = (&registry, &body);
        async move { registry.register(&admitted?, body).await }
    });
    respond(answer.await.map(|entry| (StatusCode::CREATED, entry)))
}

/// `DELETE /agents/NAME`.
pub(crate) async fn delete_route(registry: Arc<Registry>, name: &str, request: Request) -> Response {
    let ctx = context_of(&request);
    let peer = ctx.peer.clone();
    if let Some(refused) = foreign_origin(&request, &registry.public_url, peer.as_ref()) {
        return respond(Err(refused));
    }
    let required = registry.credentials_required();
    let answer = registry.app.beside(ctx, Access::UnregisterAgent, required, |principal| {
        let admitted = registry.admin(principal.as_ref(), peer.as_ref());
        let registry = &registry;
        async move {
            admitted?;
            registry.unregister(name).await
        }
    });
    match answer.await {
        Ok(true) => StatusCode::NO_CONTENT.into_response(),
        Ok(false) => crate::directory::not_found(name),
        Err(error) => agentwire_server::error_response(&error),
    }
}

/// The registry's JSON-RPC method, `ListAgents`, whose params are the search's: `body` read
/// as the operations' JSON-RPC requests are.
async fn jsonrpc(registry: &Registry, ctx: RequestContext, body: &[u8]) -> Response {
    let null = RawValue::NULL;
    let request = match serde_json::from_slice::<jsonrpc::Request<'_>>(body) {
        Ok(request) => request,
        Err(error) => {
            let refused = A2AError::invalid_request(format!("not a JSON-RPC request: {error}"));
            return json_response(StatusCode::OK, &jsonrpc::Response::<()>::error(null, error_object(&refused)));
        }
    };
    let id = request.id.unwrap_or(null);
    let peer = ctx.peer.clone();
    let answer = match request.method.as_ref() {
        "ListAgents" => {
            let params = request.params.map_or("{}", RawValue::get);
            let query = serde_json::from_str::<SearchQuery>(params)
                .map_err(|error| invalid(format!("ListAgents' params do not read: {error}")));
            let search = registry.app.beside(ctx, Access::ListAgents, false, |principal| {
                let caller = registry.caller(principal.as_ref(), peer.as_ref());
                async move { registry.search(&caller, &query?).await }
            });
            search.await
        }
        method => Err(A2AError::method_not_found(method)),
    };
    match answer {
        Ok(result) => json_response(StatusCode::OK, &jsonrpc::Response::result(id, result)),
        Err(error) => json_response(StatusCode::OK, &jsonrpc::Response::<()>::error(id, error_object(&error))),
    }
}

fn error_object(error: &A2AError) -> jsonrpc::ErrorObject {
    jsonrpc::ErrorObject::new(agentwire_types::Dialect::V1, error)
}

fn respond(answer: Result<(StatusCode, Value), A2AError>) -> Response {
    match answer {
        Ok((status, body)) => json_response(status, &body),
        Err(error) => agentwire_server::error_response(&error),
    }
}
