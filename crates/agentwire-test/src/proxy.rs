//! A TCP proxy whose open connections a test can cut, as a broken network would.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, JoinHandle};

/// Forwards every connection accepted on its listener to a target address; stopped when dropped.
pub struct CuttingProxy {
    /// The address clients connect to.
    pub addr: SocketAddr,
    connections: Arc<Mutex<Vec<AbortHandle>>>,
    accept: JoinHandle<()>,
}

impl CuttingProxy {
    /// Forwards the connections `front` accepts to `target`.
    pub fn start(front: TcpListener, target: SocketAddr) -> Self {
        let addr = front.local_addr().expect("a bound listener");
        let connections = Arc::new(Mutex::new(Vec::new()));
        let open = connections.clone();
        let accept = tokio::spawn(async move {
            while let Ok((mut client, _)) = front.accept().await {
                let forward = tokio::spawn(async move {
                    if let Ok(mut upstream) = TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                    }
                });
                open.lock().unwrap().push(forward.abort_handle());
            }
        });
        Self { addr, connections, accept }
    }

    /// Drops every connection open now; later ones are forwarded as before.
    pub fn cut(&self) {
        for connection in self.connections.lock().unwrap().drain(..) {
            connection.abort();
        }
    }
}

impl Drop for CuttingProxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}
