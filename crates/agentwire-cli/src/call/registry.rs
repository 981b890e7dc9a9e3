//! `agentwire registry`: the agents a gateway's registry holds, searched, registered and
//! removed over its REST API (`GET`/`POST /agents`, `DELETE /agents/NAME`).

use serde_json::{json, Value};

use super::{exit, Failure};

/// The registry commands.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum RegistryCommand {
    /// Register an agent with a gateway (needs the gateway's registry admin rights).
    Add(AddOpt),
    /// Remove an agent from a gateway's registry.
    Remove(RemoveOpt),
    /// List the agents of a gateway you may see.
    List(SearchOpt),
    /// Search a gateway's agents by text and filters, best match first.
    Search(SearchOpt),
}

/// How the registry commands reach the gateway.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct GatewayArgs {
    /// The gateway's base URL.
    #[arg(value_name = "GATEWAY")]
    pub(crate) gateway: String,

    /// Send `Authorization: Bearer TOKEN` to the gateway.
    #[arg(long, value_name = "TOKEN", env = "AGENTWIRE_TOKEN", hide_env_values = true)]
    pub(crate) token: Option<String>,

    /// Print the gateway's JSON answer.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct AddOpt {
    #[command(flatten)]
    gateway: GatewayArgs,

    /// The agent's base URL or its card's URL.
    #[arg(value_name = "AGENT_URL")]
    url: String,

    /// The name it is served under, at GATEWAY/agents/NAME (default: from its card's name).
    #[arg(long)]
    name: Option<String>,

    /// The bearer token the gateway calls the agent with (default: the gateway's upstream token).
    #[arg(long, value_name = "TOKEN", env = "AGENTWIRE_AGENT_TOKEN", hide_env_values = true)]
    agent_token: Option<String>,

    /// Call the agent as each caller instead: `passthrough` (the caller's own token, when its
    /// audience names AGENT_URL) or `exchange` (a token exchanged for the caller's, meant for
    /// AGENT_URL). Excludes --agent-token.
    #[arg(long, value_name = "MODE", value_parser = ["passthrough", "exchange"], conflicts_with = "agent_token")]
    caller_auth: Option<String>,

    /// Only this principal may see and call it (repeatable; with no --visible-to-*, everyone may).
    #[arg(long = "visible-to-principal", value_name = "NAME")]
    principals: Vec<String>,

    /// Only callers of this tenant (their token's `tenant` claim) may see and call it (repeatable).
    #[arg(long = "visible-to-tenant", value_name = "TENANT")]
    tenants: Vec<String>,

    /// Only callers holding this scope may see and call it (repeatable).
    #[arg(long = "visible-to-scope", value_name = "SCOPE")]
    scopes: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RemoveOpt {
    #[command(flatten)]
    gateway: GatewayArgs,

    /// The agent's name at the gateway.
    #[arg(value_name = "NAME")]
    name: String,
}

#[derive(Debug, clap::Args)]
pub(crate) struct SearchOpt {
    #[command(flatten)]
    gateway: GatewayArgs,

    /// Words to look for in the agents' names, descriptions and skills.
    #[arg(value_name = "TEXT")]
    text: Vec<String>,

    /// Only agents with this skill id.
    #[arg(long)]
    skill: Option<String>,
    /// Only agents with a skill of this tag.
    #[arg(long)]
    tag: Option<String>,
    /// Only agents that take this media type.
    #[arg(long, value_name = "MEDIA_TYPE")]
    input_mode: Option<String>,
    /// Only agents that answer in this media type.
    #[arg(long, value_name = "MEDIA_TYPE")]
    output_mode: Option<String>,
    /// Only agents reached over this binding (JSONRPC, HTTP+JSON, GRPC).
    #[arg(long)]
    binding: Option<String>,
    /// Only agents that speak this protocol version (1.0, 0.3).
    #[arg(long)]
    version: Option<String>,
    /// Only agents whose card's signature verifies (true) or not (false).
    #[arg(long, value_name = "BOOL")]
    signed: Option<bool>,
    /// Only agents that answered their last checks (true) or not (false).
    #[arg(long, value_name = "BOOL")]
    healthy: Option<bool>,
    /// At most this many agents.
    #[arg(long, value_name = "N")]
    page_size: Option<usize>,
    /// The page after the one that gave this token.
    #[arg(long, value_name = "TOKEN")]
    page_token: Option<String>,
}

/// Runs a registry command; the exit status says how it went.
pub(crate) async fn run(command: RegistryCommand) -> Result<u8, Failure> {
    match command {
        RegistryCommand::Add(opt) => add(opt).await,
        RegistryCommand::Remove(opt) => remove(opt).await,
        RegistryCommand::List(opt) | RegistryCommand::Search(opt) => search(opt).await,
    }
}

