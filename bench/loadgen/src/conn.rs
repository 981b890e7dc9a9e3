//! One keep-alive connection to the server: HTTP/1.1, or HTTP/2 for gRPC.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::{http1, http2};
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpStream;

/// Sends requests over the connection.
pub(crate) enum Sender {
    Http1(http1::SendRequest<Full<Bytes>>),
    Http2(http2::SendRequest<Full<Bytes>>),
}

/// Reads and writes the socket; must be polled for `Sender` to make progress.
pub(crate) type Driver = Pin<Box<dyn Future<Output = hyper::Result<()>>>>;

impl Sender {
    /// Resolves when the connection can take the next request.
    pub(crate) async fn ready(&mut self) -> hyper::Result<()> {
        match self {
            Self::Http1(sender) => sender.ready().await,
            Self::Http2(sender) => sender.ready().await,
        }
    }

    pub(crate) async fn send_request(&mut self, request: Request<Full<Bytes>>) -> hyper::Result<Response<Incoming>> {
        match self {
            Self::Http1(sender) => sender.send_request(request).await,
            Self::Http2(sender) => sender.send_request(request).await,
        }
    }
}

/// Opens a connection with Nagle off, so each request leaves as soon as it is written.
pub(crate) async fn open(addr: SocketAddr, http2: bool) -> anyhow::Result<(Sender, Driver)> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let io = TokioIo::new(stream);
    Ok(if http2 {
        let (sender, driver) = http2::handshake(TokioExecutor::new(), io).await?;
        (Sender::Http2(sender), Box::pin(driver))
    } else {
        let (sender, driver) = http1::handshake(io).await?;
        (Sender::Http1(sender), Box::pin(driver))
    })
}
