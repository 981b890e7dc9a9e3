//! Streams a long text back as chunks of one artifact, so a client can show it as it is written.
//!
//! The agent goes WORKING, sends the first sentence as a new artifact, appends each next sentence
//! to it (`append`), marks the last one (`last_chunk`), then completes. A streaming client sees
//! every chunk as it happens; a blocking client (SendMessage) gets the task with the whole artifact.
//!
//! ```sh
//! cargo run -p agentwire-examples --example streaming_artifacts
//!
//! # JSON-RPC SendStreamingMessage: one SSE event per status or chunk (-N: print them as they come)
//! curl -N localhost:8081/ -H 'content-type: application/json' -H 'A2A-Version: 1.0' -d \
//!   '{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"tell me a story"}]}}}'
//!
//! # The same over HTTP+JSON
//! curl -N localhost:8081/message:stream -H 'content-type: application/json' -H 'A2A-Version: 1.0' -d \
//!   '{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"tell me a story"}]}}'
//! ```

use std::time::Duration;

use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::{router, CardConfig, RequestHandler, Server};
use agentwire_types::{AgentCard, AgentSkill, Artifact, Part};
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

const ADDR: &str = "127.0.0.1:8081";

const STORY: &[&str] = &[
    "A lighthouse keeper kept a log of every ship that passed. ",
    "One winter night a ship passed that was on no chart. ",
    "It flew no flag and answered no signal. ",
    "The keeper wrote it down all the same, with the hour and the wind. ",
    "In spring a letter came from a harbour far to the south. ",
    "It thanked him for the light, and was signed by the whole crew.",
];

struct Storyteller;

impl AgentExecutor for Storyteller {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        ctx.run(|_ctx, updater| async move {
            updater.working().await?;
            for (i, sentence) in STORY.iter().enumerate() {
                // Stands in for the time a model takes to write the sentence.
                tokio::time::sleep(Duration::from_millis(300)).await;
                // Every chunk names the same artifact: the first creates it, the others append to it.
                let chunk = Artifact::new("story", "story", vec![Part::text(*sentence)]);
                updater.artifact_chunk(chunk, i > 0, i + 1 == STORY.len()).await?;
            }
            updater.complete().await
        })
    }
}

fn card() -> AgentCard {
    AgentCard {
        name: "Storyteller".into(),
        description: "Tells a short story, one sentence at a time".into(),
        skills: vec![AgentSkill {
            id: "story".into(),
            name: "Tell a story".into(),
            description: "Streams a story as chunks of one text artifact".into(),
            tags: vec!["streaming".into(), "artifacts".into()],
            examples: vec!["tell me a story".into()],
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
    let handler = RequestHandler::builder(Storyteller).card(card).build();
    let listener = TcpListener::bind(ADDR).await?;
    tracing::info!("Storyteller listening on http://{ADDR}");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    Server::builder(listener).handler(handler.clone()).serve(router(handler), shutdown).await
}
