//! The console's routes: what each page asks of the operation service, and the live streams.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use agentwire_types::{
    A2AError, A2aRequest, A2aResponse, AgentCard, Binding, Dialect, ErrorKind, GetTaskRequest,
    ListTaskPushNotificationConfigsRequest, Message, Part, PartContent, Peer, Role, SendMessageRequest, StreamResponse,
    SubscribeToTaskRequest, Task, TaskState,
};
use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Extension;
use axum::Router;
use base64::Engine as _;
use futures_util::{Stream, StreamExt};
use http::request::Parts;
use http::{header, HeaderMap, HeaderValue, StatusCode};
use serde::Deserialize;

use super::pages::{self, Page, TasksQuery};
use super::{Console, ConsoleAccess, Site};
use crate::http::errors::http_status;
use crate::service::call;
use crate::service::Operations;
use crate::RequestContext;

/// The cookie that carries the token given at the login form.
const TOKEN_COOKIE: &str = "agentwire_console_token";
/// The least time between two updates of a followed list: a burst of commits is one update.
const LIST_UPDATE_GAP: Duration = Duration::from_millis(500);
/// How often a followed list is read again when no commit feed tells of changes.
const LIST_POLL: Duration = Duration::from_secs(3);
/// The largest file a message sent from the console may carry.
const MAX_FILE_BYTES: usize = 2 * 1024 * 1024;

/// What the console's routes share.
#[derive(Clone)]
struct ConsoleState {
    operations: Operations,
    /// The keys the card's signatures verify with.
    signing_keys: Option<Arc<agentwire_jose::JwkSet>>,
    console: Console,
}

/// The console's routes, under `/console`, over `operations`; the card's signatures are checked
/// with `signing_keys`.
pub(crate) fn routes(operations: Operations, signing_keys: Option<agentwire_jose::JwkSet>, console: Console) -> Router {
    let state = ConsoleState { operations, signing_keys: signing_keys.map(Arc::new), console: console.clone() };
    Router::new()
        .route("/console", get(card_page))
        .route("/console/", get(card_page))
        .route("/console/tasks", get(tasks_page))
        .route("/console/tasks/live", get(tasks_live))
        .route("/console/tasks/{id}", get(task_page))
        .route("/console/tasks/{id}/events", get(task_events))
        .route("/console/tasks/{id}/cancel", post(cancel_task))
        .route("/console/tasks/{id}/artifacts/{artifact}/{part}", get(download_part))
        .route("/console/send", get(send_page).post(send_message))
        .route("/console/login", get(login_page).post(log_in))
        .route("/console/logout", post(log_out))
        .route("/console/assets/console.css", get(stylesheet))
        .route("/console/assets/console.js", get(script))
        .with_state(state)
        .layer(axum::middleware::from_fn(move |request: Request, next: Next| admit(console.clone(), request, next)))
}

/// The page that lists several agents' consoles, and the assets it uses.
/// The agents a directory lists: each one's name, console path and card.
pub(crate) type Directory = Arc<dyn Fn() -> Vec<(String, String, AgentCard)> + Send + Sync>;

pub(crate) fn directory(console: &Console, agents: Directory) -> Router {
    let console = console.clone();
    let site = console.site.clone();
    let listing = get(move || std::future::ready(Html(pages::agents_page(&site, &agents()).into_string())));
    Router::new()
        .route("/console", listing.clone())
        .route("/console/", listing)
        .route("/console/assets/console.css", get(stylesheet))
        .route("/console/assets/console.js", get(script))
        .layer(axum::middleware::from_fn(move |request: Request, next: Next| admit(console.clone(), request, next)))
}

