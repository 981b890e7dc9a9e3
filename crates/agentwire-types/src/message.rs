//! `Message`: one turn of communication between a client and an agent.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::de::null_default;
use crate::{Part, Role};

/// One turn of communication: a role and its parts.
///
/// ```
/// use agentwire_types::{Message, Role};
///
/// let m = Message::user("m-1", "hello");
/// assert_eq!(m.role, Role::User);
/// assert_eq!(m.text(), "hello");
/// ```
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Unique id, set by the sender.
    #[serde(alias = "message_id", default, deserialize_with = "null_default")]
    pub message_id: String,
    /// The conversation this message belongs to.
    #[serde(
        alias = "context_id",
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub context_id: String,
    /// The task this message belongs to, if any.
    #[serde(alias = "task_id", default, deserialize_with = "null_default", skip_serializing_if = "String::is_empty")]
    pub task_id: String,
    /// Who sent it.
    #[serde(default)]
    pub role: Role,
    /// The content (`content` in v0.3's ProtoJSON).
    #[serde(alias = "content", default, deserialize_with = "null_default")]
    pub parts: Vec<Part>,
    /// Free-form metadata, keyed by extension URI where an extension defines it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Extension URIs this message uses.
    #[serde(default, deserialize_with = "null_default", skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// Other tasks this message refers to.
    #[serde(
        alias = "reference_task_ids",
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// A message with the given role and parts.
    pub fn new(role: Role, message_id: impl Into<String>, parts: Vec<Part>) -> Self {
        Self { message_id: message_id.into(), role, parts, ..Self::default() }
    }

    /// A user message with one text part.
    pub fn user(message_id: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(Role::User, message_id, vec![Part::text(text)])
    }

    /// An agent message with one text part.
    pub fn agent(message_id: impl Into<String>, text: impl Into<String>) -> Self {
        Self::new(Role::Agent, message_id, vec![Part::text(text)])
    }

    /// The text parts, one per line ([`text_of`](crate::text::text_of)).
    pub fn text(&self) -> String {
        crate::text::text_of(&self.parts)
    }
}
