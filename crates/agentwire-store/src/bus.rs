//! Fan-out of committed events, and cancellation of executions, across everything that serves one
//! store.
//!
//! Both are doorbells: the store holds the truth. An [`EventBus`] tells readers that a task's log
//! grew (a reader who misses a notice reads the log), and a [`CancelSignal`] asks the executions of
//! a task to stop, wherever they run. The in-process implementations here serve a single process;
//! a shared backend (PostgreSQL) wraps them to carry notices between processes.
//!
//! Beside the notices of one task, the bus carries the feed of every [`Commit`] this process
//! makes, for consumers that follow all tasks (webhook delivery, metrics, a console). A consumer
//! that falls further behind than the feed holds is told it lagged and reads the store.

use std::sync::Arc;

use agentwire_types::{StreamResponse, TaskState};
use dashmap::DashMap;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::Scope;

/// What a task's readers are told.
#[derive(Debug, Clone)]
pub enum Notice {
    /// Event `seq` of the task was committed. `event` is the event itself when the publisher had
    /// it at hand; a reader given none reads it from the log. Sequence 0 is a direct reply that
    /// belongs to no task's log, and always carries its event.
    Event {
        /// Its position in the task's log.
        seq: u64,
        /// The event, if carried.
        event: Option<Arc<StreamResponse>>,
    },
    /// An execution of the task ended.
    Ended,
    /// Notices may have been lost (a connection between processes dropped): read the log.
    Check,
}

/// One commit to a task's log, as the process that made it announces it.
#[derive(Debug, Clone)]
pub struct Commit {
    /// The task's scope.
    pub scope: Scope,
    /// The task.
    pub task_id: String,
    /// The task's version after the commit: the number of its last event.
    pub version: u64,
    /// The task's state after the commit.
    pub state: TaskState,
    /// The events committed, in order; the last is numbered `version`.
    pub events: Vec<Arc<StreamResponse>>,
    /// The trace context of the work that made the commit, when it is traced: what the commit
    /// sets off (a webhook delivery) continues that trace.
    pub trace: Option<Arc<TraceContext>>,
}

/// A W3C trace context: which trace and span a piece of work belongs to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceContext {
    /// The trace.
    pub trace_id: [u8; 16],
    /// The span within it.
    pub span_id: [u8; 8],
    /// The trace flags (bit 0: sampled).
    pub flags: u8,
    /// Vendor entries, as a `tracestate` header; empty when there are none.
    pub tracestate: String,
}

impl Commit {
    /// The number of the commit's first event.
    pub fn first_seq(&self) -> u64 {
        (self.version + 1).saturating_sub(self.events.len() as u64)
    }
}

/// What the followers of the feed are told.
#[derive(Debug, Clone)]
pub enum FeedNotice {
    /// A commit this process made.
    Commit(Arc<Commit>),
    /// What the followers owe may be in the store with no commit here to tell of it: an instance
    /// that made commits is gone. Read the store.
    Check,
}

/// A follower of every commit announced in this process, from when it started following.
/// [`broadcast::error::RecvError::Lagged`] means commits were missed: read the store.
pub type CommitFeed = broadcast::Receiver<FeedNotice>;

