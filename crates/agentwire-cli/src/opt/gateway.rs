//! The options of `agentwire gateway`: the agents behind it, how it calls them, its registry.

use std::path::PathBuf;

use super::ServeOpt;

#[derive(Debug, clap::Args)]
pub(crate) struct GatewayOpt {
    #[command(flatten)]
    pub(crate) upstreams: UpstreamOpt,

    // Under no heading of its own, as in `serve`: not under the registry's, which came last.
    #[command(flatten, next_help_heading = None::<&str>)]
    pub(crate) serve: ServeOpt,
}

/// The agents behind a gateway, and how it calls them.
#[derive(Debug, clap::Args)]
pub(crate) struct UpstreamOpt {
    /// An agent to serve: `URL` at the root, or `NAME=URL` at /agents/NAME (repeatable).
    ///
    /// URL is the agent's base URL or its card's.
    #[arg(long = "upstream", value_name = "[NAME=]URL", value_parser = parse_upstream)]
    pub(crate) upstreams: Vec<Upstream>,

    /// The bearer token the gateway calls the --upstream agents with.
    ///
    /// Never a registered agent, which is called with the token of its registration, or none.
    /// Prefer the environment variable: a command line is visible to other users.
    #[arg(long, value_name = "TOKEN", env = "AGENTWIRE_UPSTREAM_TOKEN", hide_env_values = true)]
    pub(crate) upstream_token: Option<String>,

    /// How the gateway proves who is calling to the --upstream agents: `token` (--upstream-token;
    /// the default when it is given), `none` (the default otherwise), `passthrough` or `exchange`.
    ///
    /// `passthrough` sends each caller's own bearer token, only when its audience names the
    /// agent (--upstream-audience). `exchange` sends a token exchanged for the caller's at the
    /// token endpoint (RFC 8693; --token-exchange-url), meant for the agent. Either way the agent sees each caller
    /// as the principal it is. Both need --auth jwt:.
    #[arg(long, value_enum, value_name = "MODE")]
    pub(crate) upstream_auth: Option<UpstreamAuth>,

    /// What names an --upstream agent in the audience of the tokens passed on to it
    /// (`passthrough`) or asked for it (`exchange`): `AUD` for the agent at the root, `NAME=AUD`
    /// for the one at /agents/NAME (repeatable). Default: the agent's --upstream URL.
    #[arg(long = "upstream-audience", value_name = "[NAME=]AUD", value_parser = parse_audience)]
    pub(crate) upstream_audiences: Vec<(Option<String>, String)>,

    /// Call the agents over this binding only (default: the first each card lists that the
    /// gateway speaks).
    #[arg(long, value_enum, value_name = "TRANSPORT", hide_short_help = true)]
    pub(crate) upstream_transport: Option<crate::call::TransportArg>,

    /// Call the agents in this protocol version only (default: the card's order, moving from
    /// v1.0 to v0.3 when an agent answers VersionNotSupported).
    #[arg(long, value_enum, value_name = "VERSION", hide_short_help = true)]
    pub(crate) upstream_protocol: Option<crate::call::ProtocolArg>,

    /// Also call an agent's interfaces on HOST, and send them the upstream token (repeatable).
    /// By default the gateway calls only interfaces on the host of the agent's --upstream URL,
    /// whatever its card names.
    #[arg(long = "upstream-allow-host", value_name = "HOST", hide_short_help = true)]
    pub(crate) upstream_allow_hosts: Vec<String>,

    /// Seconds an agent may take to answer a call that is not a stream (a blocking send through
    /// a gateway without --store included; with --store, sends are followed by polling).
    #[arg(long, value_name = "SECONDS", default_value_t = 60, hide_short_help = true)]
    pub(crate) upstream_timeout: u64,

    /// Refuse to relay a request that went through more than N gateways already (its
    /// A2A-Gateway-Hops header, which each call the gateway relays carries one higher), so that
    /// an agent calling back into a gateway ends in an error instead of a loop.
    #[arg(long, value_name = "N", default_value_t = agentwire_gateway::DEFAULT_MAX_HOPS, hide_short_help = true)]
    pub(crate) max_gateway_hops: u32,

    #[command(flatten)]
    pub(crate) registry: RegistryOpt,
}

