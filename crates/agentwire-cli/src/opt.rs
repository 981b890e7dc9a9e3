//! Command-line options.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// agentwire: serve and talk to A2A agents.
#[derive(Debug, Parser)]
#[command(name = "agentwire", version, about)]
pub(crate) struct Opt {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve an agent over JSON-RPC and HTTP+JSON.
    Serve(ServeOpt),
}

/// Which built-in agent to serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum AgentKind {
    /// Replies with the text it received, as a completed task with an artifact.
    Echo,
    /// The behaviours the A2A conformance suites expect.
    Conformance,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ServeOpt {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080", env = "AGENTWIRE_HTTP")]
    pub(crate) http: SocketAddr,

    /// The agent to serve.
    #[arg(long, value_enum, default_value_t = AgentKind::Echo)]
    pub(crate) agent: AgentKind,

    /// Offer no streaming, push notifications or extended card.
    #[arg(long)]
    pub(crate) reduced: bool,

    /// Require clients to declare this extension (repeatable).
    #[arg(long = "require-extension", value_name = "URI")]
    pub(crate) required_extensions: Vec<String>,

    /// Require credentials: `bearer:TOKEN1,TOKEN2` or `apikey:HEADER:KEY` (repeatable).
    #[arg(long, value_name = "SPEC")]
    pub(crate) auth: Vec<String>,

    /// Allow webhooks on loopback, private and link-local addresses.
    #[arg(long)]
    pub(crate) allow_private_webhooks: bool,

    /// Agent card (JSON) with the name, description, skills and so on to publish.
    #[arg(long, value_name = "FILE")]
    pub(crate) card: Option<PathBuf>,

    /// The URL clients reach this server at, as advertised in the card
    /// (default: http://<listen address>).
    #[arg(long, value_name = "URL")]
    pub(crate) public_url: Option<String>,

    /// Serve over TLS with this PEM certificate chain (needs --tls-key).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub(crate) tls_cert: Option<PathBuf>,

    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub(crate) tls_key: Option<PathBuf>,

    /// Most connections open at once; further clients wait until one closes.
    #[arg(long, value_name = "N", default_value_t = 16_384)]
    pub(crate) max_connections: usize,

    /// Seconds a client may take to send a request's headers before its connection is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub(crate) header_read_timeout: u64,

    /// A browser origin allowed to call the agent (repeatable; default: any origin).
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    pub(crate) cors_origins: Vec<String>,

    /// Log as JSON lines instead of text.
    #[arg(long)]
    pub(crate) log_json: bool,
}
