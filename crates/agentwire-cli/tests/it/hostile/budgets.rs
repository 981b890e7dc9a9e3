//! Budgets against those who would spend past them or free them: an upstream that reports more
//! tokens than any sum holds, a web page that has a browser on the server's host reset a budget,
//! and a caller who resets its own.

use serde_json::{json, Value};

use super::usage::inflating_agent;
use crate::common::{Server, TempDir};

/// A send of `text` to `url` as `token`: the JSON-RPC answer.
async fn send(url: &str, token: &str, text: &str) -> Value {
    let message =
        json!({"messageId": uuid::Uuid::new_v4().to_string(), "role": "ROLE_USER", "parts": [{"text": text}]});
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}});
    let request = reqwest::Client::new().post(url).bearer_auth(token).json(&body);
    request.send().await.unwrap().json().await.unwrap()
}

/// Reports of u64::MAX tokens (and reports that are not numbers) charge alice's budget up to
/// what a sum holds, without wrapping round to a budget left: she is refused, bob is not, and the
/// budgets still read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_past_any_sum_spend_the_callers_budget_without_wrapping() {
    let dir = TempDir::new("hostile-budgets");
    let upstream = format!("inflater={}", inflating_agent().await);
    let auth = "bearer:alice=alice-token,bob=bob-token";
    let args =
        ["--upstream", &upstream, "--auth", auth, "--budget", "tokens=1000000,window=366d", "--budget-admin", "bob"];
    let gateway = Server::start_gateway(&dir.0, &args).await;
    let url = format!("{}/agents/inflater/", gateway.base);
    let first = send(&url, "alice-token", "spend").await;
    assert_eq!(first["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{first}");
    // Twice u64::MAX, and again: a sum that wrapped would leave her budget untouched.
    for n in 0..3 {
        let refused = send(&url, "alice-token", "spend").await;
        let why = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(why.contains("the budget of principal alice is spent"), "{n}: {refused}");
    }
    let bobs = send(&url, "bob-token", "spend").await;
    assert_eq!(bobs["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{bobs}");
    let listed = reqwest::Client::new().get(format!("{}/budgets", gateway.base)).bearer_auth("bob-token");
    let listed: Value = listed.send().await.unwrap().json().await.unwrap();
    let alice = listed["budgets"].as_array().unwrap().iter().find(|s| s["holder"] == "principal:alice").unwrap();
    assert_eq!(alice["tokens"]["spent"].as_u64(), Some(u64::MAX), "{listed}");
}

/// A server that authenticates no one lets callers on its own host reset budgets: a page of any
/// other origin, in a browser on that host, may not, and the spending stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_page_of_another_origin_cannot_reset_a_budget() {
    let dir = TempDir::new("hostile-budget-origin");
    let upstream = format!("inflater={}", inflating_agent().await);
    let gateway = Server::start_gateway(&dir.0, &["--upstream", &upstream, "--budget", "tokens=10,window=366d"]).await;
    let url = format!("{}/agents/inflater/", gateway.base);
    assert!(send(&url, "", "spend").await["result"].is_object());
    assert!(send(&url, "", "spend").await["error"].is_object(), "the anonymous budget is spent");

    let reset = format!("{}/budgets/principal/(anonymous)", gateway.base);
    let client = reqwest::Client::new();
    for origin in ["http://evil.example", "null", "http://127.0.0.1:1"] {
        let answer = client.delete(&reset).header("Origin", origin).send().await.unwrap();
        assert_eq!(answer.status(), 403, "{origin}");
        assert!(send(&url, "", "spend").await["error"].is_object(), "{origin}: the budget stays spent");
    }
    let host = gateway.base.trim_start_matches("http://");
    let own_page = client.delete(&reset).header("Origin", format!("http://{host}")).send().await.unwrap();
    assert_eq!(own_page.status(), 204);
    assert!(send(&url, "", "spend").await["result"].is_object(), "reset from the server's own origin");
}
