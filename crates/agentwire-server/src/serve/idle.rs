//! Knowing when a connection has had no request in flight for a while.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use hyper::body::Incoming;
use hyper::body::{Frame, SizeHint};
use tokio::sync::watch;

use super::stall::{Owed, Stalls};

/// The number of requests in flight on one connection; a request counts until its response body
/// is finished or dropped, so an open event stream keeps its connection busy.
#[derive(Clone)]
pub(super) struct Idle(watch::Sender<usize>);

impl Default for Idle {
    fn default() -> Self {
        Self(watch::Sender::new(0))
    }
}

impl Idle {
    fn begin(&self) -> InFlight {
        self.0.send_modify(|n| *n += 1);
        InFlight(self.0.clone())
    }

    /// Completes once the connection has had nothing in flight for `timeout` at a stretch.
    pub(super) fn for_longer_than(&self, timeout: Duration) -> impl Future<Output = ()> + Send + 'static {
        let mut requests = self.0.subscribe();
        async move {
            loop {
                if requests.wait_for(|n| *n == 0).await.is_err() {
                    return std::future::pending().await;
                }
                if tokio::time::timeout(timeout, requests.wait_for(|n| *n > 0)).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// One request in flight, until dropped.
struct InFlight(watch::Sender<usize>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

/// A connection's service, counting its requests in flight.
#[derive(Clone)]
pub(super) struct Tracked<S> {
    inner: S,
    idle: Idle,
    stalls: std::sync::Arc<Stalls>,
}

impl<S> Tracked<S> {
    pub(super) fn new(inner: S, idle: &Idle, stalls: &std::sync::Arc<Stalls>) -> Self {
        Self { inner, idle: idle.clone(), stalls: std::sync::Arc::clone(stalls) }
    }
}

impl<S> hyper::service::Service<http::Request<Incoming>> for Tracked<S>
where
    S: hyper::service::Service<http::Request<Incoming>, Response = http::Response<Body>>,
    S::Future: Send + 'static,
{
    type Response = http::Response<TrackedBody>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn call(&self, request: http::Request<Incoming>) -> Self::Future {
        let in_flight = self.idle.begin();
        let response = self.inner.call(request);
        let stalls = std::sync::Arc::clone(&self.stalls);
        Box::pin(async move {
            let response = response.await?;
            // Owed a poll until hyper first asks for data.
            Ok(response.map(|body| TrackedBody { body, _in_flight: in_flight, owed: stalls.owe() }))
        })
    }
}

/// A response body that keeps its request counted until it is finished or dropped, and tells
/// [`Stalls`] when what it gave is waiting on the client.
pub(super) struct TrackedBody {
    body: Body,
    _in_flight: InFlight,
    owed: Owed,
}

impl hyper::body::Body for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        let frame = Pin::new(&mut this.body).poll_frame(cx);
        if frame.is_pending() {
            // The body waits for data of its own (an event stream between events).
            this.owed.stop();
        } else {
            // hyper comes back for the rest, or drops the body, once the client has taken this.
            this.owed.start();
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
