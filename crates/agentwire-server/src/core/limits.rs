//! What the core bounds and keeps: [`Limits`] on what clients can make it hold or do, and the
//! [`Retention`] of ended tasks.

use std::time::Duration;

/// Configurable bounds on what a client can make the server hold or do. Each refusal is the
/// binding's error: PayloadTooLarge, ResourceExhausted or InvalidParams. Limits on the wire (body
/// size and read time) are [`HttpOptions`](crate::HttpOptions)'.
///
/// ```
/// use std::time::Duration;
///
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::{Limits, RequestHandler};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let limits = Limits { max_history_length: 200, cancel_grace: Duration::from_secs(10), ..Limits::default() };
/// let handler = RequestHandler::builder(EchoAgent).limits(limits).build();
/// assert_eq!(handler.limits().max_history_length, 200);
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest client message, as [`MemorySize`](agentwire_types::MemorySize) estimates the
    /// memory it takes (a message of many tiny parts takes far more than its JSON text).
    pub max_message_bytes: usize,
    /// Most messages a task's history keeps: the first (the request that started the task) and
    /// the most recent ones; the oldest after the first are dropped.
    pub max_history_length: usize,
    /// Most tasks one principal may have in progress (not in a terminal state) at once, across
    /// every tenant it names; a send that would start one more is refused with ResourceExhausted.
    pub max_unfinished_tasks: usize,
    /// Most bytes the tasks one principal has in progress may take together, across every
    /// tenant it names, as the store counts their logs ([`Unfinished::bytes`]); a send whose
    /// message would take them past it is refused with ResourceExhausted.
    ///
    /// [`Unfinished::bytes`]: agentwire_store::Unfinished::bytes
    pub max_unfinished_bytes: usize,
    /// Most memory one task's history and artifacts may take together, as
    /// [`MemorySize`](agentwire_types::MemorySize) estimates it. A message that would take its
    /// task past it is refused with PayloadTooLarge; an agent event that would, fails the task.
    pub max_task_bytes: usize,
    /// Most task memory one ListTasks page carries; a page that would hold more ends early, with
    /// a `nextPageToken` for the rest.
    pub max_list_bytes: usize,
    /// Most push configs one task may have.
    pub max_push_configs_per_task: usize,
    /// Largest push config, in bytes of its id, URL, token and authentication together; a larger
    /// one is refused with InvalidParams. Configs outlive their task's end, and every delivery
    /// sends the token and credentials.
    pub max_push_config_bytes: usize,
    /// Events buffered per task for live readers before a slow reader falls back to the event log.
    /// Small by default: every task with a reader allocates the whole ring, and a reader that
    /// falls behind loses nothing, it reads the log instead.
    pub subscriber_buffer: usize,
    /// Longest task id a client may choose for a new task (the legacy `tasks/send`'s `id`), in
    /// bytes. Such ids are keys and appear in log lines and resource names.
    pub max_client_task_id_bytes: usize,
    /// ListTasks page size when the client gives none.
    pub default_page_size: usize,
    /// Largest ListTasks page size.
    pub max_page_size: usize,
    /// How long a canceled execution may take to end its task itself before the server cancels
    /// the task without it.
    pub cancel_grace: Duration,
    /// How long an idempotency key names the send that first carried it (default a day): a
    /// repeat within it answers that send's task, a later one is a new send.
    pub idempotency_key_ttl: Duration,
    /// Longest idempotency key a client may send, in bytes (default 256).
    pub max_idempotency_key_bytes: usize,
    /// End a task left waiting for input or authorization this long (CANCELED, with a status
    /// message saying why); `None` leaves it waiting for ever. Default: 7 days.
    pub expire_waiting: Option<Duration>,
    /// Cancel an execution running this long, and end its task FAILED once it has stopped (or
    /// after the cancel grace, if it does not); `None` lets it run for ever (the default: how
    /// long work takes is the agent's to know).
    pub max_execution: Option<Duration>,
    /// Longest a long-polled GetTask (the dev-1.1 draft's `currentGeneration`) waits for the
    /// task to change before it answers with the task as it is (default 30 s).
    pub long_poll_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_message_bytes: 8 * 1024 * 1024,
            max_history_length: 1_000,
            max_unfinished_tasks: 10_000,
            max_unfinished_bytes: 256 * 1024 * 1024,
            max_task_bytes: 64 * 1024 * 1024,
            max_list_bytes: 16 * 1024 * 1024,
            max_push_configs_per_task: 32,
            max_push_config_bytes: 8 * 1024,
            subscriber_buffer: 16,
            max_client_task_id_bytes: 256,
            default_page_size: 50,
            max_page_size: 100,
            cancel_grace: Duration::from_secs(2),
            idempotency_key_ttl: Duration::from_secs(24 * 3600),
            max_idempotency_key_bytes: 256,
            expire_waiting: Some(Duration::from_secs(7 * 24 * 3600)),
            max_execution: None,
            long_poll_timeout: Duration::from_secs(30),
        }
    }
}

/// How long ended tasks are kept, on any store: the ones that ended before `ended_ttl`, and,
/// oldest end first, the ended ones beyond the `keep_ended` that ended last or beyond the last
/// ones that fit in `keep_ended_bytes`, are removed with their logs and push configs. The store is
/// asked every `every`, and soon after tasks end. Tasks in progress are never removed.
///
/// ```
/// use std::time::Duration;
///
/// use agentwire_server::Retention;
///
/// let week = Retention { ended_ttl: Some(Duration::from_secs(7 * 24 * 3600)), ..Retention::default() };
/// assert_eq!(week.keep_ended, Some(10_000));
/// ```
#[derive(Debug, Clone)]
pub struct Retention {
    /// Keep at most this many ended tasks (default 10,000).
    pub keep_ended: Option<usize>,
    /// Keep at most this many bytes of ended tasks, as the store counts their logs (default
    /// 256 MiB).
    pub keep_ended_bytes: Option<u64>,
    /// Remove tasks this long after they ended (default: never for that reason).
    pub ended_ttl: Option<Duration>,
    /// How often to look when no task ends (default: a minute).
    pub every: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            keep_ended: Some(10_000),
            keep_ended_bytes: Some(256 * 1024 * 1024),
            ended_ttl: None,
            every: Duration::from_secs(60),
        }
    }
}