fn base(args: &GatewayArgs) -> String {
    args.gateway.trim_end_matches('/').to_owned()
}

fn request(args: &GatewayArgs, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
    let request = reqwest::Client::new().request(method, url).timeout(std::time::Duration::from_secs(30));
    match &args.token {
        Some(token) => request.bearer_auth(token),
        None => request,
    }
}

/// The gateway's answer as JSON, or the failure it reports.
async fn answer(request: reqwest::RequestBuilder, gateway: &str) -> Result<Value, Failure> {
    answer_of("gateway", request, gateway).await
}

/// The answer of the `party` (a gateway, a server) at `url` as JSON (null when it has no body),
/// or the failure it reports.
pub(super) async fn answer_of(party: &str, request: reqwest::RequestBuilder, url: &str) -> Result<Value, Failure> {
    let response = request.send().await.map_err(|error| Failure {
        message: format!("cannot reach the {party} at {url}: {}", agentwire_client::error_chain(&error)),
        code: exit::CONNECTION_ERROR,
    })?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    if status.is_success() {
        return Ok(body);
    }
    let message = body.pointer("/error/message").and_then(Value::as_str).unwrap_or(text.as_str());
    Err(Failure { message: format!("the {party} answered {status}: {message}"), code: exit::PROTOCOL_ERROR })
}

async fn add(opt: AddOpt) -> Result<u8, Failure> {
    let args = &opt.gateway;
    let mut body = json!({ "url": opt.url });
    if let Some(name) = &opt.name {
        body["name"] = json!(name);
    }
    if let Some(token) = &opt.agent_token {
        body["token"] = json!(token);
    }
    if let Some(mode) = &opt.caller_auth {
        body["callerAuth"] = json!(mode);
    }
    if !(opt.principals.is_empty() && opt.tenants.is_empty() && opt.scopes.is_empty()) {
        body["visibility"] = json!({ "principals": opt.principals, "tenants": opt.tenants, "scopes": opt.scopes });
    }
    let url = format!("{}/agents", base(args));
    let entry = answer(request(args, reqwest::Method::POST, &url).json(&body), &args.gateway).await?;
    if args.json {
        println!("{entry}");
    } else {
        println!("registered {}", line(&entry));
    }
    Ok(exit::OK)
}

async fn remove(opt: RemoveOpt) -> Result<u8, Failure> {
    let args = &opt.gateway;
    let url = format!("{}/agents/{}", base(args), opt.name);
    answer(request(args, reqwest::Method::DELETE, &url), &args.gateway).await?;
    if !args.json {
        println!("removed {}", opt.name);
    }
    Ok(exit::OK)
}

async fn search(opt: SearchOpt) -> Result<u8, Failure> {
    let args = &opt.gateway;
    let mut query: Vec<(&str, String)> = Vec::new();
    if !opt.text.is_empty() {
        query.push(("q", opt.text.join(" ")));
    }
    let filters = [
        ("skill", opt.skill.clone()),
        ("tag", opt.tag.clone()),
        ("inputMode", opt.input_mode.clone()),
        ("outputMode", opt.output_mode.clone()),
        ("binding", opt.binding.clone()),
        ("version", opt.version.clone()),
        ("signed", opt.signed.map(|b| b.to_string())),
        ("healthy", opt.healthy.map(|b| b.to_string())),
        ("pageSize", opt.page_size.map(|n| n.to_string())),
        ("pageToken", opt.page_token.clone()),
    ];
    query.extend(filters.into_iter().filter_map(|(name, value)| value.map(|value| (name, value))));
    let url = format!("{}/agents", base(args));
    let found = answer(request(args, reqwest::Method::GET, &url).query(&query), &args.gateway).await?;
    if args.json {
        println!("{found}");
        return Ok(exit::OK);
    }
    let agents = found.get("agents").and_then(Value::as_array).cloned().unwrap_or_default();
    if agents.is_empty() {
        println!("no agents found");
    }
    for agent in &agents {
        println!("{}", line(agent));
    }
    if let Some(token) = found.get("nextPageToken").and_then(Value::as_str) {
        println!("more: --page-token {token}");
    }
    Ok(exit::OK)
}

/// One agent on one line: its name, health, signature, card name and description, and URL.
fn line(agent: &Value) -> String {
    let text = |pointer: &str| agent.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_owned();
    let health = match agent.get("healthy").and_then(Value::as_bool) {
        Some(true) => "healthy",
        Some(false) => "unhealthy",
        None => "",
    };
    let about = match agent.get("card") {
        Some(_) => format!("{}: {}", text("/card/name"), text("/card/description")),
        None => format!("unreachable: {}", text("/unreachable")),
    };
    let url = text("/url");
    format!("{}  {health}  {}  {about}  {url}", text("/name"), text("/signature"))
}
