//! `--mcp`: agents as MCP tools at `/mcp`, for MCP callers who are A2A callers: authenticated by
//! the server's `--auth` (refused with a challenge naming the protected-resource metadata),
//! charged to their quotas, owning the tasks their calls make, and offered only the agents they
//! may see. The official MCP SDKs' clients are run against it in the interop matrix
//! (interop/run.py); these tests speak MCP's streamable HTTP transport by hand, to check what a
//! client library would hide.

use serde_json::{json, Value};

use crate::common::{Idp, Server, TempDir};

/// An MCP session over streamable HTTP, as MCP 2025-11-25 opens one.
pub(crate) struct Session {
    http: reqwest::Client,
    url: String,
    token: String,
    id: String,
    next: u64,
}

impl Session {
    pub(crate) async fn open(base: &str, token: &str) -> Self {
        Self::open_with(base, token, json!({})).await
    }

    /// A session whose client declares `capabilities`.
    async fn open_with(base: &str, token: &str, capabilities: Value) -> Self {
        let mut session = Self {
            http: reqwest::Client::new(),
            url: format!("{base}/mcp"),
            token: token.into(),
            id: String::new(),
            next: 0,
        };
        let client = json!({"name": "test", "version": "1"});
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": client});
        let (status, headers, _) =
            session.post(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})).await;
        assert_eq!(status, 200);
        session.id = headers.get("mcp-session-id").expect("a session id").to_str().unwrap().to_owned();
        let (status, _, _) = session.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        assert_eq!(status, 202);
        session
    }

    async fn post(&self, body: Value) -> (u16, reqwest::header::HeaderMap, String) {
        let mut request = self
            .http
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if !self.id.is_empty() {
            request = request.header("mcp-session-id", &self.id).header("mcp-protocol-version", "2025-11-25");
        }
        let response = request.send().await.unwrap();
        let (status, headers) = (response.status().as_u16(), response.headers().clone());
        (status, headers, response.text().await.unwrap())
    }

    /// The answer to `method`: its result, or its error.
    pub(crate) async fn call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next += 1;
        let id = self.next;
        let (status, _, body) =
            self.post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        assert_eq!(status, 200, "{body}");
        let answer = body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .find(|message| message["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {method} in {body}"));
        match answer.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(answer["result"].clone()),
        }
    }

    /// The answer to `method`, read as it streams: each elicitation the server asks on the way is
    /// answered with `answer(question)` (the request's params), as a client with a user would.
    async fn call_answering(
        &mut self,
        method: &str,
        params: Value,
        answer: impl Fn(&Value) -> Value,
    ) -> Result<Value, Value> {
        self.next += 1;
        let id = self.next;
        let mut response = self
            .http
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", "2025-11-25")
            .json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let (mut read, mut seen) = (String::new(), 0);
        loop {
            let chunk = tokio::time::timeout(std::time::Duration::from_secs(20), response.chunk())
                .await
                .unwrap_or_else(|_| panic!("no answer to {method} within 20 s: {read}"))
                .unwrap()
                .unwrap_or_else(|| panic!("the stream ended without an answer to {method}: {read}"));
            read.push_str(&String::from_utf8_lossy(&chunk));
            let messages: Vec<Value> = read
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
                .collect();
            for message in messages.iter().skip(seen) {
                if message["method"] == "elicitation/create" {
                    let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": answer(&message["params"])});
                    let (status, _, body) = self.post(reply).await;
                    assert_eq!(status, 202, "{body}");
                } else if message["id"] == id {
                    return match message.get("error") {
                        Some(error) => Err(error.clone()),
                        None => Ok(message["result"].clone()),
                    };
                }
            }
            seen = messages.len();
        }
    }

    /// Ends the session (`DELETE`): the status.
    async fn end(&self) -> u16 {
        let request = self.http.delete(&self.url).bearer_auth(&self.token).header("mcp-session-id", &self.id);
        request.header("mcp-protocol-version", "2025-11-25").send().await.unwrap().status().as_u16()
    }

    pub(crate) async fn tool_names(&mut self) -> Vec<String> {
        let tools = self.call("tools/list", json!({})).await.unwrap();
        tools["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
    }

    pub(crate) async fn call_tool(&mut self, name: &str, arguments: Value) -> Result<Value, Value> {
        self.call("tools/call", json!({"name": name, "arguments": arguments})).await
    }
}

