//! Clients that stop sending lose their connection after a while, on HTTP/1.1 and HTTP/2, and
//! other clients are served meanwhile.

use std::time::Duration;

use tokio::time::Instant;

use agentwire_server::{HttpOptions, ServeOptions};
use agentwire_test::{conformance, user_message, TestServer, TIMEOUT};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const SHORT: Duration = Duration::from_millis(300);

async fn server_with_short_timeouts() -> TestServer {
    let http = HttpOptions { body_read_timeout: SHORT, ..HttpOptions::default() };
    let options = ServeOptions { header_read_timeout: SHORT, write_timeout: SHORT, ..ServeOptions::default() };
    TestServer::start_with(conformance(), http, options).await
}

async fn connect(server: &TestServer) -> TcpStream {
    TcpStream::connect(server.base.trim_start_matches("http://")).await.unwrap()
}

/// Everything the server sends until it closes the connection, and how long that took.
async fn read_until_closed(stream: &mut TcpStream) -> (Vec<u8>, Duration) {
    let started = Instant::now();
    let mut received = Vec::new();
    let read = tokio::time::timeout(TIMEOUT, stream.read_to_end(&mut received)).await;
    assert!(read.is_ok(), "the server kept the connection open; it sent {:?}", String::from_utf8_lossy(&received));
    (received, started.elapsed())
}

#[tokio::test]
async fn connections_that_stall_before_their_headers_end_are_closed() {
    let server = server_with_short_timeouts().await;
    let first_bytes: [&[u8]; 6] =
        [b"", b"P", b"PR", b"PRI", b"POST / HTTP/1.1\r\n", b"GET /agentCard HTTP/1.1\r\nHost: x\r\n"];
    let mut stalled = Vec::new();
    for bytes in first_bytes {
        let mut stream = connect(&server).await;
        stream.write_all(bytes).await.unwrap();
        stalled.push((bytes, stream));
    }
    // While they stall, everyone else is served.
    let (status, _) = server.rest(reqwest::Method::GET, "/tasks", None).await;
    assert_eq!(status, 200);
    for (bytes, mut stream) in stalled {
        let (_, waited) = read_until_closed(&mut stream).await;
        assert!(waited < TIMEOUT, "{:?}", String::from_utf8_lossy(bytes));
    }
}

#[tokio::test]
async fn a_body_that_stops_arriving_is_answered_with_an_error_and_the_connection_closed() {
    let server = server_with_short_timeouts().await;
    let declared = "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n\
                    Content-Length: 100\r\n\r\n{\"jsonrpc\":";
    let chunked = "POST /message:send HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n\
                   Transfer-Encoding: chunked\r\n\r\n5\r\n{\"mes\r\n";
    for request in [declared, chunked] {
        let mut stream = connect(&server).await;
        stream.write_all(request.as_bytes()).await.unwrap();
        let (received, _) = read_until_closed(&mut stream).await;
        let text = String::from_utf8_lossy(&received);
        assert!(text.contains("did not arrive within"), "{text}");
    }
}

/// The HTTP/2 connection preface and an empty SETTINGS frame.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

#[tokio::test]
async fn an_http2_connection_with_no_request_in_flight_is_closed() {
    let server = server_with_short_timeouts().await;
    let mut stream = connect(&server).await;
    stream.write_all(H2_PREFACE).await.unwrap();
    let (received, _) = read_until_closed(&mut stream).await;
    let frame_types = frame_types(&received);
    assert_eq!(frame_types.first(), Some(&SETTINGS), "{frame_types:?}");
    assert!(frame_types.contains(&GOAWAY), "the server says why it closes: {frame_types:?}");
}

const SETTINGS: u8 = 4;
const GOAWAY: u8 = 7;

/// The types of the HTTP/2 frames in `bytes` (a 9-byte header: 24-bit length, then the type).
fn frame_types(mut bytes: &[u8]) -> Vec<u8> {
    let mut types = Vec::new();
    while bytes.len() >= 9 {
        let length = usize::from(bytes[0]) << 16 | usize::from(bytes[1]) << 8 | usize::from(bytes[2]);
        types.push(bytes[3]);
        bytes = &bytes[(9 + length).min(bytes.len())..];
    }
    types
}

