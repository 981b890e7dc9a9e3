//! Command-line options.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

mod budget;
mod exchange;
mod gateway;
mod limits;
mod model;
mod values;

pub(crate) use budget::budgets;
pub(crate) use exchange::TokenExchangeOpt;
pub(crate) use gateway::{GatewayOpt, Upstream, UpstreamAuth, UpstreamOpt};
pub(crate) use limits::LimitOpt;
pub(crate) use model::{McpAuth, ModelOpt};
pub(crate) use values::Listen;
use values::{parse_duration, parse_listen};

/// agentwire: serve and talk to A2A agents.
#[derive(Debug, Parser)]
#[command(name = "agentwire", version, about)]
pub(crate) struct Opt {
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The command line, parsed; a usage error exits (with 2).
pub(crate) fn parse() -> Opt {
    let matches = command().get_matches();
    Opt::from_arg_matches(&matches).unwrap_or_else(|error| error.exit())
}

/// The command line as clap's derive makes it, with three changes to its help: `-h` leaves the
/// Limits to `--help`, an environment variable that is not set is named `[env: NAME]` (clap
/// writes `[env: NAME=]` unless told to hide values, as if it were set to nothing), and the
/// gateway's help leaves out the options of the built-in agent, which it does not serve.
pub(crate) fn command() -> clap::Command {
    fn adjust(command: clap::Command) -> clap::Command {
        command
            .mut_args(|arg| {
                let unset = arg.get_env().is_some_and(|name| std::env::var_os(name).is_none());
                let hide_env_values = unset || arg.is_hide_env_values_set();
                let hide_short_help = arg.get_help_heading() == Some(LIMITS) || arg.is_hide_short_help_set();
                arg.hide_env_values(hide_env_values).hide_short_help(hide_short_help)
            })
            .mut_subcommands(adjust)
    }
    let built_in_agent = |arg: &clap::Arg| {
        matches!(arg.get_id().as_str(), "agent" | "card" | "reduced" | "protocol_draft")
            || arg.get_help_heading() == Some(MODEL_AGENT)
    };
    adjust(Opt::command()).mut_subcommand("gateway", |gateway| {
        gateway.mut_args(|arg| if built_in_agent(&arg) { arg.hide(true) } else { arg })
    })
}

/// What `serve -h` says of the options it leaves out.
const MORE_SERVE_OPTIONS: &str = "More options (JWTs, client certificates, timeouts, limits, retention, MCP sessions, \
the model's limits, budgets): --help";

/// What `gateway -h` says of the options it leaves out.
const MORE_GATEWAY_OPTIONS: &str = "More options (how agents are called, the registry, JWTs, client certificates, \
timeouts, limits, budgets, retention, MCP sessions): --help";

/// What `serve --help` and `gateway --help` end with.
const UNITS: &str = "Sizes take a KiB, MiB or GiB suffix; durations ms, s, m, h or d.";

/// The heading of the options that bound what a client can make the server do.
const LIMITS: &str = "Limits";

/// The heading of the model agent's options.
const MODEL_AGENT: &str = "Model agent (--agent openai)";

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Serve an agent over JSON-RPC, HTTP+JSON and gRPC.
    #[command(after_help = MORE_SERVE_OPTIONS, after_long_help = UNITS)]
    Serve(Box<ServeOpt>),
    /// Serve other agents in every protocol generation over every binding.
    ///
    /// One agent at the root, others at /agents/NAME (listed at /agents), whatever generation and
    /// binding each speaks. The options of `serve` that concern the server apply; those of the
    /// built-in agent (--agent, --card, --reduced, --protocol-draft) do not. With --store, the
    /// gateway keeps every task it relays there, and serves task lists, resumable streams and
    /// push notifications itself. Agents may also be registered while it runs (`agentwire
    /// registry add`), kept in --store, checked on schedule and searched at /agents.
    #[command(after_help = MORE_GATEWAY_OPTIONS, after_long_help = UNITS)]
    Gateway(Box<GatewayOpt>),
    /// Serve A2A agents as MCP tools over stdio, for assistants and IDEs that start a command.
    ///
    /// Each URL is an agent, or a gateway whose agents (listed at its /agents) are all offered.
    /// The tools are each agent's skills, and list_agents, send_message, get_task and
    /// cancel_task. Logs go to standard error; standard output carries MCP alone.
    Mcp(crate::mcp::McpOpt),
    /// Make a private key for --signing-key.
    ///
    /// PKCS#8 PEM, written to FILE (readable by its owner alone); prints its key id and public
    /// JWK.
    Keygen(KeygenOpt),
    /// Mint a JWT signed by a key of `agentwire keygen`.
    ///
    /// For trying out `--auth jwt:` with `--jwks` (a file holding the key's public JWK) without
    /// an identity provider.
    Jwt(JwtOpt),
    /// The client commands: card, send, get, list, cancel, subscribe, push.
    #[command(flatten)]
    Call(crate::call::CallCommand),
}

