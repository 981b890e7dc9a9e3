//! A gateway that calls its agent as each caller, with the caller's own token (`--upstream-auth
//! passthrough`) or one exchanged for it (`--upstream-auth exchange`, RFC 8693, against the test
//! token service of interop/token-service): the agent, verifying JWTs itself, sees alice and bob
//! as two principals, with their own tasks and their own rate limits; a token not meant for the
//! agent, or an exchange refused, stops the call before it is sent.

use serde_json::{json, Value};

use crate::common::token_service::TokenService;
use crate::common::{run_agentwire, Idp, Server, TempDir};
use crate::mcp::Session;

/// JSON-RPC `method` at `url` with `token`: the HTTP status and the answer.
async fn call(url: &str, token: &str, method: &str, params: Value) -> (u16, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let request = reqwest::Client::new().post(url).bearer_auth(token).header("A2A-Version", "1.0").json(&body);
    let response = request.send().await.expect("an answer");
    let status = response.status().as_u16();
    (status, response.json().await.expect("JSON"))
}

fn message(text: &str) -> Value {
    json!({"message": {"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": text}]}})
}

/// The ids of the tasks `token`'s principal has at the agent at `base`, asked of the agent itself.
async fn own_tasks(base: &str, token: &str) -> Vec<String> {
    let (status, answer) = call(&format!("{base}/"), token, "ListTasks", json!({})).await;
    assert_eq!(status, 200, "{answer}");
    let tasks = answer["result"]["tasks"].as_array().unwrap_or_else(|| panic!("{answer}"));
    tasks.iter().map(|task| task["id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test]
async fn an_agent_behind_a_gateway_sees_each_caller_as_the_principal_it_is() {
    let dir = TempDir::new("caller-tokens");
    let idp = Idp::new(&dir.0).await;
    let token = |subject: &'static str, audiences: &'static [&'static str]| idp.token(subject, audiences, None);
    let jwt = idp.auth_args();
    let jwt: Vec<&str> = jwt.iter().map(String::as_str).collect();
    let agent_args = [&["--store", "memory", "--audience", "weather-agent"][..], &jwt].concat();
    let agent = Server::start(&dir.0, &agent_args).await;
    let (alice, bob) = (token("alice", &["gw", "weather-agent"]).await, token("bob", &["gw", "weather-agent"]).await);
    let gateway_only = token("carol", &["gw"]).await;

    // Without a store the gateway relays each call; with one it mirrors the agent's tasks.
    for store in [None, Some("memory")] {
        let upstream = format!("weather={}", agent.base);
        let mut args = vec!["--upstream", &upstream, "--audience", "gw", "--upstream-auth", "passthrough"];
        args.extend(["--upstream-audience", "weather=weather-agent", "--mcp"]);
        args.extend(&jwt);
        args.extend(store.map(|store| ["--store", store]).into_iter().flatten());
        let gateway = Server::start_gateway(&dir.0, &args).await;
        let weather = format!("{}/agents/weather/", gateway.base);
        let (alice_before, bob_before) = (own_tasks(&agent.base, &alice).await, own_tasks(&agent.base, &bob).await);

        let (status, answer) = call(&weather, &alice, "SendMessage", message("alice's")).await;
        assert_eq!(status, 200, "{store:?}: {answer}");
        assert!(answer["result"]["task"]["id"].is_string(), "{store:?}: {answer}");
        let (status, answer) = call(&weather, &bob, "SendMessage", message("bob's")).await;
        assert_eq!(status, 200, "{store:?}: {answer}");
        let (alice_after, bob_after) = (own_tasks(&agent.base, &alice).await, own_tasks(&agent.base, &bob).await);
        let new = |after: &Vec<String>, before: &Vec<String>| -> Vec<String> {
            after.iter().filter(|id| !before.contains(id)).cloned().collect()
        };
        let (alices, bobs) = (new(&alice_after, &alice_before), new(&bob_after, &bob_before));
        assert_eq!((alices.len(), bobs.len()), (1, 1), "{store:?}: each caller's send is a task of hers at the agent");
        // Bob cannot read alice's task at the agent: it is alice's.
        let (_, answer) = call(&format!("{}/", agent.base), &bob, "GetTask", json!({"id": alices[0]})).await;
        assert!(answer["error"]["message"].as_str().is_some_and(|m| m.contains("not found")), "{answer}");

        // A token meant for the gateway alone is refused there, and nothing reaches the agent.
        let (status, answer) = call(&weather, &gateway_only, "SendMessage", message("carol's")).await;
        let refusal = answer["error"]["message"].as_str().unwrap_or_default().to_owned();
        assert!(refusal.contains(r#"does not name "weather-agent""#), "{store:?}: {status} {answer}");
        let carol_at_agent = token("carol", &["weather-agent"]).await;
        assert!(own_tasks(&agent.base, &carol_at_agent).await.is_empty(), "{store:?}: carol's send reached the agent");

        // An MCP tool call goes as its caller too.
        let mut session = Session::open(&gateway.base, &alice).await;
        let tool = session.tool_names().await.into_iter().find(|name| name.starts_with("weather")).unwrap();
        let answer = session.call_tool(&tool, json!({"message": "alice over MCP"})).await.unwrap();
        assert_eq!(answer["content"][0]["text"], "alice over MCP", "{answer}");
        assert_eq!(own_tasks(&agent.base, &alice).await.len(), alice_after.len() + 1, "{store:?}");
        assert_eq!(own_tasks(&agent.base, &bob).await.len(), bob_after.len(), "{store:?}");
    }

    // Each caller has her own rate limit at the agent: alice spends hers, bob still sends.
    let limited =
        [&["--store", "memory", "--audience", "weather-agent", "--rate-limit", "1", "--rate-burst", "4"][..], &jwt];
    let agent = Server::start(&dir.0, &limited.concat()).await;
    let upstream = format!("weather={}", agent.base);
    let mut args = vec!["--upstream", &upstream, "--audience", "gw", "--upstream-auth", "passthrough"];
    args.extend(["--upstream-audience", "weather=weather-agent"]);
    args.extend(&jwt);
    let gateway = Server::start_gateway(&dir.0, &args).await;
    let weather = format!("{}/agents/weather/", gateway.base);
    let mut refused = 0;
    for _ in 0..12 {
        let (_, answer) = call(&weather, &alice, "SendMessage", message("again")).await;
        refused += usize::from(answer.get("error").is_some());
    }
    assert!(refused > 0, "alice was never refused by her rate limit at the agent");
    let (status, answer) = call(&weather, &bob, "SendMessage", message("bob, after alice's flood")).await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer["result"]["task"]["id"].is_string(), "bob is refused for alice's flood: {answer}");
}

#[tokio::test]
async fn calling_as_the_callers_needs_jwts_and_no_upstream_token() {
    let dir = TempDir::new("caller-tokens-flags");
    let agent = "http://127.0.0.1:9";
    let cases: [(&[&str], &str); 5] = [
        (&["--upstream-auth", "passthrough"], "needs --auth jwt:"),
        (&["--upstream-auth", "passthrough", "--upstream-token", "t"], "--upstream-token is not sent"),
        (&["--upstream-audience", "x"], "--upstream-audience is for --upstream-auth passthrough and exchange"),
        (&["--upstream-auth", "exchange"], "--upstream-auth exchange needs --auth jwt:"),
        (&["--token-exchange-url", "http://127.0.0.1:9/token"], "they need --auth jwt:"),
    ];
    for (flags, said) in cases {
        let args = [&["gateway", "--upstream", agent, "--http", "127.0.0.1:0"][..], flags].concat();
        let (code, out, err) = run_agentwire(&args).await;
        assert_ne!(code, 0, "{flags:?}: {out}");
        assert!(err.contains(said), "{flags:?}: {err}");
    }
    drop(dir);
}

#[tokio::test]
async fn an_agent_behind_a_gateway_gets_tokens_exchanged_for_its_callers() {
    let dir = TempDir::new("caller-tokens-exchange");
    let idp = Idp::new(&dir.0).await;
    let Some(service) = TokenService::start(&idp, Idp::ISSUER, "gw:s3cret", "mallory") else { return };
    let jwt = idp.auth_args();
    let jwt: Vec<&str> = jwt.iter().map(String::as_str).collect();
    let agent =
        Server::start(&dir.0, &[&["--store", "memory", "--audience", "weather-agent", "--console"][..], &jwt].concat())
            .await;
    // Tokens meant for the gateway alone: the agent accepts none of them as they are.
    let (alice, bob, mallory) = (
        idp.token("alice", &["gw"], None).await,
        idp.token("bob", &["gw"], None).await,
        idp.token("mallory", &["gw"], None).await,
    );
    let at_agent = |subject: &'static str| idp.token(subject, &["weather-agent"], None);
    let (alice_there, bob_there, mallory_there) =
        (at_agent("alice").await, at_agent("bob").await, at_agent("mallory").await);
    let token_url = format!("{}/token", service.url);

    for store in [None, Some("memory")] {
        let upstream = format!("weather={}", agent.base);
        let mut args = vec!["--upstream", &upstream, "--audience", "gw", "--upstream-auth", "exchange", "--mcp"];
        args.extend(["--upstream-audience", "weather=weather-agent", "--token-exchange-url", &token_url]);
        args.extend(["--token-exchange-client", "gw"]);
        args.extend(&jwt);
        args.extend(store.map(|store| ["--store", store]).into_iter().flatten());
        let secret = [("AGENTWIRE_TOKEN_EXCHANGE_SECRET", "s3cret")];
        let gateway = Server::start_gateway_with_env(&dir.0, &args, &secret).await;
        let weather = format!("{}/agents/weather/", gateway.base);
        let (alice_before, bob_before) =
            (own_tasks(&agent.base, &alice_there).await, own_tasks(&agent.base, &bob_there).await);
        let exchanges_before = service.exchanges().await.len();

        for (token, text) in [(&alice, "alice's"), (&alice, "alice's again"), (&bob, "bob's")] {
            let (status, answer) = call(&weather, token, "SendMessage", message(text)).await;
            assert_eq!(status, 200, "{store:?}: {answer}");
            assert!(answer["result"]["task"]["id"].is_string(), "{store:?}: {answer}");
        }
        let alices = own_tasks(&agent.base, &alice_there).await;
        assert_eq!(alices.len(), alice_before.len() + 2, "{store:?}");
        assert_eq!(own_tasks(&agent.base, &bob_there).await.len(), bob_before.len() + 1, "{store:?}");
        let (_, answer) = call(&format!("{}/", agent.base), &bob_there, "GetTask", json!({"id": alices[0]})).await;
        assert!(answer["error"]["message"].as_str().is_some_and(|m| m.contains("not found")), "{answer}");
        // The agent keeps who asked, and through whom: alice, through the gateway.
        let (_, answer) = call(&format!("{}/", agent.base), &alice_there, "GetTask", json!({"id": alices[0]})).await;
        let asked = &answer["result"]["metadata"]["agentwire.caller"];
        assert_eq!(asked, &json!({"principal": "https://idp.test#alice", "actors": ["gw"]}), "{answer}");
        let page = reqwest::Client::new()
            .get(format!("{}/console/tasks/{}", agent.base, alices[0]))
            .bearer_auth(&alice_there)
            .send()
            .await
            .unwrap();
        let page = page.text().await.unwrap();
        assert!(
            page.contains("Asked by <code>https://idp.test#alice</code> through <code>gw</code>"),
            "the console's task page: {page}"
        );

        // One exchange per caller: alice's second send used the token kept for her.
        let made = service.exchanges().await.split_off(exchanges_before);
        let subjects: Vec<&str> = made.iter().map(|(subject, _, _)| subject.as_str()).collect();
        assert_eq!(subjects, ["alice", "bob"], "{store:?}: {made:?}");
        for (subject, audience, claims) in &made {
            assert_eq!(audience, "weather-agent");
            assert_eq!(
                (&claims["sub"], &claims["aud"], &claims["act"]["sub"]),
                (&json!(subject), &json!("weather-agent"), &json!("gw"))
            );
        }

        // A refused exchange is the caller's error, with the provider's reason; nothing is sent.
        let (_, answer) = call(&weather, &mallory, "SendMessage", message("mallory's")).await;
        let refusal = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            refusal.contains("the exchange failed")
                && refusal.contains("invalid_grant: mallory may not act through gw"),
            "{answer}"
        );
        assert!(own_tasks(&agent.base, &mallory_there).await.is_empty(), "{store:?}: mallory's send reached the agent");

        // An MCP tool call goes as its caller too.
        let mut session = Session::open(&gateway.base, &alice).await;
        let tool = session.tool_names().await.into_iter().find(|name| name.starts_with("weather")).unwrap();
        let answer = session.call_tool(&tool, json!({"message": "alice over MCP"})).await.unwrap();
        assert_eq!(answer["content"][0]["text"], "alice over MCP", "{answer}");
        assert_eq!(own_tasks(&agent.base, &alice_there).await.len(), alices.len() + 1, "{store:?}");
    }
}

#[tokio::test]
async fn a_registered_agent_gets_tokens_exchanged_for_its_registered_url() {
    let dir = TempDir::new("caller-tokens-registered");
    let idp = Idp::new(&dir.0).await;
    let Some(service) = TokenService::start(&idp, Idp::ISSUER, "gw:s3cret", "mallory") else { return };
    let jwt = idp.auth_args();
    let jwt: Vec<&str> = jwt.iter().map(String::as_str).collect();
    // The agent takes tokens meant for its own URL: the audience a registration is called with.
    let address = format!("127.0.0.1:{}", agentwire_test::port_to_serve_later());
    let url = format!("http://{address}");
    let agent =
        Server::start(&dir.0, &[&["--store", "memory", "--http", &address, "--audience", &url][..], &jwt].concat())
            .await;
    let token_url = format!("{}/token", service.url);
    let mut args = vec!["--audience", "gw", "--registry-admin", "https://idp.test#ops"];
    args.extend(["--token-exchange-url", &token_url, "--token-exchange-client", "gw"]);
    args.extend(&jwt);
    let gateway = Server::start_gateway_with_env(&dir.0, &args, &[("AGENTWIRE_TOKEN_EXCHANGE_SECRET", "s3cret")]).await;
    let ops = idp.token("ops", &["gw"], None).await;
    let (code, out, err) = run_agentwire(&[
        "registry",
        "add",
        &gateway.base,
        &url,
        "--name",
        "reg",
        "--caller-auth",
        "exchange",
        "--token",
        &ops,
    ])
    .await;
    assert_eq!(code, 0, "{out}{err}");

    let alice = idp.token("alice", &["gw"], None).await;
    let reg = format!("{}/agents/reg/", gateway.base);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    let answer = loop {
        let (_, answer) = call(&reg, &alice, "SendMessage", message("alice's, registered")).await;
        let unreached = answer["error"]["message"].as_str().is_some_and(|m| m.contains("cannot be reached"));
        if !unreached || tokio::time::Instant::now() > deadline {
            break answer;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert!(answer["result"]["task"]["id"].is_string(), "{answer}");
    let alice_there = idp.token("alice", &[&url], None).await;
    assert_eq!(own_tasks(&agent.base, &alice_there).await.len(), 1, "alice's send is hers at the agent");
    let made = service.exchanges().await;
    assert_eq!(made.len(), 1, "{made:?}");
    let (subject, audience, claims) = &made[0];
    assert_eq!((subject.as_str(), audience.as_str(), &claims["act"]["sub"]), ("alice", url.as_str(), &json!("gw")));
}
