//! A long task that reports progress every second for a minute and stops as soon as it is
//! canceled.
//!
//! Executions outlive the request that started them, so the client can start the task with
//! `returnImmediately`, look at it with GetTask, and cancel it with CancelTask. The agent waits on
//! `ctx.cancellation()` next to its work and ends the task CANCELED itself when it fires.
//!
//! ```sh
//! cargo run -p agentwire-examples --example long_cancellable
//!
//! # Start the task and return at once (TASK = the "id" in the answer)
//! curl -s localhost:8083/ -H 'content-type: application/json' -H 'A2A-Version: 1.0' -d \
//!   '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"count"}]},"configuration":{"returnImmediately":true}}}'
//!
//! # Its progress so far (the status message says which step it is at)
//! curl -s localhost:8083/tasks/$TASK?historyLength=1 -H 'A2A-Version: 1.0'
//!
//! # Cancel it: the answer is the task in TASK_STATE_CANCELED
//! curl -s localhost:8083/ -H 'content-type: application/json' -H 'A2A-Version: 1.0' -d \
//!   '{"jsonrpc":"2.0","id":2,"method":"CancelTask","params":{"id":"'$TASK'"}}'
//! # (or over HTTP+JSON: curl -s -X POST localhost:8083/tasks/$TASK:cancel -H 'A2A-Version: 1.0')
//! ```
//!
//! To watch the progress live instead, send the first message with `SendStreamingMessage` and
//! `curl -N`, and cancel from another terminal.

use std::time::Duration;

use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::{router, CardConfig, RequestHandler, Server};
use agentwire_types::{AgentCard, AgentSkill, TaskState};
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

const ADDR: &str = "127.0.0.1:8083";
const STEPS: u32 = 60;

struct Counter;

impl AgentExecutor for Counter {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        let cancel = ctx.cancellation().clone();
        ctx.run(move |_ctx, updater| async move {
            updater.working().await?;
            let mut ticks = tokio::time::interval(Duration::from_secs(1));
            ticks.tick().await; // the first tick is immediate
            for step in 1..=STEPS {
                // Whichever comes first: the next second of work, or the client's cancel.
                tokio::select! {
                    _ = ticks.tick() => {}
                    () = cancel.cancelled() => return updater.canceled().await,
                }
                let progress = updater.message(format!("step {step} of {STEPS}"));
                updater.status(TaskState::Working, Some(progress)).await?;
            }
            updater.complete_with(format!("Counted to {STEPS}")).await
        })
    }
}

fn card() -> AgentCard {
    AgentCard {
        name: "Counter".into(),
        description: "Counts slowly to sixty, reporting every step; can be canceled".into(),
        skills: vec![AgentSkill {
            id: "count".into(),
            name: "Count to sixty".into(),
            description: "A one-minute task with progress updates that stops when canceled".into(),
            tags: vec!["long-running".into(), "cancel".into()],
            examples: vec!["count".into()],
            ..AgentSkill::default()
        }],
        ..AgentCard::default()
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).init();

    let card = CardConfig { card: card(), public_url: format!("http://{ADDR}"), ..CardConfig::default() };
    let handler = RequestHandler::builder(Counter).card(card).build();
    let listener = TcpListener::bind(ADDR).await?;
    tracing::info!("Counter listening on http://{ADDR}");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    Server::builder(listener).handler(handler.clone()).serve(router(handler), shutdown).await
}
