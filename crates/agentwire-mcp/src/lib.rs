//! A2A agents as Model Context Protocol tools, so that assistants, IDEs and agent frameworks
//! that speak MCP can call them.
//!
//! An [`McpServer`] offers the agents of an [`AgentDirectory`] (one agent, a gateway's agents,
//! remote agents) as tools: one per skill, and `list_agents`, `send_message`, `get_task` and
//! `cancel_task`. A tool call is an A2A send made as the MCP caller, through the operation
//! service with the [`App`](agentwire_server::App)'s layers in front: authentication, quotas,
//! metrics and the store's scoping apply to it as to any A2A call. The task is followed to its
//! end, with a progress notification per event; canceling the MCP request cancels the task; a
//! question the agent asks goes to the user through MCP elicitation. `docs/MCP.md` has the whole
//! mapping.
//!
//! The other direction, for agent authors: [`McpTools`] calls the tools of an MCP server (a
//! command over stdio, or a URL over streamable HTTP) and gives their results as A2A parts.
//!
//! Serve it over streamable HTTP with [`router`], or over stdio with [`serve_stdio`]:
//!
//! ```no_run
//! use agentwire_mcp::{router, McpHttpOptions, McpServer, OneAgent};
//! use agentwire_server::agent::EchoAgent;
//! use agentwire_server::{App, HttpOptions, RequestHandler};
//!
//! # async fn run() -> std::io::Result<()> {
//! let app = App::new();
//! let handler = RequestHandler::builder(EchoAgent).build();
//! let mcp = McpServer::new(OneAgent::new(app.service(handler.clone())));
//! let options = McpHttpOptions::new("http://127.0.0.1:8080");
//! let routes = app.router(handler, HttpOptions::default()).merge(router(mcp, app, options));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! agentwire_server::serve(listener, routes, std::future::pending(), Default::default()).await
//! # }
//! ```

mod agents;
mod call;
mod cancels;
mod client;
mod content;
mod http;
mod server;
mod sessions;
mod stdio;
mod tasks;
mod tools;

pub use agents::{card_of, matching, AgentDirectory, AgentList, McpAgent, OneAgent};
pub use client::{McpTools, ToolOutput};
pub use content::USAGE_META_KEY;
pub use http::{router, McpHttpOptions, MCP_PATH, RESOURCE_METADATA_PATH};
pub use server::McpServer;
pub use sessions::SessionLimits;
pub use stdio::serve_stdio;
pub use tools::tool_name;
