//! The seed corpora: every method of every generation on every binding, and every answer a
//! client reads, written by the project's own encoders from [`samples`](crate::samples), beside
//! the literal requests of the repository's tests, the interop clients and the spec digest (the
//! older spellings no encoder here writes). `examples/seed_corpus.rs` writes them to `corpus/`.

use agentwire_types::dialect::v03::proto::{CreatePushConfig, Proto};
use agentwire_types::dialect::v03::V03;
use agentwire_types::jsonrpc::method_name;
use agentwire_types::{rest, A2aRequest, Dialect};
use serde::Serialize;
use serde_json::{json, Value};

use crate::samples::{self, CONFIG_ID, TASK_ID};

mod answers;

/// One input of a target's seed corpus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seed {
    /// The target it is for.
    pub target: &'static str,
    /// Its file name, which says what it is.
    pub name: String,
    /// The input.
    pub data: Vec<u8>,
}

/// Every seed of every target.
pub fn seeds() -> Vec<Seed> {
    let mut seeds = Seeds::default();
    jsonrpc(&mut seeds);
    rest(&mut seeds);
    answers::dialects(&mut seeds);
    answers::protojson(&mut seeds);
    answers::protobuf(&mut seeds);
    answers::sse(&mut seeds);
    seeds.0
}

/// The libFuzzer dictionary of the text targets: JSON's tokens, the HTTP and SSE tokens the
/// requests and streams are made of, and every member name and short string value of the seeds
/// (the fuzzer cannot see serde compare member names, so it is told them). One `"token"` a line.
pub fn dictionary() -> String {
    const FIXED: [&str; 33] = [
        "{",
        "}",
        "[",
        "]",
        ":",
        ",",
        "\"\"",
        "true",
        "false",
        "null",
        "-1",
        "1e400",
        "0.5",
        "\"\\u0000\"",
        "\"\\ud800\"",
        "GET ",
        "POST ",
        "DELETE ",
        "OPTIONS ",
        "/v1",
        "/tasks/",
        ":cancel",
        ":subscribe",
        "/pushNotificationConfigs",
        "\n\n",
        "content-type: application/json\n",
        "a2a-version: ",
        "data: ",
        "id: ",
        "event: ",
        "retry: ",
        "\r\n",
        "\u{feff}",
    ];
    let mut tokens: Vec<Vec<u8>> = FIXED.iter().map(|t| t.as_bytes().to_vec()).collect();
    for seed in seeds() {
        let mut quoted = seed.data.split(|b| *b == b'"').skip(1).step_by(2);
        let words = quoted.by_ref().filter(|word| {
            (1..=40).contains(&word.len()) && word.iter().all(|b| b.is_ascii_alphanumeric() || b"-_/:.+@".contains(b))
        });
        tokens.extend(words.map(|word| [b"\"", word, b"\""].concat()));
    }
    tokens.sort();
    tokens.dedup();
    let escape = |token: &[u8]| -> String {
        token
            .iter()
            .map(|b| match b {
                b'"' | b'\\' => format!("\\x{b:02x}"),
                0x20..=0x7e => char::from(*b).to_string(),
                _ => format!("\\x{b:02x}"),
            })
            .collect()
    };
    tokens.iter().map(|token| format!("\"{}\"\n", escape(token))).collect()
}

/// The seeds written so far.
#[derive(Default)]
pub(crate) struct Seeds(Vec<Seed>);

impl Seeds {
    pub(crate) fn add(&mut self, target: &'static str, name: impl Into<String>, data: impl Into<Vec<u8>>) {
        let name = name.into().replace(['/', ' ', ':', '?', '.'], "-");
        assert!(!self.0.iter().any(|s| s.target == target && s.name == name), "two {target} seeds named {name}");
        self.0.push(Seed { target, name, data: data.into() });
    }

    /// A seed of a target that selects its decoder by the first byte.
    pub(crate) fn add_selected(&mut self, target: &'static str, name: impl Into<String>, selector: u8, data: &[u8]) {
        self.add(target, name, [&[selector][..], data].concat());
    }
}

