//! Server-sent events: one `data:` line of compact JSON per event, the event-log sequence number
//! as `id:`, and keep-alive comments while nothing happens.

use std::convert::Infallible;
use std::time::Duration;

use agentwire_types::A2AError;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;

use agentwire_types::{StreamItem, TaskEventStream};

/// Streams `events`, each written by `frame` (the binding's envelope around a StreamResponse, or
/// around an error that happens mid-stream), with a comment every `keep_alive` while idle.
pub(crate) fn respond<F>(events: TaskEventStream, keep_alive: Duration, frame: F) -> Response
where
    F: Fn(Result<&StreamItem, &A2AError>) -> serde_json::Result<String> + Send + 'static,
{
    let events = events.map(move |item| Ok::<_, Infallible>(to_event(&item, &frame)));
    Sse::new(events).keep_alive(KeepAlive::new().interval(keep_alive)).into_response()
}

fn to_event<F>(item: &agentwire_types::Result<StreamItem>, frame: &F) -> Event
where
    F: Fn(Result<&StreamItem, &A2AError>) -> serde_json::Result<String>,
{
    // Compact JSON has no raw newlines, so each event is exactly one `data:` line.
    let data = frame(item.as_ref()).unwrap_or_else(|error| {
        tracing::error!(%error, "could not encode a stream event");
        r#"{"error":"could not encode the event"}"#.to_owned()
    });
    let event = Event::default().data(data);
    match item {
        Ok(StreamItem { seq, .. }) if *seq > 0 => event.id(seq.to_string()),
        _ => event,
    }
}
