//! Ids the server makes.

/// A fresh server-made id: a UUID v7, so ids sort by creation time.
pub(crate) fn new_id() -> String {
    uuid::Uuid::now_v7().hyphenated().encode_lower(&mut uuid::Uuid::encode_buffer()).to_owned()
}
