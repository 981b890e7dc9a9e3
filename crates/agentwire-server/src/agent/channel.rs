//! The bounded queue between an agent's [`TaskUpdater`](super::TaskUpdater)s and the server.
//!
//! A purpose-built channel rather than tokio's mpsc: every execution has one, and tokio's
//! allocates its slots in blocks of 32 (512 bytes for an idle execution, against about 200 here).
//! Events go through a mutex-guarded queue. The one receiver is a [`Stream`]: when the queue is
//! empty it leaves its waker in the queue's state, and the sender that queues the next event (or
//! the last one to leave) wakes it. Senders wait for room on a [`Notify`], which the receiver
//! signals with `notify_one`; a sender registers before its second look at the queue, so a read
//! between its look and its wait is not missed.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use futures_util::Stream;
use tokio::sync::Notify;

use super::AgentEvent;

/// Events are boxed so that an idle queue holds pointers, not events.
type Item = Box<AgentEvent>;

struct Shared {
    state: Mutex<State>,
    /// Signalled when room is made or the receiver leaves.
    writable: Notify,
    capacity: usize,
}

struct State {
    queue: VecDeque<Item>,
    senders: usize,
    receiver_gone: bool,
    /// The receiver, waiting for an event or for the last sender to leave.
    reader: Option<Waker>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock, but a poisoned queue is still a valid queue.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A queue holding up to `capacity` events.
pub(super) fn channel(capacity: usize) -> (Sender, Receiver) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State { queue: VecDeque::new(), senders: 1, receiver_gone: false, reader: None }),
        writable: Notify::new(),
        capacity: capacity.max(1),
    });
    (Sender { shared: Arc::clone(&shared) }, Receiver { shared })
}

/// The receiver is gone; the event was not queued.
#[derive(Debug, thiserror::Error)]
#[error("the execution's events are no longer read")]
pub(super) struct Closed;

pub(super) struct Sender {
    shared: Arc<Shared>,
}

impl Sender {
    /// Queues `item`, waiting while the queue is full.
    pub(super) async fn send(&self, item: Item) -> Result<(), Closed> {
        let mut item = Some(item);
        loop {
            if self.try_push(&mut item)? {
                return Ok(());
            }
            // Registered before the second look, so neither a read nor the receiver leaving
            // between that look and the wait goes unnoticed.
            let room = self.shared.writable.notified();
            let mut room = std::pin::pin!(room);
            room.as_mut().enable();
            if self.try_push(&mut item)? {
                return Ok(());
            }
            room.await;
        }
    }

    /// Queues the item if there is room; `false` if the queue is full.
    fn try_push(&self, item: &mut Option<Item>) -> Result<bool, Closed> {
        let mut state = self.shared.lock();
        if state.receiver_gone {
            return Err(Closed);
        }
        if state.queue.len() >= self.shared.capacity {
            return Ok(false);
        }
        state.queue.extend(item.take());
        let reader = state.reader.take();
        drop(state);
        if let Some(reader) = reader {
            reader.wake();
        }
        Ok(true)
    }
}

impl Clone for Sender {
    fn clone(&self) -> Self {
        self.shared.lock().senders += 1;
        Self { shared: Arc::clone(&self.shared) }
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        let reader = {
            let mut state = self.shared.lock();
            state.senders -= 1;
            if state.senders == 0 {
                state.reader.take()
            } else {
                None
            }
        };
        if let Some(reader) = reader {
            reader.wake();
        }
    }
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

pub(super) struct Receiver {
    shared: Arc<Shared>,
}

/// The events, in order; ends once every sender is gone and the queue is empty.
impl Stream for Receiver {
    type Item = AgentEvent;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        let mut state = self.shared.lock();
        if let Some(item) = state.queue.pop_front() {
            drop(state);
            self.shared.writable.notify_one();
            return Poll::Ready(Some(*item));
        }
        if state.senders == 0 {
            return Poll::Ready(None);
        }
        match &mut state.reader {
            Some(waker) => waker.clone_from(cx.waker()),
            none => *none = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let dropped = {
            let mut state = self.shared.lock();
            state.receiver_gone = true;
            std::mem::take(&mut state.queue)
        };
        // Every waiting sender must see that nobody reads any more.
        self.shared.writable.notify_waiters();
        drop(dropped);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use agentwire_types::TaskState;
    use futures_util::StreamExt;

    use super::*;

    fn event(state: TaskState) -> Item {
        Box::new(AgentEvent::Status { state, message: None, metadata: None })
    }

    fn state_of(event: &AgentEvent) -> TaskState {
        match *event {
            AgentEvent::Status { state, .. } => state,
            _ => unreachable!("the tests send statuses only"),
        }
    }

    #[tokio::test]
    async fn events_arrive_in_order_and_the_end_is_seen() {
        let (tx, mut rx) = channel(8);
        let second = tx.clone();
        tx.send(event(TaskState::Working)).await.unwrap();
        second.send(event(TaskState::Completed)).await.unwrap();
        drop((tx, second));
        assert_eq!(state_of(&rx.next().await.unwrap()), TaskState::Working);
        assert_eq!(state_of(&rx.next().await.unwrap()), TaskState::Completed);
        assert!(rx.next().await.is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_queue_holds_the_sender_until_an_event_is_read() {
        let (tx, mut rx) = channel(1);
        tx.send(event(TaskState::Working)).await.unwrap();
        let mut blocked = tokio::spawn(async move { tx.send(event(TaskState::Completed)).await });
        assert!(tokio::time::timeout(Duration::from_secs(1), &mut blocked).await.is_err(), "sent into a full queue");
        assert_eq!(state_of(&rx.next().await.unwrap()), TaskState::Working);
        blocked.await.unwrap().unwrap();
        assert_eq!(state_of(&rx.next().await.unwrap()), TaskState::Completed);
        assert!(rx.next().await.is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn a_receiver_waits_for_the_next_event() {
        let (tx, mut rx) = channel(4);
        let reader = tokio::spawn(async move { rx.next().await.map(|item| state_of(&item)) });
        tokio::time::sleep(Duration::from_secs(1)).await;
        tx.send(event(TaskState::InputRequired)).await.unwrap();
        assert_eq!(reader.await.unwrap(), Some(TaskState::InputRequired));
    }

    #[tokio::test(start_paused = true)]
    async fn senders_fail_once_the_receiver_is_gone_even_while_waiting() {
        let (tx, rx) = channel(1);
        tx.send(event(TaskState::Working)).await.unwrap();
        let waiting = tx.clone();
        let blocked = tokio::spawn(async move { waiting.send(event(TaskState::Completed)).await });
        tokio::time::sleep(Duration::from_secs(1)).await;
        drop(rx);
        assert!(blocked.await.unwrap().is_err());
        assert!(tx.send(event(TaskState::Failed)).await.is_err());
    }
}