/// Where committed events are announced, per task, and the feed of every commit.
pub trait EventBus: Send + Sync + 'static {
    /// Tells the task's current readers, wherever they are. Publishing to a task without readers
    /// is cheap.
    fn publish(&self, scope: &Scope, task_id: &str, notice: Notice);

    /// Announces a commit: each of its events to the task's readers, wherever they are, and the
    /// commit to this process's [`feed`](Self::feed). Cheap for a task without readers and a feed
    /// without followers.
    fn announce(&self, commit: Commit);

    /// Follows every commit announced in this process from now on.
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use agentwire_store::{Commit, EventBus, FeedNotice, LocalBus, Scope};
    /// use agentwire_types::{StreamResponse, Task, TaskState};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let bus = LocalBus::default();
    /// let mut feed = bus.feed();
    /// let event = Arc::new(StreamResponse::Task(Task { id: "t1".into(), ..Task::default() }));
    /// let commit = Commit {
    ///     scope: Scope::default(),
    ///     task_id: "t1".into(),
    ///     version: 1,
    ///     state: TaskState::Submitted,
    ///     events: vec![event],
    ///     trace: None,
    /// };
    /// bus.announce(commit);
    /// let Ok(FeedNotice::Commit(followed)) = feed.recv().await else { panic!("a commit") };
    /// assert_eq!((followed.task_id.as_str(), followed.first_seq(), followed.state), ("t1", 1, TaskState::Submitted));
    /// # });
    /// ```
    fn feed(&self) -> CommitFeed;

    /// Starts listening to a task; the subscription ends when it is dropped. `buffer` is how many
    /// notices the task's readers in this process may fall behind by before they are told they
    /// lagged (and read the log): the first reader of a task sets it for the task's channel.
    fn subscribe(&self, scope: &Scope, task_id: &str, buffer: usize) -> Subscription;

    /// Whether notices from the other processes serving the store reach this one now. A bus that
    /// crosses processes is disconnected while the connection that carries them is down (readers
    /// then fall back on the log); one of a single process is always connected.
    fn connected(&self) -> bool {
        true
    }
}

/// A listener on one task's notices.
pub struct Subscription {
    rx: broadcast::Receiver<Notice>,
    channels: Arc<Channels>,
    key: String,
}

impl Subscription {
    /// The next notice. [`broadcast::error::RecvError::Lagged`] means notices were missed: read
    /// the log.
    pub async fn recv(&mut self) -> Result<Notice, broadcast::error::RecvError> {
        self.rx.recv().await
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        // Closes this receiver before asking whether the channel still has any.
        self.rx = broadcast::channel(1).1;
        self.channels.release(&self.key);
    }
}

/// The key of a task's channel: tasks of different scopes may share an id.
fn channel_key(scope: &Scope, task_id: &str) -> String {
    // Joined rather than formatted: every publish, and every execution's start and end, makes one.
    [scope.tenant.as_str(), scope.owner.as_str(), task_id].join("\u{1f}")
}

type Map<K, V> = DashMap<K, V, foldhash::fast::RandomState>;

/// Per-task broadcast channels, created with a task's first reader and removed with its last.
#[derive(Default)]
struct Channels {
    map: Map<String, broadcast::Sender<Notice>>,
}

impl Channels {
    fn release(&self, key: &str) {
        self.map.remove_if(key, |_, tx| tx.receiver_count() == 0);
    }
}

/// The [`EventBus`] of one process: a bounded broadcast ring per task that has readers, of the
/// size its first reader asks for, and one for the feed of commits. A reader that falls further
/// behind is told it lagged and reads the log instead.
#[derive(Clone)]
pub struct LocalBus {
    channels: Arc<Channels>,
    feed: broadcast::Sender<FeedNotice>,
}

/// Commits the feed holds for its slowest follower by default.
const FEED_CAPACITY: usize = 4096;

impl Default for LocalBus {
    fn default() -> Self {
        Self::with_feed_capacity(FEED_CAPACITY)
    }
}

impl LocalBus {
    /// A bus whose feed holds `capacity` commits for its slowest follower (default 4096): one
    /// that falls further behind is told it lagged, and reads the store.
    pub fn with_feed_capacity(capacity: usize) -> Self {
        Self { channels: Arc::default(), feed: broadcast::channel(capacity.max(1)).0 }
    }

    /// Whether any reader in this process listens to the task.
    pub fn has_readers(&self, scope: &Scope, task_id: &str) -> bool {
        self.channels.map.contains_key(&channel_key(scope, task_id))
    }

    /// Tells every reader in this process to read the log: notices may have been lost.
    pub fn check_all(&self) {
        for channel in self.channels.map.iter() {
            let _ = channel.send(Notice::Check);
        }
    }

    /// Tells the followers of the feed to read the store: an instance that shared it is gone,
    /// and what it committed may still be owed.
    pub fn check_feed(&self) {
        if self.feed.receiver_count() > 0 {
            let _ = self.feed.send(FeedNotice::Check);
        }
    }

    /// How many tasks have readers here.
    pub fn channel_count(&self) -> usize {
        self.channels.map.len()
    }
}

