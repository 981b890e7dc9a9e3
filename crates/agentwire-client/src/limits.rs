//! How much a client reads from a server, which is not otherwise trusted to bound what it sends:
//! the default bounds of an answer and of an event, and reading a body under a bound.

use crate::{Error, Result};

/// The largest unary answer a client reads by default: a task as large as an agentwire server
/// keeps (64 MiB of memory), in JSON, with its raw bytes in base64.
pub const DEFAULT_MAX_REPLY_SIZE: usize = 96 * 1024 * 1024;

/// The largest event a client reads by default ([`ClientBuilder::max_event_size`]): above the
/// largest task an agentwire server keeps by default (64 MiB), which a stream may open with.
///
/// [`ClientBuilder::max_event_size`]: crate::ClientBuilder::max_event_size
pub(crate) const DEFAULT_MAX_EVENT_SIZE: usize = DEFAULT_MAX_REPLY_SIZE;

/// The body of `response`, refused past `limit` bytes: for documents that should be small (a key
/// set, a token, a listing), read from servers that are not otherwise trusted to bound them.
///
/// ```no_run
/// # async fn run() {
/// let response = reqwest::get("http://127.0.0.1:8080/agents").await.unwrap();
/// let listing = agentwire_client::read_limited(response, 1 << 20).await.unwrap();
/// # }
/// ```
pub async fn read_limited(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>> {
    let url = response.url().to_string();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|source| Error::transport(&url, source))? {
        if body.len() + chunk.len() > limit {
            return Err(Error::decode(&url, format!("the body is larger than {limit} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
