//! `--mcp`: agents as MCP tools at `/mcp`, for MCP callers who are A2A callers: authenticated by
//! the server's `--auth` (refused with a challenge naming the protected-resource metadata),
//! charged to their quotas, owning the tasks their calls make, and offered only the agents they
//! may see. The official MCP SDKs' clients are run against it in the interop matrix
//! (interop/run.py); these tests speak MCP's streamable HTTP transport by hand, to check what a
//! client library would hide.

use serde_json::{json, Value};

use crate::common::{Server, TempDir};

/// An MCP session over streamable HTTP, as MCP 2025-11-25 opens one.
struct Session {
    http: reqwest::Client,
    url: String,
    token: String,
    id: String,
    next: u64,
}

impl Session {
    async fn open(base: &str, token: &str) -> Self {
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
    async fn call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
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

    async fn tool_names(&mut self) -> Vec<String> {
        let tools = self.call("tools/list", json!({})).await.unwrap();
        tools["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
    }

    async fn call_tool(&mut self, name: &str, arguments: Value) -> Result<Value, Value> {
        self.call("tools/call", json!({"name": name, "arguments": arguments})).await
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

/// A client of MCP's tasks extension gets an MCP task for a call that outlasts its wait, or that
/// asks for input: `tasks/get` follows the A2A task (for its caller alone), `tasks/update`
/// answers its question, and `tasks/cancel` cancels it.
#[tokio::test]
async fn long_calls_become_mcp_tasks_that_follow_their_a2a_tasks() {
    let dir = TempDir::new("mcp-tasks");
    let auth = "bearer:alice=alice-token,bob=bob-token";
    let server = Server::start(&dir.0, &["--agent", "conformance", "--store", "memory", "--auth", auth, "--mcp"]).await;
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let mut alice = Session::open_with(&server.base, "alice-token", tasks.clone()).await;
    let mut bob = Session::open_with(&server.base, "bob-token", tasks).await;

    // A task that works until canceled: the call answers with an MCP task after its wait.
    let created = alice.call_tool("send_message", json!({"message": "tck-cancel please"})).await.unwrap();
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(created["status"], "working", "{created}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert!(id.starts_with("agentwire-conformance-agent/"), "{id}");
    let read = alice.call("tasks/get", json!({"taskId": id})).await.unwrap();
    assert_eq!(read["status"], "working", "{read}");
    let refused = bob.call("tasks/get", json!({"taskId": id})).await.unwrap_err();
    assert_eq!(refused["code"], -32002, "bob does not see alice's task: {refused}");
    alice.call("tasks/cancel", json!({"taskId": id})).await.unwrap();
    let read = alice.call("tasks/get", json!({"taskId": id})).await.unwrap();
    assert_eq!(read["status"], "cancelled", "{read}");

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
