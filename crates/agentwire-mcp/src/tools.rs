//! The tools an MCP client is offered: one per skill of each agent a caller may see, and the
//! generic ones (list the agents, send a message, get or cancel a task); and the A2A message a
//! tool call's arguments make.

use std::collections::HashMap;
use std::sync::Arc;

use agentwire_types::{Message, Part, Role};
use base64::Engine as _;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use rmcp::ErrorData as McpError;
use serde_json::{json, Value};

use crate::agents::McpAgent;

/// The most files one call may attach.
const MAX_FILES: usize = 32;

/// What calling a tool does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// List (or search) the agents.
    ListAgents,
    /// Send a message to the agent the arguments name.
    Send,
    /// Read a task.
    GetTask,
    /// Cancel a task.
    CancelTask,
    /// Send a message to `agent`, for its skill `skill`.
    Skill { agent: String, skill: String },
}

/// The tools offered to one caller: each name, in the order they are listed, and what it does.
/// A call only needs the names; [`tools`](Self::tools) describes them for a listing.
pub(crate) struct Catalog {
    actions: HashMap<String, Action>,
    order: Vec<String>,
    /// The agent's name where there is one agent and its tools carry no prefix.
    one: Option<String>,
    /// How the generic tools take `agent`.
    agent: AgentArgument,
}

/// How the generic tools (`send_message`, `get_task`, `cancel_task`) take the agent's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AgentArgument {
    /// Not at all: the one agent of `agentwire serve --mcp`.
    Absent,
    /// Optionally: one agent is offered where there could be more (a gateway's).
    Optional,
    /// Always: several agents, or none yet, are offered.
    Required,
}

impl Catalog {
    /// The tools for `agents`; skill tools are named `AGENT_SKILL` when `prefixed`, else `SKILL`.
    pub(crate) fn of(agents: &[McpAgent], prefixed: bool) -> Self {
        let one = (agents.len() == 1 && !prefixed).then(|| agents[0].name.clone());
        let agent = match (agents.len(), prefixed) {
            (1, false) => AgentArgument::Absent,
            (1, true) => AgentArgument::Optional,
            _ => AgentArgument::Required,
        };
        let mut catalog = Self { actions: HashMap::new(), order: Vec::new(), one, agent };
        catalog.add("list_agents".to_owned(), Action::ListAgents);
        catalog.add("send_message".to_owned(), Action::Send);
        catalog.add("get_task".to_owned(), Action::GetTask);
        catalog.add("cancel_task".to_owned(), Action::CancelTask);
        for agent in agents {
            for skill in &agent.card.skills {
                let base = if prefixed { format!("{}_{}", agent.name, skill.id) } else { skill.id.clone() };
                let name = tool_name(&base, |name| catalog.actions.contains_key(name));
                catalog.add(name, Action::Skill { agent: agent.name.clone(), skill: skill.id.clone() });
            }
        }
        catalog
    }

    fn add(&mut self, name: String, action: Action) {
        self.actions.insert(name.clone(), action);
        self.order.push(name);
    }

    /// The tools, described for a listing; `agents` are those the catalog was made of.
    pub(crate) fn tools(&self, agents: &[McpAgent]) -> Vec<Tool> {
        let (one, agent) = (self.one.as_deref(), self.agent);
        let described = |name: &String| -> Option<Tool> {
            Some(match &self.actions[name] {
                Action::ListAgents => list_agents_tool(),
                Action::Send => send_tool(one, agent),
                Action::GetTask => task_tool(
                    "get_task",
                    "Read an agent's task: its state, its messages and its artifacts.",
                    agent,
                    true,
                ),
                Action::CancelTask => {
                    task_tool("cancel_task", "Cancel an agent's task that has not ended.", agent, false)
                }
                Action::Skill { agent, skill } => {
                    let agent = agents.iter().find(|a| &a.name == agent)?;
                    let skill = agent.card.skills.iter().find(|s| &s.id == skill)?;
                    let schema = message_schema(AgentArgument::Absent);
                    Tool::new(name.clone(), skill_description(agent, skill), Arc::new(object(schema)))
                        .with_title(format!("{}: {}", agent.card.name, skill.name))
                        .with_annotations(ToolAnnotations::new().read_only(false).open_world(true))
                }
            })
        };
        self.order.iter().filter_map(described).collect()
    }

    /// The name of the tool for `agent`'s skill `skill`.
    pub(crate) fn tool_of(&self, agent: &str, skill: &str) -> Option<&str> {
        let wanted = Action::Skill { agent: agent.to_owned(), skill: skill.to_owned() };
        self.actions.iter().find(|(_, action)| **action == wanted).map(|(name, _)| name.as_str())
    }

