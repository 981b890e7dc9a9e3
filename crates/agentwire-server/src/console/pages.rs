//! The console's pages, rendered on the server.

use std::sync::Arc;

use agentwire_types::{
    A2AError, AgentCard, ListTasksRequest, ListTasksResponse, Message, SecurityScheme, StreamResponse, Task, TaskState,
};
use maud::{html, Markup, DOCTYPE};
use serde::Deserialize;

use super::Site;

mod task;

use task::message_view;
pub(super) use task::{entry_row, outcome, readable, task_of, task_page, StateBefore};

/// A rendered page.
pub(super) type Page = Markup;

/// One event of a task's log, with its sequence number (0 for a reply that was not streamed).
pub(super) struct Entry {
    pub(super) seq: u64,
    pub(super) event: Arc<StreamResponse>,
}

/// What the card page says of the card's signatures.
pub(super) enum Signature {
    Unsigned,
    /// Signed, with no keys here to check the signatures with.
    Unchecked(usize),
    Verified {
        alg: String,
        kid: String,
    },
    Invalid(String),
}

/// Data parts nested deeper than this are shown folded.
const OPEN_DEPTH: usize = 2;

pub(super) fn layout(site: &Site, title: &str, current: &str, body: Markup) -> Page {
    let link = |href: &str, name: &str| {
        html! { a href=(href) aria-current=[(current == name).then_some("page")] { (name) } }
    };
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                // Every link is relative to the console's root, wherever the console is mounted.
                base href={ (site.base) "/" };
                title { (title) " · agentwire console" }
                // No icon: the browser asks the server for none.
                link rel="icon" href="data:,";
                link rel="stylesheet" href="assets/console.css";
                script src="assets/console.js" defer {}
            }
            body {
                header {
                    span.brand { "agentwire console" }
                    @if let Some((agent, directory)) = &site.agent {
                        span.agent { a href=(directory) { "All agents" } " › " strong { (agent) } }
                    }
                    @if current != AGENTS && !(current == "Usage" && site.agent.is_none() && site.directory) {
                        nav aria-label="Console" {
                            (link("./", "Agent")) (link("tasks", "Tasks")) (link("send", "Send"))
                            @if site.usage { (link("usage", "Usage")) }
                        }
                    } @else if site.usage {
                        nav aria-label="Console" { (link("./", AGENTS)) (link("usage", "Usage")) }
                    }
                }
                main { (body) }
            }
        }
    }
}

/// The page of a console of several agents.
const AGENTS: &str = "Agents";

/// Several agents, each linking to its own console at the path given with it, with what a
/// registry knows of each; with `search`, the search box and the text searched for.
pub(super) fn agents_page(base: &Site, agents: &[super::ListedAgent], search: Option<&str>) -> Page {
    layout(
        base,
        "Agents",
        AGENTS,
        html! {
            h1 { "Agents" }
            @if let Some(text) = search {
                form.search method="get" action="./" role="search" {
                    label for="q" { "Search the agents" }
                    input #q type="search" name="q" value=(text) placeholder="skills, tags, names…";
                    button type="submit" { "Search" }
                }
            }
            @if agents.is_empty() {
                p { @if search.is_some_and(|text| !text.is_empty()) { "No agent matches." } @else { "No agent is mounted." } }
            }
            @for agent in agents {
                article.skill {
                    h2 { a href=(agent.console) { (agent.card.name) } " " small { code { (agent.name) } } }
                    @if !agent.card.description.is_empty() { p { (agent.card.description) } }
                    @if let Some(facts) = &agent.registry {
                        p.health {
                            @if facts.healthy { span.healthy { "healthy" } } @else { span.unhealthy { "unhealthy" } }
                            " · signature " span { (facts.signature) }
                            " · last checked " span {
                                @if let Some(checked) = &facts.last_checked { (when_text(checked)) } @else { "never" }
                            }
                            @if let Some(answered) = &facts.last_answered { " · last answered " span { (when_text(answered)) } }
                        }
                        @if let Some(error) = &facts.error { p.notice { (error) } }
                    }
                    @if !agent.card.skills.is_empty() {
                        p.tags { @for skill in &agent.card.skills { span.tag { (skill.name) } " " } }
                    }
                }
            }
        },
    )
}

