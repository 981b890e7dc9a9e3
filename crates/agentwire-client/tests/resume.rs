//! A stream whose connection is cut mid-way resumes where it stopped: no event lost, none repeated.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentwire_client::{Binding, Client, EventStream};
use agentwire_server::agent::{AgentExecutor, EventStream as AgentEvents, ExecutionContext};
use agentwire_server::{router_with, serve, HttpOptions, RequestHandler, ServeOptions};
use agentwire_test::TIMEOUT;
use agentwire_types::{
    Artifact, Message, Part, SendMessageConfiguration, SendMessageRequest, SendMessageResponse, StreamResponse,
    SubscribeToTaskRequest, TaskState,
};
use futures_util::StreamExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{AbortHandle, JoinHandle};

const CHUNKS: usize = 10;

/// Sends numbered artifact chunks at a steady pace, then completes the task.
struct Ticker;

impl AgentExecutor for Ticker {
    fn execute(&self, ctx: ExecutionContext) -> AgentEvents {
        ctx.run(|_, updater| async move {
            updater.working().await?;
            for i in 0..CHUNKS {
                tokio::time::sleep(Duration::from_millis(60)).await;
                let chunk = Artifact::new("ticks", "ticks", vec![Part::text(i.to_string())]);
                updater.artifact_chunk(chunk, i > 0, i + 1 == CHUNKS).await?;
            }
            updater.complete().await?;
            Ok(())
        })
    }
}

/// A TCP proxy in front of the server whose open connections a test can cut.
struct Proxy {
    base: String,
    connections: Arc<Mutex<Vec<AbortHandle>>>,
    _accept: JoinHandle<()>,
    _server: JoinHandle<std::io::Result<()>>,
}

impl Proxy {
    /// The Ticker agent behind a proxy; the card names the proxy, so every call goes through it.
    async fn start() -> Self {
        let front = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let back = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", front.local_addr().unwrap());
        let server_addr = back.local_addr().unwrap();
        let handler = RequestHandler::builder(Ticker).card_url(&base).build();
        let options = ServeOptions { drain: Duration::ZERO, ..ServeOptions::default() };
        let server =
            tokio::spawn(serve(back, router_with(handler, HttpOptions::default()), std::future::pending(), options));
        let connections = Arc::new(Mutex::new(Vec::new()));
        let open = connections.clone();
        let accept = tokio::spawn(async move {
            while let Ok((mut client, _)) = front.accept().await {
                let task = tokio::spawn(async move {
                    let mut upstream = TcpStream::connect(server_addr).await.unwrap();
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
                });
                open.lock().unwrap().push(task.abort_handle());
            }
        });
        Proxy { base, connections, _accept: accept, _server: server }
    }

    /// Drops every connection open now, as a broken network would.
    fn cut(&self) {
        for connection in self.connections.lock().unwrap().drain(..) {
            connection.abort();
        }
    }
}

async fn client(proxy: &Proxy, binding: Binding) -> Client {
    Client::builder(&proxy.base).only(binding).timeout(TIMEOUT).connect().await.expect("connects")
}

/// Reads `events` to the end, cutting the connection once after the third chunk; returns the chunk
/// texts in order and the last state.
async fn read_with_a_cut(proxy: &Proxy, mut events: EventStream) -> (Vec<String>, Option<TaskState>) {
    let (mut chunks, mut last_state) = (Vec::new(), None);
    while let Some(event) = tokio::time::timeout(TIMEOUT, events.next()).await.expect("an event in time") {
        match event.expect("no error reaches the reader") {
            StreamResponse::ArtifactUpdate(update) => {
                chunks.extend(update.artifact.parts.iter().filter_map(|p| p.as_text().map(str::to_owned)));
                if chunks.len() == 3 {
                    proxy.cut();
                }
            }
            other => last_state = other.task_state().or(last_state),
        }
    }
    (chunks, last_state)
}

fn every_chunk_once() -> Vec<String> {
    (0..CHUNKS).map(|i| i.to_string()).collect()
}

#[tokio::test]
async fn a_cut_subscription_resumes_without_loss_or_repetition() {
    let proxy = Proxy::start().await;
    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let client = client(&proxy, binding).await;
        let configuration = SendMessageConfiguration { return_immediately: true, ..Default::default() };
        let request = SendMessageRequest {
            configuration: Some(configuration),
            ..SendMessageRequest::new(Message::user(format!("m-{binding:?}"), "tick"))
        };
        let SendMessageResponse::Task(task) = client.send_message(request).await.unwrap() else { panic!("a task") };
        let events = client.subscribe(SubscribeToTaskRequest { id: task.id, ..Default::default() }).await.unwrap();
        let (chunks, last_state) = read_with_a_cut(&proxy, events).await;
        assert_eq!(chunks, every_chunk_once(), "{binding:?}");
        assert_eq!(last_state, Some(TaskState::Completed), "{binding:?}");
    }
}

#[tokio::test]
async fn a_cut_streaming_send_resumes_by_subscribing() {
    let proxy = Proxy::start().await;
    for binding in [Binding::JsonRpc, Binding::HttpJson] {
        let client = client(&proxy, binding).await;
        let request = SendMessageRequest::new(Message::user(format!("s-{binding:?}"), "tick"));
        let events = client.send_streaming_message(request).await.unwrap();
        let (chunks, last_state) = read_with_a_cut(&proxy, events).await;
        assert_eq!(chunks, every_chunk_once(), "{binding:?}");
        assert_eq!(last_state, Some(TaskState::Completed), "{binding:?}");
    }
}
