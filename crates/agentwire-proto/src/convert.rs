//! Conversions between `lf.a2a.v1` and the canonical model, which is v1.0 itself: every field
//! has a place on both sides, so a value survives the round trip.
//!
//! Canonical → wire is `From`. Wire → canonical is `TryFrom` with an [`A2AError`] of kind
//! InvalidParams, because the wire can say what the model cannot hold: a part with no content, an
//! enum number this version does not define.

use agentwire_types as t;
use agentwire_types::A2AError;
use prost_types::value::Kind;
use serde_json::{Map, Number, Value};

use crate::lf_a2a_v1 as pb;

type Result<T> = std::result::Result<T, A2AError>;

// ---- Well-known types ----------------------------------------------------------------------------

/// A `google.protobuf.Struct` as a JSON object.
pub(crate) fn struct_to_json(s: prost_types::Struct) -> Map<String, Value> {
    s.fields.into_iter().map(|(k, v)| (k, value_to_json(v))).collect()
}

/// A JSON object as a `google.protobuf.Struct`.
pub(crate) fn json_to_struct(map: Map<String, Value>) -> prost_types::Struct {
    prost_types::Struct { fields: map.into_iter().map(|(k, v)| (k, json_to_value(v))).collect() }
}

/// A `google.protobuf.Value` as JSON. Numbers are doubles on the wire; a whole number comes back
/// as a JSON integer, as it most likely was one.
pub(crate) fn value_to_json(value: prost_types::Value) -> Value {
    match value.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(b)) => Value::Bool(b),
        Some(Kind::StringValue(s)) => Value::String(s),
        Some(Kind::NumberValue(n)) => number_to_json(n),
        Some(Kind::StructValue(s)) => Value::Object(struct_to_json(s)),
        Some(Kind::ListValue(l)) => Value::Array(l.values.into_iter().map(value_to_json).collect()),
    }
}

fn number_to_json(n: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53: beyond it a double skips integers
    if n.fract() == 0.0 && n.abs() <= EXACT {
        return Value::Number(Number::from(n as i64));
    }
    Number::from_f64(n).map_or(Value::Null, Value::Number)
}

/// JSON as a `google.protobuf.Value`.
pub(crate) fn json_to_value(value: Value) -> prost_types::Value {
    let kind = match value {
        Value::Null => Kind::NullValue(prost_types::NullValue::NullValue as i32),
        Value::Bool(b) => Kind::BoolValue(b),
        Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or_default()),
        Value::String(s) => Kind::StringValue(s),
        Value::Array(items) => {
            Kind::ListValue(prost_types::ListValue { values: items.into_iter().map(json_to_value).collect() })
        }
        Value::Object(map) => Kind::StructValue(json_to_struct(map)),
    };
    prost_types::Value { kind: Some(kind) }
}

/// A timestamp on the wire (the model keeps milliseconds).
pub(crate) fn timestamp_to_proto(ts: t::Timestamp) -> prost_types::Timestamp {
    let millis = ts.as_millis();
    prost_types::Timestamp { seconds: millis.div_euclid(1000), nanos: (millis.rem_euclid(1000) * 1_000_000) as i32 }
}

/// A wire timestamp, or `None` when it is out of the model's range.
pub(crate) fn timestamp_from_proto(ts: prost_types::Timestamp) -> Option<t::Timestamp> {
    let millis = ts.seconds.checked_mul(1000)?.checked_add(i64::from(ts.nanos) / 1_000_000)?;
    t::Timestamp::from_millis(millis)
}

fn timestamp(ts: Option<prost_types::Timestamp>, field: &str) -> Result<Option<t::Timestamp>> {
    ts.map(|ts| timestamp_from_proto(ts).ok_or_else(|| A2AError::invalid_params(format!("{field} is out of range"))))
        .transpose()
}

fn metadata(s: Option<prost_types::Struct>) -> Option<Map<String, Value>> {
    s.map(struct_to_json)
}

/// The dev-1.1 draft's generation as a package carries it (none in v0.3's): proto3's default, 0,
/// means the sender keeps none.
fn known_generation(carried: &[i64]) -> Option<i64> {
    carried.first().copied().filter(|generation| *generation != 0)
}

fn metadata_to_proto(m: Option<Map<String, Value>>) -> Option<prost_types::Struct> {
    m.map(json_to_struct)
}

fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

