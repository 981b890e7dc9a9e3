//! A write timeout on a connection: a write the client does not make room for within the limit
//! fails, and the connection with it, so a client that stops reading does not keep its response
//! in memory. Neither hyper nor tokio has one; reads are left alone (idle connections have their
//! own rules).
//!
//! HTTP/2 needs more: a client that reads the socket but gives a stream no flow-control window
//! leaves h2 nothing to write, so no write waits. [`Stalls`] sees it from the other side: a
//! response body whose data hyper has taken, and which hyper has neither asked for more nor
//! dropped (h2 holds that data until the client makes room) for the limit, on a connection that
//! has written nothing for as long.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// What one connection wrote last, and since when each of its response bodies has been waiting
/// for hyper to ask for more.
pub(super) struct Stalls {
    epoch: Instant,
    /// Milliseconds since `epoch` of the last write that went through.
    last_write: AtomicU64,
    /// The bodies' clocks: milliseconds since `epoch`, plus one, since each was owed a poll; 0
    /// while it is not.
    owed: Mutex<Vec<Weak<AtomicU64>>>,
}

impl Stalls {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Self { epoch: Instant::now(), last_write: AtomicU64::new(0), owed: Mutex::default() })
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    fn wrote(&self) {
        self.last_write.store(self.now(), Ordering::Relaxed);
    }

    /// A clock for one response body, owed a poll from now.
    pub(super) fn owe(self: &Arc<Self>) -> Owed {
        let since = Arc::new(AtomicU64::new(self.now() + 1));
        // Short section, no await: a push, or a scan in `stalled_for`.
        self.owed.lock().unwrap_or_else(|e| e.into_inner()).push(Arc::downgrade(&since));
        Owed { since, stalls: Arc::clone(self) }
    }

    /// Completes once a response body has waited `limit` for hyper while the connection wrote
    /// nothing for as long: the client takes no data on that stream.
    pub(super) fn stalled_for(self: Arc<Self>, limit: Duration) -> impl Future<Output = ()> + Send + 'static {
        let limit_ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX).max(1);
        async move {
            loop {
                tokio::time::sleep(limit / 2).await;
                let now = self.now();
                if now.saturating_sub(self.last_write.load(Ordering::Relaxed)) < limit_ms {
                    continue;
                }
                let mut owed = self.owed.lock().unwrap_or_else(|e| e.into_inner());
                owed.retain(|clock| clock.strong_count() > 0);
                let stalled = owed.iter().filter_map(Weak::upgrade).any(|clock| {
                    let since = clock.load(Ordering::Relaxed);
                    since > 0 && now.saturating_sub(since - 1) >= limit_ms
                });
                if stalled {
                    return;
                }
            }
        }
    }
}

/// A response body's clock in [`Stalls`].
pub(super) struct Owed {
    since: Arc<AtomicU64>,
    stalls: Arc<Stalls>,
}

impl Owed {
    /// The body has data for hyper, which has yet to ask for it.
    pub(super) fn start(&self) {
        self.since.store(self.stalls.now() + 1, Ordering::Relaxed);
    }

    /// hyper is waiting on the body, or the body is finished.
    pub(super) fn stop(&self) {
        self.since.store(0, Ordering::Relaxed);
    }
}

/// `io` whose writes fail with `TimedOut` once one has waited `limit` for room, and which tells
/// `stalls`, where a connection has one (HTTP/2), when a write went through.
pub(super) struct WriteTimeout<I> {
    io: I,
    limit: Duration,
    stalls: Option<Arc<Stalls>>,
    /// Armed while a write waits for room; cleared when one goes through.
    waiting: Option<Pin<Box<Sleep>>>,
}

impl<I> WriteTimeout<I> {
    pub(super) fn new(io: I, limit: Duration, stalls: Option<Arc<Stalls>>) -> Self {
        Self { io, limit, stalls, waiting: None }
    }

    /// Called when a write could not proceed: fails once it has waited too long.
    fn still_waiting<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        let limit = self.limit;
        let timer = self.waiting.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the client took no data for {} s", limit.as_secs_f32()),
            ))),
        }
    }

    fn went_through<T>(&mut self, result: Poll<io::Result<T>>, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        match result {
            Poll::Pending => self.still_waiting(cx),
            ready => {
                self.waiting = None;
                ready
            }
        }
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for WriteTimeout<I> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for WriteTimeout<I> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.io).poll_write(cx, buf);
        if let (Poll::Ready(Ok(1..)), Some(stalls)) = (&result, &self.stalls) {
            stalls.wrote();
        }
        self.went_through(result, cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        if let (Poll::Ready(Ok(1..)), Some(stalls)) = (&result, &self.stalls) {
            stalls.wrote();
        }
        self.went_through(result, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let result = Pin::new(&mut self.io).poll_flush(cx);
        self.went_through(result, cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let result = Pin::new(&mut self.io).poll_shutdown(cx);
        self.went_through(result, cx)
    }
}
