//! Push notifications: config operations, the webhook address guard, and delivery.
//!
//! Delivery is at least once, in order per webhook: each committed event is queued, and one lane
//! per (task, config) posts them one after another, retrying with exponential backoff. Deliveries
//! are held in memory, so those still queued when the process stops are lost.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use agentwire_store::{PushConfigRecord, PushConfigStore, PushPayload, Scope, TaskStore};
use agentwire_types::{
    A2AError, ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, Result, StreamResponse,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};
use bytes::Bytes;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::{new_id, store_error, Core};
use crate::RequestContext;

/// How webhooks are called.
#[derive(Debug, Clone)]
pub struct PushSettings {
    /// Which webhook addresses are allowed.
    pub guard: WebhookGuard,
    /// Attempts per delivery, the first included.
    pub max_attempts: u32,
    /// Wait before the first retry; doubles each time.
    pub initial_backoff: Duration,
    /// Time limit of one attempt.
    pub timeout: Duration,
    /// Events waiting for delivery, across all webhooks, before new ones are dropped (and logged).
    pub queue_capacity: usize,
}

impl Default for PushSettings {
    fn default() -> Self {
        Self {
            guard: WebhookGuard::default(),
            max_attempts: 5,
            initial_backoff: Duration::from_millis(500),
            timeout: Duration::from_secs(10),
            queue_capacity: 4096,
        }
    }
}

/// Refuses webhook URLs that point into private networks (SSRF protection) unless allowed.
///
/// ```
/// use agentwire_server::WebhookGuard;
///
/// let guard = WebhookGuard::default();
/// assert!(guard.check_url("https://hooks.example.com/a2a").is_ok());
/// assert!(guard.check_url("http://127.0.0.1:9000/hook").is_err());
/// assert!(WebhookGuard { allow_private: true }.check_url("http://localhost:9000/hook").is_ok());
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct WebhookGuard {
    /// Allow loopback, private and link-local targets (for tests and closed networks).
    pub allow_private: bool,
}

impl WebhookGuard {
    /// Checks a URL's form and, for literal addresses and `localhost`, its target.
    pub fn check_url(&self, url: &str) -> Result<reqwest::Url> {
        let parsed = reqwest::Url::parse(url)
            .map_err(|e| A2AError::invalid_params(format!("push notification url {url:?} is not valid: {e}")))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(A2AError::invalid_params("push notification url must be http or https"));
        }
        let host = parsed.host_str().unwrap_or_default().trim_matches(|c| c == '[' || c == ']').to_ascii_lowercase();
        if host.is_empty() {
            return Err(A2AError::invalid_params("push notification url has no host"));
        }
        if !self.allow_private {
            let local_name = host == "localhost" || host.ends_with(".localhost");
            let private_ip = host.parse::<IpAddr>().is_ok_and(is_private);
            if local_name || private_ip {
                return Err(A2AError::invalid_params(format!(
                    "push notification url {url:?} targets a private or loopback address, which this server refuses"
                )));
            }
        }
        Ok(parsed)
    }

    /// Resolves the host and refuses private targets (a name may resolve to a private address).
    async fn check_target(&self, url: &reqwest::Url) -> std::result::Result<(), String> {
        if self.allow_private {
            return Ok(());
        }
        let host = url.host_str().unwrap_or_default();
        let port = url.port_or_known_default().unwrap_or(443);
        let addrs = tokio::net::lookup_host((host, port)).await.map_err(|e| format!("cannot resolve {host}: {e}"))?;
        match addrs.map(|a| a.ip()).find(|ip| is_private(*ip)) {
            Some(ip) => Err(format!("{host} resolves to private address {ip}")),
            None => Ok(()),
        }
    }
}

fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || (a == 100 && (64..128).contains(&b))
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || v6.to_ipv4_mapped().is_some_and(|v4| is_private(IpAddr::V4(v4)))
        }
    }
}

impl Core {
    /// The scope of a push-config operation on `task_id`, once push is known to be offered and
    /// the task to be visible to the caller.
    async fn push_scope(&self, ctx: &RequestContext, tenant: &str, task_id: &str) -> Result<Scope> {
        if !self.push_enabled() {
            return Err(A2AError::push_notification_not_supported());
        }
        let scope = ctx.clone().with_tenant(tenant).scope();
        self.load(&scope, task_id).await?;
        Ok(scope)
    }

    /// Validates and stores a config for an existing (or just reserved) task id.
    pub(crate) async fn store_push_config(
        &self,
        scope: &Scope,
        mut config: TaskPushNotificationConfig,
        payload: PushPayload,
    ) -> Result<TaskPushNotificationConfig> {
        self.push.settings.guard.check_url(&config.url)?;
        if config.id.is_empty() {
            config.id = new_id();
        }
        config.tenant.clone_from(&scope.tenant);
        let existing = self.push_configs.list_configs(scope, &config.task_id).await.map_err(store_error)?;
        let replaces = existing.iter().any(|r| r.config.id == config.id);
        if !replaces && existing.len() >= self.limits.max_push_configs_per_task {
            return Err(A2AError::invalid_params(format!(
                "a task may have at most {} push notification configs",
                self.limits.max_push_configs_per_task
            )));
        }
        let record = PushConfigRecord { config: config.clone(), payload };
        self.push_configs.put_config(scope, &record).await.map_err(store_error)?;
        Ok(config)
    }

