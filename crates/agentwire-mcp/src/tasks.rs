//! MCP's tasks extension (`io.modelcontextprotocol/tasks`) over A2A tasks: a call that outlasts
//! its wait becomes an MCP task whose id names the A2A task, and `tasks/get`, `tasks/update` and
//! `tasks/cancel` are the caller's A2A GetTask, follow-up message and CancelTask. Nothing is kept
//! in the process: the A2A task, in the agent's store, is the task's state, so any instance
//! answers for it and it outlives a restart.

use agentwire_types::{Message, Task, TaskState, Timestamp};
use rmcp::model::{
    CreateTaskResult, DetailedTask, ElicitRequest, InputRequest, InputRequests, JsonObject, Task as McpTask,
    TaskPayload, TaskStatus,
};
use rmcp::ErrorData as McpError;

use crate::content::{question_form, task_result, ANSWER};

/// How often a client is asked to poll a task.
const POLL_INTERVAL_MS: u64 = 1_000;

/// The MCP task id of `agent`'s A2A task `task`: `AGENT/TASK` (agent names hold no `/`).
pub(crate) fn task_id(agent: &str, task: &str) -> String {
    format!("{agent}/{task}")
}

/// The agent and A2A task an MCP task id names.
pub(crate) fn parse_task_id(id: &str) -> Result<(&str, &str), McpError> {
    id.split_once('/')
        .filter(|(agent, task)| !agent.is_empty() && !task.is_empty())
        .ok_or_else(|| McpError::invalid_params(format!("{id:?} is not a task id this server gave"), None))
}

/// The answer to a call whose A2A task goes on: the MCP task that follows it.
pub(crate) fn created(agent: &str, task: &Task) -> Result<CreateTaskResult, McpError> {
    Ok(CreateTaskResult::new(detailed(agent, task)?.task))
}

/// When the A2A task `id` was made, as far as its id tells, for MCP's `createdAt`, which must not
/// move: an A2A task records no creation time, but the ids agentwire's servers make (and a
/// gateway's, which keeps its own copy of each task) are UUID v7, whose first bits are the
/// time. Another agent's ids tell nothing, and the Unix epoch stands for "unknown" (a stable
/// value; docs/DECISIONS.md).
fn created_at(id: &str) -> Timestamp {
    let made = uuid::Uuid::try_parse(id).ok().and_then(|uuid| uuid.get_timestamp()).and_then(|time| {
        let (seconds, nanos) = time.to_unix();
        let millis = i64::try_from(seconds).ok()?.checked_mul(1_000)?.checked_add(i64::from(nanos / 1_000_000))?;
        Timestamp::from_millis(millis)
    });
    // The epoch is within the years a timestamp may hold.
    made.or_else(|| Timestamp::from_millis(0)).unwrap_or_else(Timestamp::now)
}

