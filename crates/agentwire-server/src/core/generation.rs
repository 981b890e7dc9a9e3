//! The dev-1.1 draft's task generation (docs/COMPATIBILITY.md), for callers that ask for version
//! 1.1 ([`RequestContext::task_generations`]).
//!
//! A task's generation is its version in the store: the length of its log, which the task's
//! creation starts at 1 and every committed change advances by one (each status or artifact
//! update, and each client message, which is logged but not streamed). An event's generation is
//! its sequence number in the log, so the events of a stream carry consecutive generations but
//! for the client messages between them. Nothing is stored for it: answers to 1.1 callers are
//! stamped on the way out, and answers to everyone else carry none.

use std::sync::Arc;

use agentwire_store::Scope;
use agentwire_types::{A2AError, Result, Role, StreamItem, StreamResponse, Task, TaskEventStream, TaskState};
use futures_util::StreamExt;

use super::feed::FeedItem;
use super::Core;
use crate::RequestContext;

/// A store version as the draft's `int64` generation.
pub(crate) fn generation(version: u64) -> i64 {
    i64::try_from(version).unwrap_or(i64::MAX)
}

/// `task` at `version`, carrying its generation for a caller that asked for it
/// ([`RequestContext::task_generations`]).
pub(crate) fn stamped(wanted: bool, mut task: Task, version: u64) -> Task {
    if wanted {
        task.generation = Some(generation(version));
    }
    task
}

/// `stream` with each task, status and artifact update carrying its generation, and without the
/// client's own messages (the draft streams none), for a caller that asked for it.
pub(crate) fn stamped_stream(wanted: bool, stream: TaskEventStream) -> TaskEventStream {
    if !wanted {
        return stream;
    }
    let client_message = |item: &Result<StreamItem>| {
        matches!(item, Ok(StreamItem { seq, response }) if *seq != 0
            && matches!(&**response, StreamResponse::Message(message) if message.role == Role::User))
    };
    Box::pin(stream.filter(move |item| std::future::ready(!client_message(item))).map(|item| item.map(stamp_item)))
}

fn stamp_item(item: StreamItem) -> StreamItem {
    if item.seq == 0 {
        // A direct reply, which belongs to no task.
        return item;
    }
    let generation = Some(generation(item.seq));
    let mut response = Arc::unwrap_or_clone(item.response);
    match &mut response {
        StreamResponse::Task(task) => task.generation = generation,
        StreamResponse::StatusUpdate(update) => update.generation = generation,
        StreamResponse::ArtifactUpdate(update) => update.generation = generation,
        StreamResponse::Message(_) => {}
    }
    StreamItem { seq: item.seq, response: Arc::new(response) }
}

impl Core {
    /// Refuses a caller asking for the draft where the handler does not serve it, as for any
    /// version it does not speak.
    pub(crate) fn check_draft(&self, ctx: &RequestContext) -> Result<()> {
        if ctx.task_generations && !self.card.protocol_draft_1_1 {
            return Err(A2AError::version_not_supported("1.1", &crate::SUPPORTED_VERSIONS));
        }
        Ok(())
    }

    /// GetTask's long poll: the task once its generation is past `seen`, at once if it is
    /// already or the task has ended (an ended task changes no more), else when its next change
    /// is committed, by this process or another sharing the store, or after
    /// [`Limits::long_poll_timeout`](super::Limits::long_poll_timeout) as it is then. Returns
    /// the task and its version.
    pub(crate) async fn task_after(&self, scope: &Scope, task_id: &str, seen: i64) -> Result<(Arc<Task>, u64)> {
        // Subscribed before the read, like every reader: a change committed in between is then
        // on the feed. Polls arriving together share one read (a large task's read is its size
        // in memory), which may have begun before this subscription: the log after the version
        // read is read once more, so that nothing committed in between is missed.
        let mut feed = self.feed(scope, task_id);
        let record = self.shared_loads.load(&self.tasks, scope, task_id, 0).await?;
        if generation(record.version) > seen || record.task.status.state.is_terminal() {
            return Ok((record.task, record.version));
        }
        feed.start_after(record.version);
        feed.read_log().await?;
        let next_change = async {
            loop {
                match feed.next().await {
                    Ok(Some(FeedItem::Event(seq, event)))
                        if seq != 0
                            && (generation(seq) > seen || event.task_state().is_some_and(TaskState::is_terminal)) =>
                    {
                        return seq;
                    }
                    Ok(Some(_)) => {}
                    // The server is stopping, or the log cannot be read: answer with what is.
                    Ok(None) | Err(_) => return record.version,
                }
            }
        };
        let woken_at = match tokio::time::timeout(self.limits.long_poll_timeout, next_change).await {
            Ok(seq) => seq,
            Err(_) => {
                tracing::debug!(task_id, "a long poll timed out");
                record.version
            }
        };
        // Every poll woken by the same change wants the task as it is now: they share the read.
        let record = self.shared_loads.load(&self.tasks, scope, task_id, woken_at).await?;
        Ok((record.task, record.version))
    }
}
