//! An agent that calls another agent: it hands each message on to a downstream agent with
//! `agentwire-client`, streams the downstream agent's artifact text into its own task as it
//! arrives, and ends the way the downstream task ended. It delegates through a `Delegation`: the
//! downstream message names this task, and canceling this task (or the server ending it for
//! running too long) cancels the downstream one.
//!
//! ```sh
//! cargo run --bin agentwire -- serve --store memory                  # the downstream agent, on :8080
//! cargo run -p agentwire-examples --example delegate                  # this agent, on :8086
//! cargo run --bin agentwire -- send http://127.0.0.1:8086 "hello" --stream
//! ```
//!
//! With `OTEL_EXPORTER_OTLP_ENDPOINT` set (and `--otlp-endpoint` given to the downstream agent),
//! both agents export their spans to that collector, and a request makes one trace through both:
//! this agent's operation and execution, its call downstream, and the downstream agent's work.

use agentwire_client::{Client, Delegation};
use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::telemetry::OtlpTraces;
use agentwire_server::{App, HttpOptions, RequestHandler, Server};
use agentwire_types::{Artifact, Message, SendMessageRequest, StreamResponse, TaskState};
use futures_util::StreamExt;
use tokio::net::TcpListener;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

const ADDR: &str = "127.0.0.1:8086";
const DOWNSTREAM: &str = "http://127.0.0.1:8080";

struct Delegate {
    downstream: Client,
}

impl AgentExecutor for Delegate {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let downstream = self.downstream.clone();
        ctx.run(|ctx, updater| async move {
            updater.working().await?;
            let delegation = Delegation::new(&ctx.task_id, &ctx.context_id, ctx.cancellation().clone());
            let message = Message::user(format!("{}-downstream", ctx.message.message_id), ctx.message.text());
            let sent = delegation.send_streaming_message(&downstream, SendMessageRequest::new(message)).await;
            let mut events = match sent {
                Ok(events) => events,
                Err(error) => return updater.fail(format!("the downstream agent: {error}")).await,
            };
            let mut chunk = 0;
            let mut ended = TaskState::Completed;
            while let Some(event) = events.next().await {
                match event {
                    Ok(StreamResponse::ArtifactUpdate(update)) => {
                        let artifact = Artifact::new("relayed", "relayed", update.artifact.parts);
                        updater.artifact_chunk(artifact, chunk > 0, false).await?;
                        chunk += 1;
                    }
                    Ok(other) => ended = other.task_state().unwrap_or(ended),
                    Err(error) => return updater.fail(format!("the downstream stream: {error}")).await,
                }
            }
            match ended {
                TaskState::Completed => updater.complete().await,
                other => updater.fail(format!("the downstream task ended {}", other.as_kebab_name())).await,
            }
        })
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let traces = OtlpTraces::from_env()?;
    tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer())
        .with(traces.as_ref().map(OtlpTraces::layer))
        .init();
    let downstream = Client::connect(DOWNSTREAM).await?;
    println!("delegating to {} at {DOWNSTREAM}", downstream.card().name);
    let handler = RequestHandler::builder(Delegate { downstream }).card_url(&format!("http://{ADDR}")).build();
    let listener = TcpListener::bind(ADDR).await?;
    println!("listening on http://{ADDR}");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    // Each operation in a span of its own, the child of the caller's when it sends its context.
    let app = App::new().spans().router(handler.clone(), HttpOptions::default());
    Server::builder(listener).handler(handler).serve(app, shutdown).await?;
    if let Some(traces) = traces {
        traces.shut_down().await;
    }
    Ok(())
}
