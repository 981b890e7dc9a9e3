//! Logs and traces: the subscriber every command installs, and, when an OTLP endpoint is given,
//! the export of spans to it (OTLP over gRPC) with W3C trace context propagation.

use std::io::IsTerminal;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::Resource;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// The variable OpenTelemetry SDKs read the collector's address from.
pub(crate) const ENDPOINT_VARIABLE: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// How the process logs.
pub(crate) struct Logging {
    /// `RUST_LOG`'s filter when it is not set.
    pub(crate) default_filter: &'static str,
    pub(crate) json: bool,
    /// Write to stderr (the client commands: their output is the answer) rather than stdout.
    pub(crate) stderr: bool,
}

/// Spans exported to a collector, until [`Traces::shut_down`].
pub(crate) struct Traces(SdkTracerProvider);

impl Traces {
    /// Sends the spans not yet exported, and stops.
    pub(crate) async fn shut_down(self) {
        let provider = self.0;
        // The exporter needs the runtime to go on while the flush blocks.
        match tokio::task::spawn_blocking(move || provider.shutdown()).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => eprintln!("could not export the last spans: {error}"),
            Err(error) => eprintln!("could not export the last spans: {error}"),
        }
    }
}

/// Installs the subscriber: log lines as `logging` says, and spans exported to `otlp` (or the
/// collector [`ENDPOINT_VARIABLE`] names) when there is one. Must run within the runtime.
pub(crate) fn install(logging: Logging, otlp: Option<String>) -> anyhow::Result<Option<Traces>> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(logging.default_filter));
    // The operation and call spans are for the exporter: log lines would format each one's
    // attributes on every request for nothing.
    let filter = ["agentwire_server::spans=off", "agentwire_client::trace=off"]
        .into_iter()
        .fold(filter, |filter, directive| filter.add_directive(directive.parse().expect("a valid directive")));
    let endpoint = otlp.or_else(|| std::env::var(ENDPOINT_VARIABLE).ok()).filter(|e| !e.is_empty());
    let provider = endpoint.map(|endpoint| exporter(&endpoint)).transpose()?;
    let otel = provider.as_ref().map(|provider| {
        // Operation spans are exported whatever RUST_LOG says of log lines.
        let spans = tracing_subscriber::filter::Targets::new()
            .with_target("agentwire_server", tracing::Level::INFO)
            .with_target("agentwire_client", tracing::Level::INFO);
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("agentwire"))
            // The conventions' attributes only: no source locations, threads or idle times.
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_filter(spans)
    });
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
    let lines = if logging.json {
        tracing_subscriber::fmt::layer().json().with_writer(writer).with_filter(filter).boxed()
    } else {
        tracing_subscriber::fmt::layer().with_ansi(ansi).with_writer(writer).with_filter(filter).boxed()
    };
    tracing_subscriber::registry().with(lines).with(otel).try_init()?;
    Ok(provider.map(Traces))
}

/// The OTLP exporter, batching spans to `endpoint` over gRPC, with W3C trace context as the
/// propagator.
fn exporter(endpoint: &str) -> anyhow::Result<SdkTracerProvider> {
    opentelemetry::global::set_text_map_propagator(opentelemetry_sdk::propagation::TraceContextPropagator::new());
    let exporter = opentelemetry_otlp::SpanExporter::builder().with_tonic().with_endpoint(endpoint).build()?;
    let service = std::env::var("OTEL_SERVICE_NAME").unwrap_or_else(|_| "agentwire".to_owned());
    let resource = Resource::builder().with_service_name(service).build();
    Ok(SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build())
}
