//! The benchmark's echo agent built on the official A2A Rust SDK (`a2a-server-lf`).
//!
//! It serves the SDK's own routers with `axum::serve`, as its hello-world example does, with the
//! SDK's `DefaultRequestHandler` and `InMemoryTaskStore`. Unlike the example, which nests them
//! under `/jsonrpc` and `/rest`, both bindings sit at the root (JSON-RPC at `POST /`, HTTP+JSON
//! at `POST /message:send` ...) so every server in the bench answers the same paths.
//!
//! Each message completes a task with one text artifact `echo` holding the message's text, the
//! same result agentwire's echo agent gives.
//!
//! With `--grpc` it serves the SDK's gRPC binding (`a2a-grpc`'s `GrpcHandler` in a tonic server)
//! on the address instead, with the same handler and agent.
//!
//! Usage: `official-rust-echo [--addr 127.0.0.1:PORT] [--nodelay] [--grpc]`

use std::sync::Arc;

use a2a::{
    new_artifact_id, A2AError, AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Artifact, Message, Part,
    PartContent, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
    TRANSPORT_PROTOCOL_HTTP_JSON, TRANSPORT_PROTOCOL_JSONRPC,
};
use a2a_server::{AgentExecutor, DefaultRequestHandler, ExecutorContext, InMemoryTaskStore, StaticAgentCard};
use axum::serve::ListenerExt;
use futures::stream::{self, BoxStream};

struct EchoExecutor;

impl AgentExecutor for EchoExecutor {
    /// Emits what agentwire's echo agent emits: the new task, its artifact, then COMPLETED.
    fn execute(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let (task_id, context_id) = ctx.task_info();
        let text = ctx.message.as_ref().map(text_of).unwrap_or_default();

        let submitted = Task {
            id: task_id.clone(),
            context_id: context_id.clone(),
            status: status(TaskState::Submitted),
            artifacts: None,
            history: ctx.message.map(|message| vec![message]),
            metadata: None,
        };
        let artifact = TaskArtifactUpdateEvent {
            task_id: task_id.clone(),
            context_id: context_id.clone(),
            artifact: Artifact {
                artifact_id: new_artifact_id(),
                name: Some("echo".into()),
                description: None,
                parts: vec![Part::text(text)],
                metadata: None,
                extensions: None,
            },
            append: None,
            last_chunk: None,
            metadata: None,
        };
        let completed =
            TaskStatusUpdateEvent { task_id, context_id, status: status(TaskState::Completed), metadata: None };

        Box::pin(stream::iter([
            Ok(StreamResponse::Task(submitted)),
            Ok(StreamResponse::ArtifactUpdate(artifact)),
            Ok(StreamResponse::StatusUpdate(completed)),
        ]))
    }

    /// Echo tasks finish at once, so there is never anything running to cancel.
    fn cancel(&self, ctx: ExecutorContext) -> BoxStream<'static, Result<StreamResponse, A2AError>> {
        let (task_id, context_id) = ctx.task_info();
        let canceled =
            TaskStatusUpdateEvent { task_id, context_id, status: status(TaskState::Canceled), metadata: None };
        Box::pin(stream::iter([Ok(StreamResponse::StatusUpdate(canceled))]))
    }
}

/// A status without a timestamp: the SDK's handler stamps it when it records the event.
fn status(state: TaskState) -> TaskStatus {
    TaskStatus { state, message: None, timestamp: None }
}

/// The message's text parts, concatenated.
fn text_of(message: &Message) -> String {
    message
        .parts
        .iter()
        .filter_map(|part| match &part.content {
            PartContent::Text(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn agent_card(addr: &str) -> AgentCard {
    AgentCard {
        name: "Echo".into(),
        description: "Replies with the text it receives".into(),
        version: a2a::VERSION.into(),
        supported_interfaces: vec![
            AgentInterface::new(format!("http://{addr}"), TRANSPORT_PROTOCOL_JSONRPC),
            AgentInterface::new(format!("http://{addr}"), TRANSPORT_PROTOCOL_HTTP_JSON),
        ],
        provider: None,
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(false),
            extensions: None,
            extended_agent_card: None,
        },
        skills: vec![AgentSkill {
            id: "echo".into(),
            name: "Echo".into(),
            description: "Returns the message text as an artifact".into(),
            tags: vec!["echo".into()],
            examples: None,
            input_modes: None,
            output_modes: None,
            security_requirements: None,
        }],
        default_input_modes: vec!["text/plain".into()],
        default_output_modes: vec!["text/plain".into()],
        security_schemes: None,
        security_requirements: None,
        documentation_url: None,
        icon_url: None,
        signatures: None,
    }
}

struct Options {
    addr: String,
    nodelay: bool,
    grpc: bool,
}

fn parse_options() -> Options {
    let mut options = Options { addr: "127.0.0.1:3000".into(), nodelay: false, grpc: false };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => options.addr = args.next().expect("--addr needs HOST:PORT"),
            "--nodelay" => options.nodelay = true,
            "--grpc" => options.grpc = true,
            other => panic!("unknown argument {other}; usage: [--addr HOST:PORT] [--nodelay] [--grpc]"),
        }
    }
    options
}

// Default worker count: under the bench's `taskset` that is one worker per pinned core.
#[tokio::main(flavor = "multi_thread")]
async fn main() -> std::io::Result<()> {
    let options = parse_options();

    let handler = Arc::new(DefaultRequestHandler::new(EchoExecutor, InMemoryTaskStore::new()));
    if options.grpc {
        let listener = tokio::net::TcpListener::bind(&options.addr).await?;
        eprintln!("official-rust-echo serving gRPC on {}", listener.local_addr()?);
        let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
        let service = a2a_pb::proto::a2a_service_server::A2aServiceServer::new(a2a_grpc::GrpcHandler::new(handler));
        return tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming(incoming)
            .await
            .map_err(std::io::Error::other);
    }
    let card = Arc::new(StaticAgentCard::new(agent_card(&options.addr)));
    let app = a2a_server::jsonrpc::jsonrpc_router(handler.clone())
        .merge(a2a_server::rest::rest_router(handler))
        .merge(a2a_server::agent_card::agent_card_router(card));

    let listener = tokio::net::TcpListener::bind(&options.addr).await?;
    eprintln!("official-rust-echo listening on http://{}", listener.local_addr()?);
    if options.nodelay {
        // axum::serve leaves Nagle on; small SSE frames then wait for the peer's delayed ACK.
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, app).await
    } else {
        axum::serve(listener, app).await
    }
}
