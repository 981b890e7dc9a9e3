//! Budgets (`--budget`): what a caller may spend on models in a window, checked before the model
//! agent calls its model and before a gateway relays a send, charged with what the usage
//! extension reports; read and reset with `agentwire budgets`; one budget across two instances
//! on one PostgreSQL database.

use serde_json::{json, Value};

use crate::common::{fresh_database, run_agentwire, Server, TempDir};
use crate::model::{mcp_server, state, Model};
use crate::usage::{call_as, model_agent, send_as, silent_model};

const AUTH: &str = "bearer:alice=alice-token,bob=bob-token,ops=ops-token";

// The budgets' windows are of 366 days: one that ended in the middle of a test (a window starts
// on a multiple of its length since the epoch) would start its sums again.

/// The text of the status message of `task`.
fn status_text(task: &Value) -> String {
    let parts = task["status"]["message"]["parts"].as_array().cloned().unwrap_or_default();
    parts.iter().filter_map(|part| part["text"].as_str()).collect()
}

/// `agentwire budgets ARGS... URL --token TOKEN`: the exit code, and the output (or the error).
async fn budgets(args: &[&str], url: &str, token: &str) -> (i32, String) {
    let mut all = vec!["budgets"];
    all.extend_from_slice(args);
    all.extend([url, "--token", token]);
    let (code, out, err) = run_agentwire(&all).await;
    (code, if code == 0 { out } else { err })
}

/// The statement of `holder` in `agentwire budgets list --json`'s answer.
fn statement<'a>(listed: &'a Value, holder: &str) -> Option<&'a Value> {
    listed["budgets"].as_array()?.iter().find(|statement| statement["holder"] == holder)
}

/// "hello" costs 13 tokens of the scripted model, and its request is estimated at far more (4
/// bytes a token of its JSON, the tools' definitions in it): with a budget of 300, alice's tasks are served while what she spent
/// and the next request fit in it, and the task whose request would pass it fails before the model
/// is called, saying the budget, what was spent and when it resets. Her spending never passes
/// the budget. bob's budget is his own: one round of tool calls, which a task may make, and the
/// next task's round is refused. An admin sees every budget and resets alice's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_agent_refuses_a_caller_whose_budget_is_spent_until_an_admin_resets_it() {
    let dir = TempDir::new("budgets-model");
    let Some(model) = Model::start(&dir.0) else { return };
    let Some(tools) = mcp_server() else { return };
    let args = [
        "--auth",
        AUTH,
        "--budget",
        "tokens=300,window=366d",
        "--budget",
        "principal=bob,tokens=1000,tool-rounds=1,window=366d",
        "--budget-admin",
        "ops",
        "--mcp-server",
        &tools,
        "--metrics",
        "--console",
    ];
    let agent = model_agent(&dir, &model.url, &args).await;
    let base = agent.base.as_str();

    let mut served = 0;
    let refused = loop {
        let task = send_as(base, "alice-token", "hello", None).await;
        if state(&task) != "TASK_STATE_COMPLETED" {
            break task;
        }
        served += 1;
        assert!(served < 30, "alice is never refused: {task}");
    };
    let spent = 13 * served;
    assert!(served >= 1 && spent <= 300, "{served} tasks served: {}", status_text(&refused));
    assert_eq!(state(&refused), "TASK_STATE_FAILED", "{refused}");
    let why = status_text(&refused);
    let expected = format!(
        "the budget of principal alice would be passed: {spent} of 300 tokens spent in this window of 366d, and this call needs about "
    );
    assert!(why.contains(&expected), "{why}");
    assert!(why.contains("it resets at 20"), "{why}");
    assert_eq!(state(&send_as(base, "bob-token", "hello", None).await), "TASK_STATE_COMPLETED");

    // bob may make one round of tool calls: a task calls `add` and answers; the next task's
    // model asks to call it again, and the round is refused.
    let tooled = send_as(base, "bob-token", "add 2 and 3", None).await;
    assert_eq!(state(&tooled), "TASK_STATE_COMPLETED", "{tooled}");
    let tooled = send_as(base, "bob-token", "add 2 and 3", None).await;
    assert_eq!(state(&tooled), "TASK_STATE_FAILED", "{tooled}");
    assert!(status_text(&tooled).contains("the budget of principal bob is spent: 1 of 1 tool rounds"), "{tooled}");

    // alice sees her own; ops every holder charged; alice may not reset, ops may.
    let (code, out) = budgets(&["list", "--json"], base, "alice-token").await;
    assert_eq!(code, 0, "{out}");
    let own: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(own["budgets"].as_array().map(Vec::len), Some(1), "{own}");
    let alice = statement(&own, "principal:alice").unwrap();
    assert_eq!(
        (&alice["tokens"], alice["windowSeconds"].as_u64()),
        (&json!({"budget": 300, "spent": spent}), Some(366 * 86_400))
    );
    let (code, out) = budgets(&["list"], base, "ops-token").await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("principal:alice  tokens {spent}/300  resets ")), "{out}");
    // bob: "hello" (13), a task of two calls (17), a call whose round was refused (8).
    assert!(out.contains("principal:bob  tokens 38/1000  tool rounds 1/1"), "{out}");
    // The agent counts what its tasks spent in its own metrics, and its console shows it: alice
    // her own, the admin everyone's with their budgets.
    let metrics = reqwest::get(format!("{base}/metrics")).await.unwrap().text().await.unwrap();
    let alices = format!(
        "agentwire_usage_output_tokens_total{{principal=\"alice\",agent=\"(root)\",model=\"scripted\"}} {}",
        12 * served
    );
    assert!(metrics.contains(&alices), "{metrics}");
    let usage_page = |token: &'static str| async move {
        let page = reqwest::Client::new().get(format!("{base}/console/usage")).bearer_auth(token).send();
        page.await.unwrap().text().await.unwrap()
    };
    let hers = usage_page("alice-token").await;
    assert!(hers.contains("Yours (alice)") && hers.contains("<td>alice</td>"), "{hers}");
    assert!(!hers.contains("<td>bob</td>"), "{hers}");
    let everyones = usage_page("ops-token").await;
    assert!(everyones.contains("Every caller&#39;s") || everyones.contains("Every caller's"), "{everyones}");
    assert!(everyones.contains("<td>bob</td>") && everyones.contains("principal:alice"), "{everyones}");
    assert!(everyones.contains(&format!("{spent} / 300")), "alice's budget: {everyones}");

    let (code, err) = budgets(&["reset", "--principal", "alice"], base, "alice-token").await;
    assert_ne!(code, 0);
    assert!(err.contains("needs a principal named by --budget-admin"), "{err}");
    let (code, out) = budgets(&["reset", "--principal", "alice"], base, "ops-token").await;
    assert_eq!((code, out.trim()), (0, "reset the budget of principal alice"));
    assert_eq!(state(&send_as(base, "alice-token", "hello", None).await), "TASK_STATE_COMPLETED");
}

