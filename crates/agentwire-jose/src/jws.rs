//! JSON Web Signatures (RFC 7515): the compact form of tokens, and the detached form of card
//! signatures, whose payload travels beside the signature rather than inside it.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{b64, unb64, Algorithm, JoseError, PublicKeys, SigningKey};

/// The protected header of a signature.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The algorithm. A header without one is refused.
    #[serde(default)]
    pub alg: String,
    /// The id of the key that signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kid: Option<String>,
    /// The media type of the whole (`JWT`, `JOSE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typ: Option<String>,
    /// Where the signer's key set is published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jku: Option<String>,
    /// Other members, kept so that they are signed as written.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Header {
    /// The header of an encoded protected header (its first part), unchecked: for choosing a
    /// key set (its `jku`) before verifying.
    pub fn decode(protected: &str) -> Result<Self, JoseError> {
        serde_json::from_slice(&unb64(protected, "protected header")?)
            .map_err(|e| JoseError::Malformed(format!("the protected header is not a JSON object: {e}")))
    }

    /// The header `key` signs with: its algorithm and key id, and `typ`.
    pub fn for_key(key: &SigningKey, typ: &str) -> Self {
        Self {
            alg: key.algorithm().name().to_owned(),
            kid: Some(key.kid().to_owned()),
            typ: Some(typ.to_owned()),
            ..Self::default()
        }
    }
}

impl SigningKey {
    /// A JWT (`typ: JWT`) carrying `claims`.
    pub fn sign_jwt(&self, claims: &Map<String, Value>) -> String {
        let payload = serde_json::to_vec(claims).unwrap_or_default();
        sign_compact(self, &Header::for_key(self, "JWT"), &payload)
    }
}

/// `header.payload.signature`, signed by `key`. The header's `alg` is set to the key's.
pub fn sign_compact(key: &SigningKey, header: &Header, payload: &[u8]) -> String {
    let (protected, signature) = sign_detached(key, header, payload);
    format!("{protected}.{}.{signature}", b64(payload))
}

/// The encoded protected header and the signature over it and `payload`, for a signature whose
/// payload is carried elsewhere (RFC 7515 appendix F).
pub fn sign_detached(key: &SigningKey, header: &Header, payload: &[u8]) -> (String, String) {
    let header = Header { alg: key.algorithm().name().to_owned(), ..header.clone() };
    let protected = b64(serde_json::to_vec(&header).unwrap_or_default());
    let signature = key.sign(format!("{protected}.{}", b64(payload)).as_bytes());
    (protected, b64(signature))
}

/// Verifies a compact JWS with `keys`, accepting only `allowed` algorithms, and returns its
/// header and payload.
pub fn verify_compact(token: &str, keys: &PublicKeys, allowed: &[Algorithm]) -> Result<(Header, Vec<u8>), JoseError> {
    let mut parts = token.split('.');
    let (Some(protected), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JoseError::Malformed("a compact JWS has three parts separated by dots".into()));
    };
    let header = verify_input(protected, payload, signature, keys, allowed)?;
    Ok((header, unb64(payload, "payload")?))
}

/// Verifies a detached signature over `payload` with `keys`, accepting only `allowed`
/// algorithms, and returns its protected header.
pub fn verify_detached(
    protected: &str,
    signature: &str,
    payload: &[u8],
    keys: &PublicKeys,
    allowed: &[Algorithm],
) -> Result<Header, JoseError> {
    verify_input(protected, &b64(payload), signature, keys, allowed)
}

fn verify_input(
    protected: &str,
    payload: &str,
    signature: &str,
    keys: &PublicKeys,
    allowed: &[Algorithm],
) -> Result<Header, JoseError> {
    let header = Header::decode(protected)?;
    if header.alg.is_empty() {
        return Err(JoseError::Malformed("the protected header names no algorithm".into()));
    }
    let alg = Algorithm::from_name(&header.alg)
        .filter(|alg| allowed.contains(alg))
        .ok_or_else(|| JoseError::UnsupportedAlgorithm(header.alg.clone()))?;
    if header.other.contains_key("crit") {
        return Err(JoseError::Malformed("no critical header extension is understood".into()));
    }
    let signature = unb64(signature, "signature")?;
    let input = format!("{protected}.{payload}");
    let verified = {
        let mut candidates = keys.candidates(header.kid.as_deref(), alg).peekable();
        if candidates.peek().is_none() {
            return Err(JoseError::UnknownKey(header.kid.clone()));
        }
        candidates.any(|key| key.verify(alg, input.as_bytes(), &signature).is_ok())
    };
    if verified {
        Ok(header)
    } else {
        Err(JoseError::BadSignature)
    }
}
