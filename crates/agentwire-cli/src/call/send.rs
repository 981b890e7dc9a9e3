//! `agentwire send URL TEXT`.

use std::path::{Path, PathBuf};

use agentwire_types::{Message, Part, Role, SendMessageConfiguration, SendMessageRequest, SendMessageResponse};

use super::{exit, exit_for, follow, wait, ClientArgs, Failure, EXIT_CODES};

#[derive(Debug, clap::Args)]
#[command(after_help = format!("Examples:\n  agentwire send http://127.0.0.1:8080 \"hello\" --stream\n  \
agentwire send http://127.0.0.1:8080 \"summarize this\" --file report.pdf\n  \
agentwire send http://127.0.0.1:8080 \"and now in French\" --task TASK --context CTX\n  \
agentwire send http://127.0.0.1:8080 '' --data '{{\"city\": \"Paris\"}}' --no-wait\n\n{EXIT_CODES}"))]
pub(crate) struct SendOpt {
    /// The agent's base URL.
    pub(crate) url: String,
    /// The message's text (may be empty when --file or --data gives the content).
    pub(crate) text: String,
    /// Attach a file's bytes (repeatable).
    #[arg(long, value_name = "PATH")]
    pub(crate) file: Vec<PathBuf>,
    /// Attach a structured data part (JSON).
    #[arg(long, value_name = "JSON")]
    pub(crate) data: Option<String>,
    /// Continue this task (a follow-up to a task that asked for input).
    #[arg(long, value_name = "ID")]
    pub(crate) task: Option<String>,
    /// The conversation the message belongs to.
    #[arg(long, value_name = "ID")]
    pub(crate) context: Option<String>,
    /// Return as soon as the agent has taken the task, without waiting for it to end.
    #[arg(long, conflicts_with = "stream")]
    pub(crate) no_wait: bool,
    /// Show the task's status changes and artifact chunks as they happen.
    #[arg(long)]
    pub(crate) stream: bool,
    /// Name the send with this key: sent again with the same key (and the same message), it is
    /// answered with the task the first made instead of making another. Without it, a fresh key
    /// still covers the retries after a broken connection.
    #[arg(long, value_name = "KEY")]
    pub(crate) idempotency_key: Option<String>,
    #[command(flatten)]
    pub(crate) client: ClientArgs,
}

pub(crate) async fn run(opt: SendOpt) -> Result<u8, Failure> {
    let message = message(&opt)?;
    let limit = opt.client.time_limit()?;
    let client = opt.client.connect(&opt.url).await?;
    let mut out = opt.client.output();
    // A blocking send returns at once too, and its task is waited for here (`wait`), so that its
    // id is known while it works.
    let configuration = SendMessageConfiguration { return_immediately: !opt.stream, ..Default::default() };
    let request = SendMessageRequest { configuration: Some(configuration), ..SendMessageRequest::new(message) };
    let key = opt.idempotency_key.clone().unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    if opt.stream {
        return follow(client.send_streaming_message_keyed(request, &key).await?, &mut out, &opt.url).await;
    }
    let deadline = limit.map(|limit| (tokio::time::Instant::now() + limit, limit));
    let response = match client.send_message_keyed(request, &key).await? {
        SendMessageResponse::Task(task) if !opt.no_wait && task.status.state.is_running() => {
            SendMessageResponse::Task(wait::until_stopped(&client, task, &mut out, &opt.url, deadline).await?)
        }
        answer => answer,
    };
    if out.json(&response) {
        return Ok(match &response {
            SendMessageResponse::Task(task) => exit_for(task.status.state),
            SendMessageResponse::Message(_) => exit::OK,
        });
    }
    Ok(match response {
        SendMessageResponse::Task(task) => super::show_task(&task, &mut out),
        SendMessageResponse::Message(message) => {
            out.event(&agentwire_types::StreamResponse::Message(message));
            out.finish_stream();
            exit::OK
        }
    })
}

/// The message the options describe.
fn message(opt: &SendOpt) -> Result<Message, Failure> {
    let mut parts = Vec::new();
    if !opt.text.is_empty() {
        parts.push(Part::text(&opt.text));
    }
    for path in &opt.file {
        let bytes = std::fs::read(path).map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))?;
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        parts.push(Part::raw(bytes, name, media_type(path)));
    }
    if let Some(data) = &opt.data {
        let value = serde_json::from_str(data).map_err(|e| Failure::usage(format!("--data is not JSON: {e}")))?;
        parts.push(Part::data(value));
    }
    if parts.is_empty() {
        return Err(Failure::usage("nothing to send: give a text, --file or --data"));
    }
    // A send named by its key is the same message each time it is made.
    let message_id = opt.idempotency_key.clone().unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let mut message = Message::new(Role::User, message_id, parts);
    message.task_id = opt.task.clone().unwrap_or_default();
    message.context_id = opt.context.clone().unwrap_or_default();
    Ok(message)
}

/// A file's media type, by its extension.
fn media_type(path: &Path) -> &'static str {
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or_default().to_ascii_lowercase();
    match extension.as_str() {
        "txt" | "md" => "text/plain",
        "html" | "htm" => "text/html",
        "csv" => "text/csv",
        "json" => "application/json",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "wav" => "audio/wav",
        "mp3" => "audio/mpeg",
        _ => "application/octet-stream",
    }
}