fn each<P, C: TryFrom<P, Error = A2AError>>(items: Vec<P>) -> Result<Vec<C>> {
    items.into_iter().map(C::try_from).collect()
}

fn each_into<C, P: From<C>>(items: Vec<C>) -> Vec<P> {
    items.into_iter().map(P::from).collect()
}

// ---- Enums ---------------------------------------------------------------------------------------

impl From<t::TaskState> for pb::TaskState {
    fn from(state: t::TaskState) -> Self {
        pb::TaskState::try_from(state.number()).unwrap_or(pb::TaskState::Unspecified)
    }
}

fn task_state(number: i32) -> Result<t::TaskState> {
    t::TaskState::from_number(number).ok_or_else(|| A2AError::invalid_params(format!("unknown task state {number}")))
}

impl From<t::Role> for pb::Role {
    fn from(role: t::Role) -> Self {
        match role {
            t::Role::Unspecified => pb::Role::Unspecified,
            t::Role::User => pb::Role::User,
            t::Role::Agent => pb::Role::Agent,
        }
    }
}

fn role(number: i32) -> Result<t::Role> {
    match pb::Role::try_from(number) {
        Ok(pb::Role::Unspecified) => Ok(t::Role::Unspecified),
        Ok(pb::Role::User) => Ok(t::Role::User),
        Ok(pb::Role::Agent) => Ok(t::Role::Agent),
        Err(_) => Err(A2AError::invalid_params(format!("unknown role {number}"))),
    }
}

// ---- Content -------------------------------------------------------------------------------------

impl From<t::Part> for pb::Part {
    fn from(part: t::Part) -> Self {
        use pb::part::Content;
        let content = match part.content {
            t::PartContent::Text(text) => Content::Text(text),
            t::PartContent::Raw(bytes) => Content::Raw(bytes),
            t::PartContent::Url(url) => Content::Url(url),
            t::PartContent::Data(value) => Content::Data(json_to_value(value)),
        };
        pb::Part {
            content: Some(content),
            metadata: metadata_to_proto(part.metadata),
            filename: part.filename.unwrap_or_default(),
            media_type: part.media_type.unwrap_or_default(),
        }
    }
}

impl TryFrom<pb::Part> for t::Part {
    type Error = A2AError;

    fn try_from(part: pb::Part) -> Result<Self> {
        use pb::part::Content;
        let content = match part.content {
            Some(Content::Text(text)) => t::PartContent::Text(text),
            Some(Content::Raw(bytes)) => t::PartContent::Raw(bytes),
            Some(Content::Url(url)) => t::PartContent::Url(url),
            Some(Content::Data(value)) => t::PartContent::Data(value_to_json(value)),
            None => return Err(A2AError::invalid_params("a part must hold one of text, raw, url or data")),
        };
        Ok(t::Part {
            content,
            metadata: metadata(part.metadata),
            filename: non_empty(part.filename),
            media_type: non_empty(part.media_type),
        })
    }
}

impl From<t::Message> for pb::Message {
    fn from(m: t::Message) -> Self {
        pb::Message {
            message_id: m.message_id,
            context_id: m.context_id,
            task_id: m.task_id,
            role: pb::Role::from(m.role) as i32,
            parts: each_into(m.parts),
            metadata: metadata_to_proto(m.metadata),
            extensions: m.extensions,
            reference_task_ids: m.reference_task_ids,
        }
    }
}

impl TryFrom<pb::Message> for t::Message {
    type Error = A2AError;

    fn try_from(m: pb::Message) -> Result<Self> {
        Ok(t::Message {
            message_id: m.message_id,
            context_id: m.context_id,
            task_id: m.task_id,
            role: role(m.role)?,
            parts: each(m.parts)?,
            metadata: metadata(m.metadata),
            extensions: m.extensions,
            reference_task_ids: m.reference_task_ids,
        })
    }
}

// ---- Tasks and events ----------------------------------------------------------------------------

alike::conversions_alike_in_both_packages!(pb, card, generation);

impl From<t::TaskStatus> for pb::TaskStatus {
    fn from(s: t::TaskStatus) -> Self {
        pb::TaskStatus {
            state: pb::TaskState::from(s.state) as i32,
            message: s.message.map(|m| pb::Message::from(*m)),
            timestamp: s.timestamp.map(timestamp_to_proto),
        }
    }
}

impl TryFrom<pb::TaskStatus> for t::TaskStatus {
    type Error = A2AError;

