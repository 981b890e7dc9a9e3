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

use super::stall::{Owed, Stalls, PIECE};

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
    pub(super) fn for_longer_than(&self, timeout: Duration) -> impl Future<Output = ()> + Send + 'static + use<> {
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
            Ok(response.map(|body| {
                // What the body holds as far as it is known (a whole answer's size; an event
                // stream's events count as they come). Owed a poll until hyper first asks.
                let hint = hyper::body::Body::size_hint(&body);
                let size = usize::try_from(hint.exact().unwrap_or(hint.lower())).unwrap_or(usize::MAX);
                TrackedBody {
                    body,
                    rest: Bytes::new(),
                    unsent: size,
                    in_hyper: 0,
                    _in_flight: in_flight,
                    owed: stalls.owe(size),
                }
            }))
        })
    }
}

/// A response body that keeps its request counted until it is finished or dropped, hands hyper
/// its data in pieces of [`PIECE`] bytes at most, and tells [`Stalls`] when a piece is waiting on
/// the client and what it holds.
pub(super) struct TrackedBody {
    body: Body,
    /// What is left of the body's last data frame, handed to hyper piece by piece.
    rest: Bytes,
    /// Bytes of the body's known size not yet handed to hyper.
    unsent: usize,
    /// Bytes of the last piece hyper took, which it holds until it asks for more.
    in_hyper: usize,
    _in_flight: InFlight,
    owed: Owed,
}

impl TrackedBody {
    /// Hands hyper the next piece of `data`, keeping the rest; counts the piece as held.
    fn piece(&mut self, mut data: Bytes) -> Frame<Bytes> {
        if data.len() > PIECE {
            self.rest = data.split_off(PIECE);
        }
        let counted = data.len().min(self.unsent);
        self.unsent -= counted;
        self.owed.hold(data.len() - counted);
        self.in_hyper = data.len();
        Frame::data(data)
    }
}

impl hyper::body::Body for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        // hyper asks again: the client has made room for the last piece.
        this.owed.release(std::mem::take(&mut this.in_hyper));
        if !this.rest.is_empty() {
            let rest = std::mem::take(&mut this.rest);
            this.owed.start();
            return Poll::Ready(Some(Ok(this.piece(rest))));
        }
        match Pin::new(&mut this.body).poll_frame(cx) {
            // The body waits for data of its own (an event stream between events).
            Poll::Pending => {
                this.owed.stop();
                Poll::Pending
            }
            // hyper comes back for more, or drops the body, once the client has taken this.
            Poll::Ready(Some(Ok(frame))) => {
                this.owed.start();
                Poll::Ready(Some(Ok(match frame.into_data() {
                    Ok(data) => this.piece(data),
                    Err(frame) => frame,
                })))
            }
            ready => {
                this.owed.start();
                ready
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty() && self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let mut hint = self.body.size_hint();
        let rest = self.rest.len() as u64;
        hint.set_lower(hint.lower() + rest);
        if let Some(upper) = hint.upper() {
            hint.set_upper(upper + rest);
        }
        hint
    }
}