#[tokio::test]
async fn an_http2_stream_outlives_the_idle_timeout() {
    let server = server_with_short_timeouts().await;
    let h2c = reqwest::Client::builder().http2_prior_knowledge().timeout(TIMEOUT).build().unwrap();
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
        "params": {"message": user_message("m1", "tck-cancel")}});
    let response = h2c.post(format!("{}/", server.base)).header("A2A-Version", "1.0").json(&request).send().await;
    let mut events = agentwire_test::SseReader::new(response.unwrap());
    let first = events.next_event().await.expect("the task");
    let task_id = first.data["result"]["task"]["id"].as_str().unwrap().to_owned();
    // A connection opened now, with no request, is closed once the idle timeout has passed: the
    // stream's connection has had no new request for longer still.
    let mut idle = connect(&server).await;
    idle.write_all(H2_PREFACE).await.unwrap();
    read_until_closed(&mut idle).await;

    // The same connection still carries the stream and new requests.
    let cancel = json!({"jsonrpc": "2.0", "id": 2, "method": "CancelTask", "params": {"id": task_id}});
    let canceled = h2c.post(format!("{}/", server.base)).header("A2A-Version", "1.0").json(&cancel).send().await;
    assert_eq!(canceled.unwrap().status(), 200);
    let mut last = None;
    while let Some(event) = events.next_event().await {
        last = Some(event.data);
    }
    assert_eq!(last.unwrap()["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_CANCELED");
}

#[tokio::test]
async fn a_grpc_call_whose_message_never_arrives_is_answered_with_a_status() {
    let server = server_with_short_timeouts().await;
    let h2c = reqwest::Client::builder().http2_prior_knowledge().timeout(TIMEOUT).build().unwrap();
    // The headers go out; the body never does.
    let silent = futures_util::stream::pending::<Result<bytes::Bytes, std::io::Error>>();
    let started = Instant::now();
    let response = h2c
        .post(format!("{}/lf.a2a.v1.A2AService/GetTask", server.base))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(reqwest::Body::wrap_stream(silent))
        .send()
        .await
        .expect("the server answers before the client gives up");
    assert!(started.elapsed() < TIMEOUT);
    assert_eq!(response.status(), 200);
    let status = response.headers().get("grpc-status").map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(status.as_deref(), Some("4"), "DEADLINE_EXCEEDED: {:?}", response.headers());
    let message = response.headers()["grpc-message"].to_str().unwrap();
    assert!(message.contains("did%20not%20arrive%20within"), "{message}");
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_client_that_stops_reading_loses_its_connection() {
    let server = server_with_short_timeouts().await;
    // A task of 3 MB, asked for ten times in one go: far more than the sockets buffer.
    let text = "x".repeat(3 * 1024 * 1024);
    let task = server.rpc_ok("SendMessage", json!({"message": user_message("m1", &text)})).await;
    let id = task["task"]["id"].as_str().unwrap().to_owned();
    let get = format!("GET /tasks/{id} HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\n\r\n");
    let mut stream = connect(&server).await;
    stream.write_all(get.repeat(10).as_bytes()).await.unwrap();
    // The client reads nothing until the server has given up on it, then everything it sent.
    let deadline = Instant::now() + TIMEOUT;
    while still_open(&stream) {
        assert!(Instant::now() < deadline, "the server waited for the client for {TIMEOUT:?}");
        tokio::time::sleep(SHORT / 10).await;
    }
    let (received, _) = read_until_closed(&mut stream).await;
    let answers = String::from_utf8_lossy(&received).matches("HTTP/1.1 200").count();
    assert!(answers < 10, "the server waited for the client and sent all {answers} answers");
}

/// Whether the server still keeps its end of `stream` open, as the kernel's table of loopback
/// TCP sockets says (`/proc/net/tcp`: state 01 is ESTABLISHED), without reading from it. A
/// closed end stays in the table (FIN_WAIT1) while what it sent waits for the client.
#[cfg(target_os = "linux")]
fn still_open(stream: &TcpStream) -> bool {
    let (client, server) = (stream.local_addr().unwrap().port(), stream.peer_addr().unwrap().port());
    let (local, peer) = (format!(":{server:04X}"), format!(":{client:04X}"));
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    table.lines().skip(1).any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        fields.len() > 3 && fields[1].ends_with(&local) && fields[2].ends_with(&peer) && fields[3] == "01"
    })
}

