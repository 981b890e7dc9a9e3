//! The MCP server: the tools of the agents a caller may see, and each call run as that caller's
//! A2A operations.

use std::sync::Arc;
use std::time::Duration;

use agentwire_server::{FrontSpan, Principal, RequestContext};
use agentwire_types::{A2aRequest, A2aResponse, Binding, CancelTaskRequest, Dialect, ErrorKind, Front, GetTaskRequest};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, CancelledNotificationParam,
    ContentBlock, GetTaskParams, GetTaskResult, Implementation, InitializeResult, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext as McpContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::agents::{AgentDirectory, McpAgent};
use crate::call::{Call, Waiting};
use crate::cancels::Cancels;
use crate::content::task_result;
use crate::tools::{message_of, required_string, string_argument, Action, Catalog};

/// How long a call of a tasks-extension client (2026-07-28 on) waits before it becomes an MCP task.
const DEFAULT_TASK_AFTER: Duration = Duration::from_secs(2);
/// How long a question put to the user waits for its answer, by default.
pub(crate) const DEFAULT_ELICITATION_TIMEOUT: Duration = Duration::from_secs(600);

/// Who makes an MCP request over HTTP, as the server's authentication found it; the HTTP layer
/// ([`crate::router`]) puts it in the request's extensions.
#[derive(Debug, Clone, Default)]
pub(crate) struct McpCaller(pub(crate) Option<Principal>);

/// An MCP server whose tools are the agents of an [`AgentDirectory`]: serve it over streamable
/// HTTP with [`router`](crate::router), or over stdio with [`serve_stdio`](crate::serve_stdio).
///
/// ```
/// use agentwire_mcp::{McpServer, OneAgent};
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::{App, RequestHandler};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let app = App::new();
/// let agent = OneAgent::new(app.service(RequestHandler::builder(EchoAgent).build()));
/// let server = McpServer::new(agent);
/// # drop(server);
/// # });
/// ```
#[derive(Clone)]
pub struct McpServer {
    directory: Arc<dyn AgentDirectory>,
    task_after: Duration,
    elicitation_timeout: Duration,
    /// The cancels of the session's calls (each session has its own: [`Self::for_session`]).
    cancels: Arc<Cancels>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").finish_non_exhaustive()
    }
}

impl McpServer {
    /// The tools of `directory`'s agents.
    pub fn new(directory: impl AgentDirectory) -> Self {
        Self {
            directory: Arc::new(directory),
            task_after: DEFAULT_TASK_AFTER,
            elicitation_timeout: DEFAULT_ELICITATION_TIMEOUT,
            cancels: Arc::default(),
        }
    }

    /// How long a call waits for the user's answer to a question the agent asked (an MCP
    /// elicitation), 10 minutes by default. Past it the call ends with an error result that
    /// says so, and the A2A task waits for input as the agent left it: the answer may still
    /// come, by `send_message` with the task's id.
    pub fn elicitation_timeout(mut self, wait: Duration) -> Self {
        self.elicitation_timeout = wait;
        self
    }

    /// The server for one more session: the same tools, with the session's own cancels.
    pub(crate) fn for_session(&self) -> Self {
        Self { cancels: Arc::default(), ..self.clone() }
    }

