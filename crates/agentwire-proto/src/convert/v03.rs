//! Conversions between `a2a.v1` (the v0.3 gRPC binding) and the canonical v1.0 model, by the same
//! rules as v0.3's ProtoJSON in `agentwire_types::dialect::v03::proto` (and v0.3's JSON-RPC shapes
//! in `agentwire_types::dialect::json`): a change to a v0.3 shape goes into all three.
//!
//! Canonical → wire is `From`. Wire → canonical is `TryFrom` with an [`A2AError`] of kind
//! InvalidParams where the wire can say what the model cannot hold: a part with no content, an
//! enum number v0.3 does not define, a malformed resource name.
//!
//! Where the shapes differ:
//! - tasks and push configs are named by resource, `tasks/{task_id}` and
//!   `tasks/{task_id}/pushNotificationConfigs/{config_id}`; a name that does not parse is refused,
//!   and so is a push config id with a `/`, which no name could hold;
//! - CANCELED is `TASK_STATE_CANCELLED` (the same number, 5);
//! - a file part nests `{file_with_uri | file_with_bytes, mime_type, name}`, and
//!   `file_with_bytes` holds the file's base64 text, as the official Python, Go and Java v0.3
//!   SDKs fill it ([`file_from_bytes_field`] says what is read); a data part is a `Struct`, so
//!   data that is not an object travels as `{"value": …}` and comes back as that object;
//! - `blocking` is v1.0's `return_immediately` inverted; v0.3 waits unless told not to, but a
//!   proto3 `bool` cannot be absent, so only a request without a configuration waits by default;
//! - a history length or page size of 0 reads as unset (proto3 cannot tell them apart);
//! - a status update carries `final`, set where the stream ends: a terminal state or INPUT_REQUIRED
//!   (`Profile::closes_stream`).
//!
//! v0.3 has no place for a part's metadata, a message's reference task ids, a
//! tenant, a cancel's metadata, more than one push authentication scheme, or a card's icon and
//! interfaces of other versions; those are dropped on the way out and absent on the way in.

use std::collections::{BTreeMap, HashMap};

use agentwire_types as t;
use agentwire_types::dialect::v03::proto::{file_from_bytes_field, file_with_bytes};
use agentwire_types::A2AError;
use serde_json::{Map, Value};

use super::{
    each, each_into, json_to_struct, metadata, metadata_to_proto, non_empty, struct_to_json, timestamp,
    timestamp_to_proto,
};
use crate::a2a_v1 as pb;

type Result<T> = std::result::Result<T, A2AError>;

/// The protocol version a v0.3 card declares.
const PROTOCOL_VERSION: &str = "0.3.0";

// ---- Helpers -------------------------------------------------------------------------------------

fn non_zero(n: i32) -> Option<i32> {
    (n != 0).then_some(n)
}

// ---- Resource names ------------------------------------------------------------------------------

const TASKS: &str = "tasks/";
const CONFIGS: &str = "/pushNotificationConfigs/";

fn task_name(task_id: &str) -> String {
    format!("{TASKS}{task_id}")
}

fn config_name(task_id: &str, config_id: &str) -> String {
    format!("{TASKS}{task_id}{CONFIGS}{config_id}")
}

/// One segment of a name: ids with a `/` would make names ambiguous, so they are refused.
fn segment(s: &str) -> bool {
    !s.is_empty() && !s.contains('/')
}

/// The task id of `tasks/{task_id}`, read from the request field `field`.
fn parse_task_name(name: &str, field: &str) -> Result<String> {
    match name.strip_prefix(TASKS) {
        Some(id) if segment(id) => Ok(id.to_owned()),
        _ => Err(A2AError::invalid_params(format!("{field} must be tasks/{{task_id}}, got {name:?}"))),
    }
}

/// The task and config ids of `tasks/{task_id}/pushNotificationConfigs/{config_id}`.
fn parse_config_name(name: &str, field: &str) -> Result<(String, String)> {
    let ids = name.strip_prefix(TASKS).and_then(|rest| rest.split_once(CONFIGS));
    match ids {
        Some((task_id, config_id)) if segment(task_id) && segment(config_id) => {
            Ok((task_id.to_owned(), config_id.to_owned()))
        }
        _ => Err(A2AError::invalid_params(format!(
            "{field} must be tasks/{{task_id}}/pushNotificationConfigs/{{config_id}}, got {name:?}"
        ))),
    }
}

// ---- Enums ---------------------------------------------------------------------------------------

impl From<t::TaskState> for pb::TaskState {
    fn from(state: t::TaskState) -> Self {
        match state {
            t::TaskState::Unspecified => Self::Unspecified,
            t::TaskState::Submitted => Self::Submitted,
            t::TaskState::Working => Self::Working,
            t::TaskState::Completed => Self::Completed,
            t::TaskState::Failed => Self::Failed,
            t::TaskState::Canceled => Self::Cancelled,
            t::TaskState::InputRequired => Self::InputRequired,
            t::TaskState::Rejected => Self::Rejected,
            t::TaskState::AuthRequired => Self::AuthRequired,
        }
    }
}

impl From<pb::TaskState> for t::TaskState {
    fn from(state: pb::TaskState) -> Self {
        match state {
            pb::TaskState::Unspecified => Self::Unspecified,
            pb::TaskState::Submitted => Self::Submitted,
            pb::TaskState::Working => Self::Working,
            pb::TaskState::Completed => Self::Completed,
            pb::TaskState::Failed => Self::Failed,
            pb::TaskState::Cancelled => Self::Canceled,
            pb::TaskState::InputRequired => Self::InputRequired,
            pb::TaskState::Rejected => Self::Rejected,
            pb::TaskState::AuthRequired => Self::AuthRequired,
        }
    }
}

fn task_state(number: i32) -> Result<t::TaskState> {
    pb::TaskState::try_from(number)
        .map(Into::into)
        .map_err(|_| A2AError::invalid_params(format!("unknown task state {number}")))
}

impl From<t::Role> for pb::Role {
    fn from(role: t::Role) -> Self {
        match role {
            t::Role::Unspecified => Self::Unspecified,
            t::Role::User => Self::User,
            t::Role::Agent => Self::Agent,
        }
    }
}

impl From<pb::Role> for t::Role {
    fn from(role: pb::Role) -> Self {
        match role {
            pb::Role::Unspecified => Self::Unspecified,
            pb::Role::User => Self::User,
            pb::Role::Agent => Self::Agent,
        }
    }
}

fn role(number: i32) -> Result<t::Role> {
    pb::Role::try_from(number).map(Into::into).map_err(|_| A2AError::invalid_params(format!("unknown role {number}")))
}

// ---- Content -------------------------------------------------------------------------------------

