//! The `conformance` agent: the behaviours public A2A conformance suites drive a server through.
//!
//! A script is chosen by the message id's prefix (longest match wins), else by the first word of
//! the task's first user message, else the task completes with "Hello from TCK". A v0.3 request
//! that matches neither follows the v0.3 suite's contract instead: the task works for a while,
//! then asks for input with "Hello world!", and stays open.

use std::time::Duration;

use agentwire_types::{AgentCard, AgentSkill, Artifact, Dialect, Part, TaskState};
use serde_json::json;

use super::{AgentError, AgentExecutor, EventStream, ExecutionContext, TaskUpdater};

/// What the agent does with one message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    CompleteWithMessage,
    InputRequired,
    MessageResponse,
    ArtifactText,
    ArtifactFile,
    ArtifactFileUrl,
    ArtifactData,
    /// WORKING, one text artifact, COMPLETED.
    StreamLifecycle(&'static str),
    StreamArtifactFile,
    CompletedOnly,
    StreamChunked,
    /// WORKING for a while, then COMPLETED.
    LongRunning(LongRun),
    Reject,
    MultiTurn,
    WorkUntilCanceled,
    Fail,
    AuthRequired,
    UnknownScenario,
    /// v0.3's default: WORKING, then INPUT_REQUIRED with "Hello world!" (the task stays open for
    /// follow-ups and cancellation).
    WorkThenAskV03,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LongRun {
    /// About one second.
    Short,
    /// Long enough for a resubscription to catch it running: twice the v1.0 suite's streaming
    /// timeout, or 12 s for a v0.3 request.
    Resubscribe,
}

/// Message-id prefixes, in the TCK's vocabulary.
const BY_MESSAGE_ID: &[(&str, Script)] = &[
    ("tck-complete-task", Script::CompleteWithMessage),
    ("tck-input-required", Script::InputRequired),
    ("tck-message-response", Script::MessageResponse),
    ("tck-artifact-text", Script::ArtifactText),
    ("tck-artifact-file-url", Script::ArtifactFileUrl),
    ("tck-artifact-file", Script::ArtifactFile),
    ("tck-artifact-data", Script::ArtifactData),
    ("tck-stream-001", Script::StreamLifecycle("Stream hello from TCK")),
    ("tck-stream-002", Script::CompletedOnly),
    ("tck-stream-003", Script::StreamLifecycle("Stream task lifecycle")),
    ("tck-stream-ordering-001", Script::StreamLifecycle("Ordered output")),
    ("tck-stream-artifact-text", Script::StreamLifecycle("Streamed text content")),
    ("tck-stream-artifact-file", Script::StreamArtifactFile),
    ("tck-stream-artifact-chunked", Script::StreamChunked),
    ("test-resubscribe-message-id", Script::LongRunning(LongRun::Resubscribe)),
    ("tck-reject-task", Script::Reject),
];

/// First words of the task's first user message.
const BY_FIRST_WORD: &[(&str, Script)] = &[
    ("tck-complete-task", Script::CompleteWithMessage),
    ("tck-long-running", Script::LongRunning(LongRun::Short)),
    ("tck-multi-turn", Script::MultiTurn),
    ("tck-stream-basic", Script::StreamLifecycle("Stream hello from TCK")),
    ("tck-message-response", Script::MessageResponse),
    ("tck-cancel", Script::WorkUntilCanceled),
    ("tck-task-failure", Script::Fail),
    ("tck-stream-chunked", Script::StreamChunked),
    ("tck-auth-required", Script::AuthRequired),
    ("tck-artifact-text", Script::ArtifactText),
    ("tck-artifact-file-url", Script::ArtifactFileUrl),
    ("tck-artifact-file", Script::ArtifactFile),
    ("tck-artifact-data", Script::ArtifactData),
];

/// Whether a request follows the v0.3 suite's contract (docs/PROTOCOL.md, "The conformance agent"): that suite drives its server
/// in v0.3 only, and expects its own timings and defaults.
fn follows_v03_suite(ctx: &ExecutionContext) -> bool {
    match ctx.request.dialect {
        Dialect::V03 => true,
        Dialect::V1 | Dialect::Legacy => false,
    }
}

fn script_for(ctx: &ExecutionContext) -> Script {
    let by_id = BY_MESSAGE_ID
        .iter()
        .filter(|(prefix, _)| ctx.message.message_id.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len());
    if let Some((_, script)) = by_id {
        return *script;
    }
    let first_text = ctx.first_message().parts.iter().find_map(|p| p.as_text()).unwrap_or("");
    let first_word = first_text.split_whitespace().next().unwrap_or("");
    match BY_FIRST_WORD.iter().find(|(word, _)| *word == first_word) {
        Some((_, script)) => *script,
        None if first_word.starts_with("tck-") => Script::UnknownScenario,
        None if follows_v03_suite(ctx) => Script::WorkThenAskV03,
        None => Script::CompleteWithMessage,
    }
}

/// Implements the A2A TCK scenario contract; see docs/PROTOCOL.md, "The conformance agent".
#[derive(Debug, Clone)]
pub struct ConformanceAgent {
    resubscribe_run: Duration,
    timings: V03Timings,
}

/// How long the v0.3 scenarios take.
#[derive(Debug, Clone, Copy)]
struct V03Timings {
    /// WORKING before INPUT_REQUIRED.
    work: Duration,
    /// WORKING before a resubscription scenario completes.
    resubscribe_run: Duration,
}

impl Default for ConformanceAgent {
    fn default() -> Self {
        Self::new()
    }
}

impl ConformanceAgent {
    /// The agent, with the long-running scenario lasting twice `TCK_STREAMING_TIMEOUT` seconds
    /// (default 2 s, so 4 s).
    pub fn new() -> Self {
        let timeout = std::env::var("TCK_STREAMING_TIMEOUT")
            .ok()
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v > 0.0)
            .unwrap_or(2.0);
        let timings = V03Timings { work: Duration::from_secs(3), resubscribe_run: Duration::from_secs(12) };
        Self { resubscribe_run: Duration::from_secs_f64(timeout * 2.0), timings }
    }

    /// The v0.3 scenarios' timings: WORKING for `work` before asking for input, and for
    /// `resubscribe_run` before a resubscription scenario completes (defaults 3 s and 12 s).
    pub fn with_v03_timings(mut self, work: Duration, resubscribe_run: Duration) -> Self {
        self.timings = V03Timings { work, resubscribe_run };
        self
    }

    /// The conformance agent's card. The scenarios accept any content (only the message id and
    /// the first word matter), so every media type is accepted.
    pub fn card() -> AgentCard {
        AgentCard {
            name: "agentwire conformance agent".into(),
            description: "Implements the scenarios of the A2A conformance suites".into(),
            default_input_modes: vec!["*/*".into()],
            default_output_modes: vec!["text/plain".into(), "application/json".into()],
            skills: vec![AgentSkill {
                id: "conformance".into(),
                name: "Conformance scenarios".into(),
                description: "Completes, streams, pauses, fails or rejects tasks as the conformance suites ask".into(),
                tags: vec!["conformance".into(), "tck".into()],
                ..AgentSkill::default()
            }],
            ..AgentCard::default()
        }
    }

    /// The extended card: `card` plus a skill only authenticated clients see.
    pub fn extended_card(card: &AgentCard) -> AgentCard {
        let mut extended = card.clone();
        extended.skills.push(AgentSkill {
            id: "extended".into(),
            name: "Extended skill".into(),
            description: "Only listed in the extended card".into(),
            tags: vec!["extended".into()],
            ..AgentSkill::default()
        });
        extended
    }
}

