//! CORS, for agents called from browsers. Only requests that carry `Origin` get CORS headers, and
//! only preflights get the preflight answer, so server-to-server calls (most A2A traffic) pay
//! nothing for it.

use std::convert::Infallible;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use futures_util::future::{ready, Either, MapOk, Ready, TryFutureExt};
use http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use tower::{Layer, Service};

/// Response headers a browser script may read: the card's caching headers.
const EXPOSED: HeaderValue = HeaderValue::from_static("etag, last-modified, cache-control");
const METHODS: HeaderValue = HeaderValue::from_static("GET, POST, DELETE, OPTIONS");
const ANY_ORIGIN: HeaderValue = HeaderValue::from_static("*");
/// How long a browser may reuse a preflight answer, in seconds.
const MAX_AGE: HeaderValue = HeaderValue::from_static("600");

/// Adds CORS to every route. A plain tower layer rather than `axum::middleware::from_fn`: that
/// one boxes a future and clones the inner service on every request, about 4 % of a SendMessage.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CorsLayer;

impl<S> Layer<S> for CorsLayer {
    type Service = Cors<S>;

    fn layer(&self, inner: S) -> Cors<S> {
        Cors { inner }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Cors<S> {
    inner: S,
}

type WithCorsHeaders<F> = MapOk<F, fn(Response) -> Response>;

impl<S> Service<Request> for Cors<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<S::Future, Either<WithCorsHeaders<S::Future>, Ready<Result<Response, Infallible>>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if !request.headers().contains_key(header::ORIGIN) {
            return Either::Left(self.inner.call(request));
        }
        if request.method() == Method::OPTIONS && request.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
        {
            return Either::Right(Either::Right(ready(Ok(preflight(request.headers())))));
        }
        Either::Right(Either::Left(self.inner.call(request).map_ok(allow_any_origin as fn(Response) -> Response)))
    }
}

fn allow_any_origin(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, ANY_ORIGIN);
    headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, EXPOSED);
    response
}

/// Any origin may call; the headers it asks for are allowed by name, because a `*` would not
/// cover `Authorization`.
fn preflight(request: &HeaderMap) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, ANY_ORIGIN);
    headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, METHODS);
    if let Some(asked) = request.get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, asked.clone());
    }
    headers.insert(header::ACCESS_CONTROL_MAX_AGE, MAX_AGE);
    response
}
