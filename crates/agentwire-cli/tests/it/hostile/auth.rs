//! A caller guessing credentials from the address of others (one proxy, NAT or gateway in front
//! of many clients): its failures slow its own guesses, not the clients whose credentials verify.

use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;

use crate::common::{Server, TempDir};

async fn list_tasks(client: &reqwest::Client, base: &str, token: &str) -> u16 {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}});
    let request = client.post(format!("{base}/")).bearer_auth(token).json(&body);
    request.send().await.expect("the server answers").status().as_u16()
}

/// The probe's W-a: 2,000 wrong tokens from 127.0.0.1 locked alice's valid token out (429) too.
#[tokio::test]
async fn wrong_tokens_from_an_address_do_not_lock_out_a_valid_one() {
    let dir = TempDir::new("hostile-auth-lockout");
    let server = Server::start(&dir.0, &["--store", "memory", "--auth", "bearer:alice=alice-secret"]).await;
    let client = reqwest::Client::new();
    assert_eq!(list_tasks(&client, &server.base, "alice-secret").await, 200);
    // Guesses until the address is refused before its guesses are checked.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut guesses = 0;
    while list_tasks(&client, &server.base, &format!("guess-{guesses}")).await != 429 {
        guesses += 1;
        assert!(Instant::now() < deadline, "{guesses} guesses were never limited");
    }
    // Guessing stays limited: the bucket refills at 5 a second, so most further guesses wait.
    let mut limited = 0;
    for guess in 0..20 {
        limited += usize::from(list_tasks(&client, &server.base, &format!("again-{guess}")).await == 429);
    }
    assert!(limited >= 10, "only {limited} of 20 further guesses were limited");
    for _ in 0..20 {
        assert_eq!(list_tasks(&client, &server.base, "alice-secret").await, 200, "after {guesses} wrong guesses");
    }
}