#[derive(Debug, clap::Args)]
pub(crate) struct KeygenOpt {
    /// Where to write the key; an existing file is not overwritten.
    pub(crate) file: PathBuf,
    /// The signature algorithm: ES256 (P-256) or EdDSA (Ed25519).
    #[arg(long, default_value = "ES256")]
    pub(crate) alg: String,
}

#[derive(Debug, clap::Args)]
pub(crate) struct JwtOpt {
    /// The private key to sign with (PKCS#8 PEM).
    #[arg(long, value_name = "FILE")]
    pub(crate) key: PathBuf,
    /// The `iss` claim.
    #[arg(long)]
    pub(crate) issuer: String,
    /// The `aud` claim; repeated, a list of audiences.
    #[arg(long, required = true)]
    pub(crate) audience: Vec<String>,
    /// The `sub` claim.
    #[arg(long)]
    pub(crate) subject: String,
    /// The `scope` claim (space-separated scopes).
    #[arg(long)]
    pub(crate) scope: Option<String>,
    /// A party acting for the subject, in the `act` claim (RFC 8693): the first is the current
    /// actor, each next one the actor before it (repeatable).
    #[arg(long = "actor", value_name = "SUB")]
    pub(crate) actors: Vec<String>,
    /// Seconds until it expires.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    pub(crate) ttl: i64,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object a line.
    Json,
}

/// How the card writes where gRPC is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum GrpcCardForm {
    /// `http://HOST:PORT` (or `https://`): a URL, as every other interface.
    Url,
    /// `HOST:PORT`: a gRPC channel target.
    Target,
}

/// Which built-in agent to serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum AgentKind {
    /// Replies with the text it received, as a completed task with an artifact.
    Echo,
    /// The behaviours the A2A conformance suites expect.
    Conformance,
    /// A chat model behind an OpenAI-compatible API (--base-url, --model), with MCP tools.
    #[value(name = "openai")]
    OpenAi,
}

