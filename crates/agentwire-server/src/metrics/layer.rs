//! The operation layer that counts and times operations, and keeps count of open event streams.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use agentwire_types::{A2AError, A2aRequest, A2aResponse, StreamItem, TaskEventStream};
use futures_util::future::BoxFuture;
use futures_util::Stream;
use tokio::time::Instant;
use tower::{Layer, Service};

use super::{GaugeGuard, Instruments, Metrics, OperationLabel, Route};
use crate::RequestContext;

/// Counts and times every operation of the service it wraps, and keeps count of the event
/// streams open. Made by [`Metrics::layer`].
#[derive(Clone, Debug)]
pub struct MetricsLayer {
    metrics: Metrics,
}

impl MetricsLayer {
    pub(super) fn new(metrics: Metrics) -> Self {
        Self { metrics }
    }
}

impl<S> Layer<S> for MetricsLayer {
    type Service = MetricsService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        MetricsService { inner, instruments: Arc::clone(&self.metrics.instruments) }
    }
}

/// An operation service measured by a [`MetricsLayer`].
#[derive(Clone)]
pub struct MetricsService<S> {
    inner: S,
    instruments: Arc<Instruments>,
}

impl<S> std::fmt::Debug for MetricsService<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetricsService").finish_non_exhaustive()
    }
}

impl<S> Service<(RequestContext, A2aRequest)> for MetricsService<S>
where
    S: Service<(RequestContext, A2aRequest), Response = A2aResponse, Error = A2AError>,
    S::Future: Send + 'static,
{
    type Response = A2aResponse;
    type Error = A2AError;
    type Future = BoxFuture<'static, Result<A2aResponse, A2AError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), A2AError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, (ctx, request): (RequestContext, A2aRequest)) -> Self::Future {
        let operation = request.operation().name();
        let route = Route::of(operation, &ctx);
        let started = Instant::now();
        let instruments = Arc::clone(&self.instruments);
        let answer = self.inner.call((ctx, request));
        Box::pin(async move {
            let answer = answer.await;
            instruments.served(route, started.elapsed(), answer.as_ref().err());
            match answer {
                Ok(A2aResponse::Stream(events)) => {
                    let open =
                        GaugeGuard::raise(&instruments.open_streams.get_or_create(&OperationLabel { operation }));
                    Ok(A2aResponse::Stream(Box::pin(Counted { events, _open: open })))
                }
                other => other,
            }
        })
    }
}

/// An event stream counted among the open ones until it is dropped.
struct Counted {
    events: TaskEventStream,
    _open: GaugeGuard,
}

impl Stream for Counted {
    type Item = agentwire_types::Result<StreamItem>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.events.as_mut().poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.events.size_hint()
    }
}
