//! What a client sends to prove who it is: headers on HTTP, metadata on gRPC.

use http::header::{HeaderName, HeaderValue, AUTHORIZATION};
use http::HeaderMap;

use crate::error::{Error, Result};

/// Credentials and custom headers sent with every call to an interface: an HTTP header on
/// JSON-RPC and HTTP+JSON, the same name as gRPC metadata on gRPC.
///
/// ```
/// use agentwire_client::Credentials;
///
/// let credentials = Credentials::default().bearer_token("secret").header("X-Team", "blue");
/// # let _ = credentials;
/// ```
#[derive(Debug, Clone, Default)]
pub struct Credentials {
    headers: HeaderMap,
    invalid: Option<String>,
}

impl Credentials {
    /// `Authorization: Bearer TOKEN`.
    pub fn bearer_token(self, token: &str) -> Self {
        self.header(AUTHORIZATION.as_str(), &format!("Bearer {token}"))
    }

    /// An API key `key` in the header `name`.
    pub fn api_key(self, name: &str, key: &str) -> Self {
        self.header(name, key)
    }

    /// The header `name: value` (replacing an earlier value of `name`).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (HeaderName::try_from(name), HeaderValue::try_from(value)) {
            (Ok(name), Ok(mut value)) => {
                // Kept out of `Debug` output and logs.
                value.set_sensitive(true);
                self.headers.insert(name, value);
            }
            _ => self.invalid = Some(name.to_owned()),
        }
        self
    }

    /// Whether no header is set.
    pub fn is_empty(&self) -> bool {
        self.headers.is_empty()
    }

    /// `self` with `more` added, `more`'s values replacing those of the same names.
    pub(crate) fn merged(&self, more: &Credentials) -> Credentials {
        let mut merged = self.clone();
        for (name, value) in &more.headers {
            merged.headers.insert(name, value.clone());
        }
        merged.invalid = merged.invalid.or(more.invalid.clone());
        merged
    }

    /// The headers, or the name of the first that is not a valid header.
    pub(crate) fn headers(&self) -> Result<&HeaderMap> {
        match &self.invalid {
            Some(name) => {
                Err(Error::Setting(format!("{name:?} is not a valid header name, or its value is not a valid value")))
            }
            None => Ok(&self.headers),
        }
    }
}
