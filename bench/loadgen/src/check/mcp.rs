//! MCP `tools/call` answers from agentwire's MCP server: one JSON-RPC response (as a JSON body or
//! one SSE event) whose result is not an error and whose structured content says the A2A task it
//! ran reached COMPLETED.

use memchr::memmem::Finder;
use serde_json::Value;

use super::{abbreviate_bytes, ResponseCheck};

pub(crate) struct McpCheck {
    must_have: Vec<Finder<'static>>,
    error: Finder<'static>,
}

impl McpCheck {
    pub(crate) fn new() -> Self {
        let must_have = ["\"result\"", "\"isError\":false", "\"state\":\"COMPLETED\""];
        let must_have = must_have.iter().map(|needle| Finder::new(needle.as_bytes()).into_owned()).collect();
        Self { must_have, error: Finder::new(b"\"error\"").into_owned() }
    }
}

impl ResponseCheck for McpCheck {
    fn quick(&self, body: &[u8]) -> Result<u64, String> {
        let complete = self.must_have.iter().all(|needle| needle.find(body).is_some());
        if !complete || self.error.find(body).is_some() {
            return Err(format!("not a completed tool call: {}", abbreviate_bytes(body)));
        }
        Ok(1)
    }

    fn full(&self, body: &[u8]) -> Result<u64, String> {
        let text = std::str::from_utf8(body).map_err(|_| "the answer is not UTF-8".to_owned())?;
        // A JSON body, or the data of the one SSE event that carries the response.
        let json = text.lines().find_map(|line| line.strip_prefix("data:")).map_or(text, str::trim);
        let value: Value =
            serde_json::from_str(json).map_err(|e| format!("invalid JSON ({e}): {}", abbreviate_bytes(body)))?;
        if value.get("error").is_some() {
            return Err(format!("error response: {}", abbreviate_bytes(body)));
        }
        let result = value.get("result").ok_or_else(|| "a response without result".to_owned())?;
        if result.get("isError") != Some(&Value::Bool(false)) {
            return Err(format!("the tool reported an error: {}", abbreviate_bytes(body)));
        }
        match result.pointer("/structuredContent/state").and_then(Value::as_str) {
            Some("COMPLETED") => Ok(1),
            other => Err(format!("task state {other:?}, expected COMPLETED")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &[u8] = b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hello\"}],\"structuredContent\":{\"state\":\"COMPLETED\"},\"isError\":false}}\n\n";
    const FAILED: &[u8] = b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[],\"structuredContent\":{\"state\":\"FAILED\"},\"isError\":true}}\n\n";
    const ERROR: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"no tool named x\"}}";

    #[test]
    fn completed_calls_pass_both_checks() {
        let check = McpCheck::new();
        assert_eq!(check.quick(OK), Ok(1));
        assert_eq!(check.full(OK), Ok(1));
    }

    #[test]
    fn failed_calls_and_errors_fail_both_checks() {
        let check = McpCheck::new();
        for body in [FAILED, ERROR] {
            assert!(check.quick(body).is_err());
            assert!(check.full(body).is_err());
        }
    }
}
