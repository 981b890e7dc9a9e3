//! Why a key, a signature or a token was refused.

/// Why a key, a signature or a token was refused. The messages are fit for a client: they say
/// what is wrong with what it sent and nothing about the keys held.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JoseError {
    /// Not a JWS, a JWT or a JWK as the RFCs define them.
    #[error("{0}")]
    Malformed(String),
    /// `none`, an HMAC algorithm, or one this crate does not speak.
    #[error("the algorithm {0:?} is not accepted")]
    UnsupportedAlgorithm(String),
    /// No key of the set has the `kid` the header names (or, without a `kid`, fits the algorithm).
    #[error("no known key has the id {}", .0.as_deref().unwrap_or("(none given)"))]
    UnknownKey(Option<String>),
    /// The signature does not verify with the key it names.
    #[error("the signature does not verify")]
    BadSignature,
    /// A key cannot be used: not a key of a supported type, or not well formed.
    #[error("unusable key: {0}")]
    InvalidKey(String),
    /// The token's `exp` has passed (beyond the leeway).
    #[error("the token has expired")]
    Expired,
    /// The token's `nbf` is still ahead (beyond the leeway).
    #[error("the token is not valid yet")]
    NotYetValid,
    /// The token's `iss` is not the expected issuer.
    #[error("the token was issued by {0}, which is not trusted")]
    WrongIssuer(String),
    /// The token's `aud` does not name this audience.
    #[error("the token is not meant for this audience")]
    WrongAudience,
    /// A claim the validation requires is absent or of the wrong type.
    #[error("the token has no valid {0:?} claim")]
    MissingClaim(&'static str),
    /// A signed notification's body is not the one its token was made for.
    #[error("the body is not the one the token was signed for")]
    BodyMismatch,
    /// A signed notification's token was seen before.
    #[error("the token was used before")]
    Replayed,
    /// A card carries no signature at all.
    #[error("the card is not signed")]
    Unsigned,
}
