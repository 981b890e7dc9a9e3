//! An A2A server: a transport-agnostic core, the agent API, and the HTTP surface (JSON-RPC,
//! HTTP+JSON and the agent card, with a slot for gRPC) as one axum `Router`.
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

pub mod agent;
pub mod auth;
mod causes;
mod context;
mod core;
#[cfg(feature = "grpc")]
mod grpc;
mod http;
mod serve;

pub use crate::http::{router, router_with, CorsOrigins, HttpOptions};
pub use context::{Principal, ProtocolVersion, RequestContext, SUPPORTED_VERSIONS};
pub use core::{
    CardConfig, Limits, PushSettings, RequestHandler, RequestHandlerBuilder, Retention, StreamItem, TaskEventStream,
    WebhookGuard,
};
pub use serve::{serve, ServeOptions, TlsConfig};
