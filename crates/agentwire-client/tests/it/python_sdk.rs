//! Every operation, over JSON-RPC, HTTP+JSON and gRPC, in protocol v1.0 and v0.3, against an agent
//! served by the official Python SDK (`interop/python-server`, a2a-sdk 1.3.0). Skipped where no
//! interpreter with the SDK is set (`AGENTWIRE_SDK_PYTHON`), except under CI.

use crate::common;

use crate::common::{Agent, INTERFACES, TOKEN};
use agentwire_test::{SdkOptions, SdkServer};

async fn server() -> Option<(SdkServer, Agent)> {
    let server = SdkServer::start(SdkOptions { token: Some(TOKEN.into()), ..SdkOptions::default() }).await?;
    // The SDK has no v0.3 ListTasks (v0.3 defines none) and no v0.3 HTTP+JSON route to delete a
    // push config.
    let agent = Agent {
        base: server.base.clone(),
        lists_tasks: true,
        lists_tasks_in_v03: false,
        deletes_configs_over_v03_rest: false,
    };
    Some((server, agent))
}

#[tokio::test]
async fn task_operations_at_every_interface() {
    let Some((_server, agent)) = server().await else { return };
    for (binding, version) in INTERFACES {
        common::task_operations(&agent, binding, version).await;
    }
}

#[tokio::test]
async fn streams_and_subscriptions_at_every_interface() {
    let Some((_server, agent)) = server().await else { return };
    for (binding, version) in INTERFACES {
        common::streams(&agent, binding, version).await;
    }
}

#[tokio::test]
async fn push_configs_at_every_interface() {
    let Some((_server, agent)) = server().await else { return };
    for (binding, version) in INTERFACES {
        common::push_configs(&agent, binding, version).await;
    }
}

#[tokio::test]
async fn the_extended_card_at_every_interface() {
    let Some((_server, agent)) = server().await else { return };
    for (binding, version) in INTERFACES {
        common::extended_card(&agent, binding, version).await;
    }
}

/// The SDK numbers no events, so a cut subscription resumes with the task as it stands: the
/// reader rebuilds the whole artifact, and the stream still ends COMPLETED.
#[tokio::test]
async fn a_cut_subscription_resumes_from_the_task_as_it_stands() {
    use crate::common::{message, non_blocking, numbers, read_with_a_cut, send};
    use agentwire_test::CuttingProxy;
    use agentwire_types::{SubscribeToTaskRequest, TaskState};
    use std::net::SocketAddr;
    use tokio::net::TcpListener;

    let (http_front, grpc_front) =
        (TcpListener::bind("127.0.0.1:0").await.unwrap(), TcpListener::bind("127.0.0.1:0").await.unwrap());
    let port = |listener: &TcpListener| listener.local_addr().unwrap().port();
    let options = SdkOptions {
        card_port: Some(port(&http_front)),
        card_grpc_port: Some(port(&grpc_front)),
        ..SdkOptions::default()
    };
    let Some(server) = SdkServer::start(options).await else { return };
    let local = |port: u16| SocketAddr::from(([127, 0, 0, 1], port));
    let proxies = [
        CuttingProxy::start(http_front, local(server.http_port)),
        CuttingProxy::start(grpc_front, local(server.grpc_port)),
    ];
    let agent = Agent {
        base: format!("http://{}", proxies[0].addr),
        lists_tasks: true,
        lists_tasks_in_v03: false,
        deletes_configs_over_v03_rest: false,
    };
    for (binding, version) in INTERFACES {
        let client = common::client(&agent, binding, version).await;
        let task = send(&client, non_blocking(message("tck-long-running resume"))).await;
        let events = client.subscribe(SubscribeToTaskRequest { id: task.id, ..Default::default() }).await.unwrap();
        let seen = read_with_a_cut(events, 3, || proxies.iter().for_each(CuttingProxy::cut)).await;
        assert_eq!(seen.rebuilt, numbers(10), "{binding:?} {version:?}: {seen:?}");
        assert_eq!(seen.last_state, Some(TaskState::Completed), "{binding:?} {version:?}");
        assert_eq!(seen.snapshots, 2, "{binding:?} {version:?}: the subscription's first task, and the resumed one's");
    }
}

/// The SDK's push sender delivers each event of a task to a webhook the client registered; the
/// receiver takes them, with the token, until the task completes.
#[tokio::test]
async fn the_webhook_receiver_takes_the_sdks_push_notifications() {
    use crate::common::{message, send};
    use agentwire_client::{Binding, Version, WebhookReceiver};
    use agentwire_test::TIMEOUT;
    use agentwire_types::{SendMessageRequest, TaskPushNotificationConfig, TaskState};

    let Some((_server, agent)) = server().await else { return };
    let (router, mut notifications) = WebhookReceiver::new().token("hook-token").into_router();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/a2a", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    for (binding, version) in [(Binding::JsonRpc, Version::V1), (Binding::Grpc, Version::V03)] {
        let client = common::client(&agent, binding, version).await;
        let task = send(&client, SendMessageRequest::new(message("tck-multi-turn hooked"))).await;
        let config = TaskPushNotificationConfig {
            task_id: task.id.clone(),
            id: "hook".into(),
            url: hook.clone(),
            token: "hook-token".into(),
            ..Default::default()
        };
        client.create_push_config(config).await.expect("CreateTaskPushNotificationConfig");
        let mut follow_up = message("done");
        (follow_up.task_id, follow_up.context_id) = (task.id.clone(), task.context_id.clone());
        send(&client, SendMessageRequest::new(follow_up)).await;
        loop {
            let notification = tokio::time::timeout(TIMEOUT, notifications.recv()).await.expect("in time").unwrap();
            assert_eq!(
                (notification.event.task_id(), notification.token.as_deref()),
                (task.id.as_str(), Some("hook-token"))
            );
            if notification.event.task_state() == Some(TaskState::Completed) {
                break;
            }
        }
    }
}
