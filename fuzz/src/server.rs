//! The server's HTTP surface, as `agentwire_server::router` builds it, over the [`Mirror`]: every
//! layer, route and binding a request meets on the wire, decoding it and writing the answer.

use std::sync::OnceLock;

use axum::body::{Body, Bytes};
use axum::Router;
use http::header::CONTENT_TYPE;
use http::{HeaderName, HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::BodyExt;
use serde::de::IgnoredAny;
use tokio::runtime::Runtime;
use tower::ServiceExt;

use crate::mirror::Mirror;

/// JSON-RPC: `data` is the body of a POST to `/`, sent as `application/json`. The envelope and the
/// params of every method of every generation are decoded as the server decodes them, and the
/// answer is written back in the method's generation.
pub fn jsonrpc(data: &[u8]) {
    let request = Request::post("/").header(CONTENT_TYPE, "application/json").body(Body::from(data.to_vec()));
    if let Ok(request) = request {
        check_response(&call(request));
    }
}

/// HTTP+JSON (and anything else a client can send): `data` is a request written as
///
/// ```text
/// METHOD /path?query
/// name: value
///
/// body
/// ```
///
/// (header lines until an empty line, then the body). The route, its path parameters, its query
/// and its body are decoded as the server decodes them. A request `http` cannot represent (a bad
/// method, target or header) is skipped: no server would receive it.
pub fn rest(data: &[u8]) {
    if let Some(request) = parse_request(data) {
        check_response(&call(request));
    }
}

fn parse_request(data: &[u8]) -> Option<Request<Body>> {
    let mut rest = data;
    let mut next_line = || {
        let end = rest.iter().position(|b| *b == b'\n');
        let line = &rest[..end.unwrap_or(rest.len())];
        rest = end.map_or(&[][..], |end| &rest[end + 1..]);
        line.strip_suffix(b"\r").unwrap_or(line)
    };
    let start = next_line();
    let split = start.iter().position(|b| *b == b' ')?;
    let method = Method::from_bytes(&start[..split]).ok()?;
    let uri = Uri::try_from(&start[split + 1..]).ok()?;
    let mut request = Request::builder().method(method).uri(uri);
    loop {
        let line = next_line();
        if line.is_empty() {
            break;
        }
        let colon = line.iter().position(|b| *b == b':')?;
        let name = HeaderName::from_bytes(&line[..colon]).ok()?;
        let value = HeaderValue::from_bytes(line[colon + 1..].trim_ascii()).ok()?;
        request = request.header(name, value);
    }
    request.body(Body::from(rest.to_vec())).ok()
}

/// A response, with its body read to the end.
struct Answer {
    status: StatusCode,
    content_type: String,
    body: Bytes,
}

fn call(request: Request<Body>) -> Answer {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    static ROUTER: OnceLock<Router> = OnceLock::new();
    // Paused time: the server's timers (read timeouts, keep-alives) are set from a clock that
    // only moves when the runtime waits for one, so their place in tokio's timer wheel, and the
    // coverage of placing them, is the same whenever a run happens.
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().expect("a tokio runtime")
    });
    let router = ROUTER.get_or_init(|| agentwire_server::router(Mirror)).clone();
    runtime.block_on(async move {
        let response = router.oneshot(request).await.unwrap_or_else(|never| match never {});
        let (parts, body) = response.into_parts();
        let body = body.collect().await.expect("a response body is in memory").to_bytes();
        let content_type = parts.headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
        Answer { status: parts.status, content_type: content_type.to_owned(), body }
    })
}

/// What holds for every answer to any request: the server wrote it (a 500 is what a response it
/// failed to encode becomes), and its body is JSON, or an event stream of JSON events. JSON's
/// grammar is what is checked: a number beyond `f64` is JSON, and the server echoes a request's
/// id as the client wrote it.
fn check_response(answer: &Answer) {
    assert_ne!(answer.status, StatusCode::INTERNAL_SERVER_ERROR, "the server could not write its answer");
    if answer.body.is_empty() {
        return;
    }
    let is_json = |text: &[u8]| serde_json::from_slice::<IgnoredAny>(text);
    if answer.content_type.starts_with("text/event-stream") {
        let text = std::str::from_utf8(&answer.body).expect("an event stream is UTF-8");
        for data in text.lines().filter_map(|line| line.strip_prefix("data:")) {
            is_json(data.as_bytes()).unwrap_or_else(|error| panic!("an event is not JSON ({error}): {data}"));
            assert!(!data.contains(r#""error":"could not encode the event""#), "an event could not be written");
        }
    } else {
        is_json(&answer.body).unwrap_or_else(|error| {
            panic!("a {} answer is not JSON ({error}): {}", answer.status, String::from_utf8_lossy(&answer.body))
        });
    }
}
