//! What the instances serving one store share besides its tasks: the counts behind each caller's
//! quotas and budgets, the count of tasks in progress, and word of the commits the others make.

use std::time::Duration;

use agentwire_types::TaskState;
use async_trait::async_trait;
use tokio::sync::watch;

use crate::Result;

/// What a budget's holder spent in a window: model tokens (input and output) and tool rounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    /// Input and output tokens.
    pub tokens: u64,
    /// Rounds of tool calls.
    pub tool_rounds: u64,
}

/// State the instances serving one store agree on through it. A store served by one process
/// has none: that process's memory is the truth. `PostgresStore::backend` makes one for each
/// instance ([`Backend::shared`](crate::Backend::shared)).
#[async_trait]
pub trait SharedState: Send + Sync + 'static {
    /// Takes a token of `caller`'s bucket of requests (`burst` deep, refilled at `rate` a
    /// second), counted alike by every instance; or says how long until there is one.
    async fn take_token(&self, caller: &str, rate: f64, burst: f64) -> Result<std::result::Result<(), Duration>>;

    /// Counts one more stream of `caller` open here, if fewer than `max` are open across the
    /// live instances; `false` if not.
    async fn open_stream(&self, caller: &str, max: usize) -> Result<bool>;

    /// Counts one stream of `caller` fewer open here.
    async fn close_stream(&self, caller: &str) -> Result<()>;

    /// Adds `tokens` and `tool_rounds` to what `holder` spent in the window that began at
    /// `window_start` (ms since the epoch; what it spent in an earlier window is forgotten), and
    /// returns the sums, counted alike by every instance. A charge of nothing only reads.
    async fn charge_budget(&self, holder: &str, window_start: i64, tokens: u64, tool_rounds: u64) -> Result<Spent>;

    /// What each holder spent in its current window, as the charges left it: `(holder, window
    /// start, spent)`, oldest windows included (a reader ignores those before its own).
    async fn budgets_spent(&self) -> Result<Vec<(String, i64, Spent)>>;

    /// Forgets what `holder` spent; whether it had spent anything.
    async fn reset_budget(&self, holder: &str) -> Result<bool>;

    /// The store's tasks in progress by tenant and state, for one instance at a time to report
    /// (the others get none): summed over the instances, as dashboards do, the counts are the
    /// store's.
    async fn tasks_in_progress_to_report(&self) -> Result<Vec<(String, TaskState, u64)>>;

    /// A count that goes up as commits are made anywhere (this instance's among them), for those
    /// who show every task as it changes.
    fn commits(&self) -> watch::Receiver<u64>;
}
