//! Server-sent events: one `data:` line of compact JSON per event, the event-log sequence number
//! as `id:`, and keep-alive comments while nothing happens.

use std::convert::Infallible;
use std::time::Duration;

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt};

use crate::core::{StreamItem, TaskEventStream};

/// How often an idle stream sends a comment so proxies keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Streams `events`, each written by `frame` (the binding's envelope around a StreamResponse, or
/// around an error that happens mid-stream).
pub(crate) fn respond<F>(events: TaskEventStream, frame: F) -> Response
where
    F: Fn(std::result::Result<&StreamItem, &agentwire_types::A2AError>) -> serde_json::Result<String> + Send + 'static,
{
    let stream = events.map(move |item| Ok::<_, Infallible>(to_event(&item, &frame)));
    sse(stream)
}

fn to_event<F>(item: &agentwire_types::Result<StreamItem>, frame: &F) -> Event
where
    F: Fn(std::result::Result<&StreamItem, &agentwire_types::A2AError>) -> serde_json::Result<String>,
{
    // Compact JSON has no raw newlines, so each event is exactly one `data:` line.
    let data = frame(item.as_ref()).unwrap_or_else(|e| {
        tracing::error!(error = %e, "could not encode a stream event");
        r#"{"error":"could not encode the event"}"#.to_owned()
    });
    let event = Event::default().data(data);
    match item {
        Ok(StreamItem { seq, .. }) if *seq > 0 => event.id(seq.to_string()),
        _ => event,
    }
}

fn sse(stream: impl Stream<Item = Result<Event, Infallible>> + Send + 'static) -> Response {
    Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)).into_response()
}
