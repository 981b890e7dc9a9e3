//! Running `agentwire serve` processes from tests.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use tokio::time::Instant;

use serde_json::{json, Value};

/// A server process, killed when dropped.
pub(crate) struct Server {
    child: Child,
    pub(crate) base: String,
    log: PathBuf,
}

impl Server {
    /// Starts `agentwire serve` on a free loopback port with `args`, and waits until it answers.
    pub(crate) async fn start(dir: &Path, args: &[&str]) -> Self {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let log_path = dir.join(format!("server-{port}.log"));
        let log = std::fs::File::create(&log_path).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
            .args(["serve", "--http", &format!("127.0.0.1:{port}")])
            .args(args)
            .current_dir(dir)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("agentwire starts");
        let server = Self { child, base: format!("http://127.0.0.1:{port}"), log: log_path };
        let deadline = Instant::now() + Duration::from_secs(20);
        let client = reqwest::Client::new();
        while client.get(format!("{}/.well-known/agent-card.json", server.base)).send().await.is_err() {
            assert!(Instant::now() < deadline, "the server did not start; see {}", dir.display());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        server
    }

    /// What the server wrote: its log, and its errors.
    pub(crate) fn log(&self) -> &Path {
        &self.log
    }

    /// Sends SIGTERM and waits for the process to exit.
    #[cfg(unix)]
    pub(crate) fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status().expect("kill runs");
        assert!(sent.success());
        self.child.wait().unwrap()
    }

    pub(crate) fn kill(&mut self) {
        // SIGKILL: no shutdown code runs.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

pub(crate) async fn rpc(client: &reqwest::Client, base: &str, method: &str, params: Value) -> reqwest::Result<Value> {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    client.post(format!("{base}/")).json(&body).send().await?.error_for_status()?.json().await
}

/// A directory of its own under the system's temporary one, removed when the test passes.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("agentwire-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A fresh database in the test cluster, as a URL; `None` when there is no cluster.
pub(crate) async fn fresh_database(name: &str) -> Option<String> {
    let url = match std::env::var("AGENTWIRE_TEST_POSTGRES_URL") {
        Ok(url) => url,
        Err(_) if std::env::var_os("CI").is_some() => panic!("CI runs need AGENTWIRE_TEST_POSTGRES_URL"),
        Err(_) => {
            eprintln!("skipped: AGENTWIRE_TEST_POSTGRES_URL is not set");
            return None;
        }
    };
    let database = format!("{name}_{}", std::process::id());
    let mut admin = <sqlx::PgConnection as sqlx::Connection>::connect(&url).await.expect("the test cluster answers");
    sqlx::Executor::execute(&mut admin, format!("DROP DATABASE IF EXISTS {database}").as_str()).await.unwrap();
    sqlx::Executor::execute(&mut admin, format!("CREATE DATABASE {database}").as_str()).await.unwrap();
    let base = url.rsplit_once('/').expect("a URL with a database").0;
    Some(format!("{base}/{database}"))
}
