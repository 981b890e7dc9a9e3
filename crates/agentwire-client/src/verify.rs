//! Checking an agent card's signatures (A2A v1.0 §8.4) before a client trusts the card.

use agentwire_jose::{Algorithm, JoseError, PublicKeys};
use agentwire_types::AgentCard;

use crate::card::Found;
use crate::error::{Error, Result};

/// The largest key set fetched from a card signature's `jku`.
const MAX_KEY_SET: usize = 256 * 1024;

/// Which keys a client trusts to sign the agent cards it discovers. Once given to
/// [`ClientBuilder::verify_card`](crate::ClientBuilder::verify_card), a card that carries no
/// signature those keys verify is refused with [`Error::UntrustedCard`].
///
/// The keys are a set the application holds ([`with_keys`](Self::with_keys)) or publishes
/// ([`with_key_set_url`](Self::with_key_set_url)), or the set a signature's `jku` names, when
/// that URL is under one the application trusts ([`trusting_jku`](Self::trusting_jku)); only the
/// algorithms allowed (ES256, ES384, EdDSA, RS256 and PS256 by default) are accepted.
///
/// ```no_run
/// # async fn run() -> agentwire_client::Result<()> {
/// use agentwire_client::{CardVerifier, Client};
///
/// // Keys published by the agent's own origin.
/// let verifier = CardVerifier::trusting_jku("https://agent.example.com/");
/// let client = Client::builder("https://agent.example.com").verify_card(verifier).connect().await?;
/// assert!(client.card_signature().is_some());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct CardVerifier {
    keys: PublicKeys,
    /// Key sets fetched at each verification, by URL.
    key_sets: Vec<String>,
    /// The URLs a `jku` must be under to be trusted; `None` for one that is no URL, which trusts
    /// nothing.
    trusted_jku: Vec<Option<reqwest::Url>>,
    algorithms: Vec<Algorithm>,
}

/// The signature of a card that verified: with which algorithm and key, and where the key set
/// came from when it was fetched (a configured URL or a signature's `jku`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardSignature {
    /// The algorithm (`ES256`, `EdDSA`, …).
    pub algorithm: String,
    /// The id of the key that signed, if the signature names one.
    pub key_id: Option<String>,
    /// The URL of the key set the key came from; `None` for keys the application holds.
    pub key_set: Option<String>,
}

impl CardVerifier {
    /// Trusts `keys`.
    pub fn with_keys(keys: PublicKeys) -> Self {
        Self { keys, key_sets: Vec::new(), trusted_jku: Vec::new(), algorithms: default_algorithms() }
    }

    /// Trusts the keys of the JWK Set at `url`, fetched when a card is verified.
    pub fn with_key_set_url(url: impl Into<String>) -> Self {
        Self { key_sets: vec![url.into()], ..Self::with_keys(PublicKeys::default()) }
    }

    /// Trusts the key set at a signature's `jku` when that URL is under `base` (such as the
    /// agent's origin, `https://agent.example.com/`): the same scheme, host and port, no user
    /// name or password, and a path that is `base`'s or below it, segment by segment
    /// (`https://agent.example.com/keys` trusts `/keys/jwks.json`, not `/keys-evil/…`). `base` is
    /// compared as a URL, never as text: `https://agent.example.com.evil.net/` and
    /// `https://agent.example.com@evil.net/` are other hosts. A `base` that is no URL trusts
    /// nothing.
    pub fn trusting_jku(base: impl Into<String>) -> Self {
        Self::with_keys(PublicKeys::default()).and_jku(base)
    }

    /// Also trusts the key set a signature's `jku` names when it is under `base` (see
    /// [`trusting_jku`](Self::trusting_jku)).
    pub fn and_jku(mut self, base: impl Into<String>) -> Self {
        self.trusted_jku.push(reqwest::Url::parse(&base.into()).ok());
        self
    }

    /// Also trusts `keys`.
    pub fn and_keys(mut self, keys: &PublicKeys) -> Self {
        let mut all = self.keys.to_jwk_set();
        all.keys.extend(keys.to_jwk_set().keys);
        self.keys = PublicKeys::from_set(&all);
        self
    }

