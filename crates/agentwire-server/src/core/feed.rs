//! Reading one task's events in order, live, without gaps, and the stream a client reads them
//! from: how it opens, then the task's events until an event closes it.
//!
//! Events are committed to the store before they are announced on the [`EventBus`], so the store
//! is the source of truth and the bus only a doorbell: a reader that falls behind the bus, sees a
//! gap in sequence numbers, or gets a notice without its event, reads the log instead.

use std::collections::VecDeque;
use std::sync::Arc;

use agentwire_store::{EventBus, Notice, Scope, Subscription, TaskStore};
use agentwire_types::dialect::Profile;
use agentwire_types::{A2AError, StreamItem, StreamResponse, TaskEventStream};
use tokio::sync::broadcast::error::RecvError;

/// What a reader gets.
#[derive(Debug, Clone)]
pub(crate) enum FeedItem {
    Event(u64, Arc<StreamResponse>),
    Ended,
}

/// An in-order, gap-free reader of one task's events after a given sequence number.
pub(crate) struct EventFeed {
    subscription: Subscription,
    store: Arc<dyn TaskStore>,
    scope: Scope,
    task_id: String,
    last_seq: u64,
    backlog: VecDeque<(u64, Arc<StreamResponse>)>,
    /// The last read of the log filled a whole batch: there may be more after it.
    more_in_log: bool,
}

impl super::Core {
    /// A reader of one task's events, subscribed now, with [`Limits::subscriber_buffer`] notices
    /// of slack before it falls back to the log.
    ///
    /// [`Limits::subscriber_buffer`]: super::Limits::subscriber_buffer
    pub(crate) fn feed(&self, scope: &Scope, task_id: &str) -> EventFeed {
        let (bus, buffer) = (&*self.bus, self.limits.subscriber_buffer);
        EventFeed::subscribe(bus, buffer, Arc::clone(&self.tasks), scope.clone(), task_id)
    }
}

/// How many events one catch-up read fetches.
const CATCH_UP_BATCH: usize = 256;

impl EventFeed {
    /// Subscribes now, with `buffer` notices of slack before the reader falls back to the log;
    /// call [`EventFeed::start_after`] once the reader's starting point is known.
    pub(crate) fn subscribe(
        bus: &dyn EventBus,
        buffer: usize,
        store: Arc<dyn TaskStore>,
        scope: Scope,
        task_id: &str,
    ) -> Self {
        Self {
            subscription: bus.subscribe(&scope, task_id, buffer),
            store,
            scope,
            task_id: task_id.to_owned(),
            last_seq: 0,
            backlog: VecDeque::new(),
            more_in_log: false,
        }
    }

    /// Skips everything up to and including `seq` (the version of the snapshot the reader has, or
    /// the last event it saw).
    pub(crate) fn start_after(&mut self, seq: u64) {
        self.last_seq = seq;
    }

    /// Reads the next batch of the log after the last event returned.
    async fn catch_up(&mut self) -> Result<(), A2AError> {
        let events = self
            .store
            .events_after(&self.scope, &self.task_id, self.last_seq, CATCH_UP_BATCH)
            .await
            .map_err(crate::core::store_error)?;
        self.more_in_log = events.len() == CATCH_UP_BATCH;
        self.backlog.extend(events.into_iter().map(|e| (e.seq, e.event)));
        Ok(())
    }

    /// Reads the events already in the log that this reader has not returned, before waiting for
    /// new ones: a reader resuming after an event it saw.
    pub(crate) async fn read_log(&mut self) -> Result<(), A2AError> {
        self.catch_up().await
    }

    /// The next event after the last one returned; `None` once no execution can publish any more.
    pub(crate) async fn next(&mut self) -> Result<Option<FeedItem>, A2AError> {
        loop {
            if let Some((seq, event)) = self.backlog.pop_front() {
                if seq > self.last_seq {
                    self.last_seq = seq;
                    if self.backlog.is_empty() && self.more_in_log {
                        self.catch_up().await?;
                    }
                    return Ok(Some(FeedItem::Event(seq, event)));
                }
                continue;
            }
            match self.subscription.recv().await {
                Ok(Notice::Event { seq: 0, event: Some(event) }) => return Ok(Some(FeedItem::Event(0, event))),
                Ok(Notice::Event { seq, .. }) if seq <= self.last_seq => {}
                Ok(Notice::Event { seq, event: Some(event) }) if seq == self.last_seq + 1 => {
                    self.last_seq = seq;
                    return Ok(Some(FeedItem::Event(seq, event)));
                }
                // A gap, a notice without its event, or notices missed: the log has them (or
                // will, once a commit announced out of order lands; then a later notice comes).
                Ok(Notice::Event { .. } | Notice::Check) | Err(RecvError::Lagged(_)) => {
                    self.catch_up().await?;
                }
                Ok(Notice::Ended) => return Ok(Some(FeedItem::Ended)),
                Err(RecvError::Closed) => return Ok(None),
            }
        }
    }
}