/// Refuses callers the console is not served to, requests made under another host name, and
/// posts from other sites; hardens every answer it lets through.
async fn admit(console: Console, request: Request, next: Next) -> Response {
    let base = &console.site;
    let peer = request.extensions().get::<Peer>();
    if console.access == ConsoleAccess::Loopback && !peer.is_some_and(|peer| peer.addr.ip().is_loopback()) {
        let why = "The console is served to loopback addresses only, as this server authenticates nobody. \
                   Configure authentication (--auth), or open the console to every address (--console-open), \
                   to reach it from elsewhere.";
        return refusal(base, StatusCode::FORBIDDEN, "Not served here", why);
    }
    // HTTP/1.1 names the host in `Host`, HTTP/2 in `:authority` (the URI's authority).
    let host = request.headers().get(header::HOST).and_then(|v| v.to_str().ok());
    let host = host.or(request.uri().authority().map(|authority| authority.as_str())).unwrap_or("");
    if !console.serves_host(host) {
        // A page of another site whose name now points at this server (DNS rebinding) names
        // its own host: it gets nothing of the console.
        let why = "The console answers under its own address, localhost, and the names it is configured with \
                   (--public-url).";
        return refusal(base, StatusCode::MISDIRECTED_REQUEST, "Not served under this name", why);
    }
    if request.method() == http::Method::POST && !same_origin(request.headers(), host) {
        return refusal(base, StatusCode::FORBIDDEN, "Refused", "The console takes posts from its own pages only.");
    }
    let mut response = next.run(request).await;
    harden(response.headers_mut());
    response
}

/// The policy of every console page: its own scripts, styles and pages only, in no frame, with
/// no `<base>` elsewhere. A download sets a stricter one of its own (`sandbox`).
const PAGE_POLICY: &str =
    "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'self'; form-action 'self'";

/// Headers every answer of the console carries.
fn harden(headers: &mut HeaderMap) {
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_POLICY));
    }
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
}

/// Whether a post comes from a page of this host: browsers name the page's origin in `Origin`,
/// and a post without one (no browser's) is refused.
fn same_origin(headers: &HeaderMap, host: &str) -> bool {
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else { return false };
    origin.split_once("://").is_some_and(|(_, authority)| authority == host)
}

fn refusal(base: &Site, status: StatusCode, title: &str, why: &str) -> Response {
    (status, Html(pages::message_page(base, title, why).into_string())).into_response()
}

/// The context the console's operations run in: the page request's, with the login cookie's
/// token as its bearer credential when the request has no `Authorization` of its own.
fn context(parts: &mut Parts) -> Result<RequestContext, A2AError> {
    let mut headers = parts.headers.clone();
    if !headers.contains_key(header::AUTHORIZATION) {
        if let Some(token) = cookie(&headers, TOKEN_COOKIE) {
            if let Ok(mut value) = HeaderValue::from_str(&format!("Bearer {token}")) {
                value.set_sensitive(true);
                headers.insert(header::AUTHORIZATION, value);
            }
        }
    }
    crate::layers::context_from(&mut parts.extensions, headers, "", Dialect::V1, Binding::HttpJson)
}

/// The value of cookie `name`.
fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(name)?.strip_prefix('=').map(str::to_owned))
        .filter(|token| !token.is_empty())
}

/// Runs `request` in the console's context.
async fn run<T>(state: &ConsoleState, ctx: &RequestContext, request: A2aRequest) -> Result<T, A2AError>
where
    T: TryFrom<A2aResponse, Error = A2AError>,
{
    call(&state.operations, ctx.clone(), request).await
}

/// A page, or the page that says why not: the login form for a caller without credentials.
fn page(base: &Site, result: Result<Page, A2AError>) -> Response {
    match result {
        Ok(page) => Html(page.into_string()).into_response(),
        Err(error) => error_page(base, &error),
    }
}

/// The page for an operation's error, with the status HTTP+JSON answers it with.
fn error_page(base: &Site, error: &A2AError) -> Response {
    let (status, message) = (http_status(error.kind()), error.message());
    let title = match error.kind() {
        ErrorKind::Unauthenticated => {
            return (status, Html(pages::login_page(base, Some(message)).into_string())).into_response();
        }
        ErrorKind::PermissionDenied => "Not allowed",
        ErrorKind::TaskNotFound => "No such task",
        _ if status.is_client_error() => "Not understood",
        _ => "Something went wrong",
    };
    refusal(base, status, title, message)
}

