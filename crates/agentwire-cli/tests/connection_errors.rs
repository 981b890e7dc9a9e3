//! When an agent cannot be reached, the client commands say why: the cause under the HTTP
//! client's summary (refused, DNS, TLS), and what to write for a URL without a scheme.

mod common;

use std::process::Command;

use common::{Server, TempDir};

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