    fn try_from(s: pb::TaskStatus) -> Result<Self> {
        Ok(t::TaskStatus {
            state: task_state(s.state)?,
            message: s.message.map(t::Message::try_from).transpose()?.map(Box::new),
            timestamp: timestamp(s.timestamp, "status.timestamp")?,
        })
    }
}

impl From<t::TaskStatusUpdateEvent> for pb::TaskStatusUpdateEvent {
    fn from(e: t::TaskStatusUpdateEvent) -> Self {
        pb::TaskStatusUpdateEvent {
            task_id: e.task_id,
            context_id: e.context_id,
            status: Some(e.status.into()),
            metadata: metadata_to_proto(e.metadata),
            generation: e.generation.unwrap_or_default(),
        }
    }
}

impl From<t::StreamResponse> for pb::StreamResponse {
    fn from(r: t::StreamResponse) -> Self {
        use pb::stream_response::Payload;
        let payload = match r {
            t::StreamResponse::Task(task) => Payload::Task(task.into()),
            t::StreamResponse::Message(m) => Payload::Message(m.into()),
            t::StreamResponse::StatusUpdate(e) => Payload::StatusUpdate(e.into()),
            t::StreamResponse::ArtifactUpdate(e) => Payload::ArtifactUpdate(e.into()),
        };
        pb::StreamResponse { payload: Some(payload) }
    }
}

impl TryFrom<pb::StreamResponse> for t::StreamResponse {
    type Error = A2AError;

    fn try_from(r: pb::StreamResponse) -> Result<Self> {
        use pb::stream_response::Payload;
        Ok(match r.payload {
            Some(Payload::Task(task)) => t::StreamResponse::Task(task.try_into()?),
            Some(Payload::Message(m)) => t::StreamResponse::Message(m.try_into()?),
            Some(Payload::StatusUpdate(e)) => t::StreamResponse::StatusUpdate(e.try_into()?),
            Some(Payload::ArtifactUpdate(e)) => t::StreamResponse::ArtifactUpdate(e.try_into()?),
            None => return Err(A2AError::invalid_params("a stream response must hold a payload")),
        })
    }
}

impl From<t::SendMessageResponse> for pb::SendMessageResponse {
    fn from(r: t::SendMessageResponse) -> Self {
        use pb::send_message_response::Payload;
        let payload = match r {
            t::SendMessageResponse::Task(task) => Payload::Task(task.into()),
            t::SendMessageResponse::Message(m) => Payload::Message(m.into()),
        };
        pb::SendMessageResponse { payload: Some(payload) }
    }
}

impl TryFrom<pb::SendMessageResponse> for t::SendMessageResponse {
    type Error = A2AError;

    fn try_from(r: pb::SendMessageResponse) -> Result<Self> {
        use pb::send_message_response::Payload;
        Ok(match r.payload {
            Some(Payload::Task(task)) => t::SendMessageResponse::Task(task.try_into()?),
            Some(Payload::Message(m)) => t::SendMessageResponse::Message(m.try_into()?),
            None => return Err(A2AError::invalid_params("a send response must hold a task or a message")),
        })
    }
}

// ---- Push notifications --------------------------------------------------------------------------

impl From<t::TaskPushNotificationConfig> for pb::TaskPushNotificationConfig {
    fn from(c: t::TaskPushNotificationConfig) -> Self {
        pb::TaskPushNotificationConfig {
            tenant: c.tenant,
            id: c.id,
            task_id: c.task_id,
            url: c.url,
            token: c.token,
            authentication: c
                .authentication
                .map(|a| pb::AuthenticationInfo { scheme: a.scheme, credentials: a.credentials }),
        }
    }
}

impl From<pb::TaskPushNotificationConfig> for t::TaskPushNotificationConfig {
    fn from(c: pb::TaskPushNotificationConfig) -> Self {
        t::TaskPushNotificationConfig {
            tenant: c.tenant,
            id: c.id,
            task_id: c.task_id,
            url: c.url,
            token: c.token,
            authentication: c
                .authentication
                .map(|a| t::AuthenticationInfo { scheme: a.scheme, credentials: a.credentials }),
        }
    }
}

impl From<t::ListTaskPushNotificationConfigsResponse> for pb::ListTaskPushNotificationConfigsResponse {
    fn from(r: t::ListTaskPushNotificationConfigsResponse) -> Self {
        pb::ListTaskPushNotificationConfigsResponse {
            configs: each_into(r.configs),
            next_page_token: r.next_page_token,
        }
    }
}

