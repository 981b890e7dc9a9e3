//! Logs and traces: the subscriber every command installs, and, when an OTLP endpoint is given,
//! the export of spans to it (OTLP over gRPC) with W3C trace context propagation. While spans are
//! exported, each log line written within a traced request carries its trace and span ids.

use std::fmt;
use std::io::IsTerminal;

use agentwire_server::telemetry::{OtlpTraces, ENDPOINT_VARIABLE};
use opentelemetry::trace::TraceContextExt as _;
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Metadata};
use tracing_subscriber::filter::{FilterExt as _, LevelFilter};
use tracing_subscriber::fmt::format::{self, FormatEvent, FormatFields, Writer};
use tracing_subscriber::fmt::FmtContext;
use tracing_subscriber::layer::{Context, Filter, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Where rmcp, the MCP SDK, logs its sessions' service loop.
const RMCP_SERVICE: &str = "rmcp::service";
/// What rmcp logs as errors that are no fault of anyone's: a session ended (the client canceled
/// its call and left, or ended its session) with an answer still to send, which no one reads.
/// They are not logged.
const ROUTINE_RMCP_ERRORS: &[&str] = &["failed to send pending response during drain"];

/// How the process logs.
pub(crate) struct Logging {
    /// `RUST_LOG`'s filter when it is not set.
    pub(crate) default_filter: &'static str,
    pub(crate) json: bool,
    /// Write to stderr (the client commands: their output is the answer) rather than stdout.
    pub(crate) stderr: bool,
}

/// Installs the subscriber: log lines as `logging` says, and spans exported to `otlp` (or the
/// collector [`ENDPOINT_VARIABLE`] names) when there is one. Must run within the runtime.
pub(crate) fn install(logging: Logging, otlp: Option<String>) -> anyhow::Result<Option<OtlpTraces>> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(logging.default_filter));
    // The client's call spans are for the exporter: log lines would format each one's attributes
    // on every call for nothing.
    let filter = filter.add_directive("agentwire_client::trace=off".parse().expect("a valid directive"));
    let filter = filter.and(NotRoutine);
    let endpoint = otlp.or_else(|| std::env::var(ENDPOINT_VARIABLE).ok()).filter(|e| !e.is_empty());
    let traces = endpoint.map(|endpoint| OtlpTraces::export_to(&endpoint)).transpose()?;
    let ansi = crate::call::colors(if logging.stderr {
        std::io::stderr().is_terminal()
    } else {
        std::io::stdout().is_terminal()
    });
    let writer = move || -> Box<dyn std::io::Write> {
        if logging.stderr {
            Box::new(std::io::stderr())
        } else {
            Box::new(std::io::stdout())
        }
    };
    let traced = traces.is_some();
    let lines = if logging.json {
        let format = TraceIds { inner: format::format().json(), json: true, traced };
        tracing_subscriber::fmt::layer()
            .fmt_fields(format::JsonFields::new())
            .event_format(format)
            .with_writer(writer)
            .with_filter(filter)
            .boxed()
    } else {
        let format = TraceIds { inner: format::format().with_ansi(ansi), json: false, traced };
        tracing_subscriber::fmt::layer().event_format(format).with_writer(writer).with_filter(filter).boxed()
    };
    let otel = traces.as_ref().map(OtlpTraces::layer);
    tracing_subscriber::registry().with(lines).with(otel).try_init()?;
    Ok(traces)
}

/// Whether events of `meta`'s callsite may be one of [`ROUTINE_RMCP_ERRORS`].
fn may_be_routine(meta: &Metadata<'_>) -> bool {
    *meta.level() == Level::ERROR && meta.target() == RMCP_SERVICE
}

/// The message of an event.
#[derive(Default)]
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.record_debug(field, &format_args!("{value}"));
    }
}

/// Whether `event` is one of [`ROUTINE_RMCP_ERRORS`].
fn is_routine(event: &Event<'_>) -> bool {
    if !may_be_routine(event.metadata()) {
        return false;
    }
    let mut message = Message::default();
    event.record(&mut message);
    ROUTINE_RMCP_ERRORS.contains(&message.0.as_str())
}

/// Keeps [`ROUTINE_RMCP_ERRORS`] out of the log lines; lets everything else through.
struct NotRoutine;

impl<S> Filter<S> for NotRoutine {
    fn enabled(&self, _meta: &Metadata<'_>, _cx: &Context<'_, S>) -> bool {
        true
    }

    /// Every level: the filter beside it sets the bound, which keeps the cheap level check of
    /// every disabled `debug!` and `trace!` (a filter with no hint would lift it to TRACE).
    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::TRACE)
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> tracing::subscriber::Interest {
        // Asked event by event where an event may be routine: tracing-subscriber asks
        // `event_enabled` of every event, but its per-layer filters keep count right only for
        // callsites whose interest is not `always`.
        if may_be_routine(meta) {
            tracing::subscriber::Interest::sometimes()
        } else {
            tracing::subscriber::Interest::always()
        }
    }

    fn event_enabled(&self, event: &Event<'_>, _cx: &Context<'_, S>) -> bool {
        !is_routine(event)
    }
}

/// A log line format that adds the trace and span ids of the span current when the line is
/// written, if it is exported: `trace_id=… span_id=…` at the end of a text line, the members
/// `trace_id` and `span_id` of a JSON line.
struct TraceIds<F> {
    inner: F,
    json: bool,
    /// Whether spans are exported at all; without, no line has ids to look for.
    traced: bool,
}

impl<S, N, F> FormatEvent<S, N> for TraceIds<F>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> fmt::Result {
        let ids = self.traced.then(current_ids).flatten();
        let Some((trace_id, span_id)) = ids else { return self.inner.format_event(ctx, writer, event) };
        let mut line = String::new();
        self.inner.format_event(ctx, Writer::new(&mut line), event)?;
        let line = line.trim_end_matches('\n');
        match line.strip_prefix('{').filter(|_| self.json) {
            Some(members) => writeln!(writer, r#"{{"trace_id":"{trace_id}","span_id":"{span_id}",{members}"#),
            None => writeln!(writer, "{line} trace_id={trace_id} span_id={span_id}"),
        }
    }
}

/// The trace and span ids of the current span, if it is exported. The current OpenTelemetry
/// context is the span's, whether the server made it or a `tracing` span was entered.
fn current_ids() -> Option<(String, String)> {
    let context = opentelemetry::Context::current();
    let span = context.span();
    let span_context = span.span_context();
    span_context.is_valid().then(|| (span_context.trace_id().to_string(), span_context.span_id().to_string()))
}
