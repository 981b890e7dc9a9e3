//! The composition root: what stands in front of an operation service, in one fixed order.
//!
//! Every server this workspace builds (`agentwire serve`, `agentwire gateway`, the tests) and
//! every embedder puts its cross-cutting work around its operation service here, and nowhere
//! else, so that each layer sees what the layers before it established:
//!
//! spans → metrics → authentication → quotas → your layers → the service
//!
//! - spans first, so that everything below, refusals included, is traced;
//! - metrics next, so that refused calls are counted with their outcome;
//! - authentication, which sets the principal (and the schemes the cards declare);
//! - quotas, which count principals, so they follow authentication;
//! - your layers, which see the principal (authorization by operation, audit);
//! - the service: a [`RequestHandler`](crate::RequestHandler), a gateway's agent, a test double.

use std::sync::Arc;

use agentwire_types::Authentication;
use axum::Router;
use tower::util::BoxCloneSyncService;
use tower::Layer;

use crate::auth::{AuthLayer, Authenticator};
use crate::budget::BudgetBook;
use crate::quota::{QuotaCounter, QuotaLayer, Quotas};
use crate::service::Operations;
use crate::{HttpOptions, Metrics, OperationService, OperationSpans};

type UserLayer = Arc<dyn Fn(Operations) -> Operations + Send + Sync>;

/// The layers around an operation service, composed in the one order of this module: spans,
/// metrics, authentication, quotas, then the layers added with [`layer`](Self::layer).
///
/// One `App` may wrap several services (a gateway's agents): they share its authentication's
/// count of failed attempts and its quotas.
///
/// ```
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::auth::StaticAuth;
/// use agentwire_server::quota::Quotas;
/// use agentwire_server::{App, HttpOptions, RequestContext, RequestHandler};
/// use agentwire_types::{A2aRequest, ListTasksRequest};
/// use tower::ServiceExt;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let auth = StaticAuth::default().with_spec("bearer:alice=secret").unwrap();
/// let app = App::new()
///     .authenticator(auth)
///     .quotas(Quotas { requests_per_second: Some(10.0), ..Quotas::default() })
///     .layer(tower::layer::layer_fn(|service| service)); // runs after authentication
/// let service = app.service(RequestHandler::builder(EchoAgent).build());
/// let mut ctx = RequestContext::default();
/// ctx.metadata.insert("authorization", "Bearer secret".parse().unwrap());
/// let list = A2aRequest::ListTasks(ListTasksRequest::default());
/// assert!(service.oneshot((ctx, list)).await.is_ok());
/// let router = app.router(RequestHandler::builder(EchoAgent).build(), HttpOptions::default());
/// # drop(router);
/// # });
/// ```
#[derive(Clone, Default)]
pub struct App {
    spans: bool,
    metrics: Option<Metrics>,
    auth: Option<AuthLayer>,
    quotas: Option<QuotaLayer>,
    /// The failed authentications allowed, for an authentication added after them.
    failure_limit: Option<(f64, usize)>,
    layers: Vec<UserLayer>,
    budgets: Option<BudgetBook>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("spans", &self.spans)
            .field("metrics", &self.metrics.is_some())
            .field("auth", &self.auth.is_some())
            .field("quotas", &self.quotas)
            .field("layers", &self.layers.len())
            .field("budgets", &self.budgets)
            .finish()
    }
}

impl App {
    /// Nothing in front of the service yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A span per operation ([`OperationSpans`]), around everything else.
    pub fn spans(mut self) -> Self {
        self.spans = true;
        self
    }

    /// Counts and times every operation in `metrics` ([`Metrics::layer`]), refusals included.
    pub fn metrics(mut self, metrics: &Metrics) -> Self {
        self.metrics = Some(metrics.clone());
        self
    }

    /// Authenticates every operation but the public card with `auth`; the cards of the service
    /// declare its schemes, and its extended card is served to the callers it lets in.
    pub fn authenticator(self, auth: impl Authenticator) -> Self {
        self.auth_layer(AuthLayer::new(auth))
    }

    /// Authenticates with `layer`, as [`authenticator`](Self::authenticator) does.
    pub fn auth_layer(mut self, layer: AuthLayer) -> Self {
        self.auth = Some(match self.failure_limit {
            Some((per_second, burst)) => layer.failure_limit(per_second, burst),
            None => layer,
        });
        self
    }

