//! A language model as an A2A agent, embedded: `agentwire_openai::OpenAiAgent` asks any
//! OpenAI-compatible chat-completions server (Ollama, vLLM, llama.cpp's server, LiteLLM, OpenAI…),
//! streams the answer as artifact chunks, remembers each context's conversation in the task
//! store, and calls the tools of an MCP server, asking before it runs the one named in `APPROVE`.
//! `agentwire serve --agent openai` serves the same agent from the command line.
//!
//! ```sh
//! # A local model with Ollama (ollama pull llama3.2), and the MCP Python SDK's example server
//! OPENAI_BASE_URL=http://127.0.0.1:11434/v1 MODEL=llama3.2 \
//!   MCP_SERVER="python3 interop/mcp-python/server.py stdio" APPROVE=add \
//!   cargo run -p agentwire-examples --example model_agent
//! cargo run --bin agentwire -- send http://127.0.0.1:8088 'What is 2 + 3? Use a tool.' --stream
//! ```

use agentwire_mcp::McpTools;
use agentwire_openai::{OpenAiAgent, Toolbox};
use agentwire_server::{router, CardConfig, RequestHandler, Server};
use tokio::net::TcpListener;

const ADDR: &str = "127.0.0.1:8088";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().with_writer(std::io::stderr).init();
    let base_url = std::env::var("OPENAI_BASE_URL").unwrap_or_else(|_| "http://127.0.0.1:11434/v1".into());
    let model = std::env::var("MODEL").unwrap_or_else(|_| "llama3.2".into());
    let mut servers = Vec::new();
    if let Ok(target) = std::env::var("MCP_SERVER") {
        servers.push(McpTools::open(&target, None).await?);
    }
    let mut agent = OpenAiAgent::builder(base_url, model)
        .system_prompt("You are a careful assistant. Use a tool when one fits; say which you used.")
        .tools(Toolbox::of(servers).await?);
    if let Ok(key) = std::env::var("OPENAI_API_KEY") {
        agent = agent.api_key(key);
    }
    if let Ok(tool) = std::env::var("APPROVE") {
        agent = agent.approve(tool);
    }
    let agent = agent.build();
    let mut card = agent.card();
    card.description = "A model with tools, asking before it uses the gated ones".into();
    let card = CardConfig { card, public_url: format!("http://{ADDR}"), ..CardConfig::default() };
    let handler = RequestHandler::builder(agent).card(card).build();
    let listener = TcpListener::bind(ADDR).await?;
    println!("listening on http://{ADDR}");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    Server::builder(listener).handler(handler.clone()).serve(router(handler), shutdown).await?;
    Ok(())
}