/// A draft of the protocol `serve` can speak besides the released versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ProtocolDraft {
    /// The dev-1.1 draft.
    #[value(name = "1.1")]
    V1_1,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ServeOpt {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080", env = "AGENTWIRE_HTTP")]
    pub(crate) http: SocketAddr,

    /// Also serve gRPC (and every other binding) on this address.
    ///
    /// The card then advertises it as the gRPC endpoint. The --http address serves gRPC either way.
    #[arg(long, value_name = "ADDR", env = "AGENTWIRE_GRPC")]
    pub(crate) grpc: Option<SocketAddr>,

    /// How the card writes its gRPC interfaces' `url`: `url` (`http://HOST:PORT`, the
    /// specification's form, which Google ADK requires of every interface) or `target` (a bare
    /// `HOST:PORT`, for clients that hand the URL to a gRPC channel unchanged, as the v1.0 TCK does).
    #[arg(long, value_enum, value_name = "FORM", default_value_t = GrpcCardForm::Url, hide_short_help = true)]
    pub(crate) card_grpc_form: GrpcCardForm,

    /// The agent to serve.
    #[arg(long, value_enum, default_value_t = AgentKind::Echo)]
    pub(crate) agent: AgentKind,

    /// Where tasks are kept: `sqlite:PATH`, `postgres://…` or `memory`.
    ///
    /// `sqlite:PATH` is a file, created if missing, for one process; `postgres://…` is shared by
    /// every process serving the agent; `memory` is lost on exit.
    /// `serve` keeps them in sqlite:agentwire.db by default; a gateway given a store mirrors the
    /// tasks of its agents there, and keeps none without one.
    #[arg(long, value_name = "URL", env = "AGENTWIRE_STORE")]
    pub(crate) store: Option<String>,

    /// With PostgreSQL: seconds after which the other processes consider this one dead if it
    /// stops renewing its lease, and fail the tasks it was running.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, hide_short_help = true)]
    pub(crate) lease: f64,

    /// Offer no streaming, push notifications or extended card.
    #[arg(long, hide_short_help = true)]
    pub(crate) reduced: bool,

    /// Also serve a draft of the protocol's next version to callers that ask for it with
    /// `A2A-Version`, and list its interfaces on the card: `1.1` (the dev-1.1 draft's task
    /// generation, long-polled GetTask and ifGenerationMatch; docs/COMPATIBILITY.md).
    #[arg(long, value_name = "VERSION", value_enum, hide_short_help = true)]
    pub(crate) protocol_draft: Option<ProtocolDraft>,

    /// Require clients to declare this extension (repeatable).
    #[arg(long = "require-extension", value_name = "URI", hide_short_help = true)]
    pub(crate) required_extensions: Vec<String>,

    /// Require credentials: `bearer:…`, `apikey:…` or `jwt:ISSUER_URL` (repeatable).
    ///
    /// `bearer:[NAME=]TOKEN,...`, `apikey:HEADER:[NAME=]KEY`, or `jwt:ISSUER_URL`, JWTs of an
    /// OpenID provider (needs --audience; see also --jwks and --scope). Any of them will do.
    #[arg(long, value_name = "SPEC")]
    pub(crate) auth: Vec<String>,

    /// The audience (`aud`) JWTs must be issued for, with --auth jwt:ISSUER_URL.
    #[arg(long, value_name = "AUDIENCE", hide_short_help = true)]
    pub(crate) audience: Option<String>,

    /// With --auth jwt: the issuer's keys from this JWK Set file or URL, instead of OpenID
    /// discovery at the issuer.
    #[arg(long, value_name = "FILE|URL", hide_short_help = true)]
    pub(crate) jwks: Option<String>,

    /// A scope JWTs need for some operations: `read=a2a:read` (get, list, subscribe, MCP
    /// sessions, the gateway's directory), `write=a2a:write` (send, cancel, push configs), or
    /// by name: `SendMessage,CancelTask=SCOPE`, `OpenMcpSession`,
    /// `UseMcp`, `ListAgents`, `RegisterAgent`, `UnregisterAgent` (repeatable).
    #[arg(long = "scope", value_name = "ACCESSES=SCOPE", hide_short_help = true)]
    pub(crate) scopes: Vec<String>,

    #[command(flatten)]
    pub(crate) token_exchange: TokenExchangeOpt,

    /// Ask clients for a TLS certificate issued by a CA of this PEM bundle; a verified
    /// certificate names its caller (its first subject alternative name, else its common name).
    /// Refused at the handshake: an untrusted certificate, and no certificate unless
    /// --tls-client-optional.
    #[arg(long, value_name = "FILE", requires = "tls_cert", hide_short_help = true)]
    pub(crate) tls_client_ca: Option<PathBuf>,

    /// With --tls-client-ca: also serve clients without a certificate (they need other --auth
    /// credentials).
    #[arg(long, requires = "tls_client_ca", hide_short_help = true)]
    pub(crate) tls_client_optional: bool,

    /// Sign the agent card with this PKCS#8 PEM private key.
    ///
    /// P-256 for ES256, Ed25519 for EdDSA; `agentwire keygen` makes one. Its public key is
    /// published at /.well-known/jwks.json.
    #[arg(long, value_name = "FILE", alias = "sign-card")]
    pub(crate) signing_key: Option<PathBuf>,

    /// The secret (16 characters or more) that the principals of credentials without a NAME= are
    /// derived from. Give every instance on one PostgreSQL store the same key (required there
    /// with such credentials), or one server a key that outlives restarts. Prefer the
    /// environment variable: a command line is visible to other users.
    #[arg(long, value_name = "KEY", env = "AGENTWIRE_PRINCIPAL_KEY", hide_env_values = true, hide_short_help = true)]
    pub(crate) principal_key: Option<String>,

    /// Allow webhooks on loopback, private and link-local addresses.
    #[arg(long, hide_short_help = true)]
    pub(crate) allow_private_webhooks: bool,

    /// Store push configs but call no webhook (each event that would have been delivered is
    /// logged): for conformance suites whose webhook URLs are placeholders.
    #[arg(long, hide_short_help = true)]
    pub(crate) no_webhook_delivery: bool,

    /// Agent card (JSON) with the name, description, skills and so on to publish.
    #[arg(long, value_name = "FILE")]
    pub(crate) card: Option<PathBuf>,

    /// The URL the card advertises (default: http://LISTEN-ADDRESS).
    ///
    /// The URL clients reach this server at: that of a proxy or load balancer in front of it.
    #[arg(long, value_name = "URL")]
    pub(crate) public_url: Option<String>,

    /// Without authentication, also answer requests naming this host (repeatable).
    ///
    /// `*` for any. Such a server answers its addresses, localhost and --public-url's host only,
    /// and refuses other names (421), so that a web page whose name is pointed at it (DNS
    /// rebinding) cannot use it.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub(crate) allow_hosts: Vec<String>,

    /// Serve over TLS with this PEM certificate chain (needs --tls-key).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub(crate) tls_cert: Option<PathBuf>,

    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub(crate) tls_key: Option<PathBuf>,

    /// Most connections open at once; further clients wait until one closes.
    #[arg(long, value_name = "N", default_value_t = 16_384, hide_short_help = true)]
    pub(crate) max_connections: usize,

    /// Seconds a client may take to send a request's headers before its connection is closed
    /// (an HTTP/2 connection: to start a request while none is in flight).
    #[arg(long, value_name = "SECONDS", default_value_t = 30, hide_short_help = true)]
    pub(crate) header_read_timeout: u64,

    /// Seconds a write may wait for the client to take data before its connection is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, hide_short_help = true)]
    pub(crate) write_timeout: u64,

    /// A browser origin allowed to call the agent (repeatable; `*` for any).
    ///
    /// Default: any origin with --auth or --tls-client-ca, none without (a page the local user
    /// opens could otherwise use an agent that authenticates nobody).
    #[arg(long = "cors-origin", value_name = "ORIGIN")]
    pub(crate) cors_origins: Vec<String>,
    /// Serve the v1.0 agent card alone to every client. By default the card also carries v0.3's
    /// members, so that v0.3 clients find the agent; a request with `A2A-Version: 1.0` always
    /// gets the v1.0 card.
    #[arg(long, hide_short_help = true)]
    pub(crate) strict_card: bool,

    /// Serve a web console at /console.
    ///
    /// The card, the tasks with their timelines and artifacts, and a form that sends a message
    /// and shows its stream. Each caller sees what its credentials show over the API; without
    /// --auth, only callers on loopback addresses are served (see --console-open).
    #[arg(long, env = "AGENTWIRE_CONSOLE")]
    pub(crate) console: bool,

    /// Serve the agent's skills as MCP tools at /mcp, for assistants and IDEs.
    ///
    /// Over MCP's streamable HTTP transport. Callers authenticate as A2A callers do (--auth); a
    /// refusal points to the protected-resource metadata at
    /// /.well-known/oauth-protected-resource/mcp. A gateway offers each caller the agents it may
    /// see.
    #[arg(long)]
    pub(crate) mcp: bool,

    /// Most MCP sessions (--mcp) open at once, over all callers; past it, `initialize` is
    /// refused with 429.
    #[arg(long, value_name = "N", default_value_t = 1_000, value_parser = clap::value_parser!(u32).range(1..), hide_short_help = true)]
    pub(crate) mcp_max_sessions: u32,

    /// Most MCP sessions one caller (a principal; without --auth, an address) has open at once;
    /// past it, its `initialize` is refused with 429.
    #[arg(long, value_name = "N", default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..), hide_short_help = true)]
    pub(crate) mcp_max_sessions_per_caller: u32,

    /// How long an MCP session with no request in flight lives after its last one. A client
    /// whose session ended is answered 404, and opens another.
    #[arg(long, value_name = "DURATION", default_value = "2m", value_parser = parse_duration, hide_short_help = true)]
    pub(crate) mcp_session_idle: Duration,

    /// How long an MCP tool call waits for the user's answer to a question the agent asked
    /// (elicitation). Past it the call ends with an error result, and the task waits for input.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration, hide_short_help = true)]
    pub(crate) mcp_elicitation_timeout: Duration,

    /// Serve the console to every address even when no authentication is configured.
    #[arg(long, requires = "console", hide_short_help = true)]
    pub(crate) console_open: bool,

    /// How to write log lines (RUST_LOG filters them).
    ///
    /// `text`, without colors when stdout is not a terminal, or `json`, one object a line, for
    /// log collectors.
    #[arg(long, value_enum, default_value_t = LogFormat::Text, env = "AGENTWIRE_LOG_FORMAT")]
    pub(crate) log_format: LogFormat,

    /// The same as --log-format json.
    #[arg(long, hide = true)]
    pub(crate) log_json: bool,

    /// Export spans over OTLP/gRPC to this collector (default: OTEL_EXPORTER_OTLP_ENDPOINT).
    ///
    /// A span per operation, and of what it leads to, to a collector such as
    /// http://127.0.0.1:4317. Without either, nothing is exported.
    #[arg(long, value_name = "URL")]
    pub(crate) otlp_endpoint: Option<String>,

    /// Serve Prometheus metrics at GET /metrics: on the --http address, or on ADDR alone.
    ///
    /// A port alone is that port on the --http host.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, value_parser = parse_listen)]
    pub(crate) metrics: Option<Option<Listen>>,

    /// Most tenants with a series of their own in a2a_tenant_tasks_in_progress; the others
    /// share tenant="(other)".
    #[arg(long, value_name = "N", default_value_t = 100, hide_short_help = true)]
    pub(crate) metrics_tenants: usize,

    /// Most combinations of caller, agent and model with series of their own in the usage
    /// counters (agentwire_usage_*); the others share "(other)".
    #[arg(long, value_name = "N", default_value_t = agentwire_server::metrics::DEFAULT_USAGE_SERIES, hide_short_help = true)]
    pub(crate) metrics_usage_series: usize,

    /// What callers may spend on models in a window: `tokens=N,tool-rounds=N,window=1d` for each
    /// principal, `principal=NAME,...` for one, `tenant=NAME,...` for all of a tenant together
    /// (their token's `tenant` claim). The model agent checks them before it calls the model, a
    /// gateway before it relays a send, and both charge what the usage extension reports; a
    /// caller whose budget is spent is refused until its window ends. Shared across instances on
    /// PostgreSQL. Repeatable.
    #[arg(long = "budget", value_name = "SPEC", value_parser = budget::parse_budget, hide_short_help = true)]
    pub(crate) budgets: Vec<budget::BudgetSpec>,

    /// A principal who may see every budget and reset them (`agentwire budgets`); without
    /// --auth, callers on this host may. Repeatable.
    #[arg(long = "budget-admin", value_name = "NAME", hide_short_help = true)]
    pub(crate) budget_admins: Vec<String>,

    #[command(flatten)]
    pub(crate) model: ModelOpt,

    // Last, so that only these options come under the "Limits" heading.
    #[command(flatten)]
    pub(crate) limits: LimitOpt,
}

