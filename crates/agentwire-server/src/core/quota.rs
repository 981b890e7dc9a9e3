//! Quotas per principal: a token bucket of requests, and a count of open streams; and a token
//! bucket of failed authentications per address.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentwire_types::jsonrpc::Operation;
use agentwire_types::{A2AError, ErrorKind, RequestContext};
use tokio::time::Instant;

use super::Limits;

/// Buckets kept before the full ones (those of principals quiet long enough to have their whole
/// burst back, the same as no bucket) are swept.
const SWEEP_ABOVE: usize = 10_000;

/// The requests and streams of every principal.
#[derive(Default)]
pub(crate) struct Quotas {
    buckets: Mutex<Buckets<Caller>>,
    streams: Mutex<HashMap<Caller, Arc<AtomicUsize>>>,
}

/// A token bucket per key.
struct Buckets<K> {
    by_key: HashMap<K, Bucket>,
    sweep_above: usize,
}

impl<K> Default for Buckets<K> {
    fn default() -> Self {
        Self { by_key: HashMap::new(), sweep_above: 0 }
    }
}

/// Requests a caller may still make now, as of `at`.
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Whom a quota counts: the principal, or the addresses of a caller without one.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Caller {
    Principal(String),
    Address(Option<IpAddr>),
}

impl Caller {
    fn of(ctx: &RequestContext) -> Self {
        match &ctx.principal {
            Some(principal) => Self::Principal(principal.name.clone()),
            None => Self::Address(address_group(ctx)),
        }
    }
}

/// The addresses counted as one caller with the caller of `ctx`: its IPv4 address, or its IPv6
/// /64 (one network's hosts, which one client may use at will; an IPv4 address mapped into IPv6
/// is the IPv4 address).
fn address_group(ctx: &RequestContext) -> Option<IpAddr> {
    Some(match ctx.peer.as_ref()?.addr.ip().to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
    })
}

/// One open stream of a caller, given back when dropped.
pub(crate) struct StreamPermit(Arc<AtomicUsize>);

