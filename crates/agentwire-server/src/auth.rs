//! Authentication: a pluggable [`Authenticator`], with static bearer tokens and API keys built in.
//!
//! Every operation except the public agent card requires a principal when an authenticator is
//! configured; each task belongs to the principal that created it.

use std::collections::BTreeMap;

use agentwire_types::{
    A2AError, ApiKeySecurityScheme, HttpAuthSecurityScheme, SecurityRequirement, SecurityScheme, StringList,
};
use http::HeaderMap;

use crate::Principal;

/// Identifies callers from request headers.
pub trait Authenticator: Send + Sync + 'static {
    /// The caller, or `Unauthenticated` (401: no or unknown credentials) or `PermissionDenied`
    /// (403: a known caller without rights).
    fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, A2AError>;

    /// The schemes the agent card declares, by name.
    fn security_schemes(&self) -> BTreeMap<String, SecurityScheme>;

    /// The `WWW-Authenticate` challenge sent with a 401.
    fn challenge(&self) -> String {
        "Bearer realm=\"agentwire\"".into()
    }
}

/// Static credentials: bearer tokens and API keys, each its own principal.
///
/// ```
/// use agentwire_server::auth::{Authenticator, StaticAuth};
///
/// let auth = StaticAuth::default().with_spec("bearer:secret1,secret2").unwrap();
/// let mut headers = http::HeaderMap::new();
/// headers.insert("authorization", "Bearer secret2".parse().unwrap());
/// assert!(auth.authenticate(&headers).is_ok());
/// headers.insert("authorization", "Bearer nope".parse().unwrap());
/// assert!(auth.authenticate(&headers).is_err());
/// ```
#[derive(Debug, Clone, Default)]
pub struct StaticAuth {
    bearer_tokens: Vec<String>,
    api_keys: Vec<(String, String)>,
}

impl StaticAuth {
    /// Adds credentials from a spec: `bearer:TOKEN1,TOKEN2` or `apikey:HEADER:KEY`.
    pub fn with_spec(mut self, spec: &str) -> Result<Self, String> {
        match spec.split_once(':') {
            Some(("bearer", tokens)) => {
                let tokens: Vec<String> =
                    tokens.split(',').map(str::trim).filter(|t| !t.is_empty()).map(Into::into).collect();
                if tokens.is_empty() {
                    return Err("bearer: needs at least one token".into());
                }
                self.bearer_tokens.extend(tokens);
            }
            Some(("apikey", rest)) => match rest.split_once(':') {
                Some((header, key)) if !header.is_empty() && !key.is_empty() => {
                    http::HeaderName::try_from(header).map_err(|e| format!("invalid header name {header:?}: {e}"))?;
                    self.api_keys.push((header.to_ascii_lowercase(), key.to_owned()));
                }
                _ => return Err("apikey: expects apikey:HEADER:KEY".into()),
            },
            _ => return Err(format!("unknown auth spec {spec:?}: use bearer:TOKENS or apikey:HEADER:KEY")),
        }
        Ok(self)
    }
}

/// A stable, non-reversible principal name for a credential (FNV-1a), so tokens never reach logs.
fn principal_for(kind: &str, secret: &str) -> Principal {
    let hash = secret.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    Principal::new(format!("{kind}-{hash:016x}"))
}

/// Compares without stopping at the first differing byte.
fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Authenticator for StaticAuth {
    fn authenticate(&self, headers: &HeaderMap) -> Result<Principal, A2AError> {
        if let Some(token) = headers
            .get(http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
        {
            if self.bearer_tokens.iter().any(|t| same_secret(t, token)) {
                return Ok(principal_for("bearer", token));
            }
        }
        for (header, key) in &self.api_keys {
            if headers.get(header).and_then(|v| v.to_str().ok()).is_some_and(|v| same_secret(v, key)) {
                return Ok(principal_for("apikey", key));
            }
        }
        Err(A2AError::unauthenticated("valid credentials are required"))
    }

    fn security_schemes(&self) -> BTreeMap<String, SecurityScheme> {
        let mut schemes = BTreeMap::new();
        if !self.bearer_tokens.is_empty() {
            let scheme = HttpAuthSecurityScheme { scheme: "Bearer".into(), ..HttpAuthSecurityScheme::default() };
            schemes.insert("bearer".into(), SecurityScheme::HttpAuth(scheme));
        }
        for (i, (header, _)) in self.api_keys.iter().enumerate() {
            let name = if i == 0 { "apiKey".to_owned() } else { format!("apiKey{}", i + 1) };
            let scheme = ApiKeySecurityScheme { location: "header".into(), name: header.clone(), ..Default::default() };
            schemes.insert(name, SecurityScheme::ApiKey(scheme));
        }
        schemes
    }
}

/// One requirement per scheme: any of them will do.
pub(crate) fn requirements(schemes: &BTreeMap<String, SecurityScheme>) -> Vec<SecurityRequirement> {
    schemes
        .keys()
        .map(|name| SecurityRequirement { schemes: BTreeMap::from([(name.clone(), StringList::default())]) })
        .collect()
}
