//! The HTTP bindings: JSON-RPC at `/`, HTTP+JSON routes, and the agent card, in one router.

mod card;
mod cors;
mod errors;
mod jsonrpc;
mod meta;
mod rest;
mod service;
mod sse;

use std::sync::Arc;

use agentwire_types::{A2AError, Result};
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use bytes::BytesMut;
use http::{header, HeaderValue, Method};
use http_body_util::BodyExt as _;

use crate::auth::Authenticator;
use crate::RequestHandler;

pub use service::{service, A2aService};

#[derive(Clone)]
pub(crate) struct AppState {
    pub(crate) handler: RequestHandler,
    card: Arc<card::CardDocument>,
}

/// Paths anyone may read, even when authentication is required.
const PUBLIC_PATHS: [&str; 3] = ["/.well-known/agent-card.json", "/.well-known/agent.json", "/agentCard"];

/// The whole A2A HTTP surface of `handler`: the agent card, JSON-RPC at `/`, and HTTP+JSON routes
/// (also under `/{tenant}/`), with CORS and, if the handler has an authenticator, authentication.
///
/// ```no_run
/// use agentwire_server::{agent::EchoAgent, router, RequestHandler};
///
/// # async fn run() -> std::io::Result<()> {
/// let app = router(RequestHandler::builder(EchoAgent).build());
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// axum::serve(listener, app).await
/// # }
/// ```
pub fn router(handler: RequestHandler) -> Router {
    router_and_state(handler).0
}

/// The router, and the state its routes share (which [`service`] also needs).
fn router_and_state(handler: RequestHandler) -> (Router, AppState) {
    let card = Arc::new(card::CardDocument::new(handler.agent_card()));
    let auth = handler.core.auth.clone();
    let state = AppState { handler, card };
    let mut app = Router::new()
        .route("/.well-known/agent-card.json", get(card::serve))
        .route("/.well-known/agent.json", get(card::serve))
        .route("/agentCard", get(card::serve))
        .route("/", post(jsonrpc::handle::<Body>))
        .fallback(rest::handle::<Body>)
        .with_state(state.clone());
    if let Some(auth) = auth {
        app = app.layer(axum::middleware::from_fn_with_state(auth, authenticate));
    }
    (app.layer(cors::CorsLayer), state)
}

/// Decodes request parameters, naming the offending field on failure (InvalidParams).
pub(crate) fn decode<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T> {
    serde_path_to_error::deserialize(value).map_err(invalid_params)
}

/// [`decode`] straight from JSON text, without building a `Value` first (the hot path). Valid
/// input is decoded once without tracking paths; only a failure is decoded again to name the field.
pub(crate) fn decode_json<T: serde::de::DeserializeOwned>(json: &str) -> Result<T> {
    if let Ok(value) = serde_json::from_str(json) {
        return Ok(value);
    }
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(invalid_params)?;
    deserializer.end().map_err(A2AError::parse)?;
    Ok(value)
}

fn invalid_params<E: std::fmt::Display>(e: serde_path_to_error::Error<E>) -> A2AError {
    let path = e.path().to_string();
    if path == "." {
        A2AError::invalid_params(format!("invalid params: {}", e.inner()))
    } else {
        A2AError::invalid_params(format!("invalid params at {path}: {}", e.inner()))
    }
}

/// A JSON response written straight from `body`, with no intermediate `Value`.
pub(crate) fn json_response(
    status: http::StatusCode,
    media_type: HeaderValue,
    body: &impl serde::Serialize,
) -> Response {
    // Most replies (a task with a short history) fit: one allocation instead of a growing buffer.
    json_bytes_response(status, media_type, crate::json::to_vec_with_capacity(body, 1024))
}

