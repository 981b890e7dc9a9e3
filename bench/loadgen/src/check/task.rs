//! Unary responses: a task that reached COMPLETED.

use memchr::memmem::Finder;

use super::{abbreviate_bytes, parse, payload, reported_state, ResponseCheck, COMPLETED, COMPLETED_V03};
use crate::opt::Envelope;

/// Checks SendMessage answers (`{"jsonrpc":"2.0","result":{"task":..}}` or `{"task":..}`), and
/// v0.3's `message/send` (`{"jsonrpc":"2.0","result":{"kind":"task",..}}`).
pub(crate) struct TaskCheck {
    envelope: Envelope,
    must_have: Vec<Finder<'static>>,
    error: Finder<'static>,
}

impl TaskCheck {
    pub(crate) fn new(envelope: Envelope) -> Self {
        let must_have: &[&str] = match envelope {
            Envelope::Jsonrpc => &["\"result\"", "\"task\"", COMPLETED],
            Envelope::Rest => &["\"task\"", COMPLETED],
            Envelope::JsonrpcV03 => &["\"result\"", "\"kind\":\"task\"", "\"completed\""],
            Envelope::Grpc | Envelope::Mcp | Envelope::None => &[],
        };
        let must_have = must_have.iter().map(|needle| Finder::new(needle.as_bytes()).into_owned()).collect();
        Self { envelope, must_have, error: Finder::new(b"\"error\"").into_owned() }
    }
}

impl ResponseCheck for TaskCheck {
    fn quick(&self, body: &[u8]) -> Result<u64, String> {
        if self.envelope == Envelope::None {
            return Ok(1);
        }
        let complete = self.must_have.iter().all(|needle| needle.find(body).is_some());
        if !complete || self.error.find(body).is_some() {
            return Err(format!("not a completed task: {}", abbreviate_bytes(body)));
        }
        Ok(1)
    }

    fn full(&self, body: &[u8]) -> Result<u64, String> {
        if self.envelope == Envelope::None {
            return Ok(1);
        }
        let value = parse(body)?;
        let payload = payload(self.envelope, &value)?;
        if self.envelope == Envelope::JsonrpcV03 {
            return v03_task(payload);
        }
        let task = payload.get("task").ok_or_else(|| format!("no task in {}", abbreviate_bytes(body)))?;
        if task.get("id").and_then(|id| id.as_str()).is_none_or(str::is_empty) {
            return Err("task without an id".to_owned());
        }
        match reported_state(payload) {
            Some(COMPLETED) => Ok(1),
            other => Err(format!("task state {other:?}, expected {COMPLETED}")),
        }
    }
}

/// A v0.3 result: the task itself.
fn v03_task(task: &serde_json::Value) -> Result<u64, String> {
    if task.get("kind").and_then(|kind| kind.as_str()) != Some("task") {
        return Err(format!("not a v0.3 task: {}", super::abbreviate(&task.to_string())));
    }
    if task.get("id").and_then(|id| id.as_str()).is_none_or(str::is_empty) {
        return Err("task without an id".to_owned());
    }
    match task.pointer("/status/state").and_then(|state| state.as_str()) {
        Some(COMPLETED_V03) => Ok(1),
        other => Err(format!("task state {other:?}, expected {COMPLETED_V03}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSONRPC_OK: &[u8] = br#"{"id":1,"jsonrpc":"2.0","result":{"task":{"id":"t1","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}}"#;
    const JSONRPC_ERROR: &[u8] =
        br#"{"id":1,"jsonrpc":"2.0","error":{"code":-32601,"message":"TASK_STATE_COMPLETED \"task\" \"result\""}}"#;
    const REST_WORKING: &[u8] = br#"{"task":{"id":"t1","status":{"state":"TASK_STATE_WORKING"}}}"#;

    #[test]
    fn completed_tasks_pass_both_checks() {
        let check = TaskCheck::new(Envelope::Jsonrpc);
        assert_eq!(check.quick(JSONRPC_OK), Ok(1));
        assert_eq!(check.full(JSONRPC_OK), Ok(1));
    }

    #[test]
    fn errors_fail_both_checks_even_when_they_quote_success() {
        let check = TaskCheck::new(Envelope::Jsonrpc);
        assert!(check.quick(JSONRPC_ERROR).is_err());
        assert!(check.full(JSONRPC_ERROR).is_err());
    }

    #[test]
    fn unfinished_tasks_fail() {
        let check = TaskCheck::new(Envelope::Rest);
        assert!(check.quick(REST_WORKING).is_err());
        assert!(check.full(REST_WORKING).is_err());
    }

    #[test]
    fn a_rest_body_is_not_a_jsonrpc_response() {
        let rest_ok = br#"{"task":{"id":"t1","status":{"state":"TASK_STATE_COMPLETED"}}}"#;
        assert_eq!(TaskCheck::new(Envelope::Rest).full(rest_ok), Ok(1));
        assert!(TaskCheck::new(Envelope::Jsonrpc).full(rest_ok).is_err());
    }

    #[test]
    fn v03_tasks_are_the_result_itself() {
        let check = TaskCheck::new(Envelope::JsonrpcV03);
        let ok = br#"{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t1","contextId":"c","status":{"state":"completed"}}}"#;
        assert_eq!((check.quick(ok), check.full(ok)), (Ok(1), Ok(1)));
        let working = br#"{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t1","status":{"state":"working"}}}"#;
        assert!(check.quick(working).is_err());
        assert!(check.full(working).is_err());
        assert!(check.full(JSONRPC_OK).is_err(), "a v1.0 answer is not a v0.3 one");
    }
}