/// Which form of the card the card page shows.
#[derive(Debug, Default, Deserialize)]
struct CardQuery {
    #[serde(default)]
    form: Option<String>,
}

async fn card_page(State(state): State<ConsoleState>, mut parts: Parts, Query(query): Query<CardQuery>) -> Response {
    let result = async {
        let ctx = context(&mut parts)?;
        let card: AgentCard = run(&state, &ctx, A2aRequest::GetAgentCard).await?;
        let v03 = query.form.as_deref() == Some("v0.3");
        let dialect = if v03 { Dialect::V03 } else { Dialect::V1 };
        let json = serde_json::to_string_pretty(&crate::core::card_json(&card, dialect.profile().card_form()))
            .unwrap_or_default();
        let signature = signature_status(&card, state.signing_keys.as_deref());
        Ok(pages::card_page(&state.console.site, &card, v03, &json, &signature))
    }
    .await;
    page(&state.console.site, result)
}

/// What can be said of the card's signatures: whose, and whether they verify with the keys this
/// server publishes.
fn signature_status(card: &AgentCard, keys: Option<&agentwire_jose::JwkSet>) -> pages::Signature {
    if card.signatures.is_empty() {
        return pages::Signature::Unsigned;
    }
    let Some(keys) = keys else { return pages::Signature::Unchecked(card.signatures.len()) };
    let keys = agentwire_jose::PublicKeys::from_set(keys);
    match agentwire_jose::verify_card(card, &keys, &agentwire_jose::Algorithm::ALL) {
        Ok(header) => pages::Signature::Verified { alg: header.alg, kid: header.kid.unwrap_or_default() },
        Err(error) => pages::Signature::Invalid(error.to_string()),
    }
}

async fn tasks_page(State(state): State<ConsoleState>, mut parts: Parts, Query(query): Query<TasksQuery>) -> Response {
    let result = async {
        let ctx = context(&mut parts)?;
        let tasks = run(&state, &ctx, A2aRequest::ListTasks(query.request()?)).await?;
        Ok(pages::tasks_page(&state.console.site, &query, &tasks))
    }
    .await;
    page(&state.console.site, result)
}

/// The rows of the task list, each time they change, as server-sent events: after each burst of
/// commits this process makes, or every few seconds without a commit feed.
async fn tasks_live(State(state): State<ConsoleState>, mut parts: Parts, Query(query): Query<TasksQuery>) -> Response {
    let (ctx, request) = match context(&mut parts).and_then(|ctx| Ok((ctx, query.request()?))) {
        Ok(both) => both,
        Err(error) => return error_page(&state.console.site, &error),
    };
    let mut feed = state.console.changes.as_ref().map(|changes| changes());
    let events = async_stream(move |sender| async move {
        let mut shown = (String::new(), 0);
        loop {
            let rows =
                match run::<agentwire_types::ListTasksResponse>(&state, &ctx, A2aRequest::ListTasks(request.clone()))
                    .await
                {
                    Ok(tasks) => (pages::task_rows(&tasks).into_string(), tasks.total_size),
                    Err(error) => {
                        let _ = sender.send(Event::default().event("failed").data(error.message())).await;
                        return;
                    }
                };
            if rows != shown {
                let (html, count) = &rows;
                let events = [
                    Event::default().event("count").data(count.to_string()),
                    Event::default().event("tasks").data(html),
                ];
                for event in events {
                    if sender.send(event).await.is_err() {
                        return;
                    }
                }
                shown = rows;
            }
            match feed.as_mut() {
                Some(feed) => {
                    // Any commit, or a lag (commits missed), is a reason to read the list again.
                    tokio::select! {
                        () = feed.rung() => {}
                        () = sender.closed() => return,
                    }
                    tokio::time::sleep(LIST_UPDATE_GAP).await;
                    // The burst's other commits are in the list read next: follow on from now,
                    // without reading them one by one.
                    feed.skip_to_now();
                }
                None => tokio::select! {
                    () = tokio::time::sleep(LIST_POLL) => {}
                    () = sender.closed() => return,
                },
            }
        }
    });
    Sse::new(events).keep_alive(KeepAlive::default()).into_response()
}

