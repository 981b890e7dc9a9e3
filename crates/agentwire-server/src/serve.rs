//! Running the router on a listener: TCP_NODELAY on every connection, graceful shutdown.

use std::future::Future;
use std::time::Duration;

use axum::serve::ListenerExt;
use axum::Router;
use tokio::net::TcpListener;

/// Serves `app` on `listener` until `shutdown` completes, then lets in-flight requests finish for
/// up to `drain` (open event streams would otherwise hold shutdown forever).
///
/// ```no_run
/// use std::time::Duration;
/// use agentwire_server::{agent::EchoAgent, router, serve, RequestHandler};
///
/// # async fn run() -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let app = router(RequestHandler::builder(EchoAgent).build());
/// serve(listener, app, async { let _ = tokio::signal::ctrl_c().await; }, Duration::from_secs(10)).await
/// # }
/// ```
pub async fn serve<F>(listener: TcpListener, app: Router, shutdown: F, drain: Duration) -> std::io::Result<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    // Without TCP_NODELAY, small SSE writes wait on delayed ACKs (about 40 ms each).
    let listener = listener.tap_io(|tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
    });
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    // `axum::serve` given a `Router` rebuilds its routes for every connection (3.4 KiB each, held
    // as long as the connection); a make-service shares one finished router.
    let app = app.with_state(()).into_make_service();
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        shutdown.await;
        let _ = stop_tx.send(());
    });
    let deadline = async move {
        if stop_rx.await.is_ok() {
            tokio::time::sleep(drain).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        result = server => result,
        () = deadline => {
            tracing::warn!("connections still open after {drain:?}; closing them");
            Ok(())
        }
    }
}
