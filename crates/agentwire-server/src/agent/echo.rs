//! The `echo` agent: replies with the text it received.

use agentwire_types::{AgentCard, AgentSkill};

use super::{AgentExecutor, EventStream, ExecutionContext};

/// Completes every task with an artifact `echo` holding the text of the message it got.
///
/// ```
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::{CardConfig, RequestHandler};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let card = CardConfig { card: EchoAgent::card(), ..CardConfig::default() };
/// let handler = RequestHandler::builder(EchoAgent).card(card).build();
/// assert_eq!(handler.agent_card().name, "Echo");
/// # });
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct EchoAgent;

impl EchoAgent {
    /// The echo agent's card: text and JSON in, text out.
    pub fn card() -> AgentCard {
        AgentCard {
            name: "Echo".into(),
            description: "Replies with the text it receives".into(),
            default_input_modes: vec!["text/plain".into(), "application/json".into()],
            default_output_modes: vec!["text/plain".into()],
            skills: vec![AgentSkill {
                id: "echo".into(),
                name: "Echo".into(),
                description: "Returns the message text as an artifact".into(),
                tags: vec!["echo".into(), "test".into()],
                examples: vec!["hello".into()],
                ..AgentSkill::default()
            }],
            ..AgentCard::default()
        }
    }
}

impl AgentExecutor for EchoAgent {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        ctx.run(|ctx, updater| {
            // Only the text is kept, not the whole context: an agent's future is copied into
            // its box when the execution starts.
            let text = ctx.message.text();
            async move {
                updater.add_text_artifact("echo", text).await?;
                updater.complete().await
            }
        })
    }
}