/// How a stream opens, before the task's events.
pub(crate) enum Opening {
    /// With nothing: a reader resuming after an event it saw.
    Nothing,
    /// With this snapshot of the task.
    Now(StreamItem),
    /// With this snapshot of a new task, once its agent takes it on: if the agent replies with a
    /// message instead, the stream is that message alone.
    UntilTakenOn(StreamItem),
}

/// The stream a client reads: the opening, then the feed until an event closes it.
/// `end_with_execution`: a send-stream also ends when its execution stops; a subscription waits
/// for later executions of the task.
pub(crate) fn task_event_stream(
    feed: EventFeed,
    opening: Opening,
    end_with_execution: bool,
    profile: &'static Profile,
) -> TaskEventStream {
    struct State {
        feed: EventFeed,
        /// Items to send before reading the feed again.
        ready: VecDeque<StreamItem>,
        /// A new task's snapshot, held until its agent takes it on.
        held: Option<StreamItem>,
        done: bool,
    }
    let (ready, held) = match opening {
        Opening::Nothing => (VecDeque::new(), None),
        Opening::Now(first) => (VecDeque::from([first]), None),
        Opening::UntilTakenOn(first) => (VecDeque::new(), Some(first)),
    };
    let state = State { feed, ready, held, done: false };
    Box::pin(futures_util::stream::unfold(state, move |mut s| async move {
        loop {
            if let Some(item) = s.ready.pop_front() {
                return Some((Ok(item), s));
            }
            if s.done {
                return None;
            }
            let item = match s.feed.next().await {
                Ok(Some(FeedItem::Event(seq, response))) => StreamItem { seq, response },
                Ok(Some(FeedItem::Ended)) if !end_with_execution => continue,
                Ok(Some(FeedItem::Ended) | None) => {
                    s.ready.extend(s.held.take());
                    s.done = true;
                    continue;
                }
                Err(error) => {
                    s.done = true;
                    return Some((Err(error), s));
                }
            };
            // A direct reply replaces the held snapshot; anything else releases it first.
            if item.seq != 0 {
                s.ready.extend(s.held.take());
            }
            s.done = item.seq == 0 || profile.closes_stream(&item.response);
            s.ready.push_back(item);
        }
    }))
}

#[cfg(test)]
mod tests {
    use agentwire_store::{LocalBus, MemoryStore};
    use agentwire_types::{Task, TaskState, TaskStatus};

    use super::*;

    fn task(state: TaskState) -> Task {
        Task { id: "t".into(), status: TaskStatus::new(state), ..Task::default() }
    }

    #[tokio::test]
    async fn slow_reader_catches_up_from_the_log() {
        let store = MemoryStore::default();
        let scope = Scope::default();
        let bus = LocalBus::default();
        let mut feed = EventFeed::subscribe(&bus, 2, Arc::new(store.clone()), scope.clone(), "t");
        let first = Arc::new(StreamResponse::Task(task(TaskState::Submitted)));
        let submitted = Arc::new(task(TaskState::Submitted));
        let mut version = store.create(&scope, submitted, std::slice::from_ref(&first), None).await.unwrap();
        bus.publish(&scope, "t", Notice::Event { seq: version, event: Some(first) });
        for i in 0..9 {
            let event = Arc::new(StreamResponse::Task(task(TaskState::Working)));
            let working = Arc::new(task(TaskState::Working));
            version = store.commit(&scope, working, std::slice::from_ref(&event), version).await.unwrap();
            // Every other notice comes without its event, as from another process.
            let event = (i % 2 == 0).then_some(event);
            bus.publish(&scope, "t", Notice::Event { seq: version, event });
        }
        bus.publish(&scope, "t", Notice::Ended);
        let mut seqs = Vec::new();
        while let Some(FeedItem::Event(seq, _)) = feed.next().await.unwrap() {
            seqs.push(seq);
        }
        assert_eq!(seqs, (1..=10).collect::<Vec<_>>());
        drop(feed);
        assert_eq!(bus.channel_count(), 0);
    }
}