/// A stream of the events a task `produce`s into its sender; ends when `produce` returns.
fn async_stream<F, Fut>(produce: F) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static
where
    F: FnOnce(tokio::sync::mpsc::Sender<Event>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (sender, receiver) = tokio::sync::mpsc::channel(8);
    tokio::spawn(produce(sender));
    futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|event| (Ok(event), receiver))
    })
}

async fn task_page(State(state): State<ConsoleState>, mut parts: Parts, Path(id): Path<String>) -> Response {
    let result = async {
        let ctx = context(&mut parts)?;
        let task: Task =
            run(&state, &ctx, A2aRequest::GetTask(GetTaskRequest { id: id.clone(), ..GetTaskRequest::default() }))
                .await?;
        // An agent without push notifications has no configs to show.
        let request = ListTaskPushNotificationConfigsRequest { task_id: id.clone(), ..Default::default() };
        let configs = run::<agentwire_types::ListTaskPushNotificationConfigsResponse>(
            &state,
            &ctx,
            A2aRequest::ListPushConfigs(request),
        )
        .await
        .map(|list| list.configs)
        .unwrap_or_default();
        // An ended task's log is whole: it is shown in the page. A running task's is followed
        // live by the page's script.
        let timeline = if task.status.state.is_terminal() { Some(timeline(&state, &ctx, &id).await?) } else { None };
        Ok(pages::task_page(&state.console.site, &task, timeline.as_deref(), &configs))
    }
    .await;
    page(&state.console.site, result)
}

/// The task's log, from its first event: a subscription that resumes after event 0.
async fn subscribe_from_start(
    state: &ConsoleState,
    ctx: &RequestContext,
    id: &str,
) -> Result<agentwire_types::TaskEventStream, A2AError> {
    let mut ctx = ctx.clone();
    ctx.last_event_id = Some(0);
    let request = SubscribeToTaskRequest { id: id.to_owned(), ..SubscribeToTaskRequest::default() };
    run(state, &ctx, A2aRequest::SubscribeToTask(request)).await
}

/// The whole log of an ended task.
async fn timeline(state: &ConsoleState, ctx: &RequestContext, id: &str) -> Result<Vec<pages::Entry>, A2AError> {
    let mut events = subscribe_from_start(state, ctx, id).await?;
    let mut entries = Vec::new();
    while let Some(item) = events.next().await {
        let item = item?;
        entries.push(pages::Entry { seq: item.seq, event: item.response });
    }
    Ok(entries)
}

/// A running task's log, then its events as they come, as rows of its timeline.
async fn task_events(State(state): State<ConsoleState>, mut parts: Parts, Path(id): Path<String>) -> Response {
    let events = match context(&mut parts) {
        Ok(ctx) => subscribe_from_start(&state, &ctx, &id).await,
        Err(error) => Err(error),
    };
    let events = match events {
        Ok(events) => events,
        Err(error) => return error_page(&state.console.site, &error),
    };
    let mut state = pages::StateBefore::default();
    let rows = events.map(move |item| {
        Ok::<_, Infallible>(match item {
            Ok(item) => {
                let before = state.next(&item.response);
                let entry = pages::Entry { seq: item.seq, event: item.response };
                Event::default().event("entry").data(pages::entry_row(&entry, before).into_string())
            }
            Err(error) => Event::default().event("failed").data(error.message()),
        })
    });
    let end = futures_util::stream::once(async { Ok(Event::default().event("end").data("")) });
    Sse::new(rows.chain(end)).keep_alive(KeepAlive::default()).into_response()
}

