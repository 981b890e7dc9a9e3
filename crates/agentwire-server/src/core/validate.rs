//! Input checks shared by every binding.

use agentwire_types::{A2AError, AgentCard, ErrorKind, MemorySize, Message, PartContent, Result};

/// The required members of a client message, and its size; returns the size.
pub(crate) fn message(message: &Message, max_bytes: usize) -> Result<usize> {
    if message.message_id.is_empty() {
        return Err(A2AError::invalid_params("message.messageId is required"));
    }
    if message.role == agentwire_types::Role::Unspecified {
        return Err(A2AError::invalid_params("message.role is required (ROLE_USER or ROLE_AGENT)"));
    }
    if message.parts.is_empty() {
        return Err(A2AError::invalid_params("message.parts must contain at least one part"));
    }
    let size = message.memory_size();
    if size > max_bytes {
        return Err(A2AError::new(
            ErrorKind::PayloadTooLarge,
            format!("the message would take about {size} bytes to hold; the limit is {max_bytes}"),
        )
        .with_metadata("limitBytes", max_bytes.to_string()));
    }
    Ok(size)
}

/// A message of `message_bytes` to `task`: it must not take the task's history and artifacts
/// past `max_bytes`.
pub(crate) fn task_size(task: &agentwire_types::Task, message_bytes: usize, max_bytes: usize) -> Result<()> {
    let size = task.memory_size() + message_bytes;
    if size > max_bytes {
        return Err(A2AError::new(
            ErrorKind::PayloadTooLarge,
            format!(
                "task {} would take about {size} bytes to hold with this message; a task may hold {max_bytes}. \
                 Start a new task",
                task.id
            ),
        )
        .with_metadata("taskId", &task.id)
        .with_metadata("limitBytes", max_bytes.to_string()));
    }
    Ok(())
}

/// A task id the client chose for a new task: not longer than `max_bytes`, and with no control
/// characters, which would otherwise reach log lines as they are.
pub(crate) fn client_task_id(id: &str, max_bytes: usize) -> Result<()> {
    if id.len() > max_bytes {
        return Err(A2AError::invalid_params(format!(
            "a new task's id may be at most {max_bytes} bytes long (got {})",
            id.len()
        ))
        .with_metadata("limitBytes", max_bytes.to_string()));
    }
    if id.chars().any(char::is_control) {
        return Err(A2AError::invalid_params("a new task's id must not contain control characters"));
    }
    Ok(())
}

/// `historyLength`: unset means all, 0 means none, negative is invalid.
pub(crate) fn history_length(value: Option<i32>) -> Result<Option<usize>> {
    match value {
        None => Ok(None),
        Some(n) => usize::try_from(n)
            .map(Some)
            .map_err(|_| A2AError::invalid_params(format!("historyLength must not be negative (got {n})"))),
    }
}

/// Refuses `message` with ContentTypeNotSupported unless the agent of `card` accepts the media
/// type of each of its parts: one of the card's default input modes or of any skill's, which may
/// be ranges (`text/*`, `*/*`). A server checks this before its agent sees a message; a gateway,
/// before it relays one.
///
/// ```
/// use agentwire_server::check_input_modes;
/// use agentwire_types::{AgentCard, Message};
///
/// let card = AgentCard { default_input_modes: vec!["text/*".into()], ..AgentCard::default() };
/// assert!(check_input_modes(&card, &Message::user("m1", "hello")).is_ok());
/// ```
pub fn check_input_modes(card: &AgentCard, message: &Message) -> Result<()> {
    let accepted = || card.default_input_modes.iter().chain(card.skills.iter().flat_map(|s| s.input_modes.iter()));
    for part in &message.parts {
        let media_type = part.media_type.as_deref().filter(|t| !t.is_empty()).unwrap_or(match part.content {
            PartContent::Text(_) => "text/plain",
            PartContent::Data(_) => "application/json",
            PartContent::Raw(_) | PartContent::Url(_) => "application/octet-stream",
        });
        if !accepted().any(|mode| media_type_matches(mode, media_type)) {
            return Err(A2AError::content_type_not_supported(format!(
                "this agent does not accept {media_type}; it accepts {}",
                accepted().map(String::as_str).collect::<Vec<_>>().join(", ")
            ))
            .with_metadata("mediaType", media_type));
        }
    }
    Ok(())
}

/// `mode` may be a range: `*/*` or `text/*`; a bare top-level type (`text`, as cards written for
/// the Python SDK's samples say) is that type's range. Parameters (`;charset=...`) are ignored.
fn media_type_matches(mode: &str, media_type: &str) -> bool {
    if mode == media_type {
        return true;
    }
    let (mode, media_type) = (essence(mode), essence(media_type));
    let top_of = |media_type: &str| media_type.split_once('/').map_or(media_type, |(top, _)| top).to_owned();
    match mode.split_once('/') {
        Some(("*", "*")) => true,
        Some((top, "*")) => top_of(media_type).eq_ignore_ascii_case(top),
        None => top_of(media_type).eq_ignore_ascii_case(mode),
        _ => mode.eq_ignore_ascii_case(media_type),
    }
}

/// A media type without its parameters.
fn essence(media_type: &str) -> &str {
    media_type.split(';').next().unwrap_or("").trim()
}

/// Extensions the card marks required must be declared by the client.
pub(crate) fn required_extensions(required: &[String], declared: &[String]) -> Result<()> {
    match required.iter().find(|uri| !declared.contains(uri)) {
        Some(missing) => Err(A2AError::extension_support_required(missing)),
        None => Ok(()),
    }
}

/// UnsupportedOperation for a message to a task that ended.
pub(crate) fn terminal_task(task: &agentwire_types::Task) -> A2AError {
    A2AError::unsupported_operation(format!(
        "task {} is {} and accepts no more messages; start a new task",
        task.id, task.status.state
    ))
    .with_metadata("taskId", &task.id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_ranges_match() {
        assert!(media_type_matches("*/*", "application/x-anything"));
        assert!(media_type_matches("text/*", "text/plain; charset=utf-8"));
        assert!(!media_type_matches("text/plain", "application/json"));
        assert!(media_type_matches("Text/Plain", "text/plain"));
        assert!(media_type_matches("TEXT/*", "text/markdown"));
        assert!(media_type_matches("text", "text/plain"), "a bare type is its range");
        assert!(!media_type_matches("text", "application/json"));
        assert!(!media_type_matches("text", "textual/plain"));
    }
}
