//! The console's route table, and its pages of the card and the tasks; the access gate and login
//! (`access`), the live lists and timelines (`live`), the send form (`form`) and the downloads
//! (`download`) have modules of their own, over what they share (`state`).

use std::sync::Arc;

use agentwire_types::{A2aRequest, AgentCard, Dialect, GetTaskRequest, ListTaskPushNotificationConfigsRequest, Task};
use axum::extract::{Path, Query, Request, State};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use http::header;
use http::request::Parts;
use serde::Deserialize;

use crate::service::Operations;

use super::access::{admit, log_in, log_out};
use super::download::download_part;
use super::form::{send_message, send_page};
use super::live::{task_events, tasks_live, timeline};
use super::pages::{self, TasksQuery};
use super::state::{context, error_page, login_page, page, run, ConsoleState};
use super::usage::usage_page;
use super::Console;

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
        .route("/console/usage", get(usage_page))
        .route("/console/login", get(login_page).post(log_in))
        .route("/console/logout", post(log_out))
        .route("/console/assets/console.css", get(stylesheet))
        .route("/console/assets/console.js", get(script))
        .with_state(state)
        .layer(axum::middleware::from_fn(move |request: Request, next: Next| admit(console.clone(), request, next)))
}

/// The agents a directory lists for a caller (the context of its page request) and the text of
/// its search box.
pub(crate) type Directory = Arc<
    dyn Fn(crate::RequestContext, Option<String>) -> futures_util::future::BoxFuture<'static, Vec<super::ListedAgent>>
        + Send
        + Sync,
>;

/// The text of a directory's search box.
#[derive(Debug, Default, Deserialize)]
struct DirectoryQuery {
    #[serde(default)]
    q: Option<String>,
}

/// The page that lists several agents' consoles (with a search box when `searchable`), and the
/// assets it uses.
pub(crate) fn directory(console: &Console, agents: Directory, searchable: bool) -> Router {
    let mut console = console.clone();
    Arc::make_mut(&mut console.site).directory = true;
    let site = console.site.clone();
    let usage = get({
        let console = console.clone();
        move |parts: Parts| {
            let console = console.clone();
            async move { super::usage::show(&console, Ok(directory_context(&parts))).await }
        }
    });
    let listing = get(move |parts: Parts, Query(query): Query<DirectoryQuery>| {
        let (site, agents) = (site.clone(), Arc::clone(&agents));
        async move {
            let text = query.q.filter(|text| !text.trim().is_empty());
            let listed = agents(directory_context(&parts), text.clone()).await;
            Html(
                pages::agents_page(&site, &listed, searchable.then_some(text.as_deref().unwrap_or_default()))
                    .into_string(),
            )
        }
    });
    Router::new()
        .route("/console", listing.clone())
        .route("/console/", listing)
        .route("/console/usage", usage)
        .route("/console/assets/console.css", get(stylesheet))
        .route("/console/assets/console.js", get(script))
        .layer(axum::middleware::from_fn(move |request: Request, next: Next| admit(console.clone(), request, next)))
}

/// The context a directory page's caller is identified in: its headers (with the login
/// cookie's token as its bearer credential) and its peer.
fn directory_context(parts: &Parts) -> crate::RequestContext {
    let mut ctx = crate::RequestContext::from_http(agentwire_types::Front::Console, &parts.headers, &parts.extensions);
    if !ctx.metadata.contains_key(header::AUTHORIZATION) {
        let token = super::state::cookie(&parts.headers, super::state::TOKEN_COOKIE);
        if let Some(Ok(mut value)) = token.map(|token| http::HeaderValue::from_str(&format!("Bearer {token}"))) {
            value.set_sensitive(true);
            ctx.metadata.insert(header::AUTHORIZATION, value);
        }
    }
    ctx
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