impl EventBus for LocalBus {
    fn publish(&self, scope: &Scope, task_id: &str, notice: Notice) {
        if let Some(tx) = self.channels.map.get(&channel_key(scope, task_id)) {
            // A reader may have just left; nobody listening is fine.
            let _ = tx.send(notice);
        }
    }

    fn subscribe(&self, scope: &Scope, task_id: &str, buffer: usize) -> Subscription {
        let key = channel_key(scope, task_id);
        let rx =
            self.channels.map.entry(key.clone()).or_insert_with(|| broadcast::channel(buffer.max(1)).0).subscribe();
        Subscription { rx, channels: Arc::clone(&self.channels), key }
    }

    fn announce(&self, commit: Commit) {
        if let Some(tx) = self.channels.map.get(&channel_key(&commit.scope, &commit.task_id)) {
            for (event, seq) in commit.events.iter().zip(commit.first_seq()..) {
                let _ = tx.send(Notice::Event { seq, event: Some(Arc::clone(event)) });
            }
        }
        if self.feed.receiver_count() > 0 {
            // A follower may have just left; nobody following is fine.
            let _ = self.feed.send(FeedNotice::Commit(Arc::new(commit)));
        }
    }

    fn feed(&self) -> CommitFeed {
        self.feed.subscribe()
    }
}

/// Asks the executions of a task to stop, wherever they run. Executions are registered here while
/// they run, so a shared implementation also knows which tasks lost theirs when a process died.
#[async_trait::async_trait]
pub trait CancelSignal: Send + Sync + 'static {
    /// Registers an execution of the task in this process. Its token is canceled when any process
    /// asks; [`CancelSignal::finished`] must follow when the execution ends.
    fn started(&self, scope: &Scope, task_id: &str) -> CancellationToken;

    /// The execution registered by [`CancelSignal::started`] ended.
    fn finished(&self, scope: &Scope, task_id: &str);

    /// Asks every execution of the task to stop. Returns whether one may be running, here or
    /// elsewhere.
    async fn cancel(&self, scope: &Scope, task_id: &str) -> bool;

    /// Tasks an execution was working on (SUBMITTED or WORKING) in a process that is gone, at most
    /// `limit`: nobody will finish them. The default, for a single process, finds none.
    async fn orphans(&self, limit: usize) -> crate::Result<Vec<(Scope, String)>> {
        let _ = limit;
        Ok(Vec::new())
    }

    /// How often to look for [`orphans`](Self::orphans); `None` (the default) never.
    fn orphan_check_interval(&self) -> Option<std::time::Duration> {
        None
    }
}

/// The executions running for one task in this process; one token cancels them all.
#[derive(Default)]
struct Executions {
    token: CancellationToken,
    count: usize,
    task: (Scope, String),
}

/// The [`CancelSignal`] of one process.
#[derive(Clone, Default)]
pub struct LocalCancel {
    running: Arc<Map<String, Executions>>,
}

impl LocalCancel {
    /// Whether an execution of the task runs in this process.
    pub fn is_running(&self, scope: &Scope, task_id: &str) -> bool {
        self.running.contains_key(&channel_key(scope, task_id))
    }

    /// The tasks an execution runs for in this process.
    pub fn running(&self) -> Vec<(Scope, String)> {
        self.running.iter().map(|executions| executions.task.clone()).collect()
    }
}

#[async_trait::async_trait]
impl CancelSignal for LocalCancel {
    fn started(&self, scope: &Scope, task_id: &str) -> CancellationToken {
        let task = || Executions { task: (scope.clone(), task_id.to_owned()), ..Executions::default() };
        let mut entry = self.running.entry(channel_key(scope, task_id)).or_insert_with(task);
        entry.count += 1;
        entry.token.clone()
    }

    fn finished(&self, scope: &Scope, task_id: &str) {
        self.running.remove_if_mut(&channel_key(scope, task_id), |_, e| {
            e.count = e.count.saturating_sub(1);
            e.count == 0
        });
    }

    async fn cancel(&self, scope: &Scope, task_id: &str) -> bool {
        self.cancel_here(scope, task_id)
    }
}

