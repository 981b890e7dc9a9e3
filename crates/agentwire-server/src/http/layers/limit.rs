//! The request body limit, for every binding: bodies are read through `http_body_util::Limited`,
//! and a body that declares a larger `Content-Length` is refused before it is read.

use std::convert::Infallible;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use http_body_util::Limited;
use tower::{Layer, Service};

/// The limit a request's body was given, for the binding that reads it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyLimit {
    pub(crate) bytes: usize,
    /// The body declared a length over the limit: it is refused without being read.
    pub(crate) declared_too_large: bool,
}

/// Limits every request body to `bytes`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyLimitLayer {
    bytes: usize,
}

impl BodyLimitLayer {
    pub(crate) fn new(bytes: usize) -> Self {
        Self { bytes }
    }
}

impl<S> Layer<S> for BodyLimitLayer {
    type Service = LimitBody<S>;

    fn layer(&self, inner: S) -> LimitBody<S> {
        LimitBody { inner, bytes: self.bytes }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct LimitBody<S> {
    inner: S,
    bytes: usize,
}

impl<S> Service<Request> for LimitBody<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> S::Future {
        let declared = request
            .headers()
            .get(http::header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
        let limit =
            BodyLimit { bytes: self.bytes, declared_too_large: declared.is_some_and(|n| n > self.bytes as u64) };
        let (mut parts, body) = request.into_parts();
        parts.extensions.insert(limit);
        self.inner.call(Request::from_parts(parts, Body::new(Limited::new(body, self.bytes))))
    }
}
