//! `RequestHandler`: the core as an operation service, and one method per A2A operation for
//! calls made in process.

use std::sync::Arc;
use std::task::{Context, Poll};

use agentwire_store::{Backend, TaskStore};
use agentwire_types::{
    A2AError, A2aRequest, A2aResponse, AgentCard, CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, ListTasksRequest,
    ListTasksResponse, Result, SendMessageRequest, SendMessageResponse, SubscribeToTaskRequest, Task, TaskEventStream,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};
use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::card::{CardConfig, Cards};
use super::limits::{Limits, Retention};
use super::Core;
use crate::agent::AgentExecutor;
use crate::push::{DeliverySigner, PushDispatcher, PushSettings};
use crate::RequestContext;

/// Runs every A2A operation against an agent and a store, independent of any wire format.
///
/// It is the operation service every binding calls (`Service<(RequestContext, A2aRequest)>`):
/// [`router`](crate::router) serves it, and an [`App`](crate::App) puts what cuts across every
/// operation (authentication, quotas, metrics, spans, layers of your own) in front of it. The
/// methods named after the operations run them in process as `ctx` says.
///
/// ```
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::{RequestContext, RequestHandler};
/// use agentwire_types::{A2aRequest, Message, SendMessageRequest, SendMessageResponse};
/// use tower::ServiceExt;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let handler = RequestHandler::builder(EchoAgent).build();
/// let request = A2aRequest::SendMessage(SendMessageRequest::new(Message::user("m1", "hi")));
/// let reply = handler.oneshot((RequestContext::default(), request)).await.unwrap();
/// let SendMessageResponse::Task(task) = reply.try_into().unwrap() else { panic!("expected a task") };
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

impl tower::Service<(RequestContext, A2aRequest)> for RequestHandler {
    type Response = A2aResponse;
    type Error = A2AError;
    type Future = BoxFuture<'static, Result<A2aResponse>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, (ctx, request): (RequestContext, A2aRequest)) -> Self::Future {
        Box::pin(Arc::clone(&self.core).run(ctx, request))
    }
}

