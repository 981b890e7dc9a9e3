//! The live pages: the task list as it changes, and a task's timeline event by event.

use std::convert::Infallible;
use std::time::Duration;

use agentwire_types::{A2AError, A2aRequest, SubscribeToTaskRequest};
use axum::extract::{Path, Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt};
use http::request::Parts;

use crate::RequestContext;

use super::pages::{self, TasksQuery};
use super::state::{context, error_page, run, ConsoleState};

/// The least time between two updates of a followed list: a burst of commits is one update.
pub(super) const LIST_UPDATE_GAP: Duration = Duration::from_millis(500);

/// How often a followed list is read again when no commit feed tells of changes.
pub(super) const LIST_POLL: Duration = Duration::from_secs(3);

/// The rows of the task list, each time they change, as server-sent events: after each burst of
/// commits this process makes, or every few seconds without a commit feed.
pub(super) async fn tasks_live(
    State(state): State<ConsoleState>,
    mut parts: Parts,
    Query(query): Query<TasksQuery>,
) -> Response {
    let (ctx, request) = match context(&mut parts).and_then(|ctx| Ok((ctx, query.request()?))) {
        Ok(both) => both,
        Err(error) => return error_page(&state.console.site, &error),
    };
    let permit = match &state.console.streams {
        Some(open) => match open(ctx.clone()).await {
            Ok(permit) => permit,
            Err(error) => return error_page(&state.console.site, &error),
        },
        None => None,
    };
    let mut feed = state.console.changes.as_ref().map(|changes| changes());
    let events = async_stream(move |sender| async move {
        // Counted among the caller's streams for as long as the list is followed.
        let _permit = permit;
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
                    // Any commit, or a lag (commits missed), is a reason to read the list again;
                    // a server that starts to stop ends the list (the browser reconnects).
                    tokio::select! {
                        rung = feed.rung() => if !rung { return },
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
pub(super) fn async_stream<F, Fut>(produce: F) -> impl Stream<Item = Result<Event, Infallible>> + Send + 'static
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

/// The task's log, from its first event: a subscription that resumes after event 0.
pub(super) async fn subscribe_from_start(
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
pub(super) async fn timeline(
    state: &ConsoleState,
    ctx: &RequestContext,
    id: &str,
) -> Result<Vec<pages::Entry>, A2AError> {
    let mut events = subscribe_from_start(state, ctx, id).await?;
    let mut entries = Vec::new();
    while let Some(item) = events.next().await {
        let item = item?;
        entries.push(pages::Entry { seq: item.seq, event: item.response });
    }
    Ok(entries)
}

/// A running task's log, then its events as they come, as rows of its timeline.
pub(super) async fn task_events(
    State(state): State<ConsoleState>,
    mut parts: Parts,
    Path(id): Path<String>,
) -> Response {
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