impl ServeOpt {
    /// The store `--store` names, or the embedded default of `serve`.
    pub(crate) fn store_url(&self) -> &str {
        self.store.as_deref().unwrap_or("sqlite:agentwire.db")
    }

    /// Whether the store `--store` names may be served by several processes at once: then none
    /// of them may take the tasks in progress for its own leftovers (the leases tell).
    pub(crate) fn shares_store(&self) -> bool {
        let url = self.store_url();
        url.starts_with("postgres:") || url.starts_with("postgresql:")
    }
}

#[cfg(test)]
mod tests {
    use super::values::parse_size;

    #[test]
    fn the_command_line_is_consistent() {
        super::command().debug_assert();
    }

    #[test]
    fn durations_read_with_their_units() {
        use super::values::{parse_duration, parse_optional_duration};
        use std::time::Duration;
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("15m").unwrap(), Duration::from_secs(900));
        assert_eq!(parse_duration("7d").unwrap(), Duration::from_secs(7 * 86_400));
        assert!(parse_duration("2 weeks").is_err());
        assert_eq!(parse_optional_duration("off").unwrap().0, None);
        assert_eq!(parse_optional_duration("2h").unwrap().0, Some(Duration::from_secs(7_200)));
    }

    #[test]
    fn a_listen_address_may_be_a_port_alone() {
        use super::{parse_listen, Listen};
        let http: std::net::SocketAddr = "10.0.0.5:8080".parse().unwrap();
        assert_eq!(parse_listen("9464").unwrap().beside(http), "10.0.0.5:9464".parse().unwrap());
        assert_eq!(parse_listen("0.0.0.0:9464").unwrap(), Listen::Address("0.0.0.0:9464".parse().unwrap()));
        assert!(parse_listen("nine").is_err());
    }

    #[test]
    fn sizes_read_with_binary_units() {
        assert_eq!(parse_size("65536"), Ok(65_536));
        assert_eq!(parse_size("4MiB"), Ok(4 << 20));
        assert_eq!(parse_size("16 k"), Ok(16 << 10));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert!(parse_size("4 parsecs").is_err());
        assert!(parse_size("MiB").is_err());
    }
}
