//! An OpenTelemetry collector for tests: an OTLP/gRPC trace receiver on a loopback port that
//! keeps every span it is sent.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{TraceService, TraceServiceServer};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use opentelemetry_proto::tonic::common::v1::any_value::Value;

/// A span as the collector received it, ids in hexadecimal.
#[derive(Debug, Clone)]
pub struct ReceivedSpan {
    /// The exporting process's `service.name`.
    pub service: String,
    /// The span's name.
    pub name: String,
    /// OTLP's span kind: 2 server, 3 client.
    pub kind: i32,
    /// The trace it belongs to.
    pub trace_id: String,
    /// The span's own id.
    pub span_id: String,
    /// Empty for a root span.
    pub parent_span_id: String,
    /// String, integer and boolean attributes, as text.
    pub attributes: BTreeMap<String, String>,
}

/// The collector, serving until dropped.
pub struct SpanCollector {
    /// `http://127.0.0.1:PORT`, for `OTEL_EXPORTER_OTLP_ENDPOINT` or `--otlp-endpoint`.
    pub endpoint: String,
    spans: Arc<Mutex<Vec<ReceivedSpan>>>,
    server: tokio::task::JoinHandle<()>,
}

impl SpanCollector {
    /// Starts receiving on a free loopback port.
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a loopback port");
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let spans = Arc::new(Mutex::new(Vec::new()));
        let service = TraceServiceServer::new(Receiver(Arc::clone(&spans)));
        let incoming = tonic::transport::server::TcpIncoming::from(listener);
        let server = tokio::spawn(async move {
            let _ = tonic::transport::Server::builder().add_service(service).serve_with_incoming(incoming).await;
        });
        Self { endpoint, spans, server }
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.spans.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The spans received once `done` holds of them, within `timeout`; panics past it.
    pub async fn wait_for(&self, timeout: Duration, done: impl Fn(&[ReceivedSpan]) -> bool) -> Vec<ReceivedSpan> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            assert!(tokio::time::Instant::now() < deadline, "spans received within {timeout:?}: {spans:#?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for SpanCollector {
    fn drop(&mut self) {
        self.server.abort();
    }
}

struct Receiver(Arc<Mutex<Vec<ReceivedSpan>>>);

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut received = Vec::new();
        for resource_spans in request.into_inner().resource_spans {
            let resource = resource_spans.resource.map(|r| r.attributes).unwrap_or_default();
            let service = text_attributes(resource).remove("service.name").unwrap_or_default();
            for span in resource_spans.scope_spans.into_iter().flat_map(|scope| scope.spans) {
                received.push(ReceivedSpan {
                    service: service.clone(),
                    name: span.name,
                    kind: span.kind,
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    attributes: text_attributes(span.attributes),
                });
            }
        }
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend(received);
        Ok(tonic::Response::new(ExportTraceServiceResponse { partial_success: None }))
    }
}

/// Each attribute as text; an array as its elements' texts joined by `,`.
fn text_attributes(attributes: Vec<opentelemetry_proto::tonic::common::v1::KeyValue>) -> BTreeMap<String, String> {
    attributes.into_iter().filter_map(|kv| Some((kv.key, kv.value.and_then(|v| v.value).and_then(text)?))).collect()
}

fn text(value: Value) -> Option<String> {
    match value {
        Value::StringValue(s) => Some(s),
        Value::IntValue(i) => Some(i.to_string()),
        Value::BoolValue(b) => Some(b.to_string()),
        Value::DoubleValue(d) => Some(d.to_string()),
        Value::ArrayValue(array) => {
            let texts = array.values.into_iter().filter_map(|element| element.value.and_then(text));
            Some(texts.collect::<Vec<_>>().join(","))
        }
        _ => None,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
