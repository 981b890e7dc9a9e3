//! How the client commands print: compact text for a person, colored on a terminal with a spinner
//! while a stream waits, or one JSON object per line for a script.
//!
//! The spinner (on stderr) redraws the line the cursor is on, so it exists only while the cursor
//! is at the start of a line: an artifact whose chunks are printed as they come keeps the line
//! open, and the spinner is cleared first and started again once the line ends.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use agentwire_client::CardSignature;
use agentwire_types::{AgentCard, Message, Part, PartContent, StreamResponse, Task, TaskState};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

/// Where a command's results go.
pub(crate) struct Output {
    json: bool,
    color: bool,
    spinner: Option<ProgressBar>,
    /// What the spinner says: the task's state.
    waiting_for: String,
    /// The task's state as a stream's lines last showed it, which a status update in the same
    /// state does not show again.
    shown_state: Option<TaskState>,
    /// The artifact whose text the current line is showing, while chunks append to it, and the
    /// text shown.
    open_artifact: Option<(String, String)>,
    /// The terminal's echo of control keys, off while the spinner turns.
    quiet_keys: Option<QuietKeys>,
}

impl Output {
    pub(crate) fn new(json: bool) -> Self {
        let terminal = std::io::stdout().is_terminal();
        let color = !json && colors(terminal);
        Output {
            json,
            color,
            spinner: None,
            waiting_for: String::new(),
            shown_state: None,
            open_artifact: None,
            quiet_keys: None,
        }
    }

    /// One protocol object, in JSON mode.
    pub(crate) fn json(&self, value: &impl Serialize) -> bool {
        if self.json {
            write_line(&serde_json::to_string(value).unwrap_or_default());
        }
        self.json
    }

    /// A line of text for a person, printed above the spinner.
    pub(crate) fn line(&mut self, text: &str) {
        self.close_artifact();
        match &self.spinner {
            Some(spinner) => spinner.suspend(|| write_line(text)),
            None => write_line(text),
        }
    }

    fn paint(&self, style: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{style}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }

    fn state(&self, state: TaskState) -> String {
        let style = match state {
            TaskState::Completed => "32;1",
            TaskState::Failed | TaskState::Rejected => "31;1",
            TaskState::Canceled => "33;1",
            TaskState::InputRequired | TaskState::AuthRequired => "35;1",
            _ => "36",
        };
        self.paint(style, state.as_kebab_name())
    }

    pub(crate) fn task(&mut self, task: &Task) {
        if !self.json(task) {
            self.task_text(task, false);
        }
    }

    /// A task with the messages of its history.
    pub(crate) fn task_with_history(&mut self, task: &Task) {
        if !self.json(task) {
            self.task_text(task, true);
        }
    }

    /// A task: its state and context, the history when asked, its status message (an agent's
    /// reply is often there) and its artifacts.
    fn task_text(&mut self, task: &Task, history: bool) {
        let header = format!("task {} {}", task.id, self.state(task.status.state));
        self.line(&header);
        let context = self.dim(&format!("  context {}", task.context_id));
        self.line(&context);
        self.usage(task.metadata.as_ref());
        if history {
            let heading = self.dim(if task.history.is_empty() { "  history: none" } else { "  history:" });
            self.line(&heading);
            for message in &task.history {
                self.message_indented(message, "    ");
            }
        }
        if let Some(message) = &task.status.message {
            self.message(message);
        }
        for artifact in &task.artifacts {
            let name = if artifact.name.is_empty() { &artifact.artifact_id } else { &artifact.name };
            let line =
                format!("  {} {}", self.paint("1", &format!("{}:", printable(name))), parts_text(&artifact.parts));
            self.line(&line);
        }
    }

