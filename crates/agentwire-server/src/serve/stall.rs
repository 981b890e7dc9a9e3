//! A write timeout on a connection: a write the client does not make room for within the limit
//! fails, and the connection with it, so a client that stops reading does not keep its response
//! in memory. Neither hyper nor tokio has one; reads are left alone (idle connections have their
//! own rules).
//!
//! HTTP/2 needs more: a client that reads the socket but gives a stream no flow-control window
//! leaves h2 nothing to write, so no write waits. [`Stalls`] sees it from the other side, stream
//! by stream: a response body whose data hyper has taken, and which hyper has neither asked for
//! more nor dropped (h2 holds that data until the client makes room) for the limit. Whatever else
//! the connection writes (other streams, answers to the client's PINGs) does not count: the
//! stalled stream's data would be held for as long as the client liked. Bodies are handed to
//! hyper in pieces of [`PIECE`] bytes, so a stream the client reads slowly but steadily is asked
//! for more long before the limit. And the response bytes a connection holds are capped: a
//! client that asks for more than it reads loses the connection at once.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};

/// The largest piece of a response body handed to hyper at once: how far a stream's data may
/// run ahead of the client's window before the body is asked again.
pub(super) const PIECE: usize = 64 * 1024;

/// Since when each response body of one connection has been waiting for hyper to ask for more,
/// and how many response bytes its live bodies hold.
pub(super) struct Stalls {
    epoch: Instant,
    /// The bodies' clocks: milliseconds since `epoch`, plus one, since each was owed a poll; 0
    /// while it is not.
    owed: Mutex<Vec<Weak<AtomicU64>>>,
    /// Bytes of the live response bodies not yet handed to hyper, and those handed to it whose
    /// stream has yet to ask for more.
    held: AtomicUsize,
    max_held: usize,
    /// Told when `held` passes `max_held`.
    overflowed: Notify,
}

impl Stalls {
    pub(super) fn new(max_held: usize) -> Arc<Self> {
        Arc::new(Self {
            epoch: Instant::now(),
            owed: Mutex::default(),
            held: AtomicUsize::new(0),
            max_held,
            overflowed: Notify::new(),
        })
    }

    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A clock for one response body of `size` bytes (as far as it is known), owed a poll from
    /// now.
    pub(super) fn owe(self: &Arc<Self>, size: usize) -> Owed {
        let since = Arc::new(AtomicU64::new(self.now() + 1));
        // Short section, no await: a push, or a scan in `stalled_for`.
        self.owed.lock().unwrap_or_else(|e| e.into_inner()).push(Arc::downgrade(&since));
        let mut owed = Owed { since, stalls: Arc::clone(self), held: 0 };
        owed.hold(size);
        owed
    }

    /// Completes once a response body has waited `limit` for hyper (the client takes no data on
    /// that stream), or once the connection's bodies hold more than their cap.
    pub(super) fn stalled_for(self: Arc<Self>, limit: Duration) -> impl Future<Output = ()> + Send + 'static {
        let limit_ms = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX).max(1);
        async move {
            loop {
                tokio::select! {
                    () = tokio::time::sleep(limit / 2) => {}
                    () = self.overflowed.notified() => {}
                }
                if self.held.load(Ordering::Relaxed) > self.max_held {
                    tracing::debug!(
                        bytes = self.held.load(Ordering::Relaxed),
                        "a connection held too many response bytes"
                    );
                    return;
                }
                let now = self.now();
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

/// A response body's clock in [`Stalls`], and the bytes it holds there.
pub(super) struct Owed {
    since: Arc<AtomicU64>,
    stalls: Arc<Stalls>,
    held: usize,
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

    /// The body now holds `bytes` more.
    pub(super) fn hold(&mut self, bytes: usize) {
        self.held += bytes;
        let held = self.stalls.held.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if held > self.stalls.max_held {
            self.stalls.overflowed.notify_one();
        }
    }

    /// The body holds `bytes` less.
    pub(super) fn release(&mut self, bytes: usize) {
        let bytes = bytes.min(self.held);
        self.held -= bytes;
        self.stalls.held.fetch_sub(bytes, Ordering::Relaxed);
    }
}

impl Drop for Owed {
    fn drop(&mut self) {
        self.stalls.held.fetch_sub(self.held, Ordering::Relaxed);
    }
}

/// `io` whose writes fail with `TimedOut` once one has waited `limit` for room.
pub(super) struct WriteTimeout<I> {
    io: I,
    limit: Duration,
    /// Armed while a write waits for room; cleared when one goes through.
    waiting: Option<Pin<Box<Sleep>>>,
}

impl<I> WriteTimeout<I> {
    pub(super) fn new(io: I, limit: Duration) -> Self {
        Self { io, limit, waiting: None }
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
        self.went_through(result, cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
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
