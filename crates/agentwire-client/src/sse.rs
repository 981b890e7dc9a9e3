//! Reading an event stream's body: the SSE framing (eventsource-stream), then each event's data
//! in the form of the interface that wrote it.

use std::convert::Infallible;

use agentwire_types::{Binding, StreamResponse};
use eventsource_stream::Eventsource;
use futures_util::stream::{Stream, StreamExt};
use http::HeaderMap;

use crate::endpoint::{Endpoint, Version};
use crate::error::{Error, Result};
use crate::limits::DEFAULT_MAX_EVENT_SIZE;
use crate::stream::Events;
use crate::{jsonrpc, rest};

/// The events of an event stream's body, arriving in `chunks`: each event's data read as the
/// endpoint writes it, with its SSE id; events without data (keep-alives) are skipped, and a
/// failure of the transport is reported by `transport`. An event of more than `max_event_size`
/// bytes ends the stream with an error.
pub(crate) fn event_stream<B, E>(
    endpoint: Endpoint,
    url: String,
    chunks: impl Stream<Item = std::result::Result<B, E>> + Send + 'static,
    transport: fn(&str, E) -> Error,
    max_event_size: usize,
) -> Events
where
    B: AsRef<[u8]> + Send + 'static,
    E: std::fmt::Display + Send + 'static,
{
    let events = whole_events(without_bom(chunks), max_event_size).eventsource().filter_map(move |event| {
        let item = match event {
            Ok(event) if event.data.is_empty() => None,
            Ok(event) => Some(read_event(&endpoint, &url, &event.data).map(|e| (event.id.parse().ok(), e))),
            Err(eventsource_stream::EventStreamError::Transport(Framing::Transport(source))) => {
                Some(Err(transport(&url, source)))
            }
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
    let endpoint = Endpoint {
        binding,
        version,
        url: String::new(),
        tenant: String::new(),
        headers: HeaderMap::new(),
        trusted: false,
    };
    let transport = |_: &str, never: Infallible| match never {};
    event_stream(endpoint, String::new(), chunks.map(Ok), transport, DEFAULT_MAX_EVENT_SIZE)
}

/// Why [`sse_events`] stopped reading a body.
#[derive(Debug)]
pub enum SseError<E> {
    /// Reading the body failed, as the chunks said.
    Transport(E),
    /// An event passed the size bound (in bytes) it was given.
    TooLarge(usize),
    /// The body is not an event stream (its text is not UTF-8).
    Invalid(String),
}

impl<E: std::fmt::Display> std::fmt::Display for SseError<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Transport(error) => error.fmt(f),
            Self::TooLarge(max) => write!(f, "an event of the stream is larger than {max} bytes"),
            Self::Invalid(detail) => write!(f, "the body is not an event stream: {detail}"),
        }
    }
}

impl<E: std::fmt::Debug + std::fmt::Display> std::error::Error for SseError<E> {}

/// The server-sent events of a body arriving in `chunks` (split anywhere), each event read whole
/// in time linear in its size, and none larger than `max_event_size` bytes: a larger one ends
/// the stream with [`SseError::TooLarge`]. A byte order mark at the start is skipped. The stream
/// is read no faster than its events are taken, so a fast server waits for a slow reader.
///
/// This is the framing the client reads agents' streams with, for other event streams (a chat
/// model's, say); the events are `eventsource_stream`'s, keep-alives (events without data)
/// included.
///
/// ```
/// use futures_util::StreamExt;
///
/// # futures_util::FutureExt::now_or_never(async {
/// let body = futures_util::stream::iter([Ok::<_, std::io::Error>("data: hel"), Ok("lo\n\n")]);
/// let events: Vec<_> = agentwire_client::sse_events(body, 1024).collect().await;
/// assert_eq!(events[0].as_ref().unwrap().data, "hello");
/// # }).unwrap();
/// ```
pub fn sse_events<B, E>(
    chunks: impl Stream<Item = std::result::Result<B, E>> + Send + 'static,
    max_event_size: usize,
) -> impl Stream<Item = std::result::Result<eventsource_stream::Event, SseError<E>>> + Send
where
    B: AsRef<[u8]> + Send + 'static,
    E: Send + 'static,
{
    whole_events(without_bom(chunks), max_event_size).eventsource().map(|event| {
        event.map_err(|error| match error {
            eventsource_stream::EventStreamError::Transport(Framing::Transport(source)) => SseError::Transport(source),
            eventsource_stream::EventStreamError::Transport(Framing::TooLarge(max)) => SseError::TooLarge(max),
            eventsource_stream::EventStreamError::Utf8(error) => SseError::Invalid(error.to_string()),
            eventsource_stream::EventStreamError::Parser(error) => SseError::Invalid(error.to_string()),
        })
    })
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

/// What ends a stream before the SSE parser: the transport failed, or an event grew too large.
#[derive(Debug)]
enum Framing<E> {
    Transport(E),
    TooLarge(usize),
}

impl<E: std::fmt::Display> std::fmt::Display for Framing<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Transport(error) => error.fmt(f),
            Self::TooLarge(max) => write!(f, "an event of the stream is larger than {max} bytes"),
        }
    }
}

