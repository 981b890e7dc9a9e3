//! Export of agentwire's spans to an OpenTelemetry collector, over OTLP/gRPC: the spans of
//! operations (`a2a.server`), agent executions, store commits and webhook attempts, and the
//! client's calls (`a2a.client`), with W3C trace context carried on every request and webhook.
//!
//! [`OtlpTraces::export_to`] installs the tracer provider the server's spans are made with;
//! [`OtlpTraces::layer`] is the layer of a `tracing-subscriber` registry that exports the
//! `tracing` spans (the client's calls, the application's own), beside whatever logs it writes.
//!
//! ```no_run
//! use agentwire_server::telemetry::OtlpTraces;
//! use tracing_subscriber::layer::SubscriberExt;
//! use tracing_subscriber::util::SubscriberInitExt;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
//! let traces = OtlpTraces::from_env()?;
//! tracing_subscriber::registry()
//!     .with(tracing_subscriber::fmt::layer())
//!     .with(traces.as_ref().map(OtlpTraces::layer))
//!     .init();
//! // … serve …
//! if let Some(traces) = traces {
//!     traces.shut_down().await;
//! }
//! # Ok(())
//! # }
//! ```

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use std::time::Duration;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// The variable OpenTelemetry SDKs read the collector's address from.
pub const ENDPOINT_VARIABLE: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";

/// The variable OpenTelemetry SDKs read the service's name from (default `agentwire`).
pub const SERVICE_NAME_VARIABLE: &str = "OTEL_SERVICE_NAME";

/// Spans batched to a collector, until [`OtlpTraces::shut_down`].
#[derive(Debug)]
pub struct OtlpTraces {
    provider: SdkTracerProvider,
}

/// Why spans cannot be exported.
pub type ExportError = opentelemetry_otlp::ExporterBuildError;

/// How [`OtlpTraces`] exports; made by [`OtlpTraces::builder`].
#[derive(Debug, Clone)]
pub struct OtlpTracesBuilder {
    endpoint: String,
    service_name: Option<String>,
    batch_delay: Option<Duration>,
}

impl OtlpTracesBuilder {
    /// The service the spans are of (default: [`SERVICE_NAME_VARIABLE`], else `agentwire`).
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.service_name = Some(name.into());
        self
    }

    /// How long a span waits to be sent with others (default: `OTEL_BSP_SCHEDULE_DELAY`
    /// milliseconds, else 5 s).
    pub fn batch_delay(mut self, delay: Duration) -> Self {
        self.batch_delay = Some(delay);
        self
    }

    /// Installs the tracer provider and the W3C propagator. Call it within a Tokio runtime.
    pub fn build(self) -> Result<OtlpTraces, ExportError> {
        opentelemetry::global::set_text_map_propagator(opentelemetry_sdk::propagation::TraceContextPropagator::new());
        let exporter = opentelemetry_otlp::SpanExporter::builder().with_tonic().with_endpoint(self.endpoint).build()?;
        let service = self
            .service_name
            .unwrap_or_else(|| std::env::var(SERVICE_NAME_VARIABLE).unwrap_or_else(|_| "agentwire".to_owned()));
        let resource = Resource::builder().with_service_name(service).build();
        let mut batch = BatchConfigBuilder::default();
        if let Some(delay) = self.batch_delay {
            batch = batch.with_scheduled_delay(delay);
        }
        let processor = BatchSpanProcessor::builder(exporter).with_batch_config(batch.build()).build();
        let provider = SdkTracerProvider::builder().with_span_processor(processor).with_resource(resource).build();
        // The server's own spans are made with the global tracer.
        opentelemetry::global::set_tracer_provider(provider.clone());
        Ok(OtlpTraces { provider })
    }
}

impl OtlpTraces {
    /// Spans batched to the collector at `endpoint` (`http://host:4317`), as the service
    /// [`SERVICE_NAME_VARIABLE`] names (default `agentwire`), and W3C trace context
    /// (`traceparent`, `tracestate`) as the process's propagator. Call it within a Tokio runtime.
    pub fn export_to(endpoint: &str) -> Result<Self, ExportError> {
        Self::builder(endpoint).build()
    }

    /// An export configured in code: the service's name and how long spans wait to be batched.
    ///
    /// ```no_run
    /// use agentwire_server::telemetry::OtlpTraces;
    /// use std::time::Duration;
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let traces = OtlpTraces::builder("http://127.0.0.1:4317")
    ///     .service_name("travel-agent")
    ///     .batch_delay(Duration::from_millis(500))
    ///     .build()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn builder(endpoint: &str) -> OtlpTracesBuilder {
        OtlpTracesBuilder { endpoint: endpoint.to_owned(), service_name: None, batch_delay: None }
    }

    /// [`OtlpTraces::export_to`] the collector [`ENDPOINT_VARIABLE`] names; `None` when it is
    /// unset or empty.
    pub fn from_env() -> Result<Option<Self>, ExportError> {
        std::env::var(ENDPOINT_VARIABLE)
            .ok()
            .filter(|endpoint| !endpoint.is_empty())
            .map(|e| Self::export_to(&e))
            .transpose()
    }

    /// The layer that exports `tracing` spans at info level and above (the calls of
    /// `agentwire-client`, and the application's own), whatever the filter of log lines says,
    /// with the conventions' attributes only (no source locations, threads or idle times). The
    /// server's spans are exported without it.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'span> LookupSpan<'span>,
    {
        tracing_opentelemetry::layer()
            .with_tracer(self.provider.tracer("agentwire"))
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_tracked_inactivity(false)
            .with_filter(tracing_subscriber::filter::LevelFilter::INFO)
    }

    /// Exports the spans not yet sent, and stops.
    pub async fn shut_down(self) {
        let provider = self.provider;
        // The exporter needs the runtime to go on while the flush blocks.
        match tokio::task::spawn_blocking(move || provider.shutdown()).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(%error, "could not export the last spans"),
            Err(error) => tracing::warn!(%error, "could not export the last spans"),
        }
    }
}