impl Core {
    /// Runs one operation.
    async fn run(self: Arc<Self>, ctx: RequestContext, request: A2aRequest) -> Result<A2aResponse> {
        self.check_draft(&ctx)?;
        Ok(match request {
            A2aRequest::SendMessage(r) => A2aResponse::Send(self.send_message(ctx, r).await?),
            A2aRequest::SendStreamingMessage(r) => A2aResponse::Stream(self.send_streaming_message(ctx, r).await?),
            A2aRequest::GetTask(r) => A2aResponse::Task(self.get_task(&ctx, r).await?),
            A2aRequest::ListTasks(r) => A2aResponse::Tasks(self.list_tasks(&ctx, r).await?),
            A2aRequest::CancelTask(r) => A2aResponse::Task(self.cancel_task(&ctx, r).await?),
            A2aRequest::SubscribeToTask(r) => A2aResponse::Stream(self.subscribe_to_task(&ctx, r).await?),
            A2aRequest::CreatePushConfig(r) => A2aResponse::PushConfig(self.create_push_config(&ctx, r).await?),
            A2aRequest::GetPushConfig(r) => A2aResponse::PushConfig(self.get_push_config(&ctx, r).await?),
            A2aRequest::ListPushConfigs(r) => A2aResponse::PushConfigs(self.list_push_configs(&ctx, r).await?),
            A2aRequest::DeletePushConfig(r) => {
                self.delete_push_config(&ctx, r).await?;
                A2aResponse::Deleted
            }
            A2aRequest::GetExtendedAgentCard(_) => A2aResponse::Card(Box::new(self.card.extended(&ctx)?)),
            A2aRequest::GetAgentCard => A2aResponse::Card(Box::new(self.card.public_for(&ctx))),
        })
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
            metrics: None,
            signing_key: None,
        }
    }

    /// The public agent card, as callers get it that no authentication stands in front of.
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
        self.core.send_message(ctx.clone(), req).await
    }

    /// SendStreamingMessage: like SendMessage, but returns the task's events as they happen.
    pub async fn send_streaming_message(
        &self,
        ctx: &RequestContext,
        req: SendMessageRequest,
    ) -> Result<TaskEventStream> {
        self.core.send_streaming_message(ctx.clone(), req).await
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

    /// Whether the handler can serve, for `/readyz` and the gRPC health service
    /// ([`HttpOptions::readiness`](crate::HttpOptions::readiness)): ready while its store answers,
    /// the notices of the other instances on a shared store arrive, and it is not
    /// [draining](Self::drain).
    ///
    /// ```
    /// use agentwire_server::agent::EchoAgent;
    /// use agentwire_server::RequestHandler;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let handler = RequestHandler::builder(EchoAgent).build();
    /// let readiness = handler.readiness();
    /// assert_eq!(readiness.check().await, Ok(()));
    /// handler.drain();
    /// assert_eq!(readiness.check().await, Err("draining: the server is stopping".to_owned()));
    /// # });
    /// ```
    pub fn readiness(&self) -> crate::health::Readiness {
        let core = std::sync::Arc::downgrade(&self.core);
        crate::health::Readiness::new(move || {
            let core = core.upgrade();
            async move {
                let Some(core) = core else { return Err("the handler is gone".to_owned()) };
                if core.draining.is_cancelled() {
                    return Err("draining: the server is stopping".to_owned());
                }
                agentwire_store::readiness(&*core.tasks, &*core.bus).await
            }
        })
    }

    /// Follows every commit this handler makes from now on: a console or a dashboard that shows
    /// tasks as they change.
    pub fn commit_feed(&self) -> agentwire_store::CommitFeed {
        self.core.bus.feed()
    }

    /// On a store several instances serve, a count that goes up as any of them commits (see
    /// [`SharedState::commits`](agentwire_store::SharedState::commits)); `None` on a store of
    /// this process alone, whose [`commit_feed`](Self::commit_feed) tells of every commit.
    pub fn shared_commits(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        self.core.shared.as_ref().map(|shared| shared.commits())
    }

    /// Cancelled once the handler [drains](Self::drain): what would otherwise run until its
    /// client leaves (a followed task list) ends then.
    #[cfg(feature = "console")]
    pub(crate) fn draining(&self) -> tokio_util::sync::CancellationToken {
        self.core.draining.clone()
    }

    /// Marks the handler as draining, from a stop signal until [`shutdown`](Self::shutdown): its
    /// [readiness](Self::readiness) turns false, so that load balancers send new work elsewhere,
    /// while the requests under way go on.
    pub fn drain(&self) {
        self.core.draining.cancel();
    }

    /// Stops accepting executions, waits for the running ones and pending webhook deliveries,
    /// removes the ended tasks the [`Retention`] no longer keeps, then closes the store
    /// ([`TaskStore::close`](agentwire_store::TaskStore::close)): the handler serves nothing
    /// after it, and the store is left within its retention.
    pub async fn shutdown(&self) {
        self.drain();
        self.core.maintenance.cancel();
        self.core.tracker.close();
        self.core.tracker.wait().await;
        if let Some(webhooks) = &self.core.webhooks {
            webhooks.shutdown().await;
        }
        // Within a bound of time: a store far past its retention is purged further at its next
        // start.
        let deadline = tokio::time::Instant::now() + SHUTDOWN_PURGE;
        purge(&*self.core.tasks, &self.core.retention, || tokio::time::Instant::now() >= deadline).await;
        if let Err(error) = self.core.tasks.close().await {
            tracing::warn!(%error, "could not close the store");
        }
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
    metrics: Option<crate::Metrics>,
    signing_key: Option<Arc<agentwire_jose::SigningKey>>,
}

impl RequestHandlerBuilder {
    /// Signs the agent card (and the extended card) and every webhook delivery with `key`,
    /// naming the key set published at the card's URL under `/.well-known/jwks.json` as the
    /// signatures' `jku`; serve that key set with
    /// [`HttpOptions::signing_keys`](crate::HttpOptions::signing_keys). A delivery carries its
    /// token in the `A2A-Notification-Signature` header (docs/IDENTITY.md).
    ///
    /// ```
    /// use agentwire_jose::{Algorithm, PublicKeys, SigningKey};
    /// use agentwire_server::agent::EchoAgent;
    /// use agentwire_server::RequestHandler;
    ///
    /// let key = SigningKey::generate(Algorithm::EdDSA).unwrap();
    /// let keys = PublicKeys::from_keys([key.public_key()]);
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let handler = RequestHandler::builder(EchoAgent).signing_key(key).build();
    /// let card = handler.agent_card();
    /// assert!(agentwire_jose::verify_card(card, &keys, &[Algorithm::EdDSA]).is_ok());
    /// # });
    /// ```
    pub fn signing_key(mut self, key: impl Into<Arc<agentwire_jose::SigningKey>>) -> Self {
        self.signing_key = Some(key.into());
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

    /// Keeps `metrics` of what the handler holds and does: tasks by state (from its commits),
    /// store commits and webhook deliveries. Operations are counted by [`Metrics::layer`] around
    /// the handler.
    ///
    /// ```
    /// use agentwire_server::agent::EchoAgent;
    /// use agentwire_server::{Metrics, RequestHandler};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let metrics = Metrics::new();
    /// let handler = RequestHandler::builder(EchoAgent).metrics(&metrics).build();
    /// # drop(handler);
    /// # });
    /// ```
    ///
    /// [`Metrics::layer`]: crate::Metrics::layer
    pub fn metrics(mut self, metrics: &crate::Metrics) -> Self {
        self.metrics = Some(metrics.clone());
        self
    }

    /// Builds the handler. Must be called within a Tokio runtime (webhook delivery starts here).
    pub fn build(self) -> RequestHandler {
        let backend = self.backend.unwrap_or_default();
        let (tasks, push_configs) = (Arc::clone(backend.tasks()), Arc::clone(backend.push_configs()));
        let public_url = self.card.public_url.trim_end_matches('/').to_owned();
        let jku = format!("{public_url}/.well-known/jwks.json");
        let card = Cards::new(self.card, self.signing_key.as_ref().map(|key| (Arc::clone(key), Some(jku.clone()))));
        let offers_push = card.public().capabilities.push_notifications == Some(true);
        let instruments = self.metrics.as_ref().map(|metrics| {
            metrics.observe_store(&tasks);
            Arc::clone(&metrics.instruments)
        });
        let webhooks = offers_push.then(|| {
            let feed = backend.bus().feed();
            let settings = self.push.clone();
            let signer = self.signing_key.as_ref().map(|key| DeliverySigner {
                key: Arc::clone(key),
                issuer: public_url.clone(),
                jku: jku.clone(),
            });
            PushDispatcher::start(
                settings,
                feed,
                Arc::clone(&push_configs),
                Arc::clone(&tasks),
                instruments.clone(),
                signer,
            )
        });
        let core = Core {
            agent: self.agent,
            tasks,
            push_configs,
            bus: Arc::clone(backend.bus()),
            cancel: Arc::clone(backend.cancel()),
            shared: backend.shared().cloned(),
            tracker: TaskTracker::new(),
            push_settings: self.push,
            webhooks,
            card,
            limits: self.limits,
            maintenance: CancellationToken::new(),
            task_ended: Arc::default(),
            retention: self.retention.clone(),
            admissions: super::admission::Admissions::default(),
            metrics: instruments.clone(),
            draining: CancellationToken::new(),
            shared_loads: Default::default(),
        };
        if let Some(instruments) = instruments {
            let feed = backend.bus().feed();
            let shared = backend.shared().cloned();
            let stop = core.maintenance.clone();
            core.tracker.spawn(crate::metrics::follow_tasks(feed, Arc::clone(&instruments), shared.is_none(), stop));
            if let Some(shared) = shared {
                core.tracker.spawn(crate::metrics::count_tasks(shared, instruments, core.maintenance.clone()));
            }
        }
        let ended = Arc::clone(&core.task_ended);
        // Tracked with the executions: shutdown waits for a purge under way before its own purge
        // and the store's close, which would otherwise race it for the store's connections.
        core.tracker.spawn(purge_ended(Arc::downgrade(&core.tasks), self.retention, ended, core.maintenance.clone()));
        let core = Arc::new(core);
        if let Some(every) = core.cancel.orphan_check_interval() {
            core.tracker.spawn(Core::reap_orphans(Arc::downgrade(&core), every, core.maintenance.clone()));
        }
        core.start_expiry();
        RequestHandler { core }
    }
}

/// Removes the ended tasks [`Retention`] no longer keeps, every [`Retention::every`] and soon
/// after tasks end (`ended`), until `stop` or until the handler is gone. A purge goes in slices
/// ([`PURGE_SLICE`] of logs each), so that the other writes of a store with one writer go on
/// between them: a store is back within its bounds soon after a burst, and stays near them under
/// a sustained load.
async fn purge_ended(
    tasks: std::sync::Weak<dyn TaskStore>,
    retention: Retention,
    ended: Arc<tokio::sync::Notify>,
    stop: CancellationToken,
) {
    let mut ticks = tokio::time::interval(retention.every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let counts_ended = retention.keep_ended.is_some() || retention.keep_ended_bytes.is_some();
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticks.tick() => {}
            () = ended.notified(), if counts_ended => {}
        }
        let Some(tasks) = tasks.upgrade() else { return };
        let purged = purge(&*tasks, &retention, || stop.is_cancelled()).await;
        drop(tasks);
        // The tasks that end meanwhile wait for the next purge, which follows as soon as more
        // end, after a pause. After a purge that removed tasks, as long as its slowest slice took:
        // purging then takes at most about half of the store's time, and under a sustained load
        // it keeps up with the tasks that end. After one that found nothing to remove (an
        // in-memory check on SQLite, a query on PostgreSQL), ten times as long as it took: a
        // store just within its bounds is checked again soon, and checking takes at most a
        // tenth of its time.
        let pause = match purged.removed {
            0 => (purged.slowest_slice * 10).clamp(BUSY_PURGE_PAUSE, PURGE_PAUSE),
            _ => purged.slowest_slice.clamp(BUSY_PURGE_PAUSE, MAX_PURGE_PAUSE),
        };
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(pause) => {}
        }
    }
}