impl From<pb::ListTaskPushNotificationConfigsResponse> for t::ListTaskPushNotificationConfigsResponse {
    fn from(r: pb::ListTaskPushNotificationConfigsResponse) -> Self {
        t::ListTaskPushNotificationConfigsResponse { configs: each_into(r.configs), next_page_token: r.next_page_token }
    }
}

// ---- Requests ------------------------------------------------------------------------------------

impl From<t::SendMessageConfiguration> for pb::SendMessageConfiguration {
    fn from(c: t::SendMessageConfiguration) -> Self {
        pb::SendMessageConfiguration {
            accepted_output_modes: c.accepted_output_modes,
            task_push_notification_config: c.task_push_notification_config.map(Into::into),
            history_length: c.history_length,
            return_immediately: c.return_immediately,
            if_generation_match: c.if_generation_match,
        }
    }
}

impl From<pb::SendMessageConfiguration> for t::SendMessageConfiguration {
    fn from(c: pb::SendMessageConfiguration) -> Self {
        t::SendMessageConfiguration {
            accepted_output_modes: c.accepted_output_modes,
            task_push_notification_config: c.task_push_notification_config.map(Into::into),
            history_length: c.history_length,
            return_immediately: c.return_immediately,
            if_generation_match: c.if_generation_match,
        }
    }
}

impl From<t::SendMessageRequest> for pb::SendMessageRequest {
    fn from(r: t::SendMessageRequest) -> Self {
        pb::SendMessageRequest {
            tenant: r.tenant,
            message: Some(r.message.into()),
            configuration: r.configuration.map(Into::into),
            metadata: metadata_to_proto(r.metadata),
        }
    }
}

impl TryFrom<pb::SendMessageRequest> for t::SendMessageRequest {
    type Error = A2AError;

    fn try_from(r: pb::SendMessageRequest) -> Result<Self> {
        let message = r.message.ok_or_else(|| A2AError::invalid_params("message is required"))?;
        Ok(t::SendMessageRequest {
            tenant: r.tenant,
            message: message.try_into()?,
            configuration: r.configuration.map(Into::into),
            metadata: metadata(r.metadata),
        })
    }
}

impl From<t::GetTaskRequest> for pb::GetTaskRequest {
    fn from(r: t::GetTaskRequest) -> Self {
        let current_generation = r.current_generation;
        pb::GetTaskRequest { tenant: r.tenant, id: r.id, history_length: r.history_length, current_generation }
    }
}

impl From<pb::GetTaskRequest> for t::GetTaskRequest {
    fn from(r: pb::GetTaskRequest) -> Self {
        let current_generation = r.current_generation;
        t::GetTaskRequest { tenant: r.tenant, id: r.id, history_length: r.history_length, current_generation }
    }
}

impl From<t::ListTasksRequest> for pb::ListTasksRequest {
    fn from(r: t::ListTasksRequest) -> Self {
        pb::ListTasksRequest {
            tenant: r.tenant,
            context_id: r.context_id,
            status: r.status.map_or(pb::TaskState::Unspecified, pb::TaskState::from) as i32,
            page_size: r.page_size,
            page_token: r.page_token,
            history_length: r.history_length,
            status_timestamp_after: r.status_timestamp_after.map(timestamp_to_proto),
            include_artifacts: r.include_artifacts,
        }
    }
}

impl TryFrom<pb::ListTasksRequest> for t::ListTasksRequest {
    type Error = A2AError;

    fn try_from(r: pb::ListTasksRequest) -> Result<Self> {
        let status = match task_state(r.status)? {
            t::TaskState::Unspecified => None,
            state => Some(state),
        };
        Ok(t::ListTasksRequest {
            tenant: r.tenant,
            context_id: r.context_id,
            status,
            page_size: r.page_size,
            page_token: r.page_token,
            history_length: r.history_length,
            status_timestamp_after: timestamp(r.status_timestamp_after, "statusTimestampAfter")?,
            include_artifacts: r.include_artifacts,
        })
    }
}

impl From<t::ListTasksResponse> for pb::ListTasksResponse {
    fn from(r: t::ListTasksResponse) -> Self {
        pb::ListTasksResponse {
            tasks: each_into(r.tasks),
            next_page_token: r.next_page_token,
            page_size: r.page_size,
            total_size: r.total_size,
        }
    }
}

