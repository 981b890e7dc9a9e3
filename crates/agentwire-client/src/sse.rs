//! Reading an event stream's body: the SSE framing (eventsource-stream), then each event's data
//! in the form of the interface that wrote it.

use std::convert::Infallible;

use agentwire_types::{Binding, StreamResponse};
use eventsource_stream::Eventsource;
use futures_util::stream::{Stream, StreamExt};
use http::HeaderMap;

use crate::endpoint::{Endpoint, Version};
use crate::error::{Error, Result};
use crate::stream::Events;
use crate::{jsonrpc, rest};

/// The events of an event stream's body, arriving in `chunks`: each event's data read as the
/// endpoint writes it, with its SSE id; events without data (keep-alives) are skipped, and a
/// failure of the transport is reported by `transport`.
pub(crate) fn event_stream<B, E>(
    endpoint: Endpoint,
    url: String,
    chunks: impl Stream<Item = std::result::Result<B, E>> + Send + 'static,
    transport: fn(&str, E) -> Error,
) -> Events
where
    B: AsRef<[u8]> + Send + 'static,
    E: std::fmt::Display + Send + 'static,
{
    let events = chunks.eventsource().filter_map(move |event| {
        let item = match event {
            Ok(event) if event.data.is_empty() => None,
            Ok(event) => Some(read_event(&endpoint, &url, &event.data).map(|e| (event.id.parse().ok(), e))),
            Err(eventsource_stream::EventStreamError::Transport(source)) => Some(Err(transport(&url, source))),
            Err(error) => Some(Err(Error::Decode { url: url.clone(), detail: error.to_string() })),
        };
        std::future::ready(item)
    });
    events.boxed()
}

/// The events of an event stream's body, as an interface speaking `binding` in `version` writes
/// them, each with its SSE id; `chunks` is the body as it arrives, split anywhere.
///
/// Not part of the API: public for the fuzz targets in `fuzz/`, which feed it arbitrary bytes.
#[doc(hidden)]
pub fn read_event_stream<B>(
    binding: Binding,
    version: Version,
    chunks: impl Stream<Item = B> + Send + 'static,
) -> impl Stream<Item = Result<(Option<u64>, StreamResponse)>> + Send
where
    B: AsRef<[u8]> + Send + 'static,
{
    let endpoint = Endpoint { binding, version, url: String::new(), tenant: String::new(), headers: HeaderMap::new() };
    event_stream(endpoint, String::new(), chunks.map(Ok), |_, never: Infallible| match never {})
}

fn read_event(endpoint: &Endpoint, url: &str, data: &str) -> Result<StreamResponse> {
    match endpoint.binding {
        Binding::JsonRpc => jsonrpc::read_event(endpoint, url, data),
        _ => rest::read_event(endpoint, url, data),
    }
}
