//! The request body limit, for every binding: bodies are read through `http_body_util::Limited`.
//! A binding that reads a body refuses one that declares a larger `Content-Length` before reading
//! it (see [`read_body`](super::super::request::read_body)).

use std::convert::Infallible;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use http_body_util::Limited;
use tower::{Layer, Service};

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
        self.inner.call(request.map(|body| Body::new(Limited::new(body, self.bytes))))
    }
}
