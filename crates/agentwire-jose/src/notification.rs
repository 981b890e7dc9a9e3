//! Signed push notifications: each webhook delivery carries a short-lived JWT, signed by the
//! agent's key, that binds it to the webhook it was sent to, the task it is about and its exact
//! body. docs/IDENTITY.md describes the format for verifiers in other languages.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::{b64, unix_now, Algorithm, Header, JoseError, PublicKeys, SigningKey, Validation};

/// The header a delivery's token travels in.
pub const NOTIFICATION_SIGNATURE_HEADER: &str = "A2A-Notification-Signature";

/// How long a delivery's token is valid after it was made.
pub const NOTIFICATION_TOKEN_LIFETIME: Duration = Duration::from_secs(300);

/// The token for one delivery of `body` to `webhook_url` about `task_id`, by the agent `issuer`
/// (its base URL), naming where its key set is published (`jku`). Claims: `iss`, `aud` (the
/// webhook URL), `iat`, `exp` (five minutes on), `jti` (unique), `task_id`, and `body_sha256`
/// (base64url of the SHA-256 of the body's bytes).
pub fn sign_notification(
    key: &SigningKey,
    issuer: &str,
    jku: Option<&str>,
    webhook_url: &str,
    task_id: &str,
    body: &[u8],
) -> String {
    let now = unix_now();
    let lifetime = i64::try_from(NOTIFICATION_TOKEN_LIFETIME.as_secs()).unwrap_or(300);
    let claims = json!({
        "iss": issuer,
        "aud": webhook_url,
        "iat": now,
        "exp": now + lifetime,
        "jti": b64(random_id()),
        "task_id": task_id,
        "body_sha256": body_digest(body),
    });
    let header = Header { jku: jku.map(str::to_owned), ..Header::for_key(key, "JWT") };
    let payload = serde_json::to_vec(&claims).unwrap_or_default();
    crate::sign_compact(key, &header, &payload)
}

fn random_id() -> [u8; 16] {
    let mut id = [0u8; 16];
    // The system's random source fails only where ring's signing would fail too.
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut id);
    id
}

fn body_digest(body: &[u8]) -> String {
    b64(ring::digest::digest(&ring::digest::SHA256, body))
}

/// Checks the tokens of deliveries to one webhook: signed by a key of the agent, issued by it
/// for this webhook's URL, unexpired, over the very body received, and never seen before (each
/// `jti` is remembered until its token expires).
///
/// ```
/// use agentwire_jose::{sign_notification, Algorithm, JoseError, NotificationVerifier, PublicKeys, SigningKey};
///
/// let agent = SigningKey::generate(Algorithm::ES256).unwrap();
/// let verifier = NotificationVerifier::new(
///     PublicKeys::from_keys([agent.public_key()]),
///     "https://agent.example",
///     "https://me.example/hook",
/// );
/// let body = br#"{"task":{"id":"t-1"}}"#;
/// let token = sign_notification(&agent, "https://agent.example", None, "https://me.example/hook", "t-1", body);
/// assert_eq!(verifier.verify(&token, body).unwrap()["task_id"], "t-1");
/// assert_eq!(verifier.verify(&token, body), Err(JoseError::Replayed));
/// let other = sign_notification(&agent, "https://agent.example", None, "https://me.example/hook", "t-1", body);
/// assert_eq!(verifier.verify(&other, b"{}"), Err(JoseError::BodyMismatch));
/// ```
#[derive(Debug)]
pub struct NotificationVerifier {
    keys: PublicKeys,
    validation: Validation,
    /// Token ids seen, with when each token expires.
    seen: Mutex<HashMap<String, i64>>,
}

impl NotificationVerifier {
    /// Tokens of the agent `issuer` (its base URL), signed by one of `keys`, for deliveries to
    /// `webhook_url` (the URL given in the push config).
    pub fn new(keys: PublicKeys, issuer: &str, webhook_url: &str) -> Self {
        let validation = Validation::new(issuer, webhook_url)
            .with_algorithms([Algorithm::ES256, Algorithm::ES384, Algorithm::EdDSA])
            .with_leeway(Duration::from_secs(30));
        Self { keys, validation, seen: Mutex::default() }
    }

    /// The token's claims, if it is valid for `body` and new.
    pub fn verify(&self, token: &str, body: &[u8]) -> Result<Map<String, Value>, JoseError> {
        let claims = self.validation.validate(token, &self.keys)?;
        let now = unix_now();
        let issued = claims.get("iat").and_then(Value::as_i64).ok_or(JoseError::MissingClaim("iat"))?;
        let lifetime = i64::try_from(NOTIFICATION_TOKEN_LIFETIME.as_secs()).unwrap_or(300);
        if issued > now + 30 || now - issued > lifetime + 30 {
            return Err(JoseError::Expired);
        }
        if claims.get("body_sha256").and_then(Value::as_str) != Some(body_digest(body).as_str()) {
            return Err(JoseError::BodyMismatch);
        }
        let id = claims.get("jti").and_then(Value::as_str).ok_or(JoseError::MissingClaim("jti"))?;
        let expires = claims.get("exp").and_then(Value::as_i64).unwrap_or(now);
        let mut seen = self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        // A forgotten id's token has expired: it would be refused for that before its id mattered.
        seen.retain(|_, until| *until + 60 >= now);
        if seen.insert(id.to_owned(), expires).is_some() {
            return Err(JoseError::Replayed);
        }
        Ok(claims)
    }
}

/// The header and claims of a token without checking anything: for logs and tests.
pub fn inspect(token: &str) -> Option<(Header, Map<String, Value>)> {
    let mut parts = token.split('.');
    let header = Header::decode(parts.next()?).ok()?;
    let claims = serde_json::from_slice(&crate::unb64(parts.next()?, "payload").ok()?).ok()?;
    Some((header, claims))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_for_another_webhook_or_agent_or_key_is_refused() {
        let agent = SigningKey::generate(Algorithm::EdDSA).unwrap();
        let stranger = SigningKey::generate(Algorithm::EdDSA).unwrap().with_kid(agent.kid());
        let verifier =
            NotificationVerifier::new(PublicKeys::from_keys([agent.public_key()]), "https://agent", "https://me/hook");
        let body = b"{}";
        let sign = |key: &SigningKey, issuer: &str, url: &str| sign_notification(key, issuer, None, url, "t", body);
        assert!(verifier.verify(&sign(&agent, "https://agent", "https://me/hook"), body).is_ok());
        assert_eq!(
            verifier.verify(&sign(&agent, "https://agent", "https://other/hook"), body),
            Err(JoseError::WrongAudience)
        );
        assert_eq!(
            verifier.verify(&sign(&agent, "https://impostor", "https://me/hook"), body),
            Err(JoseError::WrongIssuer("https://impostor".into()))
        );
        assert_eq!(
            verifier.verify(&sign(&stranger, "https://agent", "https://me/hook"), body),
            Err(JoseError::BadSignature)
        );
        let (header, claims) = inspect(&sign(&agent, "https://agent", "https://me/hook")).unwrap();
        assert_eq!(
            (header.typ.as_deref(), claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap()),
            (Some("JWT"), 300)
        );
    }
}