    /// What the tool named `name` does, if it is offered.
    pub(crate) fn action(&self, name: &str) -> Option<&Action> {
        self.actions.get(name)
    }
}

/// A tool name for `base`, as MCP and the OpenAI tool-calling API both take them: `[A-Za-z0-9_-]`
/// (other characters become `-`), at most 64 long, and `NAME_2`, `NAME_3`… when `taken` says the
/// name is already used.
///
/// ```
/// use agentwire_mcp::tool_name;
///
/// assert_eq!(tool_name("weather: today", |_| false), "weather--today");
/// assert_eq!(tool_name("add", |name| name == "add"), "add_2");
/// ```
pub fn tool_name(base: &str, taken: impl Fn(&str) -> bool) -> String {
    let name: String = base
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '-' })
        .take(64)
        .collect();
    let name = match name.trim_matches('-') {
        "" => "tool".to_owned(),
        name => name.to_owned(),
    };
    if !taken(&name) {
        return name;
    }
    let mut n = 2;
    loop {
        let candidate = format!("{}_{n}", &name[..name.len().min(60)]);
        if !taken(&candidate) {
            return candidate;
        }
        n += 1;
    }
}

fn skill_description(agent: &McpAgent, skill: &agentwire_types::AgentSkill) -> String {
    let mut description = if skill.description.is_empty() { skill.name.clone() } else { skill.description.clone() };
    description.push_str(&format!(" (A2A agent {:?}, skill {:?}.)", agent.card.name, skill.id));
    if !skill.examples.is_empty() {
        description.push_str(" Examples: ");
        description.push_str(&skill.examples.iter().take(3).map(|e| format!("{e:?}")).collect::<Vec<_>>().join("; "));
    }
    description
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// The input of a send: a message text, optional files and data, and the conversation to
/// continue; and the agent's name as `agent` says.
fn message_schema(agent: AgentArgument) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "message": {"type": "string", "description": "What to ask the agent."},
            "files": {
                "type": "array",
                "description": "Files to send with the message: each a URI or base64 bytes.",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "mimeType": {"type": "string"},
                        "uri": {"type": "string"},
                        "bytes": {"type": "string", "description": "The file's content, base64."}
                    }
                }
            },
            "data": {"type": "object", "description": "Structured input, sent as a data part."},
            "contextId": {"type": "string", "description": "Continue the conversation an earlier call started."},
            "taskId": {"type": "string", "description": "Continue a task that asked for input."}
        },
        "required": ["message"]
    });
    add_agent(&mut schema, agent, "The agent's name, as list_agents gives it.");
    schema
}

/// `schema` with the agent's name as `agent` says.
fn add_agent(schema: &mut Value, agent: AgentArgument, description: &str) {
    if agent == AgentArgument::Absent {
        return;
    }
    let description = match agent {
        AgentArgument::Optional => format!("{description} Optional while one agent is offered."),
        _ => description.to_owned(),
    };
    schema["properties"]["agent"] = json!({"type": "string", "description": description});
    if agent == AgentArgument::Required
        && let Some(required) = schema["required"].as_array_mut()
    {
        required.insert(0, json!("agent"));
    }
}

fn list_agents_tool() -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {"query": {"type": "string", "description": "Words to look for in the agents' cards and skills."}}
    });
    Tool::new(
        "list_agents",
        "List the A2A agents you may call, with their skills; a query searches them.",
        Arc::new(object(schema)),
    )
    .with_annotations(ToolAnnotations::new().read_only(true).open_world(false))
}

fn send_tool(one: Option<&str>, agent: AgentArgument) -> Tool {
    let description = match one {
        Some(name) => format!("Send a message to the A2A agent {name:?} and wait for its answer."),
        None => "Send a message to an A2A agent and wait for its answer.".to_owned(),
    };
    Tool::new("send_message", description, Arc::new(object(message_schema(agent))))
        .with_annotations(ToolAnnotations::new().read_only(false).open_world(true))
}

fn task_tool(name: &'static str, description: &'static str, agent: AgentArgument, read_only: bool) -> Tool {
    let mut schema = json!({
        "type": "object",
        "properties": {"taskId": {"type": "string", "description": "The task's id, as a call's result gives it."}},
        "required": ["taskId"]
    });
    add_agent(&mut schema, agent, "The agent's name.");
    Tool::new(name, description, Arc::new(object(schema)))
        .with_annotations(ToolAnnotations::new().read_only(read_only).destructive(!read_only).open_world(false))
}

/// A string argument, if given; an error if it is not a string.
pub(crate) fn string_argument<'a>(arguments: &'a JsonObject, name: &str) -> Result<Option<&'a str>, McpError> {
    match arguments.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(value)) => Ok(Some(value)),
        Some(_) => Err(McpError::invalid_params(format!("`{name}` must be a string"), None)),
    }
}

