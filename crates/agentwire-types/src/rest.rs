//! The HTTP+JSON routes of each generation: one table, for the server that serves them and the
//! client that calls them. In a path, `{id}` is the task's id and `{config_id}` a push config's;
//! v1.0's routes are served under `/{tenant}` too, and v0.3's are all under `/v1`.

use http::Method;

use crate::Dialect;
use crate::Operation;

/// Where an operation is served over HTTP+JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The operation.
    pub operation: Operation,
    /// The method a client sends.
    pub method: Method,
    /// Another method the route answers to (SubscribeToTask takes GET as well as POST).
    pub also: Option<Method>,
    /// The path, with `{id}` and `{config_id}` where the request's ids go.
    pub path: &'static str,
}

const fn route(operation: Operation, method: Method, path: &'static str) -> Route {
    Route { operation, method, also: None, path }
}

const fn subscribe(path: &'static str) -> Route {
    Route { operation: Operation::SubscribeToTask, method: Method::POST, also: Some(Method::GET), path }
}

static V1: [Route; 11] = [
    route(Operation::SendMessage, Method::POST, "/message:send"),
    route(Operation::SendStreamingMessage, Method::POST, "/message:stream"),
    route(Operation::GetTask, Method::GET, "/tasks/{id}"),
    route(Operation::ListTasks, Method::GET, "/tasks"),
    route(Operation::CancelTask, Method::POST, "/tasks/{id}:cancel"),
    subscribe("/tasks/{id}:subscribe"),
    route(Operation::CreatePushConfig, Method::POST, "/tasks/{id}/pushNotificationConfigs"),
    route(Operation::GetPushConfig, Method::GET, "/tasks/{id}/pushNotificationConfigs/{config_id}"),
    route(Operation::ListPushConfigs, Method::GET, "/tasks/{id}/pushNotificationConfigs"),
    route(Operation::DeletePushConfig, Method::DELETE, "/tasks/{id}/pushNotificationConfigs/{config_id}"),
    route(Operation::GetExtendedAgentCard, Method::GET, "/extendedAgentCard"),
];

/// Seed 001 §3.5.3.
static V03: [Route; 11] = [
    route(Operation::SendMessage, Method::POST, "/v1/message:send"),
    route(Operation::SendStreamingMessage, Method::POST, "/v1/message:stream"),
    route(Operation::GetTask, Method::GET, "/v1/tasks/{id}"),
    route(Operation::ListTasks, Method::GET, "/v1/tasks"),
    route(Operation::CancelTask, Method::POST, "/v1/tasks/{id}:cancel"),
    subscribe("/v1/tasks/{id}:subscribe"),
    route(Operation::CreatePushConfig, Method::POST, "/v1/tasks/{id}/pushNotificationConfigs"),
    route(Operation::GetPushConfig, Method::GET, "/v1/tasks/{id}/pushNotificationConfigs/{config_id}"),
    route(Operation::ListPushConfigs, Method::GET, "/v1/tasks/{id}/pushNotificationConfigs"),
    route(Operation::DeletePushConfig, Method::DELETE, "/v1/tasks/{id}/pushNotificationConfigs/{config_id}"),
    route(Operation::GetExtendedAgentCard, Method::GET, "/v1/card"),
];

/// The HTTP+JSON routes of `dialect`; none for the legacy family, which has no such binding.
///
/// ```
/// use agentwire_types::Operation;
/// use agentwire_types::{rest, Dialect};
///
/// let cancel = rest::route_of(Dialect::V03, Operation::CancelTask).unwrap();
/// assert_eq!((cancel.method.as_str(), cancel.path), ("POST", "/v1/tasks/{id}:cancel"));
/// assert!(rest::routes(Dialect::Legacy).is_empty());
/// ```
pub fn routes(dialect: Dialect) -> &'static [Route] {
    match dialect {
        Dialect::V1 => &V1,
        Dialect::V03 => &V03,
        Dialect::Legacy => &[],
    }
}

/// The route of `operation` in `dialect`, if the generation serves it over HTTP+JSON.
pub fn route_of(dialect: Dialect, operation: Operation) -> Option<&'static Route> {
    routes(dialect).iter().find(|route| route.operation == operation)
}
