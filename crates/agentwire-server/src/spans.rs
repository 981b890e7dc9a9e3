//! OpenTelemetry spans: one per operation, named and attributed as the draft A2A semantic
//! conventions name them (`a2a.server`, named after the v1.0 method), the child of the caller's
//! span when the request carries W3C trace context (`traceparent`, `tracestate` headers or gRPC
//! metadata); and, below it, the agent's execution, each store commit and each webhook attempt.
//!
//! The spans are made with the OpenTelemetry API and the tracer provider installed globally (as
//! `telemetry::OtlpTraces` does), not as `tracing` spans bridged to it: the bridge cost more than
//! the spans themselves. Each span's context is the current OpenTelemetry
//! context while its work runs, so the `tracing` spans of an agent (through a
//! `tracing-opentelemetry` layer) and the calls of `agentwire-client` are its children. Work that
//! is not sampled makes no child span at all.

use std::borrow::Cow;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use agentwire_store::TraceContext;
use agentwire_types::{A2AError, A2aRequest, A2aResponse};
use futures_util::future::BoxFuture;
use http::HeaderMap;
use opentelemetry::context::FutureExt as _;
use opentelemetry::global::BoxedTracer;
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceContextExt as _, TraceFlags, TraceId, Tracer as _,
};
use opentelemetry::{Context, KeyValue};
use tower::{Layer, Service};

use crate::RequestContext;

/// Wraps every operation of the service it wraps in an `a2a.server` span, exported by the
/// globally installed tracer provider (none installed: the spans are no-ops).
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

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), A2AError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, (ctx, request): (RequestContext, A2aRequest)) -> Self::Future {
        let traced = operation_context(&ctx, &request);
        let answer = {
            let _attached = traced.clone().attach();
            self.inner.call((ctx, request))
        };
        let operation = traced.clone();
        Box::pin(
            async move {
                let answer = answer.await;
                let span = operation.span();
                match &answer {
                    Ok(response) => record_task(&span, response),
                    Err(error) => {
                        span.set_attribute(KeyValue::new("error.type", error.kind().reason()));
                        span.set_status(Status::error(error.message().to_owned()));
                    }
                }
                span.end();
                answer
            }
            .with_context(traced),
        )
    }
}

/// The span of a call served in front of the operations (an MCP tool call): a server span, the
/// child of the caller's context in the call's W3C headers, whose own context those headers then
/// carry, so that the operations the call runs are its children. The span ends with
/// [`end`](Self::end), or when it is dropped.
///
/// ```
/// use agentwire_server::FrontSpan;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let mut headers = http::HeaderMap::new();
/// let span = FrontSpan::start("tools/call echo".into(), vec![("mcp.method.name", "tools/call".into())], &mut headers);
/// let answer = span.run(async { 42 }).await;
/// assert_eq!(answer, 42);
/// # });
/// ```
#[derive(Debug)]
pub struct FrontSpan {
    context: Context,
}

impl FrontSpan {
    /// Starts the span `name` with `attributes`, the child of the caller's context in `headers`,
    /// and puts its own context in `headers` in the caller's place.
    pub fn start(name: Cow<'static, str>, attributes: Vec<(&'static str, String)>, headers: &mut HeaderMap) -> Self {
        let parent = caller_context(headers);
        let tracer = tracer();
        let attributes = attributes.into_iter().map(|(key, value)| KeyValue::new(key, value));
        let span = tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_attributes(attributes)
            .start_with_context(&tracer, &parent);
        let context = parent.with_span(span);
        headers.extend(context_headers(&context));
        Self { context }
    }

    /// Runs `work` in the span's context: the spans it makes are the span's children.
    pub async fn run<F: std::future::Future>(&self, work: F) -> F::Output {
        work.with_context(self.context.clone()).await
    }

    /// Records that the call failed, with `message`.
    pub fn failed(&self, kind: &'static str, message: String) {
        let span = self.context.span();
        span.set_attribute(KeyValue::new("error.type", kind));
        span.set_status(Status::error(message));
    }

    /// Ends the span.
    pub fn end(self) {
        self.context.span().end();
    }
}

fn tracer() -> BoxedTracer {
    opentelemetry::global::tracer("agentwire")
}

/// The context of one operation: its span, a child of the caller's when the request carries its
/// context.
fn operation_context(ctx: &RequestContext, request: &A2aRequest) -> Context {
    let parent = caller_context(&ctx.metadata);
    let method = request.operation().name();
    let tracer = tracer();
    let span = tracer
        .span_builder(method)
        .with_kind(SpanKind::Server)
        .with_attributes([
            KeyValue::new("a2a.method.name", method),
            KeyValue::new("a2a.protocol.version", ctx.dialect.version()),
            KeyValue::new("a2a.binding", ctx.binding.name()),
            KeyValue::new("agentwire.front", ctx.front.name()),
            KeyValue::new("a2a.tenant", ctx.tenant.as_str().to_owned()),
        ])
        .start_with_context(&tracer, &parent);
    parent.with_span(span)
}

