//! The gRPC slot: requests with a `application/grpc*` content type, on any path, go to the gRPC
//! service instead of the JSON routes. Until the gRPC binding is served, the slot answers every
//! call with the gRPC status UNIMPLEMENTED (or the caller's refusal, UNAUTHENTICATED or
//! PERMISSION_DENIED), as a gRPC client expects, never with a JSON page.

use std::convert::Infallible;
use std::task::{Context, Poll};

use agentwire_types::A2AError;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use futures_util::future::Either;
use http::{header, HeaderValue};
use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
use tower::util::BoxCloneSyncService;
use tower::{Layer, Service, ServiceExt};

use super::errors::RpcCode;
use super::layers::Caller;

/// A gRPC service as the steer holds it.
type GrpcService = BoxCloneSyncService<Request, Response, Infallible>;

/// Sends gRPC requests to `grpc`, everything else to the routes it wraps.
#[derive(Clone)]
pub(crate) struct GrpcSteerLayer {
    grpc: GrpcService,
}

impl GrpcSteerLayer {
    /// The slot before the gRPC binding exists: every call is UNIMPLEMENTED.
    pub(crate) fn unimplemented() -> Self {
        Self { grpc: BoxCloneSyncService::new(tower::service_fn(unimplemented)) }
    }
}

async fn unimplemented(request: Request) -> Result<Response, Infallible> {
    let refusal = request.extensions().get::<Caller>().and_then(|Caller(caller)| caller.as_ref().err());
    Ok(match refusal {
        Some(error) => error_response(error),
        None => status_response(RpcCode::Unimplemented, "the gRPC binding is not served by this server yet"),
    })
}

impl<S> Layer<S> for GrpcSteerLayer {
    type Service = GrpcSteer<S>;

    fn layer(&self, routes: S) -> GrpcSteer<S> {
        GrpcSteer { routes, grpc: self.grpc.clone() }
    }
}

#[derive(Clone)]
pub(crate) struct GrpcSteer<S> {
    routes: S,
    grpc: GrpcService,
}

impl<S> Service<Request> for GrpcSteer<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<S::Future, tower::util::Oneshot<GrpcService, Request>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.routes.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if is_grpc(&request) {
            Either::Right(self.grpc.clone().oneshot(request))
        } else {
            Either::Left(self.routes.call(request))
        }
    }
}

fn is_grpc(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.get(..16).is_some_and(|t| t.eq_ignore_ascii_case("application/grpc")))
}

/// Characters a `grpc-message` must percent-encode: controls, `%`, and anything beyond ASCII.
const GRPC_MESSAGE: &AsciiSet = &CONTROLS.add(b'%');

/// An error as a gRPC status.
pub(crate) fn error_response(error: &A2AError) -> Response {
    status_response(super::errors::status(error.kind()).1, error.message())
}

/// A gRPC "trailers-only" response: the status in the headers, no message.
pub(crate) fn status_response(code: RpcCode, message: &str) -> Response {
    let message = utf8_percent_encode(message, GRPC_MESSAGE).to_string();
    let headers = [
        (header::CONTENT_TYPE, HeaderValue::from_static("application/grpc")),
        (header::HeaderName::from_static("grpc-status"), HeaderValue::from(code as u16)),
        (
            header::HeaderName::from_static("grpc-message"),
            HeaderValue::from_str(&message).unwrap_or(HeaderValue::from_static("")),
        ),
    ];
    headers.into_response()
}
