//! The whole HTTP surface as one tower service, with a shortcut past the router for JSON-RPC
//! calls, the bulk of A2A traffic.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::response::Response;
use axum::routing::future::RouteFuture;
use axum::{BoxError, Router};
use futures_util::future::Either;
use http::{header, Method};
use tower::Service;

use super::{jsonrpc, refusal, router_and_state, AppState};
use crate::RequestHandler;

/// The A2A HTTP surface of `handler`, as [`router`](crate::router) serves it, but faster for
/// JSON-RPC calls: those skip the router's per-request work (cloning and boxing the route, its
/// layers and their futures), about a tenth of the instructions of a SendMessage. This is what
/// [`serve`](crate::serve) should be given; [`router`](crate::router) is for merging A2A into an
/// application of your own.
///
/// ```no_run
/// use std::time::Duration;
/// use agentwire_server::{agent::EchoAgent, serve, service, RequestHandler};
///
/// # async fn run() -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// let app = service(RequestHandler::builder(EchoAgent).build());
/// serve(listener, app, std::future::pending(), Duration::from_secs(10)).await
/// # }
/// ```
pub fn service(handler: RequestHandler) -> A2aService {
    let (router, state) = router_and_state(handler);
    // Finishing the routes once spares the router doing it on every request.
    A2aService { router: router.with_state(()), state }
}

/// The service [`service`] returns.
#[derive(Clone)]
pub struct A2aService {
    router: Router,
    state: AppState,
}

impl std::fmt::Debug for A2aService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aService").field("agent", &self.state.handler.agent_card().name).finish_non_exhaustive()
    }
}

type BoxedCall = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl<B> Service<http::Request<B>> for A2aService
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Either<BoxedCall, RouteFuture<Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // The router is always ready, and so is the shortcut.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        if !is_plain_jsonrpc_call(&request) {
            return Either::Right(self.router.call(request));
        }
        let state = self.state.clone();
        let request = request.map(Body::new);
        Either::Left(Box::pin(async move { Ok(call_jsonrpc(state, request).await) }))
    }
}

/// A JSON-RPC call without `Origin`: one that no CORS rule applies to, so the router's CORS layer
/// has nothing to add. (Calls from browsers take the router.)
fn is_plain_jsonrpc_call<B>(request: &http::Request<B>) -> bool {
    request.method() == Method::POST && request.uri().path() == "/" && !request.headers().contains_key(header::ORIGIN)
}

/// What the router does for a JSON-RPC call: authentication, if any, then the binding.
async fn call_jsonrpc(state: AppState, mut request: Request) -> Response {
    if let Some(auth) = &state.handler.core.auth {
        if let Some(refusal) = refusal(auth.as_ref(), &mut request) {
            return refusal;
        }
    }
    jsonrpc::handle(State(state), request).await
}
