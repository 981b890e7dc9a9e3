//! The opaque cursor of task listings.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use agentwire_types::Task;

/// The status time that orders listings; a task without one sorts as the oldest.
pub(crate) fn status_millis(task: &Task) -> i64 {
    task.status.timestamp.map(|t| t.as_millis()).unwrap_or(0)
}

/// A position in the newest-first order of a listing: the status time and id of the last task seen.
///
/// ```
/// use agentwire_store::PageToken;
///
/// let token = PageToken { status_millis: 1_700_000_000_000, task_id: "t-9".into() };
/// assert_eq!(PageToken::decode(&token.encode()), Some(token));
/// assert_eq!(PageToken::decode("not a token"), None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageToken {
    /// Status timestamp of the last task on the previous page, in ms since the epoch.
    pub status_millis: i64,
    /// Its id (the tie-breaker).
    pub task_id: String,
}

impl PageToken {
    /// The position just after `task`.
    pub fn after(task: &Task) -> Self {
        Self { status_millis: status_millis(task), task_id: task.id.clone() }
    }

    /// The opaque text form.
    pub fn encode(&self) -> String {
        URL_SAFE_NO_PAD.encode(format!("{}:{}", self.status_millis, self.task_id))
    }

    /// Parses the text form; `None` if it was not made by [`PageToken::encode`].
    pub fn decode(text: &str) -> Option<Self> {
        let raw = String::from_utf8(URL_SAFE_NO_PAD.decode(text).ok()?).ok()?;
        let (millis, id) = raw.split_once(':')?;
        Some(Self { status_millis: millis.parse().ok()?, task_id: id.to_owned() })
    }

    /// Whether a task at (`millis`, `id`) comes after this position in newest-first order.
    pub fn precedes(&self, millis: i64, id: &str) -> bool {
        (millis, id) < (self.status_millis, self.task_id.as_str())
    }
}