/// JSON text.
pub(crate) fn to_json(value: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(value).expect("a sample encodes")
}

/// A request of every operation, built from the samples.
fn requests() -> Vec<A2aRequest> {
    vec![
        A2aRequest::SendMessage(samples::send_request(samples::message("m-3", "every part"))),
        A2aRequest::SendStreamingMessage(samples::send_request(samples::message("tck-stream-001", "stream"))),
        A2aRequest::GetTask(samples::get_task()),
        A2aRequest::ListTasks(samples::list_tasks()),
        A2aRequest::CancelTask(samples::cancel_task()),
        A2aRequest::SubscribeToTask(samples::subscribe()),
        A2aRequest::CreatePushConfig(samples::push_config()),
        A2aRequest::GetPushConfig(samples::config_ref()),
        A2aRequest::ListPushConfigs(samples::list_push_configs()),
        A2aRequest::DeletePushConfig(samples::config_ref()),
        A2aRequest::GetExtendedAgentCard(samples::extended_card()),
    ]
}

/// SendMessage of each message the TCK and the interop clients send.
fn tck_sends() -> impl Iterator<Item = A2aRequest> {
    samples::tck_messages().into_iter().map(|m| A2aRequest::SendMessage(samples::send_request(m)))
}

/// The params of `request` as `dialect` writes them (v1.0 or v0.3).
fn params(request: &A2aRequest, dialect: Dialect) -> Value {
    fn encode<T: Serialize>(request: &T, dialect: Dialect) -> Value
    where
        for<'a> V03<'a, T>: Serialize,
    {
        match dialect {
            Dialect::V03 => serde_json::to_value(V03(request)),
            Dialect::V1 | Dialect::Legacy => serde_json::to_value(request),
        }
        .expect("a sample encodes")
    }
    match request {
        A2aRequest::SendMessage(r) | A2aRequest::SendStreamingMessage(r) => encode(r, dialect),
        A2aRequest::GetTask(r) => encode(r, dialect),
        A2aRequest::ListTasks(r) => encode(r, dialect),
        A2aRequest::CancelTask(r) => encode(r, dialect),
        A2aRequest::SubscribeToTask(r) => encode(r, dialect),
        A2aRequest::CreatePushConfig(r) => encode(r, dialect),
        A2aRequest::GetPushConfig(r) | A2aRequest::DeletePushConfig(r) => encode(r, dialect),
        A2aRequest::ListPushConfigs(r) => encode(r, dialect),
        A2aRequest::GetExtendedAgentCard(r) => encode(r, dialect),
        A2aRequest::GetAgentCard => json!({}),
    }
}

