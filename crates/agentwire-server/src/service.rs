//! The operation service: what every binding calls, one A2A operation at a time.

use std::future::Future;
use std::task::{Context, Poll};

use agentwire_types::{A2AError, A2aRequest, A2aResponse, AgentCard, ErrorKind, GetExtendedAgentCardRequest};
use futures_util::future::{BoxFuture, FutureExt};
use futures_util::StreamExt as _;
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

/// What an operation layer decides before the service behind it runs a call: to refuse it, or to
/// let it through, with its context (a principal, say) and something held for as long as the
/// answer's stream is open (a quota's permit). [`Admitted`] is the service it makes.
///
/// ```
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::{Admission, Admitted, RequestContext, RequestHandler};
/// use agentwire_types::{A2AError, A2aRequest, ErrorKind, ListTasksRequest};
/// use tower::ServiceExt;
///
/// /// Nobody lists tasks.
/// #[derive(Clone)]
/// struct NoListing;
///
/// impl Admission for NoListing {
///     type Held = ();
///
///     async fn admit(&self, ctx: RequestContext, request: &A2aRequest) -> Result<(RequestContext, Option<()>), A2AError> {
///         match request {
///             A2aRequest::ListTasks(_) => Err(A2AError::permission_denied("no listing here")),
///             _ => Ok((ctx, None)),
///         }
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let service = Admitted::new(RequestHandler::builder(EchoAgent).build(), NoListing);
/// let list = A2aRequest::ListTasks(ListTasksRequest::default());
/// let refused = service.oneshot((RequestContext::default(), list)).await.unwrap_err();
/// assert_eq!(refused.kind(), ErrorKind::PermissionDenied);
/// # });
/// ```
pub trait Admission: Clone + Send + Sync + 'static {
    /// What an admitted call holds while its stream is open.
    type Held: Send + 'static;

    /// Whether `request` needs a decision at all: those that do not go straight through.
    fn concerns(&self, _request: &A2aRequest) -> bool {
        true
    }

    /// The refusal, or the call's context to go on with and what it holds.
    fn admit(
        &self,
        ctx: RequestContext,
        request: &A2aRequest,
    ) -> impl Future<Output = Result<(RequestContext, Option<Self::Held>), A2AError>> + Send;
}

/// An operation service behind an [`Admission`]: what the admission lets through, the service
/// runs.
#[derive(Clone)]
pub struct Admitted<S, A> {
    inner: S,
    admission: A,
}

impl<S, A> Admitted<S, A> {
    /// `inner`, behind `admission`.
    pub fn new(inner: S, admission: A) -> Self {
        Self { inner, admission }
    }
}

impl<S, A> std::fmt::Debug for Admitted<S, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admitted").field("admission", &std::any::type_name::<A>()).finish_non_exhaustive()
    }
}

impl<S, A> Service<(RequestContext, A2aRequest)> for Admitted<S, A>
where
    S: Service<(RequestContext, A2aRequest), Response = A2aResponse, Error = A2AError> + Clone + Send + 'static,
    S::Future: Send,
    A: Admission,
{
    type Response = A2aResponse;
    type Error = A2AError;
    type Future = BoxFuture<'static, Result<A2aResponse, A2AError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), A2AError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, (ctx, request): (RequestContext, A2aRequest)) -> Self::Future {
        if !self.admission.concerns(&request) {
            return Box::pin(self.inner.call((ctx, request)));
        }
        // The service that was made ready runs the call; its clone waits for the next one.
        let ready = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, ready);
        let admission = self.admission.clone();
        Box::pin(async move {
            let (ctx, held) = admission.admit(ctx, &request).await?;
            match (inner.call((ctx, request)).await?, held) {
                // The stream holds what was admitted with it, and lets it go when it ends.
                (A2aResponse::Stream(events), Some(held)) => {
                    Ok(A2aResponse::Stream(Box::pin(events.inspect(move |_| {
                        let _held = &held;
                    }))))
                }
                (response, _) => Ok(response),
            }
        })
    }
}

/// An operation service, boxed: as the bindings hold it, and as an [`App`](crate::App) hands it
/// out.
pub type Operations = BoxCloneSyncService<(RequestContext, A2aRequest), A2aResponse, A2AError>;

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
