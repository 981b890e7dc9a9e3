//! An A2A agent inside an existing axum application, next to routes of its own.
//!
//! `router(handler)` is an ordinary axum `Router`; here it is nested under `/a2a`. Nesting moves
//! every A2A route: JSON-RPC is at `POST /a2a` exactly (not `/`, and not `/a2a/`), HTTP+JSON at
//! `/a2a/message:send`, `/a2a/tasks/{id}`, ..., and the card at `/a2a/.well-known/agent-card.json`
//! (nothing answers at the origin's `/.well-known/agent-card.json`, so give clients the `/a2a`
//! URL). The card's public URL must include `/a2a` too, or clients would send their calls to the
//! application's root.
//!
//! The A2A layers (request tracing, CORS, body limit, version negotiation) wrap only the A2A
//! routes: `/health` and `/api/stats` keep whatever the application gives them, and
//! layers the application adds after `nest` wrap both.
//!
//! ```sh
//! cargo run -p agentwire-examples --example merge_into_axum
//!
//! # The application's own route
//! curl -s localhost:8085/health
//!
//! # The agent, under /a2a: its card, JSON-RPC at POST /a2a, HTTP+JSON below /a2a/
//! curl -s localhost:8085/a2a/.well-known/agent-card.json
//! curl -s localhost:8085/a2a -H 'content-type: application/json' -H 'A2A-Version: 1.0' -d \
//!   '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}'
//! curl -s localhost:8085/a2a/message:send -H 'content-type: application/json' -H 'A2A-Version: 1.0' -d \
//!   '{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"hello again"}]}}'
//!
//! # The application sees what the agent did
//! curl -s localhost:8085/api/stats
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::{router, serve, CardConfig, RequestHandler, ServeOptions};
use agentwire_types::{AgentCard, AgentSkill};
use axum::extract::State;
use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

const ADDR: &str = "127.0.0.1:8085";

/// Shared by the agent and the application: how many messages the agent has received.
type Received = Arc<AtomicU64>;

struct Shout(Received);

impl AgentExecutor for Shout {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        self.0.fetch_add(1, Ordering::Relaxed);
        let text = ctx.message.text().to_uppercase();
        ctx.run(|_ctx, updater| async move { updater.complete_with(text).await })
    }
}

async fn stats(State(received): State<Received>) -> String {
    format!("messages received: {}\n", received.load(Ordering::Relaxed))
}

fn card() -> AgentCard {
    AgentCard {
        name: "Shouter".into(),
        description: "Replies with your message in capitals".into(),
        skills: vec![AgentSkill {
            id: "shout".into(),
            name: "Shout".into(),
            description: "Upper-cases the message text".into(),
            tags: vec!["text".into()],
            examples: vec!["hello".into()],
            ..AgentSkill::default()
        }],
        ..AgentCard::default()
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).init();

    let received = Received::default();
    // The public URL includes the prefix the agent is nested under.
    let card = CardConfig { card: card(), public_url: format!("http://{ADDR}/a2a"), ..CardConfig::default() };
    let handler = RequestHandler::builder(Shout(received.clone())).card(card).build();

    let app = Router::new()
        .route("/health", get(|| async { "ok\n" }))
        .route("/api/stats", get(stats))
        .with_state(received)
        .nest("/a2a", router(handler));

    let listener = TcpListener::bind(ADDR).await?;
    tracing::info!("application listening on http://{ADDR}, agent at http://{ADDR}/a2a");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    serve(listener, app, shutdown, ServeOptions::default()).await
}
