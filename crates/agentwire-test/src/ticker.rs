//! An agent whose stream a test can cut mid-way: numbered chunks at a steady pace.

use std::time::Duration;

use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::{router_with, serve, HttpOptions, RequestHandler, ServeOptions};
use agentwire_types::{Artifact, Part};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::CuttingProxy;

/// How many chunks [`Ticker`] sends: "0" to "9".
pub const TICKS: usize = 10;

/// Sends [`TICKS`] numbered chunks of one artifact, 60 ms apart, then completes the task.
#[derive(Debug)]
pub struct Ticker;

impl AgentExecutor for Ticker {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        ctx.run(|_, updater| async move {
            updater.working().await?;
            for i in 0..TICKS {
                tokio::time::sleep(Duration::from_millis(60)).await;
                let chunk = Artifact::new("ticks", "ticks", vec![Part::text(i.to_string())]);
                updater.artifact_chunk(chunk, i > 0, i + 1 == TICKS).await?;
            }
            updater.complete().await
        })
    }
}

/// A [`Ticker`] behind a [`CuttingProxy`] whose address its card names, so that every call goes
/// through the proxy: the proxy, the server's task, and the base URL clients use.
pub async fn ticker_behind_a_proxy() -> (CuttingProxy, JoinHandle<std::io::Result<()>>, String) {
    let front = TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
    let back = TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
    let base = format!("http://{}", front.local_addr().expect("local address"));
    let proxy = CuttingProxy::start(front, back.local_addr().expect("local address"));
    let handler = RequestHandler::builder(Ticker).card_url(&base).build();
    let options = ServeOptions { drain: Duration::ZERO, ..ServeOptions::default() };
    let app = router_with(handler, HttpOptions::default());
    let server = tokio::spawn(serve(back, app, std::future::pending(), options));
    (proxy, server, base)
}
