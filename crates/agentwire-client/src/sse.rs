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
    let events = without_bom(chunks).eventsource().filter_map(move |event| {
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

/// A piece of an event stream's body: its start, rewritten by [`without_bom`], or a chunk as it
/// arrived.
enum Piece<B> {
    Start(Vec<u8>),
    Body(B),
}

impl<B: AsRef<[u8]>> AsRef<[u8]> for Piece<B> {
    fn as_ref(&self) -> &[u8] {
        match self {
            Piece::Start(start) => start,
            Piece::Body(chunk) => chunk.as_ref(),
        }
    }
}

/// The body without the byte order mark the SSE format lets it start with, after an empty line.
///
/// eventsource-stream 0.2.3 strips a leading mark by cutting one byte off the three-byte character
/// and panics (jpopesculian/eventsource-stream#10). It looks for the mark only before the first
/// line, and the empty line in front, which dispatches no event, is that line. The mark may arrive
/// in pieces: the start of the body is held until it can be told apart from one.
fn without_bom<B, E>(
    chunks: impl Stream<Item = std::result::Result<B, E>> + Send + 'static,
) -> impl Stream<Item = std::result::Result<Piece<B>, E>> + Send
where
    B: AsRef<[u8]> + Send + 'static,
    E: Send + 'static,
{
    const BOM: &[u8] = "\u{feff}".as_bytes();
    let start = Some(Vec::new());
    futures_util::stream::unfold((chunks.fuse().boxed(), start), |(mut chunks, start)| async move {
        let Some(mut seen) = start else {
            let chunk = chunks.next().await?;
            return Some((chunk.map(Piece::Body), (chunks, None)));
        };
        loop {
            match chunks.next().await {
                Some(Ok(chunk)) => {
                    seen.extend_from_slice(chunk.as_ref());
                    if seen.len() < BOM.len() && BOM.starts_with(&seen) {
                        continue;
                    }
                }
                Some(Err(error)) => return Some((Err(error), (chunks, Some(seen)))),
                None => {}
            }
            let body = seen.strip_prefix(BOM).unwrap_or(&seen);
            return Some((Ok(Piece::Start([b"\n", body].concat())), (chunks, None)));
        }
    })
}

fn read_event(endpoint: &Endpoint, url: &str, data: &str) -> Result<StreamResponse> {
    match endpoint.binding {
        Binding::JsonRpc => jsonrpc::read_event(endpoint, url, data),
        _ => rest::read_event(endpoint, url, data),
    }
}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt;

    use super::*;

    /// The events of `chunks`, read as a v1.0 HTTP+JSON interface writes them.
    fn read(chunks: Vec<&'static [u8]>) -> Vec<Result<(Option<u64>, StreamResponse)>> {
        let events = read_event_stream(Binding::HttpJson, Version::V1, futures_util::stream::iter(chunks));
        events.collect::<Vec<_>>().now_or_never().expect("every chunk has arrived")
    }

    const EVENT: &[u8] = br#"data: {"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_WORKING"}}}"#;

    #[test]
    fn a_body_that_starts_with_a_byte_order_mark_is_read_not_a_panic() {
        let bom = "\u{feff}".as_bytes();
        for chunks in [vec![bom, EVENT, b"\n\n"], vec![&bom[..1], &bom[1..2], &bom[2..], EVENT, b"\n\n"]] {
            let events = read(chunks.clone());
            assert!(
                matches!(events.as_slice(), [Ok((None, event))] if event.task_id() == "t1"),
                "{chunks:?}: {events:?}"
            );
        }
        let cut_short = read(vec![&bom[..2]]);
        assert!(matches!(cut_short.as_slice(), [Err(Error::Decode { .. })]), "{cut_short:?}");
    }

    #[test]
    fn only_the_first_byte_order_mark_is_left_out() {
        let twice = "\u{feff}\u{feff}data: {}\n\n".as_bytes();
        assert!(read(vec![twice]).is_empty(), "the second mark is part of a field name, not a `data` field");
        let events = read(vec![b"id: 4\n", EVENT, b"\n\n"]);
        assert!(matches!(events.as_slice(), [Ok((Some(4), _))]), "{events:?}");
    }
}