    pub(crate) async fn create_push_config(
        &self,
        ctx: &RequestContext,
        config: TaskPushNotificationConfig,
    ) -> Result<TaskPushNotificationConfig> {
        if !self.push_enabled() {
            return Err(A2AError::push_notification_not_supported());
        }
        if config.task_id.is_empty() {
            return Err(A2AError::invalid_params("taskId is required"));
        }
        if config.url.is_empty() {
            return Err(A2AError::invalid_params("url is required"));
        }
        let scope = self.push_scope(ctx, &config.tenant, &config.task_id).await?;
        self.store_push_config(&scope, config, PushPayload::StreamResponse).await
    }

    pub(crate) async fn get_push_config(
        &self,
        ctx: &RequestContext,
        req: TaskPushNotificationConfigRef,
    ) -> Result<TaskPushNotificationConfig> {
        let scope = self.push_scope(ctx, &req.tenant, &req.task_id).await?;
        let record = self.push_configs.get_config(&scope, &req.task_id, &req.id).await.map_err(store_error)?;
        record.map(|r| r.config).ok_or_else(|| {
            A2AError::new(
                agentwire_types::ErrorKind::TaskNotFound,
                format!("push notification config {} not found for task {}", req.id, req.task_id),
            )
            .with_metadata("taskId", &req.task_id)
            .with_metadata("configId", &req.id)
        })
    }

    pub(crate) async fn list_push_configs(
        &self,
        ctx: &RequestContext,
        req: ListTaskPushNotificationConfigsRequest,
    ) -> Result<ListTaskPushNotificationConfigsResponse> {
        let scope = self.push_scope(ctx, &req.tenant, &req.task_id).await?;
        let configs = self.push_configs.list_configs(&scope, &req.task_id).await.map_err(store_error)?;
        Ok(ListTaskPushNotificationConfigsResponse {
            configs: configs.into_iter().map(|r| r.config).collect(),
            next_page_token: String::new(),
        })
    }

    pub(crate) async fn delete_push_config(
        &self,
        ctx: &RequestContext,
        req: TaskPushNotificationConfigRef,
    ) -> Result<()> {
        let scope = self.push_scope(ctx, &req.tenant, &req.task_id).await?;
        self.push_configs.delete_config(&scope, &req.task_id, &req.id).await.map_err(store_error)?;
        Ok(())
    }
}

/// Committed events of one task, waiting to be matched with its webhooks. It holds no task
/// snapshot: most tasks have no webhook, and copying the task for each commit would cost every
/// request; a config that wants the whole task reads it when the job is handled.
struct Job {
    scope: Scope,
    task_id: String,
    events: Vec<Arc<StreamResponse>>,
}

/// One POST to a webhook.
struct Delivery {
    url: reqwest::Url,
    body: Bytes,
    config: TaskPushNotificationConfig,
}

pub(crate) struct PushDispatcher {
    jobs: mpsc::Sender<Job>,
    pub(crate) settings: PushSettings,
    tracker: TaskTracker,
    /// Tells the dispatcher to take no more jobs, so that shutdown does not wait on an idle queue.
    closing: CancellationToken,
}

impl PushDispatcher {
    pub(crate) fn start(settings: PushSettings, configs: Arc<dyn PushConfigStore>, tasks: Arc<dyn TaskStore>) -> Self {
        let (jobs, rx) = mpsc::channel(settings.queue_capacity.max(1));
        let tracker = TaskTracker::new();
        let worker = Dispatcher {
            settings: settings.clone(),
            client: reqwest::Client::builder().timeout(settings.timeout).build().unwrap_or_default(),
            lanes: HashMap::new(),
            tracker: tracker.clone(),
            configs,
            tasks,
        };
        let closing = CancellationToken::new();
        tracker.spawn(worker.run(rx, closing.clone()));
        Self { jobs, settings, tracker, closing }
    }

    pub(crate) fn enqueue(&self, scope: Scope, task_id: &str, events: Vec<Arc<StreamResponse>>) {
        let job = Job { scope, task_id: task_id.to_owned(), events };
        if let Err(e) = self.jobs.try_send(job) {
            tracing::warn!(task_id, error = %e, "push queue full; notifications for these events are dropped");
        }
    }

    /// Waits (at most a few seconds) for queued deliveries.
    pub(crate) async fn shutdown(&self) {
        self.closing.cancel();
        self.tracker.close();
        let _ = tokio::time::timeout(Duration::from_secs(5), self.tracker.wait()).await;
    }
}

