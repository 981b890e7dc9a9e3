//! What every binding reads from a request: its context (headers, peer, version, extensions, as
//! the listener and the layers recorded them), its body, and its parameters.

use agentwire_types::{A2AError, Binding, Dialect, Result};
use axum::body::{Body, Bytes};
use http::request::Parts;
use http::{header, HeaderMap};
use http_body_util::{BodyExt, LengthLimitError};

use super::BodyLimits;
use crate::RequestContext;

/// The context of a request made in `dialect` over `binding` for `tenant`: its headers (moved out
/// of `parts`), the peer the listener recorded, and the extensions the negotiation layer read.
/// An unsupported version is the error to report.
///
/// The method or route names the dialect: a supported version header that names another one is
/// accepted, and the request is served in the dialect its shapes are written in.
pub(crate) fn context(parts: &mut Parts, tenant: &str, dialect: Dialect, binding: Binding) -> Result<RequestContext> {
    let last_event_id = last_event_id(&parts.headers);
    let headers = std::mem::take(&mut parts.headers);
    let mut context = crate::layers::context_from(&mut parts.extensions, headers, tenant, dialect, binding)?;
    context.last_event_id = last_event_id;
    Ok(context)
}

/// The SSE `Last-Event-ID` a reconnecting client sends: the sequence number of the last event it
/// got. An id this server did not write is no position in the log, and is ignored.
fn last_event_id(headers: &HeaderMap) -> Option<u64> {
    headers.get("last-event-id")?.to_str().ok()?.trim().parse().ok()
}

/// Reads the whole body, within the size limit (the body-limit layer enforces it on the body
/// itself; a body that declares a larger length is refused here without being read) and the time
/// limit (a body that stops arriving would otherwise hold its connection forever).
pub(crate) async fn read_body(parts: &Parts, body: Body, limits: &BodyLimits) -> Result<Bytes> {
    let limit = limits.max_bytes;
    let declared = parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > limit as u64) {
        return Err(A2AError::payload_too_large(limit));
    }
    match tokio::time::timeout(limits.read_timeout, body.collect()).await {
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(error)) if is_length_limit(&error) => Err(A2AError::payload_too_large(limit)),
        Ok(Err(_)) => Err(A2AError::invalid_request("could not read the request body")),
        Err(_) => Err(A2AError::invalid_request(format!(
            "the request body did not arrive within {} s",
            limits.read_timeout.as_secs_f32()
        ))),
    }
}

fn is_length_limit(error: &axum::Error) -> bool {
    crate::causes::causes(error).any(|cause| cause.is::<LengthLimitError>())
}

/// Whether the Content-Type names JSON (`application/json`, `application/a2a+json`, any `+json`).
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else { return false };
    let essence = value.split(';').next().unwrap_or("").trim();
    let Some((kind, subtype)) = essence.split_once('/') else { return false };
    let json_suffix =
        |s: &str| s.len() > 5 && s.get(s.len() - 5..).is_some_and(|end| end.eq_ignore_ascii_case("+json"));
    kind.eq_ignore_ascii_case("application") && (subtype.eq_ignore_ascii_case("json") || json_suffix(subtype))
}

/// Decodes parameters from JSON text, naming the offending field on failure (InvalidParams).
/// Valid input is decoded once; only a failure is decoded again, to find the field.
pub(crate) fn decode_json<T: serde::de::DeserializeOwned>(json: &str) -> Result<T> {
    if let Ok(value) = serde_json::from_str(json) {
        return Ok(value);
    }
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(invalid_params)?;
    deserializer.end().map_err(A2AError::parse)?;
    Ok(value)
}

/// [`decode_json`] from a JSON value.
pub(crate) fn decode_value<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> Result<T> {
    serde_path_to_error::deserialize(value).map_err(invalid_params)
}

fn invalid_params<E: std::fmt::Display>(e: serde_path_to_error::Error<E>) -> A2AError {
    match e.path().to_string().as_str() {
        "." => A2AError::invalid_params(format!("invalid params: {}", e.inner())),
        path => A2AError::invalid_params(format!("invalid params at {path}: {}", e.inner())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_content_type(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONTENT_TYPE, value.parse().unwrap());
        headers
    }

    #[test]
    fn json_media_types_are_recognised_in_any_case() {
        for json in
            ["application/json", "Application/JSON; charset=utf-8", "application/a2a+json", " application/vnd.x+JSON "]
        {
            assert!(is_json(&with_content_type(json)), "{json}");
        }
        for other in ["text/plain", "application/+json", "application/jsonx", "json", "application/xml"] {
            assert!(!is_json(&with_content_type(other)), "{other}");
        }
        assert!(!is_json(&HeaderMap::new()));
    }
}