    /// What a task spent, if `metadata` carries the usage extension's report: `spent 13 tokens
    /// (1 in, 12 out) in 1 model call and 0 tool rounds, on MODEL`.
    fn usage(&mut self, metadata: Option<&serde_json::Map<String, serde_json::Value>>) {
        let Some(usage) = agentwire_types::Usage::in_metadata(metadata) else { return };
        let total = usage.total;
        let calls = if total.model_calls == 1 { "call" } else { "calls" };
        let rounds = if total.tool_rounds == 1 { "round" } else { "rounds" };
        let mut line = format!(
            "  spent {} tokens ({} in, {} out) in {} model {calls} and {} tool {rounds}",
            total.tokens(),
            total.input_tokens,
            total.output_tokens,
            total.model_calls,
            total.tool_rounds,
        );
        if !usage.model.is_empty() {
            line.push_str(&format!(", on {}", printable(&usage.model)));
        }
        if usage.estimated {
            line.push_str(" (estimated)");
        }
        let line = self.dim(&line);
        self.line(&line);
    }

    fn message(&mut self, message: &Message) {
        self.message_indented(message, "  ");
    }

    fn message_indented(&mut self, message: &Message, indent: &str) {
        let who = format!("{}:", message.role.as_proto_name().trim_start_matches("ROLE_").to_lowercase());
        let line = format!("{indent}{} {}", self.paint("1", &who), message_text(&message.parts));
        self.line(&line);
    }

    /// One event of a stream.
    pub(crate) fn event(&mut self, event: &StreamResponse) {
        if self.json(event) {
            return;
        }
        match event {
            // The task as it stands: a stream's first event, or its only one when the agent
            // answers with the task (its reply in the status message).
            StreamResponse::Task(task) => {
                self.task_text(task, false);
                self.shown_state = Some(task.status.state);
                self.waiting_for = task.status.state.as_kebab_name().to_owned();
            }
            StreamResponse::StatusUpdate(update) => {
                // An agent may report each step of its work (a tool call, its result) as a status
                // in the state it was in: the step's message is news, the state line would not be.
                if self.shown_state != Some(update.status.state) {
                    let line = format!("● {}", self.state(update.status.state));
                    self.line(&line);
                    self.shown_state = Some(update.status.state);
                }
                if let Some(message) = &update.status.message {
                    self.message(message);
                }
                self.usage(update.metadata.as_ref());
                self.waiting_for = update.status.state.as_kebab_name().to_owned();
            }
            StreamResponse::ArtifactUpdate(update) => {
                let artifact = &update.artifact;
                let text = parts_text(&artifact.parts);
                let open = self.open_artifact.as_ref().filter(|(id, _)| *id == artifact.artifact_id);
                let rest = match open {
                    Some(_) if update.append => Some(text.as_str()),
                    // A replacement that begins with what the line shows (the whole text after
                    // its pieces) completes the line rather than repeating it.
                    Some((_, shown)) => text.strip_prefix(shown.as_str()),
                    None => None,
                };
                match rest {
                    Some(rest) => {
                        let rest = rest.to_owned();
                        self.print_inline(&rest);
                        if let Some((_, shown)) = &mut self.open_artifact {
                            shown.push_str(&rest);
                        }
                    }
                    None => {
                        self.close_artifact();
                        let name = if artifact.name.is_empty() { &artifact.artifact_id } else { &artifact.name };
                        let label = self.paint("1", &format!("{}:", printable(name)));
                        self.print_inline(&format!("  {label} "));
                        self.print_inline(&text);
                        self.open_artifact = Some((artifact.artifact_id.clone(), text));
                    }
                }
                if update.last_chunk {
                    self.close_artifact();
                }
            }
            StreamResponse::Message(message) => self.message(message),
        }
        if self.open_artifact.is_none() {
            self.start_spinner();
        }
    }

    /// A spinner while a blocking send waits for its task, naming the task and the state it is
    /// in (on a terminal only).
    pub(crate) fn waiting(&mut self, task_id: &str, state: TaskState) {
        self.waiting_for = format!("{} (task {})", state.as_kebab_name(), printable(task_id));
        self.start_spinner();
    }