impl LocalCancel {
    /// Cancels the task's executions in this process; whether there was one.
    pub fn cancel_here(&self, scope: &Scope, task_id: &str) -> bool {
        match self.running.get(&channel_key(scope, task_id)) {
            Some(executions) => {
                executions.token.cancel();
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_notice_reaches_readers_of_its_task_only() {
        let bus = LocalBus::default();
        let (alice, bob) = (Scope::new("", "alice"), Scope::new("", "bob"));
        let mut reader = bus.subscribe(&alice, "t", 4);
        let mut other = bus.subscribe(&bob, "t", 4);
        bus.publish(&alice, "t", Notice::Event { seq: 1, event: None });
        assert!(matches!(reader.recv().await, Ok(Notice::Event { seq: 1, .. })));
        assert!(other.rx.try_recv().is_err());
        drop((reader, other));
        assert_eq!(bus.channel_count(), 0);
    }

    #[tokio::test]
    async fn a_commit_reaches_its_task_readers_and_every_follower_of_the_feed() {
        let bus = LocalBus::default();
        let scope = Scope::default();
        let mut reader = bus.subscribe(&scope, "t1", 4);
        let mut follower = bus.feed();
        let event = Arc::new(StreamResponse::Task(agentwire_types::Task::default()));
        let commit = |task_id: &str, version| Commit {
            scope: scope.clone(),
            task_id: task_id.into(),
            version,
            state: TaskState::Working,
            events: vec![Arc::clone(&event), Arc::clone(&event)],
            trace: None,
        };
        bus.announce(commit("t1", 7));
        bus.announce(commit("t2", 3));
        for expected in [6, 7] {
            assert!(matches!(reader.recv().await, Ok(Notice::Event { seq, event: Some(_) }) if seq == expected));
        }
        let mut followed = Vec::new();
        for _ in 0..2 {
            let Ok(FeedNotice::Commit(commit)) = follower.recv().await else { panic!("a commit") };
            followed.push((commit.task_id.clone(), commit.first_seq()));
        }
        assert_eq!(followed, [("t1".to_owned(), 6), ("t2".to_owned(), 2)], "every task's commits, in order");
        bus.check_feed();
        assert!(matches!(follower.recv().await, Ok(FeedNotice::Check)), "told to read the store");
    }

    #[tokio::test]
    async fn a_follower_further_behind_than_the_feed_is_told_it_lagged() {
        let bus = LocalBus::with_feed_capacity(2);
        let mut follower = bus.feed();
        for version in 1..=3 {
            let commit = Commit {
                scope: Scope::default(),
                task_id: "t".into(),
                version,
                state: TaskState::Working,
                events: Vec::new(),
                trace: None,
            };
            bus.announce(commit);
        }
        assert!(matches!(follower.recv().await, Err(broadcast::error::RecvError::Lagged(1))));
    }

    #[tokio::test]
    async fn a_reader_further_behind_than_its_buffer_is_told_it_lagged() {
        let bus = LocalBus::default();
        let scope = Scope::default();
        let mut reader = bus.subscribe(&scope, "t", 2);
        for seq in 1..=3 {
            bus.publish(&scope, "t", Notice::Event { seq, event: None });
        }
        assert!(matches!(reader.recv().await, Err(broadcast::error::RecvError::Lagged(1))));
        assert!(matches!(reader.recv().await, Ok(Notice::Event { seq: 2, .. })));
    }

    #[tokio::test]
    async fn cancel_reaches_every_execution_of_the_task() {
        let signal = LocalCancel::default();
        let scope = Scope::default();
        let (first, second) = (signal.started(&scope, "t"), signal.started(&scope, "t"));
        assert!(!signal.cancel(&scope, "other").await);
        assert!(signal.cancel(&scope, "t").await);
        assert!(first.is_cancelled() && second.is_cancelled());
        signal.finished(&scope, "t");
        assert!(signal.is_running(&scope, "t"));
        assert_eq!(signal.running(), [(scope.clone(), "t".to_owned())]);
        signal.finished(&scope, "t");
        assert!(!signal.is_running(&scope, "t"));
    }
}
