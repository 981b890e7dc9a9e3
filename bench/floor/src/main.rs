//! `floor`: the fastest a server can answer the benchmark's requests on this HTTP stack (axum on
//! hyper, TCP_NODELAY on, as agentwire). Bodies are read but never parsed, and every answer is a
//! canned copy of agentwire's echo reply, so the gap between this and a real server is the cost
//! of doing A2A.

mod canned;

use std::net::SocketAddr;

use axum::body::{Body, Bytes};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::serve::ListenerExt as _;
use axum::Router;
use clap::Parser;

/// Serves canned A2A answers on loopback.
#[derive(Debug, Parser)]
#[command(name = "floor", about)]
struct Opt {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8090")]
    addr: SocketAddr,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let opt = Opt::parse();
    let listener = tokio::net::TcpListener::bind(opt.addr).await?;
    let listener = listener.tap_io(|tcp| {
        // Small responses must not wait for the peer's delayed ACK.
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app()).await
}

fn app() -> Router {
    Router::new()
        .route("/", post(jsonrpc))
        .route("/message:send", post(|| async { json(canned::REST_TASK) }))
        .route("/message:stream", post(|| async { sse(&canned::REST_EVENTS) }))
}

/// One route serves both JSON-RPC methods, so a byte search (not a parse) tells them apart.
async fn jsonrpc(body: Bytes) -> Response {
    if memchr::memmem::find(&body, b"SendStreamingMessage").is_some() {
        sse(&canned::JSONRPC_EVENTS)
    } else {
        json(canned::JSONRPC_TASK)
    }
}

fn json(body: &'static str) -> Response {
    ([(CONTENT_TYPE, "application/json")], body).into_response()
}

/// The events go out one chunk each, as a real stream would send them.
fn sse(events: &'static [&'static str]) -> Response {
    let chunks = events.iter().map(|event| Ok::<_, std::convert::Infallible>(Bytes::from_static(event.as_bytes())));
    let headers = [(CONTENT_TYPE, "text/event-stream"), (CACHE_CONTROL, "no-cache")];
    (headers, Body::from_stream(futures_util::stream::iter(chunks))).into_response()
}
