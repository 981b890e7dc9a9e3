//! `floor`: the fastest a server can answer the benchmark's requests on this HTTP stack (axum on
//! hyper, served by `agentwire_server::serve` as agentwire is). Bodies are read but never parsed,
//! and every answer is a canned copy of agentwire's echo reply, so the gap between this and a real
//! server is the cost of doing A2A.

mod canned;

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use clap::Parser;
use futures_util::StreamExt as _;

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
    // agentwire's own listener (TCP_NODELAY, HTTP/1.1 and HTTP/2), so that the floor differs from
    // agentwire only in the A2A work.
    let options = agentwire_server::ServeOptions { drain: Duration::ZERO, ..Default::default() };
    agentwire_server::serve(listener, app(), std::future::pending(), options).await
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
        if memchr::memmem::find(&body, b"tck-cancel").is_some() {
            // The idle-stream scenario: the first event, then the stream stays open.
            return held_sse(&canned::JSONRPC_EVENTS[..1]);
        }
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
    sse_body(Body::from_stream(chunks(events)))
}

/// The events, then nothing until the client goes: the least an open stream can cost on this stack.
fn held_sse(events: &'static [&'static str]) -> Response {
    sse_body(Body::from_stream(chunks(events).chain(futures_util::stream::pending())))
}

fn chunks(
    events: &'static [&'static str],
) -> impl futures_util::Stream<Item = Result<Bytes, std::convert::Infallible>> {
    futures_util::stream::iter(events.iter().map(|event| Ok(Bytes::from_static(event.as_bytes()))))
}

fn sse_body(body: Body) -> Response {
    let headers = [(CONTENT_TYPE, "text/event-stream"), (CACHE_CONTROL, "no-cache")];
    (headers, body).into_response()
}
