//! Signed agent cards (A2A v1.0 §8.4): a detached JWS over the canonical form of the card.
//!
//! The canonical form is the card's v1.0 projection (parsed into the v1.0 model, so members of
//! other generations that a combined card carries fall away) without `signatures`, with empty
//! strings, arrays and objects removed at every depth, in RFC 8785 form. The empty-member
//! pruning is what the official Python and JS SDKs apply (and so what deployed verifiers
//! check), where the specification's own example keeps such members: see docs/DECISIONS.md.

use agentwire_types::{AgentCard, AgentCardSignature};
use serde_json::Value;

use crate::{sign_detached, verify_detached, Algorithm, Header, JoseError, PublicKeys, SigningKey};

/// The bytes a card signature covers.
///
/// ```
/// use agentwire_types::AgentCard;
///
/// let card: AgentCard = serde_json::from_str(
///     r#"{"name":"Example Agent","description":"","capabilities":{"streaming":false,"pushNotifications":false,"extensions":[]},"skills":[]}"#,
/// ).unwrap();
/// assert_eq!(
///     String::from_utf8(agentwire_jose::canonical_card(&card)).unwrap(),
///     r#"{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}"#,
/// );
/// ```
pub fn canonical_card(card: &AgentCard) -> Vec<u8> {
    let mut value = serde_json::to_value(card).unwrap_or_default();
    if let Value::Object(members) = &mut value {
        members.remove("signatures");
    }
    prune_empty(&mut value);
    serde_json_canonicalizer::to_vec(&value).unwrap_or_default()
}

/// Removes empty strings, arrays and objects, innermost first, so that a member left empty by
/// the pruning goes too.
fn prune_empty(value: &mut Value) {
    let is_empty = |v: &Value| match v {
        Value::String(s) => s.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(members) => members.is_empty(),
        _ => false,
    };
    match value {
        Value::Object(members) => {
            members.values_mut().for_each(prune_empty);
            members.retain(|_, v| !is_empty(v));
        }
        Value::Array(items) => {
            items.iter_mut().for_each(prune_empty);
            items.retain(|v| !is_empty(v));
        }
        _ => {}
    }
}

/// A signature of `card` by `key` (`typ: JOSE`, the key's `kid`, and `jku` when given: where
/// the key set holding the key is published).
///
/// ```
/// use agentwire_jose::{sign_card, verify_card, Algorithm, PublicKeys, SigningKey};
/// use agentwire_types::AgentCard;
///
/// let key = SigningKey::generate(Algorithm::ES256).unwrap();
/// let mut card = AgentCard { name: "Signed".into(), ..AgentCard::default() };
/// card.signatures.push(sign_card(&card, &key, None));
/// let keys = PublicKeys::from_keys([key.public_key()]);
/// assert_eq!(verify_card(&card, &keys, &[Algorithm::ES256]).unwrap().kid.as_deref(), Some(key.kid()));
///
/// card.name = "Changed".into();
/// assert!(verify_card(&card, &keys, &[Algorithm::ES256]).is_err());
/// ```
pub fn sign_card(card: &AgentCard, key: &SigningKey, jku: Option<&str>) -> AgentCardSignature {
    let header = Header { jku: jku.map(str::to_owned), ..Header::for_key(key, "JOSE") };
    let (protected, signature) = sign_detached(key, &header, &canonical_card(card));
    AgentCardSignature { protected, signature, header: None }
}

/// The protected header of the first of the card's signatures that verifies with `keys` and an
/// `allowed` algorithm; otherwise why the last one failed ([`JoseError::Unsigned`] for a card
/// without signatures).
pub fn verify_card(card: &AgentCard, keys: &PublicKeys, allowed: &[Algorithm]) -> Result<Header, JoseError> {
    let payload = canonical_card(card);
    let mut outcome = Err(JoseError::Unsigned);
    for signature in &card.signatures {
        outcome = verify_detached(&signature.protected, &signature.signature, &payload, keys, allowed);
        if outcome.is_ok() {
            break;
        }
    }
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector on which the Python and JS SDKs (1.3.0) agree byte for byte.
    #[test]
    fn the_canonical_form_is_the_official_sdks() {
        let input = r#"{"name":"Café Agent ✓","description":"","version":"1.0.0","supportedInterfaces":[{"url":"https://a.example/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":false,"pushNotifications":true,"extensions":[{"uri":"urn:x","required":false,"params":{"n":0.000001,"i":1,"😀":1,"！":2}}]},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[],"securitySchemes":{"bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer"}}}}"#;
        let expected = r#"{"capabilities":{"extensions":[{"params":{"i":1,"n":0.000001,"😀":1,"！":2},"uri":"urn:x"}],"pushNotifications":true,"streaming":false},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"name":"Café Agent ✓","securitySchemes":{"bearer":{"httpAuthSecurityScheme":{"scheme":"Bearer"}}},"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"https://a.example/"}],"version":"1.0.0"}"#;
        let card: AgentCard = serde_json::from_str(input).unwrap();
        assert_eq!(String::from_utf8(canonical_card(&card)).unwrap(), expected);
    }

    #[test]
    fn members_of_another_generation_do_not_break_a_signature() {
        let key = SigningKey::generate(Algorithm::EdDSA).unwrap();
        let mut card = AgentCard { name: "Combined".into(), version: "1".into(), ..AgentCard::default() };
        card.signatures.push(sign_card(&card, &key, Some("https://a.example/.well-known/jwks.json")));
        let mut served = serde_json::to_value(&card).unwrap();
        served["url"] = "https://a.example/".into();
        served["protocolVersion"] = "0.3.0".into();
        let read: AgentCard = serde_json::from_value(served).unwrap();
        let keys = PublicKeys::from_keys([key.public_key()]);
        let header = verify_card(&read, &keys, &[Algorithm::EdDSA]).unwrap();
        assert_eq!(header.jku.as_deref(), Some("https://a.example/.well-known/jwks.json"));
        assert_eq!(header.typ.as_deref(), Some("JOSE"));
        assert_eq!(
            verify_card(&read, &keys, &[Algorithm::ES256]),
            Err(JoseError::UnsupportedAlgorithm("EdDSA".into()))
        );
    }
}
