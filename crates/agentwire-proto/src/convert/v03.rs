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

super::alike::conversions_alike_in_both_packages!(pb, card);

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

mod card;
mod push;
mod requests;
#[cfg(test)]
mod tests;
