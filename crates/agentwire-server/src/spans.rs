//! A tracing span per operation, named and attributed as the draft A2A semantic conventions name
//! them (`a2a.server`, named after the v1.0 method), and the child of the caller's span when the
//! request carries W3C trace context (`traceparent`, `tracestate` headers or gRPC metadata).
//!
//! The spans are `tracing` spans: a `tracing-opentelemetry` layer in the subscriber exports them
//! (the `agentwire` command does with `--otlp-endpoint`), and any other subscriber logs them.

use std::sync::Arc;
use std::task::{Context, Poll};

use agentwire_store::TraceContext;
use agentwire_types::{A2AError, A2aRequest, A2aResponse};
use futures_util::future::BoxFuture;
use http::HeaderMap;
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt as _, TraceFlags, TraceId};
use tower::{Layer, Service};
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use crate::RequestContext;

/// Wraps every operation of the service it wraps in an `a2a.server` span. Cheap when nothing
/// records spans at info level.
///
/// ```
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::{router, OperationSpans, RequestHandler};
/// use tower::ServiceBuilder;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let handler = RequestHandler::builder(EchoAgent).build();
/// let app = router(ServiceBuilder::new().layer(OperationSpans).service(handler));
/// # drop(app);
/// # });
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct OperationSpans;

impl<S> Layer<S> for OperationSpans {
    type Service = Spanned<S>;

    fn layer(&self, inner: S) -> Spanned<S> {
        Spanned { inner }
    }
}

/// An operation service whose operations run in spans; made by [`OperationSpans`].
#[derive(Debug, Clone)]
pub struct Spanned<S> {
    inner: S,
}

impl<S> Service<(RequestContext, A2aRequest)> for Spanned<S>
where
    S: Service<(RequestContext, A2aRequest), Response = A2aResponse, Error = A2AError>,
    S::Future: Send + 'static,
{
    type Response = A2aResponse;
    type Error = A2AError;
    type Future = BoxFuture<'static, Result<A2aResponse, A2AError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), A2AError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, (ctx, request): (RequestContext, A2aRequest)) -> Self::Future {
        let span = operation_span(&ctx, &request);
        let answer = {
            let _entered = span.enter();
            self.inner.call((ctx, request))
        };
        Box::pin(
            async move {
                let answer = answer.await;
                let span = tracing::Span::current();
                match &answer {
                    Ok(response) => record_task(&span, response),
                    Err(error) => {
                        span.record("error.type", error.kind().reason());
                        span.record("otel.status_code", "error");
                        span.record("otel.status_description", error.message());
                    }
                }
                answer
            }
            .instrument(span),
        )
    }
}

/// The span of one operation, a child of the caller's when the request carries its context.
fn operation_span(ctx: &RequestContext, request: &A2aRequest) -> tracing::Span {
    let method = request.operation().name();
    let span = tracing::info_span!(
        "a2a.server",
        otel.name = method,
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        otel.status_description = tracing::field::Empty,
        a2a.method.name = method,
        a2a.protocol.version = crate::metrics::generation(ctx.dialect),
        a2a.binding = ctx.binding.name(),
        a2a.tenant = ctx.tenant.as_str(),
        a2a.task.id = tracing::field::Empty,
        a2a.task.state = tracing::field::Empty,
        gen_ai.conversation.id = tracing::field::Empty,
        error.type = tracing::field::Empty,
    );
    if !span.is_disabled() {
        // A span with a parent of its own already, or no OpenTelemetry layer, keeps its parent.
        let _ = span.set_parent(caller_context(&ctx.metadata));
    }
    span
}

/// What a reply says of its task.
fn record_task(span: &tracing::Span, response: &A2aResponse) {
    let task = match response {
        A2aResponse::Task(task) => Some(task),
        A2aResponse::Send(agentwire_types::SendMessageResponse::Task(task)) => Some(task),
        _ => None,
    };
    if let Some(task) = task {
        span.record("a2a.task.id", task.id.as_str());
        span.record("gen_ai.conversation.id", task.context_id.as_str());
        span.record("a2a.task.state", task.status.state.as_proto_name());
    }
}

