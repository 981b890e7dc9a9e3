//! GetTask, ListTasks, CancelTask and SubscribeToTask.

use std::sync::Arc;
use std::time::Duration;

use agentwire_store::{PageToken, TaskQuery};
use agentwire_types::{
    A2AError, CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse, Result, StreamResponse,
    SubscribeToTaskRequest, Task, TaskState,
};

use super::apply::cancel_events;
use super::feed::{task_event_stream, FeedItem, Opening};
use super::generation::{stamped, stamped_stream};
use super::{store_error, validate, Core};
use crate::context::scope;
use crate::RequestContext;
use agentwire_store::Scope;
use agentwire_types::dialect::{EndedSubscription, Profile};
use agentwire_types::{StreamItem, TaskEventStream};

impl Core {
    pub(crate) async fn get_task(&self, ctx: &RequestContext, req: GetTaskRequest) -> Result<Task> {
        let history_length = validate::history_length(req.history_length)?;
        let scope = scope(ctx, &req.tenant);
        let (task, version) = match req.current_generation.filter(|_| ctx.task_generations) {
            Some(seen) => self.task_after(&scope, &req.id, seen).await?,
            None => {
                let record = self.load(&scope, &req.id).await?;
                (record.task, record.version)
            }
        };
        Ok(stamped(ctx.task_generations, task.view(history_length, true), version))
    }

    pub(crate) async fn list_tasks(&self, ctx: &RequestContext, req: ListTasksRequest) -> Result<ListTasksResponse> {
        let page_size = match req.page_size {
            None | Some(0) => self.limits.default_page_size,
            Some(n) => {
                usize::try_from(n).ok().filter(|n| (1..=self.limits.max_page_size).contains(n)).ok_or_else(|| {
                    A2AError::invalid_params(format!(
                        "pageSize must be between 1 and {} (got {n})",
                        self.limits.max_page_size
                    ))
                })?
            }
        };
        let history_length = validate::history_length(req.history_length)?;
        let after = match req.page_token.as_str() {
            "" => None,
            token => Some(PageToken::decode(token).ok_or_else(|| A2AError::invalid_params("pageToken is not valid"))?),
        };
        // A page ends early rather than grow past the response budget; it always has one task, so
        // that paging goes on.
        let query = TaskQuery {
            context_id: Some(req.context_id.clone()).filter(|c| !c.is_empty()),
            state: req.status.filter(|s| *s != TaskState::Unspecified),
            status_after: req.status_timestamp_after,
            page_size,
            after,
            history_length,
            include_artifacts: req.include_artifacts.unwrap_or(false),
            max_bytes: Some(self.limits.max_list_bytes),
        };
        let scope = scope(ctx, &req.tenant);
        let page = self.tasks.list(&scope, &query).await.map_err(store_error)?;
        Ok(ListTasksResponse {
            tasks: page.tasks,
            next_page_token: page.next.map(|t| t.encode()).unwrap_or_default(),
            page_size: i32::try_from(page_size).unwrap_or(i32::MAX),
            total_size: i32::try_from(page.total).unwrap_or(i32::MAX),
        })
    }

    pub(crate) async fn cancel_task(&self, ctx: &RequestContext, req: CancelTaskRequest) -> Result<Task> {
        let scope = scope(ctx, &req.tenant);
        // Subscribed before the snapshot, like every reader: an execution that ends in between
        // then announces its end to this feed.
        let mut feed = self.feed(&scope, &req.id);
        let record = self.load(&scope, &req.id).await?;
        if record.task.status.state.is_terminal() {
            return Err(A2AError::task_not_cancelable(&req.id, record.task.status.state));
        }
        if self.cancel.cancel(&scope, &req.id).await {
            // Cooperative: the execution was asked to stop; give it time to say so itself.
            feed.start_after(record.version);
            let wait = async {
                while let Ok(Some(item)) = feed.next().await {
                    match item {
                        FeedItem::Ended => break,
                        FeedItem::Event(_, e) if e.task_state().is_some_and(TaskState::is_terminal) => break,
                        FeedItem::Event(..) => {}
                    }
                }
            };
            let _ = tokio::time::timeout(self.limits.cancel_grace + Duration::from_secs(1), wait).await;
        }
        let (task, version) = self.mutate(&scope, &req.id, &mut |task| Ok(cancel_events(task))).await?;
        if task.status.state != TaskState::Canceled {
            return Err(A2AError::task_not_cancelable(&req.id, task.status.state));
        }
        Ok(stamped(ctx.task_generations, Arc::unwrap_or_clone(task), version))
    }

    pub(crate) async fn subscribe_to_task(
        &self,
        ctx: &RequestContext,
        req: SubscribeToTaskRequest,
    ) -> Result<TaskEventStream> {
        if !self.streaming_enabled() {
            return Err(A2AError::unsupported_operation("streaming is not supported by this agent"));
        }
        let scope = scope(ctx, &req.tenant);
        let profile = ctx.dialect.profile();
        let stream =
            self.task_stream(&scope, &req.id, ctx.last_event_id, profile, profile.subscribe_to_ended()).await?;
        Ok(stamped_stream(ctx.task_generations, stream))
    }

    /// The stream of a task's events from now on, opening with the task as it is; with
    /// `last_event_id`, the events after it instead. A task that has ended is answered as
    /// `ended` says.
    pub(crate) async fn task_stream(
        &self,
        scope: &Scope,
        task_id: &str,
        last_event_id: Option<u64>,
        profile: &'static Profile,
        ended_subscription: EndedSubscription,
    ) -> Result<TaskEventStream> {
        // Subscribe before reading the snapshot so that nothing committed in between is missed.
        let mut feed = self.feed(scope, task_id);
        let record = self.load(scope, task_id).await?;
        let ended = record.task.status.state.is_terminal();
        if let Some(seen) = last_event_id.filter(|seen| *seen <= record.version) {
            // A resumed stream: the events after the last one the client saw, even if the task
            // ended meanwhile, then the live ones.
            if ended && seen == record.version {
                return Ok(Box::pin(futures_util::stream::empty()));
            }
            feed.start_after(seen);
            feed.read_log().await?;
            return Ok(task_event_stream(feed, Opening::Nothing, ended, profile));
        }
        if ended && ended_subscription == EndedSubscription::Refused {
            return Err(A2AError::unsupported_operation(format!(
                "task {task_id} is {}; there is nothing left to subscribe to",
                record.task.status.state
            ))
            .with_metadata("taskId", task_id));
        }
        feed.start_after(record.version);
        let first = StreamItem {
            seq: record.version,
            response: Arc::new(StreamResponse::Task(Arc::unwrap_or_clone(record.task))),
        };
        if ended {
            // v0.3 and the legacy family answer with the ended task, then close the stream.
            return Ok(Box::pin(futures_util::stream::iter([Ok(first)])));
        }
        Ok(task_event_stream(feed, Opening::Now(first), false, profile))
    }
}
