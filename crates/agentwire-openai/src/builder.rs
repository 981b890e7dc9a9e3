//! The agent's settings: what [`OpenAiAgent::builder`] starts with, and their bounds.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use agentwire_client::CallerAuth;

use crate::agent::{OpenAiAgent, Settings};
use crate::caller_tools::CallerTools;
use crate::chat::ChatClient;
use crate::toolbox::Toolbox;

/// The default bound of the conversation the model is given from earlier tasks
/// ([`OpenAiAgentBuilder::max_history_bytes`]).
pub const DEFAULT_MAX_HISTORY_BYTES: usize = 64 * 1024;

/// The default number of tool-call rounds in one task ([`OpenAiAgentBuilder::max_tool_rounds`]).
pub const DEFAULT_MAX_TOOL_ROUNDS: usize = 8;

/// The default bound of one answer of the model ([`OpenAiAgentBuilder::max_answer_bytes`]): well
/// under the 64 MiB an agentwire server keeps of a task by default.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// How long the model's server may send nothing by default ([`OpenAiAgentBuilder::idle_timeout`]).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long one model request may take by default ([`OpenAiAgentBuilder::request_timeout`]).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(600);

/// Settings of an [`OpenAiAgent`].
#[derive(Debug)]
pub struct OpenAiAgentBuilder {
    base_url: String,
    model: String,
    api_key: Option<String>,
    system_prompt: Option<String>,
    toolbox: Toolbox,
    caller_tools: CallerTools,
    approve: HashSet<String>,
    max_history_bytes: usize,
    max_tool_rounds: usize,
    max_answer_bytes: usize,
    idle_timeout: Duration,
    request_timeout: Duration,
}

impl OpenAiAgent {
    /// An agent of `model` at `base_url`, the API's root as OpenAI's own clients take it
    /// (`https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`…).
    pub fn builder(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiAgentBuilder {
        OpenAiAgentBuilder::new(base_url.into(), model.into())
    }
}

impl OpenAiAgentBuilder {
    /// The defaults, for the model `model` at `base_url` ([`OpenAiAgent::builder`]).
    pub(crate) fn new(base_url: String, model: String) -> Self {
        Self {
            base_url,
            model,
            api_key: None,
            system_prompt: None,
            toolbox: Toolbox::default(),
            caller_tools: CallerTools::default(),
            approve: HashSet::new(),
            max_history_bytes: DEFAULT_MAX_HISTORY_BYTES,
            max_tool_rounds: DEFAULT_MAX_TOOL_ROUNDS,
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
        }
    }

    /// The API key sent as a bearer token (by default, the `OPENAI_API_KEY` variable's, if set).
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// The system prompt that opens every conversation.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// The tools offered to the model.
    pub fn tools(mut self, toolbox: Toolbox) -> Self {
        self.toolbox = toolbox;
        self
    }

    /// Also the tools of the MCP server at `url` (streamable HTTP), called as each task's caller:
    /// its session is opened with the caller's own token, or one exchanged for it, as `auth`
    /// says, so that the server sees who asked and keeps each caller's work apart. A caller
    /// without such a token has its task fail, saying why, before the model is asked.
    ///
    /// ```no_run
    /// use agentwire_client::CallerAuth;
    /// use agentwire_openai::OpenAiAgent;
    ///
    /// let tools = "https://tools.example/mcp";
    /// let auth = CallerAuth::Passthrough { audience: tools.into() };
    /// let agent = OpenAiAgent::builder("http://127.0.0.1:11434/v1", "llama3.2").tools_as_caller(tools, auth).build();
    /// ```
    pub fn tools_as_caller(mut self, url: impl Into<String>, auth: CallerAuth) -> Self {
        self.caller_tools.add(url.into(), auth);
        self
    }

    /// A tool (by the name the model knows it by, or its server's) whose calls wait for the
    /// user's approval.
    pub fn approve(mut self, tool: impl Into<String>) -> Self {
        self.approve.insert(tool.into());
        self
    }

    /// The most of the earlier tasks of a context the model is given, as their size in memory
    /// (default [`DEFAULT_MAX_HISTORY_BYTES`]); the newest are kept, the task at hand always.
    pub fn max_history_bytes(mut self, bytes: usize) -> Self {
        self.max_history_bytes = bytes;
        self
    }

    /// How many rounds of tool calls one task may make before it fails (default
    /// [`DEFAULT_MAX_TOOL_ROUNDS`]).
    pub fn max_tool_rounds(mut self, rounds: usize) -> Self {
        self.max_tool_rounds = rounds;
        self
    }

    /// The most one answer of the model may hold, in bytes: its text, refusal, and the names
    /// and arguments of its tool calls (default [`DEFAULT_MAX_ANSWER_BYTES`]). A larger answer
    /// fails its task, and so does one with more than 128 tool calls.
    pub fn max_answer_bytes(mut self, bytes: usize) -> Self {
        self.max_answer_bytes = bytes;
        self
    }

    /// How long the model's server may send nothing, while connecting, before it answers or in
    /// the middle of its answer, before the task fails (default [`DEFAULT_IDLE_TIMEOUT`]).
    pub fn idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle;
        self
    }

    /// How long one request to the model may take, its whole answer streamed, before the task
    /// fails (default [`DEFAULT_REQUEST_TIMEOUT`]).
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// The agent.
    pub fn build(self) -> OpenAiAgent {
        let max_answer_bytes = self.max_answer_bytes.max(1);
        let api_key = self.api_key.or_else(|| std::env::var("OPENAI_API_KEY").ok().filter(|key| !key.is_empty()));
        let settings = Settings {
            chat: ChatClient::new(&self.base_url, api_key, self.idle_timeout, max_answer_bytes),
            model: self.model,
            system_prompt: self.system_prompt,
            toolbox: self.toolbox,
            caller_tools: self.caller_tools,
            approve: self.approve,
            max_history_bytes: self.max_history_bytes,
            max_tool_rounds: self.max_tool_rounds.max(1),
            max_answer_bytes,
            request_timeout: self.request_timeout,
        };
        OpenAiAgent { settings: Arc::new(settings), budgets: None, metrics: None }
    }
}