    /// Refuses a caller past `quotas` (its requests per second and open streams, counted in
    /// this process), and an address past its failed authentications.
    pub fn quotas(self, quotas: Quotas) -> Self {
        self.quotas_counted_by(quotas, Arc::new(crate::quota::LocalQuotas::default()))
    }

    /// [`quotas`](Self::quotas), counted by `counter`: one that several instances share gives a
    /// caller one quota across them.
    pub fn quotas_counted_by(mut self, quotas: Quotas, counter: Arc<dyn QuotaCounter>) -> Self {
        let failure_limit = (quotas.auth_failures_per_second, quotas.auth_failure_burst);
        self.failure_limit = Some(failure_limit);
        self.auth = self.auth.map(|auth| auth.failure_limit(failure_limit.0, failure_limit.1));
        self.quotas = Some(QuotaLayer::counted_by(quotas, counter));
        self
    }

    /// Keeps `book`'s budgets: the agents and gateways built with this app check and charge them
    /// ([`budget_book`](Self::budget_book)), and its routes serve them at `/budgets`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use agentwire_server::budget::{Budget, BudgetBook, Budgets};
    /// use agentwire_server::App;
    ///
    /// let hour = Duration::from_secs(3_600);
    /// let budgets = Budgets { each_principal: Some(Budget { tokens: Some(50_000), tool_rounds: None, window: hour }), ..Budgets::default() };
    /// let app = App::new().budgets(BudgetBook::new(budgets).admins(["ops".to_owned()]));
    /// assert!(app.budget_book().is_some());
    /// ```
    pub fn budgets(mut self, book: BudgetBook) -> Self {
        self.budgets = Some(book);
        self
    }

    /// The budgets this app keeps, if any.
    pub fn budget_book(&self) -> Option<&BudgetBook> {
        self.budgets.as_ref()
    }

    /// Adds `layer` after authentication and quotas: it sees the caller's principal. Layers
    /// run in the order they are added.
    pub fn layer<L>(mut self, layer: L) -> Self
    where
        L: Layer<Operations> + Send + Sync + 'static,
        L::Service: OperationService,
    {
        self.layers.push(Arc::new(move |service| BoxCloneSyncService::new(layer.layer(service))));
        self
    }

    /// The metrics the operations are counted in ([`metrics`](Self::metrics)), for what counts
    /// beside them (a gateway counts the usage its agents report); `None` without metrics.
    ///
    /// ```
    /// use agentwire_server::{App, Metrics};
    ///
    /// let app = App::new().metrics(&Metrics::new());
    /// assert!(app.metrics_in_use().is_some());
    /// ```
    pub fn metrics_in_use(&self) -> Option<&Metrics> {
        self.metrics.as_ref()
    }

    /// How callers are authenticated, as the cards declare it; `None` without authentication.
    pub fn authentication(&self) -> Option<&Arc<Authentication>> {
        self.auth.as_ref().map(AuthLayer::authentication)
    }

    /// Who calls with `ctx`'s credentials, as the authentication in front of the operations
    /// finds it for `access`: for routes served beside the operations (a gateway's registry)
    /// that decide what a caller may see or change. `Ok(None)` without authentication, and for
    /// a caller that presents no credentials unless they are `required`; otherwise the refusal
    /// (`Unauthenticated` with the challenge, `PermissionDenied`, or `ResourceExhausted` past the
    /// address's failed authentications, which a caller without credentials does not spend).
    ///
    /// ```
    /// use agentwire_server::auth::StaticAuth;
    /// use agentwire_server::{App, RequestContext};
    /// use agentwire_types::Access;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let app = App::new().authenticator(StaticAuth::default().with_spec("bearer:alice=secret").unwrap());
    /// let mut ctx = RequestContext::default();
    /// ctx.metadata.insert("authorization", "Bearer secret".parse().unwrap());
    /// let caller = app.identify(ctx, Access::ListAgents, false).await.unwrap();
    /// assert_eq!(caller.unwrap().name, "alice");
    /// let anonymous = RequestContext::default();
    /// assert!(app.identify(anonymous.clone(), Access::ListAgents, false).await.unwrap().is_none());
    /// assert!(app.identify(anonymous, Access::ListAgents, true).await.is_err());
    /// # });
    /// ```
    pub async fn identify(
        &self,
        ctx: crate::RequestContext,
        access: impl Into<agentwire_types::Access>,
        required: bool,
    ) -> Result<Option<crate::Principal>, agentwire_types::A2AError> {
        match &self.auth {
            Some(auth) => auth.identify(ctx, access.into(), required).await,
            None => Ok(None),
        }
    }

