//! The gRPC steer: requests with a `application/grpc*` content type, on any path, go to the gRPC
//! services instead of the JSON routes. A server built without the `grpc` feature answers every
//! call with the gRPC status UNIMPLEMENTED, as a gRPC client expects, never with a JSON page.
//!
//! A gRPC request's message must arrive within the body-read timeout, as a JSON body must: tonic
//! reads the body itself, so the steer hands it a body that fails with DEADLINE_EXCEEDED when
//! the time is up.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::response::Response;
use futures_util::future::Either;
use http::header;
use tower::util::BoxCloneSyncService;
use tower::{Layer, Service, ServiceExt};

/// A gRPC service as the steer holds it.
type GrpcService = BoxCloneSyncService<Request, Response, Infallible>;

/// Sends gRPC requests to `grpc`, everything else to the routes it wraps. axum clones a route's
/// services for every request: the gRPC service is shared, and copied for gRPC calls only.
#[derive(Clone)]
pub(crate) struct GrpcSteerLayer {
    grpc: Arc<GrpcService>,
}

impl GrpcSteerLayer {
    /// The gRPC services over `operations`, taking messages of at most `max_message_bytes`
    /// whose request bodies end within `read_timeout`.
    #[cfg(feature = "grpc")]
    pub(crate) fn new(operations: &crate::service::Operations, options: &crate::HttpOptions) -> Self {
        let read_timeout = options.body_read_timeout;
        let routes = crate::grpc::routes(operations, options.max_body_bytes, &options.readiness);
        let service = tower::ServiceBuilder::new()
            .map_request(crate::grpc::alias_opvs_service)
            .map_request(move |request: Request| request.map(|body| deadline::within(body, read_timeout)))
            .map_response(|response: http::Response<tonic::body::Body>| response.map(axum::body::Body::new))
            .service(routes);
        Self { grpc: Arc::new(BoxCloneSyncService::new(service)) }
    }

    /// Without the gRPC binding, every call is UNIMPLEMENTED.
    #[cfg(not(feature = "grpc"))]
    pub(crate) fn new(_operations: &crate::service::Operations, _options: &crate::HttpOptions) -> Self {
        Self { grpc: Arc::new(BoxCloneSyncService::new(tower::service_fn(unimplemented::answer))) }
    }
}

impl<S> Layer<S> for GrpcSteerLayer {
    type Service = GrpcSteer<S>;

    fn layer(&self, routes: S) -> GrpcSteer<S> {
        GrpcSteer { routes, grpc: Arc::clone(&self.grpc) }
    }
}

#[derive(Clone)]
pub(crate) struct GrpcSteer<S> {
    routes: S,
    grpc: Arc<GrpcService>,
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
            Either::Right(GrpcService::clone(&self.grpc).oneshot(request))
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

#[cfg(feature = "grpc")]
mod deadline {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use std::time::Duration;

    use axum::body::Body;
    use bytes::Bytes;
    use http_body::{Frame, SizeHint};
    use tokio::time::Sleep;

    /// `body`, failing with DEADLINE_EXCEEDED unless it has ended within `limit`. A deadline on
    /// the whole body, not on each frame (tower-http's `TimeoutBody`), so that a client sending a
    /// byte now and then is cut off as well.
    pub(super) fn within(body: Body, limit: Duration) -> Body {
        Body::new(Deadline { body, limit, timer: Box::pin(tokio::time::sleep(limit)) })
    }

    struct Deadline {
        body: Body,
        limit: Duration,
        timer: Pin<Box<Sleep>>,
    }

    impl http_body::Body for Deadline {
        type Data = Bytes;
        type Error = axum::Error;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
            if let Poll::Ready(frame) = Pin::new(&mut self.body).poll_frame(cx) {
                return Poll::Ready(frame);
            }
            if self.timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let message = format!("the request message did not arrive within {} s", self.limit.as_secs_f32());
            Poll::Ready(Some(Err(axum::Error::new(tonic::Status::deadline_exceeded(message)))))
        }

        fn is_end_stream(&self) -> bool {
            self.body.is_end_stream()
        }

        fn size_hint(&self) -> SizeHint {
            self.body.size_hint()
        }
    }
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
