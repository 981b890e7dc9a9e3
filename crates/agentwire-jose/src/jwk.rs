//! JSON Web Keys (RFC 7517) and the public keys read from them.

use serde::{Deserialize, Serialize};

use crate::alg::{KeyType, Verification};
use crate::{b64, unb64, Algorithm, JoseError};

/// A JSON Web Key as it appears in a key set: the public members of the EC, OKP and RSA key
/// types. Private members are never read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Jwk {
    /// Key type: `EC`, `OKP`, `RSA` (or another, which is skipped).
    pub kty: String,
    /// Key id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kid: Option<String>,
    /// The one algorithm the key is for, if the set pins it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alg: Option<String>,
    /// `sig` or `enc`.
    #[serde(default, rename = "use", skip_serializing_if = "Option::is_none")]
    pub key_use: Option<String>,
    /// Curve of an EC or OKP key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crv: Option<String>,
    /// EC x coordinate, or the OKP public key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<String>,
    /// EC y coordinate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<String>,
    /// RSA modulus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<String>,
    /// RSA public exponent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e: Option<String>,
}

/// A JWK Set (RFC 7517 §5).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JwkSet {
    /// The keys.
    #[serde(default)]
    pub keys: Vec<Jwk>,
}

/// A public key that verifies signatures of its own type's algorithms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    kid: Option<String>,
    /// The algorithm the key was published for, when its JWK names one.
    alg: Option<Algorithm>,
    material: Material,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Material {
    /// An uncompressed point (`04 || x || y`), as ring takes it.
    Ec {
        key_type: KeyType,
        point: Vec<u8>,
    },
    Ed25519(Vec<u8>),
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
}

impl PublicKey {
    /// Reads the public half of an EC (P-256, P-384), OKP (Ed25519) or RSA JWK meant for
    /// signatures.
    pub fn from_jwk(jwk: &Jwk) -> Result<Self, JoseError> {
        let invalid = |why: &str| JoseError::InvalidKey(why.to_owned());
        if jwk.key_use.as_deref().is_some_and(|u| u != "sig") {
            return Err(invalid("the key is not for signatures"));
        }
        let member = |value: &Option<String>, name: &str| {
            let text = value.as_deref().ok_or_else(|| invalid(&format!("a {} key needs {name}", jwk.kty)))?;
            unb64(text, name)
        };
        let material = match (jwk.kty.as_str(), jwk.crv.as_deref()) {
            ("EC", Some(crv @ ("P-256" | "P-384"))) => {
                let (key_type, size) = if crv == "P-256" { (KeyType::P256, 32) } else { (KeyType::P384, 48) };
                let (x, y) = (member(&jwk.x, "x")?, member(&jwk.y, "y")?);
                if x.len() != size || y.len() != size {
                    return Err(invalid("the coordinates do not fit the curve"));
                }
                Material::Ec { key_type, point: [&[4u8][..], &x, &y].concat() }
            }
            ("OKP", Some("Ed25519")) => {
                let x = member(&jwk.x, "x")?;
                if x.len() != 32 {
                    return Err(invalid("an Ed25519 key is 32 bytes"));
                }
                Material::Ed25519(x)
            }
            ("RSA", _) => Material::Rsa { n: member(&jwk.n, "n")?, e: member(&jwk.e, "e")? },
            (kty, crv) => return Err(invalid(&format!("key type {kty} (curve {crv:?}) is not spoken"))),
        };
        let mut key = Self { kid: jwk.kid.clone(), alg: None, material };
        if let Some(name) = &jwk.alg {
            let alg = Algorithm::from_name(name).ok_or_else(|| JoseError::UnsupportedAlgorithm(name.clone()))?;
            if alg.key_type() != key.key_type() {
                return Err(invalid(&format!("{name} does not fit a {} key", jwk.kty)));
            }
            key.alg = Some(alg);
        }
        Ok(key)
    }

    pub(crate) fn from_parts(kid: String, alg: Algorithm, point: Vec<u8>) -> Self {
        let material = match alg.key_type() {
            KeyType::Ed25519 => Material::Ed25519(point),
            key_type => Material::Ec { key_type, point },
        };
        Self { kid: Some(kid), alg: Some(alg), material }
    }

