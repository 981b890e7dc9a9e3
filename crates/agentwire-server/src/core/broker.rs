//! Fan-out of committed events to the streams reading a task.
//!
//! Events are committed to the store before they are published here, so the store is the source of
//! truth and this is only a doorbell with a short memory. Each task has a bounded broadcast ring;
//! a reader that falls behind the ring, or sees a gap in sequence numbers, catches up from the
//! event log instead of losing events.

use std::collections::VecDeque;
use std::sync::Arc;

use agentwire_store::{Scope, TaskStore};
use agentwire_types::{A2AError, StreamResponse};
use dashmap::DashMap;
use tokio::sync::broadcast;

/// What goes through a task's channel.
#[derive(Debug, Clone)]
pub(crate) enum Published {
    /// A committed event with its sequence number; 0 for a reply that created no task.
    Event(u64, Arc<StreamResponse>),
    /// An execution of the task finished.
    Ended,
}

/// Per-task broadcast channels, created when the first reader subscribes and removed with the
/// last one: writers publish into a channel only if somebody is listening, so an execution that
/// nobody streams costs one map lookup per event.
pub(crate) struct Broker {
    channels: DashMap<String, broadcast::Sender<Published>, foldhash::fast::RandomState>,
    capacity: usize,
}

impl Broker {
    pub(crate) fn new(capacity: usize) -> Self {
        Self { channels: DashMap::default(), capacity: capacity.max(1) }
    }

    fn subscribe(&self, task_id: &str) -> broadcast::Receiver<Published> {
        self.channels.entry(task_id.to_owned()).or_insert_with(|| broadcast::channel(self.capacity).0).subscribe()
    }

    /// Hands `item` to the task's current readers, if any; `false` if the task had none.
    pub(crate) fn publish(&self, task_id: &str, item: Published) -> bool {
        match self.channels.get(task_id) {
            // A reader may have just left; nobody listening is fine.
            Some(tx) => tx.send(item).is_ok(),
            None => false,
        }
    }

    /// Whether the task has a channel, that is, readers (or had them a moment ago).
    pub(crate) fn has_readers(&self, task_id: &str) -> bool {
        self.channels.contains_key(task_id)
    }

    fn release(&self, task_id: &str) {
        self.channels.remove_if(task_id, |_, tx| tx.receiver_count() == 0);
    }

    #[cfg(test)]
    pub(crate) fn channel_count(&self) -> usize {
        self.channels.len()
    }
}

/// What a reader gets.
#[derive(Debug, Clone)]
pub(crate) enum FeedItem {
    Event(u64, Arc<StreamResponse>),
    Ended,
}

/// An in-order, gap-free reader of one task's events after a given sequence number.
pub(crate) struct EventFeed {
    rx: Option<broadcast::Receiver<Published>>,
    broker: Arc<Broker>,
    store: Arc<dyn TaskStore>,
    scope: Scope,
    task_id: String,
    last_seq: u64,
    backlog: VecDeque<(u64, Arc<StreamResponse>)>,
}

/// How many events one catch-up read fetches.
const CATCH_UP_BATCH: usize = 256;

impl EventFeed {
    /// Subscribes now; call [`EventFeed::start_after`] once the reader's starting point is known.
    pub(crate) fn subscribe(broker: &Arc<Broker>, store: Arc<dyn TaskStore>, scope: Scope, task_id: &str) -> Self {
        Self {
            rx: Some(broker.subscribe(task_id)),
            broker: Arc::clone(broker),
            store,
            scope,
            task_id: task_id.to_owned(),
            last_seq: 0,
            backlog: VecDeque::new(),
        }
    }

    /// Skips everything up to and including `seq` (the version of the snapshot the reader has).
    pub(crate) fn start_after(&mut self, seq: u64) {
        self.last_seq = seq;
    }

    async fn catch_up(&mut self) -> Result<(), A2AError> {
        let events = self
            .store
            .events_after(&self.scope, &self.task_id, self.last_seq, CATCH_UP_BATCH)
            .await
            .map_err(crate::core::store_error)?;
        self.backlog.extend(events.into_iter().map(|e| (e.seq, e.event)));
        Ok(())
    }

    /// The next event after the last one returned; `None` once no execution can publish any more.
    pub(crate) async fn next(&mut self) -> Result<Option<FeedItem>, A2AError> {
        loop {
            if let Some((seq, event)) = self.backlog.pop_front() {
                if seq > self.last_seq {
                    self.last_seq = seq;
                    return Ok(Some(FeedItem::Event(seq, event)));
                }
                continue;
            }
            let Some(rx) = self.rx.as_mut() else { return Ok(None) };
            match rx.recv().await {
                Ok(Published::Event(0, event)) => return Ok(Some(FeedItem::Event(0, event))),
                Ok(Published::Event(seq, _)) if seq <= self.last_seq => {}
                Ok(Published::Event(seq, event)) if seq == self.last_seq + 1 => {
                    self.last_seq = seq;
                    return Ok(Some(FeedItem::Event(seq, event)));
                }
                Ok(Published::Event(..)) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    let before = self.last_seq;
                    self.catch_up().await?;
                    if self.backlog.is_empty() && before == self.last_seq {
                        // The log does not have it yet (published out of order); wait for more.
                        continue;
                    }
                }
                Ok(Published::Ended) => return Ok(Some(FeedItem::Ended)),
                Err(broadcast::error::RecvError::Closed) => return Ok(None),
            }
        }
    }
}

impl Drop for EventFeed {
    fn drop(&mut self) {
        drop(self.rx.take());
        self.broker.release(&self.task_id);
    }
}

#[cfg(test)]
mod tests {
    use agentwire_store::MemoryStore;
    use agentwire_types::{Task, TaskState, TaskStatus};

    use super::*;

    fn task(state: TaskState) -> Task {
        Task { id: "t".into(), status: TaskStatus::new(state), ..Task::default() }
    }

    #[tokio::test]
    async fn slow_reader_catches_up_from_the_log() {
        let store = MemoryStore::default();
        let scope = Scope::default();
        let broker = Arc::new(Broker::new(2));
        let mut feed = EventFeed::subscribe(&broker, Arc::new(store.clone()), scope.clone(), "t");
        let first = Arc::new(StreamResponse::Task(task(TaskState::Submitted)));
        let submitted = Arc::new(task(TaskState::Submitted));
        let mut version = store.create(&scope, submitted, std::slice::from_ref(&first)).await.unwrap();
        broker.publish("t", Published::Event(version, first));
        for _ in 0..9 {
            let event = Arc::new(StreamResponse::Task(task(TaskState::Working)));
            let working = Arc::new(task(TaskState::Working));
            version = store.commit(&scope, working, std::slice::from_ref(&event), version).await.unwrap();
            broker.publish("t", Published::Event(version, event));
        }
        broker.publish("t", Published::Ended);
        let mut seqs = Vec::new();
        while let Some(FeedItem::Event(seq, _)) = feed.next().await.unwrap() {
            seqs.push(seq);
        }
        assert_eq!(seqs, (1..=10).collect::<Vec<_>>());
        drop(feed);
        assert_eq!(broker.channel_count(), 0);
    }
}
