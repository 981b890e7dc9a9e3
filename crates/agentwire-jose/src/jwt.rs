//! JSON Web Token validation (RFC 7519, with the checks of RFC 8725).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use crate::{verify_compact, Algorithm, JoseError, PublicKeys};

/// Seconds since the Unix epoch, as `exp` and `nbf` count them.
pub fn unix_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// What a token must be to be accepted: signed by a trusted key with an allowed algorithm,
/// issued by `issuer` for `audience`, unexpired (it must carry `exp`) and already valid, give or
/// take the leeway for clocks that differ.
#[derive(Debug, Clone)]
pub struct Validation {
    issuer: String,
    audiences: Vec<String>,
    leeway: Duration,
    algorithms: Vec<Algorithm>,
}

/// The clock difference tolerated by default.
const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);

impl Validation {
    /// Tokens of `issuer` for `audience`, with every asymmetric algorithm and 30 s of leeway.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        Self {
            issuer: issuer.into(),
            audiences: vec![audience.into()],
            leeway: DEFAULT_LEEWAY,
            algorithms: Algorithm::ALL.to_vec(),
        }
    }

    /// Also accepts tokens for `audience`.
    pub fn with_audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// The clock difference tolerated on `exp` and `nbf`.
    pub fn with_leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Accepts only these algorithms.
    pub fn with_algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// The issuer it expects.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The token's claims, if it is valid now.
    pub fn validate(&self, token: &str, keys: &PublicKeys) -> Result<Map<String, Value>, JoseError> {
        self.validate_at(token, keys, unix_now())
    }

    /// The token's claims, if it is valid at `now` (seconds since the epoch).
    pub fn validate_at(&self, token: &str, keys: &PublicKeys, now: i64) -> Result<Map<String, Value>, JoseError> {
        let (header, payload) = verify_compact(token, keys, &self.algorithms)?;
        if header.typ.as_deref().is_some_and(|typ| !typ.eq_ignore_ascii_case("JWT") && !typ.contains("jwt")) {
            return Err(JoseError::Malformed(format!("a token of type {:?} is not a JWT", header.typ)));
        }
        let claims: Map<String, Value> = serde_json::from_slice(&payload)
            .map_err(|_| JoseError::Malformed("the token's claims are not a JSON object".into()))?;
        self.check(&claims, now)?;
        Ok(claims)
    }

    /// The registered claims' checks on `claims` at `now`.
    pub fn check(&self, claims: &Map<String, Value>, now: i64) -> Result<(), JoseError> {
        let leeway = i64::try_from(self.leeway.as_secs()).unwrap_or(i64::MAX);
        let time = |name: &'static str| match claims.get(name) {
            None => Ok(None),
            Some(value) => value.as_f64().map(|t| Some(t as i64)).ok_or(JoseError::MissingClaim(name)),
        };
        let expires = time("exp")?.ok_or(JoseError::MissingClaim("exp"))?;
        if now > expires.saturating_add(leeway) {
            return Err(JoseError::Expired);
        }
        if time("nbf")?.is_some_and(|nbf| now < nbf.saturating_sub(leeway)) {
            return Err(JoseError::NotYetValid);
        }
        match claims.get("iss").and_then(Value::as_str) {
            Some(issuer) if issuer == self.issuer => {}
            Some(issuer) => return Err(JoseError::WrongIssuer(issuer.to_owned())),
            None => return Err(JoseError::MissingClaim("iss")),
        }
        let meant_for_us = |aud: &Value| aud.as_str().is_some_and(|aud| self.audiences.iter().any(|a| a == aud));
        let audience_ok = match claims.get("aud") {
            Some(Value::Array(audiences)) => audiences.iter().any(meant_for_us),
            Some(audience) => meant_for_us(audience),
            None => false,
        };
        if !audience_ok {
            return Err(JoseError::WrongAudience);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{b64, SigningKey};

    fn claims(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    fn setup() -> (SigningKey, PublicKeys, Validation) {
        let key = SigningKey::generate(Algorithm::ES256).unwrap();
        let keys = PublicKeys::from_keys([key.public_key()]);
        (key, keys, Validation::new("https://idp", "agent").with_leeway(Duration::from_secs(10)))
    }

    #[test]
    fn each_registered_claim_is_checked_with_its_leeway() {
        let (key, keys, validation) = setup();
        let now = 1_000_000;
        let at = |c: Value| validation.validate_at(&key.sign_jwt(&claims(c)), &keys, now);
        assert!(at(json!({"iss": "https://idp", "aud": "agent", "exp": now - 5})).is_ok());
        assert_eq!(at(json!({"iss": "https://idp", "aud": "agent", "exp": now - 11})), Err(JoseError::Expired));
        assert_eq!(at(json!({"iss": "https://idp", "aud": "agent"})), Err(JoseError::MissingClaim("exp")));
        let early = json!({"iss": "https://idp", "aud": "agent", "exp": now + 60, "nbf": now + 11});
        assert_eq!(at(early), Err(JoseError::NotYetValid));
        let other = json!({"iss": "https://evil", "aud": "agent", "exp": now + 60});
        assert_eq!(at(other), Err(JoseError::WrongIssuer("https://evil".into())));
        assert!(at(json!({"iss": "https://idp", "aud": ["x", "agent"], "exp": now + 60})).is_ok());
        assert_eq!(at(json!({"iss": "https://idp", "aud": "x", "exp": now + 60})), Err(JoseError::WrongAudience));
    }

    #[test]
    fn a_token_cannot_choose_how_it_is_checked() {
        let (key, keys, validation) = setup();
        let body =
            b64(serde_json::to_vec(&json!({"iss": "https://idp", "aud": "agent", "exp": unix_now() + 60})).unwrap());
        let none = format!("{}.{body}.", b64(br#"{"alg":"none"}"#));
        assert_eq!(validation.validate(&none, &keys), Err(JoseError::UnsupportedAlgorithm("none".into())));

        // HS256 keyed with the public key's JWK, the classic confusion attack.
        let header = b64(format!(r#"{{"alg":"HS256","kid":"{}"}}"#, key.kid()));
        let public = serde_json::to_vec(&key.public_key().to_jwk()).unwrap();
        let mac = ring::hmac::sign(
            &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &public),
            format!("{header}.{body}").as_bytes(),
        );
        let forged = format!("{header}.{body}.{}", b64(mac));
        assert_eq!(validation.validate(&forged, &keys), Err(JoseError::UnsupportedAlgorithm("HS256".into())));

        // An EdDSA header over an ECDSA key's id finds no key that fits.
        let eddsa = SigningKey::generate(Algorithm::EdDSA).unwrap().with_kid(key.kid());
        let token = eddsa.sign_jwt(&claims(json!({"iss": "https://idp", "aud": "agent", "exp": unix_now() + 60})));
        assert_eq!(validation.validate(&token, &keys), Err(JoseError::UnknownKey(Some(key.kid().to_owned()))));

        // A flipped payload byte breaks the signature.
        let good = key.sign_jwt(&claims(json!({"iss": "https://idp", "aud": "agent", "exp": unix_now() + 60})));
        let mut parts: Vec<&str> = good.split('.').collect();
        let widened = json!({"iss": "https://idp", "aud": "agent", "exp": unix_now() + 60, "scope": "admin"});
        let widened = b64(serde_json::to_vec(&widened).unwrap());
        parts[1] = &widened;
        assert_eq!(validation.validate(&parts.join("."), &keys), Err(JoseError::BadSignature));
    }
}
