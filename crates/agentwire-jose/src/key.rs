//! The private keys this crate signs with: ECDSA P-256 (ES256) and Ed25519 (EdDSA).

use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair as _};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::PrivateKeyDer;

use crate::{Algorithm, JoseError, PublicKey};

/// A private key for signing, with the key id its signatures name: by default its JWK
/// thumbprint (RFC 7638), which any verifier computes alike.
///
/// ```
/// use agentwire_jose::{Algorithm, SigningKey};
///
/// let pem = SigningKey::generate_pem(Algorithm::EdDSA).unwrap();
/// let key = SigningKey::from_pem(&pem).unwrap();
/// assert_eq!(key.algorithm(), Algorithm::EdDSA);
/// assert_eq!(key.kid(), key.public_key().thumbprint());
/// ```
pub struct SigningKey {
    pair: Pair,
    kid: String,
    rng: SystemRandom,
}

enum Pair {
    Es256(EcdsaKeyPair),
    EdDsa(Ed25519KeyPair),
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey").field("alg", &self.algorithm()).field("kid", &self.kid).finish_non_exhaustive()
    }
}

/// The DER of a PKCS#8 v1 Ed25519 private key up to its 32-byte seed: the sequence, version 0,
/// the algorithm 1.3.101.112, and the octet string holding the seed's octet string.
const ED25519_PKCS8_V1_PREFIX: [u8; 16] =
    [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

impl SigningKey {
    /// A new key, made from the system's random source.
    pub fn generate(alg: Algorithm) -> Result<Self, JoseError> {
        Self::from_pem(&Self::generate_pem(alg)?)
    }

    /// A new key for `alg` (ES256 or EdDSA) as a PKCS#8 PEM document, to be written to a file.
    pub fn generate_pem(alg: Algorithm) -> Result<String, JoseError> {
        let rng = SystemRandom::new();
        let document = match alg {
            Algorithm::ES256 => EcdsaKeyPair::generate_pkcs8(&ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng),
            Algorithm::EdDSA => Ed25519KeyPair::generate_pkcs8(&rng),
            other => return Err(JoseError::UnsupportedAlgorithm(format!("{other} (signing takes ES256 or EdDSA)"))),
        }
        .map_err(|_| JoseError::InvalidKey("the system's random source failed".into()))?;
        let der = match alg {
            // ring writes Ed25519 keys as PKCS#8 v2 with the public key in a form OpenSSL refuses;
            // the v1 form (the seed alone, RFC 8410 §7) is read by every tool, ring included.
            Algorithm::EdDSA => [&ED25519_PKCS8_V1_PREFIX[..], &document.as_ref()[16..48]].concat(),
            _ => document.as_ref().to_vec(),
        };
        use base64::Engine as _;
        let body = base64::engine::general_purpose::STANDARD.encode(der);
        let lines: Vec<&str> = body.as_bytes().chunks(64).map(|l| std::str::from_utf8(l).unwrap_or_default()).collect();
        Ok(format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", lines.join("\n")))
    }

    /// Reads a PKCS#8 PEM private key (`BEGIN PRIVATE KEY`) on P-256 or Ed25519, as `openssl
    /// genpkey` and most tools write it.
    pub fn from_pem(pem: &str) -> Result<Self, JoseError> {
        let der = PrivateKeyDer::from_pem_slice(pem.as_bytes())
            .map_err(|e| JoseError::InvalidKey(format!("not a PEM private key: {e}")))?;
        let PrivateKeyDer::Pkcs8(der) = der else {
            return Err(JoseError::InvalidKey(
                "the key must be PKCS#8 (BEGIN PRIVATE KEY); convert it with `openssl pkcs8 -topk8 -nocrypt`".into(),
            ));
        };
        Self::from_pkcs8(der.secret_pkcs8_der())
    }

    /// Reads a PKCS#8 DER private key on P-256 or Ed25519.
    pub fn from_pkcs8(der: &[u8]) -> Result<Self, JoseError> {
        let rng = SystemRandom::new();
        let pair = if let Ok(pair) =
            EcdsaKeyPair::from_pkcs8(&ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING, der, &rng)
        {
            Pair::Es256(pair)
        } else if let Ok(pair) = Ed25519KeyPair::from_pkcs8_maybe_unchecked(der) {
            Pair::EdDsa(pair)
        } else {
            return Err(JoseError::InvalidKey("a signing key must be a P-256 (ES256) or Ed25519 (EdDSA) key".into()));
        };
        let mut key = Self { pair, kid: String::new(), rng };
        key.kid = key.public_key().thumbprint();
        Ok(key)
    }

    /// The same key, naming itself `kid` in its signatures.
    pub fn with_kid(mut self, kid: impl Into<String>) -> Self {
        self.kid = kid.into();
        self
    }

    /// The algorithm it signs with.
    pub fn algorithm(&self) -> Algorithm {
        match self.pair {
            Pair::Es256(_) => Algorithm::ES256,
            Pair::EdDsa(_) => Algorithm::EdDSA,
        }
    }

    /// Its key id.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// Its public half, with its key id and algorithm.
    pub fn public_key(&self) -> PublicKey {
        let point = match &self.pair {
            Pair::Es256(pair) => pair.public_key().as_ref().to_vec(),
            Pair::EdDsa(pair) => pair.public_key().as_ref().to_vec(),
        };
        PublicKey::from_parts(self.kid.clone(), self.algorithm(), point)
    }

    /// A signature over `message` in JWS form (ECDSA's fixed `r || s`).
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        match &self.pair {
            // Signing fails only when the random source does, which ring treats as fatal too.
            Pair::Es256(pair) => pair.sign(&self.rng, message).map(|s| s.as_ref().to_vec()).unwrap_or_default(),
            Pair::EdDsa(pair) => pair.sign(message).as_ref().to_vec(),
        }
    }
}