async fn cancel_task(State(state): State<ConsoleState>, mut parts: Parts, Path(id): Path<String>) -> Response {
    let result = async {
        let ctx = context(&mut parts)?;
        let request = agentwire_types::CancelTaskRequest { id: id.clone(), ..Default::default() };
        run::<Task>(&state, &ctx, A2aRequest::CancelTask(request)).await
    }
    .await;
    match result {
        Ok(task) => {
            Redirect::to(&format!("{}/tasks/{}", state.console.site.base, pages::encode(&task.id))).into_response()
        }
        Err(error) => error_page(&state.console.site, &error),
    }
}

/// A file part of an artifact, as a download.
async fn download_part(
    State(state): State<ConsoleState>,
    mut parts: Parts,
    Path((id, artifact_id, index)): Path<(String, String, usize)>,
) -> Response {
    let result = async {
        let ctx = context(&mut parts)?;
        let task: Task =
            run(&state, &ctx, A2aRequest::GetTask(GetTaskRequest { id, ..GetTaskRequest::default() })).await?;
        let part = task
            .artifacts
            .into_iter()
            .find(|artifact| artifact.artifact_id == artifact_id)
            .and_then(|artifact| artifact.parts.into_iter().nth(index))
            .ok_or_else(|| A2AError::invalid_params("the task has no such artifact part"))?;
        Ok(part)
    }
    .await;
    let part = match result {
        Ok(part) => part,
        Err(error) => return error_page(&state.console.site, &error),
    };
    let (body, default_type) = match part.content {
        PartContent::Raw(bytes) => (Body::from(bytes), "application/octet-stream"),
        PartContent::Text(text) => (Body::from(text), "text/plain; charset=utf-8"),
        PartContent::Data(value) => {
            (Body::from(serde_json::to_vec_pretty(&value).unwrap_or_default()), "application/json")
        }
        // Only to the web: an agent's `javascript:` or `data:` URL would run in the console's origin.
        PartContent::Url(url) => {
            return match pages::web_link(&url) {
                Some(url) => Redirect::to(url).into_response(),
                None => {
                    let error = A2AError::invalid_params("the part's URL is not an http or https address");
                    error_page(&state.console.site, &error)
                }
            };
        }
    };
    let media_type = part.media_type.as_deref().unwrap_or(default_type);
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(download_type(media_type)));
    headers.insert(header::CONTENT_DISPOSITION, attachment(part.filename.as_deref().unwrap_or("part")));
    // Whatever a browser makes of the bytes, nothing in them runs with the console's origin.
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("sandbox"));
    response
}

/// The media types a download keeps: kinds a browser shows or saves without running anything.
/// Anything else, HTML and SVG above all, downloads as bytes.
const DOWNLOAD_TYPES: &[&str] = &[
    "text/plain; charset=utf-8",
    "text/csv",
    "application/json",
    "application/pdf",
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "audio/mpeg",
    "audio/wav",
    "video/mp4",
];

/// The `Content-Type` a download of a part of `media_type` is served with.
fn download_type(media_type: &str) -> &'static str {
    let essence = media_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let essence = if essence == "text/plain" { "text/plain; charset=utf-8" } else { essence.as_str() };
    DOWNLOAD_TYPES.iter().find(|safe| **safe == essence).copied().unwrap_or("application/octet-stream")
}

/// `Content-Disposition: attachment` for a file named `name` (RFC 6266): the name's characters
/// in `filename*`, and an ASCII stand-in in `filename` for the oldest clients. Control characters
/// are dropped, so the header is always valid and always sent.
fn attachment(name: &str) -> HeaderValue {
    let name = pages::readable(name);
    let name = if name.trim().is_empty() { "part".to_owned() } else { name };
    let ascii: String =
        name.chars().map(|c| if c.is_ascii_graphic() && c != '"' && c != '\\' || c == ' ' { c } else { '_' }).collect();
    let value = format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{}", pages::encode(&name));
    HeaderValue::from_str(&value).unwrap_or(HeaderValue::from_static("attachment"))
}

