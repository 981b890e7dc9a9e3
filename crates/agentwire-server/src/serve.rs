//! Serving a router on a listener: HTTP/1.1 and HTTP/2 on one port, in the clear (HTTP/2 with
//! prior knowledge) or over TLS (chosen by ALPN), with TCP_NODELAY, a cap on open connections, a
//! header-read timeout and a write timeout on every connection, and graceful shutdown.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use agentwire_types::Peer;
use axum::middleware::AddExtension;
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::Layer;

use self::idle::{Idle, Tracked};
use self::stall::{Stalls, WriteTimeout};
use crate::metrics::GaugeGuard;

mod hosts;
mod idle;
mod stall;

use self::hosts::HostCheck;
pub use self::hosts::ServedHosts;

/// A server certificate and key for [`ServeOptions::tls`], offering HTTP/2 and HTTP/1.1 by ALPN.
#[derive(Clone)]
pub struct TlsConfig(Arc<rustls::ServerConfig>);

impl TlsConfig {
    /// Reads a PEM certificate chain and a PEM private key (PKCS#8, PKCS#1 or SEC1).
    ///
    /// ```no_run
    /// use agentwire_server::TlsConfig;
    ///
    /// let tls = TlsConfig::from_pem_files("cert.pem".as_ref(), "key.pem".as_ref())?;
    /// # Ok::<_, std::io::Error>(())
    /// ```
    pub fn from_pem_files(cert: &Path, key: &Path) -> io::Result<Self> {
        Self::build(cert, key, None)
    }

    /// As [`from_pem_files`](Self::from_pem_files), and asks each client for a certificate
    /// issued by a CA of the PEM bundle `client_ca`: a client without one is served only when
    /// `required` is false, and one with a certificate the bundle does not vouch for is refused
    /// at the handshake. The certificate reaches authenticators as
    /// [`Peer::certificate`](agentwire_types::Peer::certificate), which
    /// [`CertificateAuth`](crate::auth::CertificateAuth) names a principal from.
    ///
    /// ```no_run
    /// use agentwire_server::TlsConfig;
    ///
    /// let tls = TlsConfig::verifying_clients("cert.pem".as_ref(), "key.pem".as_ref(), "clients-ca.pem".as_ref(), true)?;
    /// # Ok::<_, std::io::Error>(())
    /// ```
    pub fn verifying_clients(cert: &Path, key: &Path, client_ca: &Path, required: bool) -> io::Result<Self> {
        let mut roots = rustls::RootCertStore::empty();
        let cas = CertificateDer::pem_file_iter(client_ca)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| invalid_file("cannot read the client CA bundle", client_ca, &e))?;
        for ca in cas {
            roots.add(ca).map_err(|e| invalid_file("a certificate is not a usable CA in", client_ca, &e))?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
        let builder = if required { builder } else { builder.allow_unauthenticated() };
        let verifier = builder.build().map_err(|e| invalid_file("cannot verify clients with", client_ca, &e))?;
        Self::build(cert, key, Some(verifier))
    }

    fn build(
        cert: &Path,
        key: &Path,
        clients: Option<Arc<dyn rustls::server::danger::ClientCertVerifier>>,
    ) -> io::Result<Self> {
        let chain = CertificateDer::pem_file_iter(cert)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| invalid_file("cannot read the certificate chain", cert, &e))?;
        let key_der =
            PrivateKeyDer::from_pem_file(key).map_err(|e| invalid_file("cannot read the private key", key, &e))?;
        let builder = rustls::ServerConfig::builder();
        let builder = match clients {
            Some(verifier) => builder.with_client_cert_verifier(verifier),
            None => builder.with_no_client_auth(),
        };
        let config = builder
            .with_single_cert(chain, key_der)
            .map_err(|e| invalid_file("the certificate does not fit the key in", key, &e))?;
        Ok(Self::from(config))
    }
}

fn invalid_file(what: &str, path: &Path, error: &dyn std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("{what} {}: {error}", path.display()))
}

/// A rustls configuration of your own; its ALPN protocols are set to `h2` and `http/1.1`.
impl From<rustls::ServerConfig> for TlsConfig {
    fn from(mut config: rustls::ServerConfig) -> Self {
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Self(Arc::new(config))
    }
}

