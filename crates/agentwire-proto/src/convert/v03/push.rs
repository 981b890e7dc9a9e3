//! Push notification configs, and the requests that carry them.

use agentwire_types as t;
use agentwire_types::A2AError;

use crate::a2a_v1 as pb;
use crate::convert::{each, each_into, non_empty};

use super::{config_name, non_zero, parse_config_name, parse_task_name, task_name, Result};

// ---- Push notifications --------------------------------------------------------------------------

/// The inner config; its task is named by the resource around it.
pub(super) fn push_config_to_proto(c: t::TaskPushNotificationConfig) -> pb::PushNotificationConfig {
    pb::PushNotificationConfig {
        id: c.id,
        url: c.url,
        token: c.token,
        authentication: c.authentication.map(|a| pb::AuthenticationInfo {
            schemes: non_empty(a.scheme).into_iter().collect(),
            credentials: a.credentials,
        }),
    }
}

/// The model holds one scheme: the first of the list, as v0.3's JSON decoder reads it.
pub(super) fn push_config_from_proto(c: pb::PushNotificationConfig) -> t::TaskPushNotificationConfig {
    t::TaskPushNotificationConfig {
        tenant: String::new(),
        id: c.id,
        task_id: String::new(),
        url: c.url,
        token: c.token,
        authentication: c.authentication.map(|a| t::AuthenticationInfo {
            scheme: a.schemes.into_iter().next().unwrap_or_default(),
            credentials: a.credentials,
        }),
    }
}

/// `config`, if its id can be named: an id with a `/` would be written into a name no reader
/// parses, so it is refused as such a name is. An empty id is left for the server to choose.
fn nameable(config: t::TaskPushNotificationConfig, field: &str) -> Result<t::TaskPushNotificationConfig> {
    if config.id.contains('/') {
        return Err(A2AError::invalid_params(format!(
            "{field} must not contain '/', which separates the segments of the config's name, got {:?}",
            config.id
        )));
    }
    Ok(config)
}

impl From<t::TaskPushNotificationConfig> for pb::TaskPushNotificationConfig {
    fn from(c: t::TaskPushNotificationConfig) -> Self {
        pb::TaskPushNotificationConfig {
            name: config_name(&c.task_id, &c.id),
            push_notification_config: Some(push_config_to_proto(c)),
        }
    }
}

/// The task comes from the name; the config's id from the inner config, else from the name.
impl TryFrom<pb::TaskPushNotificationConfig> for t::TaskPushNotificationConfig {
    type Error = A2AError;

    fn try_from(c: pb::TaskPushNotificationConfig) -> Result<Self> {
        let (task_id, config_id) = parse_config_name(&c.name, "name")?;
        let inner = c
            .push_notification_config
            .ok_or_else(|| A2AError::invalid_params("push_notification_config is required"))?;
        let mut config = push_config_from_proto(inner);
        config.task_id = task_id;
        if config.id.is_empty() {
            config.id = config_id;
        }
        nameable(config, "push_notification_config.id")
    }
}

/// CreateTaskPushNotificationConfig: the parent names the task. The config's own `name` is not
/// read, since clients fill it loosely; its id is the inner config's, else `config_id` (as the
/// v0.3 HTTP+JSON route reads the same request).
impl TryFrom<pb::CreateTaskPushNotificationConfigRequest> for t::TaskPushNotificationConfig {
    type Error = A2AError;

    fn try_from(r: pb::CreateTaskPushNotificationConfigRequest) -> Result<Self> {
        let task_id = parse_task_name(&r.parent, "parent")?;
        let inner = r
            .config
            .and_then(|c| c.push_notification_config)
            .ok_or_else(|| A2AError::invalid_params("config.push_notification_config is required"))?;
        let mut config = push_config_from_proto(inner);
        config.task_id = task_id;
        if config.id.is_empty() {
            config.id = r.config_id;
        }
        nameable(config, "config_id")
    }
}

impl From<t::TaskPushNotificationConfig> for pb::CreateTaskPushNotificationConfigRequest {
    fn from(c: t::TaskPushNotificationConfig) -> Self {
        pb::CreateTaskPushNotificationConfigRequest {
            parent: task_name(&c.task_id),
            config_id: c.id.clone(),
            config: Some(c.into()),
        }
    }
}

impl TryFrom<pb::GetTaskPushNotificationConfigRequest> for t::TaskPushNotificationConfigRef {
    type Error = A2AError;

    fn try_from(r: pb::GetTaskPushNotificationConfigRequest) -> Result<Self> {
        let (task_id, id) = parse_config_name(&r.name, "name")?;
        Ok(t::TaskPushNotificationConfigRef { tenant: String::new(), task_id, id })
    }
}

impl From<t::TaskPushNotificationConfigRef> for pb::GetTaskPushNotificationConfigRequest {
    fn from(r: t::TaskPushNotificationConfigRef) -> Self {
        pb::GetTaskPushNotificationConfigRequest { name: config_name(&r.task_id, &r.id) }
    }
}

impl TryFrom<pb::DeleteTaskPushNotificationConfigRequest> for t::TaskPushNotificationConfigRef {
    type Error = A2AError;

    fn try_from(r: pb::DeleteTaskPushNotificationConfigRequest) -> Result<Self> {
        let (task_id, id) = parse_config_name(&r.name, "name")?;
        Ok(t::TaskPushNotificationConfigRef { tenant: String::new(), task_id, id })
    }
}

impl From<t::TaskPushNotificationConfigRef> for pb::DeleteTaskPushNotificationConfigRequest {
    fn from(r: t::TaskPushNotificationConfigRef) -> Self {
        pb::DeleteTaskPushNotificationConfigRequest { name: config_name(&r.task_id, &r.id) }
    }
}

impl TryFrom<pb::ListTaskPushNotificationConfigRequest> for t::ListTaskPushNotificationConfigsRequest {
    type Error = A2AError;

    fn try_from(r: pb::ListTaskPushNotificationConfigRequest) -> Result<Self> {
        Ok(t::ListTaskPushNotificationConfigsRequest {
            tenant: String::new(),
            task_id: parse_task_name(&r.parent, "parent")?,
            page_size: non_zero(r.page_size),
            page_token: r.page_token,
        })
    }
}

impl From<t::ListTaskPushNotificationConfigsRequest> for pb::ListTaskPushNotificationConfigRequest {
    fn from(r: t::ListTaskPushNotificationConfigsRequest) -> Self {
        pb::ListTaskPushNotificationConfigRequest {
            parent: task_name(&r.task_id),
            page_size: r.page_size.unwrap_or_default(),
            page_token: r.page_token,
        }
    }
}

impl From<t::ListTaskPushNotificationConfigsResponse> for pb::ListTaskPushNotificationConfigResponse {
    fn from(r: t::ListTaskPushNotificationConfigsResponse) -> Self {
        pb::ListTaskPushNotificationConfigResponse { configs: each_into(r.configs), next_page_token: r.next_page_token }
    }
}

impl TryFrom<pb::ListTaskPushNotificationConfigResponse> for t::ListTaskPushNotificationConfigsResponse {
    type Error = A2AError;

    fn try_from(r: pb::ListTaskPushNotificationConfigResponse) -> Result<Self> {
        Ok(t::ListTaskPushNotificationConfigsResponse { configs: each(r.configs)?, next_page_token: r.next_page_token })
    }
}
