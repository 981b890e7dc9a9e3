//! `RequestHandler`: the public face of the core, one method per A2A operation.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use agentwire_store::{Backend, TaskStore};
use agentwire_types::{
    AgentCard, CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, Result, SendMessageRequest,
    SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef,
};
use futures_util::Stream;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::card::{CardConfig, Cards};
use super::push::{PushDispatcher, PushSettings};
use super::Core;
use crate::agent::AgentExecutor;
use crate::auth::Authenticator;
use crate::RequestContext;

/// Configurable bounds on what a client can make the server hold or do. Each refusal is the
/// binding's error: PayloadTooLarge, ResourceExhausted or InvalidParams.
///
/// ```
/// use std::time::Duration;
///
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::{Limits, RequestHandler};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let limits = Limits { max_history_length: 200, body_read_timeout: Duration::from_secs(10), ..Limits::default() };
/// let handler = RequestHandler::builder(EchoAgent).limits(limits).build();
/// assert_eq!(handler.limits().max_history_length, 200);
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest accepted request body, in bytes.
    pub max_body_bytes: usize,
    /// How long a client may take to send a request's body once its headers are in.
    pub body_read_timeout: Duration,
    /// Largest client message, as [`MemorySize`](agentwire_types::MemorySize) estimates the
    /// memory it takes (a message of many tiny parts takes far more than its JSON text).
    pub max_message_bytes: usize,
    /// Most messages a task's history keeps: the first (the request that started the task) and
    /// the most recent ones; the oldest after the first are dropped.
    pub max_history_length: usize,
    /// Most tasks one principal may have in progress (not in a terminal state) at once; a send
    /// that would start one more is refused with ResourceExhausted.
    pub max_unfinished_tasks: usize,
    /// Most task memory one ListTasks page carries; a page that would hold more ends early, with
    /// a `nextPageToken` for the rest.
    pub max_list_bytes: usize,
    /// Most push configs one task may have.
    pub max_push_configs_per_task: usize,
    /// Events buffered per task for live readers before a slow reader falls back to the event log.
    /// Small by default: every task with a reader allocates the whole ring, and a reader that
    /// falls behind loses nothing, it reads the log instead.
    pub subscriber_buffer: usize,
    /// ListTasks page size when the client gives none.
    pub default_page_size: usize,
    /// Largest ListTasks page size.
    pub max_page_size: usize,
    /// How long a canceled execution may take to end its task itself before the server cancels
    /// the task without it.
    pub cancel_grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 4 * 1024 * 1024,
            body_read_timeout: Duration::from_secs(30),
            max_message_bytes: 8 * 1024 * 1024,
            max_history_length: 1_000,
            max_unfinished_tasks: 10_000,
            max_list_bytes: 16 * 1024 * 1024,
            max_push_configs_per_task: 32,
            subscriber_buffer: 16,
            default_page_size: 50,
            max_page_size: 100,
            cancel_grace: Duration::from_secs(2),
        }
    }
}

/// How long ended tasks are kept, on any store: the ones that ended before `ended_ttl`, and the
/// ended ones beyond the `keep_ended` that ended last, are removed with their events and push
/// configs, every `every`. Tasks in progress are never removed.
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
    /// Remove tasks this long after they ended (default: never for that reason).
    pub ended_ttl: Option<Duration>,
    /// How often to look (default: a minute).
    pub every: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Self { keep_ended: Some(10_000), ended_ttl: None, every: Duration::from_secs(60) }
    }
}

/// One item of a task's event stream, with its sequence number in the task's event log
/// (0 for a direct message reply, which belongs to no task).
#[derive(Debug, Clone)]
pub struct StreamItem {
    /// Position in the task's event log; usable as an SSE event id.
    pub seq: u64,
    /// The event.
    pub response: Arc<StreamResponse>,
}

/// The events of SendStreamingMessage or SubscribeToTask: the task first, then its updates, ending
/// after a terminal or input-required state.
pub type TaskEventStream = Pin<Box<dyn Stream<Item = Result<StreamItem>> + Send>>;

/// Runs every A2A operation against an agent and a store, independent of any wire format.
///
/// ```
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::{RequestContext, RequestHandler};
/// use agentwire_types::{Message, SendMessageRequest, SendMessageResponse};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let handler = RequestHandler::builder(EchoAgent).build();
/// let reply = handler
///     .send_message(&RequestContext::default(), SendMessageRequest::new(Message::user("m1", "hi")))
///     .await
///     .unwrap();
/// let SendMessageResponse::Task(task) = reply else { panic!("expected a task") };
/// assert_eq!(task.artifacts[0].parts[0].as_text(), Some("hi"));
/// # });
/// ```
#[derive(Clone)]
pub struct RequestHandler {
    pub(crate) core: Arc<Core>,
}

impl std::fmt::Debug for RequestHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestHandler").field("agent", &self.core.card.public().name).finish_non_exhaustive()
    }
}

