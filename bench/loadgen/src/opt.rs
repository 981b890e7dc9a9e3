//! Command-line options.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Closed-loop HTTP/1.1 load generator: one keep-alive connection per virtual user.
#[derive(Debug, Parser)]
#[command(name = "loadgen", about)]
pub(crate) struct Opt {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Unary requests back to back: requests/s, latency, server CPU per request.
    Rps(LoadOpt),
    /// Streaming (SSE) requests, each read to its end: streams/s, events/s, latency.
    Stream(LoadOpt),
    /// Many concurrent SSE requests held open after their first event: how many stay open, and
    /// the server's resident memory while they do.
    IdleSse(IdleOpt),
    /// Renders the runs a harness recorded (JSON lines) as one markdown table and one JSON file.
    Report(ReportOpt),
}

/// What a successful response body looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Envelope {
    /// JSON-RPC 2.0: a `result` (never an `error`) holding the A2A payload.
    Jsonrpc,
    /// HTTP+JSON: the A2A payload is the body (or each SSE event) itself.
    Rest,
    /// JSON-RPC 2.0 in A2A v0.3 (`message/send`): the `result` is the task itself, with
    /// `"kind":"task"` and a lowercase state.
    JsonrpcV03,
    /// gRPC over HTTP/2: the body (ProtoJSON of `lf.a2a.v1.SendMessageRequest`) is sent as that
    /// message in protobuf, and the answer must be a SendMessageResponse holding a completed task.
    Grpc,
    /// MCP `tools/call` (agentwire's MCP server): a result that is no error, whose structured
    /// content says the A2A task reached COMPLETED.
    Mcp,
    /// Only the HTTP status is checked.
    None,
}

/// Where to send, what to send, and how to judge the answer.
#[derive(Debug, Args)]
pub(crate) struct TargetOpt {
    /// Target URL (plain http), e.g. `http://127.0.0.1:8080/`.
    #[arg(long)]
    pub(crate) url: String,

    /// HTTP method.
    #[arg(long, default_value = "POST")]
    pub(crate) method: String,

    /// A request header, `Name: value` (repeatable). `{{seq}}` in one header's value is replaced
    /// by a per-request counter (an idempotency key per request, say).
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE")]
    pub(crate) headers: Vec<String>,

    /// The request body. `{{seq}}` in it is replaced by a per-request counter.
    #[arg(long, conflicts_with = "body_file")]
    pub(crate) body: Option<String>,

    /// Read the request body from this file (same `{{seq}}` substitution).
    #[arg(long, value_name = "FILE")]
    pub(crate) body_file: Option<PathBuf>,

    /// How responses are validated.
    #[arg(long, value_enum, default_value_t = Envelope::Jsonrpc)]
    pub(crate) envelope: Envelope,

    /// The server's process id: its CPU time and resident memory are reported.
    #[arg(long, value_name = "PID")]
    pub(crate) server_pid: Option<u32>,

    /// Also print one machine-readable JSON line on stdout (the human line goes to stderr).
    #[arg(long)]
    pub(crate) json: bool,
}

/// A closed-loop run: `connections` users for a warmup and then a measured window.
#[derive(Debug, Args)]
pub(crate) struct LoadOpt {
    #[command(flatten)]
    pub(crate) target: TargetOpt,

    /// Concurrent connections, one virtual user each.
    #[arg(long, short = 'c', default_value_t = 16)]
    pub(crate) connections: usize,

    /// Seconds of unmeasured warmup.
    #[arg(long, default_value_t = 2.0)]
    pub(crate) warmup: f64,

    /// Seconds of measurement (ignored with `--requests`).
    #[arg(long, default_value_t = 5.0)]
    pub(crate) duration: f64,

    /// Measure exactly this many requests instead of a duration.
    #[arg(long)]
    pub(crate) requests: Option<u64>,

    /// With `--requests`: give up after this many seconds.
    #[arg(long, default_value_t = 300.0)]
    pub(crate) timeout: f64,

    /// Fully validate one response in this many once the first second is over (every response
    /// of the first second is fully validated; the rest get a status and byte-search check).
    #[arg(long, default_value_t = 64)]
    pub(crate) full_check_every: u64,

    /// Read the server's resident memory when this many requests have been measured
    /// (repeatable; needs `--server-pid`).
    #[arg(long = "rss-at", value_name = "REQUESTS")]
    pub(crate) rss_at: Vec<u64>,
}

/// Many SSE requests held open at once.
#[derive(Debug, Args)]
pub(crate) struct IdleOpt {
    #[command(flatten)]
    pub(crate) target: TargetOpt,

    /// How many streams to open and hold.
    #[arg(long, default_value_t = 10_000)]
    pub(crate) streams: usize,

    /// At most this many streams being opened at the same time.
    #[arg(long, default_value_t = 128)]
    pub(crate) open_concurrency: usize,

    /// Seconds allowed for opening every stream.
    #[arg(long, default_value_t = 120.0)]
    pub(crate) open_timeout: f64,

    /// Seconds to hold every stream open before the server's memory is read.
    #[arg(long, default_value_t = 2.0)]
    pub(crate) hold: f64,
}

/// Turn recorded runs into the results table.
#[derive(Debug, Args)]
pub(crate) struct ReportOpt {
    /// The runs, one JSON object per line:
    /// `{"scenario":..,"server":..,"result":{..}}`, or with `"skipped"`/`"failed"` and a reason.
    pub(crate) runs: PathBuf,

    /// Write the markdown table here too (it is always printed).
    #[arg(long, value_name = "FILE")]
    pub(crate) markdown: Option<PathBuf>,

    /// Write the rows, with their ratios, as JSON here.
    #[arg(long, value_name = "FILE")]
    pub(crate) json: Option<PathBuf>,
}