/// The body in pieces that each end where an event ends (at an empty line), so that the SSE
/// parser gets every event whole: eventsource-stream scans a line that is not complete again
/// from its start with each new chunk, which costs the square of a large event's size when it
/// arrives in many chunks. An event that passes `max` bytes ends the stream with
/// [`Framing::TooLarge`]: nothing else bounds what an agent's stream can make the client hold.
fn whole_events<B, E>(
    pieces: impl Stream<Item = std::result::Result<B, E>> + Send + 'static,
    max: usize,
) -> impl Stream<Item = std::result::Result<Vec<u8>, Framing<E>>> + Send
where
    B: AsRef<[u8]> + Send + 'static,
    E: Send + 'static,
{
    let state = (pieces.fuse().boxed(), EventEnds::default(), Vec::new(), false);
    futures_util::stream::unfold(state, move |(mut pieces, mut ends, mut pending, done)| async move {
        if done {
            return None;
        }
        loop {
            match pieces.next().await {
                Some(Ok(piece)) => {
                    let piece = piece.as_ref();
                    let end = ends.last_in(piece).map(|at| pending.len() + at);
                    pending.extend_from_slice(piece);
                    if let Some(end) = end {
                        let rest = pending.split_off(end);
                        return Some((Ok(std::mem::replace(&mut pending, rest)), (pieces, ends, pending, false)));
                    }
                    if pending.len() > max {
                        return Some((Err(Framing::TooLarge(max)), (pieces, ends, Vec::new(), true)));
                    }
                }
                Some(Err(error)) => return Some((Err(Framing::Transport(error)), (pieces, ends, pending, false))),
                // What is left is an event cut short, which the parser drops.
                None if pending.is_empty() => return None,
                None => return Some((Ok(std::mem::take(&mut pending)), (pieces, ends, Vec::new(), true))),
            }
        }
    })
}

/// Finds where events end in a body read piece by piece: after an empty line, where a line ends
/// with CR LF, LF or CR.
#[derive(Default)]
struct EventEnds {
    /// The last byte read ended a line (or none was read yet).
    line_start: bool,
    /// The last byte read was a CR, whose LF, if one follows, belongs to the same line end.
    after_cr: bool,
}

impl EventEnds {
    /// Reads `piece`; returns the offset just after the last event end in it.
    fn last_in(&mut self, piece: &[u8]) -> Option<usize> {
        let mut last = None;
        for (at, byte) in piece.iter().enumerate() {
            match byte {
                b'\n' if self.after_cr => {
                    // The LF of a CR LF that ended an event belongs to it.
                    if last == Some(at) {
                        last = Some(at + 1);
                    }
                    self.after_cr = false;
                }
                b'\n' | b'\r' => {
                    if self.line_start {
                        last = Some(at + 1);
                    }
                    self.line_start = true;
                    self.after_cr = *byte == b'\r';
                }
                _ => (self.line_start, self.after_cr) = (false, false),
            }
        }
        last
    }
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

