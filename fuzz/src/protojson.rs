//! The ProtoJSON readers of the canonical v1.0 types: what every v1.0 binding, the stores and the
//! client decode with serde.

use agentwire_types::jsonrpc::ErrorObject;
use agentwire_types::{
    AgentCard, CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, Message, Part, SendMessageRequest,
    SendMessageResponse, StreamResponse, SubscribeToTaskRequest, Task, TaskPushNotificationConfig,
    TaskPushNotificationConfigRef,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::{assert_settles, split_selector};

/// The number of types [`protojson`] selects among.
pub(crate) const PROTOJSON_TYPES: usize = 18;

/// `data`'s first byte selects a canonical type (modulo 18), the rest is its JSON: 0 Task,
/// 1 Message, 2 Part, 3 StreamResponse, 4 SendMessageResponse, 5 AgentCard,
/// 6 TaskPushNotificationConfig, 7 ListTasksResponse, 8 ListTaskPushNotificationConfigsResponse,
/// 9 SendMessageRequest, 10 GetTaskRequest, 11 ListTasksRequest, 12 CancelTaskRequest,
/// 13 SubscribeToTaskRequest, 14 TaskPushNotificationConfigRef,
/// 15 ListTaskPushNotificationConfigsRequest, 16 GetExtendedAgentCardRequest, 17 a JSON-RPC error
/// object.
///
/// What decodes is encoded again and must settle (see the crate's documentation).
pub fn protojson(data: &[u8]) {
    let Some((selector, json)) = split_selector(data, PROTOJSON_TYPES) else { return };
    match selector {
        0 => settles::<Task>(json),
        1 => settles::<Message>(json),
        2 => settles::<Part>(json),
        3 => settles::<StreamResponse>(json),
        4 => settles::<SendMessageResponse>(json),
        5 => settles::<AgentCard>(json),
        6 => settles::<TaskPushNotificationConfig>(json),
        7 => settles::<ListTasksResponse>(json),
        8 => settles::<ListTaskPushNotificationConfigsResponse>(json),
        9 => settles::<SendMessageRequest>(json),
        10 => settles::<GetTaskRequest>(json),
        11 => settles::<ListTasksRequest>(json),
        12 => settles::<CancelTaskRequest>(json),
        13 => settles::<SubscribeToTaskRequest>(json),
        14 => settles::<TaskPushNotificationConfigRef>(json),
        15 => settles::<ListTaskPushNotificationConfigsRequest>(json),
        16 => settles::<GetExtendedAgentCardRequest>(json),
        _ => settles::<ErrorObject>(json),
    }
}

fn settles<T: Serialize + DeserializeOwned>(json: &[u8]) {
    let Ok(read) = serde_json::from_slice::<T>(json) else { return };
    let encode = |value: &T| serde_json::to_vec(value).expect("a decoded value encodes");
    let decode = |written: Vec<u8>| serde_json::from_slice::<T>(&written).map_err(|e| e.to_string());
    assert_settles(std::any::type_name::<T>(), &read, encode, decode);
}
