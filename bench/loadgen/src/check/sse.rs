//! Streamed responses: server-sent events whose last one reports COMPLETED, none an error.

use memchr::memmem::Finder;
use serde_json::Value;

use super::{abbreviate_bytes, parse, payload, reported_state, ResponseCheck, COMPLETED};
use crate::opt::Envelope;

/// The A2A StreamResponse members; each event holds exactly one.
const STREAM_MEMBERS: [&str; 4] = ["task", "message", "statusUpdate", "artifactUpdate"];

/// Checks whole SSE bodies of SendStreamingMessage.
pub(crate) struct StreamCheck {
    envelope: Envelope,
    error: Finder<'static>,
    completed: Finder<'static>,
}

impl StreamCheck {
    pub(crate) fn new(envelope: Envelope) -> Self {
        Self {
            envelope,
            error: Finder::new(b"\"error\"").into_owned(),
            completed: Finder::new(COMPLETED.as_bytes()).into_owned(),
        }
    }
}

impl ResponseCheck for StreamCheck {
    fn quick(&self, body: &[u8]) -> Result<u64, String> {
        let (events, last) = data_lines(body).fold((0, None), |(n, _), line| (n + 1, Some(line)));
        if self.envelope == Envelope::None {
            return Ok(events);
        }
        let last = last.ok_or_else(|| format!("no events in {}", abbreviate_bytes(body)))?;
        if self.error.find(body).is_some() || self.completed.find(last).is_none() {
            return Err(format!("stream did not end COMPLETED: {}", abbreviate_bytes(last)));
        }
        Ok(events)
    }

    fn full(&self, body: &[u8]) -> Result<u64, String> {
        let mut events = 0;
        let mut last_state = None;
        for line in data_lines(body) {
            events += 1;
            if self.envelope == Envelope::None {
                continue;
            }
            let value = parse(line)?;
            let item = stream_item(self.envelope, &value)?;
            last_state = reported_state(item).map(str::to_owned).or(last_state);
        }
        if self.envelope == Envelope::None {
            return Ok(events);
        }
        match last_state.as_deref() {
            Some(COMPLETED) => Ok(events),
            other => Err(format!("stream of {events} events ended in state {other:?}, expected {COMPLETED}")),
        }
    }
}

/// The first event of a stream, once a complete `data:` line has arrived: `None` until then, and
/// an error unless it is a successful stream item.
pub(crate) fn first_event(envelope: Envelope, received: &[u8]) -> Option<Result<(), String>> {
    // Only a line that has its newline is complete.
    let complete = &received[..=memchr::memrchr(b'\n', received)?];
    let line = data_lines(complete).next()?;
    if envelope == Envelope::None {
        return Some(Ok(()));
    }
    Some(parse(line).and_then(|value| stream_item(envelope, &value).map(drop)))
}

fn stream_item(envelope: Envelope, value: &Value) -> Result<&Value, String> {
    let item = payload(envelope, value)?;
    let members = STREAM_MEMBERS.iter().filter(|member| item.get(**member).is_some()).count();
    if members != 1 {
        return Err(format!("not a StreamResponse: {}", abbreviate_bytes(value.to_string().as_bytes())));
    }
    Ok(item)
}

/// The payloads of the `data:` lines, in order (every A2A event is one line of JSON).
fn data_lines(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    body.split(|byte| *byte == b'\n').filter_map(|line| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let data = line.strip_prefix(b"data:")?;
        Some(data.strip_prefix(b" ").unwrap_or(data))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK_STREAM: &[u8] = b"data: {\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{\"task\":{\"id\":\"t\",\"status\":{\"state\":\"TASK_STATE_SUBMITTED\"}}}}\nid: 1\n\n\
data: {\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{\"artifactUpdate\":{\"taskId\":\"t\",\"artifact\":{\"parts\":[]}}}}\nid: 2\n\n\
data: {\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{\"statusUpdate\":{\"taskId\":\"t\",\"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}}}\nid: 3\n\n";

    #[test]
    fn a_completed_stream_passes_and_counts_its_events() {
        let check = StreamCheck::new(Envelope::Jsonrpc);
        assert_eq!(check.quick(OK_STREAM), Ok(3));
        assert_eq!(check.full(OK_STREAM), Ok(3));
    }

    #[test]
    fn a_stream_cut_before_completion_fails() {
        let cut = &OK_STREAM[..OK_STREAM.len() / 2];
        let check = StreamCheck::new(Envelope::Jsonrpc);
        assert!(check.quick(cut).is_err());
        assert!(check.full(cut).is_err());
    }

    #[test]
    fn an_error_event_fails() {
        let body = b"data: {\"id\":1,\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32603,\"message\":\"TASK_STATE_COMPLETED\"}}\n\n";
        let check = StreamCheck::new(Envelope::Jsonrpc);
        assert!(check.quick(body).is_err());
        assert!(check.full(body).is_err());
    }

    #[test]
    fn the_first_event_needs_its_newline() {
        let first_line_end = memchr::memchr(b'\n', OK_STREAM).unwrap();
        assert_eq!(first_event(Envelope::Jsonrpc, &OK_STREAM[..first_line_end]), None);
        assert_eq!(first_event(Envelope::Jsonrpc, &OK_STREAM[..=first_line_end]), Some(Ok(())));
        assert_eq!(first_event(Envelope::Jsonrpc, b": keep-alive\n"), None);
    }
}