    /// A call for `mcp`, canceled with `canceled`.
    fn call_on<'a>(
        &self,
        agent: &'a McpAgent,
        a2a: RequestContext,
        mcp: &'a McpContext<RoleServer>,
        task_after: Option<Duration>,
        canceled: CancellationToken,
    ) -> Call<'a> {
        Call { agent, a2a, mcp, task_after, canceled, asks_within: self.elicitation_timeout }
    }

    /// How long a call from a client of MCP's tasks extension (of MCP 2026-07-28 or later, which
    /// has it) waits for its A2A task before it answers with an MCP task that follows it (2 s by
    /// default). Other clients, 2025-11-25 ones that declare the extension among them, wait to
    /// the end, with progress notifications.
    pub fn task_after(mut self, wait: Duration) -> Self {
        self.task_after = wait;
        self
    }

    /// The agent `name`, if `caller` may see it.
    async fn agent(&self, caller: Option<&Principal>, name: &str) -> Result<McpAgent, McpError> {
        named(&self.directory.agents(caller).await, name).cloned()
    }

    /// The call on the agent and A2A task an MCP task id names, for `mcp`'s caller.
    async fn task_call<'a>(
        &self,
        id: &'a str,
        mcp: &'a McpContext<RoleServer>,
    ) -> Result<(McpAgent, RequestContext, &'a str), McpError> {
        let (agent, task) = crate::tasks::parse_task_id(id)?;
        let (caller, a2a) = contexts(mcp);
        Ok((self.agent(caller.as_ref(), agent).await?, a2a, task))
    }

    /// The agents `mcp`'s caller may see, and the tools they make.
    async fn catalog(&self, caller: Option<&Principal>) -> (Vec<McpAgent>, Catalog) {
        let agents = self.directory.agents(caller).await;
        let catalog = Catalog::of(&agents, self.directory.prefixed());
        (agents, catalog)
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        caller: Option<Principal>,
        a2a: RequestContext,
        mcp: &McpContext<RoleServer>,
        canceled: CancellationToken,
    ) -> Result<CallToolResponse, McpError> {
        let (agents, catalog) = self.catalog(caller.as_ref()).await;
        let task_after = takes_task_handles(mcp).then_some(self.task_after);
        let arguments = request.arguments.clone().unwrap_or_default();
        let Some(action) = catalog.action(&request.name).cloned() else {
            return Err(McpError::invalid_params(format!("no tool named {:?}", request.name), None));
        };
        let agent_named = |name: &str| named(&agents, name);
        let agent_of = |arguments: &JsonObject| match (string_argument(arguments, "agent")?, agents.as_slice()) {
            (Some(name), _) => agent_named(name),
            // The one agent in sight (`serve --mcp`'s, or the one a gateway offers the caller) is meant.
            (None, [one]) => Ok(one),
            (None, []) => {
                Err(McpError::invalid_params("no agent is offered now; list_agents names those that are", None))
            }
            (None, _) => Err(McpError::invalid_params(
                "`agent` is required where several agents are offered; list_agents names them",
                None,
            )),
        };
        // A retried call (MCP 2026-07-28) brings the answer to the question its task asked.
        if let (Some(state), Some(answer)) =
            (&request.request_state, request.input_responses.as_ref().and_then(|r| r.get(crate::content::ANSWER)))
        {
            let waiting: Waiting = serde_json::from_str(state)
                .map_err(|_| McpError::invalid_params("the request state is not one this server gave", None))?;
            let call = self.call_on(agent_named(&waiting.agent)?, a2a, mcp, task_after, canceled);
            return call.resume(&waiting, answer).await;
        }
        match action {
            Action::ListAgents => {
                let query = string_argument(&arguments, "query")?.unwrap_or_default();
                // Without a query, every agent the caller may see: those listed above.
                if query.trim().is_empty() {
                    return Ok(listing(&agents, &catalog).into());
                }
                let found =
                    self.directory.search(caller.as_ref(), query).await.map_err(|e| crate::call::mcp_error(&e))?;
                Ok(listing(&found, &catalog).into())
            }
            Action::Send => {
                let agent = agent_of(&arguments)?;
                self.call_on(agent, a2a, mcp, task_after, canceled).send(message_of(&arguments, None)?).await
            }
            Action::Skill { agent, skill } => {
                let agent = agent_named(&agent)?;
                let message = message_of(&arguments, Some(&skill))?;
                self.call_on(agent, a2a, mcp, task_after, canceled).send(message).await
            }
            Action::GetTask | Action::CancelTask => {
                let agent = agent_of(&arguments)?;
                let id = required_string(&arguments, "taskId")?.to_owned();
                let request = match action {
                    Action::GetTask => A2aRequest::GetTask(GetTaskRequest { id, ..Default::default() }),
                    _ => A2aRequest::CancelTask(CancelTaskRequest { id, ..Default::default() }),
                };
                match self.call_on(agent, a2a, mcp, None, canceled).operation(request).await? {
                    A2aResponse::Task(task) => Ok(task_result(&agent.name, &task).into()),
                    _ => Err(McpError::internal_error("the agent answered with something else", None)),
                }
            }
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().enable_tasks().build())
            .with_server_info(Implementation::new("agentwire", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Each tool calls an A2A agent. Skill tools send the agent a message for that skill; \
                 list_agents finds agents, send_message talks to one, get_task and cancel_task follow a task. \
                 A result's structured content names the task and its context: pass contextId to continue \
                 the conversation, taskId to answer a question the agent asked.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        mcp: McpContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let (caller, _) = contexts(&mcp);
        let (agents, catalog) = self.catalog(caller.as_ref()).await;
        Ok(ListToolsResult::with_all_items(catalog.tools(&agents)))
    }

    async fn get_task(&self, request: GetTaskParams, mcp: McpContext<RoleServer>) -> Result<GetTaskResult, McpError> {
        self.read_task(&request.task_id, &mcp).await
    }

    async fn update_task(&self, request: UpdateTaskParams, mcp: McpContext<RoleServer>) -> Result<(), McpError> {
        let (agent, a2a, task) = self.task_call(&request.task_id, &mcp).await?;
        let Some(answer) = request.input_responses.get(crate::content::ANSWER) else { return Ok(()) };
        self.call_on(&agent, a2a, &mcp, None, mcp.ct.clone()).answer_task(task, answer).await
    }

    async fn cancel_task(&self, request: CancelTaskParams, mcp: McpContext<RoleServer>) -> Result<(), McpError> {
        let (agent, a2a, task) = self.task_call(&request.task_id, &mcp).await?;
        let request = A2aRequest::CancelTask(CancelTaskRequest { id: task.to_owned(), ..Default::default() });
        match agent.operations.clone().oneshot((a2a, request)).await {
            Ok(_) => Ok(()),
            // A task that already ended stays as it is; the client reads how with tasks/get.
            Err(error) if error.kind() == ErrorKind::TaskNotCancelable => Ok(()),
            Err(error) => Err(crate::call::mcp_error(&error)),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mcp: McpContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let (caller, mut a2a) = contexts(&mcp);
        // The call's span (as OpenTelemetry's MCP conventions name it) is the parent of the A2A
        // operations it runs: they read their parent from the context's headers.
        let attributes = vec![
            ("mcp.method.name", "tools/call".to_owned()),
            ("gen_ai.tool.name", request.name.to_string()),
            ("jsonrpc.request.id", mcp.id.to_string()),
        ];
        let name = format!("tools/call {}", request.name);
        let span = FrontSpan::start(name.into(), attributes, &mut a2a.metadata);
        let canceled = self.cancels.started(&mcp.id, &mcp.ct);
        let answer = span.run(self.call(request, caller, a2a, &mcp, canceled)).await;
        self.cancels.finished(&mcp.id);
        match &answer {
            Err(error) => span.failed("mcp_error", error.message.to_string()),
            Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
                span.failed("tool_error", "the tool call reported an error".to_owned());
            }
            Ok(_) => {}
        }
        span.end();
        answer
    }

    async fn on_cancelled(&self, notification: CancelledNotificationParam, _context: NotificationContext<RoleServer>) {
        if let Some(id) = notification.request_id {
            self.cancels.cancel(&id);
        }
    }
}

impl McpServer {
    /// `tasks/get`: the A2A task an MCP task id names, as the caller reads it.
    async fn read_task(&self, id: &str, mcp: &McpContext<RoleServer>) -> Result<GetTaskResult, McpError> {
        let (agent, a2a, task) = self.task_call(id, mcp).await?;
        let call = self.call_on(&agent, a2a, mcp, None, mcp.ct.clone());
        let request = A2aRequest::GetTask(GetTaskRequest { id: task.to_owned(), ..Default::default() });
        match call.operation(request).await? {
            A2aResponse::Task(task) => Ok(GetTaskResult::new(crate::tasks::detailed(&agent.name, &task)?)),
            _ => Err(McpError::internal_error("the agent answered GetTask with something else", None)),
        }
    }
}

/// Whether the client of `mcp` is answered with MCP tasks (`resultType: "task"`): one of a
/// revision without the `initialize` handshake (2026-07-28 on), where the tasks extension
/// (SEP-2663) defines them, that declares the extension. A 2025-11-25 client that declares it
/// is waited for as any other: its SDKs read a task handle as an empty result, or refuse it.
fn takes_task_handles(mcp: &McpContext<RoleServer>) -> bool {
    let tasks_era = mcp.protocol_version().is_some_and(|version| !version.has_initialize());
    tasks_era && mcp.client_capabilities().is_some_and(|capabilities| capabilities.supports_tasks())
}

/// The agent `name` among `agents`.
fn named<'a>(agents: &'a [McpAgent], name: &str) -> Result<&'a McpAgent, McpError> {
    agents.iter().find(|agent| agent.name == name).ok_or_else(|| {
        McpError::invalid_params(format!("no agent named {name:?}; list_agents names the agents you may call"), None)
    })
}

