//! What `agentwire send --stream` leaves on a real terminal: the CLI runs in a tmux pane (120×40)
//! against `agentwire serve`, and the test reads the screen. tmux is skipped when it is not
//! installed, except under CI (`.ci/run` installs it).

use std::process::Command;
use std::time::Duration;

use crate::common::{Server, TempDir};
use tokio::time::Instant;

/// A tmux server of the test's own (its socket in the test's directory), with one shell in a
/// 120×40 pane; killed, with everything it runs, when dropped.
struct Terminal {
    socket: String,
    /// Commands run so far: each marks its end with its own number.
    runs: std::cell::Cell<usize>,
}

impl Terminal {
    fn open(dir: &TempDir) -> Option<Self> {
        if Command::new("tmux").arg("-V").output().is_err() {
            assert!(std::env::var_os("CI").is_none(), "CI runs need tmux (.ci/run installs it)");
            eprintln!("skipped: tmux is not installed");
            return None;
        }
        let socket = dir.0.join("tmux.sock").to_string_lossy().into_owned();
        let terminal = Terminal { socket, runs: std::cell::Cell::new(0) };
        // NO_COLOR would turn the spinner off (the test is about what a terminal shows with it),
        // and RUST_LOG would put log lines among the output.
        let shell = "env -u NO_COLOR -u RUST_LOG sh";
        terminal.tmux(&["new-session", "-d", "-x", "120", "-y", "40", "-s", "cli", shell]);
        Some(terminal)
    }

    fn tmux(&self, args: &[&str]) -> String {
        let output = Command::new("tmux").args(["-S", &self.socket]).args(args).output().expect("tmux runs");
        assert!(output.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).expect("UTF-8")
    }

    /// Types `line` and Enter.
    fn type_line(&self, line: &str) {
        self.tmux(&["send-keys", "-t", "cli", "-l", line]);
        self.tmux(&["send-keys", "-t", "cli", "Enter"]);
    }

    /// Runs `command` in the shell after clearing the screen; returns the screen once the command
    /// has ended, and its exit status.
    async fn run(&self, command: &str) -> (String, i32) {
        self.run_capturing(command, &[]).await
    }

    /// [`Terminal::run`], with `capture-pane` options (`-e`: the color escape sequences too).
    async fn run_capturing(&self, command: &str, options: &[&str]) -> (String, i32) {
        let run = self.runs.get() + 1;
        self.runs.set(run);
        let end = format!("end {run}: exit=");
        self.type_line("clear");
        self.type_line(&format!("{command}; echo \"{end}$?\""));
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let screen = self.tmux(&[&["capture-pane", "-p", "-t", "cli"], options].concat());
            // The typed line shows `exit=$?`; the line the command's end prints, the number.
            let status = screen.lines().find_map(|line| {
                let (_, after) = line.split_once(&end)?;
                after.chars().take_while(char::is_ascii_digit).collect::<String>().parse().ok()
            });
            if let Some(status) = status {
                return (screen, status);
            }
            assert!(Instant::now() < deadline, "{command} did not end:\n{screen}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-S", &self.socket, "kill-server"]).output();
    }
}

/// Whether the screen shows a glyph of indicatif's spinner (Braille patterns).
fn spinner_glyph(screen: &str) -> Option<char> {
    screen.chars().find(|c| ('\u{2800}'..='\u{28ff}').contains(c))
}

#[tokio::test]
async fn a_streamed_reply_on_a_terminal_is_whole_and_leaves_no_spinner() {
    let dir = TempDir::new("terminal-stream");
    let Some(terminal) = Terminal::open(&dir) else { return };
    let server = Server::start(&dir.0, &["--store", "memory", "--agent", "conformance"]).await;
    terminal.type_line(&format!("A={}; U={}", env!("CARGO_BIN_EXE_agentwire"), server.base));

    // An artifact in two chunks: one line, as the chunks append.
    let (screen, status) = terminal.run("$A send $U 'tck-stream-chunked go' --stream").await;
    assert_eq!(status, 0, "{screen}");
    assert!(screen.lines().any(|line| line.trim_end() == "  chunked-artifact: chunk-1 chunk-2"), "{screen}");
    assert!(screen.contains("● completed"), "{screen}");
    assert_eq!(spinner_glyph(&screen), None, "spinner residue:\n{screen}");

    // A second of WORKING, with the spinner turning, then the reply.
    let (screen, status) = terminal.run("$A send $U 'tck-long-running x' --stream").await;
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("  agent: Long-running task finished"), "{screen}");
    assert_eq!(spinner_glyph(&screen), None, "spinner residue:\n{screen}");
    assert!(!screen.lines().any(|line| line.trim() == "working"), "the spinner's message stayed:\n{screen}");
}