/// The task a message is sent to, when it continues one.
#[derive(Debug, Default, Deserialize)]
struct SendQuery {
    #[serde(default)]
    task: String,
    #[serde(default)]
    context: String,
}

async fn send_page(State(state): State<ConsoleState>, mut parts: Parts, Query(query): Query<SendQuery>) -> Response {
    let result = async {
        let ctx = context(&mut parts)?;
        let card: AgentCard = run(&state, &ctx, A2aRequest::GetAgentCard).await?;
        // A reply to a task that asked for input shows what it asked.
        let question = match query.task.trim() {
            "" => None,
            id => {
                let get = GetTaskRequest { id: id.to_owned(), history_length: Some(0), ..GetTaskRequest::default() };
                let task: Option<Task> = run(&state, &ctx, A2aRequest::GetTask(get)).await.ok();
                task.filter(|task| task.status.state.is_interrupted()).and_then(|task| task.status.message.map(|m| *m))
            }
        };
        Ok(pages::send_page(&state.console.site, &card, &query.task, &query.context, question.as_ref()))
    }
    .await;
    page(&state.console.site, result)
}

/// A message written in the console's form.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Outgoing {
    #[serde(default)]
    text: String,
    #[serde(default)]
    task_id: String,
    #[serde(default)]
    context_id: String,
    #[serde(default)]
    file: Option<OutgoingFile>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct OutgoingFile {
    name: String,
    #[serde(default)]
    media_type: String,
    /// The content, base64.
    bytes: String,
}

impl Outgoing {
    fn message(self) -> Result<Message, A2AError> {
        let mut parts = Vec::new();
        if !self.text.trim().is_empty() {
            parts.push(Part::text(self.text));
        }
        if let Some(file) = self.file {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(file.bytes.as_bytes())
                .map_err(|_| A2AError::invalid_params("the file's content is not base64"))?;
            if bytes.len() > MAX_FILE_BYTES {
                return Err(A2AError::invalid_params(format!(
                    "the file is larger than the console sends ({} MiB)",
                    MAX_FILE_BYTES / (1024 * 1024)
                )));
            }
            let media_type =
                if file.media_type.is_empty() { "application/octet-stream".into() } else { file.media_type };
            parts.push(Part::raw(bytes, file.name, media_type));
        }
        if parts.is_empty() {
            return Err(A2AError::invalid_params("write a text or choose a file to send"));
        }
        let mut message = Message::new(Role::User, uuid::Uuid::new_v4().to_string(), parts);
        message.task_id = self.task_id.trim().to_owned();
        message.context_id = self.context_id.trim().to_owned();
        Ok(message)
    }
}

