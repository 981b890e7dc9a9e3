//! The `echo` agent: replies with the text it received.

use super::{AgentExecutor, EventStream, ExecutionContext};

/// Completes every task with an artifact `echo` holding the text of the message it got.
///
/// ```
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::RequestHandler;
///
/// let handler = RequestHandler::builder(EchoAgent).build();
/// # drop(handler);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct EchoAgent;

impl AgentExecutor for EchoAgent {
    fn execute(&self, ctx: ExecutionContext) -> EventStream {
        ctx.run(|ctx, updater| async move {
            updater.add_text_artifact("echo", ctx.message.text()).await?;
            updater.complete().await
        })
    }
}
