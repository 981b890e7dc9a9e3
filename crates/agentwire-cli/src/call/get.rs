//! `agentwire get URL ID`.

use agentwire_types::GetTaskRequest;

use super::{exit_for, ClientArgs, Failure, EXIT_CODES};

#[derive(Debug, clap::Args)]
#[command(after_help = format!("Examples:\n  agentwire get http://127.0.0.1:8080 0190c1d2-…\n  \
agentwire get http://127.0.0.1:8080 0190c1d2-… --history 1 --json\n\n{EXIT_CODES}"))]
pub(crate) struct GetOpt {
    /// The agent's base URL.
    pub(crate) url: String,
    /// The task's id.
    pub(crate) id: String,
    /// Show the task's history: at most this many of its most recent messages.
    #[arg(long, value_name = "N")]
    pub(crate) history: Option<i32>,
    #[command(flatten)]
    pub(crate) client: ClientArgs,
}

pub(crate) async fn run(opt: GetOpt) -> Result<u8, Failure> {
    let client = opt.client.connect(&opt.url).await?;
    let task =
        client.get_task(GetTaskRequest { id: opt.id, history_length: opt.history, ..Default::default() }).await?;
    let mut out = opt.client.output();
    match opt.history {
        Some(_) => out.task_with_history(&task),
        None => out.task(&task),
    }
    Ok(exit_for(task.status.state))
}
