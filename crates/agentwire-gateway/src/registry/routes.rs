//! The registry's routes: `GET /agents` (the search), `POST /agents` (a registration, or the
//! search as JSON-RPC) and `DELETE /agents/NAME`.

use std::sync::Arc;

use agentwire_types::{A2AError, RequestContext};
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::{json, Value};

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
            let answer = registry.app.beside(ctx, "ListAgents", false, |principal| {
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
    let body = match axum::body::to_bytes(request.into_body(), MAX_BODY).await {
        Ok(body) => body,
        Err(_) => return respond(Err(A2AError::payload_too_large(MAX_BODY))),
    };
    let body: Value = match serde_json::from_slice(&body) {
        Ok(body) => body,
        Err(error) => return respond(Err(invalid(format!("the body is not JSON: {error}")))),
    };
    if body.get("jsonrpc").is_some() {
        return jsonrpc(&registry, ctx, &body).await;
    }
    if let Some(refused) = foreign {
        return respond(Err(refused));
    }
    let required = registry.credentials_required();
    let answer = registry.app.beside(ctx, "RegisterAgent", required, |principal| {
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
    let answer = registry.app.beside(ctx, "UnregisterAgent", required, |principal| {
        let admitted = registry.admin(principal.as_ref(), peer.as_ref());
        let registry = &registry;
        async move {
            admitted?;
            registry.unregister(name).await
        }
    });
    match answer.await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(error) if error.message().starts_with("no agent named") => crate::directory::not_found(name),
        Err(error) => agentwire_server::error_response(&error),
    }
}

/// The registry's JSON-RPC method, `ListAgents`, whose params are the search's.
async fn jsonrpc(registry: &Registry, ctx: RequestContext, body: &Value) -> Response {
    let id = body.get("id").cloned().unwrap_or(Value::Null);
    let peer = ctx.peer.clone();
    let answer = match body.get("method").and_then(Value::as_str) {
        Some("ListAgents") => {
            let params = body.get("params").cloned().unwrap_or_else(|| json!({}));
            let query = serde_json::from_value::<SearchQuery>(params)
                .map_err(|error| invalid(format!("ListAgents' params do not read: {error}")));
            let search = registry.app.beside(ctx, "ListAgents", false, |principal| {
                let caller = registry.caller(principal.as_ref(), peer.as_ref());
                async move { registry.search(&caller, &query?).await }
            });
            search.await
        }
        Some(method) => Err(A2AError::method_not_found(method)),
        None => Err(A2AError::invalid_request("a JSON-RPC request names its method")),
    };
    let reply = match answer {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(error) => {
            let object = agentwire_types::jsonrpc::ErrorObject::new(agentwire_types::Dialect::V1, &error);
            json!({ "jsonrpc": "2.0", "id": id, "error": object })
        }
    };
    json_response(StatusCode::OK, &reply)
}

fn respond(answer: Result<(StatusCode, Value), A2AError>) -> Response {
    match answer {
        Ok((status, body)) => json_response(status, &body),
        Err(error) => agentwire_server::error_response(&error),
    }
}
