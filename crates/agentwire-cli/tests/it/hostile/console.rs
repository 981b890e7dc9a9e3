//! A browser (or a script posing as one) following the console's live task list many times over.

use std::time::Duration;

use crate::common::{Server, TempDir};

/// The probe's W6: 50 live lists under `--max-streams 5` were all served. Each is one of its
/// caller's streams now.
#[tokio::test]
async fn live_lists_count_as_streams() {
    let dir = TempDir::new("hostile-console-live");
    let args = ["--store", "memory", "--console", "--max-streams", "2"];
    let server = Server::start(&dir.0, &args).await;
    let client = reqwest::Client::builder().timeout(Duration::from_secs(20)).build().unwrap();
    let live =
        || client.get(format!("{}/console/tasks/live", server.base)).header("accept", "text/event-stream").send();
    let first = live().await.unwrap();
    let second = live().await.unwrap();
    assert_eq!((first.status().as_u16(), second.status().as_u16()), (200, 200));
    let third = live().await.unwrap();
    assert_eq!(third.status().as_u16(), 429, "a third live list past --max-streams 2");
    assert!(third.text().await.unwrap().contains("at most 2 streams"));
    drop(first);
    // The list closed gives its place back once the server sees the connection end.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let again = live().await.unwrap();
        if again.status().as_u16() == 200 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the closed list's place was never given back");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(second);
}
