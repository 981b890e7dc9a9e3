//! A model agent's MCP tools reached as each task's caller (`--mcp-auth passthrough` and
//! `exchange`): the tool server, an agentwire server verifying JWTs itself, sees alice and bob as
//! two principals, so that bob's task cannot read what alice's made there; a token not meant for
//! the tool server fails its task before any call. The model is the scripted one behind LiteLLM
//! (model.rs); the exchange is the test token service's, found by the issuer's OpenID discovery.

use serde_json::{json, Value};

use crate::common::token_service::TokenService;
use crate::common::{Idp, Server, TempDir};
use crate::model::{answer, state, Model};

/// SendMessage of `text` to the agent at `base` as `token`'s principal; the task it ended in.
async fn send_as(base: &str, token: &str, text: &str) -> Value {
    let message =
        json!({"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": text}]});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}});
    let request = reqwest::Client::new().post(format!("{base}/")).bearer_auth(token).header("A2A-Version", "1.0");
    let answer: Value = request.json(&body).send().await.unwrap().json().await.unwrap();
    answer["result"]["task"].clone()
}

/// The ids of the tasks `token`'s principal has at `base`, asked of that server.
async fn own_tasks(base: &str, token: &str) -> Vec<String> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}});
    let request = reqwest::Client::new().post(format!("{base}/")).bearer_auth(token).header("A2A-Version", "1.0");
    let answer: Value = request.json(&body).send().await.unwrap().json().await.unwrap();
    let tasks = answer["result"]["tasks"].as_array().unwrap_or_else(|| panic!("{answer}"));
    tasks.iter().map(|task| task["id"].as_str().unwrap().to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_models_tools_reach_their_server_as_each_caller() {
    let dir = TempDir::new("model-callers");
    let Some(model) = Model::start(&dir.0) else { return };
    let idp = Idp::new(&dir.0).await;
    // The token service is the issuer itself, so that the agent finds its token endpoint.
    let Some(service) = TokenService::start(&idp, "self", "model-agent:s3cret", "mallory") else { return };
    let idp = idp.issued_by(&service.url);
    let jwt = idp.auth_args();
    let jwt: Vec<&str> = jwt.iter().map(String::as_str).collect();
    let tools =
        Server::start(&dir.0, &[&["--store", "memory", "--mcp", "--audience", "tools"][..], &jwt].concat()).await;
    let tools_url = format!("{}/mcp", tools.base);
    let at_tools = |subject: &'static str| idp.token(subject, &["tools"], None);
    let (alice_there, bob_there) = (at_tools("alice").await, at_tools("bob").await);

    // passthrough: the callers' tokens name both the model agent and the tool server.
    let mut args = vec!["--agent", "openai", "--base-url", &model.url, "--model", "scripted", "--store", "memory"];
    args.extend(["--audience", "model-agent", "--mcp-server", &tools_url, "--mcp-auth", "passthrough"]);
    args.extend(["--mcp-audience", "tools"]);
    args.extend(&jwt);
    let agent = Server::start_with_env(&dir.0, &args, &[("OPENAI_API_KEY", "sk-scripted")]).await;
    let both = |subject: &'static str| idp.token(subject, &["model-agent", "tools"], None);
    let (alice, bob) = (both("alice").await, both("bob").await);

    let task = send_as(&agent.base, &alice, r#"call send_message {"message": "alice's errand"}"#).await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
    let alices = own_tasks(&tools.base, &alice_there).await;
    assert_eq!(alices.len(), 1, "alice's tool call is a task of hers at the tool server");
    assert!(own_tasks(&tools.base, &bob_there).await.is_empty(), "bob has no task there");
    // Bob's model task cannot read alice's task at the tool server: there it is alice's.
    let read = format!(r#"call get_task {{"taskId": "{}"}}"#, alices[0]);
    let task = send_as(&agent.base, &bob, &read).await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
    assert!(answer(&task).to_lowercase().contains("not found"), "bob read alice's task: {task}");
    let task = send_as(&agent.base, &alice, &read).await;
    assert!(answer(&task).contains("alice's errand"), "alice reads her own task: {task}");

    // A token meant for the model agent alone fails its task, saying why, and reaches no tool.
    let carol = idp.token("carol", &["model-agent"], None).await;
    let task = send_as(&agent.base, &carol, r#"call send_message {"message": "carol's"}"#).await;
    assert_eq!(state(&task), "TASK_STATE_FAILED", "{task}");
    let said = task["status"]["message"]["parts"][0]["text"].as_str().unwrap_or_default();
    assert!(said.contains(r#"does not name "tools""#), "{task}");
    assert!(own_tasks(&tools.base, &at_tools("carol").await).await.is_empty(), "carol's call reached the tools");

    // exchange: tokens meant for the model agent alone, exchanged for tokens meant for the tool
    // server at the endpoint the issuer's configuration names.
    let mut args = vec!["--agent", "openai", "--base-url", &model.url, "--model", "scripted", "--store", "memory"];
    args.extend(["--audience", "model-agent", "--mcp-server", &tools_url, "--mcp-auth", "exchange"]);
    args.extend(["--mcp-audience", "tools", "--token-exchange-client", "model-agent"]);
    args.extend(&jwt);
    let env = [("OPENAI_API_KEY", "sk-scripted"), ("AGENTWIRE_TOKEN_EXCHANGE_SECRET", "s3cret")];
    let agent = Server::start_with_env(&dir.0, &args, &env).await;
    let only_agent = |subject: &'static str| idp.token(subject, &["model-agent"], None);
    let (alice, bob, mallory) = (only_agent("alice").await, only_agent("bob").await, only_agent("mallory").await);
    for (token, text) in [(&alice, "alice's second"), (&alice, "alice's third"), (&bob, "bob's")] {
        let task = send_as(&agent.base, token, &format!(r#"call send_message {{"message": "{text}"}}"#)).await;
        assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
    }
    assert_eq!(own_tasks(&tools.base, &alice_there).await.len(), 3);
    assert_eq!(own_tasks(&tools.base, &bob_there).await.len(), 1);
    let made = service.exchanges().await;
    let subjects: Vec<&str> = made.iter().map(|(subject, _, _)| subject.as_str()).collect();
    assert_eq!(subjects, ["alice", "bob"], "one exchange per caller, kept: {made:?}");
    for (subject, audience, claims) in &made {
        assert_eq!((audience.as_str(), &claims["sub"]), ("tools", &json!(subject)));
        assert_eq!(claims["act"]["sub"], "model-agent", "the issued token names the agent as the actor");
    }
    // A refused exchange fails the task with the provider's reason.
    let task = send_as(&agent.base, &mallory, r#"call send_message {"message": "mallory's"}"#).await;
    assert_eq!(state(&task), "TASK_STATE_FAILED", "{task}");
    let said = task["status"]["message"]["parts"][0]["text"].as_str().unwrap_or_default();
    assert!(said.contains("mallory may not act through model-agent"), "{task}");
}

#[tokio::test]
async fn reaching_tools_as_the_callers_needs_jwts_and_a_url_server() {
    let dir = TempDir::new("model-callers-flags");
    let idp = Idp::new(&dir.0).await;
    let jwt = [&idp.auth_args()[..], &["--audience".to_owned(), "m".to_owned()]].concat();
    let jwt: Vec<&str> = jwt.iter().map(String::as_str).collect();
    let stdio_only = [&jwt[..], &["--mcp-server", "true", "--mcp-auth", "passthrough"]].concat();
    let model = ["serve", "--agent", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"];
    let two_issuers =
        [&jwt[..], &["--auth", "jwt:https://other.test", "--mcp-server", "http://127.0.0.1:9/mcp"]].concat();
    let two_issuers = [&two_issuers[..], &["--mcp-auth", "exchange", "--token-exchange-client", "m"]].concat();
    let cases: [(&[&str], &str); 6] = [
        (&["--mcp-server", "http://127.0.0.1:9/mcp", "--mcp-auth", "passthrough"], "needs --auth jwt:"),
        (&["--mcp-server", "http://127.0.0.1:9/mcp", "--mcp-audience", "tools"], "--mcp-audience is for --mcp-auth"),
        (&["--mcp-server", "http://127.0.0.1:9/mcp", "--token-exchange-client", "m"], "are for --mcp-auth exchange"),
        (&stdio_only, "none is given"),
        (&two_issuers, "with several --auth jwt: issuers, name the token endpoint"),
        (&["--mcp-server", "http://127.0.0.1:9/mcp", "--mcp-audience", ""], "--mcp-audience is for --mcp-auth"),
    ];
    for (flags, said) in cases {
        let args = [&model[..], &["--store", "memory", "--http", "127.0.0.1:0"], flags].concat();
        let (code, out, err) = crate::common::run_agentwire(&args).await;
        assert_ne!(code, 0, "{flags:?}: {out}");
        assert!(err.contains(said), "{flags:?}: {err}");
    }
}