    /// Serves `call`, a request beside the operations (a gateway's registry), in the app's order
    /// around it: counted and timed in the metrics under the access's name, its caller
    /// identified for `access` as [`identify`](Self::identify) does (refused without credentials when they are
    /// `required`), and charged one request of the caller's rate quota. `call` gets the caller:
    /// `None` when anonymous, or without authentication.
    ///
    /// ```
    /// use agentwire_server::{App, RequestContext};
    /// use agentwire_types::Access;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let app = App::new();
    /// let answer = app.beside(RequestContext::default(), Access::ListAgents, false, |caller| async move {
    ///     Ok(caller.map(|principal| principal.name))
    /// });
    /// assert_eq!(answer.await.unwrap(), None);
    /// # });
    /// ```
    pub async fn beside<T, F, Fut>(
        &self,
        ctx: crate::RequestContext,
        access: agentwire_types::Access,
        required: bool,
        call: F,
    ) -> Result<T, agentwire_types::A2AError>
    where
        F: FnOnce(Option<crate::Principal>) -> Fut,
        Fut: std::future::Future<Output = Result<T, agentwire_types::A2AError>>,
    {
        let started = tokio::time::Instant::now();
        let answer = async {
            let principal = self.identify(ctx.clone(), access, required).await?;
            if let Some(quotas) = &self.quotas {
                let mut charged = ctx.clone();
                charged.principal.clone_from(&principal);
                quotas.charge(&charged).await?;
            }
            call(principal).await
        }
        .await;
        if let Some(metrics) = &self.metrics {
            metrics.served_beside(access.name(), &ctx, started.elapsed(), answer.as_ref().err());
        }
        answer
    }

    /// Holds one of the caller's open streams for a stream served beside the operations (the
    /// console's live task list), so that it counts under
    /// [`Quotas::max_streams_per_principal`](crate::quota::Quotas::max_streams_per_principal)
    /// like the operations' streams; the caller is identified as [`identify`](Self::identify)
    /// does. The stream is counted until the permit is dropped; `Ok(None)` without quotas.
    ///
    /// ```
    /// use agentwire_server::quota::Quotas;
    /// use agentwire_server::{App, RequestContext};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let app = App::new().quotas(Quotas { max_streams_per_principal: 1, ..Quotas::default() });
    /// let held = app.open_stream(RequestContext::default()).await.unwrap();
    /// assert!(app.open_stream(RequestContext::default()).await.is_err());
    /// drop(held);
    /// assert!(app.open_stream(RequestContext::default()).await.is_ok());
    /// # });
    /// ```
    pub async fn open_stream(
        &self,
        mut ctx: crate::RequestContext,
    ) -> Result<Option<crate::quota::StreamPermit>, agentwire_types::A2AError> {
        let Some(quotas) = &self.quotas else { return Ok(None) };
        let operation = agentwire_types::Operation::ListTasks;
        ctx.principal = self.identify(ctx.clone(), operation, false).await?;
        quotas.open_stream(&crate::quota::Caller::of(&ctx)).await.map(Some)
    }

    /// `service` with every layer in front of it.
    pub fn service(&self, service: impl OperationService) -> Operations {
        let mut service: Operations = BoxCloneSyncService::new(service);
        // Innermost first: the last layer added sits next to the service.
        for layer in self.layers.iter().rev() {
            service = layer(service);
        }
        if let Some(quotas) = &self.quotas {
            service = BoxCloneSyncService::new(quotas.layer(service));
        }
        if let Some(auth) = &self.auth {
            service = BoxCloneSyncService::new(auth.layer(service));
        }
        if let Some(metrics) = &self.metrics {
            service = BoxCloneSyncService::new(metrics.layer().layer(service));
        }
        if self.spans {
            service = BoxCloneSyncService::new(OperationSpans.layer(service));
        }
        service
    }

