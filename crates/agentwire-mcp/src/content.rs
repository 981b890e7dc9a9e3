//! A2A answers as MCP tool results: parts become content blocks, and the task's facts (its id,
//! context and state) become the result's structured content, so that a model can continue the
//! conversation or the task.

use agentwire_types::{Message, Part, PartContent, Task, TaskState, Usage};
use base64::Engine as _;
use rmcp::model::{
    CallToolResult, ContentBlock, ElicitRequestParams, ElicitationSchema, JsonObject, MetaObject, Resource,
    ResourceContents,
};
use rmcp::ErrorData as McpError;
use serde_json::{json, Value};

/// The key of a tool result's `_meta` under which the agent's task reports what it spent: the
/// usage extension's figures (docs/extensions/usage-v1.md), when the agent reports them.
pub const USAGE_META_KEY: &str = "io.github.agentwire/usage";

/// Files larger than this are described, not embedded, in a result.
pub(crate) const MAX_EMBEDDED_BYTES: usize = 4 << 20;

/// The result of a call whose A2A task reached `task`'s state: its artifacts' parts (or, without
/// artifacts, the agent's last message), an error for a task that failed, was rejected or was
/// canceled, the task's facts as structured content, and in `_meta` what the task spent, when
/// the agent reports it ([`USAGE_META_KEY`]).
pub(crate) fn task_result(agent: &str, task: &Task) -> CallToolResult {
    let mut content: Vec<ContentBlock> = task
        .artifacts
        .iter()
        .flat_map(|artifact| {
            artifact.parts.iter().enumerate().map(move |(index, part)| {
                block(part, || format!("a2a://tasks/{}/artifacts/{}/{index}", task.id, artifact.artifact_id))
            })
        })
        .collect();
    let status_text = task.status.message.as_deref().map(Message::text).filter(|text| !text.is_empty());
    let state = task.status.state;
    if content.is_empty() || !matches!(state, TaskState::Completed) {
        let said = status_text.or_else(|| last_agent_text(task));
        content.push(ContentBlock::text(match (state, said) {
            (TaskState::Completed, Some(text)) => text,
            (TaskState::Completed, None) => "The agent completed the task without an answer.".to_owned(),
            (TaskState::InputRequired, said) => format!(
                "The agent needs more input: {}. Call send_message with taskId {:?} to answer it.",
                said.unwrap_or_else(|| "(no question given)".to_owned()),
                task.id
            ),
            (TaskState::AuthRequired, said) => format!(
                "The agent needs authorization: {}. Once it is given, call send_message with taskId {:?}.",
                said.unwrap_or_else(|| "(no details given)".to_owned()),
                task.id
            ),
            (state, said) if !state.is_terminal() => match said {
                Some(text) => format!("The task is {}: {text}", state_name(state)),
                None => format!("The task is {}.", state_name(state)),
            },
            (state, Some(text)) => format!("The task ended {}: {text}", state_name(state)),
            (state, None) => format!("The task ended {}.", state_name(state)),
        }));
    }
    let mut result = match state {
        TaskState::Failed | TaskState::Rejected | TaskState::Canceled => CallToolResult::error(content),
        _ => CallToolResult::success(content),
    };
    result.structured_content = Some(facts(agent, &task.id, &task.context_id, state_name(state)));
    if let Some(usage) = Usage::in_metadata(task.metadata.as_ref()) {
        let usage = serde_json::to_value(usage).unwrap_or_default();
        result.meta = Some(MetaObject(JsonObject::from_iter([(USAGE_META_KEY.to_owned(), usage)])));
    }
    result
}

/// The result of a call the agent answered with a message and no task.
pub(crate) fn message_result(agent: &str, message: &Message) -> CallToolResult {
    let content = message
        .parts
        .iter()
        .enumerate()
        .map(|(index, part)| block(part, || format!("a2a://messages/{}/{index}", message.message_id)));
    let mut result = CallToolResult::success(content.collect());
    result.structured_content = Some(json!({"agent": agent, "contextId": message.context_id}));
    result
}

/// The facts of a task a model needs to continue it.
pub(crate) fn facts(agent: &str, task: &str, context: &str, state: &str) -> Value {
    json!({"agent": agent, "taskId": task, "contextId": context, "state": state})
}

/// A state as its callers read it: `COMPLETED`, `INPUT_REQUIRED`…
pub(crate) fn state_name(state: TaskState) -> &'static str {
    let name = state.as_proto_name();
    name.strip_prefix("TASK_STATE_").unwrap_or(name)
}

fn last_agent_text(task: &Task) -> Option<String> {
    let message = task.history.iter().rev().find(|m| m.role == agentwire_types::Role::Agent)?;
    Some(message.text()).filter(|text| !text.is_empty())
}