impl std::fmt::Debug for TlsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsConfig").finish_non_exhaustive()
    }
}

/// How [`serve`] runs connections.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Serve over TLS instead of in the clear.
    pub tls: Option<TlsConfig>,
    /// Most connections open at once; further clients wait in the listen backlog until one closes.
    pub max_connections: usize,
    /// How long a client may take to send a request's headers (and, first, to finish its TLS
    /// handshake or show which HTTP version it speaks) before its connection is closed. An
    /// HTTP/2 connection with no request in flight for this long is closed too.
    pub header_read_timeout: Duration,
    /// How long a write may wait for the client to take data before the connection is closed
    /// (on HTTP/2, also a response whose stream the client gives no window, whatever else the
    /// connection writes): a client that stops reading would otherwise keep its whole response
    /// in memory.
    pub write_timeout: Duration,
    /// Most bytes of responses one HTTP/2 connection may hold (its streams' answers not yet taken
    /// by the client); past it the connection is closed at once. A client that asks for more
    /// than it reads, on up to hundreds of streams, would otherwise hold that much memory for
    /// the write timeout.
    pub max_connection_response_bytes: usize,
    /// After the shutdown signal, how long in-flight requests and open streams may take to finish.
    pub drain: Duration,
    /// Where connections are counted: open, accepted, and closed before a request.
    pub metrics: Option<crate::Metrics>,
    /// The host names requests may name, or `None` for any. A server that authenticates nobody
    /// sets them, so that a web page whose name is pointed at its address (DNS rebinding)
    /// cannot use it: such requests are refused with 421.
    pub served_hosts: Option<ServedHosts>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            tls: None,
            max_connections: 16_384,
            header_read_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(30),
            max_connection_response_bytes: 128 * 1024 * 1024,
            drain: Duration::from_secs(10),
            metrics: None,
            served_hosts: None,
        }
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then lets in-flight requests finish for
/// up to [`ServeOptions::drain`] (open event streams would otherwise hold shutdown forever).
///
/// ```no_run
/// use agentwire_server::{agent::EchoAgent, router, serve, RequestHandler, ServeOptions};
///
/// # async fn run() -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// let app = router(RequestHandler::builder(EchoAgent).build());
/// let shutdown = async { let _ = tokio::signal::ctrl_c().await; };
/// serve(listener, app, shutdown, ServeOptions::default()).await
/// # }
/// ```
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send,
    options: ServeOptions,
) -> io::Result<()> {
    // Routes are finished once here, not on every request.
    let service = app.with_state(());
    let open = Arc::new(Semaphore::new(options.max_connections.max(1)));
    let connections = Arc::new(Connections {
        tls: options.tls.as_ref().map(|tls| TlsAcceptor::from(Arc::clone(&tls.0))),
        header_read_timeout: options.header_read_timeout,
        write_timeout: options.write_timeout,
        max_connection_response_bytes: options.max_connection_response_bytes,
        metrics: options.metrics.as_ref().map(|metrics| Arc::clone(&metrics.instruments)),
        served_hosts: options.served_hosts.clone(),
    });
    let (closing, running) = (CancellationToken::new(), TaskTracker::new());
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&open).acquire_owned() => permit.map_err(io::Error::other)?,
            () = &mut shutdown => break,
        };
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(error) => {
                    connections.refused("accept_error");
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
        let open = connections.metrics.as_ref().map(|metrics| {
            metrics.connections.inc();
            GaugeGuard::raise(&metrics.connections_open)
        });
        let (connections, service, closing) = (Arc::clone(&connections), service.clone(), closing.clone());
        running.spawn(async move {
            connections.serve(tcp, service, closing).await;
            drop((permit, open));
        });
    }
    drop(listener);
    closing.cancel();
    running.close();
    if tokio::time::timeout(options.drain, running.wait()).await.is_err() {
        tracing::warn!("connections still open after {:?}; closing them", options.drain);
    }
    Ok(())
}

