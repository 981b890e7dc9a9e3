//! The two protocol enums, `TaskState` and `Role`, with tolerant decoding of every spelling in use.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Where a task is in its lifecycle.
///
/// Decoding accepts `TASK_STATE_WORKING`, `working`, `input-required`, `input_required`, any case and
/// both `CANCELED`/`CANCELLED`; encoding emits the v1.0 ProtoJSON name.
///
/// ```
/// use agentwire_types::TaskState;
///
/// let s: TaskState = serde_json::from_str("\"input-required\"").unwrap();
/// assert_eq!(s, TaskState::InputRequired);
/// assert_eq!(serde_json::to_string(&s).unwrap(), "\"TASK_STATE_INPUT_REQUIRED\"");
/// assert!(s.is_interrupted());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TaskState {
    /// Not set; never a valid state for a stored task.
    #[default]
    Unspecified,
    /// Accepted, not yet started.
    Submitted,
    /// Being worked on.
    Working,
    /// Finished successfully (terminal).
    Completed,
    /// Finished with an error (terminal).
    Failed,
    /// Canceled by a client (terminal).
    Canceled,
    /// Waiting for the client to send more input (interrupted).
    InputRequired,
    /// Refused by the agent (terminal).
    Rejected,
    /// Waiting for credentials (interrupted).
    AuthRequired,
}

impl TaskState {
    /// Every state, in proto field-number order.
    pub const ALL: [TaskState; 9] = [
        Self::Unspecified,
        Self::Submitted,
        Self::Working,
        Self::Completed,
        Self::Failed,
        Self::Canceled,
        Self::InputRequired,
        Self::Rejected,
        Self::AuthRequired,
    ];

    /// Completed, failed, canceled or rejected: nothing more will happen to the task.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Canceled | Self::Rejected)
    }

    /// Input- or auth-required: the agent waits for the client.
    pub fn is_interrupted(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }

    /// Submitted or working: an execution owns the task.
    pub fn is_running(self) -> bool {
        matches!(self, Self::Submitted | Self::Working)
    }

    /// The v1.0 ProtoJSON name, e.g. `TASK_STATE_WORKING`.
    pub fn as_proto_name(self) -> &'static str {
        match self {
            Self::Unspecified => "TASK_STATE_UNSPECIFIED",
            Self::Submitted => "TASK_STATE_SUBMITTED",
            Self::Working => "TASK_STATE_WORKING",
            Self::Completed => "TASK_STATE_COMPLETED",
            Self::Failed => "TASK_STATE_FAILED",
            Self::Canceled => "TASK_STATE_CANCELED",
            Self::InputRequired => "TASK_STATE_INPUT_REQUIRED",
            Self::Rejected => "TASK_STATE_REJECTED",
            Self::AuthRequired => "TASK_STATE_AUTH_REQUIRED",
        }
    }

    /// The v0.3 / legacy JSON name, e.g. `input-required`.
    pub fn as_kebab_name(self) -> &'static str {
        match self {
            Self::Unspecified => "unknown",
            Self::Submitted => "submitted",
            Self::Working => "working",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Canceled => "canceled",
            Self::InputRequired => "input-required",
            Self::Rejected => "rejected",
            Self::AuthRequired => "auth-required",
        }
    }

    /// The proto enum number.
    pub fn number(self) -> i32 {
        Self::ALL.iter().position(|s| *s == self).unwrap_or(0) as i32
    }

    /// The state for a proto enum number, if there is one.
    pub fn from_number(n: i32) -> Option<Self> {
        usize::try_from(n).ok().and_then(|i| Self::ALL.get(i).copied())
    }
}

/// The state as a person reads it, in messages: `completed`, `input-required` (the wire's names
/// are [`as_proto_name`](TaskState::as_proto_name) and [`as_kebab_name`](TaskState::as_kebab_name)).
///
/// ```
/// assert_eq!(agentwire_types::TaskState::InputRequired.to_string(), "input-required");
/// ```
impl fmt::Display for TaskState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_kebab_name())
    }
}

/// The text named no known task state.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown task state {0:?}")]
pub struct UnknownTaskState(String);

