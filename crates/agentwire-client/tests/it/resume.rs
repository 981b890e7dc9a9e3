//! A stream whose connection is cut mid-way resumes where it stopped. Over SSE, where agentwire
//! numbers its events, no event is lost and none repeated; over gRPC, which numbers none, the
//! resumed subscription starts with the task as it stands, and the reader loses nothing.

use std::time::Duration;

use crate::common::{message, non_blocking, numbers, read_with_a_cut, send};
use agentwire_client::{Binding, Client, Error, Reconnect, Version};
use agentwire_test::{ticker_behind_a_proxy, TICKS, TIMEOUT};
use agentwire_types::{SendMessageRequest, SubscribeToTaskRequest, TaskState};
use futures_util::StreamExt;

async fn client(base: &str, binding: Binding, version: Version, reconnect: Reconnect) -> Client {
    let builder = Client::builder(base).only(binding).only_version(version).timeout(TIMEOUT).reconnect(reconnect);
    builder.connect().await.expect("connects")
}

const SSE: [(Binding, Version); 4] = [
    (Binding::JsonRpc, Version::V1),
    (Binding::HttpJson, Version::V1),
    (Binding::JsonRpc, Version::V03),
    (Binding::HttpJson, Version::V03),
];

#[tokio::test]
async fn a_cut_subscription_resumes_without_loss_or_repetition() {
    let (proxy, _server, base) = ticker_behind_a_proxy().await;
    for (binding, version) in SSE {
        let client = client(&base, binding, version, Reconnect::default()).await;
        let task = send(&client, non_blocking(message("tick"))).await;
        let events = client.subscribe(SubscribeToTaskRequest { id: task.id, ..Default::default() }).await.unwrap();
        let seen = read_with_a_cut(events, 3, || proxy.cut()).await;
        assert_eq!(seen.delivered, numbers(TICKS), "{binding:?} {version:?}");
        assert_eq!(seen.last_state, Some(TaskState::Completed), "{binding:?} {version:?}");
    }
}

#[tokio::test]
async fn a_cut_streaming_send_resumes_by_subscribing() {
    let (proxy, _server, base) = ticker_behind_a_proxy().await;
    for (binding, version) in SSE {
        let client = client(&base, binding, version, Reconnect::default()).await;
        let events = client.send_streaming_message(SendMessageRequest::new(message("tick"))).await.unwrap();
        let seen = read_with_a_cut(events, 3, || proxy.cut()).await;
        assert_eq!(seen.delivered, numbers(TICKS), "{binding:?} {version:?}");
        assert_eq!(seen.last_state, Some(TaskState::Completed), "{binding:?} {version:?}");
    }
}

#[tokio::test]
async fn a_cut_grpc_stream_resumes_from_the_task_as_it_stands() {
    let (proxy, _server, base) = ticker_behind_a_proxy().await;
    for version in [Version::V1, Version::V03] {
        let client = client(&base, Binding::Grpc, version, Reconnect::default()).await;
        let task = send(&client, non_blocking(message("tick"))).await;
        let events = client.subscribe(SubscribeToTaskRequest { id: task.id, ..Default::default() }).await.unwrap();
        let seen = read_with_a_cut(events, 3, || proxy.cut()).await;
        assert_eq!(seen.rebuilt, numbers(TICKS), "{version:?}: {seen:?}");
        assert_eq!(seen.snapshots, 2, "{version:?}: the subscription's first task, and the resumed one's");
        assert_eq!(seen.last_state, Some(TaskState::Completed), "{version:?}");
    }
}

#[tokio::test]
async fn without_reconnects_a_cut_stream_ends_with_the_connection_error() {
    let (proxy, _server, base) = ticker_behind_a_proxy().await;
    let client = client(&base, Binding::JsonRpc, Version::V1, Reconnect { attempts: 0, ..Reconnect::default() }).await;
    let mut events = client.send_streaming_message(SendMessageRequest::new(message("tick"))).await.unwrap();
    let mut chunks = 0;
    let error = loop {
        match tokio::time::timeout(TIMEOUT, events.next()).await.expect("an event in time") {
            Some(Ok(agentwire_types::StreamResponse::ArtifactUpdate(_))) => {
                chunks += 1;
                if chunks == 3 {
                    proxy.cut();
                }
            }
            Some(Ok(_)) => {}
            Some(Err(error)) => break error,
            None => panic!("the stream ended without the error"),
        }
    };
    assert!(matches!(error, Error::Connection { .. }), "{error:?}");
    assert!(tokio::time::timeout(TIMEOUT, events.next()).await.unwrap().is_none(), "the stream ends after it");
}

#[tokio::test]
async fn a_stream_away_until_its_task_ended_ends_with_the_task() {
    let (proxy, _server, base) = ticker_behind_a_proxy().await;
    // The Ticker's task ends well within the wait before the stream reconnects.
    let slow = Reconnect { attempts: 2, initial_backoff: Duration::from_millis(1500) };
    let interfaces = SSE.into_iter().chain([(Binding::Grpc, Version::V1), (Binding::Grpc, Version::V03)]);
    for (binding, version) in interfaces {
        let client = client(&base, binding, version, slow).await;
        let task = send(&client, non_blocking(message("tick"))).await;
        let events = client.subscribe(SubscribeToTaskRequest { id: task.id, ..Default::default() }).await.unwrap();
        let seen = read_with_a_cut(events, 3, || proxy.cut()).await;
        assert_eq!(seen.rebuilt, numbers(TICKS), "{binding:?} {version:?}: {seen:?}");
        assert_eq!(seen.last_state, Some(TaskState::Completed), "{binding:?} {version:?}");
    }
}
