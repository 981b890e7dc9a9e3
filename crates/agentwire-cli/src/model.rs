//! `serve --agent openai`: the model agent, from its options.

use agentwire_client::CallerAuth;
use agentwire_mcp::McpTools;
use agentwire_openai::{OpenAiAgent, Toolbox};
use agentwire_types::AgentCard;
use anyhow::Context as _;

use crate::opt::{McpAuth, ModelOpt, ServeOpt};

/// The agent the options describe, with the tools of its MCP servers listed (those it reaches as
/// its callers are listed per caller).
pub(crate) async fn agent(serve: &ServeOpt) -> anyhow::Result<OpenAiAgent> {
    let opt = &serve.model;
    let base_url = opt
        .base_url
        .as_deref()
        .context("--agent openai needs --base-url (the API's root, such as http://127.0.0.1:11434/v1)")?;
    let model = opt.model.as_deref().context("--agent openai needs --model")?;
    let as_callers = tools_as_callers(serve).await?;
    let (mut servers, mut reached_as_callers) = (Vec::new(), Vec::new());
    for target in &opt.mcp_servers {
        match &as_callers {
            Some(auth) if is_url(target) => reached_as_callers.push((target.clone(), auth(target))),
            _ => servers.push(McpTools::open(target, None).await.with_context(|| format!("--mcp-server {target:?}"))?),
        }
    }
    let toolbox = Toolbox::of(servers).await.context("cannot list the tools of the MCP servers")?;
    for tool in &opt.approve {
        // The tools of the servers reached as callers are listed per caller: a name is checked
        // here against the others only when there are no such servers.
        anyhow::ensure!(
            toolbox.offers(tool) || !reached_as_callers.is_empty(),
            "--approve {tool:?}: no MCP server offers such a tool (they offer {:?})",
            toolbox.names()
        );
    }
    let mut builder = OpenAiAgent::builder(base_url, model)
        .tools(toolbox)
        .max_history_bytes(opt.history_size)
        .max_tool_rounds(opt.max_tool_rounds)
        .max_answer_bytes(opt.max_answer_size)
        .request_timeout(opt.model_timeout)
        .idle_timeout(opt.model_idle_timeout);
    let key = api_key(opt)?;
    if let Some(key) = &key {
        builder = builder.api_key(key.clone());
    }
    if let Some(prompt) = system_prompt(opt)? {
        builder = builder.system_prompt(prompt);
    }
    for tool in &opt.approve {
        builder = builder.approve(tool);
    }
    let as_callers_urls: Vec<&String> = reached_as_callers.iter().map(|(url, _)| url).collect();
    tracing::info!(%base_url, %model, tools_as_callers = ?as_callers_urls, "serving a model");
    for (url, auth) in reached_as_callers {
        builder = builder.tools_as_caller(url, auth);
    }
    let agent = builder.build();
    tracing::info!(tools = ?agent.tool_names(), approve = ?opt.approve, "the model's tools");
    tokio::spawn(check_model_server(base_url.to_owned(), model.to_owned(), key));
    Ok(agent)
}

fn is_url(target: &str) -> bool {
    target.starts_with("http://") || target.starts_with("https://")
}

/// How the MCP servers at URLs are reached as each task's caller (`--mcp-auth passthrough` or
/// `exchange`), by URL; `None` when they are reached with the agent's own sessions.
async fn tools_as_callers(serve: &ServeOpt) -> anyhow::Result<Option<impl Fn(&str) -> CallerAuth>> {
    let opt = &serve.model;
    let mode = opt.mcp_auth.unwrap_or(McpAuth::None);
    let exchange = match mode {
        McpAuth::None => {
            anyhow::ensure!(opt.mcp_audiences.is_empty(), "--mcp-audience is for --mcp-auth passthrough and exchange");
            if serve.token_exchange.given() {
                anyhow::bail!("the --token-exchange-* options are for --mcp-auth exchange");
            }
            return Ok(None);
        }
        McpAuth::Passthrough => None,
        McpAuth::Exchange => Some(crate::identity::token_exchange(serve, "--mcp-auth exchange").await?),
    };
    anyhow::ensure!(
        crate::identity::verifies_jwts(serve),
        "--mcp-auth {} needs --auth jwt:…: the agent reaches its tools as the callers it verified",
        if exchange.is_some() { "exchange" } else { "passthrough" }
    );
    anyhow::ensure!(
        opt.mcp_servers.iter().any(|target| is_url(target)),
        "--mcp-auth is for the MCP servers at URLs (--mcp-server http://…), and none is given"
    );
    let audiences = opt.mcp_audiences.clone();
    let servers: Vec<String> = opt.mcp_servers.iter().filter(|target| is_url(target)).cloned().collect();
    check_audiences(&servers, &audiences)?;
    Ok(Some(move |url: &str| {
        let audience = audience_of(url, &servers, &audiences);
        match &exchange {
            Some(exchange) => CallerAuth::Exchange { audience, exchange: exchange.clone() },
            None => CallerAuth::Passthrough { audience },
        }
    }))
}

/// Refuses `--mcp-audience` values that would name a server wrongly: an empty audience, a
/// `URL=AUD` whose URL is no `--mcp-server`'s, two audiences for every server.
fn check_audiences(servers: &[String], audiences: &[String]) -> anyhow::Result<()> {
    let mut for_all = 0;
    for given in audiences {
        let named = servers.iter().find_map(|server| given.strip_prefix(server.as_str())?.strip_prefix('='));
        match named {
            Some(audience) => anyhow::ensure!(!audience.is_empty(), "--mcp-audience {given:?}: the audience is empty"),
            None if is_url(given) && given.contains('=') => anyhow::bail!(
                "--mcp-audience {given:?} names no --mcp-server: URL=AUD takes the server's URL as --mcp-server gives it"
            ),
            None => {
                anyhow::ensure!(!given.is_empty(), "--mcp-audience: the audience is empty");
                for_all += 1;
            }
        }
    }
    anyhow::ensure!(for_all <= 1, "--mcp-audience: one audience for every server at most; name the others URL=AUD");
    Ok(())
}