impl From<t::Part> for pb::Part {
    fn from(part: t::Part) -> Self {
        use pb::file_part::File;
        use pb::part::Part as Content;
        let file = |file| pb::FilePart {
            file: Some(file),
            mime_type: part.media_type.unwrap_or_default(),
            name: part.filename.unwrap_or_default(),
        };
        let content = match part.content {
            t::PartContent::Text(text) => Content::Text(text),
            t::PartContent::Url(uri) => Content::File(file(File::FileWithUri(uri))),
            t::PartContent::Raw(bytes) => Content::File(file(File::FileWithBytes(file_with_bytes(&bytes)))),
            t::PartContent::Data(value) => Content::Data(pb::DataPart { data: Some(data_to_struct(value)) }),
        };
        pb::Part { part: Some(content) }
    }
}

/// A `Struct` holds only an object; any other value is wrapped as `{"value": …}`, as v0.3's JSON
/// does.
fn data_to_struct(value: Value) -> prost_types::Struct {
    match value {
        Value::Object(map) => json_to_struct(map),
        other => json_to_struct(Map::from_iter([("value".to_owned(), other)])),
    }
}

impl TryFrom<pb::Part> for t::Part {
    type Error = A2AError;

    fn try_from(part: pb::Part) -> Result<Self> {
        use pb::file_part::File;
        use pb::part::Part as Content;
        match part.part {
            Some(Content::Text(text)) => Ok(t::Part::text(text)),
            Some(Content::File(file)) => {
                let content = match file.file {
                    Some(File::FileWithUri(uri)) => t::PartContent::Url(uri),
                    Some(File::FileWithBytes(field)) => t::PartContent::Raw(file_from_bytes_field(&field)),
                    None => {
                        return Err(A2AError::invalid_params("a file part must hold file_with_uri or file_with_bytes"))
                    }
                };
                Ok(t::Part {
                    content,
                    metadata: None,
                    filename: non_empty(file.name),
                    media_type: non_empty(file.mime_type),
                })
            }
            // No Struct is an empty object, as v0.3's JSON decoder reads a data part without `data`.
            Some(Content::Data(data)) => {
                Ok(t::Part::data(Value::Object(data.data.map(struct_to_json).unwrap_or_default())))
            }
            None => Err(A2AError::invalid_params("a part must hold one of text, file or data")),
        }
    }
}

impl From<t::Message> for pb::Message {
    fn from(m: t::Message) -> Self {
        pb::Message {
            message_id: m.message_id,
            context_id: m.context_id,
            task_id: m.task_id,
            role: pb::Role::from(m.role) as i32,
            content: each_into(m.parts),
            metadata: metadata_to_proto(m.metadata),
            extensions: m.extensions,
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
            parts: each(m.content)?,
            metadata: metadata(m.metadata),
            extensions: m.extensions,
            reference_task_ids: Vec::new(),
        })
    }
}

// ---- Tasks and events ----------------------------------------------------------------------------

super::alike::conversions_alike_in_both_packages!(pb);

impl From<t::TaskStatus> for pb::TaskStatus {
    fn from(s: t::TaskStatus) -> Self {
        pb::TaskStatus {
            state: pb::TaskState::from(s.state) as i32,
            update: s.message.map(|m| pb::Message::from(*m)),
            timestamp: s.timestamp.map(timestamp_to_proto),
        }
    }
}

impl TryFrom<pb::TaskStatus> for t::TaskStatus {
    type Error = A2AError;

    fn try_from(s: pb::TaskStatus) -> Result<Self> {
        Ok(t::TaskStatus {
            state: task_state(s.state)?,
            message: s.update.map(t::Message::try_from).transpose()?.map(Box::new),
            timestamp: timestamp(s.timestamp, "status.timestamp")?,
        })
    }
}

/// v0.3's `final`: on the one event after which the stream closes.
impl From<t::TaskStatusUpdateEvent> for pb::TaskStatusUpdateEvent {
    fn from(e: t::TaskStatusUpdateEvent) -> Self {
        pb::TaskStatusUpdateEvent {
            task_id: e.task_id,
            context_id: e.context_id,
            r#final: t::Dialect::V03.profile().closes_stream_at(e.status.state),
            status: Some(e.status.into()),
            metadata: metadata_to_proto(e.metadata),
        }
    }
}

/// `final` is not kept: the model tells the end of a stream by the state.
impl From<t::StreamResponse> for pb::StreamResponse {
    fn from(r: t::StreamResponse) -> Self {
        use pb::stream_response::Payload;
        let payload = match r {
            t::StreamResponse::Task(task) => Payload::Task(task.into()),
            t::StreamResponse::Message(m) => Payload::Msg(m.into()),
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
            Some(Payload::Msg(m)) => t::StreamResponse::Message(m.try_into()?),
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
            t::SendMessageResponse::Message(m) => Payload::Msg(m.into()),
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
            Some(Payload::Msg(m)) => t::SendMessageResponse::Message(m.try_into()?),
            None => return Err(A2AError::invalid_params("a send response must hold a task or a message")),
        })
    }
}

// ---- Push notifications --------------------------------------------------------------------------