/// A response with JSON text already written, or 500 if writing it failed.
pub(crate) fn json_bytes_response(
    status: http::StatusCode,
    media_type: HeaderValue,
    json: serde_json::Result<Vec<u8>>,
) -> Response {
    match json {
        Ok(bytes) => (status, [(header::CONTENT_TYPE, media_type)], bytes).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "could not encode a response");
            http::StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// A request body as the bindings read it: hyper's own on the direct path, axum's `Body` behind
/// the router.
pub(crate) trait RequestBody: HttpBody<Data = Bytes, Error: Into<axum::BoxError>> + Send + 'static {}

impl<B> RequestBody for B where B: HttpBody<Data = Bytes, Error: Into<axum::BoxError>> + Send + 'static {}

/// Reads a body up to `limit` bytes. A body that arrives in one chunk, as most requests do, is
/// that chunk, not a copy; the body is read straight from hyper, not through a boxed `Body`.
pub(crate) async fn read_body(body: impl RequestBody, limit: usize) -> Result<Bytes> {
    let too_large = || A2AError::payload_too_large(limit);
    if body.size_hint().lower() > limit as u64 {
        return Err(too_large());
    }
    let mut body = std::pin::pin!(body);
    // The first chunk, kept whole until a second one arrives; then all of them, joined.
    let mut first: Option<Bytes> = None;
    let mut joined = BytesMut::new();
    let mut length = 0;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| A2AError::invalid_request("could not read the request body"))?;
        // Trailers carry nothing A2A reads.
        let Ok(chunk) = frame.into_data() else { continue };
        length += chunk.len();
        if length > limit {
            return Err(too_large());
        }
        if first.is_none() && joined.is_empty() {
            first = Some(chunk);
            continue;
        }
        if let Some(first) = first.take() {
            joined.extend_from_slice(&first);
        }
        joined.extend_from_slice(&chunk);
    }
    Ok(first.unwrap_or_else(|| joined.freeze()))
}

async fn authenticate(State(auth): State<Arc<dyn Authenticator>>, mut request: Request, next: Next) -> Response {
    match refusal(auth.as_ref(), &mut request) {
        None => next.run(request).await,
        Some(refusal) => refusal,
    }
}

/// Whether a request is for the JSON-RPC binding, `POST /`.
fn is_jsonrpc_call<B>(request: &http::Request<B>) -> bool {
    request.method() == Method::POST && request.uri().path() == "/"
}

/// The answer to a request that may not in, in its binding's format; `None` lets it in, with its
/// caller recorded. Preflights and the card are open to anyone.
fn refusal<B>(auth: &dyn Authenticator, request: &mut http::Request<B>) -> Option<Response> {
    if request.method() == Method::OPTIONS || PUBLIC_PATHS.contains(&request.uri().path()) {
        return None;
    }
    let error = match auth.authenticate(request.headers()) {
        Ok(principal) => {
            request.extensions_mut().insert(principal);
            return None;
        }
        Err(error) => error,
    };
    let mut response = if is_jsonrpc_call(request) {
        jsonrpc::error_response(&jsonrpc::null_id(), &error)
    } else {
        rest::error_response(&error)
    };
    if error.kind() == agentwire_types::ErrorKind::Unauthenticated {
        if let Ok(challenge) = HeaderValue::from_str(&auth.challenge()) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
        }
    }
    Some(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunked(chunks: &[&'static str]) -> Body {
        let chunks: Vec<Result<Bytes, std::convert::Infallible>> =
            chunks.iter().map(|c| Ok(Bytes::from_static(c.as_bytes()))).collect();
        Body::from_stream(futures_util::stream::iter(chunks))
    }

    #[tokio::test]
    async fn a_body_in_one_chunk_is_that_chunk() {
        let chunk = Bytes::from_static(b"{\"a\":1}");
        let read = read_body(Body::from(chunk.clone()), 100).await.unwrap();
        assert_eq!(read, chunk);
        assert_eq!(read.as_ptr(), chunk.as_ptr(), "the chunk should not be copied");
    }

    #[tokio::test]
    async fn chunks_are_joined_in_order() {
        assert_eq!(read_body(chunked(&["ab", "", "cd", "e"]), 5).await.unwrap(), "abcde");
        assert_eq!(read_body(chunked(&[]), 5).await.unwrap(), "");
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_refused() {
        let too_large = A2AError::payload_too_large(5);
        assert_eq!(read_body(chunked(&["abc", "def"]), 5).await.unwrap_err(), too_large);
        assert_eq!(read_body(Body::from("abcdef"), 5).await.unwrap_err(), too_large);
    }
}
