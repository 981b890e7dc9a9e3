//! JSON-RPC 2.0 at `/`: the v1.0 PascalCase methods.

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::{header, HeaderMap};
use serde_json::{json, Value};

use agentwire_types::{A2AError, Result};

use super::errors::{jsonrpc_error_object, jsonrpc_http_status};
use super::meta::RequestMeta;
use super::{decode, read_body, sse, AppState};
use crate::core::StreamItem;
use crate::RequestContext;

/// A JSON-RPC request id: a string, a number or null.
type Id = Value;

fn error_response(id: &Id, error: &A2AError) -> Response {
    let body = json!({ "jsonrpc": "2.0", "id": id, "error": jsonrpc_error_object(error) });
    (jsonrpc_http_status(error.kind()), axum::Json(body)).into_response()
}

fn result_response(id: &Id, result: impl serde::Serialize) -> Response {
    match serde_json::to_value(result) {
        Ok(result) => axum::Json(json!({ "jsonrpc": "2.0", "id": id, "result": result })).into_response(),
        Err(e) => error_response(id, &A2AError::internal(format!("could not encode the result: {e}"))),
    }
}

/// Whether a Content-Type names JSON (`application/json`, `application/a2a+json`, any `+json`).
pub(crate) fn is_json_media_type(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else { return false };
    let essence = value.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

pub(crate) async fn handle(State(state): State<AppState>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let null = Value::Null;
    // The media type is checked before anything is parsed.
    if !is_json_media_type(&parts.headers) {
        let error = A2AError::content_type_not_supported("JSON-RPC requests must have Content-Type application/json");
        return error_response(&null, &error);
    }
    let bytes = match read_body(body, state.handler.limits().max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(error) => return error_response(&null, &error),
    };
    let envelope = match parse_envelope(&bytes) {
        Ok(envelope) => envelope,
        Err((id, error)) => return error_response(&id, &error),
    };
    let meta = RequestMeta::from_parts(&parts);
    let ctx = match meta.context("") {
        Ok(ctx) => ctx,
        Err(error) => return error_response(&envelope.id, &error),
    };
    dispatch(&state, &ctx, envelope).await
}

struct Envelope {
    id: Id,
    method: String,
    params: Value,
}

fn parse_envelope(bytes: &Bytes) -> std::result::Result<Envelope, (Id, A2AError)> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| (Value::Null, A2AError::parse(e)))?;
    let Value::Object(mut object) = value else {
        let message = if value.is_array() {
            "batch requests are not supported; send one request per call"
        } else {
            "a JSON-RPC request must be an object"
        };
        return Err((Value::Null, A2AError::invalid_request(message)));
    };
    let id = match object.remove("id") {
        Some(id @ (Value::String(_) | Value::Number(_) | Value::Null)) => id,
        None => Value::Null,
        Some(_) => return Err((Value::Null, A2AError::invalid_request("id must be a string, a number or null"))),
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((id, A2AError::invalid_request("jsonrpc must be \"2.0\"")));
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        _ => return Err((id, A2AError::invalid_request("method must be a string"))),
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(params @ Value::Object(_)) => params,
        Some(_) => return Err((id, A2AError::invalid_params("params must be an object"))),
    };
    Ok(Envelope { id, method, params })
}

async fn dispatch(state: &AppState, ctx: &RequestContext, envelope: Envelope) -> Response {
    let Envelope { id, method, params: p } = envelope;
    let h = &state.handler;
    macro_rules! unary {
        ($call:expr) => {
            match $call {
                Ok(result) => result_response(&id, result),
                Err(error) => error_response(&id, &error),
            }
        };
    }
    match method.as_str() {
        "SendMessage" => unary!(async { h.send_message(ctx, decode(p)?).await }.await),
        "GetTask" => unary!(async { h.get_task(ctx, decode(p)?).await }.await),
        "ListTasks" => unary!(async { h.list_tasks(ctx, decode(p)?).await }.await),
        "CancelTask" => unary!(async { h.cancel_task(ctx, decode(p)?).await }.await),
        "CreateTaskPushNotificationConfig" => {
            unary!(async { h.create_task_push_notification_config(ctx, decode(p)?).await }.await)
        }
        "GetTaskPushNotificationConfig" => {
            unary!(async { h.get_task_push_notification_config(ctx, decode(p)?).await }.await)
        }
        "ListTaskPushNotificationConfigs" => {
            unary!(async { h.list_task_push_notification_configs(ctx, decode(p)?).await }.await)
        }
        "DeleteTaskPushNotificationConfig" => {
            unary!(async { h.delete_task_push_notification_config(ctx, decode(p)?).await.map(|()| json!({})) }.await)
        }
        "GetExtendedAgentCard" => unary!(async { h.get_extended_agent_card(ctx, decode(p)?).await }.await),
        "SendStreamingMessage" => {
            let events = async { h.send_streaming_message(ctx, decode(p)?).await }.await;
            stream_response(id, events)
        }
        "SubscribeToTask" => {
            let events = async { h.subscribe_to_task(ctx, decode(p)?).await }.await;
            stream_response(id, events)
        }
        other => error_response(&id, &A2AError::method_not_found(other)),
    }
}

/// Errors found before the stream starts are plain JSON-RPC responses; later ones are SSE events.
fn stream_response(id: Id, events: Result<crate::TaskEventStream>) -> Response {
    match events {
        Err(error) => error_response(&id, &error),
        Ok(events) => sse::respond(events, move |item: std::result::Result<&StreamItem, &A2AError>| match item {
            Ok(item) => json!({ "jsonrpc": "2.0", "id": id, "result": &*item.response }),
            Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": jsonrpc_error_object(error) }),
        }),
    }
}
