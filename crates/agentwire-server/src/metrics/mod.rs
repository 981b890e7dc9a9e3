//! Prometheus metrics: what the server does, by operation, and what it holds.
//!
//! One [`Metrics`] is shared by what it measures: the operation layer ([`Metrics::layer`]) counts
//! and times every operation, the [`RequestHandler`](crate::RequestHandler) given it
//! ([`RequestHandlerBuilder::metrics`](crate::RequestHandlerBuilder::metrics)) follows its commits
//! for tasks by state and times its store and webhooks, and [`serve`](crate::serve) given it
//! ([`ServeOptions::metrics`](crate::ServeOptions::metrics)) counts connections.
//! [`Metrics::router`] serves them at `GET /metrics`. docs/OPERATIONS.md lists every metric.

mod layer;
mod tasks;
mod usage;

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use agentwire_store::TaskStore;
use agentwire_types::A2AError;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};

pub use layer::{MetricsLayer, MetricsService};
pub(crate) use tasks::{count_tasks, follow_tasks};
pub use usage::{UsageSum, DEFAULT_USAGE_SERIES, MAX_COUNTED_PER_REPORT};

/// The server's instruments, with the registry that reports them. Cloning is cheap: clones share
/// the instruments.
///
/// ```no_run
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::{router, serve, Metrics, RequestHandler, ServeOptions};
/// use tower::ServiceBuilder;
///
/// # async fn run() -> std::io::Result<()> {
/// let metrics = Metrics::new();
/// let handler = RequestHandler::builder(EchoAgent).metrics(&metrics).build();
/// let service = ServiceBuilder::new().layer(metrics.layer()).service(handler);
/// let app = router(service).merge(metrics.router());
/// let options = ServeOptions { metrics: Some(metrics), ..ServeOptions::default() };
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// serve(listener, app, std::future::pending(), options).await
/// # }
/// ```
#[derive(Clone)]
pub struct Metrics {
    pub(crate) instruments: Arc<Instruments>,
    registry: Arc<Registry>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// An operation, as the protocol's v1.0 names it, in the generation and over the binding it
/// arrived in, by the front it came in by (A2A, MCP, the console, a gateway's own routes).
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct Route {
    pub(crate) operation: &'static str,
    pub(crate) generation: &'static str,
    pub(crate) binding: &'static str,
    pub(crate) front: &'static str,
}

impl Route {
    /// `operation`, made in `ctx`'s generation, binding and front.
    pub(crate) fn of(operation: &'static str, ctx: &crate::RequestContext) -> Self {
        Self { operation, generation: ctx.dialect.version(), binding: ctx.binding.name(), front: ctx.front.name() }
    }
}

/// A [`Route`] with how the operation ended: `ok`, or `error` and the error's type.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct Outcome {
    #[prometheus(flatten)]
    pub(crate) route: Route,
    pub(crate) outcome: &'static str,
    pub(crate) error_type: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct OperationLabel {
    pub(crate) operation: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct StateLabel {
    pub(crate) state: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct TenantLabel {
    pub(crate) tenant: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ResultLabel {
    pub(crate) result: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ReasonLabel {
    pub(crate) reason: &'static str,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// Seconds, from half a millisecond to about 16 s, doubling.
fn seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.000_5, 2.0, 16))
}

/// Tenants with a series of their own in `a2a_tenant_tasks_in_progress` by default.
pub(crate) const DEFAULT_TENANT_SERIES: usize = 100;

/// Every instrument. Labels come from a fixed set of names, except a tenant's, whose series is
/// removed when the tenant has no task in progress left; past [`DEFAULT_TENANT_SERIES`] tenants
/// (or [`Metrics::limit_tenant_series`]), the others share the series `tenant="(other)"`.
pub(crate) struct Instruments {
    pub(crate) requests: Family<Outcome, Counter>,
    pub(crate) request_duration: Histograms<Route>,
    pub(crate) open_streams: Family<OperationLabel, Gauge>,
    pub(crate) tasks: Family<StateLabel, Gauge>,
    pub(crate) tasks_ended: Family<StateLabel, Counter>,
    pub(crate) tasks_in_progress: Family<TenantLabel, Gauge>,
    pub(crate) tasks_expired: Family<ReasonLabel, Counter>,
    pub(crate) push_deliveries: Family<ResultLabel, Counter>,
    pub(crate) push_attempts: Family<ResultLabel, Counter>,
    pub(crate) push_waiting: Gauge,
    pub(crate) push_in_flight: Gauge,
    pub(crate) commit_duration: Histogram,
    pub(crate) connections_open: Gauge,
    pub(crate) connections: Counter,
    pub(crate) connections_refused: Family<ReasonLabel, Counter>,
    /// What agents reported spending.
    usage: usage::UsageInstruments,
    /// Most tenants with a series of their own in `tasks_in_progress`; see
    /// [`Metrics::limit_tenant_series`].
    pub(crate) max_tenant_series: std::sync::atomic::AtomicUsize,
    /// The store whose write groups are reported, once a handler is given these metrics.
    store: Arc<Mutex<Option<Weak<dyn TaskStore>>>>,
}

impl Metrics {
    /// Gives at most `tenants` tenants a series of their own in `a2a_tenant_tasks_in_progress`
    /// (100 by default); the tasks in progress of the others are counted in one series,
    /// `tenant="(other)"`. Tenant names are chosen by clients: without a cap, each would add a
    /// series to every scrape. 0 counts every tenant in that one series.
    ///
    /// ```
    /// use agentwire_server::Metrics;
    ///
    /// let metrics = Metrics::new();
    /// metrics.limit_tenant_series(20);
    /// ```
    pub fn limit_tenant_series(&self, tenants: usize) {
        self.instruments.max_tenant_series.store(tenants, std::sync::atomic::Ordering::Relaxed);
    }

    /// New instruments, all at zero.
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let store = Arc::new(Mutex::new(None));
        let usage = usage::UsageInstruments::registered(registry.sub_registry_with_prefix("agentwire"));
        let instruments = Instruments {
            requests: Family::default(),
            request_duration: Family::new_with_constructor(seconds),
            open_streams: Family::default(),
            tasks: Family::default(),
            tasks_ended: Family::default(),
            tasks_in_progress: Family::default(),
            tasks_expired: Family::default(),
            push_deliveries: Family::default(),
            push_attempts: Family::default(),
            push_waiting: Gauge::default(),
            push_in_flight: Gauge::default(),
            commit_duration: seconds(),
            connections_open: Gauge::default(),
            connections: Counter::default(),
            connections_refused: Family::default(),
            usage,
            max_tenant_series: std::sync::atomic::AtomicUsize::new(DEFAULT_TENANT_SERIES),
            store: Arc::clone(&store),
        };
        let i = &instruments;
        let a2a = registry.sub_registry_with_prefix("a2a");
        a2a.register("server_requests", "A2A operations served", i.requests.clone());
        a2a.register_with_unit(
            "server_request_duration",
            "Time to answer an A2A operation (for a stream, to its start)",
            Unit::Seconds,
            i.request_duration.clone(),
        );
        a2a.register("server_open_streams", "Event streams open (sends and subscriptions)", i.open_streams.clone());
        a2a.register(
            "tasks",
            "Tasks in progress, by state: as this instance committed them, or on a store several instances share, the store's, reported by one of them",
            i.tasks.clone(),
        );
        a2a.register("tasks_ended", "Tasks that reached a terminal state, by state", i.tasks_ended.clone());
        a2a.register("tenant_tasks_in_progress", "Tasks in progress, by tenant", i.tasks_in_progress.clone());
        let own = registry.sub_registry_with_prefix("agentwire");
        own.register(
            "tasks_expired",
            "Tasks this instance ended for lasting too long: left waiting for input (reason=\"waiting\", CANCELED), or an execution past its limit (reason=\"execution\", FAILED)",
            i.tasks_expired.clone(),
        );
        own.register(
            "push_deliveries",
            "Push notifications done: delivered, or given up on",
            i.push_deliveries.clone(),
        );
        own.register(
            "push_attempts",
            "Webhook POSTs: ok, failed to be retried, or failed for good",
            i.push_attempts.clone(),
        );
        own.register(
            "push_waiting",
            "Webhook POSTs waiting for a place under the limit in flight",
            i.push_waiting.clone(),
        );
        own.register("push_in_flight", "Webhook POSTs in flight", i.push_in_flight.clone());
        own.register_with_unit(
            "store_commit_duration",
            "Time to commit a task's events to the store",
            Unit::Seconds,
            i.commit_duration.clone(),
        );
        own.register("connections_open", "Connections open", i.connections_open.clone());
        own.register("connections", "Connections accepted", i.connections.clone());
        own.register(
            "connections_refused",
            "Connections closed before their first request, by reason",
            i.connections_refused.clone(),
        );
        own.register_collector(Box::new(WriteGroupsCollector { store }));
        Self { instruments: Arc::new(instruments), registry: Arc::new(registry) }
    }

    /// The layer that counts and times every operation of the service it wraps.
    pub fn layer(&self) -> MetricsLayer {
        MetricsLayer::new(self.clone())
    }

    /// `GET /metrics`: the Prometheus text format (0.0.4), or OpenMetrics to a scraper that asks
    /// for it in `Accept`.
    pub fn router<S: Clone + Send + Sync + 'static>(&self) -> axum::Router<S> {
        let metrics = self.clone();
        axum::Router::new()
            .route("/metrics", axum::routing::get(move |headers: HeaderMap| async move { metrics.serve(&headers) }))
    }

    /// The metrics in the Prometheus text format (0.0.4).
    ///
    /// ```
    /// let metrics = agentwire_server::Metrics::new();
    /// assert!(metrics.encode().contains("# TYPE agentwire_connections_open gauge"));
    /// ```
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail; an instrument that fails to encode is left out.
        if let Err(error) = prometheus_client::encoding::prometheus_text::encode(&mut text, &self.registry) {
            tracing::error!(%error, "cannot encode the metrics");
        }
        text
    }

