//! Calling an agent as its callers: with each caller's own token, passed on only when the token's
//! audience (`aud`) names that agent, so that a token meant for the gateway alone, or for another
//! agent, never reaches it; or with a token exchanged for the caller's at an identity provider
//! (RFC 8693). The agent then verifies the token itself and sees each caller as the principal it
//! is, with its own tasks and quotas.

use agentwire_client::TokenExchange;
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
    let bearer = metadata.get(AUTHORIZATION).filter(|_| bearer_of(metadata).is_some());
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

/// How an agent behind the gateway is called as its callers, instead of with its client's
/// credentials; see [`GatewayBuilder::caller_auth`](crate::GatewayBuilder::caller_auth).
#[derive(Debug, Clone)]
pub enum CallerAuth {
    /// With the caller's own bearer token, when its audience names `audience`.
    Passthrough {
        /// What names the agent in the audience of the tokens meant for it.
        audience: String,
    },
    /// With a token `exchange` issues for the caller's, meant for `audience` (RFC 8693).
    Exchange {
        /// The audience the exchanged tokens are asked for.
        audience: String,
        /// The identity provider's token endpoint, and the gateway's client there.
        exchange: TokenExchange,
    },
}

impl CallerAuth {
    /// `headers` with the caller's credentials for `agent`, or why the call is refused before it
    /// is made: no bearer token, a token not meant for the agent, a refused exchange.
    pub(crate) async fn apply(
        &self,
        mut headers: HeaderMap,
        agent: &str,
        metadata: &HeaderMap,
        principal: Option<&Principal>,
    ) -> Result<HeaderMap, A2AError> {
        let bearer = match self {
            Self::Passthrough { audience } => caller_token(audience, agent, metadata, principal)?,
            Self::Exchange { audience, exchange } => {
                // Only a token the gateway verified as a JWT goes to the token endpoint: a static
                // secret of another `--auth` is the gateway's to check, no one else's.
                let verified = principal.is_some_and(|principal| principal.claims.contains_key("iss"));
                let token = bearer_of(metadata).filter(|_| verified).ok_or_else(|| {
                    A2AError::unauthenticated(format!(
                        "{agent} is called with a token exchanged for its caller's: send a bearer token the \
                         gateway verifies as a JWT"
                    ))
                })?;
                exchange.exchange(token, audience).await.map_err(|error| {
                    let message = format!(
                        "{agent} is called with a token exchanged for yours at {}, and the exchange failed: {error}",
                        exchange.token_url()
                    );
                    match error {
                        agentwire_client::Error::Http { status, .. } if status.is_client_error() => {
                            A2AError::permission_denied(message)
                        }
                        _ => A2AError::internal(message),
                    }
                })?
            }
        };
        headers.insert(AUTHORIZATION, bearer);
        Ok(headers)
    }
}

/// The token of a request's `Authorization: Bearer TOKEN`.
fn bearer_of(metadata: &HeaderMap) -> Option<&str> {
    let value = metadata.get(AUTHORIZATION)?.to_str().ok()?;
    let scheme = value.get(..7)?;
    scheme.eq_ignore_ascii_case("bearer ").then(|| value[7..].trim())
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

    #[tokio::test]
    async fn passthrough_puts_the_callers_token_in_the_relayed_headers() {
        let p = principal(json!("up"));
        let auth = CallerAuth::Passthrough { audience: "up".into() };
        let headers = auth.apply(HeaderMap::new(), "the agent", &bearer("t"), Some(&p)).await.unwrap();
        assert_eq!(headers[AUTHORIZATION], "Bearer t");
        assert_eq!(bearer_of(&bearer("  t2 ")), Some("t2"));
    }

    #[tokio::test]
    async fn an_exchange_needs_a_bearer_token_and_says_why_it_failed() {
        let exchange = TokenExchange::new("http://127.0.0.1:9/token", "gw", "secret");
        let auth = CallerAuth::Exchange { audience: "up".into(), exchange };
        let p = principal(json!("gw")).with_claim("iss", "https://idp.test");
        let none = auth.apply(HeaderMap::new(), "the agent", &HeaderMap::new(), Some(&p)).await.unwrap_err();
        assert_eq!(none.kind(), ErrorKind::Unauthenticated);
        // A static bearer secret (a principal without a JWT's claims) is never sent to be exchanged.
        let secret = auth.apply(HeaderMap::new(), "the agent", &bearer("t"), Some(&Principal::new("ops"))).await;
        assert_eq!(secret.unwrap_err().kind(), ErrorKind::Unauthenticated);
        let unreachable = auth.apply(HeaderMap::new(), "the agent", &bearer("t"), Some(&p)).await.unwrap_err();
        assert_eq!(unreachable.kind(), ErrorKind::Internal);
        let said = unreachable.message();
        assert!(said.contains("at http://127.0.0.1:9/token, and the exchange failed"), "{said}");
    }
}
