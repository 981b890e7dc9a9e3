//! A conversation over several turns: the agent asks for what it needs (INPUT_REQUIRED) until it
//! has it, then completes.
//!
//! The agent keeps no state of its own. Each follow-up names the task (`taskId`) and starts a new
//! execution whose `ctx.task` holds the conversation so far, so the answers are read back from the
//! task's history.
//!
//! ```sh
//! cargo run -p agentwire-examples --example multi_turn
//!
//! # Turn 1: the task pauses in TASK_STATE_INPUT_REQUIRED, asking for a name
//! curl -s localhost:8082/ -H 'content-type: application/json' -H 'A2A-Version: 1.0' -d \
//!   '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}'
//!
//! # Turns 2 and 3: answer on the same task (TASK = the task's "id" from the first answer)
//! curl -s localhost:8082/ -H 'content-type: application/json' -H 'A2A-Version: 1.0' -d \
//!   '{"jsonrpc":"2.0","id":2,"method":"SendMessage","params":{"message":{"messageId":"m2","taskId":"'$TASK'","role":"ROLE_USER","parts":[{"text":"Ada"}]}}}'
//! curl -s localhost:8082/ -H 'content-type: application/json' -H 'A2A-Version: 1.0' -d \
//!   '{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"message":{"messageId":"m3","taskId":"'$TASK'","role":"ROLE_USER","parts":[{"text":"green"}]}}}'
//! ```

use agentwire_server::agent::{AgentExecutor, EventStream, ExecutionContext};
use agentwire_server::{router, CardConfig, RequestHandler, Server};
use agentwire_types::{AgentCard, AgentSkill, Role};
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

const ADDR: &str = "127.0.0.1:8082";

struct Greeter;

impl AgentExecutor for Greeter {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        // The history holds every user message of the task, this one included: the opening
        // message, then one answer per question asked.
        let answers: Vec<String> = ctx
            .task
            .iter()
            .flat_map(|task| &task.history)
            .filter(|m| m.role == Role::User)
            .skip(1)
            .map(|m| m.text().trim().to_owned())
            .collect();
        ctx.run(move |_ctx, updater| async move {
            match answers.as_slice() {
                [] => updater.input_required("Hello! What is your name?").await,
                [name] => {
                    updater.input_required(format!("Nice to meet you, {name}. What is your favourite colour?")).await
                }
                [name, colour, ..] => {
                    updater.complete_with(format!("Thank you, {name}. I will remember that you like {colour}.")).await
                }
            }
        })
    }
}

fn card() -> AgentCard {
    AgentCard {
        name: "Greeter".into(),
        description: "Asks for your name and favourite colour, one question at a time".into(),
        skills: vec![AgentSkill {
            id: "greet".into(),
            name: "Get to know you".into(),
            description: "A conversation over several turns on one task".into(),
            tags: vec!["multi-turn".into(), "input-required".into()],
            examples: vec!["hi".into()],
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
    let handler = RequestHandler::builder(Greeter).card(card).build();
    let listener = TcpListener::bind(ADDR).await?;
    tracing::info!("Greeter listening on http://{ADDR}");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    Server::builder(listener).handler(handler.clone()).serve(router(handler), shutdown).await
}
