//! The HTTP surface: one axum `Router` for the agent card, JSON-RPC at `/`, the HTTP+JSON routes
//! and the gRPC slot, with the cross-cutting work done once, as tower layers around every route.
//!
//! Layers, outermost first: request id and tracing, CORS (answers preflights), the body limit,
//! authentication, version and extension negotiation, and the steer that sends gRPC requests to
//! the gRPC slot. Each binding builds its [`RequestContext`](crate::RequestContext) from what the
//! layers recorded, and reports a refusal in its own error format.

mod card;
mod errors;
mod grpc;
mod jsonrpc;
mod layers;
mod request;
mod rest;
mod sse;

use std::sync::Arc;
use std::time::Duration;

use axum::http::{header, HeaderName, HeaderValue, Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use std::convert::Infallible;
use std::task::{Context, Poll};

use axum::body::Body;
use futures_util::future::Either;
use tower::{Layer, Service, ServiceBuilder};
use tower_http::cors::{AllowHeaders, AllowOrigin, Cors, CorsLayer};
use tower_http::request_id::PropagateRequestIdLayer;
use tower_http::trace::TraceLayer;

use crate::RequestHandler;

/// Which browser origins may call the agent (CORS).
#[derive(Debug, Clone, Default)]
pub enum CorsOrigins {
    /// Any origin (`Access-Control-Allow-Origin: *`).
    #[default]
    Any,
    /// Only these origins, e.g. `https://app.example`.
    List(Vec<HeaderValue>),
}

/// How [`router_with`] serves the agent over HTTP. Limits on requests and state are the handler's
/// [`Limits`](crate::Limits).
///
/// ```
/// use std::time::Duration;
/// use agentwire_server::{CorsOrigins, HttpOptions};
///
/// let options = HttpOptions {
///     cors: CorsOrigins::List(vec!["https://app.example".parse().unwrap()]),
///     sse_keep_alive: Duration::from_secs(30),
/// };
/// # drop(options);
/// ```
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Browser origins allowed to call the agent.
    pub cors: CorsOrigins,
    /// How often an idle event stream sends a comment line, so that proxies keep it open.
    pub sse_keep_alive: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self { cors: CorsOrigins::Any, sse_keep_alive: Duration::from_secs(15) }
    }
}

/// What every route shares.
#[derive(Clone)]
pub(crate) struct AppState {
    pub(crate) handler: RequestHandler,
    card: Arc<card::CardDocument>,
    sse_keep_alive: Duration,
}

/// The whole A2A HTTP surface of `handler`, with the default [`HttpOptions`]: the agent card,
/// JSON-RPC at `/`, the HTTP+JSON routes (also under `/{tenant}/`), and a gRPC slot, behind
/// request tracing, CORS, the body limit and, if the handler has an authenticator,
/// authentication. Serve it with [`serve`](crate::serve), or put it into an application of your
/// own: `nest` it under a prefix (the prefix is then part of the URL the card must advertise), or
/// `merge` it into a router that has no fallback (it has its own, for A2A's 404s).
///
/// ```no_run
/// use agentwire_server::{agent::EchoAgent, router, serve, RequestHandler, ServeOptions};
///
/// # async fn run() -> std::io::Result<()> {
/// let app = router(RequestHandler::builder(EchoAgent).build());
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// serve(listener, app, std::future::pending(), ServeOptions::default()).await
/// # }
/// ```
pub fn router(handler: RequestHandler) -> Router {
    router_with(handler, HttpOptions::default())
}

