//! How much memory a value holds: what limits and retention budgets measure.

use std::mem::size_of;

use serde_json::{Map, Value};

use crate::{Artifact, Message, Part, PartContent, StreamResponse, Task, TaskStatus};

/// An estimate of the memory a value holds: its own size plus everything it owns on the heap.
///
/// It counts what a client can make a server keep, so that limits and retention budgets measure
/// memory rather than items: a message of many tiny parts weighs far more than its JSON text.
/// Allocator overhead and spare capacity are not counted.
///
/// ```
/// use agentwire_types::{MemorySize, Message, Part};
///
/// let one_part = Message::user("m1", "hello");
/// let mut many_parts = one_part.clone();
/// many_parts.parts = vec![Part::text(""); 1_000];
/// assert!(many_parts.memory_size() > 100 * one_part.memory_size());
/// ```
pub trait MemorySize {
    /// The estimate, in bytes.
    fn memory_size(&self) -> usize;
}

/// What a value owns on the heap, apart from its own size.
trait Owned {
    fn owned(&self) -> usize;
}

impl<T: Owned> MemorySize for T {
    fn memory_size(&self) -> usize {
        size_of::<T>() + self.owned()
    }
}

impl Owned for String {
    fn owned(&self) -> usize {
        self.len()
    }
}

impl<T: Owned> Owned for Vec<T> {
    fn owned(&self) -> usize {
        self.iter().map(MemorySize::memory_size).sum()
    }
}

impl<T: Owned> Owned for Option<T> {
    fn owned(&self) -> usize {
        self.as_ref().map_or(0, Owned::owned)
    }
}

impl<T: Owned> Owned for Box<T> {
    fn owned(&self) -> usize {
        (**self).memory_size()
    }
}

impl Owned for Value {
    fn owned(&self) -> usize {
        match self {
            Value::Null | Value::Bool(_) | Value::Number(_) => 0,
            Value::String(s) => s.owned(),
            Value::Array(items) => items.owned(),
            Value::Object(map) => map.owned(),
        }
    }
}

impl Owned for Map<String, Value> {
    fn owned(&self) -> usize {
        self.iter().map(|(key, value)| key.memory_size() + value.memory_size()).sum()
    }
}

impl Owned for Part {
    fn owned(&self) -> usize {
        let content = match &self.content {
            PartContent::Text(text) | PartContent::Url(text) => text.len(),
            PartContent::Raw(bytes) => bytes.len(),
            PartContent::Data(value) => value.owned(),
        };
        content + self.metadata.owned() + self.filename.owned() + self.media_type.owned()
    }
}

impl Owned for Message {
    fn owned(&self) -> usize {
        self.message_id.owned()
            + self.context_id.owned()
            + self.task_id.owned()
            + self.parts.owned()
            + self.metadata.owned()
            + self.extensions.owned()
            + self.reference_task_ids.owned()
    }
}

impl Owned for Artifact {
    fn owned(&self) -> usize {
        self.artifact_id.owned()
            + self.name.owned()
            + self.description.owned()
            + self.parts.owned()
            + self.metadata.owned()
            + self.extensions.owned()
    }
}

impl Owned for TaskStatus {
    fn owned(&self) -> usize {
        self.message.owned()
    }
}

impl Owned for Task {
    fn owned(&self) -> usize {
        self.id.owned()
            + self.context_id.owned()
            + self.status.owned()
            + self.artifacts.owned()
            + self.history.owned()
            + self.metadata.owned()
    }
}

impl Owned for StreamResponse {
    fn owned(&self) -> usize {
        match self {
            Self::Task(task) => task.owned(),
            Self::Message(message) => message.owned(),
            Self::StatusUpdate(update) => {
                update.task_id.owned() + update.context_id.owned() + update.status.owned() + update.metadata.owned()
            }
            Self::ArtifactUpdate(update) => {
                update.task_id.owned() + update.context_id.owned() + update.artifact.owned() + update.metadata.owned()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn content_counts_once_whatever_holds_it() {
        let text = "x".repeat(10_000);
        let message = Message::user("m", text.as_str());
        assert!(message.memory_size() >= 10_000);
        assert!(message.memory_size() < 11_000);
        let task = Task { history: vec![message.clone(), message], ..Task::default() };
        assert!(task.memory_size() >= 20_000);
    }

    #[test]
    fn data_counts_its_keys_and_values() {
        let small = Part { content: PartContent::Data(json!({"a": 1})), ..Part::text("") };
        let large =
            Part { content: PartContent::Data(json!({"a": "y".repeat(5_000), "b": [1, 2, 3]})), ..Part::text("") };
        assert!(large.memory_size() > small.memory_size() + 5_000);
    }
}
