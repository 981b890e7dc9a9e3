//! The HTTP surface: one axum `Router` for the agent card, JSON-RPC at `/`, the HTTP+JSON routes
//! and gRPC, with the cross-cutting work done once, as tower layers around every route.
//!
//! Layers, outermost first, over every route a server answers ([`Routes`]: the agent's, and
//! MCP's or a gateway's beside them): tracing (a span per request, with its id), the echo of the
//! client's request id, CORS for browsers (it answers preflights), the body limit, version and
//! extension negotiation, and the steer that sends gRPC requests to the gRPC services. Each binding decodes
//! a request into its [`RequestContext`](crate::RequestContext) and canonical operation, calls
//! the operation service (which authenticates), and writes the answer or the error in its own
//! format.

mod card;
pub(crate) mod errors;
mod grpc;
mod jsonrpc;
pub(crate) mod request;
mod rest;
mod routes;
mod sse;

use std::sync::Arc;
use std::time::Duration;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;

use crate::health::Readiness;
use crate::service::{OperationService, Operations};

pub use crate::layers::CorsOrigins;
pub use routes::Routes;

/// How [`router_with`] serves the agent over HTTP: what the wire may carry, and how. Limits on
/// what operations may make the server hold are the handler's [`Limits`](crate::Limits).
///
/// ```
/// use std::time::Duration;
/// use agentwire_server::{CorsOrigins, HttpOptions};
///
/// let options = HttpOptions {
///     cors: CorsOrigins::List(vec!["https://app.example".parse().unwrap()]),
///     max_body_bytes: 1024 * 1024,
///     ..HttpOptions::default()
/// };
/// # drop(options);
/// ```
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Browser origins allowed to call the agent.
    pub cors: CorsOrigins,
    /// How often an idle event stream sends a comment line, so that proxies keep it open.
    pub sse_keep_alive: Duration,
    /// Serve the v1.0 agent card alone, without v0.3's members, to every client (by default the
    /// card is the combined one, and only a request with `A2A-Version: 1.0` gets the v1.0 card).
    pub strict_card: bool,
    /// Largest accepted request body (or gRPC message), in bytes.
    pub max_body_bytes: usize,
    /// How long a client may take to send a request's body (a gRPC call's message) once its
    /// headers are in.
    pub body_read_timeout: Duration,
    /// What `GET /readyz` and the gRPC health service report: a handler's
    /// [`readiness`](crate::RequestHandler::readiness), or always ready (the default).
    pub readiness: Readiness,
    /// The public keys served at `/.well-known/jwks.json`: those of the agent's
    /// [signing key](crate::RequestHandlerBuilder::signing_key), with which clients verify its
    /// card and its webhook deliveries. Not served when `None`.
    pub signing_keys: Option<agentwire_jose::JwkSet>,
    /// Longest tenant name a request may give, in bytes (128 by default). A tenant name is also
    /// limited to letters, digits and `-`, `.`, `_`, `~`, and may not be dots alone; any other is
    /// refused with InvalidParams before the operation service sees the request.
    pub max_tenant_bytes: usize,
    /// The web console at `/console`; not served when `None` (the default). In a router nested
    /// under a prefix, tell the console where it is ([`Console::at`](crate::Console::at)).
    #[cfg(feature = "console")]
    pub console: Option<crate::Console>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            cors: CorsOrigins::Any,
            sse_keep_alive: Duration::from_secs(15),
            strict_card: false,
            max_body_bytes: 4 * 1024 * 1024,
            body_read_timeout: Duration::from_secs(30),
            max_tenant_bytes: 128,
            readiness: Readiness::default(),
            #[cfg(feature = "console")]
            console: None,
            signing_keys: None,
        }
    }
}

/// How much of a request body is read, and for how long.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyLimits {
    pub(crate) max_bytes: usize,
    pub(crate) read_timeout: Duration,
}

/// What every route shares; each request's extractor clones the `Arc` only.
pub(crate) type AppState = Arc<Shared>;

/// The state behind [`AppState`].
pub(crate) struct Shared {
    pub(crate) operations: Operations,
    card: Arc<card::CardForms>,
    sse_keep_alive: Duration,
    pub(crate) body_limits: BodyLimits,
    readiness: Readiness,
    /// The keys the card's signatures verify with, as `/.well-known/jwks.json` serves them.
    #[cfg_attr(not(feature = "console"), allow(dead_code))]
    pub(crate) signing_keys: Option<agentwire_jose::JwkSet>,
}

/// The whole A2A HTTP surface of an operation service (a [`RequestHandler`](crate::RequestHandler),
/// or any [`OperationService`]), with the default [`HttpOptions`]: the agent card, JSON-RPC at
/// `/`, the HTTP+JSON routes (also under `/{tenant}/`) and gRPC, behind request tracing, CORS and
/// the body limit. Serve it with [`serve`](crate::serve), or put it into an application of your
/// own: `nest` it under a prefix (the prefix is then part of the URL the card must advertise), or
/// `merge` it into a router that has no fallback (it has its own, for A2A's 404s).
///
/// ```no_run
/// use agentwire_server::{agent::EchoAgent, router, serve, RequestHandler, ServeOptions};
///
/// # async fn run() -> std::io::Result<()> {
/// let app = router(RequestHandler::builder(EchoAgent).build());
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// serve(listener, app, std::future::pending(), ServeOptions::default()).await
/// # }
/// ```
pub fn router(service: impl OperationService) -> Router {
    router_with(service, HttpOptions::default())
}