/// Names the authenticated caller on the operation's span: `user.id`, and
/// `agentwire.caller.actors`, the parties its token says act for it (RFC 8693 `act`, the current
/// actor first). Nothing is done for an operation that is not sampled.
pub(crate) fn record_caller(principal: &agentwire_types::Principal) {
    let context = Context::current();
    let span = context.span();
    if !span.is_recording() {
        return;
    }
    span.set_attribute(KeyValue::new("user.id", principal.name.clone()));
    let actors = principal.actors();
    if !actors.is_empty() {
        let actors = actors.into_iter().map(|actor| opentelemetry::StringValue::from(actor.to_owned())).collect();
        span.set_attribute(KeyValue::new(
            "agentwire.caller.actors",
            opentelemetry::Value::Array(opentelemetry::Array::String(actors)),
        ));
    }
}

/// What a reply says of its task.
fn record_task(span: &opentelemetry::trace::SpanRef<'_>, response: &A2aResponse) {
    let task = match response {
        A2aResponse::Task(task) => Some(task),
        A2aResponse::Send(agentwire_types::SendMessageResponse::Task(task)) => Some(task),
        _ => None,
    };
    if let Some(task) = task {
        span.set_attributes([
            KeyValue::new("a2a.task.id", task.id.clone()),
            KeyValue::new("gen_ai.conversation.id", task.context_id.clone()),
            KeyValue::new("a2a.task.state", task.status.state.as_proto_name()),
        ]);
    }
}

/// The caller's trace context, from the W3C headers of a request (or its gRPC metadata).
fn caller_context(headers: &HeaderMap) -> Context {
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

/// A child span of the current work, with the attributes `attributes` makes, as the current
/// context's child; `None` when the work is not sampled.
fn child(name: &'static str, kind: SpanKind, attributes: impl FnOnce() -> Vec<KeyValue>) -> Option<Context> {
    let parent = Context::current();
    if !parent.span().span_context().is_sampled() {
        return None;
    }
    let tracer = tracer();
    let span =
        tracer.span_builder(name).with_kind(kind).with_attributes(attributes()).start_with_context(&tracer, &parent);
    Some(parent.with_span(span))
}

/// The context of an agent's execution of a task, what the GenAI conventions call invoking an
/// agent: the child of the operation that started it, lasting until the execution ends (which may
/// be long after that operation answered). The current context when the work is not sampled.
pub(crate) fn execution_context(agent: &str, task_id: &str, context_id: &str) -> Context {
    let attributes = || {
        vec![
            KeyValue::new("gen_ai.operation.name", "invoke_agent"),
            KeyValue::new("gen_ai.agent.name", agent.to_owned()),
            KeyValue::new("a2a.task.id", task_id.to_owned()),
            KeyValue::new("gen_ai.conversation.id", context_id.to_owned()),
        ]
    };
    child("invoke_agent", SpanKind::Internal, attributes).unwrap_or_else(Context::current)
}

/// Runs `commit`, a commit to `task_id`'s log, in a span of its own when the work is sampled.
pub(crate) async fn committing<T>(task_id: &str, commit: impl std::future::Future<Output = T>) -> T {
    match child("commit", SpanKind::Internal, || vec![KeyValue::new("a2a.task.id", task_id.to_owned())]) {
        Some(span) => commit.with_context(span).await,
        None => commit.await,
    }
}

/// The context of one attempt to deliver a push notification, with its span: an HTTP client
/// span, the child of the work that made the commit it delivers (`made_by`).
pub(crate) fn webhook_context(url: &reqwest::Url, task_id: &str, resend: u32, made_by: &TraceContext) -> Context {
    let state = made_by.tracestate.parse().unwrap_or_default();
    let parent = SpanContext::new(
        TraceId::from_bytes(made_by.trace_id),
        SpanId::from_bytes(made_by.span_id),
        TraceFlags::new(made_by.flags),
        true,
        state,
    );
    let parent = Context::new().with_remote_span_context(parent);
    let mut attributes = vec![
        KeyValue::new("http.request.method", "POST"),
        KeyValue::new("url.full", url.to_string()),
        KeyValue::new("server.address", url.host_str().unwrap_or_default().to_owned()),
        KeyValue::new("a2a.task.id", task_id.to_owned()),
    ];
    if resend > 0 {
        attributes.push(KeyValue::new("http.request.resend_count", i64::from(resend)));
    }
    let tracer = tracer();
    let span = tracer
        .span_builder("POST")
        .with_kind(SpanKind::Client)
        .with_attributes(attributes)
        .start_with_context(&tracer, &parent);
    parent.with_span(span)
}

/// Records how an HTTP call ended on the span of `context`: the status, or why there was none.
pub(crate) fn record_http_outcome(context: &Context, status: Option<http::StatusCode>, error_type: Option<&str>) {
    let span = context.span();
    if let Some(status) = status {
        span.set_attribute(KeyValue::new("http.response.status_code", i64::from(status.as_u16())));
    }
    if let Some(error_type) = error_type {
        span.set_attribute(KeyValue::new("error.type", error_type.to_owned()));
        span.set_status(Status::Error { description: Cow::Borrowed("") });
    }
}

/// The trace context of `context` as W3C headers, for an outgoing request.
pub(crate) fn context_headers(context: &Context) -> HeaderMap {
    let mut headers = HeaderMap::new();
    opentelemetry::global::get_text_map_propagator(|p| p.inject_context(context, &mut HeadersMut(&mut headers)));
    headers
}

/// The trace context of the current work, kept with a commit; `None` when it is not sampled.
/// Kept as ids, not text: most commits set off no webhook, and would format it for nothing.
pub(crate) fn current_trace_context() -> Option<Arc<TraceContext>> {
    let current = Context::current();
    let span = current.span();
    let span = span.span_context();
    span.is_sampled().then(|| {
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
