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

use crate::call::{question_form, ANSWER};
use crate::content::task_result;

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
    let mut mcp = McpTask::new(task_id(agent, &task.id), payload.status(), updated.clone(), updated)
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
