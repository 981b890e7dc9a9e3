//! An agent whose work is done by the tools of an MCP server: it starts the server (a command,
//! over stdio) or connects to it (a URL, over streamable HTTP) with `agentwire_mcp::McpTools`,
//! and answers each message by calling the tool it names with the JSON arguments after the name.
//! The tool's content becomes the task's artifact; a tool that reports an error fails the task.
//!
//! ```sh
//! # An MCP server made with the official Python SDK (pip install mcp), started by the agent
//! MCP_SERVER="python3 interop/mcp-python/server.py stdio" cargo run -p agentwire-examples --example mcp_tools
//! cargo run --bin agentwire -- send http://127.0.0.1:8087 'add {"a": 2, "b": 3}'
//! cargo run --bin agentwire -- send http://127.0.0.1:8087 'tools'
//! ```

use agentwire_mcp::McpTools;
use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::{router, RequestHandler, Server};
use agentwire_types::Artifact;
use tokio::net::TcpListener;

const ADDR: &str = "127.0.0.1:8087";

/// Calls the MCP tool each message names.
struct ToolAgent {
    tools: McpTools,
}

impl AgentExecutor for ToolAgent {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let tools = self.tools.clone();
        ctx.run(|ctx, updater| async move {
            updater.working().await?;
            let text = ctx.message.text();
            let (name, arguments) = text.trim().split_once(' ').unwrap_or((text.trim(), ""));
            if name == "tools" {
                let listed = match tools.tools().await {
                    Ok(listed) => listed,
                    Err(error) => return updater.fail(error.message().to_owned()).await,
                };
                let lines: Vec<String> = listed
                    .iter()
                    .map(|tool| format!("{}: {}", tool.name, tool.description.as_deref().unwrap_or("")))
                    .collect();
                updater.add_text_artifact("tools", lines.join("\n")).await?;
                return updater.complete().await;
            }
            let arguments = match arguments.trim() {
                "" => serde_json::Value::Null,
                json => match serde_json::from_str(json) {
                    Ok(arguments) => arguments,
                    Err(error) => return updater.fail(format!("the arguments are not JSON: {error}")).await,
                },
            };
            match tools.call(name, arguments).await {
                Ok(output) if output.is_error => {
                    updater.fail(format!("the tool {name} failed: {}", output.text())).await
                }
                Ok(output) => {
                    updater.add_artifact(Artifact::new("result", name, output.parts)).await?;
                    updater.complete().await
                }
                Err(error) => updater.fail(error.message().to_owned()).await,
            }
        })
    }
}

/// The agent's request handler, its card naming `url`, for the MCP server at `target`.
async fn agent(target: &str, url: &str) -> Result<RequestHandler, agentwire_types::A2AError> {
    let tools = McpTools::open(target, None).await?;
    Ok(RequestHandler::builder(ToolAgent { tools }).card_url(url).build())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().with_writer(std::io::stderr).init();
    let target = std::env::var("MCP_SERVER").unwrap_or_else(|_| "python3 interop/mcp-python/server.py stdio".into());
    let handler = agent(&target, &format!("http://{ADDR}")).await?;
    let listener = TcpListener::bind(ADDR).await?;
    println!("calling the tools of {target}; listening on http://{ADDR}");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    Server::builder(listener).handler(handler.clone()).serve(router(handler), shutdown).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::process::Stdio;
    use std::time::Duration;

    use agentwire_client::Client;
    use agentwire_server::{serve, ServeOptions};
    use agentwire_types::{Message, SendMessageRequest, SendMessageResponse, Task, TaskState};
    use tokio::io::AsyncBufReadExt;

    use super::*;

    /// The interpreter of a venv with the official MCP Python SDK (`interop/run.py
    /// --install-mcp` makes one; scripts/test sets the variable). Without it the test is
    /// skipped, except under CI.
    fn mcp_python() -> Option<PathBuf> {
        let Some(python) = std::env::var_os("AGENTWIRE_MCP_PYTHON") else {
            assert!(std::env::var_os("CI").is_none(), "CI runs need AGENTWIRE_MCP_PYTHON (scripts/test sets it)");
            eprintln!("skipped: AGENTWIRE_MCP_PYTHON is not set");
            return None;
        };
        Some(PathBuf::from(python))
    }

    fn server_script() -> String {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../interop/mcp-python/server.py");
        path.to_str().unwrap().to_owned()
    }

    /// The Python SDK's server over streamable HTTP on a free port, and its URL once it answers.
    async fn http_server(python: &PathBuf) -> (tokio::process::Child, String) {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = tokio::process::Command::new(python)
            .args([server_script(), "http".into(), port.to_string()])
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = lines.next_line().await.unwrap().unwrap();
        let url = ready.strip_prefix("READY ").unwrap().to_owned();
        // READY is printed as the server starts listening: wait for the port to take connections.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
            assert!(tokio::time::Instant::now() < deadline, "the MCP server did not listen");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        (child, url)
    }

    /// The agent for the MCP server at `target`, served on a loopback port; a client of it.
    async fn serve_agent(target: &str) -> Client {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let handler = agent(target, &base).await.unwrap();
        tokio::spawn(serve(listener, router(handler), std::future::pending(), ServeOptions::default()));
        Client::builder(&base).timeout(Duration::from_secs(30)).connect().await.unwrap()
    }

    async fn ask(client: &Client, text: &str) -> Task {
        let message = Message::user(uuid_like(text), text);
        match client.send_message(SendMessageRequest::new(message)).await.unwrap() {
            SendMessageResponse::Task(task) => task,
            other => panic!("expected a task, got {other:?}"),
        }
    }

    fn uuid_like(text: &str) -> String {
        format!(
            "m-{}-{}",
            text.len(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos()
        )
    }

    fn artifact_text(task: &Task) -> String {
        task.artifacts.iter().flat_map(|a| &a.parts).filter_map(|p| p.as_text()).collect::<Vec<_>>().join("|")
    }

    #[tokio::test]
    async fn the_agent_calls_the_tools_of_the_python_sdks_server_over_stdio_and_http() {
        let Some(python) = mcp_python() else { return };
        let (_http, url) = http_server(&python).await;
        let stdio = format!("{} {} stdio", python.display(), server_script());
        for target in [stdio.as_str(), url.as_str()] {
            let client = serve_agent(target).await;
            let task = ask(&client, r#"add {"a": 2, "b": 3.5}"#).await;
            assert_eq!(task.status.state, TaskState::Completed, "{target}: {task:?}");
            assert_eq!(artifact_text(&task), "5.5", "{target}");
            let data = task.artifacts[0].parts.iter().find_map(|p| match &p.content {
                agentwire_types::PartContent::Data(data) => Some(data.clone()),
                _ => None,
            });
            assert_eq!(data, Some(serde_json::json!({"result": 5.5})), "{target}: the structured content");
            let task = ask(&client, r#"shout {"text": "quiet please"}"#).await;
            assert_eq!(artifact_text(&task), "QUIET PLEASE", "{target}");
            let task = ask(&client, "tools").await;
            let listed = artifact_text(&task);
            assert!(listed.contains("add: Add two numbers.") && listed.contains("shout:"), "{target}: {listed}");
            let task = ask(&client, r#"fail {"reason": "as asked"}"#).await;
            assert_eq!(task.status.state, TaskState::Failed, "{target}: {task:?}");
            let said = task.status.message.as_ref().map(|m| m.text()).unwrap_or_default();
            assert!(said.contains("as asked"), "{target}: {said}");
        }
    }
}
