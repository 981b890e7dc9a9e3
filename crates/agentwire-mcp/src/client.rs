//! The other direction: an agent that uses the tools of an MCP server, started as a command
//! (stdio) or reached at a URL (streamable HTTP), with their results as A2A parts.

use std::time::Duration;

use agentwire_types::{A2AError, Part};
use base64::Engine as _;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ResourceContents, Tool};
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::Value;

/// The tools of one MCP server, for an [`AgentExecutor`](agentwire_server::agent::AgentExecutor)
/// to call. Cloning is cheap: clones share the connection, which closes with the last of them.
///
/// ```no_run
/// use agentwire_mcp::McpTools;
///
/// # async fn run() -> Result<(), agentwire_types::A2AError> {
/// let tools = McpTools::spawn("python3", ["server.py", "stdio"]).await?;
/// let output = tools.call("add", serde_json::json!({"a": 1, "b": 2})).await?;
/// assert!(!output.is_error);
/// let text: String = output.parts.iter().filter_map(|part| part.as_text()).collect();
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct McpTools {
    service: std::sync::Arc<RunningService<RoleClient, ()>>,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools")
            .field(
                "server",
                &self.service.peer_info().and_then(|info| info.server_info.as_ref().map(|server| server.name.clone())),
            )
            .finish()
    }
}

/// What a tool answered: its content as A2A parts (text as text, images and embedded files as
/// bytes, links as URLs, structured content as a data part), and whether it reported an error.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The content, in order; the structured content, if any, last.
    pub parts: Vec<Part>,
    /// The tool reported a failure (its content says why).
    pub is_error: bool,
}

impl ToolOutput {
    /// The text parts, one per line.
    pub fn text(&self) -> String {
        agentwire_types::text::text_of(&self.parts)
    }
}

impl McpTools {
    /// Starts `program` with `args` and speaks MCP over its standard input and output; its
    /// standard error is this process's.
    pub async fn spawn<I, S>(program: &str, args: I) -> Result<Self, A2AError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut command = tokio::process::Command::new(program);
        command.args(args);
        let transport = TokioChildProcess::new(command)
            .map_err(|error| A2AError::internal(format!("could not start the MCP server {program:?}: {error}")))?;
        let service =
            ().serve(transport)
                .await
                .map_err(|error| failed("start a session with", program, handshake_failure(&error)))?;
        Ok(Self { service: std::sync::Arc::new(service) })
    }

    /// Connects to the MCP server at `url` over streamable HTTP, with `Authorization: Bearer
    /// token` when a token is given. A server that does not accept connections yet (started
    /// beside this one) is waited for, up to 5 s.
    pub async fn connect(url: &str, token: Option<&str>) -> Result<Self, A2AError> {
        install_crypto();
        if let Err(why) = listening(url, START_WITHIN).await {
            return Err(A2AError::internal(format!(
                "could not connect to the MCP server {url:?}: {why} (tried for {} s)",
                START_WITHIN.as_secs()
            )));
        }
        let mut config = StreamableHttpClientTransportConfig::with_uri(url);
        if let Some(token) = token {
            config = config.auth_header(token);
        }
        let transport = StreamableHttpClientTransport::from_config(config);
        let service = ().serve(transport).await.map_err(|error| failed("connect to", url, handshake_failure(&error)))?;
        Ok(Self { service: std::sync::Arc::new(service) })
    }

    /// Connects as `target` says: a URL (`http://`, `https://`) over streamable HTTP, anything
    /// else a command line (split at white space) to start.
    pub async fn open(target: &str, token: Option<&str>) -> Result<Self, A2AError> {
        if target.starts_with("http://") || target.starts_with("https://") {
            return Self::connect(target, token).await;
        }
        let mut words = target.split_whitespace();
        let program = words.next().ok_or_else(|| A2AError::invalid_params("the MCP server's command is empty"))?;
        Self::spawn(program, words).await
    }

    /// The server's tools.
    pub async fn tools(&self) -> Result<Vec<Tool>, A2AError> {
        self.service
            .list_all_tools()
            .await
            .map_err(|error| A2AError::internal(format!("listing the MCP tools: {error}")))
    }

    /// Calls the tool `name` with `arguments` (a JSON object, or null for none).
    pub async fn call(&self, name: &str, arguments: Value) -> Result<ToolOutput, A2AError> {
        let mut params = CallToolRequestParams::new(name.to_owned());
        match arguments {
            Value::Object(arguments) => params = params.with_arguments(arguments),
            Value::Null => {}
            _ => return Err(A2AError::invalid_params("a tool's arguments are a JSON object")),
        }
        let result = self
            .service
            .call_tool(params)
            .await
            .map_err(|error| A2AError::internal(format!("calling the MCP tool {name:?}: {error}")))?;
        Ok(output_of(result))
    }
}

/// A tool's result as A2A parts.
fn output_of(result: CallToolResult) -> ToolOutput {
    let mut parts: Vec<Part> = result.content.into_iter().filter_map(part_of).collect();
    if let Some(structured) = result.structured_content {
        parts.push(Part::data(structured));
    }
    ToolOutput { parts, is_error: result.is_error == Some(true) }
}