    fn serve(&self, headers: &HeaderMap) -> Response {
        let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
        if accept.contains("application/openmetrics-text") {
            let mut text = String::new();
            if prometheus_client::encoding::text::encode(&mut text, &self.registry).is_err() {
                return StatusCode::INTERNAL_SERVER_ERROR.into_response();
            }
            let media_type = "application/openmetrics-text; version=1.0.0; charset=utf-8";
            return ([(header::CONTENT_TYPE, HeaderValue::from_static(media_type))], text).into_response();
        }
        let media_type = HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8");
        ([(header::CONTENT_TYPE, media_type)], self.encode()).into_response()
    }

    /// Reports `store`'s write groups, for as long as it is open.
    pub(crate) fn observe_store(&self, store: &Arc<dyn TaskStore>) {
        *self.instruments.store.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::downgrade(store));
    }
}

impl Metrics {
    /// Counts and times one call served beside the operations (a gateway's registry), as the
    /// operation `operation` made over `ctx`'s generation and binding.
    pub(crate) fn served_beside(
        &self,
        operation: &'static str,
        ctx: &crate::RequestContext,
        took: Duration,
        error: Option<&A2AError>,
    ) {
        self.instruments.served(Route::of(operation, ctx), took, error);
    }
}

impl Instruments {
    /// Counts and times one operation.
    pub(crate) fn served(&self, route: Route, took: Duration, error: Option<&A2AError>) {
        self.request_duration.get_or_create(&route).observe(took.as_secs_f64());
        let (outcome, error_type) = match error {
            None => ("ok", ""),
            Some(error) => ("error", error.kind().reason()),
        };
        self.requests.get_or_create(&Outcome { route, outcome, error_type }).inc();
    }
}

/// Raises a gauge for as long as it is held.
pub(crate) struct GaugeGuard(Gauge);

impl GaugeGuard {
    pub(crate) fn raise(gauge: &Gauge) -> Self {
        gauge.inc();
        Self(gauge.clone())
    }
}

impl Drop for GaugeGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// Reports a store's write groups at each scrape: counters kept by the store itself.
#[derive(Debug)]
struct WriteGroupsCollector {
    store: Arc<Mutex<Option<Weak<dyn TaskStore>>>>,
}

impl Collector for WriteGroupsCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let store = self.store.lock().unwrap_or_else(PoisonError::into_inner).as_ref().and_then(Weak::upgrade);
        let Some(groups) = store.and_then(|store| store.write_groups()) else { return Ok(()) };
        let counters = [
            ("store_commit_groups", "Commits (transactions) the store made for its writes", groups.groups),
            ("store_grouped_writes", "Writes the store committed; over groups, the mean group size", groups.writes),
        ];
        for (name, help, value) in counters {
            let counter = ConstCounter::new(value);
            let metric = encoder.encode_descriptor(name, help, None, counter.metric_type())?;
            counter.encode(metric)?;
        }
        Ok(())
    }
}
