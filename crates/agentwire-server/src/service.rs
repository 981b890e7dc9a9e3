//! The operation service: what every binding calls, one A2A operation at a time.

use agentwire_types::{A2AError, A2aRequest, A2aResponse, AgentCard, ErrorKind, GetExtendedAgentCardRequest};
use futures_util::future::{BoxFuture, FutureExt};
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

/// Hands `request` to `service` at once: the future returned holds the call, not the request,
/// so a binding's own future stays small. A service that is not ready at once is called once it
/// is.
pub(crate) fn start(
    service: &Operations,
    ctx: RequestContext,
    request: A2aRequest,
) -> BoxFuture<'static, Result<A2aResponse, A2AError>> {
    let mut service = service.clone();
    match service.ready().now_or_never() {
        Some(Ok(ready)) => ready.call((ctx, request)),
        Some(Err(error)) => Box::pin(std::future::ready(Err(error))),
        None => Box::pin(service.oneshot((ctx, request))),
    }
}

/// Runs `request` on `service` and takes the answer's payload out: an answer of another kind is
/// an internal error.
pub(crate) async fn call<T>(service: &Operations, ctx: RequestContext, request: A2aRequest) -> Result<T, A2AError>
where
    T: TryFrom<A2aResponse, Error = A2AError>,
{
    start(service, ctx, request).await?.try_into()
}

/// A card call (`GetExtendedAgentCard`, v0.3's `GET /v1/card` and gRPC `GetAgentCard`): the
/// extended card, or, where the request's generation says so, the public card when the agent has
/// no extended one.
pub(crate) async fn card_call(
    service: &Operations,
    ctx: RequestContext,
    request: GetExtendedAgentCardRequest,
) -> Result<AgentCard, A2AError> {
    let falls_back = ctx.dialect.profile().card_call_falls_back_to_public();
    let fallback = falls_back.then(|| ctx.clone());
    match (call(service, ctx, A2aRequest::GetExtendedAgentCard(request)).await, fallback) {
        (Err(error), Some(ctx))
            if matches!(error.kind(), ErrorKind::UnsupportedOperation | ErrorKind::ExtendedAgentCardNotConfigured) =>
        {
            call(service, ctx, A2aRequest::GetAgentCard).await
        }
        (card, _) => card,
    }
}
