//! `serve --agent openai`: the model agent, from its options.

use agentwire_mcp::McpTools;
use agentwire_openai::{OpenAiAgent, Toolbox};
use agentwire_types::AgentCard;
use anyhow::Context as _;

use crate::opt::ModelOpt;

/// The agent the options describe, with the tools of its MCP servers listed.
pub(crate) async fn agent(opt: &ModelOpt) -> anyhow::Result<OpenAiAgent> {
    let base_url = opt
        .base_url
        .as_deref()
        .context("--agent openai needs --base-url (the API's root, such as http://127.0.0.1:11434/v1)")?;
    let model = opt.model.as_deref().context("--agent openai needs --model")?;
    let mut servers = Vec::with_capacity(opt.mcp_servers.len());
    for target in &opt.mcp_servers {
        let server = McpTools::open(target, None).await.with_context(|| format!("--mcp-server {target:?}"))?;
        servers.push(server);
    }
    let toolbox = Toolbox::of(servers).await.context("cannot list the tools of the MCP servers")?;
    for tool in &opt.approve {
        anyhow::ensure!(
            toolbox.offers(tool),
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
    let agent = builder.build();
    tracing::info!(%base_url, %model, tools = ?agent.tool_names(), approve = ?opt.approve, "serving a model");
    tokio::spawn(check_model_server(base_url.to_owned(), model.to_owned(), key));
    Ok(agent)
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