/// A string argument that must be given.
pub(crate) fn required_string<'a>(arguments: &'a JsonObject, name: &str) -> Result<&'a str, McpError> {
    string_argument(arguments, name)?.ok_or_else(|| McpError::invalid_params(format!("`{name}` is required"), None))
}

/// The user message a send's `arguments` make: the text, then the files, then the data; in the
/// task and context they name. A skill tool records its skill in the message's metadata
/// (`skillId`), for agents that route by skill.
pub(crate) fn message_of(arguments: &JsonObject, skill: Option<&str>) -> Result<Message, McpError> {
    let text = required_string(arguments, "message")?;
    let mut parts = vec![Part::text(text)];
    match arguments.get("files") {
        None | Some(Value::Null) => {}
        Some(Value::Array(files)) if files.len() <= MAX_FILES => {
            for file in files {
                parts.push(file_part(file)?);
            }
        }
        Some(Value::Array(_)) => {
            return Err(McpError::invalid_params(format!("at most {MAX_FILES} files may be sent at once"), None));
        }
        Some(_) => return Err(McpError::invalid_params("`files` must be an array", None)),
    }
    match arguments.get("data") {
        None | Some(Value::Null) => {}
        Some(data @ Value::Object(_)) => parts.push(Part::data(data.clone())),
        Some(_) => return Err(McpError::invalid_params("`data` must be an object", None)),
    }
    let mut message = Message::new(Role::User, uuid::Uuid::new_v4().to_string(), parts);
    string_argument(arguments, "contextId")?.unwrap_or_default().clone_into(&mut message.context_id);
    string_argument(arguments, "taskId")?.unwrap_or_default().clone_into(&mut message.task_id);
    if let Some(skill) = skill {
        message.metadata = Some(serde_json::Map::from_iter([("skillId".to_owned(), Value::from(skill))]));
    }
    Ok(message)
}

fn file_part(file: &Value) -> Result<Part, McpError> {
    let Value::Object(file) = file else {
        return Err(McpError::invalid_params("each file must be an object with `uri` or `bytes`", None));
    };
    let name = string_argument(file, "name")?.unwrap_or_default();
    let media_type = string_argument(file, "mimeType")?.unwrap_or("application/octet-stream");
    match (string_argument(file, "uri")?, string_argument(file, "bytes")?) {
        (Some(uri), None) => Ok(Part::url(uri, name, media_type)),
        (None, Some(bytes)) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(bytes)
                .map_err(|_| McpError::invalid_params("a file's `bytes` must be base64", None))?;
            Ok(Part::raw(bytes, name, media_type))
        }
        _ => Err(McpError::invalid_params("each file needs exactly one of `uri` and `bytes`", None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arguments(value: Value) -> JsonObject {
        object(value)
    }

    #[test]
    fn a_message_carries_text_files_data_and_its_conversation() {
        let message = message_of(
            &arguments(json!({
                "message": "convert",
                "files": [{"uri": "https://example.com/a.csv", "mimeType": "text/csv"}, {"bytes": "aGk=", "name": "hi.txt"}],
                "data": {"amount": 10},
                "contextId": "c1"
            })),
            Some("convert"),
        )
        .unwrap();
        assert_eq!(message.parts.len(), 4);
        assert_eq!(message.parts[2].content, agentwire_types::PartContent::Raw(b"hi".to_vec()));
        assert_eq!(message.context_id, "c1");
        assert_eq!(message.metadata.unwrap()["skillId"], "convert");
    }

    #[test]
    fn bad_arguments_are_refused_with_what_is_wrong() {
        let refused = |value| message_of(&arguments(value), None).unwrap_err().message.to_string();
        assert!(refused(json!({})).contains("`message` is required"));
        assert!(refused(json!({"message": 1})).contains("must be a string"));
        assert!(refused(json!({"message": "x", "files": [{"bytes": "!!"}]})).contains("base64"));
        assert!(refused(json!({"message": "x", "files": [{}]})).contains("exactly one"));
        assert!(refused(json!({"message": "x", "data": [1]})).contains("object"));
        let many: Vec<Value> = (0..=MAX_FILES).map(|_| json!({"uri": "u"})).collect();
        assert!(refused(json!({"message": "x", "files": many})).contains("at most"));
    }

    #[test]
    fn tool_names_are_unique() {
        let taken = |name: &str| name == "send_message" || name == "send_message_2";
        assert_eq!(tool_name("send_message", taken), "send_message_3");
        assert_eq!(tool_name("other", taken), "other");
    }
}