/// A gateway charges what its agents report to each caller's budget and refuses a caller whose
/// budget is spent before relaying its send: ResourceExhausted, with when to retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_refuses_to_relay_a_send_past_the_callers_budget() {
    let dir = TempDir::new("budgets-gateway");
    let Some(model) = Model::start(&dir.0) else { return };
    let agent = model_agent(&dir, &model.url, &[]).await;
    let upstream = format!("writer={}", agent.base);
    let args = ["--upstream", &upstream, "--auth", AUTH, "--budget", "principal=alice,tokens=20,window=366d"];
    let gateway = Server::start_gateway(&dir.0, &args).await;
    let writer = format!("{}/agents/writer", gateway.base);

    for _ in 0..2 {
        assert_eq!(state(&send_as(&writer, "alice-token", "hello", None).await), "TASK_STATE_COMPLETED");
    }
    let message = json!({"message": {"messageId": "m3", "role": "ROLE_USER", "parts": [{"text": "hello"}]}});
    let refused = call_as(&writer, "alice-token", "SendMessage", message.clone()).await;
    let why = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(why.contains("the budget of principal alice is spent: 26 of 20 tokens"), "{refused}");
    // Over HTTP+JSON: 429 and Retry-After, as any quota.
    let rest = reqwest::Client::new().post(format!("{writer}/message:send")).bearer_auth("alice-token");
    let rest = rest.header("A2A-Version", "1.0").json(&message).send().await.unwrap();
    assert_eq!(rest.status(), 429);
    assert!(rest.headers().contains_key("retry-after"), "{:?}", rest.headers());
    assert_eq!(state(&send_as(&writer, "bob-token", "hello", None).await), "TASK_STATE_COMPLETED");
}

/// Two instances of the model agent on one PostgreSQL database keep one budget: what alice
/// spends through one is refused her on the other, and an admin's reset on either frees both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_on_one_database_share_each_budget() {
    let Some(database) = fresh_database("budgets").await else { return };
    let dir = TempDir::new("budgets-shared");
    // The model that reports nothing: a task's request is estimated at some 30 tokens, and all it
    // spent at some 36, so that one task fits in 50 and a second would not.
    let url = silent_model().await;
    let args = ["--store", &database, "--auth", AUTH, "--budget", "tokens=50,window=366d", "--budget-admin", "ops"];
    let one = model_agent(&dir, &url, &args).await;
    let two = model_agent(&dir, &url, &args).await;

    assert_eq!(state(&send_as(&one.base, "alice-token", "hello", None).await), "TASK_STATE_COMPLETED");
    let refused = send_as(&two.base, "alice-token", "hello", None).await;
    assert_eq!(state(&refused), "TASK_STATE_FAILED", "{refused}");
    assert!(status_text(&refused).contains("the budget of principal alice would be passed"), "{refused}");
    assert_eq!(state(&send_as(&two.base, "bob-token", "hello", None).await), "TASK_STATE_COMPLETED");

    let (code, out) = budgets(&["list", "--json"], &one.base, "ops-token").await;
    assert_eq!(code, 0, "{out}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    for holder in ["principal:alice", "principal:bob"] {
        let spent = statement(&listed, holder).and_then(|s| s["tokens"]["spent"].as_u64()).unwrap_or(0);
        assert!(spent > 5, "{holder} spent on both instances is listed on each: {listed}");
    }
    let (code, out) = budgets(&["reset", "--principal", "alice"], &two.base, "ops-token").await;
    assert_eq!(code, 0, "{out}");
    assert_eq!(state(&send_as(&one.base, "alice-token", "hello", None).await), "TASK_STATE_COMPLETED");
}
