//! The client's reading of an event stream: SSE framing (eventsource-stream) and each event's
//! data in the interface's form, over a body that arrives in arbitrary pieces.

use std::pin::pin;

use agentwire_client::{read_event_stream, Binding, Version};
use agentwire_types::StreamResponse;
use futures_util::{FutureExt, StreamExt};

use crate::split_selector;

const INTERFACES: [(Binding, Version); 4] = [
    (Binding::JsonRpc, Version::V1),
    (Binding::JsonRpc, Version::V03),
    (Binding::HttpJson, Version::V1),
    (Binding::HttpJson, Version::V03),
];

/// `data`'s first byte selects the interface (JSON-RPC or HTTP+JSON, v1.0 or v0.3), the second
/// seeds where the body is cut, the rest is the body of the event stream. The events read from
/// the body in pieces must be the events read from it whole.
pub fn sse(data: &[u8]) {
    let Some((selector, rest)) = split_selector(data, INTERFACES.len()) else { return };
    let Some((seed, body)) = rest.split_first() else { return };
    let (binding, version) = INTERFACES[selector];
    let whole = events(binding, version, vec![body.to_vec()]);
    let pieces = events(binding, version, cut(body, *seed));
    assert_eq!(pieces, whole, "cutting the body into pieces changed its events");
}

/// What the client reads from a body arriving in `chunks`: each event, or the error in its place.
fn events(
    binding: Binding,
    version: Version,
    chunks: Vec<Vec<u8>>,
) -> Vec<Result<(Option<u64>, StreamResponse), String>> {
    // An event needs at least one byte of the body, and so does a framing error.
    let most = chunks.iter().map(Vec::len).sum::<usize>() + 1;
    let mut stream = pin!(read_event_stream(binding, version, futures_util::stream::iter(chunks)));
    let mut read = Vec::new();
    loop {
        match stream.next().now_or_never() {
            Some(Some(item)) => read.push(item.map_err(|error| error.to_string())),
            Some(None) => return read,
            None => panic!("a body whose pieces have all arrived is waiting for more"),
        }
        assert!(read.len() <= most, "more events than bytes: the stream does not end");
    }
}

/// `body` in pieces of 1 to 4,096 bytes, their lengths drawn from `seed`: many cuts fall inside a
/// line, a character or a line ending, yet a long event is not cut into thousands of pieces, each
/// of which the framing scans the event again for.
fn cut(body: &[u8], seed: u8) -> Vec<Vec<u8>> {
    let mut state = u32::from(seed);
    let mut pieces = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let length = (1_usize << ((state >> 16) % 13)).min(rest.len());
        let (piece, after) = rest.split_at(length);
        pieces.push(piece.to_vec());
        rest = after;
    }
    pieces
}
