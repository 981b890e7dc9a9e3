//! An A2A server: a transport-agnostic core, the agent API, and the JSON-RPC and HTTP+JSON bindings.
//!
//! ```no_run
//! use agentwire_server::agent::EchoAgent;
//! use agentwire_server::{router, RequestHandler};
//!
//! # async fn run() -> std::io::Result<()> {
//! let handler = RequestHandler::builder(EchoAgent).build();
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! axum::serve(listener, router(handler)).await
//! # }
//! ```

pub mod agent;
pub mod auth;
mod bindings;
mod context;
mod core;
mod json;
mod serve;

pub use bindings::{router, service, A2aService};
pub use context::{Principal, ProtocolVersion, RequestContext, SUPPORTED_VERSIONS};
pub use core::{
    CardConfig, Limits, Op, PushSettings, RequestHandler, RequestHandlerBuilder, StreamItem, TaskEventStream,
    WebhookGuard,
};
pub use serve::serve;
