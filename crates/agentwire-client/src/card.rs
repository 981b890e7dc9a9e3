//! Finding an agent: its card, read in whichever generation's form the agent writes it, and kept
//! with the validators of the answer that carried it, so that a later client of the same agent
//! asks only whether the card changed, or, while `Cache-Control` allows, does not ask at all.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentwire_types::dialect::card;
use agentwire_types::AgentCard;
use http::header::{ACCEPT, CACHE_CONTROL, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED};
use http::{HeaderMap, HeaderValue, StatusCode};
use tokio::time::Instant;

use crate::error::{Error, Result};

/// Where a card may be, tried in this order under the agent's base URL: v1.0 and v0.3's
/// well-known path, the legacy well-known path, then the path some early agents served.
const CARD_PATHS: [&str; 3] = ["/.well-known/agent-card.json", "/.well-known/agent.json", "/agentCard"];

/// Agent cards fetched before, by URL, with the `ETag` and `Last-Modified` of the answer that
/// carried each and how long its `Cache-Control: max-age` lets it be used without asking.
/// Clones share the cards: give one cache to every client a program makes.
///
/// ```no_run
/// # async fn run() -> agentwire_client::Result<()> {
/// use agentwire_client::{CardCache, Client};
///
/// let cards = CardCache::default();
/// for _ in 0..3 {
///     // The first client fetches the card; the others revalidate it, or reuse it while fresh.
///     let client = Client::builder("http://127.0.0.1:8080").card_cache(&cards).connect().await?;
///     println!("{}", client.card().name);
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct CardCache {
    cards: Arc<Mutex<HashMap<String, Cached>>>,
    /// Whether every use asks the agent, whatever `Cache-Control` allows.
    revalidate: bool,
}

#[derive(Debug, Clone)]
struct Cached {
    card: AgentCard,
    /// The card as its signatures cover it, if it has any.
    signed: Option<Arc<AgentCard>>,
    etag: Option<HeaderValue>,
    last_modified: Option<HeaderValue>,
    fresh_until: Option<Instant>,
}

impl CardCache {
    /// A cache that asks the agent at every use whether the card changed (with its validators),
    /// whatever `Cache-Control` allows: for a caller that checks whether the agent answers, such
    /// as a registry's health checks.
    ///
    /// ```
    /// let cards = agentwire_client::CardCache::revalidating();
    /// # drop(cards);
    /// ```
    pub fn revalidating() -> Self {
        Self { revalidate: true, ..Self::default() }
    }

    fn get(&self, url: &str) -> Option<Cached> {
        self.cards.lock().unwrap_or_else(|e| e.into_inner()).get(url).cloned()
    }

    fn put(&self, url: &str, cached: Cached) {
        self.cards.lock().unwrap_or_else(|e| e.into_inner()).insert(url.to_owned(), cached);
    }

    fn remove(&self, url: &str) {
        self.cards.lock().unwrap_or_else(|e| e.into_inner()).remove(url);
    }
}

/// A card as found: the card, where, and what its signatures cover.
pub(crate) struct Found {
    pub(crate) card: AgentCard,
    pub(crate) url: String,
    /// The card's v1.0 projection, which its signatures cover, if it has any.
    pub(crate) signed: Option<Arc<AgentCard>>,
}

/// The card at `url`: the URL itself when it names a card (a path ending in `.json` or
/// `/agentCard`), else the first of [`CARD_PATHS`] under it that answers.
pub(crate) async fn fetch(
    http: &reqwest::Client,
    url: &str,
    headers: &HeaderMap,
    cache: &CardCache,
    timeout: Option<Duration>,
) -> Result<Found> {
    let url = url.trim_end_matches('/');
    let names_a_card = url.ends_with(".json") || url.ends_with("/agentCard");
    let candidates: Vec<String> =
        if names_a_card { vec![url.to_owned()] } else { CARD_PATHS.iter().map(|p| format!("{url}{p}")).collect() };
    let searching = async {
        // A server that says why it has no card there (a gateway naming its agents) is quoted.
        let mut said = None;
        for candidate in &candidates {
            match fetch_one(http, candidate, headers, cache).await? {
                Answer::Card(cached) => {
                    let Cached { card, signed, .. } = *cached;
                    return Ok(Found { card, url: candidate.clone(), signed });
                }
                Answer::Missing(Some(message)) if said.is_none() => said = Some((candidate, message)),
                Answer::Missing(_) => {}
            }
        }
        Err(match said {
            Some((url, body)) => Error::Http { url: url.clone(), status: StatusCode::NOT_FOUND, body },
            None => Error::NoCard { tried: candidates.join(", ") },
        })
    };
    match timeout {
        Some(after) => tokio::time::timeout(after, searching)
            .await
            .unwrap_or_else(|_| Err(Error::Timeout { url: url.to_owned(), after })),
        None => searching.await,
    }
}