    /// Text that does not end the line: the spinner is cleared first, or it would draw over it.
    fn print_inline(&mut self, text: &str) {
        self.clear_spinner();
        let mut stdout = std::io::stdout().lock();
        // Ignored, as in `write_line`.
        let _ = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush());
    }

    fn close_artifact(&mut self) {
        if self.open_artifact.take().is_some() {
            self.print_inline("\n");
        }
    }

    /// A spinner below the output while a stream waits, on a terminal only.
    fn start_spinner(&mut self) {
        if !self.color {
            return;
        }
        if let Some(spinner) = &self.spinner {
            spinner.set_message(self.waiting_for.clone());
            return;
        }
        let spinner = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} {msg}") {
            spinner.set_style(style);
        }
        spinner.set_message(self.waiting_for.clone());
        spinner.enable_steady_tick(Duration::from_millis(100));
        self.spinner = Some(spinner);
        self.quiet_keys = QuietKeys::start();
    }

    /// Removes the spinner and its line.
    fn clear_spinner(&mut self) {
        if let Some(spinner) = self.spinner.take() {
            spinner.finish_and_clear();
        }
        self.quiet_keys = None;
    }

    pub(crate) fn finish_stream(&mut self) {
        self.close_artifact();
        self.clear_spinner();
    }

    /// The card, and whether its signature was verified (`--verify-card-keys`,
    /// `--verify-card-jku`): the JSON form is the card alone.
    pub(crate) fn card(&mut self, card: &AgentCard, signature: Option<&CardSignature>) {
        if self.json(card) {
            return;
        }
        let title = format!("{} {}", self.paint("1", &printable(&card.name)), self.dim(&printable(&card.version)));
        self.line(&title);
        if !card.description.is_empty() {
            self.line(&format!("  {}", printable(&card.description)));
        }
        for interface in &card.supported_interfaces {
            let line = format!("  {} {} {}", interface.protocol_binding, interface.protocol_version, interface.url);
            let line = printable(&line);
            self.line(&line);
        }
        let capabilities = &card.capabilities;
        let yes_no = |flag: Option<bool>| if flag.unwrap_or(false) { "yes" } else { "no" };
        let line = format!(
            "  streaming {}, push notifications {}, extended card {}",
            yes_no(capabilities.streaming),
            yes_no(capabilities.push_notifications),
            yes_no(capabilities.extended_agent_card)
        );
        self.line(&line);
        for skill in &card.skills {
            let line = format!(
                "  - {} {}",
                self.paint("1", &printable(&skill.name)),
                self.dim(&printable(&skill.description))
            );
            self.line(&line);
        }
        let signed = match signature {
            Some(signature) => {
                let key = signature.key_id.as_deref().map(|kid| format!(", key {kid}")).unwrap_or_default();
                let from = signature.key_set.as_deref().map(|url| format!(" of {url}")).unwrap_or_default();
                format!("  signature verified: {}{key}{from}", signature.algorithm)
            }
            None if card.signatures.is_empty() => "  not signed".to_owned(),
            None => "  signed, not verified (--verify-card-keys or --verify-card-jku checks it)".to_owned(),
        };
        self.line(&signed);
    }
}

impl Drop for Output {
    /// A stream that ends with an error leaves no spinner behind (indicatif's own drop would
    /// leave its last frame on the screen).
    fn drop(&mut self) {
        self.close_artifact();
        self.clear_spinner();
    }
}

/// The parts of a message or artifact as one line of text: text as it is, data as JSON, files by
/// name and media type. Text parts follow each other as they are, as a stream shows them: the
/// chunks of a streamed artifact (an agent's tokens) are its text in pieces; other parts are set
/// apart by a space.
fn parts_text(parts: &[Part]) -> String {
    parts_line(parts, false)
}

/// The parts of a message as one line of text, as [`parts_text`] writes them, except that data
/// beside text is named by its members (`[data: toolCalls]`) rather than written out: the text is
/// what the message says to a person (the model agent's "Calling add(…)"), the data the same for
/// a program (its `{"toolCalls": …}`), which `--json` shows whole. Data alone is written out.
fn message_text(parts: &[Part]) -> String {
    let has_text = parts.iter().any(|part| matches!(part.content, PartContent::Text(_)));
    parts_line(parts, has_text)
}