    /// Its key id.
    pub fn kid(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    fn key_type(&self) -> KeyType {
        match &self.material {
            Material::Ec { key_type, .. } => *key_type,
            Material::Ed25519(_) => KeyType::Ed25519,
            Material::Rsa { .. } => KeyType::Rsa,
        }
    }

    /// Whether it verifies `alg`: an algorithm of its key type, and the one its JWK pins if any.
    pub fn fits(&self, alg: Algorithm) -> bool {
        alg.key_type() == self.key_type() && self.alg.is_none_or(|pinned| pinned == alg)
    }

    /// Checks `signature` over `message` made with `alg`.
    pub fn verify(&self, alg: Algorithm, message: &[u8], signature: &[u8]) -> Result<(), JoseError> {
        if !self.fits(alg) {
            return Err(JoseError::UnsupportedAlgorithm(alg.name().to_owned()));
        }
        let verified = match (&self.material, alg.verification()) {
            (Material::Ec { point: raw, .. } | Material::Ed25519(raw), Verification::Raw(algorithm)) => {
                ring::signature::UnparsedPublicKey::new(algorithm, raw).verify(message, signature)
            }
            (Material::Rsa { n, e }, Verification::Rsa(parameters)) => {
                ring::signature::RsaPublicKeyComponents { n, e }.verify(parameters, message, signature)
            }
            _ => return Err(JoseError::UnsupportedAlgorithm(alg.name().to_owned())),
        };
        verified.map_err(|_| JoseError::BadSignature)
    }

    /// Its public JWK.
    pub fn to_jwk(&self) -> Jwk {
        let mut jwk = Jwk {
            kid: self.kid.clone(),
            alg: self.alg.map(|alg| alg.name().to_owned()),
            key_use: Some("sig".into()),
            ..Jwk::default()
        };
        match &self.material {
            Material::Ec { key_type, point } => {
                let size = (point.len() - 1) / 2;
                jwk.kty = "EC".into();
                jwk.crv = Some(if *key_type == KeyType::P256 { "P-256" } else { "P-384" }.into());
                jwk.x = Some(b64(&point[1..=size]));
                jwk.y = Some(b64(&point[1 + size..]));
            }
            Material::Ed25519(x) => {
                jwk.kty = "OKP".into();
                jwk.crv = Some("Ed25519".into());
                jwk.x = Some(b64(x));
            }
            Material::Rsa { n, e } => {
                jwk.kty = "RSA".into();
                jwk.n = Some(b64(n));
                jwk.e = Some(b64(e));
            }
        }
        jwk
    }

    /// Its JWK thumbprint (RFC 7638): base64url of the SHA-256 of the required members in
    /// lexicographic order, a key id every party computes alike.
    pub fn thumbprint(&self) -> String {
        let jwk = self.to_jwk();
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        let members = match jwk.kty.as_str() {
            "EC" => serde_json::json!({"crv": text(&jwk.crv), "kty": "EC", "x": text(&jwk.x), "y": text(&jwk.y)}),
            "OKP" => serde_json::json!({"crv": text(&jwk.crv), "kty": "OKP", "x": text(&jwk.x)}),
            _ => serde_json::json!({"e": text(&jwk.e), "kty": "RSA", "n": text(&jwk.n)}),
        };
        let canonical = serde_json_canonicalizer::to_string(&members).unwrap_or_default();
        b64(ring::digest::digest(&ring::digest::SHA256, canonical.as_bytes()))
    }
}

/// The keys a verifier trusts, found by key id.
///
/// ```
/// use agentwire_jose::PublicKeys;
///
/// let jwks = br#"{"keys":[
///   {"kty":"OKP","crv":"Ed25519","kid":"k1","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"},
///   {"kty":"oct","kid":"shared","k":"c2VjcmV0"}
/// ]}"#;
/// let keys = PublicKeys::from_jwks(jwks).unwrap();
/// assert_eq!(keys.len(), 1); // a symmetric key is never a verifier's
/// assert!(keys.has_kid("k1"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PublicKeys {
    keys: Vec<PublicKey>,
}

impl PublicKeys {
    /// These keys.
    pub fn from_keys(keys: impl IntoIterator<Item = PublicKey>) -> Self {
        Self { keys: keys.into_iter().collect() }
    }

    /// The signature keys of a JWK Set document, skipping those that cannot verify anything
    /// here (symmetric keys, encryption keys, unknown types), as RFC 7517 §5 asks.
    pub fn from_jwks(document: &[u8]) -> Result<Self, JoseError> {
        let set: JwkSet =
            serde_json::from_slice(document).map_err(|e| JoseError::Malformed(format!("not a JWK set: {e}")))?;
        Ok(Self::from_set(&set))
    }

    /// The signature keys of `set`, skipping those that cannot verify anything here.
    pub fn from_set(set: &JwkSet) -> Self {
        Self { keys: set.keys.iter().filter_map(|jwk| PublicKey::from_jwk(jwk).ok()).collect() }
    }

    /// The set as JWKs.
    pub fn to_jwk_set(&self) -> JwkSet {
        JwkSet { keys: self.keys.iter().map(PublicKey::to_jwk).collect() }
    }

    /// How many keys it holds.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Whether a key has this id.
    pub fn has_kid(&self, kid: &str) -> bool {
        self.keys.iter().any(|key| key.kid() == Some(kid))
    }

    /// The keys that may have made a signature with `alg` whose header names `kid`: the one with
    /// that id, or without an id every key fitting the algorithm.
    pub(crate) fn candidates<'a>(
        &'a self,
        kid: Option<&'a str>,
        alg: Algorithm,
    ) -> impl Iterator<Item = &'a PublicKey> + 'a {
        self.keys.iter().filter(move |key| kid.is_none_or(|kid| key.kid() == Some(kid)) && key.fits(alg))
    }
}