/// [`router`], configured by `options`.
pub fn router_with(handler: RequestHandler, options: HttpOptions) -> Router {
    let card = Arc::new(card::CardDocument::new(handler.agent_card()));
    let auth = handler.core.auth.clone();
    let body_limit = handler.limits().max_body_bytes;
    let state = AppState { handler, card, sse_keep_alive: options.sse_keep_alive };
    let mut app = Router::new()
        .route("/.well-known/agent-card.json", get(card::serve))
        .route("/.well-known/agent.json", get(card::serve))
        .route("/agentCard", get(card::serve))
        .route("/", post(jsonrpc::handle));
    for (path, route) in rest::routes() {
        app = app.route(&format!("/{{tenant}}{path}"), route.clone()).route(path, route);
    }
    let app = app
        .route("/v1", axum::routing::any(rest::reserved_for_v03))
        .route("/v1/{*rest}", axum::routing::any(rest::reserved_for_v03))
        .fallback(rest::no_route)
        .method_not_allowed_fallback(rest::method_not_allowed)
        .with_state(state);
    let layers = ServiceBuilder::new()
        .layer(TraceLayer::new_for_http().make_span_with(request_span))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(BrowserCorsLayer(cors(&options.cors)))
        .layer(layers::BodyLimitLayer::new(body_limit))
        .layer(layers::AuthLayer::new(auth))
        .layer(layers::NegotiateLayer)
        .layer(grpc::GrpcSteerLayer::unimplemented());
    app.layer(layers)
}

/// A JSON response. The body is written into a buffer sized for a typical reply (a task with a
/// short history), so that it rarely has to grow.
pub(crate) fn json_response(status: StatusCode, media_type: HeaderValue, body: &impl serde::Serialize) -> Response {
    let mut json = Vec::with_capacity(1024);
    match serde_json::to_writer(&mut json, body) {
        Ok(()) => (status, [(header::CONTENT_TYPE, media_type)], json).into_response(),
        Err(error) => {
            tracing::error!(%error, "could not encode a response");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// One span per request, carrying its id: the client's `x-request-id` (which the response
/// echoes), or a new one. An id is made only for a span that is recorded.
fn request_span<B>(request: &Request<B>) -> tracing::Span {
    let span = tracing::debug_span!(
        "request",
        method = %request.method(),
        path = %request.uri().path(),
        request_id = tracing::field::Empty,
    );
    if !span.is_disabled() {
        match request.headers().get(REQUEST_ID).and_then(|v| v.to_str().ok()) {
            Some(id) => span.record("request_id", id),
            None => span.record("request_id", crate::core::new_id()),
        };
    }
    span
}

/// CORS for browsers: a request with `Origin` goes through `cors`, others straight on. Only
/// browsers act on CORS headers, and of the answers other clients get only the card may be
/// cached where a browser could meet it; it says that it varies by `Origin`.
#[derive(Clone)]
struct BrowserCorsLayer(CorsLayer);

impl<S: Clone> Layer<S> for BrowserCorsLayer {
    type Service = BrowserCors<S>;

    fn layer(&self, inner: S) -> BrowserCors<S> {
        BrowserCors { cors: self.0.layer(inner.clone()), plain: inner }
    }
}

#[derive(Clone)]
struct BrowserCors<S> {
    cors: Cors<S>,
    plain: S,
}

impl<S> Service<Request<Body>> for BrowserCors<S>
where
    S: Service<Request<Body>, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<<Cors<S> as Service<Request<Body>>>::Future, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        match (self.cors.poll_ready(cx), self.plain.poll_ready(cx)) {
            (Poll::Ready(_), Poll::Ready(_)) => Poll::Ready(Ok(())),
            _ => Poll::Pending,
        }
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        if request.headers().contains_key(header::ORIGIN) {
            Either::Left(self.cors.call(request))
        } else {
            Either::Right(self.plain.call(request))
        }
    }
}

/// Preflights are answered for any allowed origin; the headers a browser asks for are allowed by
/// name (a `*` would not cover `Authorization`), and the card's caching headers are readable.
fn cors(origins: &CorsOrigins) -> CorsLayer {
    let layer = CorsLayer::new()
        .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers([header::ETAG, header::LAST_MODIFIED, header::CACHE_CONTROL])
        .max_age(Duration::from_secs(600));
    match origins {
        // With `*`, a response's CORS headers are the same whatever the origin, so caches need no
        // `Vary`: preflights, the only answers that mirror request headers, are never cached.
        CorsOrigins::Any => layer.allow_origin(AllowOrigin::any()).vary([]),
        CorsOrigins::List(list) => layer.allow_origin(AllowOrigin::list(list.iter().cloned())),
    }
}
