//! The tools of MCP servers, offered to the model as functions.

use std::sync::Arc;

use agentwire_mcp::{McpTools, ToolOutput};
use agentwire_types::{A2AError, PartContent};
use async_openai::types::chat::{ChatCompletionTool, ChatCompletionTools, FunctionObject};
use serde_json::Value;

use crate::records::{ToolCall, ToolResult};

/// The most text of one tool result the model is given (and the task records).
pub const MAX_TOOL_RESULT_BYTES: usize = 32 * 1024;

/// The tools of one or more MCP servers, named for the model: `[A-Za-z0-9_-]`, at most 64
/// characters, numbered when two servers offer the same name. Cloning is cheap.
///
/// ```no_run
/// use agentwire_mcp::McpTools;
/// use agentwire_openai::Toolbox;
///
/// # async fn run() -> Result<(), agentwire_types::A2AError> {
/// let weather = McpTools::open("python3 weather.py", None).await?;
/// let toolbox = Toolbox::of(vec![weather]).await?;
/// println!("offering {:?}", toolbox.names());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct Toolbox {
    tools: Arc<Vec<OfferedTool>>,
}

#[derive(Debug, Clone)]
struct OfferedTool {
    /// The name the model calls it by.
    name: String,
    /// The name its server knows it by.
    server_name: String,
    server: McpTools,
    description: Option<String>,
    schema: Value,
}

impl Toolbox {
    /// The tools `servers` offer, listed once now.
    pub async fn of(servers: Vec<McpTools>) -> Result<Self, A2AError> {
        Self::default().and(servers).await
    }

    /// These tools and those `servers` offer, listed now; a name taken already is numbered.
    pub(crate) async fn and(&self, servers: Vec<McpTools>) -> Result<Self, A2AError> {
        let mut tools: Vec<OfferedTool> = self.tools.as_ref().clone();
        for server in servers {
            for tool in server.tools().await? {
                let name = agentwire_mcp::tool_name(&tool.name, |name| tools.iter().any(|t| t.name == name));
                tools.push(OfferedTool {
                    name,
                    server_name: tool.name.to_string(),
                    server: server.clone(),
                    description: tool.description.as_deref().map(str::to_owned),
                    schema: Value::Object((*tool.input_schema).clone()),
                });
            }
        }
        Ok(Self { tools: Arc::new(tools) })
    }

    /// The names the model knows the tools by.
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|tool| tool.name.as_str()).collect()
    }

    /// Whether a tool is offered by `name`, the model's name for it or its server's.
    pub fn offers(&self, name: &str) -> bool {
        self.tools.iter().any(|tool| tool.name == name || tool.server_name == name)
    }

    /// Each tool's name and description, for the agent's card.
    pub(crate) fn describe(&self) -> Vec<(String, String)> {
        let described = |tool: &OfferedTool| (tool.name.clone(), tool.description.clone().unwrap_or_default());
        self.tools.iter().map(described).collect()
    }

    /// Whether `name`, as the model calls a tool, is one of `names` by that name or its server's.
    pub(crate) fn is_among(&self, name: &str, names: &std::collections::HashSet<String>) -> bool {
        names.contains(name) || self.tools.iter().any(|tool| tool.name == name && names.contains(&tool.server_name))
    }

    /// The tools as the chat-completions API describes functions.
    pub(crate) fn definitions(&self) -> Vec<ChatCompletionTools> {
        let definition = |tool: &OfferedTool| {
            ChatCompletionTools::Function(ChatCompletionTool {
                function: FunctionObject {
                    name: tool.name.clone(),
                    description: tool.description.clone(),
                    parameters: Some(tool.schema.clone()),
                    strict: None,
                },
            })
        };
        self.tools.iter().map(definition).collect()
    }

    /// Makes `call` and says what came of it. A tool that fails, arguments that are not a JSON
    /// object and an unknown tool are results too (errors the model reads and may act on).
    pub(crate) async fn call(&self, call: &ToolCall) -> ToolResult {
        let result = |content: String, is_error: bool| ToolResult {
            id: call.id.clone(),
            name: call.name.clone(),
            content: bounded(content),
            is_error,
        };
        let Some(tool) = self.tools.iter().find(|tool| tool.name == call.name) else {
            return result(format!("there is no tool named {:?}", call.name), true);
        };
        let arguments = match call.arguments.trim() {
            "" => Value::Object(Default::default()),
            text => match serde_json::from_str::<Value>(text) {
                Ok(value @ Value::Object(_)) => value,
                _ => return result(format!("the arguments are not a JSON object: {text}"), true),
            },
        };
        match tool.server.call(&tool.server_name, arguments).await {
            Ok(output) => result(text_of(&output), output.is_error),
            Err(error) => result(error.message().to_owned(), true),
        }
    }
}

/// A tool's output as text: text parts as they are, files described, and structured content as
/// JSON unless there is text (MCP servers put the same content in a text block too).
fn text_of(output: &ToolOutput) -> String {
    let has_text = output.parts.iter().any(|part| matches!(part.content, PartContent::Text(_)));
    let parts = output.parts.iter().filter(|part| !(has_text && matches!(part.content, PartContent::Data(_))));
    let pieces = parts.map(|part| match &part.content {
        PartContent::Text(text) => text.clone(),
        PartContent::Data(value) => value.to_string(),
        PartContent::Url(url) => url.clone(),
        PartContent::Raw(bytes) => format!(
            "[a file{}, {}, {} bytes]",
            part.filename.as_deref().map(|name| format!(" {name}")).unwrap_or_default(),
            part.media_type.as_deref().unwrap_or("application/octet-stream"),
            bytes.len()
        ),
    });
    pieces.collect::<Vec<_>>().join("\n")
}

/// `text` cut to [`MAX_TOOL_RESULT_BYTES`] at a character boundary, saying so.
fn bounded(text: String) -> String {
    agentwire_types::text::clip(text, MAX_TOOL_RESULT_BYTES)
}

#[cfg(test)]
mod tests {
    use agentwire_types::Part;
    use serde_json::json;

    use super::*;

    #[test]
    fn outputs_become_text() {
        let output = ToolOutput {
            parts: vec![Part::text("5"), Part::data(json!({"sum": 5})), Part::raw(vec![1, 2], "a.png", "image/png")],
            is_error: false,
        };
        assert_eq!(text_of(&output), "5\n[a file a.png, image/png, 2 bytes]");
        let structured = ToolOutput { parts: vec![Part::data(json!({"sum": 5}))], is_error: false };
        assert_eq!(text_of(&structured), "{\"sum\":5}");
    }

    #[test]
    fn results_are_bounded() {
        let long = "é".repeat(MAX_TOOL_RESULT_BYTES);
        let cut = bounded(long);
        assert!(cut.len() <= MAX_TOOL_RESULT_BYTES + '…'.len_utf8());
        assert!(cut.ends_with("é…"), "cut at a character, and said so");
    }

    #[tokio::test]
    async fn unknown_tools_are_results() {
        let toolbox = Toolbox::default();
        let call = ToolCall { id: "c".into(), name: "nope".into(), arguments: "{}".into() };
        let result = toolbox.call(&call).await;
        assert!(result.is_error && result.content.contains("no tool named"));
    }
}