impl Drop for StreamPermit {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Quotas {
    /// Admits one request of `ctx`'s caller, with a permit if it opens a stream; or the refusal,
    /// which says when to retry.
    pub(crate) fn admit(
        &self,
        ctx: &RequestContext,
        operation: Operation,
        limits: &Limits,
    ) -> Result<Option<StreamPermit>, A2AError> {
        if operation == Operation::GetAgentCard {
            return Ok(None);
        }
        let opens_stream = matches!(operation, Operation::SendStreamingMessage | Operation::SubscribeToTask);
        if limits.requests_per_second.is_none() && !opens_stream {
            return Ok(None);
        }
        let caller = Caller::of(ctx);
        if let Some(rate) = limits.requests_per_second.filter(|rate| *rate > 0.0) {
            let refused = |wait: Duration| {
                let message = format!("more than {rate} requests per second; retry in {} ms", wait.as_millis());
                A2AError::resource_exhausted(message).with_retry_after(wait)
            };
            lock(&self.buckets).take(&caller, rate, limits.request_burst.max(1) as f64).map_err(refused)?;
        }
        if !opens_stream {
            return Ok(None);
        }
        let open = {
            let mut streams = lock(&self.streams);
            if streams.len() > SWEEP_ABOVE {
                // Callers with no stream open hold no permit: only the map refers to their count.
                streams.retain(|_, open| Arc::strong_count(open) > 1);
            }
            Arc::clone(streams.entry(caller).or_default())
        };
        if open.fetch_add(1, Ordering::Relaxed) >= limits.max_streams_per_principal {
            open.fetch_sub(1, Ordering::Relaxed);
            let message = format!("at most {} streams may be open at once", limits.max_streams_per_principal);
            return Err(A2AError::resource_exhausted(message).with_retry_after(Duration::from_secs(1)));
        }
        Ok(Some(StreamPermit(open)))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl<K: Clone + Eq + Hash> Buckets<K> {
    /// Takes a token of `key`'s bucket (`burst` tokens, refilled at `rate` a second), or says how
    /// long until there is one.
    fn take(&mut self, key: &K, rate: f64, burst: f64) -> Result<(), Duration> {
        let bucket = self.bucket(key, rate, burst);
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return Ok(());
        }
        Err(Duration::from_secs_f64((1.0 - bucket.tokens) / rate))
    }

    /// How long until `key`'s bucket has a token; zero when it has one now. It only reads: a key
    /// without a bucket has a full one.
    fn wait(&self, key: &K, rate: f64, burst: f64) -> Duration {
        let Some(bucket) = self.by_key.get(key) else { return Duration::ZERO };
        let tokens = (bucket.tokens + Instant::now().duration_since(bucket.at).as_secs_f64() * rate).min(burst);
        Duration::from_secs_f64(((1.0 - tokens) / rate).max(0.0))
    }

    /// `key`'s bucket, refilled up to now.
    fn bucket(&mut self, key: &K, rate: f64, burst: f64) -> &mut Bucket {
        let now = Instant::now();
        if !self.by_key.contains_key(key) {
            self.sweep(now, rate, burst);
        }
        let bucket = self.by_key.entry(key.clone()).or_insert(Bucket { tokens: burst, at: now });
        bucket.tokens = (bucket.tokens + now.duration_since(bucket.at).as_secs_f64() * rate).min(burst);
        bucket.at = now;
        bucket
    }

    /// Drops the buckets that have refilled, once there are many: the map stays as large as
    /// the callers busy at one time.
    fn sweep(&mut self, now: Instant, rate: f64, burst: f64) {
        if self.by_key.len() < self.sweep_above.max(SWEEP_ABOVE) {
            return;
        }
        let refill = Duration::from_secs_f64(burst / rate);
        self.by_key.retain(|_, bucket| now.duration_since(bucket.at) < refill);
        self.sweep_above = self.by_key.len() * 2;
    }
}

/// The failed authentications of each address (group, as quotas count callers without a
/// principal): past `burst` of them, refilled at `per_second`, the address's requests are
/// refused with ResourceExhausted before their credentials are checked, so that guessing
/// credentials is slow, and costs the server no signature checks.
pub(crate) struct AuthFailures {
    buckets: Mutex<Buckets<Option<IpAddr>>>,
    per_second: f64,
    burst: f64,
}

impl AuthFailures {
    pub(crate) fn new(per_second: f64, burst: usize) -> Self {
        Self { buckets: Mutex::default(), per_second, burst: burst.max(1) as f64 }
    }

    /// Refuses `ctx`'s caller while its address has no failed authentication left.
    pub(crate) fn check(&self, ctx: &RequestContext) -> Result<(), A2AError> {
        if self.per_second <= 0.0 {
            return Ok(());
        }
        let wait = lock(&self.buckets).wait(&address_group(ctx), self.per_second, self.burst);
        if wait.is_zero() {
            return Ok(());
        }
        let message = format!("too many failed authentications from this address; retry in {} ms", wait.as_millis());
        Err(A2AError::resource_exhausted(message).with_retry_after(wait))
    }

    /// Counts `outcome` of authenticating `ctx`'s caller, if it is a refusal of its credentials.
    pub(crate) fn note<T>(&self, ctx: &RequestContext, outcome: &Result<T, A2AError>) {
        if self.per_second <= 0.0 {
            return;
        }
        if let Err(error) = outcome {
            if error.kind() == ErrorKind::Unauthenticated {
                let _ = lock(&self.buckets).take(&address_group(ctx), self.per_second, self.burst);
            }
        }
    }
}

impl Default for AuthFailures {
    fn default() -> Self {
        let limits = Limits::default();
        Self::new(limits.auth_failures_per_second, limits.auth_failure_burst)
    }
}

#[cfg(test)]
mod tests {
    use agentwire_types::Principal;

    use super::*;

    fn caller(name: &str) -> RequestContext {
        let mut ctx = RequestContext::default();
        ctx.principal = Some(Principal::new(name));
        ctx
    }

