//! A task's page: its status, its messages and artifacts as they came, and its log's entries
//! as the live view appends them.

use std::sync::Arc;

use agentwire_types::{
    Artifact, Message, Part, PartContent, Role, StreamResponse, Task, TaskPushNotificationConfig, TaskState,
};
use maud::{html, Markup};
use serde_json::Value;

use super::{badge, encode, layout, state_name, web_link, when, Entry, Page, OPEN_DEPTH};
use crate::console::Site;

pub(in crate::console) fn task_page(
    base: &Site,
    task: &Task,
    timeline: Option<&[Entry]>,
    configs: &[TaskPushNotificationConfig],
) -> Page {
    let id = encode(&task.id);
    layout(
        base,
        &format!("Task {}", task.id),
        "Tasks",
        html! {
            h1 { "Task " code { (task.id) } }
            p.facts {
                (badge(task.status.state)) " "
                "in context " a href={ "tasks?context=" (encode(&task.context_id)) } { code { (task.context_id) } }
                @if task.status.timestamp.is_some() { " · updated " (when(task.status.timestamp)) }
            }
            @if let Some((principal, actors)) = asked_by(task) {
                p.facts.caller {
                    "Asked by " code { (principal) }
                    @if !actors.is_empty() {
                        " through "
                        @for (i, actor) in actors.iter().enumerate() {
                            @if i > 0 { " › " }
                            code { (actor) }
                        }
                    }
                }
            }
            @if let Some(message) = &task.status.message { div.status-message { (message_view(message, None)) } }
            div.actions {
                @if !task.status.state.is_terminal() {
                    a.button href={ "send?task=" (encode(&task.id)) "&context=" (encode(&task.context_id)) } { "Reply to this task" }
                    form method="post" action={ "tasks/" (id) "/cancel" } { button.danger type="submit" { "Cancel the task" } }
                } @else {
                    a.button href={ "send?context=" (encode(&task.context_id)) } { "New task in this context" }
                }
            }
            section aria-labelledby="timeline" {
                h2 #timeline { "Timeline" }
                div.scroll { table.timeline {
                    thead { tr { th { "#" } th { "Time" } th { "Event" } th { "What" } } }
                    @match timeline {
                        Some(entries) => tbody #entries { (entry_rows(entries)) },
                        None => tbody #entries data-follow={ "tasks/" (id) "/events" } {},
                    }
                } }
            }
            section aria-labelledby="artifacts" {
                h2 #artifacts { "Artifacts" }
                @if task.artifacts.is_empty() { p { "None yet." } }
                @for artifact in &task.artifacts { (artifact_view(&task.id, artifact)) }
            }
            section aria-labelledby="history" {
                h2 #history { "History" }
                @if task.history.is_empty() { p { "No messages kept." } }
                ol.history { @for message in &task.history { li { (message_view(message, None)) } } }
            }
            section aria-labelledby="push" {
                h2 #push { "Push notifications" }
                @if configs.is_empty() { p { "No webhook is registered for this task." } }
                @else {
                    div.scroll { table {
                        thead { tr { th { "Config" } th { "Webhook" } th { "Token" } th { "Authentication" } } }
                        tbody { @for config in configs { tr {
                            td { code { (config.id) } } td { code { (config.url) } }
                            td { (if config.token.is_empty() { "none" } else { "set" }) }
                            td { (config.authentication.as_ref().map(|a| a.scheme.as_str()).unwrap_or("none")) }
                        } } }
                    } }
                }
            }
        },
    )
}

/// Who asked for the task, and the parties that acted for them in the order they called (the
/// reverse of a token's `act` chain, whose current actor comes first), as the server recorded it
/// when the task was made.
fn asked_by(task: &Task) -> Option<(&str, Vec<&str>)> {
    let record = task.metadata.as_ref()?.get(agentwire_types::CALLER_KEY)?;
    let principal = record.get("principal")?.as_str()?;
    let actors =
        record.get("actors").and_then(Value::as_array).map(|actors| actors.iter().filter_map(Value::as_str).collect());
    Some((principal, actors.unwrap_or_default()))
}