/// A page that only says something: a refusal, an error.
pub(super) fn message_page(base: &Site, title: &str, text: &str) -> Page {
    layout(base, title, "", html! { h1 { (title) } p.notice { (text) } })
}

pub(super) fn login_page(base: &Site, why: Option<&str>) -> Page {
    layout(
        base,
        "Log in",
        "",
        html! {
            h1 { "Log in" }
            @if let Some(why) = why { p.notice role="alert" { (why) } }
            p { "The console shows what your credentials show over the API. Give the bearer token you call the agent with; it is kept in a cookie for this console only." }
            form method="post" action="login" {
                label for="token" { "Token" }
                input #token type="password" name="token" autocomplete="current-password" required autofocus;
                button type="submit" { "Log in" }
            }
        },
    )
}

pub(super) fn card_page(base: &Site, card: &AgentCard, v03: bool, json: &str, signature: &Signature) -> Page {
    // A column only when an interface names a tenant.
    let tenants = card.supported_interfaces.iter().any(|interface| !interface.tenant.is_empty());
    layout(
        base,
        &card.name,
        "Agent",
        html! {
            h1 { (card.name) " " small { "version " (card.version) } }
            @if !card.description.is_empty() { p.lead { (card.description) } }
            @if let Some(provider) = &card.provider { p { "By " (provider.organization) } }
            section aria-labelledby="interfaces" {
                h2 #interfaces { "Interfaces" }
                div.scroll { table {
                    thead { tr {
                        th { "URL" } th { "Binding" } th { "Version" }
                        @if tenants { th { "Tenant" } }
                    } }
                    tbody { @for interface in &card.supported_interfaces { tr {
                        td { code { (interface.url) } } td { (interface.protocol_binding) }
                        td { (interface.protocol_version) }
                        @if tenants { td { (interface.tenant) } }
                    } } }
                } }
            }
            section aria-labelledby="capabilities" {
                h2 #capabilities { "Capabilities" }
                ul.facts {
                    li { "Streaming: " (yes_no(card.capabilities.streaming)) }
                    li { "Push notifications: " (yes_no(card.capabilities.push_notifications)) }
                    li { "Extended card: " (yes_no(card.capabilities.extended_agent_card)) }
                    li { "Input: " (card.default_input_modes.join(", ")) }
                    li { "Output: " (card.default_output_modes.join(", ")) }
                    @for extension in &card.capabilities.extensions { li { "Extension: " code { (extension.uri) } } }
                }
            }
            section aria-labelledby="skills" {
                h2 #skills { "Skills" }
                @if card.skills.is_empty() { p { "The card names no skills." } }
                @for skill in &card.skills {
                    article.skill {
                        h3 { (skill.name) " " small { code { (skill.id) } } }
                        p { (skill.description) }
                        @if !skill.tags.is_empty() { p.tags { @for tag in &skill.tags { span.tag { (tag) } " " } } }
                        @if !skill.examples.is_empty() { ul { @for example in &skill.examples { li { q { (example) } } } } }
                    }
                }
            }
            section aria-labelledby="security" {
                h2 #security { "Security" }
                @if card.security_schemes.is_empty() { p { "Anyone may call this agent." } }
                ul.facts { @for (name, scheme) in &card.security_schemes { li { code { (name) } ": " (scheme_text(scheme)) } } }
                p #signature { "Signature: " (signature_text(signature)) }
            }
            section aria-labelledby="document" {
                h2 #document { "The card as served" }
                nav.tabs aria-label="Card form" {
                    a href="./" aria-current=[(!v03).then_some("page")] { "v1.0" }
                    a href="./?form=v0.3" aria-current=[v03.then_some("page")] { "v0.3 (combined)" }
                }
                pre.json tabindex="0" { code { (json) } }
            }
        },
    )
}

fn yes_no(value: Option<bool>) -> &'static str {
    if value == Some(true) {
        "yes"
    } else {
        "no"
    }
}

