//! Copies of agentwire's answers to the benchmark requests (`hello` sent to the echo agent),
//! captured from `agentwire serve`, so the floor sends the same bytes a real server would.

// The bodies are macros so `concat!` can assemble the envelopes at compile time.
macro_rules! task {
    () => {
        r#"{"task":{"artifacts":[{"artifactId":"01a1fe5b-4523-703a-bdd2-de62268f8cf7","name":"echo","parts":[{"text":"hello"}]}],"contextId":"01a1fe5b-4523-703a-bdd2-de61c7e84d98","history":[{"contextId":"01a1fe5b-4523-703a-bdd2-de61c7e84d98","messageId":"m1","parts":[{"text":"hello"}],"role":"ROLE_USER","taskId":"01a1fe5b-4523-703a-bdd2-de60de4a798e"}],"id":"01a1fe5b-4523-703a-bdd2-de60de4a798e","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-11-21T13:45:56.771Z"}}}"#
    };
}

macro_rules! submitted {
    () => {
        r#"{"task":{"contextId":"01a1fe5b-4539-7240-b292-c4c946f42b7b","history":[{"contextId":"01a1fe5b-4539-7240-b292-c4c946f42b7b","messageId":"m1","parts":[{"text":"hello"}],"role":"ROLE_USER","taskId":"01a1fe5b-4539-7240-b292-c4c85a1cc5f5"}],"id":"01a1fe5b-4539-7240-b292-c4c85a1cc5f5","status":{"state":"TASK_STATE_SUBMITTED","timestamp":"2026-11-21T13:45:56.793Z"}}}"#
    };
}

macro_rules! artifact_update {
    () => {
        r#"{"artifactUpdate":{"artifact":{"artifactId":"01a1fe5b-4539-7240-b292-c4cab1e77710","name":"echo","parts":[{"text":"hello"}]},"contextId":"01a1fe5b-4539-7240-b292-c4c946f42b7b","taskId":"01a1fe5b-4539-7240-b292-c4c85a1cc5f5"}}"#
    };
}

macro_rules! completed_update {
    () => {
        r#"{"statusUpdate":{"contextId":"01a1fe5b-4539-7240-b292-c4c946f42b7b","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-11-21T13:45:56.793Z"},"taskId":"01a1fe5b-4539-7240-b292-c4c85a1cc5f5"}}"#
    };
}

/// The SendMessage result: a COMPLETED task with its history and the echo artifact.
pub(crate) const JSONRPC_TASK: &str = concat!(r#"{"id":1,"jsonrpc":"2.0","result":"#, task!(), "}");

/// `POST /message:send`: the same task, unwrapped.
pub(crate) const REST_TASK: &str = task!();

/// SendStreamingMessage: the task as submitted, the artifact, then COMPLETED.
pub(crate) const JSONRPC_EVENTS: [&str; 3] = [
    concat!(r#"data: {"id":1,"jsonrpc":"2.0","result":"#, submitted!(), "}\nid: 1\n\n"),
    concat!(r#"data: {"id":1,"jsonrpc":"2.0","result":"#, artifact_update!(), "}\nid: 2\n\n"),
    concat!(r#"data: {"id":1,"jsonrpc":"2.0","result":"#, completed_update!(), "}\nid: 3\n\n"),
];

/// `POST /message:stream`: the same events, unwrapped.
pub(crate) const REST_EVENTS: [&str; 3] = [
    concat!("data: ", submitted!(), "\nid: 1\n\n"),
    concat!("data: ", artifact_update!(), "\nid: 2\n\n"),
    concat!("data: ", completed_update!(), "\nid: 3\n\n"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unary_answers_are_as_long_as_agentwires() {
        // Content-Length of agentwire's answers to the same requests.
        assert_eq!(JSONRPC_TASK.len(), 505);
        assert_eq!(REST_TASK.len(), 471);
    }
}
