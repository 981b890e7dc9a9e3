//! An A2A client: finds an agent by its card, picks an interface it can use, and calls every
//! operation, in protocol v1.0 or v0.3, over JSON-RPC, HTTP+JSON or (with the `grpc` feature)
//! gRPC, with streams that resume after a dropped connection.
//!
//! Requests and answers are the canonical types of [`agentwire_types`], whatever the interface
//! speaks: the shared codecs write them in the interface's form and read its answers back. Errors
//! keep the A2A error the agent sent ([`Error::Protocol`]).
//!
//! ```no_run
//! # async fn run() -> agentwire_client::Result<()> {
//! use agentwire_client::Client;
//! use agentwire_types::{GetTaskRequest, Message, SendMessageRequest, SendMessageResponse};
//!
//! let client = Client::builder("http://127.0.0.1:8080").bearer_token("secret").connect().await?;
//! println!("talking to {} at {}", client.card().name, client.endpoint());
//! let reply = client.send_message(SendMessageRequest::new(Message::user("m-1", "hello"))).await?;
//! if let SendMessageResponse::Task(task) = reply {
//!     let task = client.get_task(GetTaskRequest { id: task.id, ..Default::default() }).await?;
//!     println!("{:?}", task.status.state);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `grpc` | yes | the gRPC binding (`lf.a2a.v1` and `a2a.v1`), on tonic |
//! | `webhook` | yes | [`WebhookReceiver`]: an axum `Router` that receives push notifications |

mod call;
mod caller_auth;
mod card;
mod client;
mod credentials;
mod delegate;
mod endpoint;
mod error;
mod exchange;
#[cfg(feature = "grpc")]
mod grpc;
mod http;
mod jsonrpc;
mod limits;
mod oauth;
mod rest;
mod scoped;
mod service;
mod sse;
mod stream;
mod tls;
mod trace;
mod transport;
mod verify;
#[cfg(feature = "webhook")]
mod webhook;

/// Keys, signatures and tokens: card signatures and signed webhook deliveries ([`agentwire_jose`]).
pub use agentwire_jose as jose;
pub use agentwire_types::Binding;
pub use caller_auth::CallerAuth;
pub use card::CardCache;
pub use client::{Client, ClientBuilder};
pub use credentials::Credentials;
pub use delegate::{Delegation, DELEGATED_BY};
pub use endpoint::{Endpoint, Version};
pub use error::{error_chain, BoxError, Error, Result};
pub use exchange::TokenExchange;
pub use limits::{read_limited, DEFAULT_MAX_REPLY_SIZE};
pub use oauth::ClientCredentials;
pub use scoped::with_call_headers;
#[doc(hidden)]
pub use sse::read_event_stream;
pub use sse::{sse_events, SseError};
pub use stream::{EventStream, Reconnect};
pub use verify::{CardSignature, CardVerifier};
#[cfg(feature = "webhook")]
pub use webhook::{Notification, Notifications, WebhookReceiver};