fn scheme_text(scheme: &SecurityScheme) -> String {
    match scheme {
        SecurityScheme::ApiKey(key) => format!("API key in {} {}", key.location, key.name),
        SecurityScheme::HttpAuth(http) => format!("HTTP {}", http.scheme),
        SecurityScheme::OAuth2(_) => "OAuth 2.0".into(),
        SecurityScheme::OpenIdConnect(oidc) => format!("OpenID Connect ({})", oidc.open_id_connect_url),
        SecurityScheme::MutualTls(_) => "TLS client certificate".into(),
    }
}

fn signature_text(signature: &Signature) -> String {
    match signature {
        Signature::Unsigned => "not signed".into(),
        Signature::Unchecked(count) => format!("{count} signature(s), not checked: this server publishes no keys"),
        Signature::Verified { alg, kid } => format!("verified ({alg}, key {kid}) with /.well-known/jwks.json"),
        Signature::Invalid(why) => format!("does not verify: {why}"),
    }
}

const STATES: [TaskState; 8] = [
    TaskState::Submitted,
    TaskState::Working,
    TaskState::InputRequired,
    TaskState::AuthRequired,
    TaskState::Completed,
    TaskState::Failed,
    TaskState::Canceled,
    TaskState::Rejected,
];

pub(super) fn tasks_page(base: &Site, query: &TasksQuery, tasks: &ListTasksResponse) -> Page {
    let filters =
        serde_urlencoded::to_string([("state", &query.state), ("context", &query.context)]).unwrap_or_default();
    let live = query.page.is_empty().then(|| format!("tasks/live?{filters}"));
    layout(
        base,
        "Tasks",
        "Tasks",
        html! {
            h1 { "Tasks" }
            form.filters method="get" action="tasks" {
                label for="state" { "State" }
                select #state name="state" {
                    option value="" selected[query.state.is_empty()] { "any" }
                    @for state in STATES {
                        option value=(state.as_proto_name()) selected[query.state == state.as_proto_name()] { (state_name(state)) }
                    }
                }
                label for="context" { "Context" }
                input #context name="context" value=(query.context) placeholder="any";
                button type="submit" { "Filter" }
            }
            p.status {
                span #task-count { (tasks.total_size) } " task(s), newest first. "
                @if live.is_some() { span #live-status role="status" { "" } }
            }
            div.scroll { table #tasks {
                thead { tr { th { "Task" } th { "State" } th { "Updated" } th { "Context" } th { "Last message" } } }
                tbody #task-rows data-live=[live] { (task_rows(tasks)) }
            } }
            nav.pages aria-label="Pages" {
                @if !query.page.is_empty() { a href={ "tasks?" (filters) } { "First page" } }
                @if !tasks.next_page_token.is_empty() {
                    a href={ "tasks?" (filters) "&page=" (encode(&tasks.next_page_token)) } { "Older tasks" }
                }
            }
        },
    )
}

/// The rows of the task list.
pub(super) fn task_rows(tasks: &ListTasksResponse) -> Markup {
    html! {
        @if tasks.tasks.is_empty() { tr { td colspan="5" { "No tasks." } } }
        @for task in &tasks.tasks {
            tr {
                td { a href={ "tasks/" (encode(&task.id)) } { code { (task.id) } } }
                td { (badge(task.status.state)) }
                td { (when(task.status.timestamp)) }
                td { a href={ "tasks?context=" (encode(&task.context_id)) } { code { (task.context_id) } } }
                td.preview { (preview(task)) }
            }
        }
    }
}

/// The text of the task's status message, else of its last message.
fn preview(task: &Task) -> String {
    let message = task.status.message.as_deref().or(task.history.last());
    agentwire_types::text::clip(message.map(Message::text).unwrap_or_default(), 80)
}

/// A time as people read it, in UTC.
fn when(time: Option<agentwire_types::Timestamp>) -> Markup {
    match time {
        Some(time) => when_text(&time.to_string()),
        None => html! {},
    }
}

/// An RFC 3339 time in UTC (`2026-12-02T16:26:31.818Z`) as every page of the console shows one:
/// `2026-12-02 16:26:31.818 UTC`.
fn when_text(text: &str) -> Markup {
    html! { time datetime=(text) { (text.replace('T', " ").trim_end_matches('Z')) " UTC" } }
}

fn badge(state: TaskState) -> Markup {
    html! { span class={ "badge " (state.as_proto_name().to_ascii_lowercase().replace('_', "-")) } { (state_name(state)) } }
}

