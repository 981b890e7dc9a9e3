//! Traces across processes: a client command and a server, each exporting its spans over OTLP to
//! one collector, make one trace, the server's operation span a child of the client's call span,
//! named and attributed as the draft A2A semantic conventions say.

mod common;

use std::time::Duration;

use agentwire_test::{ReceivedSpan, SpanCollector};
use common::{Server, TempDir};

const SERVER_KIND: i32 = 2;
const CLIENT_KIND: i32 = 3;

fn find<'a>(spans: &'a [ReceivedSpan], service: &str, kind: i32) -> Option<&'a ReceivedSpan> {
    spans.iter().find(|span| span.service == service && span.kind == kind && span.name == "SendMessage")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_and_its_operation_make_one_trace() {
    let collector = SpanCollector::start().await;
    let dir = TempDir::new("traces");
    // Read by the server this test starts (the only test of this binary): its name, and a prompt
    // export.
    std::env::set_var("OTEL_SERVICE_NAME", "the-agent");
    std::env::set_var("OTEL_BSP_SCHEDULE_DELAY", "100");
    let server = Server::start(&dir.0, &["--store", "memory", "--otlp-endpoint", &collector.endpoint]).await;
    let send = tokio::process::Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["send", &server.base, "hello"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.endpoint)
        .env("OTEL_SERVICE_NAME", "the-caller")
        .output();
    let sent = tokio::time::timeout(Duration::from_secs(30), send).await.unwrap().unwrap();
    assert!(sent.status.success(), "{}", String::from_utf8_lossy(&sent.stderr));

    let spans = collector
        .wait_for(Duration::from_secs(15), |spans| {
            find(spans, "the-agent", SERVER_KIND).is_some() && find(spans, "the-caller", CLIENT_KIND).is_some()
        })
        .await;
    let (call, operation) =
        (find(&spans, "the-caller", CLIENT_KIND).unwrap(), find(&spans, "the-agent", SERVER_KIND).unwrap());
    assert_eq!(operation.trace_id, call.trace_id, "one trace: {spans:#?}");
    assert_eq!(operation.parent_span_id, call.span_id, "the operation is a child of the call");
    let attribute = |name: &str| operation.attributes.get(name).map(String::as_str);
    assert_eq!(attribute("a2a.method.name"), Some("SendMessage"));
    assert_eq!(attribute("a2a.protocol.version"), Some("1.0"));
    assert_eq!(attribute("a2a.task.state"), Some("TASK_STATE_COMPLETED"));
    assert!(attribute("a2a.task.id").is_some_and(|id| !id.is_empty()), "{operation:#?}");
    assert!(attribute("gen_ai.conversation.id").is_some_and(|id| !id.is_empty()), "{operation:#?}");
    assert_eq!(call.attributes.get("a2a.method.name").map(String::as_str), Some("SendMessage"));
    assert!(!operation.attributes.contains_key("thread.id"), "only the conventions' attributes: {operation:#?}");
}