/// The caller of an MCP request and the A2A context its calls are made with: over HTTP, the
/// request's headers (its credentials) and peer; over stdio, none.
fn contexts(mcp: &McpContext<RoleServer>) -> (Option<Principal>, RequestContext) {
    let Some(parts) = mcp.extensions.get::<http::request::Parts>() else {
        return (None, RequestContext::new(Dialect::V1, Binding::HttpJson).with_front(Front::Mcp));
    };
    let a2a = RequestContext::from_http(Front::Mcp, &parts.headers, &parts.extensions);
    let caller = parts.extensions.get::<McpCaller>().and_then(|caller| caller.0.clone());
    (caller, a2a)
}

/// The agents found, as text a model reads and as structured content.
fn listing(agents: &[McpAgent], catalog: &Catalog) -> CallToolResult {
    let mut lines = Vec::new();
    let mut found = Vec::new();
    for agent in agents {
        let skills: Vec<Value> = agent
            .card
            .skills
            .iter()
            .map(|skill| json!({"id": skill.id, "name": skill.name, "description": skill.description, "tool": catalog.tool_of(&agent.name, &skill.id)}))
            .collect();
        let names: Vec<&str> = agent.card.skills.iter().map(|s| s.name.as_str()).collect();
        lines.push(format!("{}: {} (skills: {})", agent.name, agent.card.description, names.join(", ")));
        found.push(json!({"name": agent.name, "description": agent.card.description, "skills": skills}));
    }
    let text = if lines.is_empty() { "No agents found.".to_owned() } else { lines.join("\n") };
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(json!({"agents": found}));
    result
}