/// What a connection's requests are served by: the app, with the connection's [`Peer`] in every
/// request's extensions (as axum's `ConnectInfo` does), for authentication and limits by client;
/// behind the host check, so that every route is, those merged after the HTTP layers included.
type Service = TowerToHyperService<HostCheck<AddExtension<Router, Peer>>>;

fn for_peer(app: Router, peer: Peer, hosts: Option<ServedHosts>) -> Service {
    TowerToHyperService::new(HostCheck::new(axum::Extension(peer).layer(app), hosts))
}

/// What every connection is served with.
struct Connections {
    tls: Option<TlsAcceptor>,
    header_read_timeout: Duration,
    write_timeout: Duration,
    max_connection_response_bytes: usize,
    metrics: Option<Arc<crate::metrics::Instruments>>,
    served_hosts: Option<ServedHosts>,
}

/// Which HTTP a connection speaks.
#[derive(Debug, PartialEq)]
enum Protocol {
    Http1,
    Http2,
}

impl Connections {
    /// Counts a connection closed before its first request, for `reason`.
    fn refused(&self, reason: &'static str) {
        if let Some(metrics) = &self.metrics {
            metrics.connections_refused.get_or_create(&crate::metrics::ReasonLabel { reason }).inc();
        }
    }

    async fn serve(&self, tcp: TcpStream, app: Router, closing: CancellationToken) {
        let Ok(addr) = tcp.peer_addr() else { return };
        let result = match &self.tls {
            None => match tokio::time::timeout(self.header_read_timeout, sniff(&tcp)).await {
                Ok(Ok(Some(protocol))) => {
                    let service =
                        for_peer(app, Peer { addr, certificate: None, tls: false }, self.served_hosts.clone());
                    self.serve_http(tcp, protocol, service, closing).await
                }
                Ok(Ok(None)) | Ok(Err(_)) => return self.refused("closed"),
                Err(_) => return self.refused("timeout"),
            },
            // Boxed: a cleartext connection's task then reserves no room for TLS state.
            Some(acceptor) => Box::pin(self.serve_tls(acceptor, tcp, addr, app, closing)).await,
        };
        if let Err(error) = result {
            tracing::trace!(%error, "connection ended with an error");
        }
    }

    async fn serve_tls(
        &self,
        acceptor: &TlsAcceptor,
        tcp: TcpStream,
        addr: SocketAddr,
        app: Router,
        closing: CancellationToken,
    ) -> hyper::Result<()> {
        match tokio::time::timeout(self.header_read_timeout, acceptor.accept(tcp)).await {
            Ok(Ok(tls)) => {
                let session = tls.get_ref().1;
                let certificate = session.peer_certificates().and_then(|chain| chain.first());
                let certificate = certificate.map(|der| Arc::from(der.as_ref()));
                let service = for_peer(app, Peer { addr, certificate, tls: true }, self.served_hosts.clone());
                let h2 = session.alpn_protocol() == Some(b"h2");
                let protocol = if h2 { Protocol::Http2 } else { Protocol::Http1 };
                self.serve_http(tls, protocol, service, closing).await
            }
            Ok(Err(error)) => {
                tracing::debug!(%error, "TLS handshake failed");
                self.refused("tls_handshake");
                Ok(())
            }
            Err(_) => {
                self.refused("timeout");
                Ok(())
            }
        }
    }

    async fn serve_http<I>(
        &self,
        io: I,
        protocol: Protocol,
        service: Service,
        closing: CancellationToken,
    ) -> hyper::Result<()>
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        match protocol {
            Protocol::Http1 => {
                let io = TokioIo::new(WriteTimeout::new(io, self.write_timeout));
                // hyper times the headers of every request, the first and each kept-alive one.
                let mut builder = hyper::server::conn::http1::Builder::new();
                builder.timer(TokioTimer::new()).header_read_timeout(self.header_read_timeout);
                let connection = builder.serve_connection(io, service);
                let (idle, stalled) = (std::future::pending(), std::future::pending());
                until_closed(connection, idle, Duration::ZERO, stalled, closing, |c| c.as_mut().graceful_shutdown())
                    .await
            }
            Protocol::Http2 => {
                // HTTP/2 has no header timer in hyper: a connection is closed when no request has
                // been in flight on it for the header-read timeout.
                let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
                builder.timer(TokioTimer::new());
                // HTTP/2 streams stall one by one, with no write waiting (see `Stalls`).
                let stalls = Stalls::new(self.max_connection_response_bytes);
                let io = TokioIo::new(WriteTimeout::new(io, self.write_timeout));
                let idle = Idle::default();
                let connection = builder.serve_connection(io, Tracked::new(service, &idle, &stalls));
                let idle = idle.for_longer_than(self.header_read_timeout);
                let stalled = stalls.stalled_for(self.write_timeout);
                // HTTP/2's connection state is several times HTTP/1.1's: boxed, only HTTP/2
                // connections carry it.
                let grace = self.header_read_timeout;
                let closed =
                    until_closed(connection, idle, grace, stalled, closing, |c| c.as_mut().graceful_shutdown());
                Box::pin(closed).await
            }
        }
    }
}

