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
/// ([`with_key_set_url`](Self::with_key_set_url)), or the set a signature's `jku` names, when that URL starts with a prefix the application trusts
/// ([`trusting_jku`](Self::trusting_jku)); only the algorithms allowed (ES256, ES384, EdDSA,
/// RS256 and PS256 by default) are accepted.
///
/// ```no_run
/// # async fn run() -> agentwire_client::Result<()> {
/// use agentwire_client::{CardVerifier, Client};
///
/// // Keys published by the agent's own origin.
/// let verifier = CardVerifier::trusting_jku("https://agent.example.com/");
/// let client = Client::builder("https://agent.example.com").verify_card(verifier).connect().await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct CardVerifier {
    keys: PublicKeys,
    /// Key sets fetched at each verification, by URL.
    key_sets: Vec<String>,
    trusted_jku: Vec<String>,
    algorithms: Vec<Algorithm>,
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

    /// Trusts the key set at a signature's `jku` when the URL starts with `prefix` (such as the
    /// agent's origin, `https://agent.example.com/`).
    pub fn trusting_jku(prefix: impl Into<String>) -> Self {
        Self { trusted_jku: vec![prefix.into()], ..Self::with_keys(PublicKeys::default()) }
    }

    /// Also trusts the key set a signature's `jku` names when it starts with `prefix`.
    pub fn and_jku(mut self, prefix: impl Into<String>) -> Self {
        self.trusted_jku.push(prefix.into());
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

    /// Whether a signature of `found` verifies with a trusted key.
    pub(crate) async fn verify(&self, http: &reqwest::Client, found: &Found) -> Result<()> {
        let refused = |reason: String| Error::UntrustedCard { url: found.url.clone(), reason };
        let card: &AgentCard = found.signed.as_deref().ok_or_else(|| refused(JoseError::Unsigned.to_string()))?;
        let mut outcome = agentwire_jose::verify_card(card, &self.keys, &self.algorithms).map(drop);
        if outcome.is_ok() {
            return Ok(());
        }
        for jku in self.trusted_key_sets(card) {
            match self.fetch_keys(http, &jku).await {
                Ok(keys) => outcome = agentwire_jose::verify_card(card, &keys, &self.algorithms).map(drop),
                Err(reason) => return Err(refused(reason)),
            }
            if outcome.is_ok() {
                return Ok(());
            }
        }
        outcome.map_err(|error| refused(error.to_string()))
    }

    /// The key sets to fetch: those configured, and the `jku` of the card's signatures that
    /// this verifier trusts.
    fn trusted_key_sets(&self, card: &AgentCard) -> Vec<String> {
        let mut found: Vec<String> = self.key_sets.clone();
        for signature in &card.signatures {
            if let Some(jku) = agentwire_jose::Header::decode(&signature.protected).ok().and_then(|h| h.jku) {
                if self.trusted_jku.iter().any(|prefix| jku.starts_with(prefix.as_str())) && !found.contains(&jku) {
                    found.push(jku);
                }
            }
        }
        found
    }

    async fn fetch_keys(&self, http: &reqwest::Client, url: &str) -> std::result::Result<PublicKeys, String> {
        let response = http.get(url).send().await.map_err(|e| format!("cannot fetch its key set {url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("its key set {url} answered HTTP {}", response.status()));
        }
        let body = crate::http::read_limited(response, MAX_KEY_SET)
            .await
            .map_err(|e| format!("cannot read its key set {url}: {e}"))?;
        PublicKeys::from_jwks(&body).map_err(|e| format!("its key set {url}: {e}"))
    }
}

fn default_algorithms() -> Vec<Algorithm> {
    vec![Algorithm::ES256, Algorithm::ES384, Algorithm::EdDSA, Algorithm::RS256, Algorithm::PS256]
}
