//! Everything a server answers over HTTP, gathered before the HTTP layers go over it once.

use std::sync::Arc;

use axum::extract::State;
use axum::routing::{get, post, MethodRouter};
use axum::Router;
use tower::util::BoxCloneSyncService;
use tower::ServiceBuilder;
use tower_http::request_id::PropagateRequestIdLayer;
use tower_http::trace::TraceLayer;

use super::{card, grpc, jsonrpc, rest, AppState, BodyLimits, HttpOptions, Shared};
use crate::health;
use crate::layers::{self, CorsOrigins};
use crate::service::{OperationService, Operations};
use crate::tenant::TenantCheck;

/// The routes of a server: the A2A routes of one operation service (the card, JSON-RPC at `/`,
/// the HTTP+JSON routes, gRPC, health, the console), and the routes served beside them (MCP, a
/// gateway's directory and registry). [`Routes::into_router`] puts the HTTP layers over all of
/// them at once, so that every route has a request span with its id, the echo of the client's
/// `x-request-id`, CORS and the body limit, whichever front it belongs to.
///
/// ```
/// use agentwire_server::{agent::EchoAgent, HttpOptions, RequestHandler, Routes};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let handler = RequestHandler::builder(EchoAgent).build();
/// let status = axum::Router::new().route("/status", axum::routing::get(|| async { "up" }));
/// let router: axum::Router = Routes::new(handler, HttpOptions::default()).merge(status).into_router();
/// # drop(router);
/// # });
/// ```
pub struct Routes {
    router: Router,
    grpc: grpc::GrpcSteerLayer,
    cors: CorsOrigins,
    max_body_bytes: usize,
}

impl Routes {
    /// The A2A routes of `service`, as `options` configure them.
    pub fn new(service: impl OperationService, options: HttpOptions) -> Self {
        let operations: Operations = BoxCloneSyncService::new(TenantCheck::new(service, options.max_tenant_bytes));
        let grpc = grpc::GrpcSteerLayer::new(&operations, &options);
        let state = Arc::new(Shared {
            operations,
            card: Arc::new(card::CardForms::new(options.strict_card)),
            sse_keep_alive: options.sse_keep_alive,
            body_limits: BodyLimits { max_bytes: options.max_body_bytes, read_timeout: options.body_read_timeout },
            readiness: options.readiness,
            signing_keys: options.signing_keys.clone(),
        });
        let mut app = Router::new()
            .route("/healthz", get(health::live))
            .route("/readyz", get(|State(state): State<AppState>| async move { health::ready(&state.readiness).await }))
            .route("/.well-known/agent-card.json", get(card::serve))
            .route("/.well-known/agent.json", get(card::serve))
            .route("/agentCard", get(card::serve))
            .route("/", post(jsonrpc::handle));
        if let Some(keys) = &options.signing_keys {
            app = app.route("/.well-known/jwks.json", get(card::keys(keys)));
        }
        for (path, route) in rest::routes() {
            app = app.route(&format!("/{{tenant}}{path}"), route.clone()).route(path, route);
        }
        for (path, route) in rest::v03_routes() {
            app = app.route(path, route);
        }
        // `/v1/…` belongs to v0.3 even where no route matches: never a tenant named `v1`.
        let app = app
            .route("/v1", axum::routing::any(rest::no_route))
            .route("/v1/{*rest}", axum::routing::any(rest::no_route))
            .fallback(rest::no_route)
            .method_not_allowed_fallback(rest::method_not_allowed)
            .with_state(Arc::clone(&state));
        #[cfg(feature = "console")]
        let app = match options.console {
            Some(console) => {
                let operations = state.operations.clone();
                app.merge(crate::console::routes(operations, state.signing_keys.clone(), console))
            }
            None => app,
        };
        Self { router: app, grpc, cors: options.cors, max_body_bytes: options.max_body_bytes }
    }

    /// Adds routes served beside the agent's, under the same HTTP layers. They may not have a
    /// fallback of their own (the agent's answers A2A's 404s).
    pub fn merge(mut self, routes: Router) -> Self {
        self.router = self.router.merge(routes);
        self
    }

    /// Adds one route beside the agent's, under the same HTTP layers.
    pub fn route(mut self, path: &str, route: MethodRouter) -> Self {
        self.router = self.router.route(path, route);
        self
    }

    /// The router with the HTTP layers over every route, outermost first: a span per request
    /// with its id, the echo of the client's request id, CORS for browsers (it answers
    /// preflights), the body limit, the version and extensions a request asks for, and the
    /// steer of gRPC requests (whatever their path) to the service's gRPC server. One `layer`
    /// call, so that a request passes through one stack of them.
    pub fn into_router(self) -> Router {
        self.router.layer(
            ServiceBuilder::new()
                .layer(TraceLayer::new_for_http().make_span_with(layers::request_span))
                .layer(PropagateRequestIdLayer::new(layers::REQUEST_ID))
                .layer(layers::BrowserCorsLayer::new(&self.cors))
                .layer(layers::body_limit(self.max_body_bytes))
                .layer(layers::negotiate())
                .layer(self.grpc),
        )
    }

    /// The routes behind the layers only the agent's own routes need (negotiation, the gRPC
    /// steer), for a router that puts the HTTP layers over them itself: an agent served under a
    /// gateway's path, behind the gateway's.
    pub fn without_http_layers(self) -> Router {
        self.router.layer(ServiceBuilder::new().layer(layers::negotiate()).layer(self.grpc))
    }
}
