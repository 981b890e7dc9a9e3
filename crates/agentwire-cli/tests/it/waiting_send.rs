//! A blocking `send` knows its task's id while the task works: when `--timeout` runs out it says
//! how to follow the task and how to cancel it (Ctrl-C on a terminal: `terminal.rs`), and it
//! still waits for the task, with or without streaming, as long as it works.

use crate::common::{run_agentwire as agentwire, Server, TempDir};

#[tokio::test]
async fn a_blocking_send_out_of_time_says_how_to_follow_and_cancel_its_task() {
    let dir = TempDir::new("waiting-timeout");
    let server = Server::start(&dir.0, &["--store", "memory", "--agent", "conformance"]).await;
    let url = &server.base;
    let (code, out, err) = agentwire(&["send", url, "tck-cancel x", "--timeout", "1"]).await;
    assert_eq!(code, 9, "{out}{err}");
    assert!(err.contains("did not end within 1 s"), "{err}");
    let follow = format!("`agentwire subscribe {url} ");
    let id = err.split(&follow).nth(1).and_then(|rest| rest.split('`').next()).expect("the task's id");
    assert!(err.contains(&format!("`agentwire cancel {url} {id}`")), "{err}");

    // The id is the task's, which goes on.
    let (code, out, err) = agentwire(&["get", url, id]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("task {id} working")), "{out}");
    assert_eq!(agentwire(&["cancel", url, id]).await.0, 0);
}

#[tokio::test]
async fn a_blocking_send_waits_for_its_task_with_or_without_streaming() {
    let dir = TempDir::new("waiting-long");
    for reduced in [&[][..], &["--reduced"]] {
        let server = Server::start(&dir.0, &[&["--store", "memory", "--agent", "conformance"], reduced].concat()).await;
        let (code, out, err) = agentwire(&["send", &server.base, "tck-long-running x"]).await;
        assert_eq!(code, 0, "{reduced:?}: {err}");
        assert!(out.starts_with("task ") && out.lines().next().unwrap().ends_with(" completed"), "{reduced:?}: {out}");
        assert!(out.contains("  agent: Long-running task finished"), "{reduced:?}: {out}");
    }
}
