//! The signature algorithms spoken, each bound to one key type.

use std::fmt;

/// A JWS signature algorithm (RFC 7518 §3, RFC 8037 for EdDSA). Each is bound to one key type:
/// a key verifies only the algorithms of its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// ECDSA on P-256 with SHA-256.
    ES256,
    /// ECDSA on P-384 with SHA-384.
    ES384,
    /// Ed25519.
    EdDSA,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    RS256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    RS384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    RS512,
    /// RSASSA-PSS with SHA-256.
    PS256,
    /// RSASSA-PSS with SHA-384.
    PS384,
    /// RSASSA-PSS with SHA-512.
    PS512,
}

/// The kind of key an algorithm needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyType {
    P256,
    P384,
    Ed25519,
    Rsa,
}

impl Algorithm {
    /// Every algorithm spoken.
    pub const ALL: [Algorithm; 9] = [
        Self::ES256,
        Self::ES384,
        Self::EdDSA,
        Self::RS256,
        Self::RS384,
        Self::RS512,
        Self::PS256,
        Self::PS384,
        Self::PS512,
    ];

    /// Its name in a JOSE header.
    pub fn name(self) -> &'static str {
        match self {
            Self::ES256 => "ES256",
            Self::ES384 => "ES384",
            Self::EdDSA => "EdDSA",
            Self::RS256 => "RS256",
            Self::RS384 => "RS384",
            Self::RS512 => "RS512",
            Self::PS256 => "PS256",
            Self::PS384 => "PS384",
            Self::PS512 => "PS512",
        }
    }

    /// The algorithm a header names, if it is one spoken here (never `none` or an HMAC).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|alg| alg.name() == name)
    }

    pub(crate) fn key_type(self) -> KeyType {
        match self {
            Self::ES256 => KeyType::P256,
            Self::ES384 => KeyType::P384,
            Self::EdDSA => KeyType::Ed25519,
            _ => KeyType::Rsa,
        }
    }

    /// How ring verifies it: an ECDSA or Ed25519 algorithm for a raw public key, or RSA
    /// parameters for a key given as its modulus and exponent.
    pub(crate) fn verification(self) -> Verification {
        use ring::signature as sig;
        match self {
            Self::ES256 => Verification::Raw(&sig::ECDSA_P256_SHA256_FIXED),
            Self::ES384 => Verification::Raw(&sig::ECDSA_P384_SHA384_FIXED),
            Self::EdDSA => Verification::Raw(&sig::ED25519),
            Self::RS256 => Verification::Rsa(&sig::RSA_PKCS1_2048_8192_SHA256),
            Self::RS384 => Verification::Rsa(&sig::RSA_PKCS1_2048_8192_SHA384),
            Self::RS512 => Verification::Rsa(&sig::RSA_PKCS1_2048_8192_SHA512),
            Self::PS256 => Verification::Rsa(&sig::RSA_PSS_2048_8192_SHA256),
            Self::PS384 => Verification::Rsa(&sig::RSA_PSS_2048_8192_SHA384),
            Self::PS512 => Verification::Rsa(&sig::RSA_PSS_2048_8192_SHA512),
        }
    }
}

/// How ring verifies one algorithm.
pub(crate) enum Verification {
    Raw(&'static dyn ring::signature::VerificationAlgorithm),
    Rsa(&'static ring::signature::RsaParameters),
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Algorithm {
    type Err = crate::JoseError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::from_name(name).ok_or_else(|| crate::JoseError::UnsupportedAlgorithm(name.to_owned()))
    }
}