impl RequestHandler {
    /// Starts configuring a handler for `agent`.
    pub fn builder(agent: impl AgentExecutor) -> RequestHandlerBuilder {
        RequestHandlerBuilder {
            agent: Arc::new(agent),
            backend: None,
            retention: Retention::default(),
            card: CardConfig::default(),
            limits: Limits::default(),
            push: PushSettings::default(),
            auth: None,
        }
    }

    /// The public agent card.
    pub fn agent_card(&self) -> &AgentCard {
        self.core.card.public()
    }

    /// The configured limits.
    pub fn limits(&self) -> &Limits {
        &self.core.limits
    }

    /// SendMessage: starts or continues a task and, unless `returnImmediately`, waits until it
    /// ends or needs input.
    pub async fn send_message(&self, ctx: &RequestContext, req: SendMessageRequest) -> Result<SendMessageResponse> {
        self.core.send_message(ctx, req).await
    }

    /// SendStreamingMessage: like SendMessage, but returns the task's events as they happen.
    pub async fn send_streaming_message(
        &self,
        ctx: &RequestContext,
        req: SendMessageRequest,
    ) -> Result<TaskEventStream> {
        self.core.send_streaming_message(ctx, req).await
    }

    /// GetTask: the task as it is now, with at most `historyLength` recent messages.
    ///
    /// ```
    /// use agentwire_server::agent::EchoAgent;
    /// use agentwire_server::{RequestContext, RequestHandler};
    /// use agentwire_types::{ErrorKind, GetTaskRequest};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let handler = RequestHandler::builder(EchoAgent).build();
    /// let request = GetTaskRequest { id: "no-such-task".into(), ..GetTaskRequest::default() };
    /// let found = handler.get_task(&RequestContext::default(), request).await;
    /// assert_eq!(found.unwrap_err().kind(), ErrorKind::TaskNotFound);
    /// # });
    /// ```
    pub async fn get_task(&self, ctx: &RequestContext, req: GetTaskRequest) -> Result<Task> {
        self.core.get_task(ctx, req).await
    }

    /// ListTasks: the caller's tasks, newest status first, a page at a time.
    pub async fn list_tasks(&self, ctx: &RequestContext, req: ListTasksRequest) -> Result<ListTasksResponse> {
        self.core.list_tasks(ctx, req).await
    }

    /// CancelTask: asks the execution to stop and returns the task once it is canceled.
    pub async fn cancel_task(&self, ctx: &RequestContext, req: CancelTaskRequest) -> Result<Task> {
        self.core.cancel_task(ctx, req).await
    }

    /// SubscribeToTask: the current task, then its events until it ends.
    pub async fn subscribe_to_task(
        &self,
        ctx: &RequestContext,
        req: SubscribeToTaskRequest,
    ) -> Result<TaskEventStream> {
        self.core.subscribe_to_task(ctx, req).await
    }

