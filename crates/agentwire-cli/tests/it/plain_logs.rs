//! Logs written to a file or a pipe are plain text: colors are for a terminal only.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// Starts `agentwire serve --http ADDRESS --store memory`; the running server and what it logged
/// up to the line that says it serves.
async fn serve_at(address: &str) -> (tokio::process::Child, Vec<String>) {
    let mut server = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["serve", "--http", address, "--store", "memory"])
        .env("RUST_LOG", "info")
        .env_remove("NO_COLOR")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("agentwire starts");
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let mut logged = Vec::new();
    let serving = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            let serving = line.contains(" serving ");
            logged.push(line);
            if serving {
                return;
            }
        }
        panic!("the server stopped before serving: {logged:?}");
    });
    serving.await.expect("the server logs that it serves");
    (server, logged)
}

#[tokio::test]
async fn logs_to_a_pipe_have_no_escape_codes() {
    let (mut server, logged) = serve_at("127.0.0.1:0").await;
    assert!(logged.iter().all(|line| !line.contains('\x1b')), "escape codes in a piped log: {logged:?}");
    let address = logged.last().unwrap().split_whitespace().find_map(|w| w.strip_prefix("address=")).unwrap();

    // A client command logs on stderr when RUST_LOG asks, plain too.
    let card = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["card", &format!("http://{address}")])
        .env("RUST_LOG", "debug")
        .env_remove("NO_COLOR")
        .output();
    let card = tokio::time::timeout(Duration::from_secs(20), card).await.unwrap().unwrap();
    let stderr = String::from_utf8_lossy(&card.stderr);
    assert!(card.status.success() && stderr.contains("DEBUG"), "{stderr}");
    assert!(!stderr.contains('\x1b'), "escape codes in a piped log: {stderr}");
    server.kill().await.unwrap();
}

/// The first try in a container: `--http 0.0.0.0:P` would advertise an address no client can
/// call, and the server says so, with what to give instead.
#[tokio::test]
async fn serving_every_interface_without_a_public_url_says_what_the_card_advertises() {
    let (mut server, logged) = serve_at("0.0.0.0:0").await;
    let warning = logged.iter().find(|line| line.contains("WARN") && line.contains("--public-url"));
    let warning = warning.unwrap_or_else(|| panic!("no warning: {logged:?}"));
    assert!(warning.contains("http://0.0.0.0:") && warning.contains("no client can call"), "{warning}");
    server.kill().await.unwrap();
    let (mut quiet, logged) = serve_at("127.0.0.1:0").await;
    assert!(!logged.iter().any(|line| line.contains("--public-url")), "{logged:?}");
    quiet.kill().await.unwrap();
}
