//! A tower layer on the operation service: it counts every call by operation, protocol
//! generation, binding and outcome, whichever wire the call came over.
//!
//! Bindings decode each request into a `RequestContext` and a canonical `A2aRequest` and call one
//! operation service; a layer in front of the handler sees them all, with the operation in hand
//! (no body to parse). Added with `App::layer`, it runs after authentication and quotas, so it
//! sees the caller's principal: the place for audit or authorization by operation. For
//! Prometheus metrics, `App::metrics` puts a ready-made layer in its place (docs/OPERATIONS.md);
//! this one shows how to write your own.
//!
//! ```sh
//! cargo run -p agentwire-examples --example operation_layer
//!
//! # A v1.0 JSON-RPC call, a v0.3 one, a legacy one, and v1.0 HTTP+JSON
//! curl -s localhost:8088/ -H 'content-type: application/json' -H 'A2A-Version: 1.0' -d \
//!   '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}'
//! curl -s localhost:8088/ -H 'content-type: application/json' -d \
//!   '{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"kind":"message","messageId":"m2","role":"user","parts":[{"kind":"text","text":"hi"}]}}}'
//! curl -s localhost:8088/ -H 'content-type: application/json' -d \
//!   '{"jsonrpc":"2.0","id":3,"method":"tasks/send","params":{"id":"t3","message":{"role":"user","parts":[{"type":"text","text":"hi"}]}}}'
//! curl -s localhost:8088/tasks/no-such-task -H 'A2A-Version: 1.0'
//!
//! # What the layer counted
//! curl -s localhost:8088/calls
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use agentwire_server::agent::EchoAgent;
use agentwire_server::{
    serve, A2aRequest, A2aResponse, App, HttpOptions, RequestContext, RequestHandler, ServeOptions,
};
use agentwire_types::A2AError;
use axum::routing::get;
use axum::{Json, Router};
use futures_util::future::BoxFuture;
use tokio::net::TcpListener;
use tower::{Layer, Service};

const ADDR: &str = "127.0.0.1:8088";

/// What a call is counted under: operation, generation, binding, outcome.
type Key = (String, String, String, String);

/// Calls seen so far, by [`Key`].
#[derive(Clone, Default)]
struct Calls(Arc<Mutex<BTreeMap<Key, u64>>>);

impl Calls {
    fn count(&self, key: Key) {
        // A short section: one map update, never across an await.
        *self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).entry(key).or_default() += 1;
    }

    fn snapshot(&self) -> BTreeMap<Key, u64> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// The counts as lines of `operation generation binding outcome count`.
    fn report(&self) -> Vec<String> {
        let calls = self.snapshot();
        calls
            .iter()
            .map(|((op, generation, binding, outcome), n)| format!("{op} {generation} {binding} {outcome} {n}"))
            .collect()
    }
}

/// Counts every operation the service it wraps runs.
#[derive(Clone)]
struct CountLayer(Calls);

impl<S> Layer<S> for CountLayer {
    type Service = Count<S>;

    fn layer(&self, inner: S) -> Count<S> {
        Count { inner, calls: self.0.clone() }
    }
}

#[derive(Clone)]
struct Count<S> {
    inner: S,
    calls: Calls,
}

impl<S> Service<(RequestContext, A2aRequest)> for Count<S>
where
    S: Service<(RequestContext, A2aRequest), Response = A2aResponse, Error = A2AError>,
    S::Future: Send + 'static,
{
    type Response = A2aResponse;
    type Error = A2AError;
    type Future = BoxFuture<'static, Result<A2aResponse, A2AError>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), A2AError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, (ctx, request): (RequestContext, A2aRequest)) -> Self::Future {
        let operation = format!("{:?}", request.operation());
        let (generation, binding) = (format!("{:?}", ctx.dialect), ctx.binding.name().to_owned());
        let calls = self.calls.clone();
        let answer = self.inner.call((ctx, request));
        Box::pin(async move {
            let answer = answer.await;
            let outcome = match &answer {
                Ok(_) => "OK".to_owned(),
                Err(error) => error.kind().reason().to_owned(),
            };
            calls.count((operation, generation, binding, outcome));
            answer
        })
    }
}

/// The agent, with the counting layer around its handler, and `GET /calls` beside it.
fn app(calls: &Calls) -> Router {
    let handler = RequestHandler::builder(EchoAgent).card_url(&format!("http://{ADDR}")).build();
    let served = App::new().layer(CountLayer(calls.clone())).router(handler, HttpOptions::default());
    let report = calls.clone();
    Router::new().route("/calls", get(move || async move { Json(report.report()) })).merge(served)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).init();
    let listener = TcpListener::bind(ADDR).await?;
    println!("A2A agent on http://{ADDR}, its calls counted at http://{ADDR}/calls");
    serve(listener, app(&Calls::default()), async { _ = tokio::signal::ctrl_c().await }, ServeOptions::default()).await
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use agentwire_client::{Binding, Client, Version};
    use agentwire_types::{GetTaskRequest, Message, SendMessageRequest};
    use serde_json::json;

    use super::*;

    /// The counting layer's app, on a loopback port of its own, with the card naming that port.
    async fn start(calls: &Calls) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let handler = RequestHandler::builder(EchoAgent).card_url(&base).build();
        let app = App::new().layer(CountLayer(calls.clone())).router(handler, HttpOptions::default());
        tokio::spawn(serve(listener, app, std::future::pending(), ServeOptions::default()));
        base
    }

    async fn client(base: &str, binding: Binding, version: Version) -> Client {
        let connect = Client::builder(base).only(binding).only_version(version).timeout(Duration::from_secs(10));
        connect.connect().await.unwrap()
    }

    #[tokio::test]
    async fn the_layer_sees_every_binding_and_generation() {
        let calls = Calls::default();
        let base = start(&calls).await;
        for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
            for version in [Version::V1, Version::V03] {
                let client = client(&base, binding, version).await;
                client.send_message(SendMessageRequest::new(Message::user("m1", "hi"))).await.unwrap();
                let missing = GetTaskRequest { id: "no-such-task".into(), ..GetTaskRequest::default() };
                client.get_task(missing).await.unwrap_err();
            }
        }
        // The legacy generation is JSON-RPC only, and agentwire-client does not speak it.
        let legacy = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/send",
            "params": {"id": "t-legacy", "message": {"role": "user", "parts": [{"type": "text", "text": "hi"}]}}});
        let answer = reqwest::Client::new().post(format!("{base}/")).json(&legacy).send().await.unwrap();
        assert!(answer.status().is_success());

        let seen = calls.snapshot();
        let count = |op: &str, generation: &str, binding: Binding, outcome: &str| {
            let key = (op.to_owned(), generation.to_owned(), binding.name().to_owned(), outcome.to_owned());
            seen.get(&key).copied().unwrap_or_default()
        };
        for binding in [Binding::JsonRpc, Binding::HttpJson, Binding::Grpc] {
            for generation in ["V1", "V03"] {
                assert_eq!(count("SendMessage", generation, binding, "OK"), 1, "{generation} {binding:?}: {seen:?}");
                let not_found = count("GetTask", generation, binding, "TASK_NOT_FOUND");
                assert_eq!(not_found, 1, "{generation} {binding:?}: {seen:?}");
            }
        }
        assert_eq!(count("SendMessage", "Legacy", Binding::JsonRpc, "OK"), 1, "{seen:?}");
    }
}