struct Dispatcher {
    settings: PushSettings,
    client: reqwest::Client,
    lanes: HashMap<(String, String), mpsc::UnboundedSender<Delivery>>,
    tracker: TaskTracker,
    configs: Arc<dyn PushConfigStore>,
    tasks: Arc<dyn TaskStore>,
}

impl Dispatcher {
    /// Handles jobs until `closing` fires and the jobs already queued are handled.
    async fn run(mut self, mut jobs: mpsc::Receiver<Job>, closing: CancellationToken) {
        loop {
            let job = tokio::select! {
                job = jobs.recv() => job,
                () = closing.cancelled(), if !jobs.is_closed() => {
                    jobs.close();
                    continue;
                }
            };
            let Some(job) = job else { break };
            let configs = match self.configs.list_configs(&job.scope, &job.task_id).await {
                Ok(configs) => configs,
                Err(error) => {
                    tracing::error!(%error, task_id = %job.task_id, "cannot read push configs");
                    continue;
                }
            };
            let mut task_body = None;
            for record in configs {
                let Ok(url) = reqwest::Url::parse(&record.config.url) else { continue };
                let bodies: Vec<Bytes> = match record.payload {
                    PushPayload::StreamResponse => job.events.iter().filter_map(|e| to_body(&**e)).collect(),
                    PushPayload::Task => {
                        if task_body.is_none() {
                            task_body = self.task_body(&job).await;
                        }
                        task_body.clone().into_iter().collect()
                    }
                };
                for body in bodies {
                    self.lane(&record.config).send(Delivery { url: url.clone(), body, config: record.config.clone() });
                }
            }
        }
    }

    /// The task as it is now, for configs that receive the whole task (the v0.3 and legacy shape).
    async fn task_body(&self, job: &Job) -> Option<Bytes> {
        match self.tasks.get(&job.scope, &job.task_id).await {
            Ok(Some(record)) => to_body(&*record.task),
            Ok(None) => None,
            Err(error) => {
                tracing::error!(%error, task_id = %job.task_id, "cannot read the task for a push notification");
                None
            }
        }
    }

    /// The ordered queue of one webhook config, started on first use and ended when idle.
    fn lane(&mut self, config: &TaskPushNotificationConfig) -> LaneSender<'_> {
        let key = (config.task_id.clone(), config.id.clone());
        self.lanes.retain(|_, tx| !tx.is_closed());
        let tx = self.lanes.entry(key).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            self.tracker.spawn(deliver_in_order(self.client.clone(), self.settings.clone(), rx));
            tx
        });
        LaneSender(tx)
    }
}

struct LaneSender<'a>(&'a mpsc::UnboundedSender<Delivery>);

impl LaneSender<'_> {
    fn send(self, delivery: Delivery) {
        if self.0.send(delivery).is_err() {
            tracing::warn!("push lane closed; a notification was dropped");
        }
    }
}

fn to_body<T: serde::Serialize>(value: &T) -> Option<Bytes> {
    serde_json::to_vec(value).map(Bytes::from).ok()
}

/// How long an idle lane waits for more deliveries before it ends.
const LANE_IDLE: Duration = Duration::from_secs(30);

async fn deliver_in_order(client: reqwest::Client, settings: PushSettings, mut rx: mpsc::UnboundedReceiver<Delivery>) {
    while let Ok(Some(delivery)) = tokio::time::timeout(LANE_IDLE, rx.recv()).await {
        deliver(&client, &settings, delivery).await;
    }
}

async fn deliver(client: &reqwest::Client, settings: &PushSettings, d: Delivery) {
    if let Err(reason) = settings.guard.check_target(&d.url).await {
        tracing::warn!(url = %d.url, %reason, "push notification refused");
        return;
    }
    let mut backoff = settings.initial_backoff;
    for attempt in 1..=settings.max_attempts.max(1) {
        let mut request =
            client.post(d.url.clone()).header(http::header::CONTENT_TYPE, "application/json").body(d.body.clone());
        if !d.config.token.is_empty() {
            request = request
                .header("X-A2A-Notification-Token", &d.config.token)
                .header("A2A-Notification-Token", &d.config.token);
        }
        if let Some(auth) = d.config.authentication.as_ref().filter(|a| !a.credentials.is_empty()) {
            let scheme = if auth.scheme.is_empty() { "Bearer" } else { auth.scheme.as_str() };
            request = request.header(http::header::AUTHORIZATION, format!("{scheme} {}", auth.credentials));
        }
        let retryable = match request.send().await {
            Ok(response) if response.status().is_success() => return,
            Ok(response) => {
                let status = response.status();
                tracing::debug!(url = %d.url, %status, attempt, "webhook answered with an error");
                status.is_server_error() || status.as_u16() == 408 || status.as_u16() == 429
            }
            Err(error) => {
                tracing::debug!(url = %d.url, %error, attempt, "webhook unreachable");
                true
            }
        };
        if !retryable || attempt == settings.max_attempts {
            break;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(30));
    }
    tracing::warn!(url = %d.url, task_id = %d.config.task_id, "push notification not delivered");
}