fn state_name(state: TaskState) -> String {
    state.as_proto_name().trim_start_matches("TASK_STATE_").replace('_', " ").to_lowercase()
}

/// Whether a stream of a sent message ends at `state`: the task ended, or waits for the caller.
pub(super) fn ends_a_turn(state: TaskState) -> bool {
    state.is_terminal() || matches!(state, TaskState::InputRequired | TaskState::AuthRequired)
}

pub(super) fn send_page(base: &Site, card: &AgentCard, task: &str, context: &str, question: Option<&Message>) -> Page {
    let accepts_files = card.default_input_modes.is_empty()
        || card.default_input_modes.iter().any(|mode| !mode.starts_with("text/"))
        || card.skills.iter().any(|skill| skill.input_modes.iter().any(|mode| !mode.starts_with("text/")));
    layout(
        base,
        "Send a message",
        "Send",
        html! {
            h1 { "Send a message to " (card.name) }
            @if let Some(question) = question {
                section.question aria-labelledby="question-title" {
                    h2 #question-title { "The agent asked" }
                    (message_view(question, None))
                }
            }
            form #send method="post" action="send" {
                label for="text" { "Message" }
                textarea #text name="text" rows="4" autofocus {}
                @if accepts_files {
                    label for="file" { "File (optional)" }
                    input #file type="file" name="file";
                }
                details open[!task.is_empty() || !context.is_empty()] {
                    summary { "Continue a task or a context" }
                    label for="task" { "Task" }
                    input.id #task name="taskId" value=(task) placeholder="a new task" spellcheck="false";
                    label for="context-id" { "Context" }
                    input.id #context-id name="contextId" value=(context) placeholder="a new context" spellcheck="false";
                }
                button type="submit" { "Send" }
            }
            section aria-labelledby="stream-title" {
                h2 #stream-title { "Stream" }
                p #outcome role="status" {}
                div.scroll { table.timeline {
                    thead { tr { th { "#" } th { "Time" } th { "Event" } th { "What" } } }
                    tbody #stream {}
                } }
            }
            noscript { p.notice { "Sending needs the page's script." } }
        },
    )
}

/// What a query value or a path segment may hold as it is (RFC 3986's unreserved characters).
const UNRESERVED: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// `text` percent-encoded for a query value or a path segment. A segment of dots alone is
/// encoded too: as it is, a browser would take it as a step up or nowhere in the path.
pub(super) fn encode(text: &str) -> String {
    match text {
        "." => "%2E".to_owned(),
        ".." => "%2E%2E".to_owned(),
        _ => percent_encoding::utf8_percent_encode(text, UNRESERVED).to_string(),
    }
}

/// `url` when it is an address on the web (`http` or `https`), the only kind the console links
/// to: a `javascript:` or `data:` URL an agent wrote would run in the console's origin. Checked
/// as browsers read it: no control character or space (which they drop before the scheme, or
/// from inside it), and the scheme first.
pub(super) fn web_link(url: &str) -> Option<&str> {
    let scheme = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let web = scheme.starts_with("http://") || scheme.starts_with("https://");
    (web && !url.chars().any(|c| c.is_control() || c.is_whitespace())).then_some(url)
}

/// Tasks on one page of the list.
const TASKS_PAGE_SIZE: i32 = 25;

/// The task list's filters and page.
#[derive(Debug, Default, Clone, Deserialize)]
pub(super) struct TasksQuery {
    #[serde(default)]
    pub(super) state: String,
    #[serde(default)]
    pub(super) context: String,
    #[serde(default)]
    pub(super) page: String,
}

impl TasksQuery {
    pub(super) fn request(&self) -> Result<ListTasksRequest, A2AError> {
        let status = match self.state.trim() {
            "" => None,
            state => {
                Some(state.parse::<TaskState>().map_err(|error| A2AError::invalid_params(format!("state: {error}")))?)
            }
        };
        Ok(ListTasksRequest {
            context_id: self.context.trim().to_owned(),
            status,
            page_size: Some(TASKS_PAGE_SIZE),
            page_token: self.page.clone(),
            history_length: Some(1),
            include_artifacts: Some(false),
            ..ListTasksRequest::default()
        })
    }
}