fn envelope(id: Value, method: &str, params: Value) -> Vec<u8> {
    to_json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

fn jsonrpc(seeds: &mut Seeds) {
    for dialect in [Dialect::V1, Dialect::V03] {
        for (n, request) in requests().into_iter().chain(tck_sends()).enumerate() {
            let method = method_name(dialect, request.operation()).expect("every operation is a v1.0 and v0.3 method");
            let body = envelope(json!(n), method, params(&request, dialect));
            seeds.add("jsonrpc", format!("{}-{n}", method.to_ascii_lowercase()), body);
        }
    }
    // The legacy family, as seed 004 and seed 002 write it, and the repository's tests send it.
    let hook = json!({"url": "https://client.example.com/webhook/a2a-notifications", "token": "secure-client-token",
                      "authentication": {"schemes": ["Bearer"], "credentials": "c"}});
    let text = |text: &str| json!({"type": "text", "text": text});
    let image =
        json!({"type": "file", "file": {"name": "input_image.png", "mimeType": "image/png", "bytes": "iVBORw0KGgo="}});
    let hinted = json!({"type": "text", "text": "list open tickets", "metadata": {"mimeType": "application/json"}});
    let send = |id: &str, parts: Value| {
        json!({"id": id, "sessionId": "session-1", "message": {"role": "user", "parts": parts},
               "historyLength": "2", "acceptedOutputModes": ["text/plain"], "pushNotification": hook})
    };
    let seed_004 =
        json!({"message": {"messageId": "msg-1", "role": "user", "parts": [{"text": "hello", "kind": "text"}]}});
    let legacy = [
        ("tasks/send", seed_004.clone()),
        ("tasks/send", send("task-abc-123", json!([text("tell me a joke"), image, hinted]))),
        ("tasks/sendSubscribe", send("task-stream-1", json!([text("tck-stream-chunked")]))),
        ("tasks/get", json!({"id": "task-abc-123", "historyLength": 3})),
        ("tasks/cancel", json!({"id": "task-abc-123", "metadata": {}})),
        ("tasks/pushNotification/set", json!({"id": "task-report-aaa", "pushNotificationConfig": hook})),
        ("tasks/pushNotification/get", json!({"id": "task-report-aaa"})),
        ("tasks/pushNotification/list", json!({"id": "task-report-aaa"})),
        ("tasks/pushNotification/delete", json!({"id": "task-report-aaa", "pushNotificationConfigId": CONFIG_ID})),
        ("tasks/resubscribe", json!({"id": TASK_ID, "historyLength": 1})),
        ("tasks/list", json!({"contextId": "ctx-7", "status": "input-required", "pageSize": "5"})),
        (
            "tasks/pushNotificationConfig/set",
            json!({"id": TASK_ID, "taskId": TASK_ID, "pushNotificationConfig": {"url": "https://client.example/hook"}}),
        ),
    ];
    for (n, (method, params)) in legacy.into_iter().enumerate() {
        seeds.add("jsonrpc", format!("older-{method}-{n}"), envelope(json!(format!("abc-{n}")), method, params));
    }
    // Malformed requests the error tests send: each gets an error, never a panic.
    let malformed: [(&str, &[u8]); 9] = [
        ("duplicate-method", br#"{"jsonrpc":"2.0","id":7,"method":"SendMessage","method":"GetTask","params":{"id":"x"}}"#),
        (
            "number-out-of-range",
            br#"{"jsonrpc":"2.0","id":42,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]},"metadata":{"x":1e400}}}"#,
        ),
        ("batch", br#"[{"jsonrpc":"2.0","id":1,"method":"GetTask"}]"#),
        ("version-1-0", br#"{"jsonrpc":"1.0","id":5,"method":"GetTask"}"#),
        ("params-by-position", br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":["",{}]}"#),
        ("object-id", br#"{"jsonrpc":"2.0","id":{},"method":"GetTask"}"#),
        ("unknown-method", br#"{"jsonrpc":"2.0","id":"u","method":"tasks/unknown","params":{}}"#),
        ("escaped-method", br#"{"jsonrpc":"2.0","id":1,"method":"Get\u0054ask","params":{"id":"t"}}"#),
        ("not-json", b"{not json"),
    ];
    for (name, body) in malformed {
        seeds.add("jsonrpc", format!("malformed-{name}"), body);
    }
}

/// A request in the `rest` target's form.
fn http_request(method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut text = format!("{method} {target}\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\n"));
    }
    text.push('\n');
    [text.as_bytes(), body].concat()
}

fn rest(seeds: &mut Seeds) {
    const JSON: (&str, &str) = ("content-type", "application/json");
    for (dialect, version) in [(Dialect::V1, "1.0"), (Dialect::V03, "0.3")] {
        for (n, request) in requests().iter().enumerate() {
            let route = rest::route_of(dialect, request.operation()).expect("every operation has a route");
            let path = route.path.replace("{id}", TASK_ID).replace("{config_id}", CONFIG_ID);
            let (target, body) = match (request, dialect) {
                (A2aRequest::SendMessage(r) | A2aRequest::SendStreamingMessage(r), Dialect::V03) => {
                    (path, to_json(&Proto(r)))
                }
                (A2aRequest::CreatePushConfig(r), Dialect::V03) => (path, to_json(&CreatePushConfig(r))),
                (_, _) if route.method == http::Method::GET || route.method == http::Method::DELETE => {
                    (format!("{path}?{}", query(&params(request, Dialect::V1))), Vec::new())
                }
                (_, _) => (path, to_json(&params(request, Dialect::V1))),
            };
            let headers = [JSON, ("a2a-version", version)];
            let name = format!("{version}-{}-{n}", route.path);
            seeds.add("rest", name, http_request(route.method.as_str(), &target, &headers, &body));
        }
    }
    let send =
        to_json(&json!({"message": {"messageId": "m2", "role": "ROLE_USER", "parts": [{"text": "hello over REST"}]}}));
    let v03_file = json!({"file": {"fileWithBytes": "YUdWc2JHOD0=", "mimeType": "text/plain", "name": "hello.txt"}});
    let v03_send =
        to_json(&json!({"message": {"messageId": "tck-complete-task-f1", "role": "ROLE_USER", "content": [v03_file]},
                                  "configuration": {"historyLength": 1}}));
    let v03_config =
        to_json(&json!({"pushNotificationConfig": {"id": "p1", "url": "https://client.example/hook", "token": "t"}}));
    let card_headers: &[(&str, &str)] = &[("a2a-version", "1.0"), ("if-none-match", "\"0123456789abcdef\"")];
    let preflight: &[(&str, &str)] = &[
        ("origin", "https://app.example"),
        ("access-control-request-method", "POST"),
        ("access-control-request-headers", "content-type,a2a-version"),
    ];
    let mut case = |name: &str, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]| {
        seeds.add("rest", name, http_request(method, target, headers, body));
    };
    case("readme-send", "POST", "/message:send", &[JSON], &send);
    case("tenant-send", "POST", "/acme/message:send", &[JSON, ("a2a-version", "1.0.2")], &send);
    case(
        "a2a-json-send",
        "POST",
        "/message:stream",
        &[("content-type", "application/a2a+json"), ("accept", "text/event-stream")],
        &send,
    );
    case(
        "opvs-version",
        "POST",
        "/message:send",
        &[JSON, ("OPVS-Version", "1.0"), ("A2A-Extensions", "https://example.com/ext/v1")],
        &send,
    );
    case("unsupported-version", "GET", "/tasks/t-1", &[("a2a-version", "2.0")], b"");
    case(
        "version-query",
        "GET",
        "/tasks?A2A-Version=0.3&pageSize=2&includeArtifacts=TRUE&status=TASK_STATE_WORKING",
        &[],
        b"",
    );
    case("v03-send-file", "POST", "/v1/message:send", &[JSON], &v03_send);
    case("v03-push-config", "POST", "/v1/tasks/t-1/pushNotificationConfigs", &[JSON], &v03_config);
    case("subscribe-get-resume", "GET", "/tasks/t-1:subscribe", &[("last-event-id", "3")], b"");
    case("task-id-with-colons", "POST", "/tasks/urn:task:7:cancel", &[JSON], b"{\"metadata\":{}}");
    case("unknown-action", "GET", "/tasks/t-1:pause", &[], b"");
    case("method-not-allowed", "DELETE", "/message:send", &[], b"");
    case("no-route", "GET", "/v1/unknown/route", &[], b"");
    case("card", "GET", "/.well-known/agent-card.json", card_headers, b"");
    case("card-old-path", "GET", "/.well-known/agent.json", &[], b"");
    case("card-seed-004", "GET", "/agentCard", &[("a2a-version", "0.3")], b"");
    case("cors-preflight", "OPTIONS", "/message:send", preflight, b"");
    case(
        "jsonrpc-at-root",
        "POST",
        "/",
        &[JSON, ("a2a-version", "1.0")],
        br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t-1"}}"#,
    );
    case("percent-encoded-ids", "GET", "/t%201/tasks/a%20b%2Fc?historyLength=1", &[], b"");
}

/// A JSON object's members as a query string; nested values are left out.
fn query(params: &Value) -> String {
    let members = params.as_object().into_iter().flatten();
    let pairs: Vec<String> = members
        .filter_map(|(key, value)| match value {
            Value::String(text) => Some(format!("{key}={text}")),
            Value::Number(_) | Value::Bool(_) => Some(format!("{key}={value}")),
            _ => None,
        })
        .collect();
    pairs.join("&")
}
