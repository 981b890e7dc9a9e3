//! `rps` and `stream`: virtual users that each send back to back over one connection.

use std::cell::RefCell;
use std::rc::Rc;

use anyhow::{bail, ensure};
use http_body_util::BodyExt;
use hyper::StatusCode;
use tokio::task::{JoinSet, LocalSet};
use tokio::time::{sleep, sleep_until, Duration, Instant};

use crate::check::{abbreviate_bytes, grpc_status, GrpcTaskCheck, McpCheck, ResponseCheck, StreamCheck, TaskCheck};
use crate::conn::{self, Sender};
use crate::opt::{Envelope, LoadOpt};
use crate::procfs::Process;
use crate::recorder::Recorder;
use crate::schedule::Schedule;
use crate::summary::{Latency, LoadSummary, RssReading, RunSummary};
use crate::target::Target;

/// What each response is.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Mode {
    /// One JSON document.
    Unary,
    /// A server-sent event stream, read to its end.
    Stream,
}

/// A pause before reconnecting, so a dead server is not hammered in a tight loop.
const RECONNECT_PAUSE: Duration = Duration::from_millis(20);

/// What every virtual user shares.
struct Shared {
    target: Target,
    schedule: Schedule,
    check: Box<dyn ResponseCheck>,
    recorder: RefCell<Recorder>,
    full_check_every: u64,
}

/// CPU times at one instant.
struct Usage {
    at: Instant,
    server: Option<Duration>,
    own: Option<Duration>,
}

impl Usage {
    fn sample(server: Option<&Process>) -> Self {
        Self {
            at: Instant::now(),
            server: server.and_then(|p| p.cpu_time().ok()),
            own: Process::current().cpu_time().ok(),
        }
    }
}

pub(crate) async fn run(mode: Mode, opt: &LoadOpt) -> anyhow::Result<RunSummary> {
    ensure!(opt.connections > 0, "--connections must be at least 1");
    ensure!(opt.full_check_every > 0, "--full-check-every must be at least 1");
    let server = opt.target.server_pid.map(Process::by_pid);
    let start = Instant::now();
    let warmup = Duration::from_secs_f64(opt.warmup);
    let schedule = match opt.requests {
        Some(n) => Schedule::counted(start, warmup, n, Duration::from_secs_f64(opt.timeout)),
        None => Schedule::timed(start, warmup, Duration::from_secs_f64(opt.duration)),
    };
    let check: Box<dyn ResponseCheck> = match (mode, opt.target.envelope) {
        (Mode::Unary, Envelope::Grpc) => Box::new(GrpcTaskCheck),
        (Mode::Unary, Envelope::Mcp) => Box::new(McpCheck::new()),
        (Mode::Stream, Envelope::Mcp) => bail!("MCP answers are measured as unary calls: use `rps`"),
        (Mode::Stream, Envelope::Grpc) => bail!("gRPC streams are not measured: use `rps`"),
        (Mode::Unary, envelope) => Box::new(TaskCheck::new(envelope)),
        (Mode::Stream, envelope) => Box::new(StreamCheck::new(envelope)),
    };
    let shared = Rc::new(Shared {
        target: Target::from_opt(&opt.target)?,
        schedule,
        check,
        recorder: RefCell::new(Recorder::new(server.clone(), opt.rss_at.clone())),
        full_check_every: opt.full_check_every,
    });

    let (from, to) = LocalSet::new()
        .run_until(async {
            let mut users = JoinSet::new();
            for _ in 0..opt.connections {
                users.spawn_local(user(shared.clone()));
            }
            sleep_until(shared.schedule.measure_from).await;
            let from = Usage::sample(server.as_ref());
            if !shared.schedule.is_counted() {
                sleep_until(shared.schedule.until).await;
                let to = Usage::sample(server.as_ref());
                users.join_all().await;
                return (from, to);
            }
            users.join_all().await;
            (from, Usage::sample(server.as_ref()))
        })
        .await;

    {
        let mut recorder = shared.recorder.borrow_mut();
        if shared.schedule.unsent() > 0 {
            let left = shared.schedule.unsent();
            recorder.errors.push(format!("timed out with {left} requests unsent"));
        }
        if recorder.measured == 0 {
            recorder.errors.push("no request succeeded inside the measured window");
        }
    }
    let summary = summarize(opt, &shared.recorder.borrow(), &from, &to, server.as_ref());
    Ok(match mode {
        Mode::Unary => RunSummary::Rps(summary),
        Mode::Stream => RunSummary::Stream(summary),
    })
}