/// The gateway's registry: agents registered while it runs (`POST /agents`, `agentwire registry
/// add`), kept in --store, and searched at `GET /agents`.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Registry")]
pub(crate) struct RegistryOpt {
    /// A principal that may register and remove agents (repeatable).
    ///
    /// Besides holders of --registry-admin-scope. A gateway without --auth takes changes from
    /// its own host only.
    #[arg(long = "registry-admin", value_name = "PRINCIPAL")]
    pub(crate) registry_admins: Vec<String>,

    /// The scope that lets its holder register and remove agents.
    #[arg(long, value_name = "SCOPE", default_value = "registry:admin", hide_short_help = true)]
    pub(crate) registry_admin_scope: String,

    /// Seconds between two checks of each registered agent's card (revalidated with its ETag).
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..), hide_short_help = true)]
    pub(crate) registry_refresh: u64,

    /// Failed checks in a row after which an agent is marked unhealthy.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..), hide_short_help = true)]
    pub(crate) registry_unhealthy_after: u32,

    /// Check the registered agents' card signatures with the keys of this JWK Set file
    /// (without it, a signed card is shown as `unchecked`).
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub(crate) registry_keys: Option<PathBuf>,
}

/// An agent behind the gateway, and where it is mounted.
#[derive(Debug, Clone)]
pub(crate) struct Upstream {
    /// `None`: at the root.
    pub(crate) name: Option<String>,
    pub(crate) url: String,
}

/// `NAME=URL`, or a URL alone (which may hold `=` in its query, after its `://`).
fn parse_upstream(text: &str) -> Result<Upstream, String> {
    let (name, url) = named(text)?;
    if !url.starts_with("http://") && !url.starts_with("https://") {
        return Err(format!("{url:?} is not an http:// or https:// URL"));
    }
    Ok(Upstream { name, url: url.to_owned() })
}

fn parse_audience(text: &str) -> Result<(Option<String>, String), String> {
    let (name, audience) = named(text)?;
    if audience.is_empty() {
        return Err("an audience is not empty".to_owned());
    }
    Ok((name, audience.to_owned()))
}

/// `NAME=VALUE` or `VALUE` (a URL's own `=` does not make a name), checking the agent name.
fn named(text: &str) -> Result<(Option<String>, &str), String> {
    let (name, value) = match text.split_once('=') {
        Some((name, value)) if !name.contains("://") => (Some(name), value),
        _ => (None, text),
    };
    if let Some(name) = name {
        let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !valid {
            return Err(format!("{name:?} cannot name an agent: use letters, digits, - and _"));
        }
    }
    Ok((name.map(str::to_owned), value))
}

/// How a gateway proves who is calling to its --upstream agents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum UpstreamAuth {
    /// No credentials.
    None,
    /// --upstream-token.
    Token,
    /// Each caller's own bearer token, when it is meant for the agent.
    Passthrough,
    /// A token exchanged for the caller's (RFC 8693), meant for the agent.
    Exchange,
}

#[cfg(test)]
mod tests {
    use super::{parse_audience, parse_upstream};

    #[test]
    fn upstreams_read_with_or_without_a_name() {
        let named = parse_upstream("weather=http://127.0.0.1:9001").unwrap();
        assert_eq!((named.name.as_deref(), named.url.as_str()), (Some("weather"), "http://127.0.0.1:9001"));
        let root = parse_upstream("https://agent.example/a2a?key=value").unwrap();
        assert_eq!((root.name, root.url.as_str()), (None, "https://agent.example/a2a?key=value"));
        assert!(parse_upstream("bad name=http://x").is_err());
        assert!(parse_upstream("weather=ftp://x").is_err());
    }

    #[test]
    fn audiences_read_with_or_without_a_name() {
        assert_eq!(parse_audience("weather=api://weather").unwrap(), (Some("weather".into()), "api://weather".into()));
        assert_eq!(parse_audience("https://agent.example/?a=b").unwrap(), (None, "https://agent.example/?a=b".into()));
        assert_eq!(parse_audience("my-agent").unwrap(), (None, "my-agent".into()));
        assert!(parse_audience("weather=").is_err());
        assert!(parse_audience("bad name=x").is_err());
    }
}