impl std::str::FromStr for TaskState {
    type Err = UnknownTaskState;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Some(state) = Self::ALL.iter().find(|state| state.as_proto_name() == s) {
            return Ok(*state);
        }
        let upper = s.trim().to_ascii_uppercase().replace('-', "_");
        let bare = upper.strip_prefix("TASK_STATE_").unwrap_or(&upper);
        Ok(match bare {
            "UNSPECIFIED" | "UNKNOWN" => Self::Unspecified,
            "SUBMITTED" => Self::Submitted,
            "WORKING" => Self::Working,
            "COMPLETED" => Self::Completed,
            "FAILED" => Self::Failed,
            "CANCELED" | "CANCELLED" => Self::Canceled,
            "INPUT_REQUIRED" => Self::InputRequired,
            "REJECTED" => Self::Rejected,
            "AUTH_REQUIRED" => Self::AuthRequired,
            _ => return Err(UnknownTaskState(s.to_owned())),
        })
    }
}

impl Serialize for TaskState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_proto_name())
    }
}

impl<'de> Deserialize<'de> for TaskState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EnumVisitor::<TaskState>::new("a task state"))
    }
}

/// Who sent a message.
///
/// ```
/// use agentwire_types::Role;
///
/// let r: Role = serde_json::from_str("\"user\"").unwrap();
/// assert_eq!(serde_json::to_string(&r).unwrap(), "\"ROLE_USER\"");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Role {
    /// Not set; rejected on input.
    #[default]
    Unspecified,
    /// The client side.
    User,
    /// The agent side.
    Agent,
}

impl Role {
    /// The v1.0 ProtoJSON name.
    pub fn as_proto_name(self) -> &'static str {
        match self {
            Self::Unspecified => "ROLE_UNSPECIFIED",
            Self::User => "ROLE_USER",
            Self::Agent => "ROLE_AGENT",
        }
    }
}

/// The text named no known role.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown role {0:?}")]
pub struct UnknownRole(String);

impl std::str::FromStr for Role {
    type Err = UnknownRole;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        // The canonical names, as every v1.0 client sends them, without a copy.
        if let Some(role) = [Self::User, Self::Agent, Self::Unspecified].into_iter().find(|r| r.as_proto_name() == s) {
            return Ok(role);
        }
        let upper = s.trim().to_ascii_uppercase();
        match upper.strip_prefix("ROLE_").unwrap_or(&upper) {
            "UNSPECIFIED" => Ok(Self::Unspecified),
            "USER" => Ok(Self::User),
            "AGENT" => Ok(Self::Agent),
            _ => Err(UnknownRole(s.to_owned())),
        }
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_proto_name())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EnumVisitor::<Role>::new("a role"))
    }
}

trait ProtoEnum: std::str::FromStr + Sized {
    fn from_proto_number(n: i64) -> Option<Self>;
}

impl ProtoEnum for TaskState {
    fn from_proto_number(n: i64) -> Option<Self> {
        i32::try_from(n).ok().and_then(Self::from_number)
    }
}

impl ProtoEnum for Role {
    fn from_proto_number(n: i64) -> Option<Self> {
        [Self::Unspecified, Self::User, Self::Agent].get(usize::try_from(n).ok()?).copied()
    }
}

/// ProtoJSON allows enums as names or as numbers.
struct EnumVisitor<T> {
    expecting: &'static str,
    _marker: std::marker::PhantomData<T>,
}

impl<T> EnumVisitor<T> {
    fn new(expecting: &'static str) -> Self {
        Self { expecting, _marker: std::marker::PhantomData }
    }
}

impl<T> serde::de::Visitor<'_> for EnumVisitor<T>
where
    T: ProtoEnum,
    T::Err: fmt::Display,
{
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.expecting)
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
        v.parse().map_err(E::custom)
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<T, E> {
        T::from_proto_number(v).ok_or_else(|| E::custom(format!("unknown enum number {v}")))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<T, E> {
        self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_decodes() {
        for (text, state) in [
            ("TASK_STATE_CANCELLED", TaskState::Canceled),
            ("canceled", TaskState::Canceled),
            ("input_required", TaskState::InputRequired),
            ("Auth-Required", TaskState::AuthRequired),
            ("TASK_STATE_REJECTED", TaskState::Rejected),
        ] {
            assert_eq!(text.parse::<TaskState>().unwrap(), state, "{text}");
        }
        assert!("pending".parse::<TaskState>().is_err());
        let n: TaskState = serde_json::from_str("3").unwrap();
        assert_eq!(n, TaskState::Completed);
    }
}
