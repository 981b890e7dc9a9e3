//! The artifact `answer`: the model's text as it streams, in chunks of a few pieces each.

use std::time::Duration;

use agentwire_server::agent::{AgentError, TaskUpdater};
use agentwire_types::{Artifact, Part, Task};
use tokio::time::Instant;

use crate::conversation::ANSWER;

/// A chunk is sent once this much text waits…
const CHUNK_BYTES: usize = 4096;

/// …and otherwise at most this often: a piece after a pause goes at once, a reader sees a fast
/// answer grow 20 times a second, and a model that streams a byte per event costs a commit per
/// chunk, not per byte.
const CHUNK_INTERVAL: Duration = Duration::from_millis(50);

/// The artifact `answer`: the pieces of text gathered into chunks appended as they come, then the
/// whole text as the last chunk, which replaces them. A reader of the stream sees the text grow;
/// the stored task keeps it as one part (the chunks would be a part each).
pub(crate) struct AnswerArtifact {
    updater: TaskUpdater,
    /// The text so far, the earlier rounds' and turns' included; the only copy the agent keeps.
    text: String,
    /// How much of `text` was sent (or was there before this turn).
    sent: usize,
    /// The artifact exists: chunks append to it.
    started: bool,
    /// When the last chunk was sent.
    last_sent: Option<Instant>,
    /// When the text waiting is due to be sent, if any waits.
    due: Option<Instant>,
}

impl AnswerArtifact {
    /// The answer of `task`, so far (none for a new task).
    pub(crate) fn of(updater: TaskUpdater, task: Option<&Task>) -> Self {
        let artifact = task.and_then(|task| task.artifacts.iter().find(|artifact| artifact.artifact_id == ANSWER));
        let text: String = artifact.map(|a| a.parts.iter().filter_map(Part::as_text).collect()).unwrap_or_default();
        Self { updater, sent: text.len(), text, started: artifact.is_some(), last_sent: None, due: None }
    }

    /// The length of the text so far, where a round's text starts.
    pub(crate) fn len(&self) -> usize {
        self.text.len()
    }

    /// The text from `start` on.
    pub(crate) fn since(&self, start: usize) -> &str {
        self.text.get(start..).unwrap_or("")
    }

    /// Adds a piece of text: sent now if the last chunk went long enough ago, or with the
    /// pieces that follow it soon.
    pub(crate) async fn push(&mut self, piece: &str) -> Result<(), AgentError> {
        self.text.push_str(piece);
        let next = self.last_sent.map(|last| last + CHUNK_INTERVAL);
        match next {
            Some(next) if Instant::now() < next && self.text.len() - self.sent < CHUNK_BYTES => {
                self.due = Some(next);
                Ok(())
            }
            _ => self.flush().await,
        }
    }

    /// Completes when the text waiting is due to be sent; never when none waits.
    pub(crate) async fn due(&self) {
        match self.due {
            Some(due) => tokio::time::sleep_until(due).await,
            None => std::future::pending().await,
        }
    }

    /// Sends the text waiting, if any, as a chunk.
    pub(crate) async fn flush(&mut self) -> Result<(), AgentError> {
        self.due = None;
        if self.sent == self.text.len() {
            return Ok(());
        }
        let chunk = self.text[self.sent..].to_owned();
        self.sent = self.text.len();
        self.last_sent = Some(Instant::now());
        let append = std::mem::replace(&mut self.started, true);
        self.send(chunk, append, false).await
    }

    /// Ends the artifact with the whole text (empty when the model said nothing).
    pub(crate) async fn finish(&mut self) -> Result<(), AgentError> {
        self.started = true;
        self.due = None;
        self.sent = 0;
        let text = std::mem::take(&mut self.text);
        self.send(text, false, true).await
    }

    async fn send(&self, text: String, append: bool, last: bool) -> Result<(), AgentError> {
        let artifact = Artifact {
            artifact_id: ANSWER.into(),
            name: ANSWER.into(),
            parts: vec![Part::text(text)],
            ..Artifact::default()
        };
        self.updater.artifact_chunk(artifact, append, last).await
    }
}
