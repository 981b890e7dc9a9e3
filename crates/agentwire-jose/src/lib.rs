//! JOSE for A2A, on the `ring` already in agentwire's TLS stack: JSON Web Key sets, JSON Web
//! Signatures (compact and detached), JSON Web Token validation, the signed agent cards of
//! A2A v1.0 §8.4, and signed push notifications.
//!
//! Only asymmetric algorithms are spoken (ES256, ES384, EdDSA, RS256–512, PS256–512), each fixed
//! to its key type, so a token can never choose how it is checked: `none` and the HMAC
//! algorithms are refused outright, and an RSA key never verifies an ECDSA signature.
//!
//! ```
//! use agentwire_jose::{Algorithm, PublicKeys, SigningKey, Validation};
//! use serde_json::json;
//!
//! let key = SigningKey::generate(Algorithm::ES256).unwrap();
//! let keys = PublicKeys::from_keys([key.public_key()]);
//! let now = agentwire_jose::unix_now();
//! let claims = json!({"iss": "https://idp.example", "sub": "alice", "aud": "agent", "exp": now + 60});
//! let token = key.sign_jwt(claims.as_object().unwrap());
//!
//! let validation = Validation::new("https://idp.example", "agent");
//! let claims = validation.validate(&token, &keys).unwrap();
//! assert_eq!(claims["sub"], "alice");
//! ```

mod alg;
mod card;
mod error;
mod jwk;
mod jws;
mod jwt;
mod key;
mod notification;

pub use alg::Algorithm;
pub use card::{canonical_card, sign_card, verify_card};
pub use error::JoseError;
pub use jwk::{Jwk, JwkSet, PublicKey, PublicKeys};
pub use jws::{sign_compact, sign_detached, verify_compact, verify_detached, Header};
pub use jwt::{unix_now, Validation};
pub use key::SigningKey;
pub use notification::{
    inspect, sign_notification, NotificationVerifier, NOTIFICATION_SIGNATURE_HEADER, NOTIFICATION_TOKEN_LIFETIME,
};

/// Base64url without padding, the encoding of every JOSE member.
pub(crate) fn b64(bytes: impl AsRef<[u8]>) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Decodes base64url without padding; `what` names the member in the error.
pub(crate) fn unb64(text: &str, what: &str) -> Result<Vec<u8>, JoseError> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .map_err(|_| JoseError::Malformed(format!("the {what} is not base64url")))
}
