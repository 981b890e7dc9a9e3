//! The wire forms of older protocol versions, at the edge of the canonical v1.0 model.
//!
//! Decoding goes through the canonical types, which read every spelling of every version (kebab
//! and lowercase states, `kind`/`type`-tagged parts, `file.bytes`/`uri`, `mimeType`), and through
//! small mirrors of the requests whose older shape differs. Encoding is exact per version: each
//! module writes canonical values in its version's shapes, borrowing them, so nothing is copied to
//! be sent.

pub mod card;
mod json;
pub mod legacy;
mod profile;
pub mod push;
mod read;
pub mod v03;

pub use profile::{CardForm, Dialect, EndedSubscription, Profile, PushPayload, StreamErrors};
pub use read::{FromWire, WireForm};

use serde::{Serialize, Serializer};

/// A canonical value written in a dialect's shape: as itself for v1.0, through [`v03::V03`] or
/// [`legacy::Legacy`] for the others.
///
/// ```
/// use agentwire_types::dialect::Encoded;
/// use agentwire_types::{Dialect, Task};
///
/// let task = Task { id: "t1".into(), context_id: "c1".into(), ..Task::default() };
/// let v03 = serde_json::to_value(Encoded(Dialect::V03, &task)).unwrap();
/// assert_eq!(v03["kind"], "task");
/// let v1 = serde_json::to_value(Encoded(Dialect::V1, &task)).unwrap();
/// assert!(v1.get("kind").is_none());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Encoded<'a, T: ?Sized>(pub Dialect, pub &'a T);

impl<T> Serialize for Encoded<'_, T>
where
    T: Serialize + ?Sized,
    for<'b> v03::V03<'b, T>: Serialize,
    for<'b> legacy::Legacy<'b, T>: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Dialect::V1 => self.1.serialize(serializer),
            Dialect::V03 => v03::V03(self.1).serialize(serializer),
            Dialect::Legacy => legacy::Legacy(self.1).serialize(serializer),
        }
    }
}
