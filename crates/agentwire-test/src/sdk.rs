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
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../interop/python-server/server.py");
        let mut command = Command::new(python);
        // No ports given: the server binds free ones itself and names them when ready.
        command.arg(script);
        if let Some(token) = &options.token {
            command.args(["--token", token]);
        }
        if let Some(port) = options.card_port {
            command.args(["--card-port", &port.to_string()]);
        }
        if let Some(port) = options.card_grpc_port {
            command.args(["--card-grpc-port", &port.to_string()]);
        }
        let log = tempfile_name("agentwire-sdk-server", "log");
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
                if let Some(ports) = line.strip_prefix("READY ").and_then(ready_ports) {
                    return Some(ports);
                }
            }
            None
        });
        let ports = ready.await.ok().flatten();
        let Some((http_port, grpc_port)) = ports else {
            // Dropped while the test panics, which shows the server's log.
            let _server = Self { base: String::new(), http_port: 0, grpc_port: 0, child, log };
            panic!("the Python SDK server did not print READY");
        };
        Some(Self { base: format!("http://127.0.0.1:{http_port}"), http_port, grpc_port, child, log })
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

/// The ports of a `READY http://127.0.0.1:HTTP_PORT GRPC_PORT` line.
fn ready_ports(line: &str) -> Option<(u16, u16)> {
    let (url, grpc) = line.split_once(' ')?;
    let http = url.rsplit_once(':')?.1;
    Some((http.parse().ok()?, grpc.trim().parse().ok()?))
}

/// A path in the temporary directory no other server of this process uses.
fn tempfile_name(prefix: &str, extension: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("{prefix}-{}-{n}.{extension}", std::process::id()))
}

/// A loopback port free now, for a test that needs an address nothing listens on (the port may
/// be taken by another process later: never hand it to a server).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
}

/// A loopback port free now, for a server a test starts later at an address it must know first
/// (an agent that comes up after its gateway). It lies below the kernel's ephemeral range, where
/// neither `:0` binds nor outgoing connections take ports, so other tests running meanwhile
/// cannot take it; ports are spread by process and never handed out twice within one.
pub fn port_to_serve_later() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let ephemeral_from = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u32>().ok())
        .unwrap_or(32_768);
    let (low, span) =
        (ephemeral_from.saturating_sub(12_000).max(1_024), 12_000.min(ephemeral_from.saturating_sub(1_024)).max(1));
    let offset = std::process::id().wrapping_mul(2_654_435_761) % span;
    for _ in 0..span {
        let port = (low + (offset + NEXT.fetch_add(1, Ordering::Relaxed)) % span) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port below the ephemeral range")
}
