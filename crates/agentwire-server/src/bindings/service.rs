//! The whole HTTP surface as one tower service, with a shortcut past the router for the A2A calls
//! themselves (JSON-RPC and HTTP+JSON), the bulk of the traffic.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::{Bytes, HttpBody};
use axum::extract::State;
use axum::response::Response;
use axum::routing::future::RouteFuture;
use axum::{BoxError, Router};
use futures_util::future::Either;
use futures_util::FutureExt;
use http::header;
use tower::Service;

use super::{is_jsonrpc_call, jsonrpc, refusal, rest, router_and_state, AppState, PUBLIC_PATHS};
use crate::RequestHandler;

/// The A2A HTTP surface of `handler`, as [`router`](crate::router) serves it, but faster for
/// A2A calls: those skip the router's per-request work (cloning and boxing the route, its layers
/// and their futures), about a tenth of the instructions of a SendMessage. This is what
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
    A2aService { inner: Arc::new(Inner { router: router.with_state(()), state }) }
}

/// The service [`service`] returns.
///
/// One pointer, as small as a `Router`: every connection holds it more than once, and a few more
/// bytes pushed each connection's task into a larger allocation (0.24 KiB per idle stream).
#[derive(Clone)]
pub struct A2aService {
    inner: Arc<Inner>,
}

struct Inner {
    router: Router,
    state: AppState,
}

impl std::fmt::Debug for A2aService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let agent = &self.inner.state.handler.agent_card().name;
        f.debug_struct("A2aService").field("agent", &agent).finish_non_exhaustive()
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

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let Some(binding) = shortcut(&request) else {
            return Either::Right(self.inner.router.clone().call(request));
        };
        let state = &self.inner.state;
        if let Some(auth) = &state.handler.core.auth {
            if let Some(refusal) = refusal(auth.as_ref(), &mut request) {
                return Either::Left(Box::pin(std::future::ready(Ok(refusal))));
            }
        }
        // The binding's own future, boxed as it is: a wrapping `async` block would hold the
        // request twice over and be copied whole into its box.
        let state = State(state.clone());
        Either::Left(match binding {
            Binding::JsonRpc => Box::pin(jsonrpc::handle(state, request).map(Ok)),
            Binding::Rest => Box::pin(rest::handle(state, request).map(Ok)),
        })
    }
}

/// Which binding answers a request, for the requests the router would hand straight to one.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Binding {
    JsonRpc,
    Rest,
}

/// The binding for an A2A call without `Origin` (no CORS rule applies to it, so the router's CORS
/// layer has nothing to add; calls from browsers take the router): a `POST /` is JSON-RPC, and
/// anything off the router's own routes (`/` and the card) is the router's fallback, HTTP+JSON.
fn shortcut<B>(request: &http::Request<B>) -> Option<Binding> {
    if request.headers().contains_key(header::ORIGIN) {
        return None;
    }
    match request.uri().path() {
        _ if is_jsonrpc_call(request) => Some(Binding::JsonRpc),
        path if path == "/" || PUBLIC_PATHS.contains(&path) => None,
        _ => Some(Binding::Rest),
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use http::Method;

    use super::*;

    fn request(method: Method, path: &str, origin: bool) -> http::Request<()> {
        let builder = http::Request::builder().method(method).uri(path);
        let builder = if origin { builder.header(header::ORIGIN, "https://app.example") } else { builder };
        builder.body(()).unwrap()
    }

    #[test]
    fn a2a_calls_take_the_shortcut_and_the_rest_the_router() {
        let cases = [
            (Method::POST, "/", false, Some(Binding::JsonRpc)),
            (Method::POST, "/message:send", false, Some(Binding::Rest)),
            (Method::GET, "/tasks/t1", false, Some(Binding::Rest)),
            (Method::GET, "/tenant-a/tasks", false, Some(Binding::Rest)),
            (Method::POST, "/", true, None),
            (Method::POST, "/message:send", true, None),
            (Method::GET, "/", false, None),
            (Method::GET, "/.well-known/agent-card.json", false, None),
            (Method::POST, "/agentCard", false, None),
        ];
        for (method, path, origin, expected) in cases {
            assert_eq!(shortcut(&request(method.clone(), path, origin)), expected, "{method} {path} origin={origin}");
        }
    }

    /// The boxed future of an A2A call is copied whole when it is made, so its size is paid on
    /// every request. It was 3,024 bytes while the rarest operation and whole requests were held
    /// inline; these bounds leave some room and catch a return to that.
    #[tokio::test]
    async fn a2a_calls_box_small_futures() {
        let mut service = service(RequestHandler::builder(crate::agent::EchoAgent).build());
        for (path, bound) in [("/", 1024), ("/message:send", 1024)] {
            let request = http::Request::builder().method(Method::POST).uri(path).body(Body::empty()).unwrap();
            let Either::Left(call) = Service::call(&mut service, request) else { panic!("{path} took the router") };
            // Served by hyper, the body is an `Incoming`, not a `Body`: count the difference for the
            // request and for the read of its body.
            let body_difference =
                std::mem::size_of::<hyper::body::Incoming>().saturating_sub(std::mem::size_of::<Body>());
            let size = std::mem::size_of_val(&*call) + 2 * body_difference;
            assert!(size <= bound, "the future of POST {path} is {size} bytes (bound {bound})");
        }
    }
}
