//! Calling another party (an agent behind a gateway, an MCP server a model's tools are on, an
//! agent a task delegates to) as the caller a server is working for: with the caller's own token,
//! passed on only when the token's audience (`aud`) names that party, so that a token meant for
//! the server alone, or for someone else, never reaches it; or with a token exchanged for the
//! caller's at an identity provider (RFC 8693). The party then verifies the token itself and sees
//! each caller as the principal it is, with its own tasks and quotas.

use agentwire_types::{A2AError, Principal};
use http::header::AUTHORIZATION;
use http::{HeaderMap, HeaderValue};
use serde_json::Value;

use crate::TokenExchange;

/// The `Authorization` header that carries the caller's own token to the party (`agent`, as an
/// error message names it) known by `audience`, or why the call is refused before it is made: the
/// caller sent no bearer token, or its token (as the server's authentication verified it into
/// `principal`) is not meant for the party.
fn caller_token(
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

/// How a server calls another party as the caller it is working for, instead of with credentials
/// of its own. Cloning is cheap (an exchange's cache is shared).
///
/// ```
/// use agentwire_client::{CallerAuth, TokenExchange};
/// use agentwire_types::Principal;
/// use http::HeaderMap;
///
/// # async fn run(metadata: HeaderMap, principal: Principal) -> Result<(), agentwire_types::A2AError> {
/// // The caller's own token, when it is meant for the weather agent.
/// let passthrough = CallerAuth::Passthrough { audience: "https://weather.example".into() };
/// let authorization = passthrough.authorization("the weather agent", &metadata, Some(&principal)).await?;
/// // Or one issued for the caller's, meant for the billing agent.
/// let exchange = TokenExchange::new("https://idp.example/token", "gateway", "secret");
/// let exchanged = CallerAuth::Exchange { audience: "urn:agent:billing".into(), exchange };
/// let authorization = exchanged.authorization("the billing agent", &metadata, Some(&principal)).await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub enum CallerAuth {
    /// With the caller's own bearer token, when its audience names `audience`.
    Passthrough {
        /// What names the party in the audience of the tokens meant for it.
        audience: String,
    },
    /// With a token `exchange` issues for the caller's, meant for `audience` (RFC 8693).
    Exchange {
        /// The audience the exchanged tokens are asked for.
        audience: String,
        /// The identity provider's token endpoint, and the server's client there.
        exchange: TokenExchange,
    },
}

impl CallerAuth {
    /// What names the party in the tokens it is sent.
    pub fn audience(&self) -> &str {
        match self {
            Self::Passthrough { audience } | Self::Exchange { audience, .. } => audience,
        }
    }

    /// The `Authorization` header that calls `party` (as an error message names it) as the caller
    /// whose request carried `metadata` and was authenticated as `principal`; or why the call is
    /// refused before it is made: no bearer token, a token not meant for the party, a refused
    /// exchange. An exchange's failure is the caller's error, never a reason to call with
    /// credentials of the server's own.
    pub async fn authorization(
        &self,
        party: &str,
        metadata: &HeaderMap,
        principal: Option<&Principal>,
    ) -> Result<HeaderValue, A2AError> {
        match self {
            Self::Passthrough { audience } => caller_token(audience, party, metadata, principal),
            Self::Exchange { audience, exchange } => {
                // Only a token the server verified as a JWT goes to the token endpoint: a static
                // secret of another kind of authentication is the server's to check, no one else's.
                let verified = principal.is_some_and(|principal| principal.claims.contains_key("iss"));
                let token = bearer_of(metadata).filter(|_| verified).ok_or_else(|| {
                    A2AError::unauthenticated(format!(
                        "{party} is called with a token exchanged for its caller's: send a bearer token that \
                         is verified as a JWT"
                    ))
                })?;
                exchange.exchange(token, audience).await.map_err(|error| {
                    let message = format!(
                        "{party} is called with a token exchanged for yours at {}, and the exchange failed: {error}",
                        exchange.token_url()
                    );
                    match error {
                        crate::Error::Http { status, .. } if status.is_client_error() => {
                            A2AError::permission_denied(message)
                        }
                        _ => A2AError::internal(message),
                    }
                })
            }
        }
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
    async fn passthrough_passes_the_callers_token_on() {
        let p = principal(json!("up"));
        let auth = CallerAuth::Passthrough { audience: "up".into() };
        assert_eq!(auth.audience(), "up");
        let authorization = auth.authorization("the agent", &bearer("t"), Some(&p)).await.unwrap();
        assert_eq!(authorization, "Bearer t");
        assert_eq!(bearer_of(&bearer("  t2 ")), Some("t2"));
    }

    #[tokio::test]
    async fn an_exchange_needs_a_bearer_token_and_says_why_it_failed() {
        let exchange = TokenExchange::new("http://127.0.0.1:9/token", "gw", "secret");
        let auth = CallerAuth::Exchange { audience: "up".into(), exchange };
        let p = principal(json!("gw")).with_claim("iss", "https://idp.test");
        let none = auth.authorization("the agent", &HeaderMap::new(), Some(&p)).await.unwrap_err();
        assert_eq!(none.kind(), ErrorKind::Unauthenticated);
        // A static bearer secret (a principal without a JWT's claims) is never sent to be exchanged.
        let secret = auth.authorization("the agent", &bearer("t"), Some(&Principal::new("ops"))).await;
        assert_eq!(secret.unwrap_err().kind(), ErrorKind::Unauthenticated);
        let unreachable = auth.authorization("the agent", &bearer("t"), Some(&p)).await.unwrap_err();
        assert_eq!(unreachable.kind(), ErrorKind::Internal);
        let said = unreachable.message();
        assert!(said.contains("at http://127.0.0.1:9/token, and the exchange failed"), "{said}");
    }
}