/// Runs `connection` to its end. When the server shuts down, or `idle` completes, asks it to
/// finish the requests in flight and close; an idle connection gets `idle_grace` for that (an
/// HTTP/2 client that never acknowledges the close would otherwise keep it). When `stalled`
/// completes (a client takes no data), drops it at once, with every response it held.
async fn until_closed<C>(
    connection: C,
    idle: impl Future<Output = ()>,
    idle_grace: Duration,
    stalled: impl Future<Output = ()>,
    closing: CancellationToken,
    graceful_shutdown: impl FnOnce(&mut Pin<&mut C>),
) -> hyper::Result<()>
where
    C: Future<Output = hyper::Result<()>>,
{
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => result,
        () = closing.cancelled() => {
            graceful_shutdown(&mut connection);
            connection.await
        }
        () = idle => {
            graceful_shutdown(&mut connection);
            tokio::time::timeout(idle_grace, connection).await.unwrap_or(Ok(()))
        }
        () = stalled => {
            tracing::debug!("a response waited on the client for the write timeout; connection closed");
            Ok(())
        }
    }
}

/// Reads which HTTP a cleartext connection speaks from its first bytes, without consuming them:
/// HTTP/2 with prior knowledge opens with `PRI `. `None` if the client closed first.
async fn sniff(tcp: &TcpStream) -> io::Result<Option<Protocol>> {
    const PREFACE: &[u8] = b"PRI ";
    let mut head = [0u8; 4];
    loop {
        let n = tcp.peek(&mut head).await?;
        let head = &head[..n];
        if n == 0 {
            return Ok(None);
        }
        if !PREFACE.starts_with(head) {
            return Ok(Some(Protocol::Http1));
        }
        if n == PREFACE.len() {
            return Ok(Some(Protocol::Http2));
        }
        // A prefix of the preface, and the rest not here yet: the socket stays readable while
        // those bytes wait unread, so look again shortly (the caller's timeout bounds this).
        tokio::time::sleep(Duration::from_millis(5)).await;
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
    use tokio::io::AsyncWriteExt;

    use super::*;

    async fn sniffed(first_bytes: &[&[u8]]) -> Option<Protocol> {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        let writes: Vec<Vec<u8>> = first_bytes.iter().map(|b| b.to_vec()).collect();
        // Writes the pieces apart, then closes.
        tokio::spawn(async move {
            for bytes in writes {
                client.write_all(&bytes).await.unwrap();
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        });
        sniff(&server).await.unwrap()
    }

    #[tokio::test]
    async fn the_first_bytes_choose_the_protocol() {
        assert_eq!(sniffed(&[b"POST / HTTP/1.1\r\n"]).await, Some(Protocol::Http1));
        assert_eq!(sniffed(&[b"GET "]).await, Some(Protocol::Http1));
        assert_eq!(sniffed(&[b"PRI * HTTP/2.0\r\n"]).await, Some(Protocol::Http2));
        // The preface in pieces: undecided until it is whole.
        assert_eq!(sniffed(&[b"P", b"RI ", b"* HTTP/2.0"]).await, Some(Protocol::Http2));
        assert_eq!(sniffed(&[b"PO", b"ST /"]).await, Some(Protocol::Http1));
        assert_eq!(sniffed(&[]).await, None);
    }
}
