//! One keep-alive HTTP/1.1 connection to the server.

use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Sends requests over the connection.
pub(crate) type Sender = http1::SendRequest<Full<Bytes>>;

/// Reads and writes the socket; must be polled for `Sender` to make progress.
pub(crate) type Driver = http1::Connection<TokioIo<TcpStream>, Full<Bytes>>;

/// Opens a connection with Nagle off, so each request leaves as soon as it is written.
pub(crate) async fn open(addr: SocketAddr) -> anyhow::Result<(Sender, Driver)> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    Ok(http1::handshake(TokioIo::new(stream)).await?)
}
