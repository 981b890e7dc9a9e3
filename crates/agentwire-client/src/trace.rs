//! The client's side of tracing: an `a2a.client` span per call, and the W3C trace context of the
//! span current when a call is made (`traceparent`, `tracestate`), sent with it, so that the
//! agent's spans join the caller's trace.

use http::{HeaderMap, HeaderName, HeaderValue};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The span of a call of `operation`, named after its v1.0 method.
pub(crate) fn call_span(operation: agentwire_types::Operation) -> tracing::Span {
    let method = operation.name();
    tracing::info_span!("a2a.client", otel.name = method, otel.kind = "client", a2a.method.name = method)
}

/// The trace context of the current span as headers: none when nothing traces.
pub(crate) fn context_headers() -> HeaderMap {
    let mut headers = HeaderMap::new();
    let context = tracing::Span::current().context();
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&context, &mut Headers(&mut headers));
    });
    headers
}

struct Headers<'a>(&'a mut HeaderMap);

impl opentelemetry::propagation::Injector for Headers<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(key.as_bytes()), HeaderValue::from_str(&value)) {
            self.0.insert(name, value);
        }
    }
}
