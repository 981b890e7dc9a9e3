//! An upstream agent's usage reports against the gateway that sums them: counts past any sum, a
//! new model name (quotes, line ends and all) on every task, and reports that are not numbers.
//! The gateway's metrics must stay bounded in series, parseable, and counting forward.

use axum::routing::post;
use axum::Json;
use serde_json::{json, Value};

use crate::common::{stub, Server, TempDir};

/// Series the gateway is given for usage: few, so that the cap shows within a few tasks.
const SERIES: usize = 3;

/// An agent whose every task reports `u64::MAX` tokens of a model with a name of its own.
pub(crate) async fn inflating_agent() -> String {
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    stub::agent(post(move |Json(request): Json<Value>| {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        async move {
            let mut task = stub::task(&format!("t{n}"), "TASK_STATE_COMPLETED");
            let usage = if n % 5 == 4 {
                json!({"inputTokens": "lots", "model": "unread"})
            } else {
                json!({"inputTokens": u64::MAX, "outputTokens": u64::MAX, "modelCalls": 1,
                       "model": format!("m{n}\" }} evil{{x=\"1\"}}\n# TYPE injected counter\n")})
            };
            task["metadata"] = json!({agentwire_types::USAGE_EXTENSION: usage});
            Json(stub::answer(&request, json!({"task": task})))
        }
    }))
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_reports_keep_the_gateways_metrics_bounded_and_forward() {
    let dir = TempDir::new("hostile-usage");
    let upstream = format!("inflater={}", inflating_agent().await);
    let series = SERIES.to_string();
    let args = ["--upstream", &upstream, "--metrics", "--metrics-usage-series", &series, "--console"];
    let gateway = Server::start_gateway(&dir.0, &args).await;
    let client = reqwest::Client::new();
    let mut scrapes = Vec::new();
    for n in 0..10 {
        let message = json!({"messageId": format!("m{n}"), "role": "ROLE_USER", "parts": [{"text": "spend"}]});
        let body = json!({"jsonrpc": "2.0", "id": n, "method": "SendMessage", "params": {"message": message}});
        let url = format!("{}/agents/inflater/", gateway.base);
        let answer: Value = client.post(url).json(&body).send().await.unwrap().json().await.unwrap();
        assert_eq!(answer["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{answer}");
        scrapes.push(client.get(format!("{}/metrics", gateway.base)).send().await.unwrap().text().await.unwrap());
    }
    let text = scrapes.last().unwrap();
    // Parseable: no line a model name made, every sample a name and a number.
    assert!(!text.lines().any(|line| line.starts_with("# TYPE injected")), "{text}");
    let reports: Vec<&str> = text.lines().filter(|line| line.starts_with("agentwire_usage_reports_total{")).collect();
    assert_eq!(reports.len(), SERIES + 1, "capped, and the rest in (other): {reports:?}");
    assert!(reports.iter().any(|line| line.contains("model=\"(other)\"")), "{reports:?}");
    // Eight readable reports of ten (every fifth is not a number), counted forward: the shared
    // series takes several reports of u64::MAX tokens and never wraps around.
    let samples = |text: &str, name: &str| -> Vec<(String, u128)> {
        let prefix = format!("{name}{{");
        let lines = text.lines().filter(|line| line.starts_with(&prefix));
        lines
            .map(|line| {
                let (series, value) = line.rsplit_once(' ').unwrap();
                (series.to_owned(), value.parse().unwrap())
            })
            .collect()
    };
    let reports: u128 = samples(text, "agentwire_usage_reports_total").iter().map(|(_, n)| n).sum();
    assert_eq!(reports, 8, "{text}");
    let other = |text: &str| {
        let shared =
            samples(text, "agentwire_usage_input_tokens_total").into_iter().find(|(s, _)| s.contains("(other)"));
        shared.map_or(0, |(_, value)| value)
    };
    let counted: Vec<u128> = scrapes.iter().map(|text| other(text)).collect();
    assert!(counted.windows(2).all(|pair| pair[1] >= pair[0]), "the shared series went backwards: {counted:?}");
    assert!(counted[9] > counted[SERIES + 1], "{counted:?}");

    // The console's usage page shows the same rows, the model names as text.
    let page = client.get(format!("{}/console/usage", gateway.base)).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let page = page.text().await.unwrap();
    assert!(page.contains("<code>m0&quot; } evil{x=&quot;1&quot;}"), "{page}");
    assert!(page.contains("<code>(other)</code>"), "{page}");
}
