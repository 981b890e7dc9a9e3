//! An A2A client: finds an agent by its card, picks an interface it can use, and calls every
//! operation of protocol v1.0 over JSON-RPC or HTTP+JSON, with streams that resume after a
//! dropped connection.
//!
//! Requests and answers are the canonical types of [`agentwire_types`] (v1.0 ProtoJSON on the
//! wire), and errors keep the A2A error the agent sent ([`Error::Protocol`]).
//!
//! ```no_run
//! # async fn run() -> agentwire_client::Result<()> {
//! use agentwire_client::Client;
//! use agentwire_types::{GetTaskRequest, Message, SendMessageRequest, SendMessageResponse};
//!
//! let client = Client::builder("http://127.0.0.1:8080").bearer_token("secret").connect().await?;
//! println!("talking to {}", client.card().name);
//! let reply = client.send_message(SendMessageRequest::new(Message::user("m-1", "hello"))).await?;
//! if let SendMessageResponse::Task(task) = reply {
//!     let task = client.get_task(GetTaskRequest { id: task.id, ..Default::default() }).await?;
//!     println!("{:?}", task.status.state);
//! }
//! # Ok(())
//! # }
//! ```

mod client;
mod discovery;
mod error;
mod stream;
mod transport;

pub use client::{Client, ClientBuilder};
pub use error::{Error, Result};
pub use stream::{EventStream, Reconnect};
pub use transport::{Binding, Endpoint};
