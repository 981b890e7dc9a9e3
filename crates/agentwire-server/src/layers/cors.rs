//! CORS, with tower-http's `CorsLayer`, for the requests browsers make.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use futures_util::future::Either;
use http::{header, HeaderValue, Method, Request};
use tower::{Layer, Service};
use tower_http::cors::{AllowHeaders, AllowOrigin, Cors, CorsLayer};

/// Which browser origins may call the agent (CORS).
#[derive(Debug, Clone, Default)]
pub enum CorsOrigins {
    /// Any origin (`Access-Control-Allow-Origin: *`).
    #[default]
    Any,
    /// Only these origins, e.g. `https://app.example`.
    List(Vec<HeaderValue>),
}

/// CORS for browsers: a request with `Origin` goes through `cors`, others straight on. Only
/// browsers act on CORS headers, and of the answers other clients get only the card may be
/// cached where a browser could meet it; it says that it varies by `Origin`.
#[derive(Clone)]
pub(crate) struct BrowserCorsLayer(Arc<CorsLayer>);

impl BrowserCorsLayer {
    pub(crate) fn new(origins: &CorsOrigins) -> Self {
        Self(Arc::new(cors(origins)))
    }
}

impl<S> Layer<S> for BrowserCorsLayer {
    type Service = BrowserCors<S>;

    fn layer(&self, inner: S) -> BrowserCors<S> {
        BrowserCors { cors: Arc::clone(&self.0), inner }
    }
}

/// The routes, and the CORS layer a browser's request goes through. axum clones a route's
/// services for every request it serves: the layer is shared, and the routes held once.
#[derive(Clone)]
pub(crate) struct BrowserCors<S> {
    cors: Arc<CorsLayer>,
    inner: S,
}

impl<S> Service<Request<Body>> for BrowserCors<S>
where
    S: Service<Request<Body>, Response = Response, Error = Infallible> + Clone,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<<Cors<S> as Service<Request<Body>>>::Future, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        if request.headers().contains_key(header::ORIGIN) {
            // The ready service goes into `Cors`; a clone, not yet polled, stays here.
            let fresh = self.inner.clone();
            let ready = std::mem::replace(&mut self.inner, fresh);
            Either::Left(self.cors.layer(ready).call(request))
        } else {
            Either::Right(self.inner.call(request))
        }
    }
}

const MCP_SESSION_ID: header::HeaderName = header::HeaderName::from_static("mcp-session-id");

/// Preflights are answered for any allowed origin; the headers a browser asks for are allowed by
/// name (a `*` would not cover `Authorization`), and the card's caching headers are readable.
fn cors(origins: &CorsOrigins) -> CorsLayer {
    let layer = CorsLayer::new()
        .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
        .allow_headers(AllowHeaders::mirror_request())
        // MCP's streamable HTTP names a session in a response header the page must read.
        .expose_headers([header::ETAG, header::LAST_MODIFIED, header::CACHE_CONTROL, MCP_SESSION_ID])
        .max_age(Duration::from_secs(600));
    match origins {
        // With `*`, a response's CORS headers are the same whatever the origin, so caches need no
        // `Vary`: preflights, the only answers that mirror request headers, are never cached.
        CorsOrigins::Any => layer.allow_origin(AllowOrigin::any()).vary([]),
        CorsOrigins::List(list) => layer.allow_origin(AllowOrigin::list(list.iter().cloned())),
    }
}