/// Sends the form's message and answers with its stream as server-sent events: a row per event
/// (`entry`), then where it ended (`end`). An agent without streaming answers once.
async fn send_message(State(state): State<ConsoleState>, mut parts: Parts, body: axum::body::Bytes) -> Response {
    let started = async {
        let ctx = context(&mut parts)?;
        let outgoing: Outgoing = serde_json::from_slice(&body)
            .map_err(|error| A2AError::invalid_params(format!("the message form: {error}")))?;
        let request = SendMessageRequest::new(outgoing.message()?);
        let card: AgentCard = run(&state, &ctx, A2aRequest::GetAgentCard).await?;
        if card.capabilities.streaming == Some(true) {
            run(&state, &ctx, A2aRequest::SendStreamingMessage(request)).await
        } else {
            let sent: agentwire_types::SendMessageResponse =
                run(&state, &ctx, A2aRequest::SendMessage(request)).await?;
            let response = match sent {
                agentwire_types::SendMessageResponse::Task(task) => StreamResponse::Task(task),
                agentwire_types::SendMessageResponse::Message(message) => StreamResponse::Message(message),
            };
            let item = agentwire_types::StreamItem { seq: 0, response: Arc::new(response) };
            Ok(Box::pin(futures_util::stream::iter([Ok(item)])) as agentwire_types::TaskEventStream)
        }
    }
    .await;
    let events = match started {
        Ok(events) => events,
        Err(error) => {
            return (http_status(error.kind()), error.message().to_owned()).into_response();
        }
    };
    let mut last = None::<(String, TaskState)>;
    let mut state = pages::StateBefore::default();
    let rows = events
        .map(move |item| match item {
            Ok(item) => {
                let before = state.next(&item.response);
                if let Some(seen) = pages::task_of(&item.response) {
                    last = Some(seen);
                }
                let entry = pages::Entry { seq: item.seq, event: item.response };
                let row = pages::entry_row(&entry, before).into_string();
                let mut events = vec![Event::default().event("entry").data(row)];
                if let Some((id, state)) = last.as_ref().filter(|(_, state)| pages::ends_a_turn(*state)) {
                    events.push(Event::default().event("end").data(pages::outcome(id, *state).into_string()));
                }
                events
            }
            Err(error) => vec![Event::default().event("failed").data(error.message())],
        })
        .flat_map(|events| futures_util::stream::iter(events.into_iter().map(Ok::<_, Infallible>)));
    Sse::new(rows).into_response()
}

async fn login_page(State(state): State<ConsoleState>) -> Response {
    Html(pages::login_page(&state.console.site, None).into_string()).into_response()
}

/// The login form's fields.
#[derive(Debug, Deserialize)]
struct Login {
    token: String,
}

/// Keeps the token in a cookie the browser sends to the console only, and to no other site.
async fn log_in(State(state): State<ConsoleState>, peer: Option<Extension<Peer>>, body: axum::body::Bytes) -> Response {
    let site = &state.console.site;
    let base = &site.base;
    let refused =
        |why: &str| (StatusCode::BAD_REQUEST, Html(pages::login_page(site, Some(why)).into_string())).into_response();
    let Ok(login) = serde_urlencoded::from_bytes::<Login>(&body) else { return refused("Give a token.") };
    let token = login.token.trim();
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic() && b != b';' && b != b',') {
        return refused("A token is one word of visible characters.");
    }
    let mut response = Redirect::to(&format!("{base}/tasks")).into_response();
    set_cookie(&mut response, &format!("{TOKEN_COOKIE}={token}; Path={base}; HttpOnly; SameSite=Strict"), peer);
    response
}

async fn log_out(State(state): State<ConsoleState>, peer: Option<Extension<Peer>>) -> Response {
    let base = &state.console.site.base;
    let mut response = Redirect::to(&format!("{base}/login")).into_response();
    let cookie = format!("{TOKEN_COOKIE}=; Path={base}; HttpOnly; SameSite=Strict; Max-Age=0");
    set_cookie(&mut response, &cookie, peer);
    response
}

/// Sets `cookie`; one set over TLS is sent back over TLS only (`Secure`).
fn set_cookie(response: &mut Response, cookie: &str, peer: Option<Extension<Peer>>) {
    let cookie = match peer {
        Some(Extension(peer)) if peer.tls => format!("{cookie}; Secure"),
        _ => cookie.to_owned(),
    };
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
}

async fn stylesheet() -> Response {
    asset(include_str!("assets/console.css"), "text/css; charset=utf-8")
}

async fn script() -> Response {
    asset(include_str!("assets/console.js"), "text/javascript; charset=utf-8")
}

fn asset(body: &'static str, media_type: &'static str) -> Response {
    let headers = [(header::CONTENT_TYPE, media_type), (header::CACHE_CONTROL, "no-cache")];
    (headers, body).into_response()
}