    /// Accepts only these algorithms.
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.algorithms = algorithms.into_iter().collect();
        self
    }

    /// The signature of `found` that verifies with a trusted key.
    pub(crate) async fn verify(&self, http: &reqwest::Client, found: &Found) -> Result<CardSignature> {
        let refused = |reason: String| Error::UntrustedCard { url: found.url.clone(), reason };
        let card: &AgentCard = found.signed.as_deref().ok_or_else(|| refused(JoseError::Unsigned.to_string()))?;
        let verified = |header: agentwire_jose::Header, key_set: Option<&str>| CardSignature {
            algorithm: header.alg,
            key_id: header.kid,
            key_set: key_set.map(str::to_owned),
        };
        let mut outcome = match agentwire_jose::verify_card(card, &self.keys, &self.algorithms) {
            Ok(header) => return Ok(verified(header, None)),
            Err(error) => error,
        };
        for url in self.trusted_key_sets(card) {
            let keys = self.fetch_keys(http, &url).await.map_err(refused)?;
            match agentwire_jose::verify_card(card, &keys, &self.algorithms) {
                Ok(header) => return Ok(verified(header, Some(&url))),
                Err(error) => outcome = error,
            }
        }
        Err(refused(outcome.to_string()))
    }

    /// The key sets to fetch: those configured, and the `jku` of the card's signatures that
    /// this verifier trusts.
    fn trusted_key_sets(&self, card: &AgentCard) -> Vec<String> {
        let mut found: Vec<String> = self.key_sets.clone();
        for signature in &card.signatures {
            if let Some(jku) = agentwire_jose::Header::decode(&signature.protected).ok().and_then(|h| h.jku)
                && self.trusted_jku.iter().flatten().any(|base| is_under(&jku, base))
                && !found.contains(&jku)
            {
                found.push(jku);
            }
        }
        found
    }

    async fn fetch_keys(&self, http: &reqwest::Client, url: &str) -> std::result::Result<PublicKeys, String> {
        let response = http.get(url).send().await.map_err(|e| format!("cannot fetch its key set {url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("its key set {url} answered HTTP {}", response.status()));
        }
        let body = crate::limits::read_limited(response, MAX_KEY_SET)
            .await
            .map_err(|e| format!("cannot read its key set {url}: {e}"))?;
        PublicKeys::from_jwks(&body).map_err(|e| format!("its key set {url}: {e}"))
    }
}

/// Whether the URL `jku` is under `base`: the same origin (scheme, host, port), no user name or
/// password, and a path on or below `base`'s, compared segment by segment after the dot
/// segments are resolved as a client resolves them.
fn is_under(jku: &str, base: &reqwest::Url) -> bool {
    let Ok(jku) = reqwest::Url::parse(jku) else { return false };
    let credentials = !jku.username().is_empty() || jku.password().is_some();
    !credentials && crate::endpoint::is_within(&jku, base)
}

fn default_algorithms() -> Vec<Algorithm> {
    vec![Algorithm::ES256, Algorithm::ES384, Algorithm::EdDSA, Algorithm::RS256, Algorithm::PS256]
}

#[cfg(test)]
mod tests {
    use super::is_under;

    /// The probe's spoofs pass a string prefix and fail as URLs.
    #[test]
    fn a_jku_is_trusted_under_its_base_url_only() {
        let base = |url: &str| reqwest::Url::parse(url).unwrap();
        let agent = base("https://agent.example.com");
        assert!(is_under("https://agent.example.com/.well-known/jwks.json", &agent));
        assert!(is_under("https://AGENT.example.com:443/keys", &agent), "host case and the default port");
        for spoof in [
            "https://agent.example.com.evil.net/.well-known/jwks.json",
            "https://agent.example.com@evil.net/jwks.json",
            "https://user@agent.example.com/jwks.json",
            "http://agent.example.com/jwks.json",
            "https://agent.example.com:8443/jwks.json",
            "not a url",
        ] {
            assert!(!is_under(spoof, &agent), "{spoof}");
        }
        let loopback = base("http://127.0.0.1:27000");
        assert!(!is_under("http://127.0.0.1:27000@127.0.0.1:27001/.well-known/jwks.json", &loopback));
        let keys = base("https://agent.example.com/keys/");
        assert!(is_under("https://agent.example.com/keys/jwks.json", &keys));
        assert!(is_under("https://agent.example.com/keys", &keys));
        assert!(!is_under("https://agent.example.com/keys-evil/jwks.json", &keys));
        assert!(!is_under("https://agent.example.com/keys/../evil/jwks.json", &keys));
        assert!(!is_under("https://agent.example.com/keys/%2e%2e/evil/jwks.json", &keys));
    }
}