/// The inner config; its task is named by the resource around it.
fn push_config_to_proto(c: t::TaskPushNotificationConfig) -> pb::PushNotificationConfig {
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
fn push_config_from_proto(c: pb::PushNotificationConfig) -> t::TaskPushNotificationConfig {
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

// ---- Requests ------------------------------------------------------------------------------------

/// `blocking` as written: proto3 reads an unset `bool` as `false`.
impl From<pb::SendMessageConfiguration> for t::SendMessageConfiguration {
    fn from(c: pb::SendMessageConfiguration) -> Self {
        t::SendMessageConfiguration {
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

// ---- The agent card ------------------------------------------------------------------------------

/// The v0.3 card, derived as `agentwire_types::dialect::card` derives v0.3's JSON members: the
/// interfaces are those whose protocol version is 0.3, the first being the preferred one (else
/// the card's first interface); the extended card is offered as the *authenticated* one where
/// the card also requires credentials.
impl From<t::AgentCard> for pb::AgentCard {
    fn from(c: t::AgentCard) -> Self {
        let v03: Vec<&t::AgentInterface> =
            c.supported_interfaces.iter().filter(|i| i.protocol_version.starts_with("0.3")).collect();
        let preferred = v03.first().copied().or(c.supported_interfaces.first());
        let (url, preferred_transport) =
            preferred.map(|i| (i.url.clone(), i.protocol_binding.clone())).unwrap_or_default();
        let additional_interfaces = v03
            .iter()
            .map(|i| pb::AgentInterface { url: i.url.clone(), transport: i.protocol_binding.clone() })
            .collect();
        let extended = c.capabilities.extended_agent_card.unwrap_or(false) && !c.security_requirements.is_empty();
        pb::AgentCard {
            protocol_version: PROTOCOL_VERSION.to_owned(),
            name: c.name,
            description: c.description,
            url,
            preferred_transport,
            additional_interfaces,
            provider: c.provider.map(|p| pb::AgentProvider { url: p.url, organization: p.organization }),
            version: c.version,
            documentation_url: c.documentation_url.unwrap_or_default(),
            capabilities: Some(pb::AgentCapabilities {
                streaming: c.capabilities.streaming.unwrap_or(false),
                push_notifications: c.capabilities.push_notifications.unwrap_or(false),
                extensions: each_into(c.capabilities.extensions),
            }),
            security_schemes: c.security_schemes.into_iter().map(|(name, s)| (name, s.into())).collect(),
            security: each_into(c.security_requirements),
            default_input_modes: c.default_input_modes,
            default_output_modes: c.default_output_modes,
            skills: each_into(c.skills),
            supports_authenticated_extended_card: extended,
            signatures: each_into(c.signatures),
        }
    }
}

/// A v0.3 card as the model holds it: the preferred endpoint and the additional interfaces become
/// `supported_interfaces` (once each), at the card's protocol version; a capability that is off
/// is unset.
impl From<pb::AgentCard> for t::AgentCard {
    fn from(c: pb::AgentCard) -> Self {
        let protocol_version = major_minor(&c.protocol_version);
        let interface = |url: String, binding: String| t::AgentInterface {
            url,
            protocol_binding: binding,
            tenant: String::new(),
            protocol_version: protocol_version.clone(),
        };
        let mut supported_interfaces = Vec::new();
        if !c.url.is_empty() {
            // v0.3 reads an empty preferred transport as JSONRPC.
            let binding = non_empty(c.preferred_transport).unwrap_or_else(|| "JSONRPC".to_owned());
            supported_interfaces.push(interface(c.url, binding));
        }
        for i in c.additional_interfaces {
            if !supported_interfaces.iter().any(|s| s.url == i.url && s.protocol_binding == i.transport) {
                supported_interfaces.push(interface(i.url, i.transport));
            }
        }
        let capabilities = c.capabilities.unwrap_or_default();
        t::AgentCard {
            name: c.name,
            description: c.description,
            supported_interfaces,
            provider: c.provider.map(|p| t::AgentProvider { url: p.url, organization: p.organization }),
            version: c.version,
            documentation_url: non_empty(c.documentation_url),
            capabilities: t::AgentCapabilities {
                streaming: capabilities.streaming.then_some(true),
                push_notifications: capabilities.push_notifications.then_some(true),
                extensions: each_into(capabilities.extensions),
                extended_agent_card: c.supports_authenticated_extended_card.then_some(true),
            },
            // A scheme with no member set is no scheme: the card drops it.
            security_schemes: c
                .security_schemes
                .into_iter()
                .filter_map(|(name, s)| Some((name, scheme_from_proto(s)?)))
                .collect(),
            security_requirements: each_into(c.security),
            default_input_modes: c.default_input_modes,
            default_output_modes: c.default_output_modes,
            skills: each_into(c.skills),
            signatures: each_into(c.signatures),
            icon_url: None,
        }
    }
}

/// `0.3.0` → `0.3`, the form an interface's version takes; a card without one is 0.3.
fn major_minor(version: &str) -> String {
    let mut numbers = version.split('.');
    match (numbers.next(), numbers.next()) {
        (Some(major), Some(minor)) if !major.is_empty() && !minor.is_empty() => format!("{major}.{minor}"),
        _ => "0.3".to_owned(),
    }
}

impl From<t::AgentSkill> for pb::AgentSkill {
    fn from(s: t::AgentSkill) -> Self {
        pb::AgentSkill {
            id: s.id,
            name: s.name,
            description: s.description,
            tags: s.tags,
            examples: s.examples,
            input_modes: s.input_modes,
            output_modes: s.output_modes,
            security: each_into(s.security_requirements),
        }
    }
}

impl From<pb::AgentSkill> for t::AgentSkill {
    fn from(s: pb::AgentSkill) -> Self {
        t::AgentSkill {
            id: s.id,
            name: s.name,
            description: s.description,
            tags: s.tags,
            examples: s.examples,
            input_modes: s.input_modes,
            output_modes: s.output_modes,
            security_requirements: each_into(s.security),
        }
    }
}

impl From<t::SecurityRequirement> for pb::Security {
    fn from(r: t::SecurityRequirement) -> Self {
        let schemes = r.schemes.into_iter().map(|(name, scopes)| (name, pb::StringList { list: scopes.list }));
        pb::Security { schemes: schemes.collect() }
    }
}

impl From<pb::Security> for t::SecurityRequirement {
    fn from(r: pb::Security) -> Self {
        let schemes = r.schemes.into_iter().map(|(name, scopes)| (name, t::StringList { list: scopes.list }));
        t::SecurityRequirement { schemes: schemes.collect::<BTreeMap<_, _>>() }
    }
}

impl From<t::SecurityScheme> for pb::SecurityScheme {
    fn from(s: t::SecurityScheme) -> Self {
        use pb::security_scheme::Scheme;
        let scheme = match s {
            t::SecurityScheme::ApiKey(s) => Scheme::ApiKeySecurityScheme(pb::ApiKeySecurityScheme {
                description: s.description,
                location: s.location,
                name: s.name,
            }),
            t::SecurityScheme::HttpAuth(s) => Scheme::HttpAuthSecurityScheme(pb::HttpAuthSecurityScheme {
                description: s.description,
                scheme: s.scheme,
                bearer_format: s.bearer_format,
            }),
            t::SecurityScheme::OAuth2(s) => Scheme::Oauth2SecurityScheme(pb::OAuth2SecurityScheme {
                description: s.description,
                flows: flows_to_proto(&s.flows),
                oauth2_metadata_url: s.oauth2_metadata_url,
            }),
            t::SecurityScheme::OpenIdConnect(s) => {
                Scheme::OpenIdConnectSecurityScheme(pb::OpenIdConnectSecurityScheme {
                    description: s.description,
                    open_id_connect_url: s.open_id_connect_url,
                })
            }
            t::SecurityScheme::MutualTls(s) => {
                Scheme::MtlsSecurityScheme(pb::MutualTlsSecurityScheme { description: s.description })
            }
        };
        pb::SecurityScheme { scheme: Some(scheme) }
    }
}

fn scheme_from_proto(s: pb::SecurityScheme) -> Option<t::SecurityScheme> {
    use pb::security_scheme::Scheme;
    Some(match s.scheme? {
        Scheme::ApiKeySecurityScheme(s) => t::SecurityScheme::ApiKey(t::ApiKeySecurityScheme {
            description: s.description,
            location: s.location,
            name: s.name,
        }),
        Scheme::HttpAuthSecurityScheme(s) => t::SecurityScheme::HttpAuth(t::HttpAuthSecurityScheme {
            description: s.description,
            scheme: s.scheme,
            bearer_format: s.bearer_format,
        }),
        Scheme::Oauth2SecurityScheme(s) => t::SecurityScheme::OAuth2(t::OAuth2SecurityScheme {
            description: s.description,
            flows: s.flows.map_or(Value::Null, flows_from_proto),
            oauth2_metadata_url: s.oauth2_metadata_url,
        }),
        Scheme::OpenIdConnectSecurityScheme(s) => t::SecurityScheme::OpenIdConnect(t::OpenIdConnectSecurityScheme {
            description: s.description,
            open_id_connect_url: s.open_id_connect_url,
        }),
        Scheme::MtlsSecurityScheme(s) => {
            t::SecurityScheme::MutualTls(t::MutualTlsSecurityScheme { description: s.description })
        }
    })
}

// ---- OAuth 2.0 flows -----------------------------------------------------------------------------

/// The model keeps the flows as their JSON object (`{"authorizationCode": {…}}`); the v0.3 oneof
/// holds one flow, the first of the four it knows (so not `deviceCode`, nor `pkceRequired`).
fn flows_to_proto(flows: &Value) -> Option<pb::OAuthFlows> {
    use pb::o_auth_flows::Flow;
    let flow = flows.as_object()?.iter().find_map(|(name, flow)| {
        let flow = flow.as_object()?;
        // Read leniently: a member of the wrong type reads as unset.
        let text = |key: &str| flow.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let scopes = || -> HashMap<String, String> {
            let Some(scopes) = flow.get("scopes").and_then(Value::as_object) else { return HashMap::new() };
            scopes.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect()
        };
        Some(match name.as_str() {
            "authorizationCode" => Flow::AuthorizationCode(pb::AuthorizationCodeOAuthFlow {
                authorization_url: text("authorizationUrl"),
                token_url: text("tokenUrl"),
                refresh_url: text("refreshUrl"),
                scopes: scopes(),
            }),
            "clientCredentials" => Flow::ClientCredentials(pb::ClientCredentialsOAuthFlow {
                token_url: text("tokenUrl"),
                refresh_url: text("refreshUrl"),
                scopes: scopes(),
            }),
            "implicit" => Flow::Implicit(pb::ImplicitOAuthFlow {
                authorization_url: text("authorizationUrl"),
                refresh_url: text("refreshUrl"),
                scopes: scopes(),
            }),
            "password" => Flow::Password(pb::PasswordOAuthFlow {
                token_url: text("tokenUrl"),
                refresh_url: text("refreshUrl"),
                scopes: scopes(),
            }),
            _ => return None,
        })
    })?;
    Some(pb::OAuthFlows { flow: Some(flow) })
}

/// The flow as its JSON object; empty URLs are left out, as ProtoJSON leaves out defaults.
fn flows_from_proto(flows: pb::OAuthFlows) -> Value {
    use pb::o_auth_flows::Flow;
    let (name, urls, scopes) = match flows.flow {
        None => return Value::Object(Map::new()),
        Some(Flow::AuthorizationCode(f)) => (
            "authorizationCode",
            vec![("authorizationUrl", f.authorization_url), ("tokenUrl", f.token_url), ("refreshUrl", f.refresh_url)],
            f.scopes,
        ),
        Some(Flow::ClientCredentials(f)) => {
            ("clientCredentials", vec![("tokenUrl", f.token_url), ("refreshUrl", f.refresh_url)], f.scopes)
        }
        Some(Flow::Implicit(f)) => {
            ("implicit", vec![("authorizationUrl", f.authorization_url), ("refreshUrl", f.refresh_url)], f.scopes)
        }
        Some(Flow::Password(f)) => {
            ("password", vec![("tokenUrl", f.token_url), ("refreshUrl", f.refresh_url)], f.scopes)
        }
    };
    let mut flow: Map<String, Value> = urls
        .into_iter()
        .filter(|(_, url)| !url.is_empty())
        .map(|(k, url)| (k.to_owned(), Value::String(url)))
        .collect();
    // Sorted, so that the same card always reads the same.
    let scopes: BTreeMap<String, String> = scopes.into_iter().collect();
    flow.insert("scopes".to_owned(), Value::Object(scopes.into_iter().map(|(k, v)| (k, Value::String(v))).collect()));
    Value::Object(Map::from_iter([(name.to_owned(), Value::Object(flow))]))
}

#[cfg(test)]
mod tests {
    use agentwire_types as t;
    use prost::Message as _;
    use serde_json::json;

    use crate::a2a_v1 as pb;

    fn object(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        match value {
            serde_json::Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    /// Encodes to bytes and back, so that a round trip crosses the wire and not just the structs.
    fn through_the_wire<P: prost::Message + Default>(value: P) -> P {
        P::decode(value.encode_to_vec().as_slice()).expect("decodes")
    }

    /// canonical → proto → bytes → proto → canonical.
    fn round_trip<C, P>(value: C) -> C
    where
        C: Into<P> + TryFrom<P>,
        <C as TryFrom<P>>::Error: std::fmt::Debug,
        P: prost::Message + Default,
    {
        C::try_from(through_the_wire(value.into())).expect("converts back")
    }

    /// proto → canonical → proto, for requests a server reads.
    fn read_and_write<P, C>(wire: P) -> P
    where
        P: prost::Message + Default + From<C>,
        C: TryFrom<P>,
        <C as TryFrom<P>>::Error: std::fmt::Debug,
    {
        P::from(C::try_from(through_the_wire(wire)).expect("reads"))
    }

    /// A message with only what v0.3 can carry.
    fn message() -> t::Message {
        t::Message {
            message_id: "m-1".into(),
            context_id: "c-1".into(),
            task_id: "t-1".into(),
            role: t::Role::Agent,
            parts: vec![
                t::Part::text("hello"),
                t::Part::raw(vec![0, 1, 2, 255], "blob.bin", "application/octet-stream"),
                t::Part::url("https://example.com/f.pdf", "f.pdf", "application/pdf"),
                t::Part::data(json!({"n": 3, "pi": 3.25, "list": [true, null, "x"], "nested": {"k": -7}})),
            ],
            metadata: Some(object(json!({"trace": "abc", "depth": 2}))),
            extensions: vec!["https://example.com/ext".into()],
            reference_task_ids: Vec::new(),
        }
    }

    fn task(state: t::TaskState) -> t::Task {
        let mut artifact = t::Artifact::new("a-1", "report", vec![t::Part::text("body")]);
        artifact.description = "the report".into();
        artifact.extensions = vec!["urn:x".into()];
        artifact.metadata = Some(object(json!({"pages": 4})));
        t::Task {
            id: "t-1".into(),
            context_id: "c-1".into(),
            status: t::TaskStatus {
                state,
                message: Some(Box::new(message())),
                timestamp: t::Timestamp::from_millis(1_767_225_600_123),
            },
            artifacts: vec![artifact],
            history: vec![message(), t::Message::user("m-0", "hi")],
            metadata: Some(object(json!({"owner": "me"}))),
        }
    }

    fn push_config() -> t::TaskPushNotificationConfig {
        t::TaskPushNotificationConfig {
            tenant: String::new(),
            id: "cfg".into(),
            task_id: "t-1".into(),
            url: "https://hooks.example.com/a2a".into(),
            token: "secret".into(),
            authentication: Some(t::AuthenticationInfo { scheme: "Bearer".into(), credentials: "tok".into() }),
        }
    }

    fn status_update(state: t::TaskState) -> t::StreamResponse {
        t::StreamResponse::StatusUpdate(t::TaskStatusUpdateEvent {
            task_id: "t-1".into(),
            context_id: "c-1".into(),
            status: t::TaskStatus { state, message: None, timestamp: t::Timestamp::from_millis(5) },
            metadata: Some(object(json!({"k": "v"}))),
        })
    }

    #[test]
    fn every_state_keeps_its_number_and_canceled_is_spelled_cancelled() {
        for state in t::TaskState::ALL {
            let wire = pb::TaskState::from(state);
            assert_eq!(wire as i32, state.number(), "{state:?}");
            assert_eq!(t::TaskState::from(wire), state);
        }
        assert_eq!(pb::TaskState::from(t::TaskState::Canceled), pb::TaskState::Cancelled);
        assert_eq!(pb::TaskState::Cancelled as i32, 5);
        assert_eq!(pb::TaskState::Cancelled.as_str_name(), "TASK_STATE_CANCELLED");
        assert_eq!(pb::TaskState::AuthRequired as i32, 8);
        assert_eq!(pb::TaskState::Unspecified as i32, 0);
        assert_eq!(pb::Role::User as i32, 1);
        assert_eq!(pb::Role::from(t::Role::Agent) as i32, 2);

        let unknown = pb::TaskStatus { state: 9, ..Default::default() };
        let error = t::TaskStatus::try_from(unknown).unwrap_err();
        assert_eq!(error.kind(), t::ErrorKind::InvalidParams);
        assert!(error.message().contains('9'), "{}", error.message());
        let unknown_role = pb::Message { role: 3, ..Default::default() };
        assert_eq!(t::Message::try_from(unknown_role).unwrap_err().kind(), t::ErrorKind::InvalidParams);
    }

    #[test]
    fn field_numbers_are_the_published_ones() {
        // A message's parts are field 5 (`content`); an artifact's name is field 3.
        let wire = pb::Message { content: vec![pb::Part::default()], ..Default::default() };
        assert_eq!(wire.encode_to_vec(), vec![0x2a, 0]);
        let wire = pb::Artifact { name: "n".into(), ..Default::default() };
        assert_eq!(wire.encode_to_vec(), vec![0x1a, 1, b'n']);
        // `final` is field 4 of a status update; a send's message is field 1 (`request`).
        let wire = pb::TaskStatusUpdateEvent { r#final: true, ..Default::default() };
        assert_eq!(wire.encode_to_vec(), vec![0x20, 1]);
        let wire = pb::SendMessageRequest { request: Some(pb::Message::default()), ..Default::default() };
        assert_eq!(wire.encode_to_vec(), vec![0x0a, 0]);
        // A card's protocol version is field 16.
        let wire = pb::AgentCard { protocol_version: "x".into(), ..Default::default() };
        assert_eq!(wire.encode_to_vec(), vec![0x82, 0x01, 1, b'x']);
    }

    #[test]
    fn messages_tasks_and_events_survive_the_round_trip() {
        assert_eq!(round_trip::<_, pb::Message>(message()), message());
        for state in [t::TaskState::Canceled, t::TaskState::InputRequired, t::TaskState::Working] {
            assert_eq!(round_trip::<_, pb::Task>(task(state)), task(state));
        }
        let artifact = t::TaskArtifactUpdateEvent {
            task_id: "t-1".into(),
            context_id: "c-1".into(),
            artifact: task(t::TaskState::Working).artifacts.remove(0),
            append: true,
            last_chunk: true,
            metadata: None,
        };
        for event in [
            t::StreamResponse::Task(task(t::TaskState::Submitted)),
            t::StreamResponse::Message(message()),
            status_update(t::TaskState::Completed),
            status_update(t::TaskState::Working),
            t::StreamResponse::ArtifactUpdate(artifact),
        ] {
            assert_eq!(round_trip::<_, pb::StreamResponse>(event.clone()), event);
        }
        for reply in
            [t::SendMessageResponse::Task(task(t::TaskState::Completed)), t::SendMessageResponse::Message(message())]
        {
            assert_eq!(round_trip::<_, pb::SendMessageResponse>(reply.clone()), reply);
        }
    }

    #[test]
    fn parts_take_the_v03_shapes() {
        use pb::file_part::File;
        use pb::part::Part as Content;
        let wire = pb::Part::from(t::Part::url("https://x.example/f", "f.txt", "text/plain"));
        let expected = pb::FilePart {
            file: Some(File::FileWithUri("https://x.example/f".into())),
            mime_type: "text/plain".into(),
            name: "f.txt".into(),
        };
        assert_eq!(wire.part, Some(Content::File(expected)));
        // The bytes field holds the file's base64 text, as the official v0.3 SDKs fill it.
        let wire = pb::Part::from(t::Part::raw(b"hello".to_vec(), "g", ""));
        let expected = pb::FilePart {
            file: Some(File::FileWithBytes(b"aGVsbG8=".to_vec())),
            mime_type: String::new(),
            name: "g".into(),
        };
        assert_eq!(wire.part, Some(Content::File(expected.clone())));
        assert_eq!(t::Part::try_from(wire).unwrap().content, t::PartContent::Raw(b"hello".to_vec()));
        // The JavaScript v0.3 SDK puts the file itself there.
        let js = pb::FilePart { file: Some(File::FileWithBytes(vec![0xff, 0xd8])), ..expected };
        let part = t::Part::try_from(pb::Part { part: Some(Content::File(js)) }).unwrap();
        assert_eq!(part.content, t::PartContent::Raw(vec![0xff, 0xd8]));
        let Some(Content::Data(data)) = pb::Part::from(t::Part::data(json!({"k": [1]}))).part else {
            panic!("a data part")
        };
        assert_eq!(data.data.map(super::struct_to_json), Some(object(json!({"k": [1]}))));
    }

    #[test]
    fn what_v03_cannot_carry_is_dropped() {
        let mut data = t::Part::data(json!({"k": 1}));
        data.metadata = Some(object(json!({"source": "tool"})));
        let full = t::Message {
            parts: vec![t::Part::url("https://x.example/f", "f.txt", "text/plain"), data, t::Part::data(json!([1, 2]))],
            reference_task_ids: vec!["t-0".into()],
            ..message()
        };
        let back = round_trip::<_, pb::Message>(full);
        assert!(back.reference_task_ids.is_empty());
        assert_eq!(back.parts[0].filename.as_deref(), Some("f.txt"));
        assert_eq!(back.parts[0].media_type.as_deref(), Some("text/plain"));
        assert_eq!(back.parts[1].metadata, None);
        // A Struct holds only objects: a list comes back wrapped, as v0.3's JSON carries it.
        assert_eq!(back.parts[2].content, t::PartContent::Data(json!({"value": [1, 2]})));

        let cancel =
            t::CancelTaskRequest { tenant: "acme".into(), id: "t-1".into(), metadata: Some(object(json!({}))) };
        let back = t::CancelTaskRequest::try_from(through_the_wire(pb::CancelTaskRequest::from(cancel))).unwrap();
        assert_eq!(back, t::CancelTaskRequest { tenant: String::new(), id: "t-1".into(), metadata: None });
    }

    #[test]
    fn status_updates_are_final_where_the_stream_ends() {
        let is_final = |state| match pb::StreamResponse::from(status_update(state)).payload {
            Some(pb::stream_response::Payload::StatusUpdate(update)) => update.r#final,
            other => panic!("a status update, not {other:?}"),
        };
        for (state, expected) in [
            (t::TaskState::Submitted, false),
            (t::TaskState::Working, false),
            (t::TaskState::Completed, true),
            (t::TaskState::Failed, true),
            (t::TaskState::Canceled, true),
            (t::TaskState::Rejected, true),
            (t::TaskState::InputRequired, true),
            // Credentials may arrive out of band: the stream goes on.
            (t::TaskState::AuthRequired, false),
        ] {
            assert_eq!(is_final(state), expected, "{state:?}");
        }
    }

    #[test]
    fn push_configs_are_named_resources() {
        let wire = pb::TaskPushNotificationConfig::from(push_config());
        assert_eq!(wire.name, "tasks/t-1/pushNotificationConfigs/cfg");
        let inner = wire.push_notification_config.clone().expect("the config");
        assert_eq!(inner.id, "cfg");
        assert_eq!(inner.authentication.map(|a| a.schemes), Some(vec!["Bearer".to_owned()]));
        assert_eq!(round_trip::<_, pb::TaskPushNotificationConfig>(push_config()), push_config());

        // Without an inner id, the name's is used; only the first scheme is kept.
        let mut wire = wire;
        if let Some(inner) = wire.push_notification_config.as_mut() {
            inner.id.clear();
            inner.authentication = Some(pb::AuthenticationInfo {
                schemes: vec!["Basic".into(), "Bearer".into()],
                credentials: "c".into(),
            });
        }
        let config = t::TaskPushNotificationConfig::try_from(wire).unwrap();
        assert_eq!((config.task_id.as_str(), config.id.as_str()), ("t-1", "cfg"));
        assert_eq!(config.authentication.map(|a| a.scheme), Some("Basic".to_owned()));

        let page =
            t::ListTaskPushNotificationConfigsResponse { configs: vec![push_config()], next_page_token: "n".into() };
        assert_eq!(round_trip::<_, pb::ListTaskPushNotificationConfigResponse>(page.clone()), page);
    }

    #[test]
    fn requests_read_back_as_written() {
        let send = pb::SendMessageRequest {
            request: Some(pb::Message::from(message())),
            configuration: Some(pb::SendMessageConfiguration {
                accepted_output_modes: vec!["text/plain".into()],
                push_notification: Some(pb::PushNotificationConfig {
                    id: "p".into(),
                    url: "https://hooks.example.com".into(),
                    token: "tok".into(),
                    authentication: Some(pb::AuthenticationInfo {
                        schemes: vec!["Bearer".into()],
                        credentials: "c".into(),
                    }),
                }),
                history_length: 4,
                blocking: true,
            }),
            metadata: Some(super::json_to_struct(object(json!({"a": [1, 2]})))),
        };
        assert_eq!(read_and_write::<_, t::SendMessageRequest>(send.clone()), send);
        let get = pb::GetTaskRequest { name: "tasks/t-1".into(), history_length: 2 };
        assert_eq!(read_and_write::<_, t::GetTaskRequest>(get.clone()), get);
        let cancel = pb::CancelTaskRequest { name: "tasks/t-1".into() };
        assert_eq!(read_and_write::<_, t::CancelTaskRequest>(cancel.clone()), cancel);
        let subscribe = pb::TaskSubscriptionRequest { name: "tasks/t-1".into() };
        assert_eq!(read_and_write::<_, t::SubscribeToTaskRequest>(subscribe.clone()), subscribe);
        let create = pb::CreateTaskPushNotificationConfigRequest {
            parent: "tasks/t-1".into(),
            config_id: "cfg".into(),
            config: Some(pb::TaskPushNotificationConfig::from(push_config())),
        };
        assert_eq!(read_and_write::<_, t::TaskPushNotificationConfig>(create.clone()), create);
        let name = "tasks/t-1/pushNotificationConfigs/cfg".to_owned();
        let get = pb::GetTaskPushNotificationConfigRequest { name: name.clone() };
        assert_eq!(read_and_write::<_, t::TaskPushNotificationConfigRef>(get.clone()), get);
        let delete = pb::DeleteTaskPushNotificationConfigRequest { name };
        assert_eq!(read_and_write::<_, t::TaskPushNotificationConfigRef>(delete.clone()), delete);
        let list = pb::ListTaskPushNotificationConfigRequest {
            parent: "tasks/t-1".into(),
            page_size: 5,
            page_token: "p".into(),
        };
        assert_eq!(read_and_write::<_, t::ListTaskPushNotificationConfigsRequest>(list.clone()), list);
    }

    #[test]
    fn requests_read_into_the_model() {
        let get =
            t::GetTaskRequest::try_from(pb::GetTaskRequest { name: "tasks/t-1".into(), history_length: 3 }).unwrap();
        assert_eq!(get, t::GetTaskRequest { tenant: String::new(), id: "t-1".into(), history_length: Some(3) });
        // 0 is unset on this wire, which v0.3 reads as "the whole history".
        let get =
            t::GetTaskRequest::try_from(pb::GetTaskRequest { name: "tasks/t-1".into(), history_length: 0 }).unwrap();
        assert_eq!(get.history_length, None);

        let config = t::TaskPushNotificationConfigRef::try_from(pb::DeleteTaskPushNotificationConfigRequest {
            name: "tasks/t-1/pushNotificationConfigs/cfg".into(),
        })
        .unwrap();
        assert_eq!((config.task_id.as_str(), config.id.as_str()), ("t-1", "cfg"));

        let list = pb::ListTaskPushNotificationConfigRequest { parent: "tasks/t-1".into(), ..Default::default() };
        let list = t::ListTaskPushNotificationConfigsRequest::try_from(list).unwrap();
        assert_eq!((list.task_id.as_str(), list.page_size), ("t-1", None));

        // The parent names the task and config_id the config; the config's own name is not read.
        let mut inner = pb::TaskPushNotificationConfig::from(push_config());
        inner.name = "tasks/t-1/pushNotificationConfigs/None".into();
        if let Some(c) = inner.push_notification_config.as_mut() {
            c.id.clear();
        }
        let create = pb::CreateTaskPushNotificationConfigRequest {
            parent: "tasks/t-9".into(),
            config_id: "c-2".into(),
            config: Some(inner),
        };
        let config = t::TaskPushNotificationConfig::try_from(create).unwrap();
        assert_eq!(
            (config.task_id.as_str(), config.id.as_str(), config.url.as_str()),
            ("t-9", "c-2", "https://hooks.example.com/a2a")
        );
        // An id in the config itself wins over config_id, as on the v0.3 HTTP+JSON route.
        let create = pb::CreateTaskPushNotificationConfigRequest {
            parent: "tasks/t-9".into(),
            config_id: "other".into(),
            config: Some(pb::TaskPushNotificationConfig::from(push_config())),
        };
        assert_eq!(t::TaskPushNotificationConfig::try_from(create).unwrap().id, "cfg");
    }

    #[test]
    fn v03_waits_without_a_configuration_and_otherwise_as_asked() {
        let send = |configuration| pb::SendMessageRequest {
            request: Some(pb::Message::from(t::Message::user("m-1", "hi"))),
            configuration,
            metadata: None,
        };
        let read = |wire| t::SendMessageRequest::try_from(wire).unwrap().configuration.expect("always explicit");
        assert!(!read(send(None)).return_immediately);
        assert!(read(send(Some(pb::SendMessageConfiguration::default()))).return_immediately);
        let blocking = pb::SendMessageConfiguration { blocking: true, history_length: 0, ..Default::default() };
        let config = read(send(Some(blocking)));
        assert!(!config.return_immediately);
        assert_eq!(config.history_length, None);

        // Written from the model: no configuration is v1.0's default, which waits.
        let wire = pb::SendMessageRequest::from(t::SendMessageRequest::new(t::Message::user("m-1", "hi")));
        assert!(wire.configuration.expect("written").blocking);

        let no_message = pb::SendMessageRequest { request: None, ..send(None) };
        let error = t::SendMessageRequest::try_from(no_message).unwrap_err();
        assert!(error.message().contains("message"), "{}", error.message());
    }

    #[test]
    fn malformed_resource_names_are_invalid_params() {
        for name in ["", "t-1", "task/t-1", "tasks/", "tasks/t-1/", "tasks/a/b", "TASKS/t-1"] {
            let error = t::GetTaskRequest::try_from(pb::GetTaskRequest { name: name.into(), history_length: 0 })
                .expect_err(name);
            assert_eq!(error.kind(), t::ErrorKind::InvalidParams, "{name}");
            assert!(error.message().contains("name must be tasks/{task_id}"), "{}", error.message());
            assert!(error.message().contains(&format!("{name:?}")), "{}", error.message());
            assert!(t::CancelTaskRequest::try_from(pb::CancelTaskRequest { name: name.into() }).is_err(), "{name}");
            assert!(t::SubscribeToTaskRequest::try_from(pb::TaskSubscriptionRequest { name: name.into() }).is_err());
        }
        for name in [
            "",
            "tasks/t-1",
            "tasks/t-1/pushNotificationConfigs/",
            "tasks//pushNotificationConfigs/cfg",
            "tasks/t-1/pushNotificationConfigs/cfg/x",
            "tasks/t-1/configs/cfg",
        ] {
            let error = t::TaskPushNotificationConfigRef::try_from(pb::GetTaskPushNotificationConfigRequest {
                name: name.into(),
            })
            .expect_err(name);
            assert_eq!(error.kind(), t::ErrorKind::InvalidParams);
            assert!(
                error.message().contains("name must be tasks/{task_id}/pushNotificationConfigs/{config_id}"),
                "{}",
                error.message()
            );
            let delete = pb::DeleteTaskPushNotificationConfigRequest { name: name.into() };
            assert!(t::TaskPushNotificationConfigRef::try_from(delete).is_err(), "{name}");
            let config = pb::TaskPushNotificationConfig {
                name: name.into(),
                ..pb::TaskPushNotificationConfig::from(push_config())
            };
            assert!(t::TaskPushNotificationConfig::try_from(config).is_err(), "{name}");
        }
        let list = pb::ListTaskPushNotificationConfigRequest {
            parent: "tasks/t-1/pushNotificationConfigs".into(),
            ..Default::default()
        };
        let error = t::ListTaskPushNotificationConfigsRequest::try_from(list).unwrap_err();
        assert!(error.message().starts_with("parent must be tasks/{task_id}"), "{}", error.message());
        let create = pb::CreateTaskPushNotificationConfigRequest {
            parent: String::new(),
            config_id: "c".into(),
            config: Some(pb::TaskPushNotificationConfig::from(push_config())),
        };
        assert_eq!(t::TaskPushNotificationConfig::try_from(create).unwrap_err().kind(), t::ErrorKind::InvalidParams);
    }

    #[test]
    fn a_push_config_id_with_a_slash_is_refused_as_its_name_would_be() {
        let mut config = pb::TaskPushNotificationConfig::from(push_config());
        if let Some(inner) = config.push_notification_config.as_mut() {
            inner.id = "ho/k".into();
        }
        let create = pb::CreateTaskPushNotificationConfigRequest {
            parent: "tasks/t-1".into(),
            config_id: "cfg".into(),
            config: Some(config.clone()),
        };
        let error = t::TaskPushNotificationConfig::try_from(config).unwrap_err();
        assert_eq!(error.kind(), t::ErrorKind::InvalidParams);
        assert!(error.message().contains("\"ho/k\""), "{}", error.message());
        assert!(t::TaskPushNotificationConfig::try_from(create.clone()).is_err());
        // Without an inner id, the request's config_id names the config: the same rule holds.
        let unnamed = pb::PushNotificationConfig { id: String::new(), ..Default::default() };
        let by_config_id = pb::CreateTaskPushNotificationConfigRequest {
            config_id: "a/b".into(),
            config: Some(pb::TaskPushNotificationConfig {
                name: String::new(),
                push_notification_config: Some(unnamed),
            }),
            ..create
        };
        assert!(t::TaskPushNotificationConfig::try_from(by_config_id).is_err());
    }

    #[test]
    fn what_the_model_cannot_hold_is_invalid_params() {
        let cases: Vec<(t::A2AError, &str)> = vec![
            (t::Part::try_from(pb::Part::default()).unwrap_err(), "part"),
            (
                t::Part::try_from(pb::Part { part: Some(pb::part::Part::File(pb::FilePart::default())) }).unwrap_err(),
                "file_with_uri",
            ),
            (t::StreamResponse::try_from(pb::StreamResponse::default()).unwrap_err(), "payload"),
            (t::SendMessageResponse::try_from(pb::SendMessageResponse::default()).unwrap_err(), "task or a message"),
            (
                t::TaskPushNotificationConfig::try_from(pb::CreateTaskPushNotificationConfigRequest {
                    parent: "tasks/t-1".into(),
                    ..Default::default()
                })
                .unwrap_err(),
                "push_notification_config",
            ),
        ];
        for (error, mentions) in cases {
            assert_eq!(error.kind(), t::ErrorKind::InvalidParams);
            assert!(error.message().contains(mentions), "{}", error.message());
        }
        // A data part without its Struct is an empty object.
        let empty = pb::Part { part: Some(pb::part::Part::Data(pb::DataPart { data: None })) };
        assert_eq!(t::Part::try_from(empty).unwrap().content, t::PartContent::Data(json!({})));
    }

    fn card() -> t::AgentCard {
        serde_json::from_value(json!({
            "name": "Echo",
            "description": "echoes",
            "version": "1.2.3",
            "supportedInterfaces": [
                {"url": "http://127.0.0.1:8080/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": "http://127.0.0.1:8080", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
                {"url": "127.0.0.1:8080", "protocolBinding": "GRPC", "protocolVersion": "0.3", "tenant": "t"}
            ],
            "provider": {"url": "https://example.com", "organization": "Example"},
            "documentationUrl": "https://example.com/docs",
            "iconUrl": "https://example.com/icon.png",
            "capabilities": {
                "streaming": true,
                "extendedAgentCard": true,
                "extensions": [{"uri": "urn:ext", "description": "d", "required": true, "params": {"x": 1}}]
            },
            "securitySchemes": {
                "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}},
                "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
                "code": {"oauth2SecurityScheme": {"flows": {"authorizationCode": {
                    "authorizationUrl": "https://a", "tokenUrl": "https://t", "scopes": {"read": "r", "a": "b"}}}}},
                "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://o"}},
                "mtls": {"mtlsSecurityScheme": {"description": "client certs"}}
            },
            "securityRequirements": [{"schemes": {"bearer": {"list": ["read"]}}}],
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain", "application/json"],
            "skills": [{"id": "echo", "name": "Echo", "description": "d", "tags": ["t"], "examples": ["hi"],
                        "inputModes": ["text/plain"], "outputModes": ["text/plain"],
                        "securityRequirements": [{"schemes": {"key": {"list": []}}}]}],
            "signatures": [{"protected": "eyJ", "signature": "sig", "header": {"kid": "k1"}}]
        }))
        .unwrap_or_else(|e| panic!("the fixture is a card: {e}"))
    }

    #[test]
    fn the_card_takes_the_v03_shape() {
        let card = card();
        assert_eq!(card.security_schemes.len(), 5, "the fixture's schemes all parse");
        let wire = through_the_wire(pb::AgentCard::from(card.clone()));
        assert_eq!(wire.protocol_version, "0.3.0");
        assert_eq!((wire.url.as_str(), wire.preferred_transport.as_str()), ("http://127.0.0.1:8080", "JSONRPC"));
        let interfaces: Vec<(&str, &str)> =
            wire.additional_interfaces.iter().map(|i| (i.url.as_str(), i.transport.as_str())).collect();
        assert_eq!(interfaces, [("http://127.0.0.1:8080", "JSONRPC"), ("127.0.0.1:8080", "GRPC")]);
        assert!(wire.supports_authenticated_extended_card);
        assert_eq!(wire.security.len(), 1);
        assert_eq!(wire.security[0].schemes["bearer"].list, ["read"]);
        assert_eq!(wire.skills[0].security[0].schemes["key"].list, Vec::<String>::new());
        let capabilities = wire.capabilities.clone().expect("capabilities");
        assert!(capabilities.streaming && !capabilities.push_notifications);
        let Some(pb::security_scheme::Scheme::Oauth2SecurityScheme(oauth)) =
            wire.security_schemes["code"].scheme.clone()
        else {
            panic!("an OAuth 2.0 scheme")
        };
        let Some(pb::o_auth_flows::Flow::AuthorizationCode(flow)) = oauth.flows.and_then(|f| f.flow) else {
            panic!("the authorization code flow")
        };
        assert_eq!((flow.token_url.as_str(), flow.scopes["read"].as_str()), ("https://t", "r"));

        // Read back: the v0.3 interfaces at 0.3; what v0.3 has no place for is gone.
        let back = t::AgentCard::from(wire.clone());
        let expected = t::AgentCard {
            supported_interfaces: card.supported_interfaces[1..]
                .iter()
                .map(|i| t::AgentInterface { tenant: String::new(), ..i.clone() })
                .collect(),
            icon_url: None,
            ..card
        };
        assert_eq!(back, expected);
        // And the v0.3 card survives proto → model → proto.
        assert_eq!(pb::AgentCard::from(back), wire);
    }

    #[test]
    fn a_card_without_credentials_offers_no_authenticated_card() {
        let mut card = card();
        card.security_requirements.clear();
        card.supported_interfaces.truncate(1);
        let wire = pb::AgentCard::from(card);
        assert!(!wire.supports_authenticated_extended_card);
        // No 0.3 interface: the first one is the preferred endpoint, and there are no others.
        assert_eq!(wire.url, "http://127.0.0.1:8080/v1");
        assert!(wire.additional_interfaces.is_empty());
        // An empty preferred transport is JSONRPC.
        let read = t::AgentCard::from(pb::AgentCard { url: "http://x".into(), ..Default::default() });
        assert_eq!(read.supported_interfaces[0].protocol_binding, "JSONRPC");
        assert_eq!(read.supported_interfaces[0].protocol_version, "0.3");
    }
}
