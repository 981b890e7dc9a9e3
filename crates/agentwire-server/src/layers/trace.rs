//! Tracing: a span per request, with the request's id.

use http::{HeaderName, Request};

/// The header a client names its request with; the response echoes it.
pub(crate) const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// One span per request, carrying its id: the client's `x-request-id` (which the response
/// echoes), or a new one. An id is made only for a span that is recorded.
pub(crate) fn request_span<B>(request: &Request<B>) -> tracing::Span {
    let span = tracing::debug_span!(
        "request",
        method = %request.method(),
        path = %request.uri().path(),
        request_id = tracing::field::Empty,
    );
    if !span.is_disabled() {
        match request.headers().get(REQUEST_ID).and_then(|v| v.to_str().ok()) {
            Some(id) => span.record("request_id", id),
            None => span.record("request_id", crate::ids::new_id()),
        };
    }
    span
}