/// One virtual user: a connection, reopened if it fails, until the schedule ends.
async fn user(shared: Rc<Shared>) {
    let mut sent = 0;
    while !shared.schedule.is_over(Instant::now()) {
        let (sender, driver) = match conn::open(shared.target.addr, shared.target.http2()).await {
            Ok(connection) => connection,
            Err(e) => {
                shared.recorder.borrow_mut().errors.push(format!("connect: {e}"));
                sleep(RECONNECT_PAUSE).await;
                continue;
            }
        };
        // The connection is driven in this task rather than a task of its own: one task per
        // user, and the driver's own error when the server breaks the connection.
        let outcome = tokio::select! {
            biased;
            outcome = exchanges(&shared, sender, &mut sent) => outcome,
            closed = driver => Err(match closed {
                Ok(()) => "the server closed the connection".to_owned(),
                Err(e) => format!("connection: {e}"),
            }),
        };
        match outcome {
            Ok(()) => return,
            Err(e) => shared.recorder.borrow_mut().errors.push(e),
        }
    }
}

/// Requests back to back on one connection; `Err` when the connection broke.
async fn exchanges(shared: &Shared, mut sender: Sender, sent: &mut u64) -> Result<(), String> {
    loop {
        sender.ready().await.map_err(|e| format!("connection: {e}"))?;
        let Some(phase) = shared.schedule.claim(Instant::now()) else { return Ok(()) };
        let request = shared.target.request();
        let started = Instant::now();
        let response = sender.send_request(request).await.map_err(|e| format!("request: {e}"))?;
        let (head, body) = response.into_parts();
        let body = body.collect().await.map_err(|e| format!("response body: {e}"))?;
        let grpc_failed = grpc_status(&head.headers, body.trailers()).is_some_and(|code| code != b"0");
        let body = body.to_bytes();
        let finished = Instant::now();

        *sent += 1;
        let full = shared.schedule.in_full_check_period(finished) || sent.is_multiple_of(shared.full_check_every);
        let verdict = if head.status != StatusCode::OK {
            Err(format!("HTTP {}: {}", head.status, abbreviate_bytes(&body)))
        } else if grpc_failed {
            Err(format!("gRPC status {:?}: {:?}", head.headers.get("grpc-status"), head.headers.get("grpc-message")))
        } else if full {
            shared.check.full(&body)
        } else {
            shared.check.quick(&body)
        };

        let mut recorder = shared.recorder.borrow_mut();
        recorder.full_checks += u64::from(full);
        match verdict {
            Ok(events) if shared.schedule.counts(phase, finished) => recorder.measured(finished - started, events),
            Ok(_) => {}
            Err(e) => recorder.errors.push(e),
        }
    }
}

fn summarize(opt: &LoadOpt, recorder: &Recorder, from: &Usage, to: &Usage, server: Option<&Process>) -> LoadSummary {
    let window = to.at.saturating_duration_since(from.at);
    let seconds = window.as_secs_f64().max(f64::MIN_POSITIVE);
    let requests = recorder.measured;
    let rate = requests as f64 / seconds;
    let histogram = recorder.latency();
    let us = |nanos: u64| nanos as f64 / 1000.0;
    let mean = recorder.mean_latency();
    let cpu_per_request = |a: Option<Duration>, b: Option<Duration>| match (a, b) {
        (Some(a), Some(b)) if requests > 0 => Some(b.saturating_sub(a).as_secs_f64() * 1e6 / requests as f64),
        _ => None,
    };
    LoadSummary {
        connections: opt.connections,
        seconds,
        requests,
        rate,
        events: recorder.events,
        events_per_sec: recorder.events as f64 / seconds,
        latency_us: Latency {
            mean: mean.as_secs_f64() * 1e6,
            p50: us(histogram.value_at_quantile(0.50)),
            p90: us(histogram.value_at_quantile(0.90)),
            p99: us(histogram.value_at_quantile(0.99)),
            max: us(histogram.max()),
        },
        littles_law: mean.as_secs_f64() * rate / opt.connections as f64,
        server_cpu_us_per_req: cpu_per_request(from.server, to.server),
        server_rss_kib: server.and_then(|p| p.rss_kib().ok()),
        rss_at: recorder.rss_readings.iter().map(|&(requests, rss_kib)| RssReading { requests, rss_kib }).collect(),
        loadgen_cpu_pct: match (from.own, to.own) {
            (Some(a), Some(b)) => b.saturating_sub(a).as_secs_f64() * 100.0 / seconds,
            _ => 0.0,
        },
        loadgen_cpu_us_per_req: cpu_per_request(from.own, to.own),
        full_checks: recorder.full_checks,
        errors: recorder.errors.count,
        error_samples: recorder.errors.samples.clone(),
    }
}