/// `parts` as one line; with `name_data`, data parts by their members' names.
fn parts_line(parts: &[Part], name_data: bool) -> String {
    let mut line = String::new();
    let mut after_text = false;
    for part in parts {
        let text = matches!(part.content, PartContent::Text(_));
        if !(line.is_empty() || text && after_text) {
            line.push(' ');
        }
        match &part.content {
            PartContent::Text(text) => line.push_str(text),
            PartContent::Data(serde_json::Value::Object(members)) if name_data && !members.is_empty() => {
                let mut names: Vec<&str> = members.keys().take(4).map(String::as_str).collect();
                if members.len() > names.len() {
                    names.push("…");
                }
                line.push_str(&format!("[data: {}]", names.join(", ")));
            }
            PartContent::Data(_) if name_data => line.push_str("[data]"),
            PartContent::Data(value) => line.push_str(&value.to_string()),
            PartContent::Raw(_) | PartContent::Url(_) => {
                let name = part.filename.as_deref().unwrap_or("file");
                line.push_str(&format!("[{name} {}]", part.media_type.as_deref().unwrap_or_default()));
            }
        }
        after_text = text;
    }
    printable(&line)
}

/// `text`, written by an agent (or its card), as a terminal may show it: control characters other than line
/// breaks and tabs are shown escaped (`\u{1b}`), since they could move the cursor, recolor or
/// retitle the terminal, or overwrite what came before.
pub(crate) fn printable(text: &str) -> String {
    let hidden = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(hidden) {
        return text.to_owned();
    }
    text.chars().map(|c| if hidden(c) { c.escape_unicode().to_string() } else { c.to_string() }).collect()
}

/// A line on stdout. A reader that stopped reading (`agentwire list URL | head -3`) is no error
/// of the command's: what it is not shown is dropped, where `println!` would panic.
fn write_line(text: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{text}");
}

/// An error, on stderr.
pub(crate) fn error(message: &str) {
    let color = colors(std::io::stderr().is_terminal());
    let label = if color { "\x1b[31;1merror:\x1b[0m" } else { "error:" };
    // Errors carry what agents wrote (their messages, task ids): escaped as their answers are.
    let _ = writeln!(std::io::stderr().lock(), "{label} {}", printable(message));
}

/// Whether text for a terminal is colored: on a terminal only, and never when `NO_COLOR` is set
/// to anything but the empty string (<https://no-color.org>). Log lines follow the same rule, so
/// a log file or pipe gets plain text.
pub(crate) fn colors(terminal: bool) -> bool {
    terminal && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
}

/// While a spinner turns, the terminal does not echo control keys: indicatif leaves the cursor at
/// the right edge of the spinner's line, so the `^C` of a Ctrl-C would go to the next line and
/// leave the spinner above the clearing. The terminal's settings come back when this is dropped.
struct QuietKeys {
    #[cfg(unix)]
    saved: rustix::termios::Termios,
}

impl QuietKeys {
    /// Turns off the echo of control keys, where standard input is a terminal.
    fn start() -> Option<Self> {
        #[cfg(unix)]
        {
            use rustix::termios::{tcgetattr, tcsetattr, LocalModes, OptionalActions};
            let stdin = std::io::stdin();
            let saved = tcgetattr(&stdin).ok()?;
            let mut quiet = saved.clone();
            quiet.local_modes.remove(LocalModes::ECHOCTL);
            tcsetattr(&stdin, OptionalActions::Now, &quiet).ok()?;
            Some(Self { saved })
        }
        #[cfg(not(unix))]
        None
    }
}

impl Drop for QuietKeys {
    fn drop(&mut self) {
        #[cfg(unix)]
        {
            let stdin = std::io::stdin();
            let _ = rustix::termios::tcsetattr(&stdin, rustix::termios::OptionalActions::Now, &self.saved);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agents_control_characters_are_shown_escaped() {
        let parts = [Part::text("red \x1b[31mtext\x1b]0;title\x07"), Part::text(" over\rwritten\nnext\tline")];
        assert_eq!(parts_text(&parts), "red \\u{1b}[31mtext\\u{1b}]0;title\\u{7} over\\u{d}written\nnext\tline");
    }
}