/// The task id and state an event tells of.
pub(in crate::console) fn task_of(event: &StreamResponse) -> Option<(String, TaskState)> {
    match event {
        StreamResponse::Task(task) => Some((task.id.clone(), task.status.state)),
        StreamResponse::StatusUpdate(update) => Some((update.task_id.clone(), update.status.state)),
        StreamResponse::Message(_) | StreamResponse::ArtifactUpdate(_) => None,
    }
}

/// A row of a timeline. `before` is the state the task was in before it, where known: a status
/// that repeats it (a gateway's, naming the agent's task) says so rather than showing the state
/// twice. Messages and artifacts carry no time of their own: their time says so.
pub(in crate::console) fn entry_row(entry: &Entry, before: Option<TaskState>) -> Markup {
    pieces_row(entry, 1, before)
}

/// An entry's row, saying how many appended pieces of an artifact it joins when more than one.
fn pieces_row(entry: &Entry, pieces: usize, before: Option<TaskState>) -> Markup {
    let joined = format!("artifact, {pieces} pieces");
    let (kind, time, what) = match &*entry.event {
        StreamResponse::Task(task) => {
            ("task", task.status.timestamp, html! { (badge(task.status.state)) " " code { (task.id) } })
        }
        StreamResponse::Message(message) => ("message", None, message_view(message, None)),
        StreamResponse::StatusUpdate(update) => {
            let repeated = before == Some(update.status.state) && update.status.message.is_none();
            let what = html! {
                @if repeated { span.muted { "still " (state_name(update.status.state)) } }
                @else { (badge(update.status.state)) }
                @if let Some(message) = &update.status.message { " " (message_view(message, None)) }
            };
            ("status", update.status.timestamp, what)
        }
        StreamResponse::ArtifactUpdate(update) => (
            if pieces > 1 {
                joined.as_str()
            } else if update.append {
                "artifact, appended"
            } else {
                "artifact"
            },
            None,
            html! { (artifact_view(&update.task_id, &update.artifact)) },
        ),
    };
    // An artifact's row names it, so that the pieces appended to it join its row (console.js).
    let (artifact, append) = match &*entry.event {
        StreamResponse::ArtifactUpdate(update) => (Some(update.artifact.artifact_id.as_str()), update.append),
        _ => (None, false),
    };
    html! {
        tr data-artifact=[artifact] data-append=[append.then_some("true")] {
            td.seq { @if entry.seq > 0 { (entry.seq) } }
            td { @if time.is_some() { (when(time)) } @else { span.muted title="this event carries no time" { "—" } } }
            td { (kind) }
            td { (what) }
        }
    }
}

/// The rows of a timeline of `entries`, each knowing the state before it. The pieces appended to
/// an artifact (a streamed answer, word by word) join the row of the artifact they add to.
fn entry_rows(entries: &[Entry]) -> Markup {
    let mut state = StateBefore::default();
    let joined = joined_pieces(entries);
    html! { @for (entry, pieces) in &joined { (pieces_row(entry, *pieces, state.next(&entry.event))) } }
}

/// `entries` with each run of pieces appended to one artifact joined into its first entry, and
/// how many pieces each holds.
fn joined_pieces(entries: &[Entry]) -> Vec<(Entry, usize)> {
    let mut joined: Vec<(Entry, usize)> = Vec::with_capacity(entries.len());
    for entry in entries {
        if let (Some((last, pieces)), StreamResponse::ArtifactUpdate(piece)) = (joined.last_mut(), &*entry.event)
            && piece.append
            && matches!(&*last.event, StreamResponse::ArtifactUpdate(first) if first.artifact.artifact_id == piece.artifact.artifact_id)
            // Copied once, from the log, when the first piece joins; then added to in place.
            && let StreamResponse::ArtifactUpdate(whole) = Arc::make_mut(&mut last.event)
        {
            append_parts(&mut whole.artifact.parts, &piece.artifact.parts);
            *pieces += 1;
            continue;
        }
        joined.push((Entry { seq: entry.seq, event: Arc::clone(&entry.event) }, 1));
    }
    joined
}