/// The caller's trace context, from the W3C headers of a request (or its gRPC metadata).
pub(crate) fn caller_context(headers: &HeaderMap) -> opentelemetry::Context {
    opentelemetry::global::get_text_map_propagator(|propagator| propagator.extract(&Headers(headers)))
}

struct Headers<'a>(&'a HeaderMap);

impl opentelemetry::propagation::Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|name| name.as_str()).collect()
    }
}

/// The span of an agent's execution of a task: what the GenAI conventions call invoking an
/// agent. The child of the operation that started it; it lasts until the execution ends, which
/// may be long after that operation answered.
pub(crate) fn execution_span(agent: &str, task_id: &str, context_id: &str) -> tracing::Span {
    tracing::info_span!(
        "invoke_agent",
        otel.name = "invoke_agent",
        otel.kind = "internal",
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = agent,
        a2a.task.id = task_id,
        gen_ai.conversation.id = context_id,
    )
}

/// The span of one commit to a task's log, in the store.
pub(crate) fn commit_span(task_id: &str) -> tracing::Span {
    tracing::info_span!("commit", otel.name = "commit", otel.kind = "internal", a2a.task.id = task_id)
}

/// The span of one attempt to deliver a push notification: an HTTP client span, the child of
/// the work that made the commit it delivers (`made_by`) when that was traced.
pub(crate) fn webhook_span(
    url: &reqwest::Url,
    task_id: &str,
    resend: u32,
    made_by: Option<&TraceContext>,
) -> tracing::Span {
    let span = tracing::info_span!(
        "POST",
        otel.name = "POST",
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        http.request.method = "POST",
        http.request.resend_count = tracing::field::Empty,
        http.response.status_code = tracing::field::Empty,
        url.full = url.as_str(),
        server.address = url.host_str().unwrap_or_default(),
        a2a.task.id = task_id,
        error.type = tracing::field::Empty,
    );
    if resend > 0 {
        span.record("http.request.resend_count", resend);
    }
    if let Some(made_by) = made_by.filter(|_| !span.is_disabled()) {
        let state = made_by.tracestate.parse().unwrap_or_default();
        let parent = SpanContext::new(
            TraceId::from_bytes(made_by.trace_id),
            SpanId::from_bytes(made_by.span_id),
            TraceFlags::new(made_by.flags),
            true,
            state,
        );
        let _ = span.set_parent(opentelemetry::Context::new().with_remote_span_context(parent));
    }
    span
}

/// Records how an HTTP call ended on its span: the status, or why there was none.
pub(crate) fn record_http_outcome(span: &tracing::Span, status: Option<http::StatusCode>, error_type: Option<&str>) {
    if let Some(status) = status {
        span.record("http.response.status_code", status.as_u16());
    }
    if let Some(error_type) = error_type {
        span.record("error.type", error_type);
        span.record("otel.status_code", "error");
    }
}

/// The trace context of `span` as W3C headers, for an outgoing request; empty when untraced.
pub(crate) fn context_headers(span: &tracing::Span) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if !span.is_disabled() {
        let context = span.context();
        opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&context, &mut HeadersMut(&mut headers)));
    }
    headers
}

/// The trace context of the current span, kept with a commit; `None` when nothing traces it.
/// Kept as ids, not text: most commits set off no webhook, and would format it for nothing.
pub(crate) fn current_trace_context() -> Option<Arc<TraceContext>> {
    let span = tracing::Span::current();
    if span.is_disabled() {
        return None;
    }
    let context = span.context();
    let span = context.span();
    let span = span.span_context();
    span.is_valid().then(|| {
        Arc::new(TraceContext {
            trace_id: span.trace_id().to_bytes(),
            span_id: span.span_id().to_bytes(),
            flags: span.trace_flags().to_u8(),
            tracestate: span.trace_state().header(),
        })
    })
}

struct HeadersMut<'a>(&'a mut HeaderMap);

impl opentelemetry::propagation::Injector for HeadersMut<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(name), Ok(value)) =
            (http::HeaderName::from_bytes(key.as_bytes()), http::HeaderValue::from_str(&value))
        {
            self.0.insert(name, value);
        }
    }
}
