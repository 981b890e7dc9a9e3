//! The stream a client reads from a task: how it opens, then the task's events from its feed
//! until an event closes it.

use std::collections::VecDeque;

use agentwire_types::dialect::Profile;
use agentwire_types::{StreamItem, TaskEventStream};

use super::broker::{EventFeed, FeedItem};

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
