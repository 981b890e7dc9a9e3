//! The dialect codecs of `agentwire_types::dialect`: the readers of answers in every wire form
//! (v1.0 ProtoJSON, v0.3 JSON, v0.3 ProtoJSON), the agent card and push notification readers,
//! and the mirrors of the v0.3 and legacy requests, each checked against its encoder.

use agentwire_types::dialect::legacy::{self, Legacy};
use agentwire_types::dialect::v03::proto::{self, CreatePushConfig, Proto};
use agentwire_types::dialect::v03::{self, V03};
use agentwire_types::dialect::{card, push, FromWire, WireForm};
use agentwire_types::{
    CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, SendMessageRequest,
    SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::{assert_settles, split_selector};

const FORMS: [WireForm; 3] = [WireForm::V1, WireForm::V03, WireForm::V03Proto];

/// The number of decoders [`dialects`] selects among.
pub(crate) const DIALECT_DECODERS: usize = 32;

/// `data`'s first byte selects a decoder (modulo 32), the rest is its JSON:
///
/// - 0–17: an answer read in a wire form: Task, ListTasksResponse, SendMessageResponse,
///   StreamResponse, TaskPushNotificationConfig and ListTaskPushNotificationConfigsResponse, each
///   in v1.0 ProtoJSON, v0.3 JSON and v0.3 ProtoJSON (the selector modulo 3);
/// - 18: an agent card of any generation; 19: a push notification body of any generation;
/// - 20: v0.3 `message/send` params; 21: legacy `tasks/send` params; 22: v0.3's REST
///   `/v1/message:send` body; 23–25: v0.3 push config params, config reference and task id
///   params; 26: v0.3's REST push config body;
/// - 27–31: v0.3 GetTask, ListTasks, CancelTask, SubscribeToTask and GetExtendedAgentCard params,
///   which the canonical types read.
///
/// What decodes is written back by the dialect's encoder and must settle (see the crate's
/// documentation).
pub fn dialects(data: &[u8]) {
    let Some((selector, json)) = split_selector(data, DIALECT_DECODERS) else { return };
    let form = FORMS[selector % 3];
    let _decoded = match selector {
        0..=2 => in_form::<Task>(form, json),
        3..=5 => in_form::<ListTasksResponse>(form, json),
        6..=8 => in_form::<SendMessageResponse>(form, json),
        9..=11 => in_form::<StreamResponse>(form, json),
        12..=14 => in_form::<TaskPushNotificationConfig>(form, json),
        15..=17 => in_form::<ListTaskPushNotificationConfigsResponse>(form, json),
        18 => agent_card(json),
        19 => push_notification(json),
        20 => v03_params::<v03::MessageSendParams, SendMessageRequest>(json),
        21 => legacy_send(json),
        22 => v03_rest_send(json),
        23 => v03_params::<v03::PushConfigParams, TaskPushNotificationConfig>(json),
        24 => v03_params::<v03::PushConfigRef, TaskPushNotificationConfigRef>(json),
        25 => v03_params::<v03::TaskIdParams, ListTaskPushNotificationConfigsRequest>(json),
        26 => v03_rest_push_config(json),
        27 => v03_params::<GetTaskRequest, GetTaskRequest>(json),
        28 => v03_params::<ListTasksRequest, ListTasksRequest>(json),
        29 => v03_params::<CancelTaskRequest, CancelTaskRequest>(json),
        30 => v03_params::<SubscribeToTaskRequest, SubscribeToTaskRequest>(json),
        _ => v03_params::<GetExtendedAgentCardRequest, GetExtendedAgentCardRequest>(json),
    };
}

/// An answer read in `form`, written back in `form`, and in the legacy shape too.
fn in_form<T>(form: WireForm, json: &[u8]) -> Option<()>
where
    T: FromWire + Serialize,
    for<'a> V03<'a, T>: Serialize,
    for<'a> Proto<'a, T>: Serialize,
    for<'a> Legacy<'a, T>: Serialize,
{
    let value: Value = serde_json::from_slice(json).ok()?;
    let read = T::from_wire(form, value).ok()?;
    let encode = |value: &T| match form {
        WireForm::V1 => serde_json::to_value(value),
        WireForm::V03 => serde_json::to_value(V03(value)),
        WireForm::V03Proto => serde_json::to_value(Proto(value)),
    };
    let name = std::any::type_name::<T>();
    settles_unless_refused(name, &read, encode, |written| T::from_wire(form, written).map_err(|e| e.to_string()));
    // The legacy shape may refuse a value (a direct message on a stream): an error, not a panic.
    let _ = serde_json::to_vec(&Legacy(&read));
    Some(())
}

fn agent_card(json: &[u8]) -> Option<()> {
    let read = card::read(serde_json::from_slice(json).ok()?).ok()?;
    serde_json::to_vec(&read).expect("a card encodes");
    // v0.3's members name one protocol version for all their interfaces, and a card without a
    // v0.3 interface offers its first one there: such an interface reads back as a v0.3 one too,
    // and a v0.3 `false` as the extended card capability. The card settles from its second trip.
    let read = card::read(card::combined(&read)).expect("the reader reads the combined card");
    assert_settles("combined card", &read, card::combined, |written| card::read(written).map_err(|e| e.to_string()));
    Some(())
}

fn push_notification(json: &[u8]) -> Option<()> {
    let read = push::read(serde_json::from_slice(json).ok()?).ok()?;
    let encode = |event: &StreamResponse| serde_json::to_value(event).expect("an event encodes");
    assert_settles("push notification", &read, encode, |written| push::read(written).map_err(|e| e.to_string()));
    Some(())
}

/// [`assert_settles`] for an encoder that may refuse a value its reader accepts (the older shapes
/// need a message's role, which the readers leave unset when it is missing): a value it writes
/// must read back and settle.
fn settles_unless_refused<T, W: Clone + PartialEq + std::fmt::Debug>(
    what: &str,
    value: &T,
    encode: impl Fn(&T) -> serde_json::Result<W>,
    decode: impl Fn(W) -> Result<T, String>,
) {
    if encode(value).is_err() {
        return;
    }
    let encode = |value: &T| encode(value).expect("what the encoder wrote encodes again once read");
    assert_settles(what, value, encode, decode);
}

/// v0.3 params read through their mirror `M` into the canonical `T`, and written back in v0.3's
/// shape.
fn v03_params<M, T>(json: &[u8]) -> Option<()>
where
    M: DeserializeOwned + Into<T>,
    for<'a> V03<'a, T>: Serialize,
{
    let read: T = serde_json::from_slice::<M>(json).ok()?.into();
    let encode = |value: &T| serde_json::to_value(V03(value));
    let decode = |written| serde_json::from_value::<M>(written).map(Into::into).map_err(|e| e.to_string());
    settles_unless_refused(std::any::type_name::<M>(), &read, encode, decode);
    Some(())
}

/// Legacy `tasks/send` params: the legacy family has no request encoder (no client speaks it), so
/// what they decode to is written as v0.3 params.
fn legacy_send(json: &[u8]) -> Option<()> {
    let read = SendMessageRequest::from(serde_json::from_slice::<legacy::TaskSendParams>(json).ok()?);
    // A role-less message is refused, as in every older shape: an error, not a panic.
    let _ = serde_json::to_vec(&V03(&read));
    Some(())
}

fn v03_rest_send(json: &[u8]) -> Option<()> {
    let read = proto::send_message_request(std::str::from_utf8(json).ok()?).ok()?;
    let encode = |request: &SendMessageRequest| serde_json::to_string(&Proto(request));
    let decode = |written: String| proto::send_message_request(&written).map_err(|e| e.to_string());
    settles_unless_refused("v0.3 REST send", &read, encode, decode);
    Some(())
}

/// The body of v0.3's `POST /v1/tasks/{id}/pushNotificationConfigs`, for the task the route names.
fn v03_rest_push_config(json: &[u8]) -> Option<()> {
    const TASK: &str = "t-1";
    let read = serde_json::from_slice::<proto::PushConfigBody>(json).ok()?.into_config(TASK).ok()?;
    let encode = |config: &TaskPushNotificationConfig| {
        serde_json::to_value(CreatePushConfig(config)).expect("a push config encodes")
    };
    let decode = |written| {
        let body: proto::PushConfigBody = serde_json::from_value(written).map_err(|e| e.to_string())?;
        body.into_config(TASK).map_err(str::to_owned)
    };
    assert_settles("v0.3 REST push config", &read, encode, decode);
    Some(())
}