/// One HPACK header field, a literal without indexing and with a literal name.
fn hpack_literal(name: &str, value: &str) -> Vec<u8> {
    let mut field = vec![0, name.len() as u8];
    field.extend_from_slice(name.as_bytes());
    field.push(value.len() as u8);
    field.extend_from_slice(value.as_bytes());
    field
}

fn h2_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let length = payload.len() as u32;
    let mut frame = length.to_be_bytes()[1..].to_vec();
    frame.extend_from_slice(&[kind, flags]);
    frame.extend_from_slice(&stream.to_be_bytes());
    frame.extend_from_slice(payload);
    frame
}

const HEADERS: u8 = 1;
const PING: u8 = 6;

/// The opening of an HTTP/2 connection that gives the server no window
/// (SETTINGS_INITIAL_WINDOW_SIZE = 0: it may send headers, and no data), and asks for task `id`
/// on each of `streams` streams.
fn zero_window_requests(id: &str, streams: u32) -> Vec<u8> {
    let mut opening = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    opening.extend(h2_frame(SETTINGS, 0, 0, &[0, 4, 0, 0, 0, 0]));
    let fields = [(":method", "GET"), (":scheme", "http"), (":path", &format!("/tasks/{id}")), (":authority", "x")];
    let block: Vec<u8> = fields.iter().flat_map(|(name, value)| hpack_literal(name, value)).collect();
    for stream in 0..streams {
        opening.extend(h2_frame(HEADERS, 0x5, 2 * stream + 1, &block));
    }
    opening
}

/// A task of about `bytes`, by its id.
async fn large_task(server: &TestServer, bytes: usize) -> String {
    let task = server.rpc_ok("SendMessage", json!({"message": user_message("m1", &"x".repeat(bytes))})).await;
    task["task"]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_http2_client_that_gives_no_window_loses_its_connection() {
    let server = server_with_short_timeouts().await;
    let id = large_task(&server, 1024 * 1024).await;
    let mut stream = connect(&server).await;
    stream.write_all(&zero_window_requests(&id, 1)).await.unwrap();
    let (received, _) = read_until_closed(&mut stream).await;
    assert!(frame_types(&received).contains(&HEADERS), "the response started: {:?}", frame_types(&received));
}

/// The probe's zero window with a PING every few seconds: the server answers the PINGs, so the
/// connection writes, but the stream it gives no window is stalled all the same.
#[tokio::test]
async fn an_http2_client_that_pings_but_gives_no_window_loses_its_connection() {
    let server = server_with_short_timeouts().await;
    let id = large_task(&server, 1024 * 1024).await;
    let (mut reader, mut writer) = connect(&server).await.into_split();
    writer.write_all(&zero_window_requests(&id, 1)).await.unwrap();
    // A PING every third of the write timeout, for as long as the connection takes them.
    let pings = tokio::spawn(async move {
        while writer.write_all(&h2_frame(PING, 0, 0, &[0; 8])).await.is_ok() {
            tokio::time::sleep(SHORT / 3).await;
        }
    });
    let mut received = Vec::new();
    let read = tokio::time::timeout(TIMEOUT, reader.read_to_end(&mut received)).await;
    pings.abort();
    assert!(read.is_ok(), "the connection was kept while the client pinged: {:?}", frame_types(&received));
    assert!(frame_types(&received).contains(&PING), "the server answered PINGs: {:?}", frame_types(&received));
}

/// The probe's 40 answers held on one connection: past the cap of response bytes a connection
/// may hold, it is closed at once, long before the write timeout.
#[tokio::test]
async fn an_http2_connection_holding_too_many_response_bytes_is_closed() {
    let options = ServeOptions {
        write_timeout: TIMEOUT * 10,
        max_connection_response_bytes: 2 * 1024 * 1024,
        ..ServeOptions::default()
    };
    let server = TestServer::start_with(conformance(), HttpOptions::default(), options).await;
    let id = large_task(&server, 1024 * 1024).await;
    let mut stream = connect(&server).await;
    stream.write_all(&zero_window_requests(&id, 8)).await.unwrap();
    let (received, waited) = read_until_closed(&mut stream).await;
    assert!(waited < TIMEOUT, "closed after {waited:?}: {:?}", frame_types(&received));
}