    #[tokio::test(start_paused = true)]
    async fn a_principal_over_its_rate_waits_while_another_is_served() {
        let limits = Limits { requests_per_second: Some(2.0), request_burst: 2, ..Limits::default() };
        let quotas = Quotas::default();
        let (alice, bob) = (caller("alice"), caller("bob"));
        for _ in 0..2 {
            assert!(quotas.admit(&alice, Operation::GetTask, &limits).is_ok());
        }
        let refused = quotas.admit(&alice, Operation::GetTask, &limits).err().unwrap();
        assert_eq!(refused.retry_after(), Some(Duration::from_millis(500)));
        assert!(quotas.admit(&bob, Operation::GetTask, &limits).is_ok());
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(quotas.admit(&alice, Operation::GetTask, &limits).is_ok());
    }

    fn from(address: &str) -> RequestContext {
        let mut ctx = RequestContext::default();
        ctx.peer = Some(agentwire_types::Peer { addr: address.parse().unwrap(), certificate: None, tls: false });
        ctx
    }

    /// The probe's 2,000 loopback addresses and an IPv6 network's 2^64: an IPv6 caller without a
    /// principal is its /64, an IPv4 one its address.
    #[tokio::test(start_paused = true)]
    async fn callers_without_a_principal_are_counted_by_address_and_ipv6_network() {
        let limits = Limits { requests_per_second: Some(1.0), request_burst: 1, ..Limits::default() };
        let quotas = Quotas::default();
        assert!(quotas.admit(&from("[2001:db8:1:2::1]:5000"), Operation::GetTask, &limits).is_ok());
        let same_network = quotas.admit(&from("[2001:db8:1:2:ffff::9]:6000"), Operation::GetTask, &limits);
        assert!(same_network.is_err(), "another address of the same /64 is the same caller");
        assert!(quotas.admit(&from("[2001:db8:1:3::1]:5000"), Operation::GetTask, &limits).is_ok());
        assert!(quotas.admit(&from("127.0.0.1:5000"), Operation::GetTask, &limits).is_ok());
        assert!(quotas.admit(&from("[::ffff:127.0.0.1]:5001"), Operation::GetTask, &limits).is_err(), "mapped IPv4");
        assert!(quotas.admit(&from("127.0.0.2:5000"), Operation::GetTask, &limits).is_ok());
    }

    /// The probe's 8,000 guesses in 1.5 s: past its burst of failures, an address is refused
    /// before its credentials are checked, until it has waited; other addresses are not.
    #[tokio::test(start_paused = true)]
    async fn failed_authentications_are_limited_by_address() {
        let failures = AuthFailures::new(2.0, 3);
        let (guesser, other) = (from("10.0.0.1:5000"), from("10.0.0.2:5000"));
        let refused: Result<(), A2AError> = Err(A2AError::unauthenticated("wrong"));
        for _ in 0..3 {
            assert!(failures.check(&guesser).is_ok());
            failures.note(&guesser, &refused);
        }
        let limited = failures.check(&guesser).unwrap_err();
        assert_eq!(limited.kind(), ErrorKind::ResourceExhausted);
        assert_eq!(limited.retry_after(), Some(Duration::from_millis(500)));
        assert!(failures.check(&other).is_ok());
        failures.note(&guesser, &Ok::<(), A2AError>(()));
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(failures.check(&guesser).is_ok(), "a failure is forgiven at the rate");
    }

    #[test]
    fn streams_are_counted_while_open() {
        let limits = Limits { max_streams_per_principal: 1, ..Limits::default() };
        let quotas = Quotas::default();
        let alice = caller("alice");
        let open = quotas.admit(&alice, Operation::SubscribeToTask, &limits).unwrap();
        assert!(quotas.admit(&alice, Operation::SendStreamingMessage, &limits).is_err());
        assert!(quotas.admit(&caller("bob"), Operation::SubscribeToTask, &limits).is_ok());
        drop(open);
        assert!(quotas.admit(&alice, Operation::SubscribeToTask, &limits).unwrap().is_some());
    }
}
