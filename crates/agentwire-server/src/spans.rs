//! A tracing span per operation, named and attributed as the draft A2A semantic conventions name
//! them (`a2a.server`, named after the v1.0 method), and the child of the caller's span when the
//! request carries W3C trace context (`traceparent`, `tracestate` headers or gRPC metadata).
//!
//! The spans are `tracing` spans: a `tracing-opentelemetry` layer in the subscriber exports them
//! (the `agentwire` command does with `--otlp-endpoint`), and any other subscriber logs them.

use std::task::{Context, Poll};

use agentwire_types::{A2AError, A2aRequest, A2aResponse};
use futures_util::future::BoxFuture;
use http::HeaderMap;
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
