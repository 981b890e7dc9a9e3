//! Push notifications: config operations, the webhook address guard, and delivery.
//!
//! Delivery is at least once, in order per webhook: each committed event is queued, and one lane
//! per (task, config) posts them one after another, retrying with exponential backoff. The task's
//! event log is the outbox: each config keeps a cursor, the last event its webhook was handed, so
//! what is due is always in the store. Events that find the queue or a lane full are read back
//! from the log, and a process that starts delivers what an earlier one left due. Each event is
//! serialized once, whatever the number of webhooks, and a global limit caps the attempts in
//! flight.
//!
//! Only globally reachable addresses are called unless private targets are allowed: URLs are
//! checked when a config is created, names are checked as they are resolved for the connection
//! (which then goes only to the checked addresses), and redirects are not followed.

mod courier;
mod deliver;
mod guard;

use std::time::Duration;

use agentwire_store::{PushConfigRecord, Scope};
use agentwire_types::{
    A2AError, Dialect, ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, Result,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};

use super::{store_error, Core};
use crate::context::scope;
use crate::ids::new_id;
use crate::RequestContext;

pub(crate) use deliver::PushDispatcher;
pub use guard::WebhookGuard;

/// How webhooks are called.
#[derive(Debug, Clone)]
pub struct PushSettings {
    /// Which webhook addresses are allowed (default: public addresses only).
    pub guard: WebhookGuard,
    /// Attempts per delivery, the first included (default 5).
    pub max_attempts: u32,
    /// Wait before the first retry; doubles each time, up to 30 s (default 500 ms).
    pub initial_backoff: Duration,
    /// Time limit of one attempt (default 10 s).
    pub timeout: Duration,
    /// Commits waiting in memory to be matched with their task's webhooks, across all tasks;
    /// beyond it, their deliveries are found in the store within seconds (default 4096).
    pub queue_capacity: usize,
    /// Deliveries one webhook config of one task may hold in memory behind the one in flight;
    /// beyond it, the lane reads them back from the task's log when it has room (default 64).
    pub lane_capacity: usize,
    /// Attempts in flight at once across all webhooks; other lanes wait for a free slot, which
    /// they do not hold while they back off (default 64).
    pub max_concurrent_deliveries: usize,
    /// Make deliveries (default). Off, configs are still validated and stored, and each event
    /// that would have been delivered is logged instead and passed over for good (a later run
    /// with delivery on does not deliver it): for conformance suites whose webhook URLs are
    /// placeholders on hosts the server must not call.
    pub deliver: bool,
}

impl Default for PushSettings {
    fn default() -> Self {
        Self {
            guard: WebhookGuard::default(),
            max_attempts: 5,
            initial_backoff: Duration::from_millis(500),
            timeout: Duration::from_secs(10),
            queue_capacity: 4096,
            lane_capacity: 64,
            max_concurrent_deliveries: 64,
            deliver: true,
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
        let scope = scope(ctx, tenant);
        self.load(&scope, task_id).await?;
        Ok(scope)
    }

    /// Validates and stores a config for an existing task. Its webhook is due the events
    /// committed from now on.
    pub(crate) async fn store_push_config(
        &self,
        scope: &Scope,
        config: TaskPushNotificationConfig,
        dialect: Dialect,
    ) -> Result<TaskPushNotificationConfig> {
        let version = self.load(scope, &config.task_id).await?.version;
        let record = PushConfigRecord { delivered_through: version, ..self.push_record(scope, config, dialect)? };
        let existing = self.push_configs.list_configs(scope, &record.config.task_id).await.map_err(store_error)?;
        let replaces = existing.iter().any(|r| r.config.id == record.config.id);
        if !replaces && existing.len() >= self.limits.max_push_configs_per_task {
            return Err(A2AError::invalid_params(format!(
                "a task may have at most {} push notification configs",
                self.limits.max_push_configs_per_task
            )));
        }
        self.push_configs.put_config(scope, &record).await.map_err(store_error)?;
        Ok(record.config)
    }

    /// A config as stored: its webhook checked, its id given if it had none, in `scope`'s tenant,
    /// due every event of its task.
    pub(crate) fn push_record(
        &self,
        scope: &Scope,
        mut config: TaskPushNotificationConfig,
        dialect: Dialect,
    ) -> Result<PushConfigRecord> {
        let bytes = config_bytes(&config);
        if bytes > self.limits.max_push_config_bytes {
            return Err(A2AError::invalid_params(format!(
                "a push notification config may take at most {} bytes (id, url, token and authentication \
                 together); this one takes {bytes}",
                self.limits.max_push_config_bytes
            )));
        }
        self.push.settings.guard.check_url(&config.url)?;
        if config.id.is_empty() {
            config.id = new_id();
        }
        config.tenant.clone_from(&scope.tenant);
        Ok(PushConfigRecord { config, dialect, delivered_through: 0 })
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
        let scope = scope(ctx, &config.tenant);
        self.store_push_config(&scope, config, ctx.dialect).await
    }

    pub(crate) async fn get_push_config(
        &self,
        ctx: &RequestContext,
        req: TaskPushNotificationConfigRef,
    ) -> Result<TaskPushNotificationConfig> {
        let scope = self.push_scope(ctx, &req.tenant, &req.task_id).await?;
        let mut record = match req.id.as_str() {
            "" => None,
            id => self.push_configs.get_config(&scope, &req.task_id, id).await.map_err(store_error)?,
        };
        // "The" config of a task: asked for without an id, or by a name the task has none of
        // where the generation's clients name it so.
        if record.is_none() && (req.id.is_empty() || ctx.dialect.profile().unknown_config_id_is_first()) {
            record =
                self.push_configs.list_configs(&scope, &req.task_id).await.map_err(store_error)?.into_iter().next();
        }
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

/// The bytes of a config's client-given text, which [`Limits::max_push_config_bytes`] bounds.
///
/// [`Limits::max_push_config_bytes`]: crate::Limits::max_push_config_bytes
fn config_bytes(config: &TaskPushNotificationConfig) -> usize {
    let authentication = config.authentication.as_ref().map_or(0, |a| a.scheme.len() + a.credentials.len());
    config.id.len() + config.url.len() + config.token.len() + authentication
}
