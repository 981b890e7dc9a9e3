//! The gRPC steer: requests with a `application/grpc*` content type, on any path, go to the gRPC
//! services instead of the JSON routes. A server built without the `grpc` feature answers every
//! call with the gRPC status UNIMPLEMENTED, as a gRPC client expects, never with a JSON page.

use std::convert::Infallible;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::Response;
use futures_util::future::Either;
use http::header;
use tower::util::BoxCloneSyncService;
use tower::{Layer, Service, ServiceExt};

/// A gRPC service as the steer holds it.
type GrpcService = BoxCloneSyncService<Request, Response, Infallible>;

/// Sends gRPC requests to `grpc`, everything else to the routes it wraps.
#[derive(Clone)]
pub(crate) struct GrpcSteerLayer {
    grpc: GrpcService,
}

impl GrpcSteerLayer {
    /// The gRPC services over `operations`, taking messages of at most `max_message_bytes`.
    #[cfg(feature = "grpc")]
    pub(crate) fn new(operations: &crate::service::Operations, max_message_bytes: usize) -> Self {
        let service = tower::ServiceBuilder::new()
            .map_request(crate::grpc::alias_opvs_service)
            .map_response(|response: http::Response<tonic::body::Body>| response.map(axum::body::Body::new))
            .service(crate::grpc::routes(operations, max_message_bytes));
        Self { grpc: BoxCloneSyncService::new(service) }
    }

    /// Without the gRPC binding, every call is UNIMPLEMENTED.
    #[cfg(not(feature = "grpc"))]
    pub(crate) fn new(_operations: &crate::service::Operations, _max_message_bytes: usize) -> Self {
        Self { grpc: BoxCloneSyncService::new(tower::service_fn(unimplemented::answer)) }
    }
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

#[cfg(not(feature = "grpc"))]
mod unimplemented {
    use std::convert::Infallible;

    use axum::extract::Request;
    use axum::response::{IntoResponse, Response};
    use http::{header, HeaderValue};
    use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};

    use agentwire_types::RpcCode;

    /// Characters a `grpc-message` must percent-encode: controls, `%`, and anything beyond ASCII.
    const GRPC_MESSAGE: &AsciiSet = &CONTROLS.add(b'%');

    /// A "trailers-only" gRPC answer: UNIMPLEMENTED.
    pub(super) async fn answer(_: Request) -> Result<Response, Infallible> {
        let code = RpcCode::Unimplemented;
        let message = "this server was built without the gRPC binding";
        let message = utf8_percent_encode(message, GRPC_MESSAGE).to_string();
        let headers = [
            (header::CONTENT_TYPE, HeaderValue::from_static("application/grpc")),
            (header::HeaderName::from_static("grpc-status"), HeaderValue::from(code as u16)),
            (
                header::HeaderName::from_static("grpc-message"),
                HeaderValue::from_str(&message).unwrap_or(HeaderValue::from_static("")),
            ),
        ];
        Ok(headers.into_response())
    }
}