#[tokio::test]
async fn no_color_on_a_terminal_colors_neither_text_nor_logs() {
    let dir = TempDir::new("terminal-no-color");
    let Some(terminal) = Terminal::open(&dir) else { return };
    let server = Server::start(&dir.0, &["--store", "memory"]).await;
    terminal.type_line(&format!("A={}; U={}", env!("CARGO_BIN_EXE_agentwire"), server.base));

    // On a terminal, the card's name is bold and the debug log lines are colored...
    let (screen, status) = terminal.run_capturing("RUST_LOG=debug $A card $U", &["-e"]).await;
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("\x1b["), "colors on a terminal:\n{screen}");
    // ...and with NO_COLOR neither is.
    let (screen, status) = terminal.run_capturing("NO_COLOR=1 RUST_LOG=debug $A card $U", &["-e"]).await;
    assert_eq!(status, 0, "{screen}");
    assert!(screen.contains("DEBUG") && screen.contains("Echo"), "{screen}");
    assert!(!screen.contains('\x1b'), "NO_COLOR:\n{screen}");
}

/// Ctrl-C on a stream being followed stops the following, not the task: the spinner goes, and
/// the line says the task goes on and how to follow it again.
#[tokio::test]
async fn ctrl_c_on_a_followed_stream_says_the_task_goes_on() {
    let dir = TempDir::new("terminal-ctrl-c");
    let Some(terminal) = Terminal::open(&dir) else { return };
    let server = Server::start(&dir.0, &["--store", "memory", "--agent", "conformance"]).await;
    terminal.type_line(&format!("A={}; U={}", env!("CARGO_BIN_EXE_agentwire"), server.base));
    terminal.type_line("clear");
    terminal.type_line("$A send $U 'tck-cancel x' --stream; echo \"ended: exit=$?\"");
    let screen = |terminal: &Terminal| terminal.tmux(&["capture-pane", "-p", "-t", "cli"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !screen(&terminal).contains("● working") {
        assert!(Instant::now() < deadline, "the task did not start:\n{}", screen(&terminal));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    terminal.tmux(&["send-keys", "-t", "cli", "C-c"]);
    let ended = loop {
        let shown = screen(&terminal);
        if shown.contains("ended: exit=1") {
            break shown;
        }
        assert!(Instant::now() < deadline, "Ctrl-C did not end the command:\n{shown}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(ended.contains("ended: exit=130"), "{ended}");
    assert!(ended.contains("the task goes on") && ended.contains("agentwire subscribe"), "{ended}");
    assert!(ended.contains("agentwire cancel"), "{ended}");
    assert_eq!(spinner_glyph(&ended), None, "spinner residue:\n{ended}");
}

/// A blocking send shows, while it waits, the task it waits for; Ctrl-C stops the waiting and
/// says how to follow the task and how to cancel it.
#[tokio::test]
async fn ctrl_c_on_a_blocking_send_names_the_task() {
    let dir = TempDir::new("terminal-blocking-ctrl-c");
    let Some(terminal) = Terminal::open(&dir) else { return };
    let server = Server::start(&dir.0, &["--store", "memory", "--agent", "conformance"]).await;
    terminal.type_line(&format!("A={}; U={}", env!("CARGO_BIN_EXE_agentwire"), server.base));
    terminal.type_line("clear");
    terminal.type_line("$A send $U 'tck-cancel x'; echo \"ended: exit=$?\"");
    let screen = |terminal: &Terminal| terminal.tmux(&["capture-pane", "-p", "-t", "cli"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    let waiting = loop {
        let shown = screen(&terminal);
        if shown.contains("working (task ") {
            break shown;
        }
        assert!(Instant::now() < deadline, "the wait is not shown:\n{shown}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let id = waiting.split("working (task ").nth(1).and_then(|rest| rest.split(')').next()).unwrap().to_owned();
    terminal.tmux(&["send-keys", "-t", "cli", "C-c"]);
    let ended = loop {
        let shown = screen(&terminal);
        if shown.contains("ended: exit=1") {
            break shown;
        }
        assert!(Instant::now() < deadline, "Ctrl-C did not end the command:\n{shown}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(ended.contains("ended: exit=130"), "{ended}");
    // The pane is 120 columns wide: the line wraps.
    let joined: String = ended.lines().map(str::trim_end).collect();
    assert!(joined.contains(&format!("agentwire subscribe {} {id}", server.base)), "{ended}");
    assert!(joined.contains(&format!("agentwire cancel {} {id}", server.base)), "{ended}");
    assert_eq!(spinner_glyph(&ended), None, "spinner residue:\n{ended}");
}