fn part_of(block: ContentBlock) -> Option<Part> {
    let bytes = |data: &str| base64::engine::general_purpose::STANDARD.decode(data).ok();
    if let Some(text) = block.as_text() {
        return Some(Part::text(text.text.clone()));
    }
    if let Some(image) = block.as_image() {
        return Some(Part::raw(bytes(&image.data)?, "", image.mime_type.clone()));
    }
    if let Some(audio) = block.as_audio() {
        return Some(Part::raw(bytes(&audio.data)?, "", audio.mime_type.clone()));
    }
    if let Some(link) = block.as_resource_link() {
        let media_type = link.mime_type.clone().unwrap_or_else(|| "application/octet-stream".to_owned());
        return Some(Part::url(link.uri.clone(), link.name.clone(), media_type));
    }
    let resource = block.as_resource()?;
    match &resource.resource {
        ResourceContents::TextResourceContents { uri, mime_type, text, .. } => {
            let media_type = mime_type.clone().unwrap_or_else(|| "text/plain".to_owned());
            Some(Part::raw(text.clone().into_bytes(), file_name(uri), media_type))
        }
        ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => {
            let media_type = mime_type.clone().unwrap_or_else(|| "application/octet-stream".to_owned());
            Some(Part::raw(bytes(blob)?, file_name(uri), media_type))
        }
        _ => None,
    }
}

/// The last segment of a resource's URI, as a file name.
fn file_name(uri: &str) -> String {
    uri.rsplit('/').next().unwrap_or_default().to_owned()
}

fn failed(what: &str, server: &str, error: impl std::fmt::Display) -> A2AError {
    A2AError::internal(format!("could not {what} the MCP server {server:?}: {error}"))
}

/// How long [`McpTools::connect`] waits for a server to accept connections.
const START_WITHIN: Duration = Duration::from_secs(5);

/// Waits up to `within` for the host of `url` to accept TCP connections; why not, if it does not.
/// Without it, a server not up yet fails the handshake with rmcp's whole error chain, type
/// names and all. Behind a proxy (the variables reqwest reads) the host is not reached
/// directly, and is not waited for.
async fn listening(url: &str, within: Duration) -> Result<(), String> {
    let proxied = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|value| !value.is_empty()));
    let Ok(uri) = url.parse::<http::Uri>() else { return Ok(()) };
    let (Some(host), false) = (uri.host(), proxied) else { return Ok(()) };
    let port = uri.port_u16().unwrap_or(if uri.scheme_str() == Some("https") { 443 } else { 80 });
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let attempt = tokio::time::timeout(Duration::from_secs(2), tokio::net::TcpStream::connect((host, port))).await;
        let why = match attempt {
            Ok(Ok(_)) => return Ok(()),
            Ok(Err(error)) => plain(&error),
            Err(_) => "the connection was not accepted within 2 s".to_owned(),
        };
        if tokio::time::Instant::now() >= deadline {
            return Err(why);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Why the handshake failed: the transport's own error, when it is one (rmcp's wrapper names the
/// transport's types, and does not give it as its source).
fn handshake_failure(error: &ClientInitializeError) -> String {
    match error {
        ClientInitializeError::TransportError { error, .. } => root_cause(&*error.error),
        other => root_cause(other),
    }
}

/// The innermost cause of `error`: what went wrong, without the layers (and type names) of the
/// transports around it.
fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    match cause.downcast_ref::<std::io::Error>() {
        Some(error) => plain(error),
        None => cause.to_string(),
    }
}

/// An I/O error as a sentence's end: "connection refused", without "(os error 111)".
fn plain(error: &std::io::Error) -> String {
    let text = error.to_string();
    let text = text.split(" (os error").next().unwrap_or(&text);
    let mut chars = text.chars();
    chars.next().map(|first| first.to_lowercase().chain(chars).collect()).unwrap_or_default()
}

/// The MCP SDK's HTTP client uses rustls without choosing its cryptography: this workspace's
/// choice (ring) is installed for the process, unless one already is.
fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::Resource;

    #[test]
    fn tool_results_become_parts() {
        let mut result = CallToolResult::success(vec![
            ContentBlock::text("3"),
            ContentBlock::image("cG5n", "image/png"),
            ContentBlock::resource(ResourceContents::text("a,b", "file:///tmp/t.csv").with_mime_type("text/csv")),
            ContentBlock::resource_link(
                Resource::new("https://example.com/r.pdf", "r.pdf").with_mime_type("application/pdf"),
            ),
        ]);
        result.structured_content = Some(serde_json::json!({"result": 3}));
        let output = output_of(result);
        assert!(!output.is_error);
        assert_eq!(output.parts[0], Part::text("3"));
        assert_eq!(output.parts[1], Part::raw(b"png".to_vec(), "", "image/png"));
        assert_eq!(output.parts[2], Part::raw(b"a,b".to_vec(), "t.csv", "text/csv"));
        assert_eq!(output.parts[3], Part::url("https://example.com/r.pdf", "r.pdf", "application/pdf"));
        assert_eq!(output.parts[4], Part::data(serde_json::json!({"result": 3})));
        assert_eq!(output.text(), "3");
    }
}
