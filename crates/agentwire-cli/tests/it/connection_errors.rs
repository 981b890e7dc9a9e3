//! When an agent cannot be reached, the client commands say why: the cause under the HTTP
//! client's summary (refused, DNS, TLS), and what to write for a URL without a scheme.

use std::process::Command;

use crate::common::{Server, TempDir};

/// Runs `agentwire ARGS…`; returns the exit status and what it printed on stderr.
fn agentwire(args: &[&str]) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_agentwire")).args(args).output().expect("agentwire runs");
    (output.status.code().expect("an exit status"), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[tokio::test]
async fn a_refused_connection_says_refused() {
    // Bound but not listening: the port is ours, and a connection to it is refused.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let url = format!("http://{}", socket.local_addr().unwrap());
    let (code, err) = tokio::task::spawn_blocking(move || agentwire(&["get", &url, "x"])).await.unwrap();
    assert_eq!(code, 9, "{err}");
    assert!(err.to_lowercase().contains("connection refused"), "{err}");
}

/// The URL and the cause, each once: not again in the HTTP client's summary under them.
#[tokio::test]
async fn a_refused_connection_names_its_url_and_cause_once() {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let url = format!("http://{}", socket.local_addr().unwrap());
    for args in [vec!["send", &url, "hi"], vec!["card", &url]] {
        let args: Vec<String> = args.into_iter().map(str::to_owned).collect();
        let (code, err) =
            tokio::task::spawn_blocking(move || agentwire(&args.iter().map(String::as_str).collect::<Vec<_>>()))
                .await
                .unwrap();
        assert_eq!(code, 9, "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(err.matches(&format!("{url}/.well-known/agent-card.json")).count(), 1, "{err}");
        assert_eq!(err.to_lowercase().matches("connection refused").count(), 1, "{err}");
        assert!(!err.contains("error sending request") && !err.contains("client error"), "{err}");
    }
}

#[test]
fn an_unknown_host_says_the_name_did_not_resolve() {
    let (code, err) = agentwire(&["card", "http://no-such-host.invalid"]);
    assert_eq!(code, 9, "{err}");
    assert!(err.contains("dns error"), "{err}");
}

#[tokio::test]
async fn tls_to_a_plain_http_agent_says_what_the_handshake_met() {
    let dir = TempDir::new("tls-to-plain");
    let server = Server::start(&dir.0, &["--store", "memory"]).await;
    let url = server.base.replacen("http://", "https://", 1);
    let (code, err) = tokio::task::spawn_blocking(move || agentwire(&["card", &url])).await.unwrap();
    assert_eq!(code, 9, "{err}");
    assert!(err.contains("corrupt message"), "the TLS error: {err}");
}

#[test]
fn a_url_without_a_scheme_suggests_http() {
    for url in ["127.0.0.1:8080", "localhost:8080"] {
        let (code, err) = agentwire(&["send", url, "hello"]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(&format!("http://{url}")), "{err}");
    }
}

/// A port that takes the connection and never answers: every command ends within its timeout
/// (`--timeout`, 30 s by default), saying so, rather than waiting for ever.
#[tokio::test]
async fn a_silent_agent_ends_the_call_within_its_timeout() {
    let silent = agentwire_test::SilentPort::start().await;
    let url = silent.url.clone();
    for args in [vec!["send", &url, "hello"], vec!["get", &url, "t1"], vec!["card", &url]] {
        let mut args: Vec<String> = args.into_iter().map(str::to_owned).collect();
        args.extend(["--timeout".to_owned(), "1".to_owned()]);
        let started = tokio::time::Instant::now();
        let (code, err) =
            tokio::task::spawn_blocking(move || agentwire(&args.iter().map(String::as_str).collect::<Vec<_>>()))
                .await
                .unwrap();
        assert_eq!(code, 9, "{err}");
        assert!(err.contains("did not answer within 1 s"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "{:?}", started.elapsed());
    }
}

/// PostgreSQL that cannot be reached at start: the server says where and why, at once.
#[test]
fn a_store_that_cannot_be_reached_says_where_and_why() {
    let socket = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = socket.local_addr().unwrap().port();
    drop(socket);
    let started = tokio::time::Instant::now();
    let store = format!("postgres://agentwire@127.0.0.1:{port}/agentwire");
    let output = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .args(["serve", "--http", "127.0.0.1:0", "--store", &store])
        .output()
        .expect("agentwire runs");
    let printed = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(!output.status.success(), "{printed}");
    assert!(printed.contains(&format!("cannot connect to PostgreSQL at 127.0.0.1:{port}")), "{printed}");
    assert!(printed.to_lowercase().contains("refused"), "the cause: {printed}");
    assert!(started.elapsed() < std::time::Duration::from_secs(15), "{:?}", started.elapsed());
}