    /// An event, then a keep-alive, then two events, each ended by another kind of line end.
    const MIXED: &[u8] =
        b"id: 1\r\ndata: {\"statusUpdate\":{\"taskId\":\"a\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}\r\n\r\n\
: ping\n\n\
id: 2\rdata: {\"statusUpdate\":{\"taskId\":\"b\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}\r\r\
id: 3\ndata: {\"statusUpdate\":{\"taskId\":\"c\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}\n\n";

    fn ids_and_tasks(events: Vec<Result<(Option<u64>, StreamResponse)>>) -> Vec<(Option<u64>, String)> {
        events.into_iter().map(|event| event.map(|(id, e)| (id, e.task_id().to_owned())).unwrap()).collect()
    }

    #[test]
    fn events_ended_by_any_line_end_are_read_whole_however_the_body_is_cut() {
        let whole = ids_and_tasks(read(vec![MIXED]));
        let expected = [(Some(1), "a".to_owned()), (Some(2), "b".to_owned()), (Some(3), "c".to_owned())];
        assert_eq!(whole, expected);
        let bytes: Vec<&'static [u8]> = MIXED.chunks(1).collect();
        assert_eq!(ids_and_tasks(read(bytes)), expected, "one byte at a time");
        for cut in 1..MIXED.len() {
            let (head, tail) = MIXED.split_at(cut);
            assert_eq!(ids_and_tasks(read(vec![head, tail])), expected, "cut at {cut}");
        }
    }

    #[test]
    fn an_event_larger_than_the_limit_ends_the_stream() {
        let endpoint = Endpoint {
            binding: Binding::HttpJson,
            version: Version::V1,
            url: String::new(),
            tenant: String::new(),
            headers: HeaderMap::new(),
            trusted: false,
        };
        let endless = futures_util::stream::iter([EVENT, &b"\n\n"[..], EVENT])
            .chain(futures_util::stream::repeat(&b"xxxxxxxx"[..]).take(1_000))
            .map(Ok::<_, Infallible>);
        let transport = |_: &str, never: Infallible| match never {};
        let events = event_stream(endpoint, "http://agent".into(), endless, transport, 4096);
        let events: Vec<_> = events.collect::<Vec<_>>().now_or_never().expect("every chunk has arrived");
        assert!(
            matches!(events.as_slice(), [Ok((None, first)), Err(Error::Decode { detail, .. })]
            if first.task_id() == "t1" && detail.contains("larger than 4096 bytes")),
            "{events:?}"
        );
    }

    #[test]
    fn sse_events_frames_any_stream_and_bounds_its_events() {
        let body = futures_util::stream::iter([&b"data: {\"a\""[..], b":1}\n\n: ping\n\ndata: [DONE]\n\n"])
            .map(Ok::<_, Infallible>);
        let events: Vec<_> = sse_events(body, 64).collect::<Vec<_>>().now_or_never().unwrap();
        let data: Vec<&str> = events.iter().map(|event| event.as_ref().unwrap().data.as_str()).collect();
        assert_eq!(data, ["{\"a\":1}", "[DONE]"]);
        // One event of 8 MiB in 1 KiB pieces, never ended: read in linear time, then refused.
        let endless = futures_util::stream::iter([&b"data: "[..]])
            .chain(futures_util::stream::repeat(&[b'x'; 1024][..]).take(8 * 1024))
            .map(Ok::<_, Infallible>);
        let events: Vec<_> = sse_events(endless, 1 << 20).collect::<Vec<_>>().now_or_never().unwrap();
        assert!(matches!(events.as_slice(), [Err(SseError::TooLarge(max))] if *max == 1 << 20), "{events:?}");
    }

    #[test]
    fn only_the_first_byte_order_mark_is_left_out() {
        let twice = "\u{feff}\u{feff}data: {}\n\n".as_bytes();
        assert!(read(vec![twice]).is_empty(), "the second mark is part of a field name, not a `data` field");
        let events = read(vec![b"id: 4\n", EVENT, b"\n\n"]);
        assert!(matches!(events.as_slice(), [Ok((Some(4), _))]), "{events:?}");
    }
}