/// The largest agent card read: cards are small, and an agent (or whoever is on the way) could
/// otherwise make the client hold without bound.
const MAX_CARD_SIZE: usize = 256 * 1024;

/// What a place where a card may be answered.
enum Answer {
    Card(Box<Cached>),
    /// No card there (404), and the message of the error object the answer held, if any.
    Missing(Option<String>),
}

/// The card at `url`, or why there is none (404).
async fn fetch_one(http: &reqwest::Client, url: &str, headers: &HeaderMap, cache: &CardCache) -> Result<Answer> {
    let cached = cache.get(url);
    if let Some(cached) = cached.as_ref().filter(|_| !cache.revalidate)
        && cached.fresh_until.is_some_and(|until| Instant::now() < until)
    {
        return Ok(Answer::Card(Box::new(cached.clone())));
    }
    let mut request = http.get(url).headers(headers.clone()).header(ACCEPT, "application/json");
    if let Some(cached) = &cached {
        if let Some(etag) = &cached.etag {
            request = request.header(IF_NONE_MATCH, etag);
        }
        if let Some(last_modified) = &cached.last_modified {
            request = request.header(IF_MODIFIED_SINCE, last_modified);
        }
    }
    let response = request.send().await.map_err(|source| Error::transport(url, source))?;
    let status = response.status();
    let freshness = freshness(response.headers());
    if let (StatusCode::NOT_MODIFIED, Some(mut cached)) = (status, cached) {
        cached.fresh_until = freshness.map(|max_age| Instant::now() + max_age);
        cache.put(url, cached.clone());
        return Ok(Answer::Card(Box::new(cached)));
    }
    if status == StatusCode::NOT_FOUND {
        let body = crate::limits::read_limited(response, MAX_CARD_SIZE).await.unwrap_or_default();
        return Ok(Answer::Missing(crate::error::error_message(&body)));
    }
    let etag = response.headers().get(ETAG).cloned();
    let last_modified = response.headers().get(LAST_MODIFIED).cloned();
    let no_store = directives(response.headers()).any(|d| d.eq_ignore_ascii_case("no-store"));
    let body = crate::limits::read_limited(response, MAX_CARD_SIZE).await?;
    if !status.is_success() {
        return Err(Error::http(url, status, &body));
    }
    let value: serde_json::Value =
        serde_json::from_slice(&body).map_err(|e| Error::decode(url, format!("the card is not JSON: {e}")))?;
    let has_signatures = value.get("signatures").and_then(serde_json::Value::as_array).is_some_and(|s| !s.is_empty());
    // What the signatures cover is the v1.0 card alone, read before v0.3's members are merged in.
    let signed = match has_signatures {
        true => card::v1_projection(value.clone()).ok().map(Arc::new),
        false => None,
    };
    let card = card::read(value).map_err(|e| Error::decode(url, format!("not an agent card: {e}")))?;
    let fresh_until = freshness.map(|max_age| Instant::now() + max_age);
    let found = Cached { card, signed, etag, last_modified, fresh_until };
    if no_store || (found.etag.is_none() && found.last_modified.is_none() && freshness.is_none()) {
        cache.remove(url);
    } else {
        cache.put(url, found.clone());
    }
    Ok(Answer::Card(Box::new(found)))
}

/// How long `Cache-Control` lets an answer be used without asking: its `max-age`, unless it says
/// `no-cache` or `no-store`.
fn freshness(headers: &HeaderMap) -> Option<Duration> {
    let mut max_age = None;
    for directive in directives(headers) {
        let (name, value) = directive.split_once('=').unwrap_or((directive, ""));
        match name.trim().to_ascii_lowercase().as_str() {
            "no-cache" | "no-store" => return None,
            "max-age" => max_age = value.trim().trim_matches('"').parse().ok().map(Duration::from_secs),
            _ => {}
        }
    }
    max_age
}

fn directives(headers: &HeaderMap) -> impl Iterator<Item = &str> {
    headers
        .get_all(CACHE_CONTROL)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(cache_control: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(CACHE_CONTROL, HeaderValue::from_str(cache_control).unwrap());
        headers
    }

    #[test]
    fn max_age_is_the_freshness_unless_the_answer_must_be_revalidated() {
        assert_eq!(freshness(&headers("public, max-age=300")), Some(Duration::from_secs(300)));
        assert_eq!(freshness(&headers("max-age=\"60\"")), Some(Duration::from_secs(60)));
        assert_eq!(freshness(&headers("max-age=300, no-cache")), None);
        assert_eq!(freshness(&headers("no-store")), None);
        assert_eq!(freshness(&HeaderMap::new()), None);
    }
}
