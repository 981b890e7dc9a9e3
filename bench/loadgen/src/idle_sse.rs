//! `idle-sse`: open many SSE requests, wait for each one's first event, and hold them all open
//! while the server's memory is read.

use std::cell::Cell;
use std::rc::Rc;

use anyhow::ensure;
use bytes::BytesMut;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::StatusCode;
use tokio::sync::{mpsc, watch, Semaphore};
use tokio::task::{JoinSet, LocalSet};
use tokio::time::{sleep, timeout, Duration, Instant};

use crate::check::{abbreviate_bytes, first_event};
use crate::conn;
use crate::opt::{Envelope, IdleOpt};
use crate::procfs::Process;
use crate::recorder::ErrorLog;
use crate::summary::{IdleSummary, RunSummary};
use crate::target::Target;

/// What every stream shares.
struct Shared {
    target: Target,
    envelope: Envelope,
    /// Bounds how many streams are being opened at once, so the server's accept backlog keeps up.
    opening: Semaphore,
    /// Becomes true when the streams may close.
    release: watch::Receiver<bool>,
    /// Streams the server ended while they were meant to stay open.
    closed_early: Cell<usize>,
}

pub(crate) async fn run(opt: &IdleOpt) -> anyhow::Result<RunSummary> {
    ensure!(opt.open_concurrency > 0, "--open-concurrency must be at least 1");
    let server = opt.target.server_pid.map(Process::by_pid);
    let rss_before = server.as_ref().and_then(|p| p.rss_kib().ok());
    let (release_tx, release) = watch::channel(false);
    let shared = Rc::new(Shared {
        target: Target::from_opt(&opt.target)?,
        envelope: opt.target.envelope,
        opening: Semaphore::new(opt.open_concurrency),
        release,
        closed_early: Cell::new(0),
    });
    let mut errors = ErrorLog::default();

    let (open, open_seconds, rss_open) = LocalSet::new()
        .run_until(async {
            let started = Instant::now();
            let (opened_tx, mut opened_rx) = mpsc::channel(opt.streams.max(1));
            let mut streams = JoinSet::new();
            for _ in 0..opt.streams {
                streams.spawn_local(hold_one(shared.clone(), opened_tx.clone()));
            }
            drop(opened_tx);

            let mut open = 0;
            let deadline = started + Duration::from_secs_f64(opt.open_timeout);
            while open + (errors.count as usize) < opt.streams {
                match tokio::time::timeout_at(deadline, opened_rx.recv()).await {
                    Ok(Some(Ok(()))) => open += 1,
                    Ok(Some(Err(e))) => errors.push(e),
                    Ok(None) => break,
                    Err(_) => {
                        errors.push(format!("only {open} of {} streams open after {}s", opt.streams, opt.open_timeout));
                        break;
                    }
                }
            }
            let open_seconds = started.elapsed().as_secs_f64();

            // Let the server settle (buffers, lazily freed memory) before reading its memory.
            sleep(Duration::from_secs_f64(opt.hold)).await;
            let rss_open = server.as_ref().and_then(|p| p.rss_kib().ok());
            let open = open - shared.closed_early.get();
            let _ = release_tx.send(true);
            streams.abort_all();
            (open, open_seconds, rss_open)
        })
        .await;

    if shared.closed_early.get() > 0 {
        errors.push(format!("{} streams were closed by the server while held", shared.closed_early.get()));
    }
    let kib_per_stream = match (rss_before, rss_open) {
        (Some(before), Some(after)) if open > 0 => Some(after.saturating_sub(before) as f64 / open as f64),
        _ => None,
    };
    Ok(RunSummary::IdleSse(IdleSummary {
        requested: opt.streams,
        open,
        open_seconds,
        server_rss_before_kib: rss_before,
        server_rss_open_kib: rss_open,
        kib_per_stream,
        errors: errors.count,
        error_samples: errors.samples,
    }))
}

/// Opens one stream, reports whether its first event came, then keeps it open until released.
async fn hold_one(shared: Rc<Shared>, opened: mpsc::Sender<Result<(), String>>) {
    let permit = shared.opening.acquire().await;
    let connection = match conn::open(shared.target.addr, false).await {
        Ok(connection) => connection,
        Err(e) => {
            let _ = opened.send(Err(format!("connect: {e}"))).await;
            return;
        }
    };
    let (mut sender, driver) = connection;
    let mut driver = std::pin::pin!(driver);
    let request = shared.target.request();
    let first = tokio::select! {
        first = async {
            let response = sender.send_request(request).await.map_err(|e| format!("request: {e}"))?;
            await_first_event(shared.envelope, response).await
        } => first,
        closed = &mut driver => Err(format!("connection ended before the first event: {closed:?}")),
    };
    drop(permit);
    let body = match first {
        Ok(body) => body,
        Err(e) => {
            let _ = opened.send(Err(e)).await;
            return;
        }
    };
    let _ = opened.send(Ok(())).await;

    // Keep driving the connection (it may carry keep-alive comments) and keep the body alive:
    // dropping it would close the stream.
    let mut release = shared.release.clone();
    tokio::select! {
        _ = release.wait_for(|released| *released) => {}
        _ = &mut driver => shared.closed_early.set(shared.closed_early.get() + 1),
    }
    drop(body);
}

/// Reads until the first complete `data:` line and checks it; returns the rest of the stream.
async fn await_first_event(envelope: Envelope, response: hyper::Response<Incoming>) -> Result<Incoming, String> {
    /// A first event that takes longer than this means the server is not answering.
    const FIRST_EVENT_TIMEOUT: Duration = Duration::from_secs(30);
    let status = response.status();
    let mut body = response.into_body();
    if status != StatusCode::OK {
        let bytes = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
        return Err(format!("HTTP {status}: {}", abbreviate_bytes(&bytes)));
    }
    let mut received = BytesMut::new();
    loop {
        let frame = timeout(FIRST_EVENT_TIMEOUT, body.frame())
            .await
            .map_err(|_| "no event within 30 s".to_owned())?
            .ok_or_else(|| format!("stream ended before its first event: {}", abbreviate_bytes(&received)))?
            .map_err(|e| format!("response body: {e}"))?;
        if let Ok(data) = frame.into_data() {
            received.extend_from_slice(&data);
        }
        if let Some(verdict) = first_event(envelope, &received) {
            return verdict.map(|()| body);
        }
    }
}
