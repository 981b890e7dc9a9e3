//! The gRPC bindings' messages: prost decoding of `lf.a2a.v1` (v1.0) and `a2a.v1` (v0.3), and the
//! conversions of `agentwire-proto` to the canonical types and back.

use agentwire_proto::{a2a_v1 as v03, lf_a2a_v1 as v1};
use agentwire_types as t;

use crate::{assert_settles, split_selector};

/// The number of messages [`protobuf`] selects among.
pub(crate) const PROTOBUF_MESSAGES: usize = 32;

/// `data`'s first byte selects a message (modulo 32), the rest is its protobuf encoding. 0–16
/// are `lf.a2a.v1`: the requests of every operation (SendMessage, GetTask, ListTasks, CancelTask,
/// SubscribeToTask, the push config create, get, delete and list, GetExtendedAgentCard), then the
/// answers (send result, stream response, Task, ListTasksResponse, the push config list,
/// AgentCard, Message). 17–31 are `a2a.v1`: the requests (SendMessage, GetTask, CancelTask,
/// TaskSubscription, the push config create, get, delete and list), then the answers (send result,
/// stream response, Task, push config, push config list, AgentCard, Message).
///
/// A message that converts to a canonical value is converted back, and must settle (see the
/// crate's documentation).
pub fn protobuf(data: &[u8]) {
    let Some((selector, bytes)) = split_selector(data, PROTOBUF_MESSAGES) else { return };
    match selector {
        0 => settles::<v1::SendMessageRequest, t::SendMessageRequest>(bytes),
        1 => settles::<v1::GetTaskRequest, t::GetTaskRequest>(bytes),
        2 => settles::<v1::ListTasksRequest, t::ListTasksRequest>(bytes),
        3 => settles::<v1::CancelTaskRequest, t::CancelTaskRequest>(bytes),
        4 => settles::<v1::SubscribeToTaskRequest, t::SubscribeToTaskRequest>(bytes),
        5 => settles::<v1::TaskPushNotificationConfig, t::TaskPushNotificationConfig>(bytes),
        6 => settles::<v1::GetTaskPushNotificationConfigRequest, t::TaskPushNotificationConfigRef>(bytes),
        7 => settles::<v1::DeleteTaskPushNotificationConfigRequest, t::TaskPushNotificationConfigRef>(bytes),
        8 => settles::<v1::ListTaskPushNotificationConfigsRequest, t::ListTaskPushNotificationConfigsRequest>(bytes),
        9 => settles::<v1::GetExtendedAgentCardRequest, t::GetExtendedAgentCardRequest>(bytes),
        10 => settles::<v1::SendMessageResponse, t::SendMessageResponse>(bytes),
        11 => settles::<v1::StreamResponse, t::StreamResponse>(bytes),
        12 => settles::<v1::Task, t::Task>(bytes),
        13 => settles::<v1::ListTasksResponse, t::ListTasksResponse>(bytes),
        14 => settles::<v1::ListTaskPushNotificationConfigsResponse, t::ListTaskPushNotificationConfigsResponse>(bytes),
        15 => settles::<v1::AgentCard, t::AgentCard>(bytes),
        16 => settles::<v1::Message, t::Message>(bytes),
        17 => settles::<v03::SendMessageRequest, t::SendMessageRequest>(bytes),
        18 => settles::<v03::GetTaskRequest, t::GetTaskRequest>(bytes),
        19 => settles::<v03::CancelTaskRequest, t::CancelTaskRequest>(bytes),
        20 => settles::<v03::TaskSubscriptionRequest, t::SubscribeToTaskRequest>(bytes),
        21 => settles::<v03::CreateTaskPushNotificationConfigRequest, t::TaskPushNotificationConfig>(bytes),
        22 => settles::<v03::GetTaskPushNotificationConfigRequest, t::TaskPushNotificationConfigRef>(bytes),
        23 => settles::<v03::DeleteTaskPushNotificationConfigRequest, t::TaskPushNotificationConfigRef>(bytes),
        24 => settles::<v03::ListTaskPushNotificationConfigRequest, t::ListTaskPushNotificationConfigsRequest>(bytes),
        25 => settles::<v03::SendMessageResponse, t::SendMessageResponse>(bytes),
        26 => settles::<v03::StreamResponse, t::StreamResponse>(bytes),
        27 => settles::<v03::Task, t::Task>(bytes),
        28 => settles::<v03::TaskPushNotificationConfig, t::TaskPushNotificationConfig>(bytes),
        29 => settles::<v03::ListTaskPushNotificationConfigResponse, t::ListTaskPushNotificationConfigsResponse>(bytes),
        30 => v03_card(bytes),
        _ => settles::<v03::Message, t::Message>(bytes),
    }
}

fn settles<P, T>(bytes: &[u8])
where
    P: prost::Message + Default + Clone + PartialEq + std::fmt::Debug + From<T>,
    T: TryFrom<P> + Clone,
    T::Error: std::fmt::Display,
{
    let Ok(wire) = P::decode(bytes) else { return };
    let Ok(read) = T::try_from(wire) else { return };
    let encode = |value: &T| P::from(value.clone());
    let decode = |written: P| T::try_from(written).map_err(|e| e.to_string());
    assert_settles(std::any::type_name::<P>(), &read, encode, decode);
}

/// An `a2a.v1` card names one protocol version for all its interfaces, and a card without a v0.3
/// interface offers its first one as the preferred: that one reads back as a v0.3 interface. The
/// card settles from its second trip.
fn v03_card(bytes: &[u8]) {
    let Ok(card) = <v03::AgentCard as prost::Message>::decode(bytes) else { return };
    let once = v03::AgentCard::from(t::AgentCard::from(card));
    settles::<v03::AgentCard, t::AgentCard>(&prost::Message::encode_to_vec(&once));
}
