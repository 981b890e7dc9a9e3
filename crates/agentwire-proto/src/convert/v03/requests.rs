//! A send's configuration, and the requests of the other operations.

use agentwire_types as t;
use agentwire_types::A2AError;

use crate::a2a_v1 as pb;
use crate::convert::{metadata, metadata_to_proto};

use super::push::{push_config_from_proto, push_config_to_proto};
use super::{non_zero, parse_task_name, task_name, Result};

// ---- Requests ------------------------------------------------------------------------------------

/// `blocking` as written: proto3 reads an unset `bool` as `false`.
impl From<pb::SendMessageConfiguration> for t::SendMessageConfiguration {
    fn from(c: pb::SendMessageConfiguration) -> Self {
        t::SendMessageConfiguration {
            if_generation_match: None,
            accepted_output_modes: c.accepted_output_modes,
            task_push_notification_config: c.push_notification.map(push_config_from_proto),
            history_length: non_zero(c.history_length),
            return_immediately: !c.blocking,
        }
    }
}

impl From<t::SendMessageConfiguration> for pb::SendMessageConfiguration {
    fn from(c: t::SendMessageConfiguration) -> Self {
        pb::SendMessageConfiguration {
            accepted_output_modes: c.accepted_output_modes,
            push_notification: c.task_push_notification_config.map(push_config_to_proto),
            history_length: c.history_length.unwrap_or_default(),
            blocking: !c.return_immediately,
        }
    }
}

/// The canonical request always carries a configuration. Without one, v0.3 waits, as v1.0 does.
impl TryFrom<pb::SendMessageRequest> for t::SendMessageRequest {
    type Error = A2AError;

    fn try_from(r: pb::SendMessageRequest) -> Result<Self> {
        let message = r.request.ok_or_else(|| A2AError::invalid_params("message is required"))?;
        Ok(t::SendMessageRequest {
            tenant: String::new(),
            message: message.try_into()?,
            configuration: Some(r.configuration.map(Into::into).unwrap_or_default()),
            metadata: metadata(r.metadata),
        })
    }
}

/// No configuration means v1.0's default, which waits: `blocking: true` on this wire.
impl From<t::SendMessageRequest> for pb::SendMessageRequest {
    fn from(r: t::SendMessageRequest) -> Self {
        pb::SendMessageRequest {
            request: Some(r.message.into()),
            configuration: Some(r.configuration.unwrap_or_default().into()),
            metadata: metadata_to_proto(r.metadata),
        }
    }
}

impl TryFrom<pb::GetTaskRequest> for t::GetTaskRequest {
    type Error = A2AError;

    fn try_from(r: pb::GetTaskRequest) -> Result<Self> {
        Ok(t::GetTaskRequest {
            current_generation: None,
            tenant: String::new(),
            id: parse_task_name(&r.name, "name")?,
            history_length: non_zero(r.history_length),
        })
    }
}

impl From<t::GetTaskRequest> for pb::GetTaskRequest {
    fn from(r: t::GetTaskRequest) -> Self {
        pb::GetTaskRequest { name: task_name(&r.id), history_length: r.history_length.unwrap_or_default() }
    }
}

impl TryFrom<pb::CancelTaskRequest> for t::CancelTaskRequest {
    type Error = A2AError;

    fn try_from(r: pb::CancelTaskRequest) -> Result<Self> {
        Ok(t::CancelTaskRequest { tenant: String::new(), id: parse_task_name(&r.name, "name")?, metadata: None })
    }
}

impl From<t::CancelTaskRequest> for pb::CancelTaskRequest {
    fn from(r: t::CancelTaskRequest) -> Self {
        pb::CancelTaskRequest { name: task_name(&r.id) }
    }
}

impl TryFrom<pb::TaskSubscriptionRequest> for t::SubscribeToTaskRequest {
    type Error = A2AError;

    fn try_from(r: pb::TaskSubscriptionRequest) -> Result<Self> {
        Ok(t::SubscribeToTaskRequest { tenant: String::new(), id: parse_task_name(&r.name, "name")? })
    }
}

impl From<t::SubscribeToTaskRequest> for pb::TaskSubscriptionRequest {
    fn from(r: t::SubscribeToTaskRequest) -> Self {
        pb::TaskSubscriptionRequest { name: task_name(&r.id) }
    }
}
