//! A client that is told about a task instead of watching it: it serves a webhook with
//! `WebhookReceiver`, sends a message that starts a long task without waiting for it, with the
//! webhook in the request (so no event can pass before it is registered), and prints each push
//! notification until the task ends.
//!
//! ```sh
//! cargo run --bin agentwire -- serve --agent conformance --allow-private-webhooks --store memory
//! cargo run -p agentwire-examples --example webhook
//! ```

use std::future::IntoFuture;

use agentwire_client::{Client, Notifications, WebhookReceiver};
use agentwire_types::{
    Message, SendMessageConfiguration, SendMessageRequest, SendMessageResponse, TaskPushNotificationConfig,
};
use tokio::net::TcpListener;

const AGENT: &str = "http://127.0.0.1:8080";
const TOKEN: &str = "a-secret-the-agent-sends-back";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The webhook: deliveries without the token are refused with 401.
    let (webhook, notifications) = WebhookReceiver::new().token(TOKEN).into_router();
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/a2a/webhook", listener.local_addr()?);
    let app = axum::Router::new().nest("/a2a/webhook", webhook);
    // The webhook is served for as long as the task is followed.
    tokio::select! {
        followed = follow(&url, notifications) => followed,
        served = axum::serve(listener, app).into_future() => Err(format!("the webhook stopped: {served:?}").into()),
    }
}

/// Starts a long task with `url` as its webhook, and prints what `notifications` tell until it
/// ends or waits for its caller.
async fn follow(url: &str, mut notifications: Notifications) -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::connect(AGENT).await?;
    let webhook = TaskPushNotificationConfig { url: url.to_owned(), token: TOKEN.into(), ..Default::default() };
    let configuration = SendMessageConfiguration {
        return_immediately: true,
        task_push_notification_config: Some(webhook),
        ..Default::default()
    };
    let message = Message::user(uuid(), "tck-long-running tell me when you are done");
    let request = SendMessageRequest { configuration: Some(configuration), ..SendMessageRequest::new(message) };
    let SendMessageResponse::Task(task) = client.send_message(request).await? else {
        return Err("the agent answered with a message, not a task".into());
    };
    println!("task {} is {:?}; notifications go to {url}", task.id, task.status.state);

    while let Some(notification) = notifications.recv().await {
        let state = notification.event.task_state();
        println!("notified: {}", state.map_or("an event".to_owned(), |s| format!("{s:?}")));
        if state.is_some_and(|s| s.is_terminal() || s.is_interrupted()) {
            break;
        }
    }
    Ok(())
}

/// A message id that no other run of this example uses.
fn uuid() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("webhook-example-{nanos}")
}
