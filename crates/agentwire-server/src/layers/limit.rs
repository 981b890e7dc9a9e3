//! The request body limit, for every binding: bodies are read through `http_body_util::Limited`.
//! A binding that reads a body refuses one that declares a larger `Content-Length` before reading
//! it (see [`read_body`](super::super::request::read_body)).

use axum::body::Body;
use axum::extract::Request;
use http_body_util::Limited;
use tower::util::MapRequestLayer;

/// Limits every request body to `bytes`.
pub(crate) fn body_limit(bytes: usize) -> MapRequestLayer<impl Fn(Request) -> Request + Clone> {
    MapRequestLayer::new(move |request: Request| request.map(|body| Body::new(Limited::new(body, bytes))))
}
