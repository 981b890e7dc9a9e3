//! CORS, for agents called from browsers. Only requests that carry `Origin` get CORS headers, and
//! only preflights get the preflight answer, so server-to-server calls (most A2A traffic) pay
//! nothing for it.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap, HeaderValue, Method, StatusCode};

/// Response headers a browser script may read: the card's caching headers.
const EXPOSED: HeaderValue = HeaderValue::from_static("etag, last-modified, cache-control");
const METHODS: HeaderValue = HeaderValue::from_static("GET, POST, DELETE, OPTIONS");
const ANY_ORIGIN: HeaderValue = HeaderValue::from_static("*");
/// How long a browser may reuse a preflight answer, in seconds.
const MAX_AGE: HeaderValue = HeaderValue::from_static("600");

pub(crate) async fn cors(request: Request, next: Next) -> Response {
    if !request.headers().contains_key(header::ORIGIN) {
        return next.run(request).await;
    }
    if request.method() == Method::OPTIONS && request.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD) {
        return preflight(request.headers());
    }
    let mut response = next.run(request).await;
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