    /// `service` with every layer in front of it, on every binding ([`router_with`]).
    ///
    /// [`router_with`]: crate::router_with
    pub fn router(&self, service: impl OperationService, options: HttpOptions) -> Router {
        self.routes(service, options).into_router()
    }

    /// The routes of `service` with every layer in front of it, to which a server adds the
    /// routes it serves beside the agent's (MCP, a directory) before the HTTP layers go over them
    /// all ([`Routes::into_router`](crate::Routes::into_router)).
    ///
    /// ```
    /// use agentwire_server::{agent::EchoAgent, App, HttpOptions, RequestHandler};
    ///
    /// let app = App::new().spans();
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let handler = RequestHandler::builder(EchoAgent).build();
    /// let beside = axum::Router::new().route("/status", axum::routing::get(|| async { "up" }));
    /// let router = app.routes(handler, HttpOptions::default()).merge(beside).into_router();
    /// # drop(router);
    /// # });
    /// ```
    pub fn routes(&self, service: impl OperationService, options: HttpOptions) -> crate::Routes {
        self.beside_routes(crate::Routes::new(self.service(service), options))
    }
}

#[cfg(feature = "console")]
impl crate::Console {
    /// Adds the usage page (`/console/usage`): what callers spent on models, by caller and by
    /// agent, as `app`'s metrics count it, and their budgets. A caller sees its own; a budget
    /// admin, or anyone on a console of a server that authenticates no one, sees everyone's.
    ///
    /// ```
    /// use agentwire_server::{App, Console, Metrics};
    ///
    /// let app = App::new().metrics(&Metrics::new());
    /// let console = Console::loopback_only().showing_usage(&app);
    /// # drop(console);
    /// ```
    pub fn showing_usage(mut self, app: &App) -> Self {
        let app = app.clone();
        self.usage = Some(std::sync::Arc::new(move |ctx| {
            let app = app.clone();
            Box::pin(async move { app.usage_report(ctx).await })
        }));
        std::sync::Arc::make_mut(&mut self.site).usage = true;
        self
    }
}

#[cfg(feature = "console")]
impl App {
    /// The usage page's report for the caller of `ctx`.
    async fn usage_report(
        &self,
        ctx: crate::RequestContext,
    ) -> Result<crate::console::UsageReport, agentwire_types::A2AError> {
        let authenticates = self.auth.is_some();
        let principal = self.identify(ctx.clone(), agentwire_types::Access::ReadBudgets, authenticates).await?;
        let book = self.budget_book();
        let everyone = crate::budget::sees_everyone(book, authenticates, principal.as_ref(), ctx.peer.as_ref());
        let mut rows = self.metrics.as_ref().map(Metrics::usage_sums).unwrap_or_default();
        let caller = principal.as_ref().map(|principal| principal.name.clone());
        if !everyone {
            let own = caller.as_deref().unwrap_or(crate::budget::ANONYMOUS);
            rows.retain(|row| row.principal == own);
        }
        let budgets = match book {
            Some(book) => book.statements(principal.as_ref(), everyone).await?,
            None => Vec::new(),
        };
        Ok(crate::console::UsageReport { counted: self.metrics.is_some(), caller, everyone, rows, budgets })
    }
}

#[cfg(feature = "console")]
impl crate::Console {
    /// Counts each live task list as one of its caller's open streams under `app`'s quotas
    /// (`--max-streams`), as the operations' streams are: a list followed in a browser holds a
    /// connection and reads the list at every change.
    ///
    /// ```
    /// use agentwire_server::quota::Quotas;
    /// use agentwire_server::{App, Console};
    ///
    /// let app = App::new().quotas(Quotas { max_streams_per_principal: 10, ..Quotas::default() });
    /// let console = Console::loopback_only().counting_streams(&app);
    /// # drop(console);
    /// ```
    pub fn counting_streams(mut self, app: &App) -> Self {
        let app = app.clone();
        self.streams = Some(std::sync::Arc::new(move |ctx| {
            let app = app.clone();
            Box::pin(async move { app.open_stream(ctx).await })
        }));
        self
    }
}
