//! A language model as an A2A agent: [`OpenAiAgent`] answers each task with a chat model behind
//! an OpenAI-compatible chat-completions API (OpenAI, vLLM, llama.cpp's server, Ollama, LiteLLM…),
//! streams its answer, and lets it call the tools of MCP servers ([`Toolbox`]).
//!
//! `agentwire serve --agent openai --base-url URL --model NAME` serves it; embedders hand it to
//! a [`RequestHandler`](agentwire_server::RequestHandler) like any other agent:
//!
//! ```no_run
//! use agentwire_mcp::McpTools;
//! use agentwire_openai::{OpenAiAgent, Toolbox};
//! use agentwire_server::{CardConfig, RequestHandler};
//!
//! # async fn run() -> Result<(), agentwire_types::A2AError> {
//! let files = McpTools::open("npx -y @modelcontextprotocol/server-filesystem /srv/docs", None).await?;
//! let agent = OpenAiAgent::builder("https://api.openai.com/v1", "gpt-4o-mini")
//!     .api_key(std::env::var("OPENAI_API_KEY").unwrap_or_default())
//!     .tools(Toolbox::of(vec![files]).await?)
//!     .approve("write_file")
//!     .build();
//! let card = CardConfig { card: agent.card(), ..CardConfig::default() };
//! let handler = RequestHandler::builder(agent).card(card).build();
//! # Ok(())
//! # }
//! ```

mod agent;
mod artifact;
mod builder;
mod caller_tools;
mod chat;
mod conversation;
mod meter;
mod model;
mod records;
mod toolbox;

pub use agent::OpenAiAgent;
pub use builder::{
    OpenAiAgentBuilder, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_HISTORY_BYTES,
    DEFAULT_MAX_TOOL_ROUNDS, DEFAULT_REQUEST_TIMEOUT,
};
pub use toolbox::{Toolbox, MAX_TOOL_RESULT_BYTES};