/// One part as a content block: text as text, data as its JSON text, an image as an image, other
/// bytes as an embedded resource (text when they are text), a URL as a resource link.
fn block(part: &Part, uri: impl FnOnce() -> String) -> ContentBlock {
    let media_type = part.media_type.as_deref().unwrap_or("application/octet-stream");
    // Files only: their resource's URI, and a name from it where the part gives none.
    let file = || {
        let uri = uri();
        let name = part.filename.clone().filter(|n| !n.is_empty());
        let name = name.unwrap_or_else(|| uri.rsplit('/').next().unwrap_or("file").to_owned());
        (uri, name)
    };
    match &part.content {
        PartContent::Text(text) => ContentBlock::text(text.clone()),
        PartContent::Data(data) => ContentBlock::text(data.to_string()),
        PartContent::Url(url) => {
            let (_, name) = file();
            ContentBlock::resource_link(Resource::new(url.clone(), name).with_mime_type(media_type))
        }
        PartContent::Raw(bytes) => {
            let (uri, name) = file();
            let base64 = || base64::engine::general_purpose::STANDARD.encode(bytes);
            if bytes.len() > MAX_EMBEDDED_BYTES {
                ContentBlock::text(format!(
                    "The file {name:?} ({media_type}, {} bytes) is too large to embed; read it from the task with get_task.",
                    bytes.len()
                ))
            } else if media_type.starts_with("image/") {
                ContentBlock::image(base64(), media_type)
            } else if let (true, Ok(text)) = (is_text(media_type), std::str::from_utf8(bytes)) {
                ContentBlock::resource(ResourceContents::text(text, uri).with_mime_type(media_type))
            } else {
                ContentBlock::resource(ResourceContents::blob(base64(), uri).with_mime_type(media_type))
            }
        }
    }
}

fn is_text(media_type: &str) -> bool {
    media_type.starts_with("text/") || media_type.ends_with("json") || media_type.ends_with("xml")
}

/// The key of the one question an input-required result asks.
pub(crate) const ANSWER: &str = "answer";

/// The form that asks the agent's `question`: one text field.
pub(crate) fn question_form(question: &str) -> Result<ElicitRequestParams, McpError> {
    let schema = ElicitationSchema::builder()
        .required_string(ANSWER)
        .build()
        .map_err(|e| McpError::internal_error(e.to_owned(), None))?;
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.to_owned(),
        requested_schema: schema,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentwire_types::{Artifact, TaskStatus};

    fn task(state: TaskState, parts: Vec<Part>) -> Task {
        let mut task =
            Task { id: "t1".into(), context_id: "c1".into(), status: TaskStatus::new(state), ..Task::default() };
        if !parts.is_empty() {
            task.artifacts.push(Artifact::new("a1", "answer", parts));
        }
        task
    }

    #[test]
    fn artifacts_become_content_by_kind() {
        let parts = vec![
            Part::text("hello"),
            Part::data(json!({"rate": 0.9})),
            Part::raw(b"png".to_vec(), "chart.png", "image/png"),
            Part::raw(b"a,b".to_vec(), "table.csv", "text/csv"),
            Part::raw(vec![0, 159], "blob.bin", "application/octet-stream"),
            Part::url("https://example.com/report.pdf", "report.pdf", "application/pdf"),
        ];
        let result = task_result("fx", &task(TaskState::Completed, parts));
        assert_eq!(result.is_error, Some(false));
        let content = &result.content;
        assert_eq!(content[0].as_text().unwrap().text, "hello");
        assert_eq!(content[1].as_text().unwrap().text, r#"{"rate":0.9}"#);
        assert_eq!(content[2].as_image().unwrap().mime_type, "image/png");
        assert!(
            matches!(&content[3].as_resource().unwrap().resource, ResourceContents::TextResourceContents { text, .. } if text == "a,b")
        );
        assert!(matches!(&content[4].as_resource().unwrap().resource, ResourceContents::BlobResourceContents { .. }));
        assert_eq!(content[5].as_resource_link().unwrap().uri, "https://example.com/report.pdf");
        assert_eq!(result.structured_content.unwrap()["taskId"], "t1");
    }

    #[test]
    fn what_the_task_spent_is_in_meta() {
        let mut spent = task(TaskState::Completed, vec![Part::text("done")]);
        assert!(task_result("fx", &spent).meta.is_none());
        let figures = agentwire_types::UsageFigures { output_tokens: 7, ..Default::default() };
        spent.metadata = Some(Usage::first("m", figures, false).metadata());
        let meta = task_result("fx", &spent).meta.unwrap();
        assert_eq!(meta.0[USAGE_META_KEY]["outputTokens"], 7);
        assert_eq!(meta.0[USAGE_META_KEY]["model"], "m");
    }

    #[test]
    fn unfinished_and_failed_tasks_say_so() {
        let mut asking = task(TaskState::InputRequired, vec![]);
        asking.status.message = Some(Box::new(Message::agent("m", "Which currency?")));
        let result = task_result("fx", &asking);
        let text = &result.content[0].as_text().unwrap().text;
        assert!(text.contains("Which currency?") && text.contains("\"t1\""), "{text}");
        assert_eq!(result.is_error, Some(false));
        let failed = task_result("fx", &task(TaskState::Failed, vec![]));
        assert_eq!(failed.is_error, Some(true));
        assert!(failed.content[0].as_text().unwrap().text.contains("FAILED"));
    }
}