/// Adds `more` to `parts`: a text piece continues the text before it, as a reader reads them.
fn append_parts(parts: &mut Vec<Part>, more: &[Part]) {
    for part in more {
        match (parts.last_mut().map(|last| &mut last.content), &part.content) {
            (Some(PartContent::Text(text)), PartContent::Text(piece)) => text.push_str(piece),
            _ => parts.push(part.clone()),
        }
    }
}

/// Follows a task's state along its events: the state before each.
#[derive(Default)]
pub(in crate::console) struct StateBefore(Option<TaskState>);

impl StateBefore {
    /// The state before `event`, which is then taken into account.
    pub(in crate::console) fn next(&mut self, event: &StreamResponse) -> Option<TaskState> {
        let before = self.0;
        if let Some((_, now)) = task_of(event) {
            self.0 = Some(now);
        }
        before
    }
}

/// Where a stream of a sent message ended.
pub(in crate::console) fn outcome(id: &str, state: TaskState) -> Markup {
    html! { "The task is " (badge(state)) ": " a href={ "tasks/" (encode(id)) } { "open task " code { (id) } } }
}

pub(in crate::console) fn message_view(message: &Message, artifact: Option<(&str, &str)>) -> Markup {
    let role = match message.role {
        Role::User => "user",
        Role::Agent => "agent",
        Role::Unspecified => "unspecified",
    };
    html! {
        div class={ "message " (role) } {
            span.role { (role) }
            @for (index, part) in message.parts.iter().enumerate() { (part_view(part, artifact, index)) }
        }
    }
}

fn artifact_view(task_id: &str, artifact: &Artifact) -> Markup {
    html! {
        article.artifact {
            h3 { (if artifact.name.is_empty() { &artifact.artifact_id } else { &artifact.name }) }
            @if !artifact.description.is_empty() { p { (artifact.description) } }
            @for (index, part) in artifact.parts.iter().enumerate() {
                (part_view(part, Some((task_id, &artifact.artifact_id)), index))
            }
        }
    }
}

/// `name` without its control characters, which show as nothing a person can read and are no
/// part of a header value.
pub(in crate::console) fn readable(name: &str) -> String {
    name.chars().filter(|c| !c.is_control()).collect()
}

/// A part by its kind: text as text, data as a tree, a file as a download or a link.
fn part_view(part: &Part, artifact: Option<(&str, &str)>, index: usize) -> Markup {
    let name = readable(part.filename.as_deref().unwrap_or("file"));
    let name = name.as_str();
    let media_type = part.media_type.as_deref().unwrap_or("");
    html! {
        @match &part.content {
            PartContent::Text(text) => pre.text { (text) },
            PartContent::Data(value) => div.data { (json_tree(value, 0)) },
            PartContent::Raw(bytes) => p.file {
                @if let Some((task, artifact)) = artifact {
                    a href={ "tasks/" (encode(task)) "/artifacts/" (encode(artifact)) "/" (index) } download=(name) { (name) }
                } @else { (name) }
                " " small { (media_type) ", " (bytes.len()) " bytes" }
            },
            PartContent::Url(url) => p.file {
                @if let Some(url) = web_link(url) {
                    a href=(url) rel="noreferrer noopener" { (name) }
                } @else { (name) }
                " " small { (media_type) ", at " code { (url) } }
            },
        }
    }
}

/// A JSON value as nested lists that fold.
fn json_tree(value: &Value, depth: usize) -> Markup {
    let entries: Vec<(String, &Value)> = match value {
        Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
        Value::Array(items) => items.iter().enumerate().map(|(i, v)| (i.to_string(), v)).collect(),
        scalar => return html! { code.scalar { (scalar.to_string()) } },
    };
    let summary = if value.is_object() { format!("{{ {} }}", entries.len()) } else { format!("[ {} ]", entries.len()) };
    html! {
        details.tree open[depth < OPEN_DEPTH] {
            summary { (summary) }
            ul { @for (key, item) in entries { li { span.key { (key) } ": " (json_tree(item, depth + 1)) } } }
        }
    }
}