impl AgentExecutor for ConformanceAgent {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let script = script_for(&ctx);
        let timings = self.timings;
        let resubscribe_run = if follows_v03_suite(&ctx) { timings.resubscribe_run } else { self.resubscribe_run };
        ctx.run(move |ctx, updater| async move { play(script, &ctx, &updater, resubscribe_run, timings).await })
    }
}

fn file_part() -> Part {
    Part::raw(b"Generated file content".to_vec(), "output.txt", "text/plain")
}

async fn play(
    script: Script,
    ctx: &ExecutionContext,
    up: &TaskUpdater,
    resubscribe_run: Duration,
    v03: V03Timings,
) -> Result<(), AgentError> {
    let artifact = |name: &str, part: Part| Artifact::new(crate::ids::new_id(), name, vec![part]);
    match script {
        Script::CompleteWithMessage => up.complete_with("Hello from TCK").await,
        Script::InputRequired => up.input_required("Please provide more input").await,
        Script::MessageResponse => up.reply(up.message("Direct message response")).await,
        Script::ArtifactText => {
            up.add_artifact(artifact("text-artifact", Part::text("Generated text content"))).await?;
            up.complete().await
        }
        Script::ArtifactFile => {
            up.add_artifact(artifact("file-artifact", file_part())).await?;
            up.complete().await
        }
        Script::ArtifactFileUrl => {
            let part = Part::url("https://example.com/output.txt", "output.txt", "text/plain");
            up.add_artifact(artifact("file-url-artifact", part)).await?;
            up.complete().await
        }
        Script::ArtifactData => {
            up.add_artifact(artifact("data-artifact", Part::data(json!({"key": "value", "count": 42})))).await?;
            up.complete().await
        }
        Script::StreamLifecycle(text) => {
            up.working().await?;
            up.add_artifact(artifact("stream-artifact", Part::text(text))).await?;
            up.complete().await
        }
        Script::StreamArtifactFile => {
            up.working().await?;
            up.add_artifact(artifact("stream-file-artifact", file_part())).await?;
            up.complete().await
        }
        Script::CompletedOnly => up.complete().await,
        Script::StreamChunked => {
            let id = crate::ids::new_id();
            up.working().await?;
            let chunk = |text: &str| Artifact::new(id.clone(), "chunked-artifact", vec![Part::text(text)]);
            up.artifact_chunk(chunk("chunk-1 "), false, false).await?;
            up.artifact_chunk(chunk("chunk-2"), true, true).await?;
            up.complete().await
        }
        Script::LongRunning(run) => {
            let duration = match run {
                LongRun::Short => Duration::from_secs(1),
                LongRun::Resubscribe => resubscribe_run,
            };
            up.working().await?;
            tokio::select! {
                () = tokio::time::sleep(duration) => up.complete_with("Long-running task finished").await,
                () = ctx.cancellation().cancelled() => up.canceled().await,
            }
        }
        Script::Reject => up.reject("rejected").await,
        Script::MultiTurn => {
            if ctx.message.text().trim_start().to_ascii_lowercase().starts_with("done") {
                up.complete_with("Conversation complete").await
            } else {
                up.input_required("Please continue; send 'done' to finish").await
            }
        }
        Script::WorkUntilCanceled => {
            up.working().await?;
            ctx.cancellation().cancelled().await;
            up.status(TaskState::Canceled, None).await
        }
        Script::Fail => up.fail("The task failed as requested").await,
        Script::AuthRequired => up.auth_required("Authorization is required to continue").await,
        Script::UnknownScenario => up.fail(format!("unknown scenario: {}", ctx.first_message().text())).await,
        Script::WorkThenAskV03 => {
            up.working().await?;
            tokio::select! {
                () = tokio::time::sleep(v03.work) => up.input_required("Hello world!").await,
                () = ctx.cancellation().cancelled() => up.canceled().await,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use agentwire_types::Message;

    use super::*;

    fn ctx(message_id: &str, text: &str) -> ExecutionContext {
        ExecutionContext::new("t", "c", Message::user(message_id, text))
    }

    #[test]
    fn longest_message_id_prefix_wins() {
        assert_eq!(script_for(&ctx("tck-artifact-file-url-1", "")), Script::ArtifactFileUrl);
        assert_eq!(script_for(&ctx("tck-artifact-file-1", "")), Script::ArtifactFile);
        assert_eq!(script_for(&ctx("tck-stream-artifact-chunked-9", "")), Script::StreamChunked);
    }

    #[test]
    fn a_v03_request_without_a_scenario_follows_the_v03_contract() {
        let mut v03 = ctx("text-message-id-1", "Hello from TCK!");
        v03.request.dialect = Dialect::V03;
        assert_eq!(script_for(&v03), Script::WorkThenAskV03);
        assert_eq!(script_for(&ctx("text-message-id-1", "Hello from TCK!")), Script::CompleteWithMessage);
        v03.message = agentwire_types::Message::user("m", "tck-cancel");
        assert_eq!(script_for(&v03), Script::WorkUntilCanceled, "named scenarios apply in every dialect");
    }

    #[test]
    fn first_word_applies_when_no_prefix_matches() {
        assert_eq!(script_for(&ctx("m1", "tck-cancel please")), Script::WorkUntilCanceled);
        assert_eq!(script_for(&ctx("m1", "tck-nonsense")), Script::UnknownScenario);
        assert_eq!(script_for(&ctx("m1", "hello")), Script::CompleteWithMessage);
    }
}