/// An A2A task as an MCP task: working while it runs, asking its question while it waits for
/// input, completed (with the call's result, an error result for a task that failed or was
/// rejected) or cancelled once it has ended. A task that waits for authorization is working,
/// with the agent's words as its status message: MCP has no input that could authorize it.
pub(crate) fn detailed(agent: &str, task: &Task) -> Result<DetailedTask, McpError> {
    let said = task.status.message.as_deref().map(Message::text).filter(|text| !text.is_empty());
    let payload = match task.status.state {
        TaskState::InputRequired => {
            let question = said.clone().unwrap_or_else(|| "The agent needs more input.".to_owned());
            let ask = InputRequest::Elicitation(ElicitRequest::new(question_form(&question)?));
            TaskPayload::InputRequired { input_requests: InputRequests::from([(ANSWER.to_owned(), ask)]) }
        }
        TaskState::Completed | TaskState::Failed | TaskState::Rejected => {
            let result = serde_json::to_value(task_result(agent, task))
                .map_err(|e| McpError::internal_error(e.to_string(), None))?;
            match result {
                serde_json::Value::Object(result) => TaskPayload::Completed { result },
                _ => TaskPayload::Completed { result: JsonObject::new() },
            }
        }
        TaskState::Canceled => TaskPayload::Cancelled,
        TaskState::Unspecified | TaskState::Submitted | TaskState::Working | TaskState::AuthRequired => {
            TaskPayload::Working
        }
    };
    let updated = task.status.timestamp.unwrap_or_else(Timestamp::now).to_string();
    let created = created_at(&task.id).to_string();
    let mut mcp = McpTask::new(task_id(agent, &task.id), payload.status(), created, updated)
        .with_poll_interval_ms(POLL_INTERVAL_MS);
    if let Some(said) = said.filter(|_| payload.status() != TaskStatus::InputRequired) {
        mcp = mcp.with_status_message(said);
    }
    Ok(DetailedTask::new(mcp, payload))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agentwire_types::{Artifact, Part, TaskStatus as A2aStatus};

    fn task(state: TaskState) -> Task {
        Task { id: "t1".into(), context_id: "c1".into(), status: A2aStatus::new(state), ..Task::default() }
    }

    #[test]
    fn task_ids_name_the_agent_and_its_task() {
        assert_eq!(task_id("fx", "t-1"), "fx/t-1");
        assert_eq!(parse_task_id("fx/t-1").unwrap(), ("fx", "t-1"));
        for bad in ["fx", "/t", "fx/", ""] {
            assert!(parse_task_id(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_task_is_created_when_its_id_says_and_stays_so() {
        let id = "0190f3a8-1c2b-7d4e-8f00-000000000000"; // UUID v7: 0x0190f3a81c2b ms
        let mut running = task(TaskState::Working);
        running.id = id.into();
        running.status.timestamp = Timestamp::from_millis(1_800_000_000_000);
        let mut ended = running.clone();
        ended.status = A2aStatus::new(TaskState::Completed);
        ended.status.timestamp = Timestamp::from_millis(1_800_000_060_000);
        let (running, ended) = (detailed("fx", &running).unwrap().task, detailed("fx", &ended).unwrap().task);
        assert_eq!(running.created_at, Timestamp::from_millis(0x0190_f3a8_1c2b).unwrap().to_string());
        assert_eq!(ended.created_at, running.created_at);
        assert_ne!(ended.last_updated_at, running.last_updated_at);
        // An id that tells no time (another agent's): the epoch, the same on every read.
        assert_eq!(detailed("fx", &task(TaskState::Working)).unwrap().task.created_at, "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn states_follow_the_a2a_task() {
        assert_eq!(detailed("fx", &task(TaskState::Working)).unwrap().task.status, TaskStatus::Working);
        assert_eq!(detailed("fx", &task(TaskState::AuthRequired)).unwrap().task.status, TaskStatus::Working);
        assert_eq!(detailed("fx", &task(TaskState::Canceled)).unwrap().task.status, TaskStatus::Cancelled);
        let mut asking = task(TaskState::InputRequired);
        asking.status.message = Some(Box::new(Message::agent("m", "Which currency?")));
        let asking = detailed("fx", &asking).unwrap();
        let TaskPayload::InputRequired { input_requests } = &asking.payload else { panic!("{asking:?}") };
        assert!(input_requests.contains_key(ANSWER));
        let mut done = task(TaskState::Completed);
        done.artifacts.push(Artifact::new("a", "answer", vec![Part::text("42")]));
        let done = detailed("fx", &done).unwrap();
        let TaskPayload::Completed { result } = &done.payload else { panic!("{done:?}") };
        assert_eq!(result["content"][0]["text"], "42");
        assert_eq!(done.task.task_id, "fx/t1");
        let failed = detailed("fx", &task(TaskState::Failed)).unwrap();
        let TaskPayload::Completed { result } = &failed.payload else { panic!("{failed:?}") };
        assert_eq!(result["isError"], true);
    }
}