/// What one purge did: how many tasks it removed, and the longest one of its slices took (the
/// one call, when it removed nothing).
#[derive(Debug, Default)]
struct Purged {
    removed: u64,
    slowest_slice: std::time::Duration,
}

/// Removes the ended tasks `retention` no longer keeps, a slice at a time, until none is left to
/// remove or `enough` says to stop.
async fn purge(tasks: &dyn TaskStore, retention: &Retention, enough: impl Fn() -> bool) -> Purged {
    let ended_before = retention.ended_ttl.and_then(|ttl| {
        let ttl = i64::try_from(ttl.as_millis()).ok()?;
        agentwire_types::Timestamp::from_millis(agentwire_types::Timestamp::now().as_millis().saturating_sub(ttl))
    });
    let rules = agentwire_store::Purge {
        ended_before,
        keep_ended: retention.keep_ended,
        keep_ended_bytes: retention.keep_ended_bytes,
        max_removed_bytes: Some(PURGE_SLICE),
    };
    let mut purged = Purged::default();
    loop {
        let started = tokio::time::Instant::now();
        let slice = tasks.purge(&rules).await;
        purged.slowest_slice = purged.slowest_slice.max(started.elapsed());
        match slice {
            Ok(0) => break,
            Ok(removed) => purged.removed += removed,
            Err(error) => {
                tracing::warn!(%error, "could not remove ended tasks");
                break;
            }
        }
        if enough() {
            break;
        }
    }
    if purged.removed > 0 {
        tracing::debug!(removed = purged.removed, slowest_slice = ?purged.slowest_slice, "removed ended tasks past their retention");
    }
    purged
}

/// Most bytes of logs one slice of a purge removes.
const PURGE_SLICE: u64 = 32 * 1024 * 1024;

/// The least pause between two purges.
const BUSY_PURGE_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);

/// The longest pause between two purges.
const MAX_PURGE_PAUSE: std::time::Duration = std::time::Duration::from_secs(3);

/// How long a shutdown may spend removing ended tasks.
const SHUTDOWN_PURGE: std::time::Duration = std::time::Duration::from_secs(3);

/// The longest pause after a purge that removed nothing.
const PURGE_PAUSE: std::time::Duration = std::time::Duration::from_secs(1);
