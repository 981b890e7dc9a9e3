//! Idempotent sends: a send carrying an `Idempotency-Key` (an HTTP header on JSON-RPC and
//! HTTP+JSON, gRPC metadata) is recorded with the task it makes, in the store and in the same
//! write, scoped to its tenant and principal. A repeat of it answers that task; the same key on
//! another request is refused.

use agentwire_store::{KeyedSend, SendKey};
use agentwire_types::{A2AError, Result, SendMessageRequest, IDEMPOTENCY_KEY};

use super::Limits;
use crate::RequestContext;

/// The key `ctx` carries for `req`, with the digest that tells a repeat from another request;
/// `None` without one. A key is visible ASCII, at most [`Limits::max_idempotency_key_bytes`].
pub(crate) fn send_key(ctx: &RequestContext, req: &SendMessageRequest, limits: &Limits) -> Result<Option<SendKey>> {
    let Some(value) = ctx.metadata.get(IDEMPOTENCY_KEY) else { return Ok(None) };
    let max = limits.max_idempotency_key_bytes;
    let key = value
        .to_str()
        .ok()
        .filter(|key| !key.is_empty() && key.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or_else(|| A2AError::invalid_params("Idempotency-Key must be visible ASCII without spaces"))?;
    if key.len() > max {
        return Err(A2AError::invalid_params(format!(
            "Idempotency-Key may be at most {max} bytes long (got {})",
            key.len()
        ))
        .with_metadata("limitBytes", max.to_string()));
    }
    Ok(Some(SendKey { key: key.to_owned(), request: digest(req)?, ttl: limits.idempotency_key_ttl }))
}

/// What a send asks for, as a digest: its message, metadata and webhook. How it is followed
/// (blocking or streaming, history length) is not part of it, so a retry may follow differently.
fn digest(req: &SendMessageRequest) -> Result<String> {
    let push = req.configuration.as_ref().and_then(|c| c.task_push_notification_config.as_ref());
    let asked = serde_json::to_vec(&(&req.message, &req.metadata, push))
        .map_err(|e| A2AError::internal(format!("could not read the request back: {e}")))?;
    let digest = ring::digest::digest(&ring::digest::SHA256, &asked);
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(64);
    for byte in digest.as_ref() {
        hex.push(char::from(HEX[usize::from(byte >> 4)]));
        hex.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    Ok(hex)
}

/// A repeat of the send that holds the key answers its task; another request under the key is
/// refused, saying so (HTTP answers 409).
pub(crate) fn check_repeat(held: &KeyedSend, key: &SendKey) -> Result<()> {
    if held.request == key.request {
        return Ok(());
    }
    Err(A2AError::invalid_params(format!(
        "Idempotency-Key {:?} was used for another request (task {}); use a new key for a new request",
        key.key, held.task_id
    ))
    .with_metadata("taskId", &held.task_id)
    .with_conflict())
}
