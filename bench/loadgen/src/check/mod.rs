//! Is a response a real success? A full check parses and inspects the body; a quick check is a
//! few byte searches, cheap enough for every response at 100k+ requests per second.

mod grpc;
mod mcp;
mod sse;
mod task;

use serde_json::Value;

pub(crate) use grpc::{grpc_status, GrpcTaskCheck};
pub(crate) use mcp::McpCheck;
pub(crate) use sse::{first_event, StreamCheck};
pub(crate) use task::TaskCheck;

use crate::opt::Envelope;

/// The terminal state every benchmark task must reach.
const COMPLETED: &str = "TASK_STATE_COMPLETED";
/// The same state, as v0.3 writes it.
const COMPLETED_V03: &str = "completed";

/// Validates a whole response body (the status was already checked).
pub(crate) trait ResponseCheck {
    /// Byte searches only; returns the number of events (1 for a unary response).
    fn quick(&self, body: &[u8]) -> Result<u64, String>;
    /// Parses everything; returns the number of events.
    fn full(&self, body: &[u8]) -> Result<u64, String>;
}

/// Unwraps the A2A payload from a parsed body or event.
fn payload(envelope: Envelope, value: &Value) -> Result<&Value, String> {
    if value.get("error").is_some() {
        return Err(format!("error response: {}", abbreviate(&value.to_string())));
    }
    match envelope {
        Envelope::Jsonrpc | Envelope::JsonrpcV03 => {
            if value.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
                return Err("not a JSON-RPC 2.0 response".to_owned());
            }
            value.get("result").ok_or_else(|| "JSON-RPC response without result".to_owned())
        }
        Envelope::Rest | Envelope::None => Ok(value),
        Envelope::Grpc => Err("a gRPC answer is not JSON".to_owned()),
        Envelope::Mcp => Err("an MCP answer is checked by its own check".to_owned()),
    }
}

/// The state of a task snapshot or status update (`task.status.state`, `statusUpdate.status.state`).
fn reported_state(payload: &Value) -> Option<&str> {
    let holder = payload.get("task").or_else(|| payload.get("statusUpdate"))?;
    holder.pointer("/status/state")?.as_str()
}

fn parse(bytes: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("invalid JSON ({e}): {}", abbreviate_bytes(bytes)))
}

/// A short, single-line excerpt for error messages.
pub(crate) fn abbreviate_bytes(bytes: &[u8]) -> String {
    abbreviate(&String::from_utf8_lossy(bytes))
}

fn abbreviate(text: &str) -> String {
    const MAX: usize = 160;
    let flat = text.replace(['\r', '\n'], " ");
    match flat.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &flat[..cut]),
        None => flat,
    }
}
