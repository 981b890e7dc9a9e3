//! How an agent event changes a task: the one place that writes status, history and artifacts.

use agentwire_types::{
    A2AError, MemorySize, Message, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus,
    TaskStatusUpdateEvent, Timestamp,
};

use crate::agent::AgentEvent;

/// Applies `event` to `task` and returns the stream item that announces it: the announcement is
/// made first, then folded into the task with [`Task::fold`], the fold stores use to read a task
/// back from its log.
///
/// A status message and an agent message are added to the history; an artifact replaces the one
/// with the same id, or is appended to it for `append` chunks. Terminal tasks are immutable.
pub(crate) fn apply(task: &mut Task, event: AgentEvent) -> Result<StreamResponse, A2AError> {
    if task.status.state.is_terminal() {
        return Err(A2AError::unsupported_operation(format!(
            "task {} is {} and cannot change any more",
            task.id, task.status.state
        )));
    }
    let announcement = match event {
        AgentEvent::Status { state, message, metadata } => {
            if state == TaskState::Unspecified {
                return Err(A2AError::invalid_agent_response("the agent sent a status without a state"));
            }
            let message = message.map(|m| Box::new(own_message(task, m)));
            // Who asked is the server's to record, when the task is made: an agent's status
            // metadata, which joins the task's, neither writes nor removes it.
            let metadata = metadata.map(|mut metadata| {
                metadata.remove(agentwire_types::CALLER_KEY);
                metadata
            });
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                generation: None,
                task_id: task.id.clone(),
                context_id: task.context_id.clone(),
                status: TaskStatus { state, message, timestamp: Some(Timestamp::now()) },
                metadata,
            })
        }
        AgentEvent::Artifact { artifact, append, last_chunk } => {
            if artifact.artifact_id.is_empty() {
                return Err(A2AError::invalid_agent_response("the agent sent an artifact without an artifactId"));
            }
            StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                generation: None,
                task_id: task.id.clone(),
                context_id: task.context_id.clone(),
                artifact,
                append,
                last_chunk,
                metadata: None,
            })
        }
        AgentEvent::Message(message) => StreamResponse::Message(own_message(task, message)),
    };
    // The task changes exactly as a store folding the logged announcement changes it.
    task.fold(&announcement);
    Ok(announcement)
}

/// Adds a client's follow-up message to the history of an existing task.
pub(crate) fn add_user_message(task: &mut Task, message: Message) -> StreamResponse {
    let announcement = StreamResponse::Message(own_message(task, message));
    task.fold(&announcement);
    announcement
}

/// Messages stored with a task always name it and its context.
fn own_message(task: &Task, mut message: Message) -> Message {
    message.task_id.clone_from(&task.id);
    message.context_id.clone_from(&task.context_id);
    message
}

/// The events that cancel `task`, or none if it already ended.
pub(crate) fn cancel_events(task: &mut Task) -> Vec<StreamResponse> {
    ending_events(task, TaskState::Canceled, None)
}

/// The events that end `task` in `state`, with an agent message saying why; none if it already
/// ended.
pub(crate) fn ending_events(task: &mut Task, state: TaskState, reason: Option<&str>) -> Vec<StreamResponse> {
    if task.status.state.is_terminal() {
        return Vec::new();
    }
    let message = reason.map(|text| Message::agent(crate::ids::new_id(), text));
    let event = AgentEvent::Status { state, message, metadata: None };
    apply(task, event).map(|e| vec![e]).unwrap_or_default()
}

/// Applies `events` to `task` in order, up to and including the first that settles it (the rest
/// are left in the iterator), adding their announcements to `announcements`. An event that would
/// take the task's history and artifacts past `max_bytes` is refused, and the task fails instead.
/// Returns how many events it took and the reasons the task refused some of them (a refused event
/// changes nothing).
pub(crate) fn apply_ready(
    task: &mut Task,
    events: impl Iterator<Item = AgentEvent>,
    announcements: &mut Vec<StreamResponse>,
    max_bytes: usize,
) -> (usize, Vec<A2AError>) {
    let mut refused = Vec::new();
    let mut taken = 0;
    // Measured once, when the first event that adds content comes; then kept up to date.
    let mut size = None;
    for event in events {
        taken += 1;
        let adds = event.added_size();
        if adds > 0 {
            let held = *size.get_or_insert_with(|| task.memory_size());
            if held + adds > max_bytes {
                refused.push(A2AError::invalid_agent_response(format!(
                    "the agent's event would take task {} to about {} bytes; a task may hold {max_bytes}",
                    task.id,
                    held + adds
                )));
                let reason = format!("the task outgrew the {max_bytes} bytes a task may hold");
                announcements.extend(ending_events(task, TaskState::Failed, Some(&reason)));
                break;
            }
        }
        match apply(task, event) {
            Ok(announcement) => {
                size = size.map(|held| held + adds);
                announcements.push(announcement);
            }
            Err(error) => refused.push(error),
        }
        if settles(task) {
            break;
        }
    }
    (taken, refused)
}

/// Whether a blocking send can return: the task ended or waits for the client.
pub(crate) fn settles(task: &Task) -> bool {
    task.status.state.is_terminal() || task.status.state.is_interrupted()
}

#[cfg(test)]
mod tests {
    use agentwire_types::{Artifact, Part};

    use super::*;

    fn chunk(text: &str, append: bool) -> AgentEvent {
        AgentEvent::Artifact { artifact: Artifact::new("a", "n", vec![Part::text(text)]), append, last_chunk: false }
    }

    #[test]
    fn chunks_append_and_replacements_replace() {
        let mut task = Task { id: "t".into(), status: TaskStatus::new(TaskState::Working), ..Task::default() };
        apply(&mut task, chunk("one", false)).unwrap();
        apply(&mut task, chunk("two", true)).unwrap();
        assert_eq!(task.artifacts[0].parts.len(), 2);
        apply(&mut task, chunk("three", false)).unwrap();
        assert_eq!(task.artifacts[0].parts, vec![Part::text("three")]);
    }

    #[test]
    fn an_agents_status_metadata_joins_the_task_but_never_says_who_asked() {
        let asked = serde_json::json!({"principal": "alice", "actors": ["gw"]});
        let metadata = serde_json::Map::from_iter([(agentwire_types::CALLER_KEY.to_owned(), asked.clone())]);
        let mut task = Task { id: "t".into(), metadata: Some(metadata), ..Task::default() };
        let forged = serde_json::Map::from_iter([
            (agentwire_types::CALLER_KEY.to_owned(), serde_json::json!({"principal": "mallory"})),
            ("usage".to_owned(), serde_json::json!({"outputTokens": 7})),
        ]);
        let event = AgentEvent::Status { state: TaskState::Working, message: None, metadata: Some(forged) };
        let announced = apply(&mut task, event).unwrap();
        let kept = task.metadata.unwrap();
        assert_eq!(
            (&kept[agentwire_types::CALLER_KEY], &kept["usage"]["outputTokens"]),
            (&asked, &serde_json::json!(7))
        );
        let StreamResponse::StatusUpdate(update) = announced else { panic!("{announced:?}") };
        assert!(!update.metadata.unwrap().contains_key(agentwire_types::CALLER_KEY));
    }

    #[test]
    fn terminal_tasks_do_not_change() {
        let mut task = Task { id: "t".into(), status: TaskStatus::new(TaskState::Completed), ..Task::default() };
        let event = AgentEvent::Status { state: TaskState::Working, message: None, metadata: None };
        assert!(apply(&mut task, event).is_err());
        assert_eq!(task.status.state, TaskState::Completed);
    }
}
