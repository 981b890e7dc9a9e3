//! Fixtures for the codec benchmarks: the wire text of agentwire's echo exchange, and the SSE
//! framing agentwire applies to each stream event.
//!
//! agentwire's own framing (`agentwire-server`'s `http/sse.rs`) is private, so
//! [`frame_like_agentwire`] repeats its steps: the JSON-RPC envelope around the StreamResponse is
//! serialized straight to text, which axum writes as `data:` and `id:` lines. [`frame_via_value`]
//! is how agentwire framed events before, through a `serde_json::Value`, kept to show the gain.

use std::io::Write as _;

use agentwire_types::StreamResponse;
use serde::Serialize;
use serde_json::json;

/// A user message as clients send it.
pub const MESSAGE: &str = r#"{"contextId":"01a1fe5b-4523-703a-bdd2-de61c7e84d98","messageId":"m1","parts":[{"text":"hello"}],"role":"ROLE_USER","taskId":"01a1fe5b-4523-703a-bdd2-de60de4a798e"}"#;

/// A completed echo task with a two-message history and the echo artifact.
pub const TASK: &str = r#"{"artifacts":[{"artifactId":"01a1fe5b-4523-703a-bdd2-de62268f8cf7","name":"echo","parts":[{"text":"hello"}]}],"contextId":"01a1fe5b-4523-703a-bdd2-de61c7e84d98","history":[{"contextId":"01a1fe5b-4523-703a-bdd2-de61c7e84d98","messageId":"m1","parts":[{"text":"hello"}],"role":"ROLE_USER","taskId":"01a1fe5b-4523-703a-bdd2-de60de4a798e"},{"contextId":"01a1fe5b-4523-703a-bdd2-de61c7e84d98","messageId":"01a1fe5b-4523-703a-bdd2-de63a8e1f0c2","parts":[{"text":"hello"}],"role":"ROLE_AGENT","taskId":"01a1fe5b-4523-703a-bdd2-de60de4a798e"}],"id":"01a1fe5b-4523-703a-bdd2-de60de4a798e","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-11-21T13:45:56.771Z"}}"#;

/// The artifact event of the echo stream.
pub const ARTIFACT_UPDATE: &str = r#"{"artifactUpdate":{"artifact":{"artifactId":"01a1fe5b-4539-7240-b292-c4cab1e77710","name":"echo","parts":[{"text":"hello"}]},"contextId":"01a1fe5b-4539-7240-b292-c4c946f42b7b","taskId":"01a1fe5b-4539-7240-b292-c4c85a1cc5f5"}}"#;

/// The last event of the echo stream.
pub const STATUS_UPDATE: &str = r#"{"statusUpdate":{"contextId":"01a1fe5b-4539-7240-b292-c4c946f42b7b","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-11-21T13:45:56.793Z"},"taskId":"01a1fe5b-4539-7240-b292-c4c85a1cc5f5"}}"#;

/// Writes one SSE event through a `Value` envelope (agentwire's first framing).
pub fn frame_via_value(out: &mut Vec<u8>, seq: u64, response: &StreamResponse) {
    let envelope = json!({ "jsonrpc": "2.0", "id": 1, "result": response });
    let _ = write!(out, "data: {envelope}\nid: {seq}\n\n");
}

/// The same event the way agentwire's JSON-RPC binding writes it now: serialized straight into the
/// buffer with no intermediate `Value`. (Members come out in declaration order rather than sorted,
/// which JSON readers do not mind.)
pub fn frame_like_agentwire(out: &mut Vec<u8>, seq: u64, response: &StreamResponse) {
    #[derive(Serialize)]
    struct Envelope<'a> {
        id: u32,
        jsonrpc: &'static str,
        result: &'a StreamResponse,
    }
    out.extend_from_slice(b"data: ");
    let _ = serde_json::to_writer(&mut *out, &Envelope { id: 1, jsonrpc: "2.0", result: response });
    let _ = write!(out, "\nid: {seq}\n\n");
}

#[cfg(test)]
mod tests {
    use agentwire_types::{Message, Task};
    use serde::de::DeserializeOwned;
    use serde_json::Value;

    use super::*;

    /// Decoding and re-encoding keeps every member (the order may change: agentwire's wire text
    /// has sorted members because it passes through `Value`).
    fn assert_round_trips<T: Serialize + DeserializeOwned>(wire: &str) {
        let decoded: T = serde_json::from_str(wire).unwrap();
        let reencoded = serde_json::to_value(&decoded).unwrap();
        assert_eq!(reencoded, serde_json::from_str::<Value>(wire).unwrap());
    }

    #[test]
    fn fixtures_round_trip() {
        assert_round_trips::<Message>(MESSAGE);
        assert_round_trips::<Task>(TASK);
        assert_round_trips::<StreamResponse>(ARTIFACT_UPDATE);
        assert_round_trips::<StreamResponse>(STATUS_UPDATE);
    }

    #[test]
    fn both_framings_write_the_same_event() {
        let response: StreamResponse = serde_json::from_str(STATUS_UPDATE).unwrap();
        let (mut via_value, mut direct) = (Vec::new(), Vec::new());
        frame_via_value(&mut via_value, 3, &response);
        frame_like_agentwire(&mut direct, 3, &response);
        let lines =
            |bytes: &[u8]| String::from_utf8(bytes.to_vec()).unwrap().lines().map(str::to_owned).collect::<Vec<_>>();
        let (via_value, direct) = (lines(&via_value), lines(&direct));
        assert_eq!(via_value[1..], direct[1..], "id line and blank line");
        let data = |line: &str| serde_json::from_str::<Value>(line.strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(data(&via_value[0]), data(&direct[0]));
    }
}
