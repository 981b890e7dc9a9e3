//! The gRPC binding: `lf.a2a.v1.A2AService` (v1.0) and `a2a.v1.A2AService` (v0.3) over the
//! [`RequestHandler`], with the gRPC health service and server reflection beside them, so that load balancers and `grpcurl` work
//! without a `.proto` at hand.
//!
//! The services sit behind the same tower layers as the JSON bindings (the HTTP router's steer
//! sends them every `application/grpc` request): authentication, version negotiation from the
//! `a2a-version` metadata and extensions from `a2a-extensions` are already done when an RPC runs,
//! and a refusal is reported as a gRPC status.

mod v03;
mod v1;

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;

use agentwire_proto::a2a_v1::a2a_service_server::A2aServiceServer as V03Server;
use agentwire_proto::lf_a2a_v1::a2a_service_server::A2aServiceServer as V1Server;
use agentwire_types::jsonrpc::ErrorInfo;
use agentwire_types::{A2AError, Dialect, StreamResponse};
use futures_util::{FutureExt, Stream, StreamExt};
use tonic::server::NamedService;
use tonic::service::Routes;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

use crate::{RequestContext, RequestHandler, TaskEventStream};

/// Seed 000 names the v1.0 service `OPVSService`; its RPCs are `A2AService`'s.
const OPVS_SERVICE: &str = "/lf.a2a.v1.OPVSService/";

const V1_SERVICE: &str = <V1Server<v1::V1> as NamedService>::NAME;

/// The events of a streaming RPC.
pub(crate) type EventStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// Every gRPC service of the server, routed by path, for the HTTP router's steer.
pub(crate) fn routes(handler: &RequestHandler) -> Routes {
    let limit = handler.limits().max_body_bytes;
    let v1 = V1Server::new(v1::V1 { handler: handler.clone() }).max_decoding_message_size(limit);
    let v03 = V03Server::new(v03::V03 { handler: handler.clone() }).max_decoding_message_size(limit);
    let (health, health_service) = tonic_health::server::health_reporter();
    for name in [V1_SERVICE, <V03Server<v03::V03> as NamedService>::NAME] {
        // The reporter was just made, so nothing else holds its lock and the update is ready at once.
        let registered = health.set_service_status(name, tonic_health::ServingStatus::Serving).now_or_never();
        debug_assert!(registered.is_some());
    }
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(agentwire_proto::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let mut routes = Routes::new(v1).add_service(v03).add_service(health_service);
    match (reflection().build_v1(), reflection().build_v1alpha()) {
        (Ok(v1), Ok(v1alpha)) => routes = routes.add_service(v1).add_service(v1alpha),
        (Err(error), _) | (_, Err(error)) => tracing::error!(%error, "gRPC reflection is not served"),
    }
    routes
}

/// Requests for seed 000's `OPVSService` go to `A2AService`.
pub(crate) fn alias_opvs_service<B>(mut request: http::Request<B>) -> http::Request<B> {
    if let Some(method) = request.uri().path().strip_prefix(OPVS_SERVICE) {
        let path = format!("/{V1_SERVICE}/{method}");
        let mut parts = request.uri().clone().into_parts();
        parts.path_and_query = path.parse().ok();
        if let Ok(uri) = http::Uri::from_parts(parts) {
            *request.uri_mut() = uri;
        }
    }
    request
}

/// What an RPC answers.
type Reply<T> = Result<tonic::Response<T>, Status>;

/// The canonical request of an RPC made in `dialect`, and its context, whose tenant is the one
/// `tenant` reads from the request.
fn accept<P, C>(
    request: tonic::Request<P>,
    tenant: impl Fn(&P) -> &str,
    dialect: Dialect,
) -> Result<(RequestContext, C), Status>
where
    C: TryFrom<P>,
    A2AError: From<C::Error>,
{
    let ctx = context(request.extensions(), tenant(request.get_ref()), dialect)?;
    let canonical = C::try_from(request.into_inner()).map_err(|error| status(error.into()))?;
    Ok((ctx, canonical))
}

/// The answer of an RPC, in the wire form `P`.
fn reply<C, P: From<C>>(result: agentwire_types::Result<C>) -> Reply<P> {
    result.map(|value| tonic::Response::new(P::from(value))).map_err(status)
}

/// The context of an RPC, from what the HTTP layers recorded; a refusal becomes its status.
fn context(extensions: &tonic::Extensions, tenant: &str, dialect: Dialect) -> Result<RequestContext, Status> {
    crate::http::request::context_from(extensions, tenant, dialect).map_err(status)
}

/// An error as a gRPC status (seed 000 §5.4), with a `google.rpc.ErrorInfo` in its details for
/// A2A's own errors.
pub(crate) fn status(error: A2AError) -> Status {
    let code = Code::from_i32(error.kind().rpc_code() as i32);
    match ErrorInfo::of(&error) {
        Some(info) => {
            let metadata: HashMap<String, String> = info.metadata.into_iter().collect();
            let details = ErrorDetails::with_error_info(info.reason, info.domain, metadata);
            Status::with_error_details(code, error.message(), details)
        }
        None => Status::new(code, error.message()),
    }
}

/// A task's events in a binding's form; an error ends the stream with its status.
fn events<T: Send + 'static>(events: TaskEventStream, encode: fn(StreamResponse) -> T) -> EventStream<T> {
    Box::pin(events.map(move |item| match item {
        Ok(item) => Ok(encode(Arc::unwrap_or_clone(item.response))),
        Err(error) => Err(status(error)),
    }))
}
