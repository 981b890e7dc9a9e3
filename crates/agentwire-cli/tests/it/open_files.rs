//! `agentwire serve` raises its soft limit on open files to the hard one, so that a low default
//! soft limit does not refuse clients long before `--max-connections` would queue them.
#![cfg(target_os = "linux")]

use std::process::{Command, Stdio};
use std::time::Duration;

use tokio::time::Instant;

/// The soft and hard "Max open files" of a process, from `/proc`.
fn open_file_limits(pid: u32) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits.lines().find(|l| l.starts_with("Max open files")).unwrap().to_owned();
    let mut fields = line.trim_start_matches("Max open files").split_whitespace();
    (fields.next().unwrap().to_owned(), fields.next().unwrap().to_owned())
}

#[tokio::test]
async fn the_soft_limit_on_open_files_is_raised_to_the_hard_one() {
    let port = agentwire_test::port_to_serve_later();
    let serve = format!(
        "ulimit -S -n 256; exec {} serve --store memory --http 127.0.0.1:{port}",
        env!("CARGO_BIN_EXE_agentwire")
    );
    let mut child =
        Command::new("sh").args(["-c", &serve]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(Instant::now() < deadline, "the server did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (soft, hard) = open_file_limits(child.id());
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(soft, hard, "the soft limit stayed at {soft}");
}
