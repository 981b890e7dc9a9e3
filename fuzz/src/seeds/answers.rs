//! Seeds of the targets that read values rather than requests: the dialect codecs, ProtoJSON,
//! protobuf, and the client's event streams.

use agentwire_proto::{a2a_v1 as pb03, lf_a2a_v1 as pb1};
use agentwire_types::dialect::v03::proto::{CreatePushConfig, Proto};
use agentwire_types::dialect::v03::V03;
use agentwire_types::dialect::{card, Encoded};
use agentwire_types::jsonrpc::{self, ErrorInfo, ErrorObject};
use agentwire_types::{A2AError, Dialect, StreamResponse, TaskState};
use prost::Message as _;
use serde::Serialize;
use serde_json::{json, value::RawValue, Value};

use super::{to_json, Seeds};
use crate::samples::{self, STATES, TASK_ID};

/// What a value is written as in each answer form the client reads (the dialects target's order).
fn forms<T>(value: &T) -> [(&'static str, Vec<u8>); 3]
where
    T: Serialize,
    for<'a> V03<'a, T>: Serialize,
    for<'a> Proto<'a, T>: Serialize,
{
    [("v1", to_json(value)), ("v03", to_json(&V03(value))), ("v03-proto", to_json(&Proto(value)))]
}

fn add_forms<T>(seeds: &mut Seeds, first_selector: u8, name: &str, value: &T)
where
    T: Serialize,
    for<'a> V03<'a, T>: Serialize,
    for<'a> Proto<'a, T>: Serialize,
{
    for ((form, json), selector) in forms(value).into_iter().zip(first_selector..) {
        seeds.add_selected("dialects", format!("{name}-{form}"), selector, &json);
    }
}

/// Tasks, messages and parts in the spellings older clients and servers write (INVENTORY §6):
/// `kind` and `type` tags, lowercase and kebab states, `file.bytes`/`uri`, `mimeType`.
fn older_spellings() -> [(&'static str, Value); 4] {
    let parts = json!([
        {"kind": "text", "text": "hi"},
        {"type": "file", "file": {"name": "a.png", "mimeType": "image/png", "bytes": "iVBORw0KGgo="}},
        {"kind": "file", "file": {"uri": "https://example.com/a.pdf", "mediaType": "application/pdf"}},
        {"kind": "data", "data": {"k": [1, 2]}, "metadata": {"mimeType": "application/json"}}
    ]);
    let message = json!({"kind": "message", "messageId": "m-1", "role": "user", "parts": parts, "contextId": "c"});
    [
        (
            "v03-task",
            json!({"kind": "task", "id": TASK_ID, "contextId": "c", "status": {"state": "input-required",
                            "timestamp": "2025-04-02T16:59:25.331844"}, "history": [message]}),
        ),
        (
            "legacy-task",
            json!({"id": TASK_ID, "sessionId": "s-1", "status": {"state": "canceled", "message": message},
                               "artifacts": [{"name": "a", "parts": parts, "index": 0, "append": false}]}),
        ),
        (
            "proto-states",
            json!({"id": TASK_ID, "status": {"state": "TASK_STATE_CANCELLED"}, "artifacts": [{"artifactId": "a", "parts": [{"raw": "aGk=", "filename": "x", "mediaType": "text/plain"}]}]}),
        ),
        ("v03-message", message),
    ]
}

pub(super) fn dialects(seeds: &mut Seeds) {
    for state in [TaskState::Completed, TaskState::InputRequired, TaskState::Canceled] {
        add_forms(seeds, 0, &format!("task-{state:?}"), &samples::task(state));
    }
    add_forms(seeds, 3, "task-page", &samples::task_page());
    for (n, response) in samples::send_responses().iter().enumerate() {
        add_forms(seeds, 6, &format!("send-result-{n}"), response);
    }
    for (n, event) in samples::events().iter().enumerate() {
        add_forms(seeds, 9, &format!("event-{n}"), event);
    }
    add_forms(seeds, 12, "push-config", &samples::push_config());
    add_forms(seeds, 15, "push-config-page", &samples::config_page());
    for (name, json) in older_spellings() {
        seeds.add_selected("dialects", format!("older-{name}"), 0, &to_json(&json));
        seeds.add_selected("dialects", format!("older-{name}-event"), 10, &to_json(&json));
    }
    let card = samples::card();
    seeds.add_selected("dialects", "card-v1", 18, &to_json(&card));
    seeds.add_selected("dialects", "card-combined", 18, &to_json(&card::combined(&card)));
    let v03_card = json!({"name": "Echo", "description": "echoes", "url": "http://127.0.0.1:8080/", "version": "1",
        "protocolVersion": "0.3.0", "preferredTransport": "JSONRPC",
        "additionalInterfaces": [{"url": "http://127.0.0.1:8080/v1", "transport": "HTTP+JSON"}],
        "capabilities": {"streaming": true}, "supportsAuthenticatedExtendedCard": true,
        "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}, "security": [{"bearer": []}],
        "defaultInputModes": ["text"], "defaultOutputModes": ["text"], "skills": []});
    seeds.add_selected("dialects", "card-v03", 18, &to_json(&v03_card));
    for (n, event) in samples::events().iter().enumerate() {
        seeds.add_selected("dialects", format!("push-v1-{n}"), 19, &to_json(event));
    }
    seeds.add_selected("dialects", "push-v03-task", 19, &to_json(&V03(&samples::task(TaskState::Completed))));
    seeds.add_selected("dialects", "push-legacy-task", 19, &to_json(&older_spellings()[1].1));
    let send = samples::send_request(samples::message("m-1", "tck-complete-task"));
    seeds.add_selected("dialects", "v03-send-params", 20, &to_json(&V03(&send)));
    let v03_send = json!({"message": older_spellings()[3].1, "configuration": {"blocking": false, "historyLength": "3",
        "pushNotificationConfig": {"url": "https://x.example", "authentication": {"schemes": ["Bearer"]}}}});
    seeds.add_selected("dialects", "v03-send-params-literal", 20, &to_json(&v03_send));
    let legacy_send = json!({"id": "task-1", "sessionId": "s-1", "historyLength": 2, "acceptedOutputModes": ["text"],
        "message": {"role": "user", "parts": [{"type": "text", "text": "hi"}]},
        "pushNotification": {"url": "https://x.example", "token": "t"}});
    seeds.add_selected("dialects", "legacy-send-params", 21, &to_json(&legacy_send));
    seeds.add_selected("dialects", "v03-rest-send", 22, &to_json(&Proto(&send)));
    let file = json!({"file": {"fileWithBytes": "YUdWc2JHOD0=", "mimeType": "text/plain", "name": "hello.txt"}});
    let rest_send = json!({"message": {"messageId": "m", "role": "ROLE_USER", "content": [file, {"data": {"data": {"k": 1}}}]},
                           "configuration": {"blocking": true}});
    seeds.add_selected("dialects", "v03-rest-send-literal", 22, &to_json(&rest_send));
    seeds.add_selected("dialects", "v03-push-config-params", 23, &to_json(&V03(&samples::push_config())));
    seeds.add_selected("dialects", "v03-push-config-ref", 24, &to_json(&V03(&samples::config_ref())));
    seeds.add_selected("dialects", "v03-task-id-params", 25, &to_json(&V03(&samples::list_push_configs())));
    seeds.add_selected("dialects", "v03-rest-push-config", 26, &to_json(&CreatePushConfig(&samples::push_config())));
    let named = json!({"name": format!("tasks/{TASK_ID}/pushNotificationConfigs/c1"),
                       "pushNotificationConfig": {"url": "https://x.example", "token": "t"}});
    seeds.add_selected("dialects", "v03-rest-push-config-named", 26, &to_json(&named));
    seeds.add_selected("dialects", "v03-get-task", 27, &to_json(&V03(&samples::get_task())));
    seeds.add_selected("dialects", "v03-list-tasks", 28, &to_json(&V03(&samples::list_tasks())));
    seeds.add_selected("dialects", "v03-cancel-task", 29, &to_json(&V03(&samples::cancel_task())));
    seeds.add_selected("dialects", "v03-resubscribe", 30, &to_json(&V03(&samples::subscribe())));
    seeds.add_selected("dialects", "v03-extended-card", 31, &to_json(&V03(&samples::extended_card())));
}

pub(super) fn protojson(seeds: &mut Seeds) {
    let mut add = |name: &str, selector: u8, json: Vec<u8>| seeds.add_selected("protojson", name, selector, &json);
    for state in STATES {
        add(&format!("task-{state:?}"), 0, to_json(&samples::task(state)));
    }
    let message = samples::message("m-1", "hi");
    for (n, part) in message.parts.iter().enumerate() {
        add(&format!("part-{n}"), 2, to_json(part));
    }
    add("message", 1, to_json(&message));
    for (name, json) in older_spellings() {
        add(&format!("older-{name}"), if name.ends_with("message") { 1 } else { 0 }, to_json(&json));
    }
    for (n, event) in samples::events().iter().enumerate() {
        add(&format!("event-{n}"), 3, to_json(event));
    }
    for (n, response) in samples::send_responses().iter().enumerate() {
        add(&format!("send-result-{n}"), 4, to_json(response));
    }
    add("card", 5, to_json(&samples::card()));
    add("push-config", 6, to_json(&samples::push_config()));
    add("task-page", 7, to_json(&samples::task_page()));
    add("push-config-page", 8, to_json(&samples::config_page()));
    add("send", 9, to_json(&samples::send_request(message)));
    add("get-task", 10, to_json(&samples::get_task()));
    add("list-tasks", 11, to_json(&samples::list_tasks()));
    add(
        "list-tasks-strings",
        11,
        to_json(&json!({"pageSize": "20", "historyLength": "2", "includeArtifacts": true,
                                                   "statusTimestampAfter": "2025-01-01T00:00:00+02:00"})),
    );
    add("cancel-task", 12, to_json(&samples::cancel_task()));
    add("subscribe", 13, to_json(&samples::subscribe()));
    add("push-config-ref", 14, to_json(&samples::config_ref()));
    add("list-push-configs", 15, to_json(&samples::list_push_configs()));
    add("extended-card", 16, to_json(&samples::extended_card()));
    let error = A2AError::task_not_found(TASK_ID);
    for dialect in [Dialect::V1, Dialect::Legacy] {
        add(&format!("error-{dialect:?}"), 17, to_json(&ErrorObject::new(dialect, &error)));
    }
}

pub(super) fn protobuf(seeds: &mut Seeds) {
    let mut add = |name: &str, selector: u8, bytes: Vec<u8>| seeds.add_selected("protobuf", name, selector, &bytes);
    let send = samples::send_request(samples::message("m-1", "tck-complete-task"));
    let task = samples::task(TaskState::Completed);
    let [task_result, message_result] = samples::send_responses();
    let message = samples::message("m-2", "hi");
    add("v1-send", 0, pb1::SendMessageRequest::from(send.clone()).encode_to_vec());
    add("v1-get-task", 1, pb1::GetTaskRequest::from(samples::get_task()).encode_to_vec());
    add("v1-list-tasks", 2, pb1::ListTasksRequest::from(samples::list_tasks()).encode_to_vec());
    add("v1-cancel-task", 3, pb1::CancelTaskRequest::from(samples::cancel_task()).encode_to_vec());
    add("v1-subscribe", 4, pb1::SubscribeToTaskRequest::from(samples::subscribe()).encode_to_vec());
    add("v1-create-push-config", 5, pb1::TaskPushNotificationConfig::from(samples::push_config()).encode_to_vec());
    add(
        "v1-get-push-config",
        6,
        pb1::GetTaskPushNotificationConfigRequest::from(samples::config_ref()).encode_to_vec(),
    );
    add(
        "v1-delete-push-config",
        7,
        pb1::DeleteTaskPushNotificationConfigRequest::from(samples::config_ref()).encode_to_vec(),
    );
    let list_configs = pb1::ListTaskPushNotificationConfigsRequest::from(samples::list_push_configs());
    add("v1-list-push-configs", 8, list_configs.encode_to_vec());
    add("v1-extended-card", 9, pb1::GetExtendedAgentCardRequest::from(samples::extended_card()).encode_to_vec());
    add("v1-send-result-task", 10, pb1::SendMessageResponse::from(task_result.clone()).encode_to_vec());
    add("v1-send-result-message", 10, pb1::SendMessageResponse::from(message_result.clone()).encode_to_vec());
    for (n, event) in samples::events().into_iter().enumerate() {
        add(&format!("v1-event-{n}"), 11, pb1::StreamResponse::from(event.clone()).encode_to_vec());
        add(&format!("v03-event-{n}"), 26, pb03::StreamResponse::from(event).encode_to_vec());
    }
    add("v1-task", 12, pb1::Task::from(task.clone()).encode_to_vec());
    add("v1-task-page", 13, pb1::ListTasksResponse::from(samples::task_page()).encode_to_vec());
    let config_page = pb1::ListTaskPushNotificationConfigsResponse::from(samples::config_page());
    add("v1-push-config-page", 14, config_page.encode_to_vec());
    // Protobuf writes a map in no fixed order: one security scheme per card keeps seeds stable.
    let card = samples::card();
    for (name, scheme) in &card.security_schemes {
        let one =
            agentwire_types::AgentCard { security_schemes: [(name.clone(), scheme.clone())].into(), ..card.clone() };
        add(&format!("v1-card-{name}"), 15, pb1::AgentCard::from(one.clone()).encode_to_vec());
        add(&format!("v03-card-{name}"), 30, pb03::AgentCard::from(one).encode_to_vec());
    }
    add("v1-message", 16, pb1::Message::from(message.clone()).encode_to_vec());
    add("v03-send", 17, pb03::SendMessageRequest::from(send).encode_to_vec());
    add("v03-get-task", 18, pb03::GetTaskRequest::from(samples::get_task()).encode_to_vec());
    add("v03-cancel-task", 19, pb03::CancelTaskRequest::from(samples::cancel_task()).encode_to_vec());
    add("v03-subscribe", 20, pb03::TaskSubscriptionRequest::from(samples::subscribe()).encode_to_vec());
    let create = pb03::CreateTaskPushNotificationConfigRequest::from(samples::push_config());
    add("v03-create-push-config", 21, create.encode_to_vec());
    add(
        "v03-get-push-config",
        22,
        pb03::GetTaskPushNotificationConfigRequest::from(samples::config_ref()).encode_to_vec(),
    );
    let delete = pb03::DeleteTaskPushNotificationConfigRequest::from(samples::config_ref());
    add("v03-delete-push-config", 23, delete.encode_to_vec());
    let list_configs = pb03::ListTaskPushNotificationConfigRequest::from(samples::list_push_configs());
    add("v03-list-push-configs", 24, list_configs.encode_to_vec());
    add("v03-send-result-task", 25, pb03::SendMessageResponse::from(task_result).encode_to_vec());
    add("v03-send-result-message", 25, pb03::SendMessageResponse::from(message_result).encode_to_vec());
    add("v03-task", 27, pb03::Task::from(task).encode_to_vec());
    add("v03-push-config", 28, pb03::TaskPushNotificationConfig::from(samples::push_config()).encode_to_vec());
    let config_page = pb03::ListTaskPushNotificationConfigResponse::from(samples::config_page());
    add("v03-push-config-page", 29, config_page.encode_to_vec());
    add("v03-message", 31, pb03::Message::from(message).encode_to_vec());
}

/// An event stream as a server of each interface writes it (the sse target's order: JSON-RPC
/// v1.0 and v0.3, then HTTP+JSON v1.0 and v0.3): `id:` lines, keep-alive comments, one `data:`
/// line per event, and an error to end it.
fn event_stream(interface: u8, line_end: &str) -> String {
    let error = A2AError::task_not_found(TASK_ID);
    let dialect = match interface {
        0 | 2 => Dialect::V1,
        _ => Dialect::V03,
    };
    let id = RawValue::from_string("1".to_owned()).expect("1 is JSON");
    let data = |event: &StreamResponse| match interface {
        0 | 1 => to_json(&jsonrpc::Response::result(&id, Encoded(dialect, event))),
        2 => to_json(event),
        _ => to_json(&Proto(event)),
    };
    let failure = match interface {
        0 | 1 => to_json(&jsonrpc::Response::<()>::error(&id, ErrorObject::new(dialect, &error))),
        2 => to_json(&json!({"error": {"code": 404, "status": "NOT_FOUND", "message": error.message(),
                                       "details": ErrorInfo::of(&error).into_iter().collect::<Vec<_>>()}})),
        _ => to_json(&ErrorObject::new(dialect, &error)),
    };
    let mut body = format!(":keep-alive{line_end}{line_end}retry: 1000{line_end}");
    for (seq, event) in samples::events().iter().enumerate() {
        let data = String::from_utf8(data(event)).expect("JSON is UTF-8");
        body.push_str(&format!("id: {}{line_end}event: message{line_end}data: {data}{line_end}{line_end}", seq + 1));
    }
    let failure = String::from_utf8(failure).expect("JSON is UTF-8");
    body.push_str(&format!("data: {failure}{line_end}{line_end}"));
    body
}

pub(super) fn sse(seeds: &mut Seeds) {
    const CUT: u8 = 42;
    let names = ["jsonrpc-v1", "jsonrpc-v03", "rest-v1", "rest-v03"];
    for (interface, name) in (0..).zip(names) {
        seeds.add("sse", name, [&[interface, CUT][..], event_stream(interface, "\n").as_bytes()].concat());
        let crlf = format!("\u{feff}{}", event_stream(interface, "\r\n"));
        seeds.add("sse", format!("{name}-crlf-bom"), [&[interface, CUT + 1][..], crlf.as_bytes()].concat());
    }
    // One event's JSON over several `data:` lines, which the client joins with newlines.
    let split =
        "id: 7\ndata: {\"statusUpdate\":\ndata: {\"taskId\":\"t\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}\n\n";
    seeds.add("sse", "rest-v1-multiline-data", [&[2, 0][..], split.as_bytes()].concat());
}
