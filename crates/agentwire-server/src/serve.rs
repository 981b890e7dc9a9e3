//! Running the router on a listener: HTTP/1.1 and HTTP/2 (prior knowledge) on one port,
//! TCP_NODELAY on every connection, graceful shutdown.
//!
//! The accept loop is ours rather than `axum::serve` for memory: its protocol detection wraps
//! every connection in a rewinding reader, which costs an idle HTTP/1.1 stream about 6 KiB more
//! than hyper's own HTTP/1.1 connection (17.4 against 11.2 KiB per idle SSE stream on a bare
//! handler; docs/BENCHMARKS.md). Here the first bytes are peeked instead, and each connection gets
//! the plain HTTP/1.1 or HTTP/2 connection it needs.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::time::Duration;

use axum::response::Response;
use http::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tower::Service;

/// Serves `app` on `listener` until `shutdown` completes, then lets in-flight requests finish for
/// up to `drain` (open event streams would otherwise hold shutdown forever).
///
/// `app` is an A2A [`service`](crate::service), or any tower service of requests to responses,
/// such as an axum `Router` (call its `with_state(())` first, so that it finishes its routes once
/// instead of on every request).
///
/// ```no_run
/// use std::time::Duration;
/// use agentwire_server::{agent::EchoAgent, serve, service, RequestHandler};
///
/// # async fn run() -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let app = service(RequestHandler::builder(EchoAgent).build());
/// serve(listener, app, async { let _ = tokio::signal::ctrl_c().await; }, Duration::from_secs(10)).await
/// # }
/// ```
pub async fn serve<S, F>(listener: TcpListener, app: S, shutdown: F, drain: Duration) -> io::Result<()>
where
    S: Service<Request<Incoming>, Response = Response, Error = Infallible> + Clone + Send + Sync + 'static,
    S::Future: Send + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(error) => {
                    pause_after_accept_error(error).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Without TCP_NODELAY, small SSE writes wait on delayed ACKs (about 40 ms each).
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
        tokio::spawn(serve_connection(tcp, TowerToHyperService::new(app.clone()), graceful.watcher()));
    }
    drop(listener);
    if tokio::time::timeout(drain, graceful.shutdown()).await.is_err() {
        tracing::warn!("connections still open after {drain:?}; closing them");
    }
    Ok(())
}

/// Which protocol a connection speaks, from its first bytes.
#[derive(Debug, PartialEq)]
enum Protocol {
    Http1,
    /// HTTP/2 with prior knowledge: the connection preface starts with `PRI `.
    Http2,
    /// Too few bytes to tell yet; hyper's own detection reads on until it can.
    Undecided,
}

fn protocol_of(head: &[u8]) -> Protocol {
    const PREFACE: &[u8] = b"PRI ";
    let seen = &PREFACE[..head.len().min(PREFACE.len())];
    match head {
        _ if head.len() < PREFACE.len() && head == seen => Protocol::Undecided,
        _ if head.starts_with(PREFACE) => Protocol::Http2,
        _ => Protocol::Http1,
    }
}

async fn serve_connection<S>(tcp: TcpStream, service: TowerToHyperService<S>, watcher: Watcher)
where
    S: Service<Request<Incoming>, Response = Response, Error = Infallible> + Clone + Send + Sync + 'static,
    S::Future: Send + 'static,
{
    let mut head = [0u8; 4];
    let protocol = match tcp.peek(&mut head).await {
        Ok(n) => protocol_of(&head[..n]),
        Err(_) => Protocol::Undecided,
    };
    let io = TokioIo::new(tcp);
    // HTTP/2 and undecided connections are boxed: inline, their larger state would be reserved in
    // every HTTP/1.1 connection's task too.
    let result: Result<(), Box<dyn std::error::Error + Send + Sync>> = match protocol {
        Protocol::Http1 => {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new());
            watcher.watch(builder.serve_connection(io, service)).await.map_err(Into::into)
        }
        Protocol::Http2 => {
            let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
            builder.timer(TokioTimer::new());
            Box::pin(watcher.watch(builder.serve_connection(io, service))).await.map_err(Into::into)
        }
        Protocol::Undecided => {
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            Box::pin(watcher.watch(builder.serve_connection(io, service))).await
        }
    };
    if let Err(error) = result {
        tracing::trace!(%error, "connection ended with an error");
    }
}

/// Connection-level failures affect one client only; anything else (such as running out of file
/// descriptors) is logged and retried after a pause rather than in a busy loop.
async fn pause_after_accept_error(error: io::Error) {
    use io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(error.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        return;
    }
    tracing::error!(%error, "accept failed; retrying in a second");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_bytes_choose_the_protocol() {
        assert_eq!(protocol_of(b"POST"), Protocol::Http1);
        assert_eq!(protocol_of(b"GET "), Protocol::Http1);
        assert_eq!(protocol_of(b"PRI "), Protocol::Http2);
        assert_eq!(protocol_of(b"PR"), Protocol::Undecided);
        assert_eq!(protocol_of(b""), Protocol::Undecided);
        assert_eq!(protocol_of(b"PO"), Protocol::Http1);
    }
}