/// MCP 2026-07-28 requests: each one alone, without a session, carrying its protocol metadata
/// (the client's capabilities among them) and the standard headers that revision asks for.
struct Stateless {
    http: reqwest::Client,
    url: String,
    token: String,
    capabilities: Value,
    next: u64,
}

impl Stateless {
    fn new(base: &str, token: &str, capabilities: Value) -> Self {
        Self { http: reqwest::Client::new(), url: format!("{base}/mcp"), token: token.into(), capabilities, next: 0 }
    }

    /// The answer to `method`: its result, or its error.
    async fn call(&mut self, method: &str, mut params: Value) -> Result<Value, Value> {
        self.next += 1;
        let id = self.next;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": self.capabilities,
        });
        // The name a request is about: a tool's, or a task's.
        let name = params.get("name").or_else(|| params.get("taskId")).and_then(Value::as_str).map(str::to_owned);
        let mut request = self
            .http
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method);
        if let Some(name) = name {
            request = request.header("mcp-name", name);
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = request.json(&body).send().await.unwrap();
        let status = response.status().as_u16();
        let body = response.text().await.unwrap();
        assert_eq!(status, 200, "{body}");
        let answer = serde_json::from_str::<Value>(&body)
            .ok()
            .into_iter()
            .chain(
                body.lines()
                    .filter_map(|line| line.strip_prefix("data:"))
                    .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok()),
            )
            .find(|message| message["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {method} in {body}"));
        match answer.get("error") {
            Some(error) => Err(error.clone()),
            None => Ok(answer["result"].clone()),
        }
    }

    async fn call_tool(&mut self, name: &str, arguments: Value) -> Result<Value, Value> {
        self.call("tools/call", json!({"name": name, "arguments": arguments})).await
    }
}

/// `agentwire mcp ARGS…`, spoken to in MCP 2025-11-25 over its standard input and output.
struct Stdio {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    /// What it logged (its standard error).
    log: std::path::PathBuf,
    next: u64,
}

impl Stdio {
    /// Starts `agentwire mcp` with `args`, and opens the session.
    async fn start(dir: &std::path::Path, args: &[&str]) -> Self {
        use tokio::io::AsyncBufReadExt as _;
        let log = dir.join("agentwire-mcp.log");
        let mut child = tokio::process::Command::new(crate::common::binary())
            .arg("mcp")
            .args(args)
            .env("RUST_LOG", "info")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .kill_on_drop(true)
            .spawn()
            .expect("agentwire mcp starts");
        let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        let lines = tokio::io::BufReader::new(stdout).lines();
        let mut stdio = Self { child, stdin, lines, log, next: 0 };
        let client = json!({"name": "test", "version": "1"});
        let params = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client});
        stdio.call("initialize", params).await.expect("initialized");
        stdio.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        stdio
    }

    async fn send(&mut self, message: Value) {
        use tokio::io::AsyncWriteExt as _;
        self.stdin.write_all(format!("{message}\n").as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The answer to `method`: its result, or its error.
    async fn call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next += 1;
        let id = self.next;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        loop {
            let line = tokio::time::timeout(std::time::Duration::from_secs(30), self.lines.next_line()).await;
            let line = line.unwrap_or_else(|_| panic!("no answer to {method} within 30 s"));
            let Some(line) = line.unwrap() else {
                let logged = std::fs::read_to_string(&self.log).unwrap_or_default();
                panic!("agentwire mcp ended ({:?}) without answering {method}:\n{logged}", self.child.try_wait());
            };
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return match message.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(message["result"].clone()),
                };
            }
        }
    }

    async fn tool_names(&mut self) -> Vec<String> {
        let tools = self.call("tools/list", json!({})).await.unwrap();
        tools["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
    }
}

