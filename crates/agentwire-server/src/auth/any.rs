//! Several authenticators at once.

use std::collections::BTreeMap;
use std::sync::Arc;

use agentwire_types::Access;
use agentwire_types::{A2AError, ErrorKind, RequestContext, SecurityScheme};

use super::{async_trait, Authenticator};
use crate::Principal;

/// Accepts a caller any of its authenticators accepts, asking them in order: static tokens
/// beside an identity provider's, or a client certificate beside a bearer token. A caller one
/// of them knows but refuses an operation (`PermissionDenied`) is refused at once; a caller none
/// knows gets the most telling refusal (one that says what is wrong with its credentials) and
/// every authenticator's challenge.
///
/// ```
/// use agentwire_server::auth::{AnyAuth, Authenticator, StaticAuth};
///
/// let auth = AnyAuth::default()
///     .or(StaticAuth::default().with_spec("bearer:ci=token-1").unwrap())
///     .or(StaticAuth::default().with_spec("apikey:x-api-key:ops=key-2").unwrap());
/// assert_eq!(auth.security_schemes().len(), 2);
/// ```
#[derive(Clone, Default)]
pub struct AnyAuth {
    authenticators: Vec<Arc<dyn Authenticator>>,
}

impl std::fmt::Debug for AnyAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnyAuth").field("authenticators", &self.authenticators.len()).finish()
    }
}

impl AnyAuth {
    /// Also accepts whom `auth` accepts, after the authenticators before it.
    pub fn or(mut self, auth: impl Authenticator) -> Self {
        self.authenticators.push(Arc::new(auth));
        self
    }

    /// Also accepts whom `auth` accepts.
    pub fn or_shared(mut self, auth: Arc<dyn Authenticator>) -> Self {
        self.authenticators.push(auth);
        self
    }
}

#[async_trait]
impl Authenticator for AnyAuth {
    async fn authenticate(&self, ctx: &RequestContext, access: Access) -> Result<Principal, A2AError> {
        let mut refusal: Option<A2AError> = None;
        for auth in &self.authenticators {
            match auth.authenticate(ctx, access).await {
                Ok(principal) => return Ok(principal),
                Err(error) if error.kind() != ErrorKind::Unauthenticated => return Err(error),
                // A refusal with its own challenge says what is wrong with the credentials sent.
                Err(error)
                    if refusal.as_ref().is_none_or(|r| r.challenge().is_none() && error.challenge().is_some()) =>
                {
                    refusal = Some(error);
                }
                Err(_) => {}
            }
        }
        Err(refusal.unwrap_or_else(|| A2AError::unauthenticated("valid credentials are required")))
    }

    fn security_schemes(&self) -> BTreeMap<String, SecurityScheme> {
        self.authenticators.iter().flat_map(|auth| auth.security_schemes()).collect()
    }

    fn challenge(&self) -> String {
        let mut challenges: Vec<String> = Vec::new();
        for challenge in self.authenticators.iter().map(|auth| auth.challenge()) {
            if !challenges.contains(&challenge) {
                challenges.push(challenge);
            }
        }
        challenges.join(", ")
    }
}
