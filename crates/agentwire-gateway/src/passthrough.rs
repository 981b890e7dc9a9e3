//! Calling an agent with its callers' own tokens: the gateway passes a caller's bearer token on
//! to an agent only when the token's audience (`aud`) names that agent, so that a token meant for
//! the gateway alone, or for another agent, never reaches it. The agent then verifies the token
//! itself and sees each caller as the principal it is, with its own tasks and quotas.

use agentwire_types::{A2AError, Principal};
use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderValue};
use serde_json::Value;

/// The `Authorization` header that carries the caller's own token to the agent known by
/// `audience`, or why the call is refused before it is made: the caller sent no bearer token, or
/// its token (as the gateway's authentication verified it into `principal`) is not meant for
/// the agent.
pub(crate) fn caller_token(
    audience: &str,
    agent: &str,
    metadata: &HeaderMap,
    principal: Option<&Principal>,
) -> Result<HeaderValue, A2AError> {
    let bearer = metadata.get(AUTHORIZATION).filter(|value| {
        value.to_str().is_ok_and(|text| text.get(..7).is_some_and(|s| s.eq_ignore_ascii_case("bearer ")))
    });
    let (Some(bearer), Some(principal)) = (bearer, principal) else {
        return Err(A2AError::unauthenticated(format!(
            "{agent} is called with its callers' own tokens: send a bearer token whose audience names {audience:?}"
        )));
    };
    let audiences = match principal.claims.get("aud") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !audiences.contains(&audience) {
        return Err(A2AError::permission_denied(format!(
            "{agent} is called with its callers' own tokens, and yours is not meant for it: its audience is {audiences:?}, \
             and does not name {audience:?}"
        )));
    }
    let mut bearer = bearer.clone();
    bearer.set_sensitive(true);
    Ok(bearer)
}

/// `headers` with the caller's token for the agent, when `audience` says the agent is called with
/// its callers' tokens.
pub(crate) fn with_caller_token(
    mut headers: HeaderMap,
    audience: Option<&str>,
    agent: &str,
    metadata: &HeaderMap,
    principal: Option<&Principal>,
) -> Result<HeaderMap, A2AError> {
    if let Some(audience) = audience {
        headers.insert(AUTHORIZATION, caller_token(audience, agent, metadata, principal)?);
    }
    Ok(headers)
}

#[cfg(test)]
mod tests {
    use agentwire_types::ErrorKind;
    use serde_json::json;

    use super::*;

    fn bearer(token: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_str(&format!("Bearer {token}")).unwrap());
        headers
    }

    fn principal(aud: Value) -> Principal {
        Principal::new("https://idp.test#alice").with_claim("aud", aud)
    }

    #[test]
    fn a_token_goes_to_the_agent_its_audience_names_and_no_other() {
        let headers = bearer("t0k3n");
        let passed = caller_token("up", "the agent", &headers, Some(&principal(json!(["gw", "up"])))).unwrap();
        assert_eq!(passed, "Bearer t0k3n");
        assert!(passed.is_sensitive());
        assert_eq!(caller_token("up", "the agent", &headers, Some(&principal(json!("up")))).unwrap(), "Bearer t0k3n");

        let refused = caller_token("up", "the agent", &headers, Some(&principal(json!("gw")))).unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::PermissionDenied);
        assert!(
            refused.message().contains(r#"its audience is ["gw"], and does not name "up""#),
            "{}",
            refused.message()
        );
        let no_aud = caller_token("up", "the agent", &headers, Some(&Principal::new("alice"))).unwrap_err();
        assert_eq!(no_aud.kind(), ErrorKind::PermissionDenied);
    }

    #[test]
    fn a_caller_without_a_bearer_token_is_refused() {
        let p = principal(json!("up"));
        let none = caller_token("up", "the agent", &HeaderMap::new(), Some(&p)).unwrap_err();
        assert_eq!(none.kind(), ErrorKind::Unauthenticated);
        let mut basic = HeaderMap::new();
        basic.insert(AUTHORIZATION, HeaderValue::from_static("Basic YTpi"));
        assert_eq!(caller_token("up", "the agent", &basic, Some(&p)).unwrap_err().kind(), ErrorKind::Unauthenticated);
        assert!(caller_token("up", "the agent", &bearer("t"), None).is_err());
    }

    #[test]
    fn without_an_audience_the_headers_are_left_alone() {
        let headers = with_caller_token(HeaderMap::new(), None, "the agent", &bearer("t"), None).unwrap();
        assert!(headers.is_empty());
        let p = principal(json!("up"));
        let headers = with_caller_token(HeaderMap::new(), Some("up"), "the agent", &bearer("t"), Some(&p)).unwrap();
        assert_eq!(headers[AUTHORIZATION], "Bearer t");
    }
}
