//! An A2A server: a transport-agnostic core behind one operation service, the agent API, and
//! the wire (JSON-RPC, HTTP+JSON, gRPC and the agent card, in every protocol generation) as one
//! axum `Router` over any [`OperationService`].
//!
//! ```no_run
//! use agentwire_server::agent::EchoAgent;
//! use agentwire_server::{router, serve, RequestHandler, ServeOptions};
//!
//! # async fn run() -> std::io::Result<()> {
//! let handler = RequestHandler::builder(EchoAgent).build();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! serve(listener, router(handler), std::future::pending(), ServeOptions::default()).await
//! # }
//! ```
//!
//! Cross-cutting work on operations (spans, metrics, authentication, quotas, and layers of your
//! own) stands in front of the handler in one fixed order, composed by an [`App`]:
//! `App::new().authenticator(auth).layer(my_layer).router(handler, options)`.
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `grpc` | yes | the gRPC binding (`lf.a2a.v1` and `a2a.v1`), with health and reflection |
//! | `console` | no | [`Console`]: a web console at `/console` (the card, tasks, a message's stream) |
//! | `otlp` | no | `telemetry::OtlpTraces`: spans exported to an OpenTelemetry collector |

pub mod agent;
mod app;
pub mod auth;
pub mod budget;
mod causes;
#[cfg(feature = "console")]
mod console;
mod context;
mod core;
#[cfg(feature = "grpc")]
mod grpc;
pub mod health;
mod http;
mod ids;
mod layers;
pub mod metrics;
mod push;
pub mod quota;
mod serve;
mod server;
mod service;
mod spans;
#[cfg(feature = "otlp")]
pub mod telemetry;
mod tenant;

pub use crate::app::App;
pub use crate::http::{error_response, router, router_with, CorsOrigins, HttpOptions, Routes};
/// Keys, signatures and tokens: signed cards, JWT validation ([`agentwire_jose`]).
pub use agentwire_jose as jose;
pub use agentwire_types::{A2aRequest, A2aResponse, StreamItem, TaskEventStream};
#[cfg(feature = "console")]
pub use console::{Console, ConsoleAccess, ListedAgent, RegistryFacts};
pub use context::{Principal, ProtocolVersion, RequestContext, SUPPORTED_VERSIONS};
pub use core::{
    advertised_interfaces, check_input_modes, CardConfig, Limits, RequestHandler, RequestHandlerBuilder, Retention,
};
pub use metrics::Metrics;
pub use push::{PushSettings, WebhookGuard};
pub use serve::{serve, ServeOptions, ServedHosts, TlsConfig};
pub use server::Server;
pub use service::{Admission, Admitted, OperationService, Operations};
pub use spans::{FrontSpan, OperationSpans, Spanned};