/// A caller without credentials is refused as MCP's authorization asks, and pointed at the
/// protected-resource metadata; a tool call runs as its caller, whose task it is.
#[tokio::test]
async fn mcp_callers_are_authenticated_and_own_their_tasks() {
    let dir = TempDir::new("mcp-identity");
    let auth = "bearer:alice=alice-token,bob=bob-token";
    let server = Server::start(&dir.0, &["--agent", "conformance", "--store", "memory", "--auth", auth, "--mcp"]).await;
    let http = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}});

    for token in [None, Some("not-a-token")] {
        let mut request = http.post(format!("{}/mcp", server.base)).json(&initialize);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let refused = request.send().await.unwrap();
        assert_eq!(refused.status(), 401, "token {token:?}");
        let challenges: Vec<&str> =
            refused.headers().get_all("www-authenticate").iter().map(|value| value.to_str().unwrap()).collect();
        let metadata_url = format!("{}/.well-known/oauth-protected-resource/mcp", server.base);
        assert_eq!(challenges[0], format!("Bearer resource_metadata=\"{metadata_url}\""), "{challenges:?}");
        let metadata: Value = http.get(&metadata_url).send().await.unwrap().json().await.unwrap();
        assert_eq!(metadata["resource"], format!("{}/mcp", server.base));
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
    }

    let mut alice = Session::open(&server.base, "alice-token").await;
    let tools = alice.tool_names().await;
    assert_eq!(tools, ["list_agents", "send_message", "get_task", "cancel_task", "conformance"], "{tools:?}");
    let result = alice.call_tool("conformance", json!({"message": "tck-artifact-text"})).await.unwrap();
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["content"][0]["text"], "Generated text content");
    let task_id = result["structuredContent"]["taskId"].as_str().unwrap().to_owned();

    // The task is alice's: her A2A calls find it, bob's do not, over A2A and over MCP.
    let read = |token: &'static str| {
        let (http, base, id) = (http.clone(), server.base.clone(), task_id.clone());
        async move {
            let request = http.post(&base).bearer_auth(token).header("A2A-Version", "1.0");
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": id}});
            request.json(&body).send().await.unwrap().json::<Value>().await.unwrap()
        }
    };
    assert_eq!(read("alice-token").await["result"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(read("bob-token").await["error"]["code"], -32001, "bob does not see alice's task");
    let mut bob = Session::open(&server.base, "bob-token").await;
    let refused = bob.call_tool("get_task", json!({"taskId": task_id})).await.unwrap_err();
    assert_eq!(refused["code"], -32002, "{refused}");
    let found = alice.call_tool("get_task", json!({"taskId": task_id})).await.unwrap();
    assert_eq!(found["structuredContent"]["state"], "COMPLETED", "{found}");

    // Bad arguments are the caller's error, said plainly.
    let refused = alice.call_tool("send_message", json!({"message": 3})).await.unwrap_err();
    assert_eq!(refused["code"], -32602);
    assert!(refused["message"].as_str().unwrap().contains("`message` must be a string"), "{refused}");
    let refused = alice.call_tool("no_such_tool", json!({})).await.unwrap_err();
    assert!(refused["message"].as_str().unwrap().contains("no tool named"), "{refused}");
}

/// A tool call is an A2A call: a caller past its rate is refused, as over A2A.
#[tokio::test]
async fn mcp_calls_are_charged_to_the_callers_rate() {
    let dir = TempDir::new("mcp-quota");
    let args =
        ["--store", "memory", "--auth", "bearer:alice=alice-token", "--mcp", "--rate-limit", "1", "--rate-burst", "2"];
    let server = Server::start(&dir.0, &args).await;
    let mut alice = Session::open(&server.base, "alice-token").await;
    let mut refusals = Vec::new();
    for n in 0..6 {
        if let Err(error) = alice.call_tool("send_message", json!({"message": format!("hello {n}")})).await {
            refusals.push(error);
        }
    }
    assert!(!refusals.is_empty(), "six calls at once, and none past a rate of one a second with a burst of two");
    assert!(refusals.iter().all(|e| e["message"].as_str().unwrap().contains("requests per second")), "{refusals:?}");
}

/// On a gateway, each caller is offered the agents it may see: a registered agent visible to
/// alice alone is, to bob, neither a tool nor an agent he may name.
#[tokio::test]
async fn a_gateway_offers_each_caller_the_agents_it_may_see() {
    let dir = TempDir::new("mcp-gateway");
    let agent = Server::start(&dir.0, &["--store", "memory"]).await;
    let auth = "bearer:admin=admin-token,alice=alice-token,bob=bob-token";
    let args = ["--store", "memory", "--auth", auth, "--registry-admin", "admin", "--mcp"];
    let gateway = Server::start_gateway(&dir.0, &args).await;
    let http = reqwest::Client::new();
    for registration in [
        json!({"url": agent.base, "name": "secret", "visibility": {"principals": ["alice"]}}),
        json!({"url": agent.base, "name": "open"}),
    ] {
        let response = http.post(format!("{}/agents", gateway.base)).bearer_auth("admin-token").json(&registration);
        assert_eq!(response.send().await.unwrap().status(), 201);
    }

    let mut alice = Session::open(&gateway.base, "alice-token").await;
    let tools = alice.tool_names().await;
    assert!(tools.contains(&"secret_echo".to_owned()) && tools.contains(&"open_echo".to_owned()), "{tools:?}");
    let answer = alice.call_tool("secret_echo", json!({"message": "for alice"})).await.unwrap();
    assert_eq!(answer["content"][0]["text"], "for alice", "{answer}");

    let mut bob = Session::open(&gateway.base, "bob-token").await;
    let tools = bob.tool_names().await;
    assert!(tools.contains(&"open_echo".to_owned()), "{tools:?}");
    assert!(!tools.iter().any(|tool| tool.starts_with("secret")), "bob is offered {tools:?}");
    let listed = bob.call_tool("list_agents", json!({})).await.unwrap();
    assert_eq!(listed["structuredContent"]["agents"].as_array().unwrap().len(), 1, "{listed}");
    let found = bob.call_tool("list_agents", json!({"query": "echo"})).await.unwrap();
    let names: Vec<&str> =
        found["structuredContent"]["agents"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["open"], "the registry's search, as bob may see it");
    let refused = bob.call_tool("send_message", json!({"agent": "secret", "message": "hi"})).await.unwrap_err();
    assert!(refused["message"].as_str().unwrap().contains("no agent named \"secret\""), "{refused}");
    let refused = bob.call_tool("secret_echo", json!({"message": "hi"})).await.unwrap_err();
    assert!(refused["message"].as_str().unwrap().contains("no tool named"), "{refused}");
}

/// MCP and the registry are asked about as what they are, so that a scope map gives them scopes
/// of their own: a token with the A2A scopes but not MCP's is refused at `initialize`, one with
/// MCP's alone opens a session and lists tools but its tool calls need the send's scope; a
/// registry admin by scope registers without any A2A scope, and a rule naming `UnregisterAgent`
/// adds a scope to removing.
#[tokio::test]
async fn mcp_and_the_registry_have_scopes_of_their_own() {
    let dir = TempDir::new("mcp-scopes");
    let idp = Idp::new(&dir.0).await;
    let token = |subject: &'static str, scope: &'static str| idp.token(subject, &["gw"], Some(scope));
    let jwt = idp.auth_args();
    let agent = Server::start(&dir.0, &["--store", "memory"]).await;
    let gateway = Server::start_gateway(
        &dir.0,
        &[
            "--store",
            "memory",
            "--mcp",
            &jwt[0],
            &jwt[1],
            &jwt[2],
            &jwt[3],
            "--audience",
            "gw",
            "--scope",
            "read=a2a:read",
            "--scope",
            "write=a2a:write",
            "--scope",
            "OpenMcpSession,UseMcp=mcp:use",
            "--scope",
            "UnregisterAgent=registry:remove",
        ],
    )
    .await;
    let http = reqwest::Client::new();

    let registrar = token("ops", "registry:admin").await;
    let registration = json!({"url": agent.base, "name": "open"});
    let registered = http.post(format!("{}/agents", gateway.base)).bearer_auth(&registrar).json(&registration);
    let registered = registered.send().await.unwrap();
    assert_eq!(registered.status(), 201, "{}", registered.text().await.unwrap());

    let a2a_only = token("alice", "a2a:read a2a:write").await;
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}});
    let refused = http.post(format!("{}/mcp", gateway.base)).bearer_auth(&a2a_only).json(&initialize);
    let refused = refused.send().await.unwrap();
    assert_eq!(refused.status(), 403);
    let challenge = refused.headers().get("www-authenticate").unwrap().to_str().unwrap().to_owned();
    assert!(challenge.contains(r#"error="insufficient_scope", scope="mcp:use""#), "{challenge}");

    let mut mcp_only = Session::open(&gateway.base, &token("alice", "mcp:use").await).await;
    assert!(mcp_only.tool_names().await.contains(&"open_echo".to_owned()));
    let refused = format!("{:?}", mcp_only.call_tool("open_echo", json!({"message": "hi"})).await);
    assert!(refused.contains("Message needs the scope a2a:write"), "{refused}");
    let mut sender = Session::open(&gateway.base, &token("alice", "mcp:use a2a:write").await).await;
    let answer = sender.call_tool("open_echo", json!({"message": "hi"})).await.unwrap();
    assert_eq!(answer["content"][0]["text"], "hi", "{answer}");

    let remove = |token: String| http.delete(format!("{}/agents/open", gateway.base)).bearer_auth(token).send();
    let refused = remove(registrar.clone()).await.unwrap();
    assert_eq!(refused.status(), 403);
    assert!(refused.text().await.unwrap().contains("UnregisterAgent needs the scope registry:remove"));
    assert_eq!(remove(token("ops", "registry:admin registry:remove").await).await.unwrap().status(), 204);
}

/// A client of MCP's tasks extension (MCP 2026-07-28) gets an MCP task for a call that outlasts
/// its wait, or that asks for input: `tasks/get` follows the A2A task (for its caller alone),
/// with the time it was created however often it is read, `tasks/update` answers its question,
/// and `tasks/cancel` cancels it.
#[tokio::test]
async fn long_calls_become_mcp_tasks_that_follow_their_a2a_tasks() {
    let dir = TempDir::new("mcp-tasks");
    let auth = "bearer:alice=alice-token,bob=bob-token";
    let server = Server::start(&dir.0, &["--agent", "conformance", "--store", "memory", "--auth", auth, "--mcp"]).await;
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let mut alice = Stateless::new(&server.base, "alice-token", tasks.clone());
    let mut bob = Stateless::new(&server.base, "bob-token", tasks);

    // A task that works until canceled: the call answers with an MCP task after its wait.
    let created = alice.call_tool("send_message", json!({"message": "tck-cancel please"})).await.unwrap();
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(created["status"], "working", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert!(id.starts_with("agentwire-conformance-agent/"), "{id}");
    let read = alice.call("tasks/get", json!({"taskId": id})).await.unwrap();
    assert_eq!(read["status"], "working", "{read}");
    let refused = bob.call("tasks/get", json!({"taskId": id})).await.unwrap_err();
    // (2026-07-28 has no code of its own for a resource not found: rmcp sends -32602.)
    assert_eq!(refused["data"]["a2aError"], "TaskNotFound", "bob does not see alice's task: {refused}");
    alice.call("tasks/cancel", json!({"taskId": id})).await.unwrap();
    let read = alice.call("tasks/get", json!({"taskId": id})).await.unwrap();
    assert_eq!(read["status"], "cancelled", "{read}");
    // The cancel moved the task's last update, not the time it was created.
    assert_ne!(read["lastUpdatedAt"], created["lastUpdatedAt"], "{read}");
    assert_eq!(read["createdAt"], created["createdAt"], "{read}");

    // A task that asks for input: the question is the task's input request, answered on it.
    let created = alice.call_tool("send_message", json!({"message": "tck-multi-turn start"})).await.unwrap();
    assert_eq!(created["status"], "input_required", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    let read = alice.call("tasks/get", json!({"taskId": id})).await.unwrap();
    let question = &read["inputRequests"]["answer"];
    assert_eq!(question["method"], "elicitation/create", "{read}");
    assert_eq!(question["params"]["message"], "Please continue; send 'done' to finish");
    let answer = json!({"answer": {"action": "accept", "content": {"answer": "done"}}});
    alice.call("tasks/update", json!({"taskId": id, "inputResponses": answer})).await.unwrap();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    let done = loop {
        let read = alice.call("tasks/get", json!({"taskId": id})).await.unwrap();
        if read["status"] == "completed" {
            break read;
        }
        assert!(tokio::time::Instant::now() < deadline, "the task did not complete: {read}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(done["result"]["content"][0]["text"], "Conversation complete", "{done}");

    // A task that ends within the wait is answered as any call.
    let quick = alice.call_tool("send_message", json!({"message": "tck-long-running"})).await.unwrap();
    assert_eq!(quick["content"][0]["text"], "Long-running task finished", "{quick}");
}

/// A 2025-11-25 client that declares the tasks extension (as the MCP Inspector's CLI does) is
/// answered as any 2025-11-25 client: MCP tasks are 2026-07-28's, and its SDKs read a task
/// handle as an empty result. A question the agent asks goes to it through elicitation when it
/// has it; without, the result quotes the question.
#[tokio::test]
async fn a_2025_11_25_client_declaring_tasks_gets_answers_not_task_handles() {
    let dir = TempDir::new("mcp-tasks-2025");
    let server = Server::start(&dir.0, &["--agent", "conformance", "--store", "memory", "--mcp"]).await;
    let tasks = json!({"io.modelcontextprotocol/tasks": {}});

    let mut plain = Session::open_with(&server.base, "", json!({"extensions": tasks})).await;
    let asked = plain.call_tool("send_message", json!({"message": "tck-multi-turn start"})).await.unwrap();
    assert_ne!(asked["resultType"], "task", "{asked}");
    assert_eq!(asked["structuredContent"]["state"], "INPUT_REQUIRED", "{asked}");
    assert!(
        asked["content"][0]["text"].as_str().unwrap().contains("Please continue; send 'done' to finish"),
        "{asked}"
    );

    let mut eliciting = Session::open_with(&server.base, "", json!({"extensions": tasks, "elicitation": {}})).await;
    let arguments = json!({"name": "send_message", "arguments": {"message": "tck-multi-turn start"}});
    let done = eliciting
        .call_answering("tools/call", arguments, |question| {
            assert_eq!(question["message"], "Please continue; send 'done' to finish", "{question}");
            json!({"action": "accept", "content": {"answer": "done"}})
        })
        .await
        .unwrap();
    assert_eq!(done["content"][0]["text"], "Conversation complete", "{done}");
}

/// `send_message` without `agent` goes to the one agent a caller is offered, on a gateway too
/// (whose tools carry the agent's name, as more may come), and its schema says `agent` may be
/// left out there.
#[tokio::test]
async fn send_message_goes_to_the_one_agent_a_gateway_offers() {
    let dir = TempDir::new("mcp-one-agent");
    let agent = Server::start(&dir.0, &["--store", "memory"]).await;
    let upstream = format!("fx={}", agent.base);
    let gateway = Server::start_gateway(&dir.0, &["--store", "memory", "--upstream", &upstream, "--mcp"]).await;
    let mut session = Session::open(&gateway.base, "").await;
    let tools = session.call("tools/list", json!({})).await.unwrap();
    let send = tools["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "send_message").unwrap();
    assert_eq!(send["inputSchema"]["required"], json!(["message"]), "{send}");
    assert!(send["inputSchema"]["properties"]["agent"].is_object(), "{send}");
    let answer = session.call_tool("send_message", json!({"message": "hello, one agent"})).await.unwrap();
    assert_eq!(answer["content"][0]["text"], "hello, one agent", "{answer}");
    assert_eq!(answer["structuredContent"]["agent"], "fx", "{answer}");
}

/// A client that ends its session while a call is in flight leaves the call's answer with no one
/// to read it: the session ends with 200 (MCP's Python SDK takes 202 for a failure), and rmcp's
/// complaint about the answer it could not send is no ERROR line.
#[tokio::test]
async fn a_client_leaving_mid_call_ends_its_session_without_an_error() {
    let dir = TempDir::new("mcp-leaving");
    let server = Server::start(&dir.0, &["--agent", "conformance", "--store", "memory", "--mcp"]).await;
    let session = Session::open(&server.base, "").await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "send_message", "arguments": {"message": "tck-long-running"}}});
    // The call's stream is open (its headers came) when the client leaves, without reading it.
    let in_flight = session
        .http
        .post(&session.url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session.id)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&call)
        .send()
        .await
        .unwrap();
    assert_eq!(in_flight.status(), 200);
    assert_eq!(session.end().await, 200);
    drop(in_flight);
    // rmcp ends the session once the call's answer is dropped, and says so.
    let log = server.log.clone();
    crate::common::eventually(std::time::Duration::from_secs(15), "the session's end is logged", || {
        let log = log.clone();
        async move { std::fs::read_to_string(&log).unwrap_or_default().contains("serve finished") }
    })
    .await;
    let logged = std::fs::read_to_string(&server.log).unwrap();
    let errors: Vec<&str> = logged.lines().filter(|line| line.contains("ERROR")).collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// `agentwire mcp GATEWAY` offers the agent a gateway serves at its root, which its `/agents`
/// does not list (the gateway's own `/mcp` offers it).
#[tokio::test]
async fn the_stdio_bridge_offers_a_gateways_root_agent() {
    let dir = TempDir::new("mcp-root-agent");
    let agent = Server::start(&dir.0, &["--store", "memory"]).await;
    let gateway = Server::start_gateway(&dir.0, &["--store", "memory", "--upstream", &agent.base]).await;
    let mut stdio = Stdio::start(&dir.0, &[&gateway.base]).await;
    let tools = stdio.tool_names().await;
    assert!(tools.contains(&"echo".to_owned()), "{tools:?}");
    let answer = stdio.call("tools/call", json!({"name": "send_message", "arguments": {"message": "hi root"}})).await;
    assert_eq!(answer.unwrap()["content"][0]["text"], "hi root");
}

/// `agentwire mcp URL` starts while its agent is down (a desktop client would otherwise show a
/// dead server until restarted), offers the generic tools, and the agent's once it is up.
#[tokio::test]
async fn the_stdio_bridge_starts_before_its_agent_and_offers_it_once_up() {
    let dir = TempDir::new("mcp-agent-later");
    let port = agentwire_test::port_to_serve_later();
    let url = format!("http://127.0.0.1:{port}");
    let mut stdio = Stdio::start(&dir.0, &[&url]).await;
    let tools = stdio.tool_names().await;
    assert_eq!(tools, ["list_agents", "send_message", "get_task", "cancel_task"], "{tools:?}");
    let refused = stdio.call("tools/call", json!({"name": "send_message", "arguments": {"message": "hi"}})).await;
    assert!(refused.unwrap_err()["message"].as_str().unwrap().contains("no agent is offered now"));

    let address = format!("127.0.0.1:{port}");
    let _agent = Server::start(&dir.0, &["--store", "memory", "--http", &address]).await;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
    while !stdio.tool_names().await.contains(&"echo".to_owned()) {
        assert!(tokio::time::Instant::now() < deadline, "the agent's tools were not offered once it was up");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let answer = stdio.call("tools/call", json!({"name": "send_message", "arguments": {"message": "later"}})).await;
    assert_eq!(answer.unwrap()["content"][0]["text"], "later");
}

/// The model agent's MCP server (`--mcp-server URL`) is waited for a few seconds at start, as
/// one started beside the agent may not listen yet; one that never comes is a one-line error.
#[tokio::test]
async fn a_model_agents_mcp_server_is_waited_for_briefly_then_named_plainly() {
    let dir = TempDir::new("mcp-server-later");
    let port = agentwire_test::port_to_serve_later();
    let mcp_url = format!("http://127.0.0.1:{port}/mcp");
    let address = format!("127.0.0.1:{port}");
    let model = ["--agent", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--store", "memory"];
    let with_tools = [&model[..], &["--mcp-server", &mcp_url]].concat();
    // The tool server comes up just after the agent starts.
    let tool_server = ["--store", "memory", "--mcp", "--http", &address];
    let (agent, tools) = tokio::join!(Server::start(&dir.0, &with_tools), Server::start(&dir.0, &tool_server));
    drop((agent, tools));

    let output = tokio::process::Command::new(crate::common::binary())
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(&with_tools)
        .env("RUST_LOG", "warn")
        .output()
        .await
        .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr).into_owned() + &String::from_utf8_lossy(&output.stdout);
    let expected = format!("could not connect to the MCP server \"{mcp_url}\": connection refused (tried for 5 s)");
    assert!(said.contains(&expected), "{said}");
    assert!(!said.contains("rmcp::") && !said.contains("reqwest::"), "type names in {said}");
}
