//! Waiting for the task a blocking `send` started. The message is sent to return at once, and the
//! task is followed until it stops working (ends, or waits for input): its id is known while it
//! works, so that Ctrl-C or `--timeout` can say how to follow or cancel it. An answer that comes
//! at once (the task already stopped, or a message) is shown as a blocking send's answer is.

use std::time::Duration;

use agentwire_client::Client;
use agentwire_types::{GetTaskRequest, SubscribeToTaskRequest, Task};
use futures_util::StreamExt;
use tokio::time::Instant;

use super::{exit, follow_or_cancel, Failure, Output};

/// The first pause between two reads of a task followed by asking, which doubles up to
/// [`LONGEST_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(100);
const LONGEST_PAUSE: Duration = Duration::from_secs(2);

/// `task`, of the agent at `url`, once it has stopped working, as GetTask reads it then. Ctrl-C,
/// or reaching `deadline`, stops the waiting (not the task) with a failure that says how to
/// follow or cancel it.
pub(crate) async fn until_stopped(
    client: &Client,
    task: Task,
    out: &mut Output,
    url: &str,
    deadline: Option<(Instant, Duration)>,
) -> Result<Task, Failure> {
    out.waiting(&task.id, task.status.state);
    let id = task.id;
    let out_of_time = async {
        match deadline {
            Some((at, _)) => tokio::time::sleep_until(at).await,
            None => std::future::pending().await,
        }
    };
    let outcome = tokio::select! {
        stopped = stopped(client, &id, out) => stopped.map_err(Failure::from),
        _ = tokio::signal::ctrl_c() => Err(Failure {
            message: format!("stopped waiting; the task goes on at the agent: {}", follow_or_cancel(url, &id)),
            code: exit::INTERRUPTED,
        }),
        () = out_of_time => {
            let limit = deadline.map(|(_, limit)| limit.as_secs_f32()).unwrap_or_default();
            Err(Failure {
                message: format!(
                    "the task did not end within {limit} s; it goes on at the agent: {}",
                    follow_or_cancel(url, &id)
                ),
                code: exit::CONNECTION_ERROR,
            })
        }
    };
    out.finish_stream();
    outcome
}

/// The task once it has stopped working: followed by subscription where the agent streams
/// (its end says the task stopped, or that it can no longer be followed so), then read, and read
/// again after a pause until it has stopped. The spinner of `out` shows the state it is in.
async fn stopped(client: &Client, id: &str, out: &mut Output) -> agentwire_client::Result<Task> {
    if client.card().capabilities.streaming == Some(true) {
        let request = SubscribeToTaskRequest { id: id.to_owned(), ..Default::default() };
        // A refusal (the task stopped meanwhile) or a broken stream leaves the reading below.
        if let Ok(mut events) = client.subscribe(request).await {
            while let Some(Ok(event)) = events.next().await {
                match event.task_state() {
                    // A subscription to a task that waits for input stays open, for what follows.
                    Some(state) if !state.is_running() => break,
                    Some(state) => out.waiting(id, state),
                    None => {}
                }
            }
        }
    }
    let mut pause = FIRST_PAUSE;
    loop {
        let task = client.get_task(GetTaskRequest { id: id.to_owned(), ..Default::default() }).await?;
        if !task.status.state.is_running() {
            return Ok(task);
        }
        out.waiting(id, task.status.state);
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}
