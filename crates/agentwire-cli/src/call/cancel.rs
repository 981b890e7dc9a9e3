//! `agentwire cancel URL ID`.

use agentwire_types::{CancelTaskRequest, TaskState};

use super::{exit, show_task, ClientArgs, Failure, EXIT_CODES};

#[derive(Debug, clap::Args)]
#[command(after_help = format!("Example:\n  agentwire cancel http://127.0.0.1:8080 0190c1d2-…\n\n{EXIT_CODES}"))]
pub(crate) struct CancelOpt {
    /// The agent's base URL.
    pub(crate) url: String,
    /// The task's id.
    pub(crate) id: String,
    #[command(flatten)]
    pub(crate) client: ClientArgs,
}

pub(crate) async fn run(opt: CancelOpt) -> Result<u8, Failure> {
    let client = opt.client.connect(&opt.url).await?;
    let task = client.cancel_task(CancelTaskRequest { id: opt.id, ..Default::default() }).await?;
    let status = show_task(&task, &mut opt.client.output());
    // The cancel did what was asked: `cancel && next` goes on.
    Ok(if task.status.state == TaskState::Canceled { exit::OK } else { status })
}