/// The audience of the MCP server at `url`: the `--mcp-audience URL=AUD` naming it, else an
/// `--mcp-audience AUD` naming none of `servers`, else its URL.
fn audience_of(url: &str, servers: &[String], audiences: &[String]) -> String {
    let own = audiences.iter().find_map(|given| given.strip_prefix(url).and_then(|rest| rest.strip_prefix('=')));
    let names_a_server = |given: &String| servers.iter().any(|server| given.starts_with(&format!("{server}=")));
    let for_all = || audiences.iter().find(|given| !names_a_server(given)).map(String::as_str);
    own.or_else(for_all).unwrap_or(url).to_owned()
}

/// The largest list of models the check at start reads.
const MAX_MODEL_LIST: usize = 1 << 20;

/// How long the check at start waits for the model's server.
const MODEL_CHECK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Asks the model's server for its models (`GET /models`) once at start, and says in the log
/// what would otherwise show only at the first task: a server that does not answer, a key it
/// refuses, a model it does not list. The agent is served meanwhile and either way (the server
/// may come up later, and some servers list no models).
async fn check_model_server(base_url: String, model: String, key: Option<String>) {
    let url = format!("{}/models", base_url.trim_end_matches('/'));
    let client = reqwest::Client::builder().timeout(MODEL_CHECK_TIMEOUT).build().unwrap_or_default();
    let mut request = client.get(&url);
    if let Some(key) = &key {
        request = request.bearer_auth(key);
    }
    let response = match request.send().await {
        Ok(response) => response,
        Err(error) => {
            let why = agentwire_client::error_chain(&error);
            tracing::warn!(%url, error = %why, "the model's server does not answer; tasks fail until it does (check --base-url)");
            return;
        }
    };
    let status = response.status();
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        tracing::warn!(%url, %status, "the model's server refuses the API key; tasks will fail (check OPENAI_API_KEY or --api-key-file)");
        return;
    }
    if status == reqwest::StatusCode::NOT_FOUND || status == reqwest::StatusCode::METHOD_NOT_ALLOWED {
        tracing::debug!(%url, %status, "the model's server lists no models");
        return;
    }
    // At most a megabyte of answer: a server's answer is bounded like any other peer's.
    let Ok(body) = agentwire_client::read_limited(response, MAX_MODEL_LIST).await else { return };
    let answer = serde_json::from_slice::<serde_json::Value>(&body).unwrap_or_default();
    if !status.is_success() {
        // An OpenAI-compatible error says what went wrong in `error.message`.
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        let message: String = message.chars().take(200).collect();
        tracing::warn!(%url, %status, %message, "the model's server refuses to list its models; tasks may fail (check the API key and --base-url)");
        return;
    }
    let listed: Vec<String> = Some(answer)
        .and_then(|list| list["data"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|entry| entry["id"].as_str().map(str::to_owned))
        .collect();
    if !listed.is_empty() && !listed.contains(&model) {
        let shown: Vec<&String> = listed.iter().take(20).collect();
        tracing::warn!(%model, listed = ?shown, "the model's server does not list this model; tasks may fail (check --model)");
    }
}

/// The agent's own card, with the name and description the options give.
pub(crate) fn card(agent: &OpenAiAgent, opt: &ModelOpt) -> AgentCard {
    let mut card = agent.card();
    if let Some(name) = &opt.agent_name {
        card.name.clone_from(name);
    }
    if let Some(description) = &opt.agent_description {
        card.description.clone_from(description);
    }
    card
}

/// The key from --api-key-file, else OPENAI_API_KEY, else none.
fn api_key(opt: &ModelOpt) -> anyhow::Result<Option<String>> {
    if let Some(path) = &opt.api_key_file {
        let key = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the API key from {}", path.display()))?;
        return Ok(Some(key.trim().to_owned()));
    }
    Ok(std::env::var("OPENAI_API_KEY").ok().filter(|key| !key.is_empty()))
}

fn system_prompt(opt: &ModelOpt) -> anyhow::Result<Option<String>> {
    match &opt.system_prompt_file {
        Some(path) => std::fs::read_to_string(path)
            .map(Some)
            .with_context(|| format!("cannot read the system prompt from {}", path.display())),
        None => Ok(opt.system_prompt.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::{audience_of, check_audiences};

    #[test]
    fn an_audience_is_the_one_named_for_the_server_or_for_all_or_its_url() {
        let servers = ["http://a/mcp".to_owned(), "http://b/mcp".to_owned()];
        let given = ["http://a/mcp=urn:a".to_owned(), "urn:all".to_owned()];
        assert_eq!(audience_of("http://a/mcp", &servers, &given), "urn:a");
        assert_eq!(audience_of("http://b/mcp", &servers, &given), "urn:all");
        assert_eq!(audience_of("http://b/mcp", &servers, &given[..1]), "http://b/mcp");
        assert!(check_audiences(&servers, &given).is_ok());
        for wrong in [&["http://a/mcp="][..], &[""], &["http://c/mcp=urn:c"], &["urn:x", "urn:y"]] {
            let wrong: Vec<String> = wrong.iter().map(|given| (*given).to_owned()).collect();
            assert!(check_audiences(&servers, &wrong).is_err(), "{wrong:?}");
        }
    }
}