impl TryFrom<pb::ListTasksResponse> for t::ListTasksResponse {
    type Error = A2AError;

    fn try_from(r: pb::ListTasksResponse) -> Result<Self> {
        Ok(t::ListTasksResponse {
            tasks: each(r.tasks)?,
            next_page_token: r.next_page_token,
            page_size: r.page_size,
            total_size: r.total_size,
        })
    }
}

impl From<t::CancelTaskRequest> for pb::CancelTaskRequest {
    fn from(r: t::CancelTaskRequest) -> Self {
        pb::CancelTaskRequest { tenant: r.tenant, id: r.id, metadata: metadata_to_proto(r.metadata) }
    }
}

impl From<pb::CancelTaskRequest> for t::CancelTaskRequest {
    fn from(r: pb::CancelTaskRequest) -> Self {
        t::CancelTaskRequest { tenant: r.tenant, id: r.id, metadata: metadata(r.metadata) }
    }
}

impl From<t::SubscribeToTaskRequest> for pb::SubscribeToTaskRequest {
    fn from(r: t::SubscribeToTaskRequest) -> Self {
        pb::SubscribeToTaskRequest { tenant: r.tenant, id: r.id }
    }
}

impl From<pb::SubscribeToTaskRequest> for t::SubscribeToTaskRequest {
    fn from(r: pb::SubscribeToTaskRequest) -> Self {
        t::SubscribeToTaskRequest { tenant: r.tenant, id: r.id }
    }
}

impl From<pb::GetTaskPushNotificationConfigRequest> for t::TaskPushNotificationConfigRef {
    fn from(r: pb::GetTaskPushNotificationConfigRequest) -> Self {
        t::TaskPushNotificationConfigRef { tenant: r.tenant, task_id: r.task_id, id: r.id }
    }
}

impl From<t::TaskPushNotificationConfigRef> for pb::GetTaskPushNotificationConfigRequest {
    fn from(r: t::TaskPushNotificationConfigRef) -> Self {
        pb::GetTaskPushNotificationConfigRequest { tenant: r.tenant, task_id: r.task_id, id: r.id }
    }
}

impl From<pb::DeleteTaskPushNotificationConfigRequest> for t::TaskPushNotificationConfigRef {
    fn from(r: pb::DeleteTaskPushNotificationConfigRequest) -> Self {
        t::TaskPushNotificationConfigRef { tenant: r.tenant, task_id: r.task_id, id: r.id }
    }
}

impl From<t::TaskPushNotificationConfigRef> for pb::DeleteTaskPushNotificationConfigRequest {
    fn from(r: t::TaskPushNotificationConfigRef) -> Self {
        pb::DeleteTaskPushNotificationConfigRequest { tenant: r.tenant, task_id: r.task_id, id: r.id }
    }
}

impl From<t::ListTaskPushNotificationConfigsRequest> for pb::ListTaskPushNotificationConfigsRequest {
    fn from(r: t::ListTaskPushNotificationConfigsRequest) -> Self {
        pb::ListTaskPushNotificationConfigsRequest {
            tenant: r.tenant,
            task_id: r.task_id,
            page_size: r.page_size.unwrap_or_default(),
            page_token: r.page_token,
        }
    }
}

impl From<pb::ListTaskPushNotificationConfigsRequest> for t::ListTaskPushNotificationConfigsRequest {
    fn from(r: pb::ListTaskPushNotificationConfigsRequest) -> Self {
        t::ListTaskPushNotificationConfigsRequest {
            tenant: r.tenant,
            task_id: r.task_id,
            // Proto3 cannot tell an unset page size from 0; 0 means "the server's default".
            page_size: (r.page_size != 0).then_some(r.page_size),
            page_token: r.page_token,
        }
    }
}

impl From<pb::GetExtendedAgentCardRequest> for t::GetExtendedAgentCardRequest {
    fn from(r: pb::GetExtendedAgentCardRequest) -> Self {
        t::GetExtendedAgentCardRequest { tenant: r.tenant }
    }
}

impl From<t::GetExtendedAgentCardRequest> for pb::GetExtendedAgentCardRequest {
    fn from(r: t::GetExtendedAgentCardRequest) -> Self {
        pb::GetExtendedAgentCardRequest { tenant: r.tenant }
    }
}

mod alike;
mod card;
mod v03;

#[cfg(test)]
mod tests;
