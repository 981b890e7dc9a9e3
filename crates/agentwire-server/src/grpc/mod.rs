//! The gRPC binding: `lf.a2a.v1.A2AService` (v1.0) and `a2a.v1.A2AService` (v0.3) over the
//! operation service, with the gRPC health service and server reflection beside them, so that load balancers and `grpcurl` work
//! without a `.proto` at hand.
//!
//! The services sit behind the same tower layers as the JSON bindings (the HTTP router's steer
//! sends them every `application/grpc` request): version negotiation from the `a2a-version`
//! metadata and extensions from `a2a-extensions` are already done when an RPC runs. Each RPC
//! calls the operation service with the request's metadata in its context, and reports an error
//! (a refusal among them) as a gRPC status.

mod health;
mod v03;
mod v1;

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;

use agentwire_proto::a2a_v1::a2a_service_server::A2aServiceServer as V03Server;
use agentwire_proto::lf_a2a_v1::a2a_service_server::A2aServiceServer as V1Server;
use agentwire_types::jsonrpc::ErrorInfo;
use agentwire_types::{A2AError, A2aRequest, A2aResponse, Binding, Dialect, StreamResponse};
use futures_util::{Stream, StreamExt};
use tonic::server::NamedService;
use tonic::service::Routes;
use tonic::{Code, Status};
use tonic_health::pb::health_server::HealthServer;
use tonic_types::{ErrorDetails, StatusExt};

use crate::health::Readiness;
use crate::service::{call, Operations};
use crate::{RequestContext, TaskEventStream};

/// Seed 000 names the v1.0 service `OPVSService`; its RPCs are `A2AService`'s.
const OPVS_SERVICE: &str = "/lf.a2a.v1.OPVSService/";

const V1_SERVICE: &str = <V1Server<v1::V1> as NamedService>::NAME;

/// The events of a streaming RPC.
pub(crate) type EventStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// Every gRPC service of the server, routed by path, for the HTTP router's steer.
pub(crate) fn routes(operations: &Operations, max_message_bytes: usize, readiness: &Readiness) -> Routes {
    let v1 = V1Server::new(v1::V1 { operations: operations.clone() }).max_decoding_message_size(max_message_bytes);
    let v03 = V03Server::new(v03::V03 { operations: operations.clone() }).max_decoding_message_size(max_message_bytes);
    let services = [V1_SERVICE, <V03Server<v03::V03> as NamedService>::NAME];
    let health_service = HealthServer::new(health::ReadinessHealth::new(readiness.clone(), services));
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
    let (metadata, mut extensions, message) = request.into_parts();
    let ctx = context(&mut extensions, metadata, tenant(&message), dialect)?;
    let canonical = C::try_from(message).map_err(|error| status(error.into()))?;
    Ok((ctx, canonical))
}

/// The context of an RPC, from its metadata and what the HTTP layers recorded.
fn context(
    extensions: &mut tonic::Extensions,
    metadata: tonic::metadata::MetadataMap,
    tenant: &str,
    dialect: Dialect,
) -> Result<RequestContext, Status> {
    crate::layers::context_from(extensions, metadata.into_headers(), tenant, dialect, Binding::Grpc).map_err(status)
}

/// Runs `request` and answers with its result in the wire form `P`.
async fn unary<T, P>(operations: &Operations, ctx: RequestContext, request: A2aRequest) -> Reply<P>
where
    T: TryFrom<A2aResponse, Error = A2AError>,
    P: From<T>,
{
    call::<T>(operations, ctx, request).await.map(|value| tonic::Response::new(P::from(value))).map_err(status)
}

/// Runs a streaming `request` and answers with its events, each in the wire form `T`.
async fn streaming<T: Send + 'static>(
    operations: &Operations,
    ctx: RequestContext,
    request: A2aRequest,
    encode: fn(StreamResponse) -> T,
) -> Reply<EventStream<T>> {
    let stream: TaskEventStream = call(operations, ctx, request).await.map_err(status)?;
    Ok(tonic::Response::new(events(stream, encode)))
}

/// An error as a gRPC status (seed 000 §5.4), with a `google.rpc.ErrorInfo` in its details for
/// A2A's own errors and a `google.rpc.RetryInfo` for a refusal that passes, and a refusal's
/// challenge as `www-authenticate` metadata.
pub(crate) fn status(error: A2AError) -> Status {
    let code = Code::from_i32(error.kind().rpc_code() as i32);
    let mut details = ErrorDetails::new();
    let info = ErrorInfo::of(&error);
    let has_details = info.is_some() || error.retry_after().is_some();
    if let Some(info) = info {
        let metadata: HashMap<String, String> = info.metadata.into_iter().collect();
        details.set_error_info(info.reason, info.domain, metadata);
    }
    if let Some(wait) = error.retry_after() {
        details.set_retry_info(Some(wait));
    }
    let mut status = if has_details {
        Status::with_error_details(code, error.message(), details)
    } else {
        Status::new(code, error.message())
    };
    if let Some(challenge) = error.challenge().and_then(|c| c.parse().ok()) {
        status.metadata_mut().insert("www-authenticate", challenge);
    }
    status
}

/// A task's events in a binding's form; an error ends the stream with its status.
fn events<T: Send + 'static>(events: TaskEventStream, encode: fn(StreamResponse) -> T) -> EventStream<T> {
    Box::pin(events.map(move |item| match item {
        Ok(item) => Ok(encode(Arc::unwrap_or_clone(item.response))),
        Err(error) => Err(status(error)),
    }))
}
