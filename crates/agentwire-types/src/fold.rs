//! How a logged event changes a task: the fold that rebuilds a task from its event log.
//!
//! A server writes a task by committing the events that announce each change; a store reads it
//! back as the last snapshot it wrote with the events after it folded in. Both sides go through
//! [`Task::fold`], so a folded read is the task as it was written.

use crate::{StreamResponse, Task};

impl Task {
    /// Applies a logged `event` to the task:
    ///
    /// - a task snapshot replaces the task;
    /// - a status update sets the status, adds its message, if any, to the history, and its
    ///   metadata, key by key, to the task's;
    /// - a message is added to the history;
    /// - an artifact update replaces the artifact with the same id, is appended to its parts for
    ///   an `append` chunk, or adds the artifact.
    ///
    /// ```
    /// use agentwire_types::{Artifact, Part, StreamResponse, Task, TaskArtifactUpdateEvent};
    ///
    /// let chunk = |text: &str, append| {
    ///     let artifact = Artifact::new("a", "answer", vec![Part::text(text)]);
    ///     StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent { artifact, append, ..Default::default() })
    /// };
    /// let mut task = Task::default();
    /// task.fold(&chunk("Hello, ", false));
    /// task.fold(&chunk("world", true));
    /// assert_eq!(task.artifacts[0].parts, [Part::text("Hello, "), Part::text("world")]);
    /// ```
    pub fn fold(&mut self, event: &StreamResponse) {
        match event {
            StreamResponse::Task(task) => self.clone_from(task),
            StreamResponse::StatusUpdate(update) => {
                if let Some(message) = &update.status.message {
                    self.history.push((**message).clone());
                }
                self.status.clone_from(&update.status);
                // The event's metadata goes into the task's, key by key, as the official SDKs'
                // task managers do: what an agent reports with a status (its usage, say) is then
                // read with the task.
                if let Some(metadata) = update.metadata.as_ref().filter(|metadata| !metadata.is_empty()) {
                    let kept = self.metadata.get_or_insert_with(Default::default);
                    kept.extend(metadata.iter().map(|(key, value)| (key.clone(), value.clone())));
                }
            }
            StreamResponse::Message(message) => self.history.push(message.clone()),
            StreamResponse::ArtifactUpdate(update) => {
                let artifact = &update.artifact;
                match self.artifacts.iter_mut().find(|a| a.artifact_id == artifact.artifact_id) {
                    Some(existing) if update.append => existing.parts.extend_from_slice(&artifact.parts),
                    Some(existing) => existing.clone_from(artifact),
                    None => self.artifacts.push(artifact.clone()),
                }
            }
        }
    }

    /// How many history messages [`fold`](Self::fold)ing `events` adds to the task; `None` if
    /// one of them replaces the whole task.
    pub fn history_added_by<'a>(events: impl IntoIterator<Item = &'a StreamResponse>) -> Option<usize> {
        let mut added = 0;
        for event in events {
            added += match event {
                StreamResponse::Task(_) => return None,
                StreamResponse::StatusUpdate(update) => usize::from(update.status.message.is_some()),
                StreamResponse::Message(_) => 1,
                StreamResponse::ArtifactUpdate(_) => 0,
            };
        }
        Some(added)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Message, StreamResponse, Task, TaskState, TaskStatus, TaskStatusUpdateEvent};

    #[test]
    fn a_status_with_a_message_joins_the_history() {
        let mut task = Task { id: "t".into(), ..Task::default() };
        let status = TaskStatus::new(TaskState::InputRequired).with_message(Message::agent("m1", "which one?"));
        let update = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t".into(),
            status: status.clone(),
            ..TaskStatusUpdateEvent::default()
        });
        task.fold(&update);
        task.fold(&StreamResponse::Message(Message::user("m2", "the blue one")));
        assert_eq!(task.status, status);
        assert_eq!(task.history.iter().map(|m| m.message_id.as_str()).collect::<Vec<_>>(), ["m1", "m2"]);
        assert_eq!(Task::history_added_by([&update, &StreamResponse::Message(Message::default())]), Some(2));
    }

    #[test]
    fn a_status_events_metadata_joins_the_tasks_key_by_key() {
        let metadata = |pairs: &[(&str, i64)]| {
            Some(pairs.iter().map(|(key, value)| ((*key).to_owned(), serde_json::json!(value))).collect())
        };
        let mut task = Task { metadata: metadata(&[("kept", 1), ("replaced", 1)]), ..Task::default() };
        let update = |pairs: &[(&str, i64)]| {
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                status: TaskStatus::new(TaskState::Working),
                metadata: metadata(pairs),
                ..TaskStatusUpdateEvent::default()
            })
        };
        task.fold(&update(&[("replaced", 2), ("added", 3)]));
        task.fold(&update(&[]));
        assert_eq!(task.metadata, metadata(&[("kept", 1), ("replaced", 2), ("added", 3)]));
        let mut bare = Task::default();
        bare.fold(&StreamResponse::StatusUpdate(TaskStatusUpdateEvent::default()));
        assert_eq!(bare.metadata, None, "an event without metadata adds none");
    }

    #[test]
    fn a_snapshot_replaces_the_task() {
        let mut task = Task { id: "old".into(), history: vec![Message::user("m", "hi")], ..Task::default() };
        let snapshot = Task { id: "new".into(), ..Task::default() };
        task.fold(&StreamResponse::Task(snapshot.clone()));
        assert_eq!(task, snapshot);
        assert_eq!(Task::history_added_by([&StreamResponse::Task(snapshot)]), None);
    }
}
