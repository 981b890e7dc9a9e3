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
    if let Some(key) = api_key(opt)? {
        builder = builder.api_key(key);
    }
    if let Some(prompt) = system_prompt(opt)? {
        builder = builder.system_prompt(prompt);
    }
    for tool in &opt.approve {
        builder = builder.approve(tool);
    }
    let agent = builder.build();
    tracing::info!(%base_url, %model, tools = ?agent.tool_names(), approve = ?opt.approve, "serving a model");
    Ok(agent)
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