    /// CreateTaskPushNotificationConfig.
    pub async fn create_task_push_notification_config(
        &self,
        ctx: &RequestContext,
        config: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig> {
        self.core.create_push_config(ctx, config).await
    }

    /// GetTaskPushNotificationConfig.
    pub async fn get_task_push_notification_config(
        &self,
        ctx: &RequestContext,
        req: TaskPushNotificationConfigRef,
    ) -> Result<TaskPushNotificationConfig> {
        self.core.get_push_config(ctx, req).await
    }

    /// ListTaskPushNotificationConfigs.
    pub async fn list_task_push_notification_configs(
        &self,
        ctx: &RequestContext,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse> {
        self.core.list_push_configs(ctx, req).await
    }

    /// DeleteTaskPushNotificationConfig (idempotent).
    pub async fn delete_task_push_notification_config(
        &self,
        ctx: &RequestContext,
        req: TaskPushNotificationConfigRef,
    ) -> Result<()> {
        self.core.delete_push_config(ctx, req).await
    }

    /// GetExtendedAgentCard.
    pub async fn get_extended_agent_card(
        &self,
        ctx: &RequestContext,
        _req: GetExtendedAgentCardRequest,
    ) -> Result<AgentCard> {
        self.core.card.extended(ctx)
    }

    /// v0.3's card call (`GET /v1/card`, gRPC `GetAgentCard`): the authenticated extended card,
    /// which is the public one where the agent has no other.
    pub(crate) async fn v03_agent_card(&self, ctx: &RequestContext) -> Result<AgentCard> {
        match self.core.card.extended(ctx) {
            Err(error) if error.kind() == agentwire_types::ErrorKind::UnsupportedOperation => {
                Ok(self.core.card.public().clone())
            }
            card => card,
        }
    }

    /// Ends the tasks that a previous run of the server left SUBMITTED or WORKING: their
    /// executions died with it, so they become FAILED, with a status message that says so, and
    /// their webhooks are told. Call it before serving, and only when no other process serves the
    /// same store. Returns how many tasks it ended.
    ///
    /// ```
    /// use agentwire_server::agent::EchoAgent;
    /// use agentwire_server::RequestHandler;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let handler = RequestHandler::builder(EchoAgent).build();
    /// assert_eq!(handler.recover().await.unwrap(), 0);
    /// # });
    /// ```
    pub async fn recover(&self) -> Result<usize> {
        self.core.fail_orphans().await
    }

    /// Stops accepting executions and waits for the running ones and pending webhook deliveries.
    pub async fn shutdown(&self) {
        self.core.maintenance.cancel();
        self.core.tracker.close();
        self.core.tracker.wait().await;
        self.core.push.shutdown().await;
    }
}

/// Configures a [`RequestHandler`].
pub struct RequestHandlerBuilder {
    agent: Arc<dyn AgentExecutor>,
    backend: Option<Backend>,
    retention: Retention,
    card: CardConfig,
    limits: Limits,
    push: PushSettings,
    auth: Option<Arc<dyn Authenticator>>,
}

impl RequestHandlerBuilder {
    /// Requires every operation (not the public card) to be authenticated, and declares the
    /// authenticator's schemes in the agent card.
    pub fn authenticator(mut self, auth: impl Authenticator) -> Self {
        self.auth = Some(Arc::new(auth));
        self
    }

    /// Where tasks, their event logs and push configs are kept, with how committed events reach
    /// the readers of a task and how a cancel reaches its executions: a store's
    /// [`Backend`], made by the store (default: [`MemoryStore`](agentwire_store::MemoryStore)'s).
    ///
    /// ```
    /// use agentwire_server::agent::EchoAgent;
    /// use agentwire_server::RequestHandler;
    /// use agentwire_store::{MemoryStore, RetentionPolicy};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let store = MemoryStore::with_retention(RetentionPolicy { max_terminal_tasks: Some(100), ..Default::default() });
    /// let handler = RequestHandler::builder(EchoAgent).backend(store.backend()).build();
    /// # let _ = handler;
    /// # });
    /// ```
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = Some(backend);
        self
    }

    /// How long ended tasks are kept (see [`Retention`]).
    pub fn retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }

    /// The agent card and the optional features to offer.
    pub fn card(mut self, card: CardConfig) -> Self {
        self.card = card;
        self
    }

    /// Sets the URL the card advertises (see [`CardConfig::public_url`]).
    pub fn card_url(mut self, public_url: &str) -> Self {
        public_url.clone_into(&mut self.card.public_url);
        self
    }

    /// Limits on requests and state.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Webhook delivery settings.
    pub fn push_settings(mut self, push: PushSettings) -> Self {
        self.push = push;
        self
    }

    /// Builds the handler. Must be called within a Tokio runtime (webhook delivery starts here).
    pub fn build(mut self) -> RequestHandler {
        if let Some(auth) = &self.auth {
            let schemes = auth.security_schemes();
            self.card.card.security_requirements = crate::auth::requirements(&schemes);
            self.card.card.security_schemes.extend(schemes);
        }
        let backend = self.backend.unwrap_or_default();
        let (tasks, push_configs) = (Arc::clone(backend.tasks()), Arc::clone(backend.push_configs()));
        let push = PushDispatcher::start(self.push, Arc::clone(&push_configs), Arc::clone(&tasks));
        let core = Core {
            agent: self.agent,
            tasks,
            push_configs,
            bus: Arc::clone(backend.bus()),
            cancel: Arc::clone(backend.cancel()),
            tracker: TaskTracker::new(),
            push,
            card: Cards::new(self.card),
            limits: self.limits,
            auth: self.auth,
            maintenance: CancellationToken::new(),
        };
        tokio::spawn(purge_ended(Arc::downgrade(&core.tasks), self.retention, core.maintenance.clone()));
        let core = Arc::new(core);
        if let Some(every) = core.cancel.orphan_check_interval() {
            tokio::spawn(Core::reap_orphans(Arc::downgrade(&core), every));
        }
        RequestHandler { core }
    }
}

/// Removes the ended tasks [`Retention`] no longer keeps, until `stop` or until the handler is
/// gone.
async fn purge_ended(tasks: std::sync::Weak<dyn TaskStore>, retention: Retention, stop: CancellationToken) {
    let mut ticks = tokio::time::interval(retention.every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticks.tick() => {}
        }
        let ended_before = retention.ended_ttl.and_then(|ttl| {
            let ttl = i64::try_from(ttl.as_millis()).ok()?;
            agentwire_types::Timestamp::from_millis(agentwire_types::Timestamp::now().as_millis().saturating_sub(ttl))
        });
        let Some(tasks) = tasks.upgrade() else { return };
        match tasks.purge(ended_before, retention.keep_ended).await {
            Ok(0) => {}
            Ok(removed) => tracing::info!(removed, "removed ended tasks past their retention"),
            Err(error) => tracing::warn!(%error, "could not remove ended tasks"),
        }
    }
}
