//! A whole server: one router on its listeners, with the request handler behind it, stopped in
//! order.

use std::future::Future;
use std::io;
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::{serve, Metrics, RequestHandler, ServeOptions};

/// Runs a server's router ([`Routes`](crate::Routes), or any axum `Router`) on its listeners:
/// HTTP (with gRPC on the same port), a port of gRPC's own, and metrics on an address of their
/// own, all with the same [`ServeOptions`]. On the stop signal, the request handler is marked
/// draining (its readiness turns false), the listeners stop accepting, the requests and streams
/// under way get [`ServeOptions::drain`] to finish, and the handler's executions get what is
/// left of it ([`RequestHandler::shutdown`]).
///
/// ```no_run
/// use agentwire_server::{agent::EchoAgent, App, HttpOptions, RequestHandler, Server, ServeOptions};
///
/// # async fn run() -> std::io::Result<()> {
/// let handler = RequestHandler::builder(EchoAgent).build();
/// let router = App::new().spans().routes(handler.clone(), HttpOptions::default()).into_router();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// let stop = async { let _ = tokio::signal::ctrl_c().await; };
/// Server::builder(listener).handler(handler).options(ServeOptions::default()).serve(router, stop).await
/// # }
/// ```
#[derive(Debug)]
pub struct Server {
    http: TcpListener,
    grpc: Option<TcpListener>,
    metrics: Option<(TcpListener, Router)>,
    options: ServeOptions,
    handler: Option<RequestHandler>,
}

impl Server {
    /// A server of HTTP (and gRPC, which the router steers by content type) on `listener`.
    pub fn builder(listener: TcpListener) -> Self {
        Self { http: listener, grpc: None, metrics: None, options: ServeOptions::default(), handler: None }
    }

    /// Also serves the router on `listener`, for gRPC clients given a port of its own.
    pub fn grpc_listener(mut self, listener: TcpListener) -> Self {
        self.grpc = Some(listener);
        self
    }

    /// Serves `metrics` (`/metrics`) on `listener` rather than beside the agent, in the clear.
    pub fn metrics_listener(mut self, listener: TcpListener, metrics: &Metrics) -> Self {
        self.metrics = Some((listener, metrics.router()));
        self
    }

    /// How connections are run, on every listener.
    pub fn options(mut self, options: ServeOptions) -> Self {
        self.options = options;
        self
    }

    /// The request handler behind the router: drained when the stop begins, shut down once the
    /// connections are.
    pub fn handler(mut self, handler: RequestHandler) -> Self {
        self.handler = Some(handler);
        self
    }

    /// Serves `router` until `stop` completes, then stops in order (see [`Server`]).
    pub async fn serve(self, router: Router, stop: impl Future<Output = ()> + Send) -> io::Result<()> {
        let stopping = CancellationToken::new();
        // The listeners served beside stop with this future, however it ends (dropped too).
        let _stop_beside = stopping.clone().drop_guard();
        let beside = |listener: TcpListener, router: Router, options: ServeOptions| {
            tokio::spawn(serve(listener, router, stopping.clone().cancelled_owned(), options))
        };
        let metrics = self.metrics.map(|(listener, metrics)| {
            let options = ServeOptions { tls: None, ..self.options.clone() };
            beside(listener, metrics, options)
        });
        let grpc = self.grpc.map(|listener| beside(listener, router.clone(), self.options.clone()));
        let drain = self.options.drain;
        let signal = async {
            stop.await;
            if let Some(handler) = &self.handler {
                handler.drain();
            }
            stopping.cancel();
            Instant::now()
        };
        let http = serve(self.http, router, stopping.clone().cancelled_owned(), self.options);
        tokio::pin!(http);
        let (served, stopped_at) = tokio::select! {
            served = &mut http => (served, None),
            at = signal => (http.await, Some(at)),
        };
        stopping.cancel();
        for task in grpc.into_iter().chain(metrics) {
            task.await.map_err(io::Error::other)??;
        }
        served?;
        // One drain from the signal for connections and executions alike: what the connections
        // took is not given to the executions again.
        let left = drain.saturating_sub(stopped_at.map_or(Duration::ZERO, |at| at.elapsed()));
        if let Some(handler) = self.handler
            && tokio::time::timeout(left, handler.shutdown()).await.is_err()
        {
            tracing::warn!(
                "executions still running after {drain:?} are stopped; their tasks are marked FAILED when a server next opens the store"
            );
        }
        Ok(())
    }
}
