//! Every operation, over JSON-RPC, HTTP+JSON and gRPC, in protocol v1.0 and v0.3, against an
//! agentwire server on loopback (its conformance agent, with bearer authentication).

use crate::common;
use agentwire_server::App;

use crate::common::{Agent, INTERFACES, TOKEN};
use agentwire_client::Binding;
use agentwire_server::auth::StaticAuth;
use agentwire_test::{conformance, TestServer};
use agentwire_types::ListTasksRequest;

async fn server() -> (TestServer, Agent) {
    let auth = StaticAuth::default().with_spec(&format!("bearer:{TOKEN}")).unwrap();
    let server = TestServer::start_app(conformance(), App::new().authenticator(auth)).await;
    let agent = Agent {
        base: server.base.clone(),
        lists_tasks: true,
        lists_tasks_in_v03: true,
        deletes_configs_over_v03_rest: true,
    };
    (server, agent)
}

#[tokio::test]
async fn task_operations_at_every_interface() {
    let (_server, agent) = server().await;
    for (binding, version) in INTERFACES {
        common::task_operations(&agent, binding, version).await;
    }
}

#[tokio::test]
async fn streams_and_subscriptions_at_every_interface() {
    let (_server, agent) = server().await;
    for (binding, version) in INTERFACES {
        common::streams(&agent, binding, version).await;
    }
}

#[tokio::test]
async fn push_configs_at_every_interface() {
    let (_server, agent) = server().await;
    for (binding, version) in INTERFACES {
        common::push_configs(&agent, binding, version).await;
    }
}

#[tokio::test]
async fn the_extended_card_at_every_interface() {
    let (_server, agent) = server().await;
    for (binding, version) in INTERFACES {
        common::extended_card(&agent, binding, version).await;
    }
}

#[tokio::test]
async fn a_configured_http_client_makes_the_calls() {
    let (_server, agent) = server().await;
    let mut headers = http::HeaderMap::new();
    headers.insert("authorization", format!("Bearer {TOKEN}").parse().unwrap());
    let http = reqwest::Client::builder().default_headers(headers).build().unwrap();
    let connect = agentwire_client::Client::builder(&agent.base).http_client(http).only(Binding::JsonRpc).connect();
    let client = connect.await.unwrap();
    // Only the configured client carries credentials: the call is let in because it made it.
    let page = client.list_tasks(ListTasksRequest::default()).await;
    assert!(page.is_ok(), "{page:?}");
}
