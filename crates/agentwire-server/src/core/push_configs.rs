//! The push-config operations: create, get, list and delete a task's webhook configs. Delivery
//! is [`crate::push`]'s.

use agentwire_store::{PushConfigRecord, Scope};
use agentwire_types::{
    A2AError, Dialect, ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse, Result,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef,
};

use super::{store_error, Core};
use crate::context::scope;
use crate::ids::new_id;
use crate::RequestContext;

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
        self.push_settings.guard.check_url(&config.url)?;
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
