//! The model agent's options (`serve --agent openai`).

use std::path::PathBuf;
use std::time::Duration;

use super::values::{parse_duration, parse_size};
use super::MODEL_AGENT;

/// The model agent's options (`--agent openai`).
#[derive(Debug, clap::Args)]
#[command(next_help_heading = MODEL_AGENT)]
pub(crate) struct ModelOpt {
    /// The root of the OpenAI-compatible API.
    ///
    /// As OpenAI's clients take it: `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`
    /// (Ollama), `http://127.0.0.1:8000/v1` (vLLM, llama.cpp)…
    #[arg(long, value_name = "URL", env = "OPENAI_BASE_URL", required_if_eq("agent", "openai"))]
    pub(crate) base_url: Option<String>,

    /// The model to ask.
    #[arg(long, value_name = "NAME", required_if_eq("agent", "openai"))]
    pub(crate) model: Option<String>,

    /// A file holding the API key (by default, the OPENAI_API_KEY variable's; none at all for a
    /// server that asks for none).
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub(crate) api_key_file: Option<PathBuf>,

    /// The system prompt that opens every conversation.
    #[arg(long, value_name = "TEXT", conflicts_with = "system_prompt_file")]
    pub(crate) system_prompt: Option<String>,

    /// A file holding the system prompt.
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub(crate) system_prompt_file: Option<PathBuf>,

    /// The agent's name in its card (default: the model's). --card replaces the whole card.
    #[arg(long, value_name = "NAME", hide_short_help = true)]
    pub(crate) agent_name: Option<String>,

    /// The agent's description in its card.
    #[arg(long, value_name = "TEXT", hide_short_help = true)]
    pub(crate) agent_description: Option<String>,

    /// An MCP server whose tools the model may call (repeatable).
    ///
    /// A command line to start (stdio), or an http(s) URL (streamable HTTP).
    #[arg(long = "mcp-server", value_name = "CMD|URL")]
    pub(crate) mcp_servers: Vec<String>,

    /// How the model's tools reach the MCP servers at URLs: `none` (the default: with the
    /// agent's own sessions, the same for every caller), `passthrough` or `exchange` (as each
    /// task's caller). Both need --auth jwt:.
    ///
    /// `passthrough` opens the caller's session with the caller's own bearer token, only when its
    /// audience names the server (--mcp-audience). `exchange` opens it with a token exchanged for
    /// the caller's at the token endpoint (RFC 8693; --token-exchange-url), meant for the server.
    /// The server then sees who asked, and keeps each caller's work apart.
    #[arg(long, value_enum, value_name = "MODE", hide_short_help = true)]
    pub(crate) mcp_auth: Option<McpAuth>,

    /// What names the MCP servers at URLs in the audience of the tokens passed on to them or
    /// asked for them: `AUD` for every one, `URL=AUD` for the --mcp-server at URL (repeatable).
    /// Default: the server's URL.
    #[arg(long = "mcp-audience", value_name = "[URL=]AUD", hide_short_help = true)]
    pub(crate) mcp_audiences: Vec<String>,

    /// A tool whose calls wait for the user's approval (the task asks, INPUT_REQUIRED; a reply
    /// starting with "yes" approves). Repeatable.
    #[arg(long = "approve", value_name = "TOOL", hide_short_help = true)]
    pub(crate) approve: Vec<String>,

    /// The most of a context's earlier tasks the model is given, as their size in memory; the
    /// newest are kept.
    #[arg(long, value_name = "SIZE", default_value = "64KiB", value_parser = parse_size, hide_short_help = true)]
    pub(crate) history_size: usize,

    /// How many rounds of tool calls one task may make before it fails.
    #[arg(long, value_name = "N", default_value_t = agentwire_openai::DEFAULT_MAX_TOOL_ROUNDS, hide_short_help = true)]
    pub(crate) max_tool_rounds: usize,

    /// The most one answer of the model may hold (its text, and its tool calls' names and
    /// arguments); a larger one fails its task.
    #[arg(long, value_name = "SIZE", default_value = "8MiB", value_parser = parse_size, hide_short_help = true)]
    pub(crate) max_answer_size: usize,

    /// How long one request to the model may take, its answer streamed, before its task fails.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration, hide_short_help = true)]
    pub(crate) model_timeout: Duration,

    /// How long the model's server may send nothing (connecting, before its answer, or in the
    /// middle of it) before the task fails.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_duration, hide_short_help = true)]
    pub(crate) model_idle_timeout: Duration,
}

/// How the model agent's tools reach the MCP servers at URLs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum McpAuth {
    /// With the agent's own sessions, the same for every caller.
    None,
    /// With each task's caller's own bearer token, when it is meant for the server.
    Passthrough,
    /// With a token exchanged for the caller's (RFC 8693), meant for the server.
    Exchange,
}
