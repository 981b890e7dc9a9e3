//! Running `agentwire serve` processes from tests.

#![allow(dead_code)]

pub(crate) mod stub;
pub(crate) mod token_service;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use serde_json::{json, Value};

/// A server process, killed when dropped.
pub(crate) struct Server {
    child: Child,
    pub(crate) base: String,
    /// What it logged (stdout and stderr).
    pub(crate) log: PathBuf,
}

impl Server {
    /// Starts `agentwire serve` with `args` on a port it binds itself on loopback, and waits until
    /// its log names the address it serves.
    pub(crate) async fn start(dir: &Path, args: &[&str]) -> Self {
        Self::start_as("serve", dir, args, &[]).await
    }

    /// [`Server::start`] with variables added to the server's environment.
    pub(crate) async fn start_with_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::start_as("serve", dir, args, env).await
    }

    /// Starts `agentwire gateway` with `args`, as [`Server::start`] starts `serve`.
    pub(crate) async fn start_gateway(dir: &Path, args: &[&str]) -> Self {
        Self::start_as("gateway", dir, args, &[]).await
    }

    /// [`Server::start_gateway`] with variables added to the server's environment.
    pub(crate) async fn start_gateway_with_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::start_as("gateway", dir, args, env).await
    }

    async fn start_as(command_name: &str, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Self {
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let log = dir.join(format!("server-{}.log", STARTED.fetch_add(1, Ordering::Relaxed)));
        let file = std::fs::File::create(&log).unwrap();
        let mut command = Command::new(binary());
        command.arg(command_name);
        if !args.contains(&"--http") {
            command.args(["--http", "127.0.0.1:0"]);
        }
        command.args(args).envs(env.iter().copied()).current_dir(dir);
        // Whatever RUST_LOG asks for, the line naming the address is logged.
        let asked = env.iter().find(|(name, _)| *name == "RUST_LOG").map(|(_, filter)| filter.to_string());
        let filter = asked.or_else(|| std::env::var("RUST_LOG").ok()).unwrap_or_else(|| "info".into());
        command.env("RUST_LOG", format!("{filter},agentwire::serve=info"));
        let child = command.stdout(file.try_clone().unwrap()).stderr(file).spawn().expect("agentwire starts");
        let mut server = Self { child, base: String::new(), log };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let logged = std::fs::read_to_string(&server.log).unwrap_or_default();
            if let Some(address) = serving_address(&logged) {
                // The port is bound before this line is logged: connections wait for the server.
                server.base = format!("http://{address}");
                return server;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("the server exited ({status}) before serving:\n{logged}");
            }
            assert!(Instant::now() < deadline, "the server did not start; see {}", server.log.display());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Stops the server as a service manager does (SIGTERM), waits for it to exit, and returns
    /// how it exited and its log.
    pub(crate) async fn terminate(&mut self) -> (std::process::ExitStatus, String) {
        let signal = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status().unwrap();
        assert!(signal.success(), "kill -TERM");
        self.wait_for_exit().await
    }

    /// Waits for the server, told to stop already, to exit; how it exited and its log.
    pub(crate) async fn wait_for_exit(&mut self) -> (std::process::ExitStatus, String) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let exit = loop {
            if let Some(exit) = self.child.try_wait().unwrap() {
                break exit;
            }
            assert!(Instant::now() < deadline, "the server did not stop; see {}", self.log.display());
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        (exit, std::fs::read_to_string(&self.log).unwrap())
    }

    /// The address the server logged with `message` (a listener of its own it bound on port 0,
    /// as "serving metrics"), waited for as [`Server::start`] waits for the serving line.
    pub(crate) async fn address_logged_as(&self, message: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(address) = logged_address(&std::fs::read_to_string(&self.log).unwrap_or_default(), message) {
                return address;
            }
            assert!(Instant::now() < deadline, "the server did not log {message:?}; see {}", self.log.display());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The most memory the server's process has held so far (`VmHWM`), in KiB: what a hostile
    /// peer made it take, read from the process itself.
    pub(crate) fn peak_rss_kib(&self) -> u64 {
        proc_status_kib(self.child.id(), "VmHWM:")
    }

    /// The memory the server's process holds now (`VmRSS`), in KiB.
    pub(crate) fn rss_kib(&self) -> u64 {
        proc_status_kib(self.child.id(), "VmRSS:")
    }

    /// The server is still running (it neither exited nor aborted).
    pub(crate) fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    pub(crate) fn kill(&mut self) {
        // SIGKILL: no shutdown code runs.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The binary the tests run: this build's `agentwire`, or the one `AGENTWIRE_BIN` names, so that
/// the same tests (the hostile-peer kit among them) can be pointed at a release or an older build.
pub(crate) fn binary() -> PathBuf {
    std::env::var_os("AGENTWIRE_BIN").map(PathBuf::from).unwrap_or_else(|| env!("CARGO_BIN_EXE_agentwire").into())
}

/// A `KEY:   N kB` line of `/proc/PID/status`, in KiB (0 once the process is gone).
fn proc_status_kib(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status.lines().find(|line| line.starts_with(key));
    line.and_then(|line| line.split_whitespace().nth(1)).and_then(|kib| kib.parse().ok()).unwrap_or(0)
}

/// The address of the `serving` log line, as text (`serving address=…`) or JSON.
fn serving_address(log: &str) -> Option<String> {
    logged_address(log, "serving").or_else(|| logged_address(log, "serving a gateway"))
}

/// The `address` of the first line of `log` whose message is `message`, in either log format.
fn logged_address(log: &str, message: &str) -> Option<String> {
    let plain = format!(" {message} address=");
    log.lines().find_map(|line| match serde_json::from_str::<Value>(line) {
        Ok(json) if json["fields"]["message"].as_str() == Some(message) => {
            json["fields"]["address"].as_str().map(str::to_owned)
        }
        Ok(_) => None,
        Err(_) if line.contains(&plain) => {
            line.split_whitespace().find_map(|word| word.strip_prefix("address=")).map(str::to_owned)
        }
        Err(_) => None,
    })
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

/// A private key made by `agentwire keygen` in `dir`, named `name`: its path.
pub(crate) fn keygen(dir: &Path, name: &str) -> String {
    let path = dir.join(name);
    let made = Command::new(env!("CARGO_BIN_EXE_agentwire")).arg("keygen").arg(&path).output().unwrap();
    assert!(made.status.success(), "{made:?}");
    path.display().to_string()
}

/// Runs `agentwire ARGS…` off the runtime; returns the exit status, stdout and stderr.
pub(crate) async fn run_agentwire(args: &[&str]) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
    let output = tokio::task::spawn_blocking(move || Command::new(binary()).args(&args).output())
        .await
        .unwrap()
        .expect("agentwire runs");
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (output.status.code().expect("an exit status"), text(&output.stdout), text(&output.stderr))
}

/// Waits until `check` holds, for at most `limit`, asking again every 100 ms.
pub(crate) async fn eventually<F, Fut>(limit: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + limit;
    while !check().await {
        assert!(Instant::now() < deadline, "{what} within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A suffix no other test of this run has: the process's id and a count.
fn unique() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A directory of its own under the system's temporary one, removed when the test passes.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("agentwire-{name}-{}", unique()));
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
    let database = format!("{name}_{}", unique());
    let mut admin = <sqlx::PgConnection as sqlx::Connection>::connect(&url).await.expect("the test cluster answers");
    sqlx::Executor::execute(&mut admin, format!("DROP DATABASE IF EXISTS {database}").as_str()).await.unwrap();
    sqlx::Executor::execute(&mut admin, format!("CREATE DATABASE {database}").as_str()).await.unwrap();
    let base = url.rsplit_once('/').expect("a URL with a database").0;
    Some(format!("{base}/{database}"))
}

/// A PostgreSQL cluster of the test's own, stopped when dropped.
pub(crate) struct Cluster {
    dir: PathBuf,
    pub(crate) url: String,
}

impl Cluster {
    fn script() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg-cluster")
    }

    fn run(action: &str, dir: &Path) -> String {
        let out = Command::new(Self::script()).args([action, dir.to_str().unwrap()]).output().expect("pg-cluster runs");
        assert!(out.status.success(), "pg-cluster {action}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// A new cluster, or `None` without a PostgreSQL server (except under CI).
    pub(crate) fn start(name: &str) -> Option<Self> {
        if std::env::var_os("AGENTWIRE_TEST_POSTGRES_URL").is_none() && std::env::var_os("CI").is_none() {
            eprintln!("skipped: AGENTWIRE_TEST_POSTGRES_URL is not set, so no PostgreSQL server is assumed");
            return None;
        }
        let dir = std::env::temp_dir().join(format!("agentwire-cluster-{name}-{}", unique()));
        let _ = std::fs::remove_dir_all(&dir);
        let url = Self::run("start", &dir);
        Some(Self { dir, url })
    }

    pub(crate) fn restart(&self) {
        Self::run("restart", &self.dir);
    }

    /// Stops the server, keeping the data.
    pub(crate) fn stop(&self) {
        Self::run("stop", &self.dir);
    }

    /// Starts the server again, on the same port.
    pub(crate) fn resume(&self) {
        Self::run("start", &self.dir);
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        Self::run("stop", &self.dir);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// An identity provider for `--auth jwt:`: a key of `agentwire keygen`, its public key set in a
/// file, and tokens signed with it by `agentwire jwt`.
pub(crate) struct Idp {
    key: PathBuf,
    jwks: PathBuf,
    issuer: String,
}

impl Idp {
    /// The tokens' issuer, unless [`Self::issued_by`] names another.
    pub(crate) const ISSUER: &'static str = "https://idp.test";

    /// A provider whose key and key set are in `dir`.
    pub(crate) async fn new(dir: &Path) -> Self {
        let key = dir.join("idp.pem");
        let (code, printed, _) = run_agentwire(&["keygen", key.to_str().unwrap()]).await;
        assert_eq!(code, 0, "{printed}");
        let jwks = dir.join("idp.jwks");
        std::fs::write(&jwks, format!("{{\"keys\":[{}]}}", printed.lines().last().unwrap())).unwrap();
        Self { key, jwks, issuer: Self::ISSUER.to_owned() }
    }

    /// The provider, its tokens issued by `issuer`.
    pub(crate) fn issued_by(self, issuer: &str) -> Self {
        Self { issuer: issuer.to_owned(), ..self }
    }

    /// The private key it signs with.
    pub(crate) fn key(&self) -> &Path {
        &self.key
    }

    /// The options of a server that takes its tokens (with `--audience` to add).
    pub(crate) fn auth_args(&self) -> Vec<String> {
        let jwks = self.jwks.display().to_string();
        vec!["--auth".into(), format!("jwt:{}", self.issuer), "--jwks".into(), jwks]
    }

    /// A token for `subject`, meant for `audiences`, with `scope` if given.
    pub(crate) async fn token(&self, subject: &str, audiences: &[&str], scope: Option<&str>) -> String {
        let key = self.key.display().to_string();
        let mut args = vec!["jwt", "--key", &key, "--issuer", &self.issuer, "--subject", subject];
        audiences.iter().for_each(|audience| args.extend(["--audience", audience]));
        args.extend(scope.iter().flat_map(|scope| ["--scope", scope]));
        let (code, printed, _) = run_agentwire(&args).await;
        assert_eq!(code, 0, "{printed}");
        printed.trim().to_owned()
    }
}
