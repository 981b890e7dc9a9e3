//! The limits on what one client can make a server hold or do.

use std::time::Duration;

use super::values::{parse_duration, parse_optional_duration, parse_size, MaybeDuration};
use super::LIMITS;

/// Bounds on what one client can make the server hold or do. Sizes take a `KiB`, `MiB` or `GiB`
/// suffix.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = LIMITS)]
pub(crate) struct LimitOpt {
    /// Seconds a client may take to send a request's body (a gRPC call's message too).
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub(crate) body_read_timeout: u64,

    /// Largest request body.
    #[arg(long, value_name = "SIZE", default_value = "4MiB", value_parser = parse_size)]
    pub(crate) max_body_size: usize,

    /// Longest tenant name a request may give (letters, digits and - . _ ~ only).
    #[arg(long, value_name = "SIZE", default_value = "128", value_parser = parse_size)]
    pub(crate) max_tenant_size: usize,

    /// Most memory one client message may take to hold (many small parts take more than their
    /// JSON text).
    #[arg(long, value_name = "SIZE", default_value = "8MiB", value_parser = parse_size)]
    pub(crate) max_message_size: usize,

    /// Most messages a task's history keeps: its first and the most recent ones.
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    pub(crate) max_history: usize,

    /// Most tasks one principal may have in progress at once, in all tenants together.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub(crate) max_tasks_in_progress: usize,

    /// Most bytes one principal's tasks in progress may take in the store, in all tenants
    /// together.
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = parse_size)]
    pub(crate) max_size_in_progress: usize,

    /// Most memory one task's history and artifacts may take.
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = parse_size)]
    pub(crate) max_task_size: usize,

    /// Most task memory one ListTasks page carries; a fuller page ends early.
    #[arg(long, value_name = "SIZE", default_value = "16MiB", value_parser = parse_size)]
    pub(crate) max_list_size: usize,

    /// Most push notification configs per task.
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub(crate) max_push_configs: usize,

    /// Largest push notification config (its id, URL, token and authentication together).
    #[arg(long, value_name = "SIZE", default_value = "8KiB", value_parser = parse_size)]
    pub(crate) max_push_config_size: usize,

    /// Ended tasks kept: at most this many...
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub(crate) retain_tasks: usize,

    /// ...for at most this many seconds after they ended (default: no limit)...
    #[arg(long, value_name = "SECONDS")]
    pub(crate) retain_for: Option<u64>,

    /// ...and at most this many bytes in all (in the store's files, or in memory with `--store
    /// memory`); the ones that ended first go first.
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = parse_size)]
    pub(crate) retain_size: usize,

    /// How long an idempotency key names the send that first carried it: a repeat within it is
    /// answered with that send's task.
    #[arg(long, value_name = "DURATION", default_value = "24h", value_parser = parse_duration)]
    pub(crate) idempotency_ttl: Duration,

    /// End a task left waiting for input or authorization this long (CANCELED, saying why);
    /// `off` leaves it waiting for ever.
    #[arg(long, value_name = "DURATION", default_value = "7d", value_parser = parse_optional_duration)]
    pub(crate) expire_waiting: MaybeDuration,

    /// Cancel an execution running this long and end its task FAILED (default: off, as long
    /// work takes as long as it takes).
    #[arg(long, value_name = "DURATION", default_value = "off", value_parser = parse_optional_duration)]
    pub(crate) max_execution: MaybeDuration,

    /// Longest a long-polled GetTask (`currentGeneration`, with --protocol-draft 1.1) waits for
    /// the task to change before answering with it as it is.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub(crate) long_poll_timeout: Duration,

    /// Most webhook deliveries in flight at once, across all tasks.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub(crate) webhook_concurrency: usize,

    /// Deliveries queued per webhook before new ones are dropped (and logged).
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub(crate) webhook_queue: usize,

    /// Requests per second one principal may make on average (one address, without --auth);
    /// more are refused with 429 and a Retry-After (default: no limit).
    #[arg(long, value_name = "N")]
    pub(crate) rate_limit: Option<f64>,

    /// Requests one principal may make at once over --rate-limit after a quiet spell.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub(crate) rate_burst: usize,

    /// Most streams one principal may have open at once.
    #[arg(long, value_name = "N", default_value_t = 1_000)]
    pub(crate) max_streams: usize,
}