/// [`router`], configured by `options`.
///
/// To serve other routes beside the agent's (MCP, a gateway's directory) under the same HTTP
/// layers, build the router with [`Routes`] instead.
pub fn router_with(service: impl OperationService, options: HttpOptions) -> Router {
    Routes::new(service, options).into_router()
}

/// A JSON response. The body is written into a buffer sized for a typical reply (a task with a
/// short history), so that it rarely has to grow.
/// `error` as an HTTP+JSON (v1.0) error response: its HTTP status, the AIP-193 body
/// `{"error":{code,status,message,details}}`, and the headers it asks for (`WWW-Authenticate`,
/// `Retry-After`). For routes served beside the operations, such as a gateway's registry.
///
/// ```
/// use agentwire_types::A2AError;
///
/// let response = agentwire_server::error_response(&A2AError::permission_denied("admins only"));
/// assert_eq!(response.status(), 403);
/// ```
pub fn error_response(error: &agentwire_types::A2AError) -> Response {
    let json = HeaderValue::from_static("application/json");
    errors::with_error_headers(json_response(errors::error_status(error), json, &errors::RestError::from(error)), error)
}

pub(crate) fn json_response(status: StatusCode, media_type: HeaderValue, body: &impl serde::Serialize) -> Response {
    let mut json = Vec::with_capacity(1024);
    match serde_json::to_writer(&mut json, body) {
        Ok(()) => (status, [(header::CONTENT_TYPE, media_type)], json).into_response(),
        Err(error) => {
            tracing::error!(%error, "could not encode a response");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use agentwire_types::Dialect;

    use super::rest;
    use agentwire_types::jsonrpc::METHODS;

    /// docs/COMPATIBILITY.md's table, row by row: the operation, then one cell per column.
    fn table() -> Vec<Vec<String>> {
        include_str!("../../../../docs/COMPATIBILITY.md")
            .lines()
            .skip_while(|line| !line.starts_with("| Operation |"))
            .skip(2)
            .take_while(|line| line.starts_with('|'))
            .map(|line| {
                let cells = line.trim_matches('|').replace("\\|", "/");
                cells.split('|').map(|cell| cell.trim().to_owned()).collect()
            })
            .collect()
    }

    /// The `code` spans of a cell, unless the cell says the generation has no such method.
    fn names(cell: &str) -> Vec<&str> {
        if cell.starts_with('—') {
            return Vec::new();
        }
        cell.split('`').skip(1).step_by(2).collect()
    }

    #[test]
    fn compatibility_table_matches_the_routes() {
        let rows = table();
        let operations: Vec<String> = rows.iter().map(|row| row[0].clone()).collect();
        for (dialect, column) in [(Dialect::V1, 1), (Dialect::V03, 2), (Dialect::Legacy, 3)] {
            for row in &rows {
                let served: Vec<&str> = METHODS
                    .iter()
                    .filter(|(_, d, operation)| *d == dialect && format!("{operation:?}") == row[0])
                    .map(|(name, ..)| *name)
                    .collect();
                assert_eq!(names(&row[column]), served, "{} in {dialect:?}", row[0]);
            }
        }
        for (_, _, operation) in METHODS {
            assert!(operations.contains(&format!("{operation:?}")), "{operation:?} has no row");
        }
        // The shared HTTP+JSON route table, which the client calls, is the documented one.
        for (dialect, column) in [(Dialect::V1, 4), (Dialect::V03, 5)] {
            for row in &rows {
                let route =
                    agentwire_types::rest::routes(dialect).iter().find(|r| format!("{:?}", r.operation) == row[0]);
                let documented = route.map(|r| match &r.also {
                    Some(also) => format!("{also}/{} {}", r.method, r.path),
                    None => format!("{} {}", r.method, r.path),
                });
                let cell = names(&row[column]).first().map(|cell| cell.to_string());
                assert_eq!(cell, documented, "{} over HTTP+JSON in {dialect:?}", row[0]);
            }
        }
    }

    #[test]
    fn the_server_serves_every_shared_route() {
        let served: Vec<&str> = rest::routes().into_iter().chain(rest::v03_routes()).map(|(path, _)| path).collect();
        for dialect in Dialect::ALL {
            for route in agentwire_types::rest::routes(dialect) {
                // `/tasks/{id}:cancel` is the route `/tasks/{id}`, whose last `:` names the action.
                let path = route.path.trim_end_matches(":cancel").trim_end_matches(":subscribe");
                assert!(served.contains(&path), "{path} ({:?}) has no route", route.operation);
            }
        }
    }
}
