//! `agentwire list URL`.

use agentwire_types::{ListTasksRequest, TaskState};

use super::{exit, ClientArgs, Failure};

#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  agentwire list http://127.0.0.1:8080\n  \
agentwire list http://127.0.0.1:8080 --state input-required --page-size 20\n  \
agentwire list http://127.0.0.1:8080 --context 0190c1d1-… --json")]
pub(crate) struct ListOpt {
    /// The agent's base URL.
    pub(crate) url: String,
    /// Only the tasks of this conversation.
    #[arg(long, value_name = "ID")]
    pub(crate) context: Option<String>,
    /// Only the tasks in this state (`working`, `input-required`, `completed`, …).
    #[arg(long, value_name = "STATE", value_parser = parse_state)]
    pub(crate) state: Option<TaskState>,
    /// Most tasks on the page.
    #[arg(long, value_name = "N")]
    pub(crate) page_size: Option<i32>,
    /// The page after the one that gave this token.
    #[arg(long, value_name = "TOKEN")]
    pub(crate) page_token: Option<String>,
    #[command(flatten)]
    pub(crate) client: ClientArgs,
}

/// A state by its short name (`input-required`) or its protocol name (`TASK_STATE_INPUT_REQUIRED`).
fn parse_state(name: &str) -> Result<TaskState, String> {
    (1..=8)
        .filter_map(TaskState::from_number)
        .find(|s| s.as_kebab_name() == name || s.as_proto_name() == name)
        .ok_or_else(|| format!("{name:?} is not a task state (submitted, working, completed, input-required, …)"))
}

pub(crate) async fn run(opt: ListOpt) -> Result<u8, Failure> {
    let client = opt.client.connect(&opt.url).await?;
    let request = ListTasksRequest {
        context_id: opt.context.unwrap_or_default(),
        status: opt.state,
        page_size: opt.page_size,
        page_token: opt.page_token.unwrap_or_default(),
        ..Default::default()
    };
    let page = client.list_tasks(request).await?;
    let mut out = opt.client.output();
    if out.json(&page) {
        return Ok(exit::OK);
    }
    // Within 80 columns: the id, the state and when it last changed (`get` and --json give the
    // context and the rest).
    if page.tasks.is_empty() {
        out.line("no tasks");
    } else {
        out.line(&format!("{:<36}  {:<14}  {}", "TASK", "STATE", "UPDATED (UTC)"));
    }
    for task in &page.tasks {
        let updated = task.status.timestamp.map(|t| t.to_string()).unwrap_or_default();
        let updated = updated.get(..19).unwrap_or(&updated).replace('T', " ");
        out.line(&format!("{:<36}  {:<14}  {updated}", task.id, task.status.state.as_kebab_name()));
    }
    if !page.next_page_token.is_empty() {
        out.line(&format!("more: --page-token {}", page.next_page_token));
    }
    Ok(exit::OK)
}
