//! The canonical A2A v1.0 data model.
//!
//! Every type serializes to the v1.0 ProtoJSON wire form (camelCase members, `TASK_STATE_*` and
//! `ROLE_*` enums, member-discriminated parts and stream responses, `...sssZ` timestamps) and
//! decodes tolerantly: unknown members are ignored, `null` means "unset", and the older spellings
//! of enums, parts and push authentication are accepted.
//!
//! ```
//! use agentwire_types::{Message, SendMessageRequest};
//!
//! let req: SendMessageRequest = serde_json::from_str(
//!     r#"{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#,
//! ).unwrap();
//! assert_eq!(req.message.text(), "hi");
//! ```

mod access;
mod card;
mod context;
mod de;
pub mod dialect;
mod error;
mod events;
mod fold;
pub mod jsonrpc;
mod message;
mod operation;
mod part;
mod push;
mod requests;
pub mod rest;
mod rpc_code;
mod size;
mod state;
mod task;
pub mod text;
mod timestamp;
mod usage;

pub use access::Access;
pub use card::{
    AgentCapabilities, AgentCard, AgentCardSignature, AgentExtension, AgentInterface, AgentProvider, AgentSkill,
    ApiKeySecurityScheme, HttpAuthSecurityScheme, MutualTlsSecurityScheme, OAuth2SecurityScheme,
    OpenIdConnectSecurityScheme, SecurityRequirement, SecurityScheme, StringList,
};
pub use context::{Authentication, Binding, Front, Peer, Principal, RequestContext, CALLER_KEY, IDEMPOTENCY_KEY};
pub use dialect::Dialect;
pub use error::{A2AError, ErrorKind, Result};
pub use events::{SendMessageResponse, StreamResponse, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
pub use message::Message;
pub use operation::{A2aRequest, A2aResponse, Operation, StreamItem, TaskEventStream};
pub use part::{Part, PartContent};
pub use push::{AuthenticationInfo, TaskPushNotificationConfig};
pub use requests::{
    CancelTaskRequest, GetExtendedAgentCardRequest, GetTaskRequest, ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse, ListTasksRequest, ListTasksResponse, SendMessageConfiguration,
    SendMessageRequest, SubscribeToTaskRequest, TaskPushNotificationConfigRef,
};
pub use rpc_code::RpcCode;
pub use size::MemorySize;
pub use state::{Role, TaskState, UnknownRole, UnknownTaskState};
pub use task::{Artifact, Task, TaskStatus};
pub use timestamp::{InvalidTimestamp, Timestamp};
pub use usage::{Usage, UsageFigures, MAX_MODEL_NAME, USAGE_EXTENSION};
