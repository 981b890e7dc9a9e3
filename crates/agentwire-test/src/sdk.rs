//! The agent of `interop/python-server`, served by the official Python SDK, in a process of its
//! own: another implementation for the client to talk to.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// The variable naming a Python interpreter with the server's requirements installed.
pub const PYTHON_VARIABLE: &str = "AGENTWIRE_SDK_PYTHON";

/// How long the server may take to start (the SDK imports much).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// How to start the server.
#[derive(Debug, Clone, Default)]
pub struct SdkOptions {
    /// The bearer token that guards the extended card (none: no extended card).
    pub token: Option<String>,
    /// The HTTP port the card advertises instead of the one served (a proxy's).
    pub card_port: Option<u16>,
    /// The gRPC port the card advertises instead of the one served.
    pub card_grpc_port: Option<u16>,
}

/// The server process, killed when dropped.
pub struct SdkServer {
    /// `http://127.0.0.1:PORT`, where the card, JSON-RPC and HTTP+JSON are served.
    pub base: String,
    /// The HTTP port served.
    pub http_port: u16,
    /// The gRPC port served.
    pub grpc_port: u16,
    child: Child,
    /// Where its log goes: shown when a test fails, removed when it passes.
    log: PathBuf,
}

impl SdkServer {
    /// Starts the server with the interpreter [`PYTHON_VARIABLE`] names. Without it, `None`: the
    /// caller skips its test, except under CI (`CI` set), where a missing interpreter fails it.
    pub async fn start(options: SdkOptions) -> Option<Self> {
        let Some(python) = std::env::var_os(PYTHON_VARIABLE) else {
            assert!(std::env::var_os("CI").is_none(), "CI runs need {PYTHON_VARIABLE} (scripts/test sets it)");
            eprintln!("skipped: {PYTHON_VARIABLE} is not set (scripts/test installs the Python SDK and sets it)");
            return None;
        };
        let (http_port, grpc_port) = (free_port(), free_port());
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop/python-server/server.py");
        let mut command = Command::new(python);
        command.arg(script).args(["--port", &http_port.to_string(), "--grpc-port", &grpc_port.to_string()]);
        if let Some(token) = &options.token {
            command.args(["--token", token]);
        }
        if let Some(port) = options.card_port {
            command.args(["--card-port", &port.to_string()]);
        }
        if let Some(port) = options.card_grpc_port {
            command.args(["--card-grpc-port", &port.to_string()]);
        }
        let log = std::env::temp_dir().join(format!("agentwire-sdk-server-{http_port}.log"));
        let log_file = std::fs::File::create(&log).expect("a log file for the Python SDK server");
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(log_file)
            .kill_on_drop(true)
            .spawn()
            .expect("the Python SDK server starts");
        let mut lines = BufReader::new(child.stdout.take().expect("a piped stdout")).lines();
        let ready = tokio::time::timeout(START_TIMEOUT, async {
            while let Ok(Some(line)) = lines.next_line().await {
                if line.starts_with("READY ") {
                    return true;
                }
            }
            false
        });
        let server = Self { base: format!("http://127.0.0.1:{http_port}"), http_port, grpc_port, child, log };
        assert!(ready.await.unwrap_or(false), "the Python SDK server did not print READY");
        Some(server)
    }
}

impl Drop for SdkServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        if std::thread::panicking() {
            let log = std::fs::read_to_string(&self.log).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(60).collect();
            eprintln!("the Python SDK server's log ({}), last lines:", self.log.display());
            tail.iter().rev().for_each(|line| eprintln!("  {line}"));
        } else {
            let _ = std::fs::remove_file(&self.log);
        }
    }
}

/// A loopback port free now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
}
