use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::WebhookGuard;

/// A loopback webhook that answers 200 and counts what it gets.
async fn counting_webhook() -> (u16, Arc<AtomicUsize>) {
    let count = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&count);
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async { StatusCode::OK }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (port, count)
}

fn delivery_to(url: &str) -> Delivery {
    let config = TaskPushNotificationConfig { id: "c1".into(), task_id: "t1".into(), ..Default::default() };
    Delivery {
        target: Arc::new(Target { url: url.parse().unwrap(), config, dialect: Dialect::V1 }),
        body: Bytes::from_static(b"{}"),
        trace: None,
    }
}

#[tokio::test]
async fn private_targets_are_refused_at_delivery_without_a_connection() {
    let (port, count) = counting_webhook().await;
    let settings = |allow_private| PushSettings {
        guard: WebhookGuard { allow_private },
        max_attempts: 1,
        ..PushSettings::default()
    };
    let guarded = Courier::new(settings(false), None, None);
    // A name goes through the client's resolver; a literal address is checked before the request.
    for host in ["localhost", "127.0.0.1"] {
        let delivery = delivery_to(&format!("http://{host}:{port}/hook"));
        let refused = guarded.deliver(&delivery).await;
        assert!(matches!(refused, Err(Undelivered::PrivateAddress(_))), "{host}: {refused:?}");
    }
    assert_eq!(count.load(Ordering::SeqCst), 0, "nothing reached the webhook");

    let open = Courier::new(settings(true), None, None);
    for host in ["localhost", "127.0.0.1"] {
        let delivery = delivery_to(&format!("http://{host}:{port}/hook"));
        assert!(open.deliver(&delivery).await.is_ok(), "{host}");
    }
    assert_eq!(count.load(Ordering::SeqCst), 2);
}
