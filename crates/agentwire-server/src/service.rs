//! The operation service: what every binding calls, one A2A operation at a time.

use agentwire_types::{A2AError, A2aRequest, A2aResponse, AgentCard, ErrorKind, GetExtendedAgentCardRequest};
use tower::util::BoxCloneSyncService;
use tower::{Service, ServiceExt};

use crate::RequestContext;

/// A service that runs A2A operations: a [`RequestHandler`](crate::RequestHandler), a tower
/// layer around one, a remote agent, a test double. [`router`](crate::router) serves any of
/// them on every binding and protocol generation.
///
/// Implemented for every `tower::Service<(RequestContext, A2aRequest)>` that answers with an
/// [`A2aResponse`] or an [`A2AError`] and can be cloned and shared across threads.
///
/// ```
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::{router, OperationService, RequestHandler};
///
/// fn serve_it(service: impl OperationService) -> axum::Router {
///     router(service)
/// }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let app = serve_it(RequestHandler::builder(EchoAgent).build());
/// # drop(app);
/// # });
/// ```
pub trait OperationService:
    Service<(RequestContext, A2aRequest), Response = A2aResponse, Error = A2AError, Future: Send + 'static>
    + Clone
    + Send
    + Sync
    + 'static
{
}

impl<S> OperationService for S where
    S: Service<(RequestContext, A2aRequest), Response = A2aResponse, Error = A2AError, Future: Send + 'static>
        + Clone
        + Send
        + Sync
        + 'static
{
}

/// An operation service as the bindings hold it.
pub(crate) type Operations = BoxCloneSyncService<(RequestContext, A2aRequest), A2aResponse, A2AError>;

/// Runs `request` on `service` and takes the answer's payload out: an answer of another kind is
/// an internal error.
pub(crate) async fn call<T>(service: &Operations, ctx: RequestContext, request: A2aRequest) -> Result<T, A2AError>
where
    T: TryFrom<A2aResponse, Error = A2AError>,
{
    service.clone().oneshot((ctx, request)).await?.try_into()
}

/// v0.3's card call (`GET /v1/card`, gRPC `GetAgentCard`): the authenticated extended card, or
/// the public one where the agent has no other.
pub(crate) async fn v03_card(service: &Operations, ctx: RequestContext) -> Result<AgentCard, A2AError> {
    let extended = A2aRequest::GetExtendedAgentCard(GetExtendedAgentCardRequest::default());
    match call(service, ctx.clone(), extended).await {
        Err(error) if error.kind() == ErrorKind::UnsupportedOperation => {
            call(service, ctx, A2aRequest::GetAgentCard).await
        }
        card => card,
    }
}
