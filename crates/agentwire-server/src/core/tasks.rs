//! GetTask, ListTasks, CancelTask and SubscribeToTask.

use std::sync::Arc;
use std::time::Duration;

use agentwire_store::{PageToken, TaskQuery};
use agentwire_types::{
    A2AError, CancelTaskRequest, GetTaskRequest, ListTasksRequest, ListTasksResponse, Result, StreamResponse,
    SubscribeToTaskRequest, Task, TaskState,
};

use super::broker::{EventFeed, FeedItem};
use super::handler::{StreamItem, TaskEventStream};
use super::runner::cancel_events;
use super::send::task_event_stream;
use super::{store_error, validate, Core};
use crate::RequestContext;

impl Core {
    pub(crate) async fn get_task(&self, ctx: &RequestContext, req: GetTaskRequest) -> Result<Task> {
        let history_length = validate::history_length(req.history_length)?;
        let scope = ctx.clone().with_tenant(&req.tenant).scope();
        let mut task = Arc::unwrap_or_clone(self.load(&scope, &req.id).await?.task);
        task.truncate_history(history_length);
        Ok(task)
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
        let query = TaskQuery {
            context_id: Some(req.context_id.clone()).filter(|c| !c.is_empty()),
            state: req.status.filter(|s| *s != TaskState::Unspecified),
            status_after: req.status_timestamp_after,
            page_size,
            after,
        };
        let scope = ctx.clone().with_tenant(&req.tenant).scope();
        let page = self.tasks.list(&scope, &query).await.map_err(store_error)?;
        let include_artifacts = req.include_artifacts.unwrap_or(false);
        let tasks = page
            .tasks
            .into_iter()
            .map(|mut task| {
                task.truncate_history(history_length);
                if !include_artifacts {
                    task.artifacts.clear();
                }
                task
            })
            .collect();
        Ok(ListTasksResponse {
            tasks,
            next_page_token: page.next.map(|t| t.encode()).unwrap_or_default(),
            page_size: i32::try_from(page_size).unwrap_or(i32::MAX),
            total_size: i32::try_from(page.total).unwrap_or(i32::MAX),
        })
    }

    pub(crate) async fn cancel_task(&self, ctx: &RequestContext, req: CancelTaskRequest) -> Result<Task> {
        let scope = ctx.clone().with_tenant(&req.tenant).scope();
        // Subscribed before the snapshot, like every reader: an execution that ends in between
        // then announces its end to this feed (see `TaskStore::update_excludes_reads`).
        let mut feed = EventFeed::subscribe(&self.broker, Arc::clone(&self.tasks), scope.clone(), &req.id);
        let record = self.load(&scope, &req.id).await?;
        if record.task.status.state.is_terminal() {
            return Err(A2AError::task_not_cancelable(&req.id, record.task.status.state));
        }
        let token = self.running.get(req.id.as_str()).map(|e| e.token.clone());
        if let Some(token) = token {
            // Cooperative: ask the execution to stop, and give it time to say so itself.
            feed.start_after(record.version);
            token.cancel();
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
        let (task, _) = self.mutate(&scope, &req.id, &mut |task| Ok(cancel_events(task))).await?;
        if task.status.state != TaskState::Canceled {
            return Err(A2AError::task_not_cancelable(&req.id, task.status.state));
        }
        Ok(Arc::unwrap_or_clone(task))
    }

    pub(crate) async fn subscribe_to_task(
        &self,
        ctx: &RequestContext,
        req: SubscribeToTaskRequest,
    ) -> Result<TaskEventStream> {
        if !self.streaming_enabled() {
            return Err(A2AError::unsupported_operation("streaming is not supported by this agent"));
        }
        let scope = ctx.clone().with_tenant(&req.tenant).scope();
        // Subscribe before reading the snapshot so that nothing committed in between is missed.
        let mut feed = EventFeed::subscribe(&self.broker, Arc::clone(&self.tasks), scope.clone(), &req.id);
        let record = self.load(&scope, &req.id).await?;
        if record.task.status.state.is_terminal() {
            return Err(A2AError::unsupported_operation(format!(
                "task {} is {}; there is nothing left to subscribe to",
                req.id, record.task.status.state
            ))
            .with_metadata("taskId", &req.id));
        }
        feed.start_after(record.version);
        let first = StreamItem {
            seq: record.version,
            response: Arc::new(StreamResponse::Task(Arc::unwrap_or_clone(record.task))),
        };
        Ok(task_event_stream(feed, Some(first), false))
    }
}
