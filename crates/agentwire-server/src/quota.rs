//! Quotas per caller, as an operation layer: a token bucket of requests and a count of open
//! streams ([`QuotaLayer`], counted by a [`QuotaCounter`]); and a token bucket of failed
//! authentications per address, which the [`AuthLayer`](crate::auth::AuthLayer) keeps.
//!
//! An [`App`](crate::App) puts the quota layer after authentication, so that it counts
//! principals, and before the layers of its user.

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentwire_types::{A2AError, A2aRequest, ErrorKind, RequestContext};
pub use async_trait::async_trait;
use tokio::time::Instant;
use tower::Layer;

use crate::{Admission, Admitted};

/// Buckets kept before the full ones (those of principals quiet long enough to have their whole
/// burst back, the same as no bucket) are swept.
const SWEEP_ABOVE: usize = 10_000;

/// What one caller may use: requests per second and open streams; and how many failed
/// authentications one address may make.
///
/// ```
/// use agentwire_server::quota::Quotas;
///
/// let quotas = Quotas { requests_per_second: Some(5.0), request_burst: 10, ..Quotas::default() };
/// # drop(quotas);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Quotas {
    /// Requests per second one principal may make, on average; `None` for no limit. A caller
    /// past it is refused with ResourceExhausted (HTTP 429) and told when to retry. Callers
    /// without a principal (no authentication configured) are counted by address (IPv4) or
    /// network (IPv6 /64).
    pub requests_per_second: Option<f64>,
    /// How many requests over the rate one principal may make at once after a quiet spell.
    pub request_burst: usize,
    /// Most streams (SendStreamingMessage, SubscribeToTask, and the draft 1.1's long polls, which
    /// are held as long) one principal may have open at once.
    pub max_streams_per_principal: usize,
    /// Failed authentications one address (an IPv6 /64) may make per second, on average, after
    /// its burst; past them its requests are refused with ResourceExhausted (HTTP 429) before
    /// their credentials are checked. 0 for no limit.
    pub auth_failures_per_second: f64,
    /// How many failed authentications one address may make at once.
    pub auth_failure_burst: usize,
}

impl Default for Quotas {
    fn default() -> Self {
        Self {
            requests_per_second: None,
            request_burst: 50,
            max_streams_per_principal: 1_000,
            auth_failures_per_second: 5.0,
            auth_failure_burst: 50,
        }
    }
}

/// Whom a quota counts: the principal, or the addresses of a caller without one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Caller {
    /// An authenticated caller, by its principal's name.
    Principal(String),
    /// A caller without a principal, by its IPv4 address or IPv6 /64 (`None`: no address known).
    Address(Option<IpAddr>),
}

impl Caller {
    /// The caller of `ctx`.
    pub fn of(ctx: &RequestContext) -> Self {
        match &ctx.principal {
            Some(principal) => Self::Principal(principal.name.clone()),
            None => Self::Address(address_group(ctx)),
        }
    }

    /// The caller as one string, for a counter kept outside the process: `principal:NAME` or
    /// `address:IP`.
    pub fn key(&self) -> String {
        match self {
            Self::Principal(name) => format!("principal:{name}"),
            Self::Address(Some(ip)) => format!("address:{ip}"),
            Self::Address(None) => "address:".to_owned(),
        }
    }
}

/// The addresses counted as one caller with the caller of `ctx`: its IPv4 address, or its IPv6
/// /64 (one network's hosts, which one client may use at will; an IPv4 address mapped into IPv6
/// is the IPv4 address). Every loopback address is this host, one caller however many of
/// 127.0.0.0/8 it uses.
fn address_group(ctx: &RequestContext) -> Option<IpAddr> {
    Some(match ctx.peer.as_ref()?.addr.ip().to_canonical() {
        IpAddr::V4(v4) if v4.is_loopback() => IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
    })
}

/// Counts what callers use. [`LocalQuotas`], in this process's memory, is the default; a
/// counter that several instances share (in their store) gives a caller one quota across them.
#[async_trait]
pub trait QuotaCounter: Send + Sync + 'static {
    /// Takes one request from `caller`'s bucket (`burst` deep, refilled at `rate` a second), or
    /// says how long until there is one.
    async fn take(&self, caller: &Caller, rate: f64, burst: f64) -> Result<(), Duration>;

    /// One more open stream of `caller`, held until the permit is dropped; `None` when it has
    /// `max` open.
    async fn open_stream(&self, caller: &Caller, max: usize) -> Option<StreamPermit>;
}

/// One open stream of a caller, given back when dropped.
pub struct StreamPermit(Option<Box<dyn FnOnce() + Send>>);

impl StreamPermit {
    /// A permit that runs `release` when dropped.
    pub fn on_release(release: impl FnOnce() + Send + 'static) -> Self {
        Self(Some(Box::new(release)))
    }
}

impl std::fmt::Debug for StreamPermit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamPermit").finish_non_exhaustive()
    }
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        if let Some(release) = self.0.take() {
            release();
        }
    }
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

/// The requests and streams of every caller, in this process's memory: each instance of a
/// server counts its own.
#[derive(Default)]
pub struct LocalQuotas {
    buckets: Mutex<Buckets<Caller>>,
    streams: Mutex<HashMap<Caller, Arc<AtomicUsize>>>,
}

impl std::fmt::Debug for LocalQuotas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalQuotas").finish_non_exhaustive()
    }
}

#[async_trait]
impl QuotaCounter for LocalQuotas {
    async fn take(&self, caller: &Caller, rate: f64, burst: f64) -> Result<(), Duration> {
        lock(&self.buckets).take(caller, rate, burst)
    }

    async fn open_stream(&self, caller: &Caller, max: usize) -> Option<StreamPermit> {
        let open = {
            let mut streams = lock(&self.streams);
            if streams.len() > SWEEP_ABOVE {
                // Callers with no stream open hold no permit: only the map refers to their count.
                streams.retain(|_, open| Arc::strong_count(open) > 1);
            }
            Arc::clone(streams.entry(caller.clone()).or_default())
        };
        if open.fetch_add(1, Ordering::Relaxed) >= max {
            open.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        Some(StreamPermit::on_release(move || {
            open.fetch_sub(1, Ordering::Relaxed);
        }))
    }
}

/// The requests and streams of every caller, counted in the store that several instances share
/// ([`Backend::shared`](agentwire_store::Backend::shared)): a caller has one quota across them.
/// A request costs one more round trip to the store when a rate is set, and opening a stream
/// one transaction. When the store cannot be asked, the caller is let through (and the failure
/// logged): the store's own failure answers the request soon enough, and a quota is no reason
/// to refuse work the store could do.
pub struct SharedQuotas(Arc<dyn agentwire_store::SharedState>);

impl SharedQuotas {
    /// Counts in `shared`.
    pub fn new(shared: Arc<dyn agentwire_store::SharedState>) -> Self {
        Self(shared)
    }

    /// The counter of `backend`: shared by its instances when it has any, else this process's.
    pub fn of(backend: &agentwire_store::Backend) -> Arc<dyn QuotaCounter> {
        match backend.shared() {
            Some(shared) => Arc::new(Self::new(Arc::clone(shared))),
            None => Arc::new(LocalQuotas::default()),
        }
    }
}

impl std::fmt::Debug for SharedQuotas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedQuotas").finish_non_exhaustive()
    }
}

#[async_trait]
impl QuotaCounter for SharedQuotas {
    async fn take(&self, caller: &Caller, rate: f64, burst: f64) -> Result<(), Duration> {
        match self.0.take_token(&caller.key(), rate, burst).await {
            Ok(taken) => taken,
            Err(error) => {
                tracing::warn!(%error, "could not count a request against its caller's shared rate; letting it through");
                Ok(())
            }
        }
    }

    async fn open_stream(&self, caller: &Caller, max: usize) -> Option<StreamPermit> {
        let key = caller.key();
        match self.0.open_stream(&key, max).await {
            Ok(false) => return None,
            Ok(true) => {}
            Err(error) => {
                tracing::warn!(%error, "could not count a stream against its caller's shared streams; letting it through");
                return Some(StreamPermit::on_release(|| {}));
            }
        }
        let shared = Arc::clone(&self.0);
        Some(StreamPermit::on_release(move || {
            // Dropped where no runtime runs (a process stopping), the count goes with this
            // instance's lease.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    if let Err(error) = shared.close_stream(&key).await {
                        tracing::warn!(%error, "could not count a closed stream off its caller's shared streams");
                    }
                });
            }
        }))
    }
}

/// Refuses a caller past its [`Quotas`] with ResourceExhausted, saying when to retry; a stream
/// holds its permit while it is open.
///
/// ```
/// use agentwire_server::agent::EchoAgent;
/// use agentwire_server::quota::{QuotaLayer, Quotas};
/// use agentwire_server::{RequestContext, RequestHandler};
/// use agentwire_types::{A2aRequest, ErrorKind, ListTasksRequest};
/// use tower::{Layer, ServiceExt};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let quotas = Quotas { requests_per_second: Some(1.0), request_burst: 1, ..Quotas::default() };
/// let service = QuotaLayer::new(quotas).layer(RequestHandler::builder(EchoAgent).build());
/// let list = || (RequestContext::default(), A2aRequest::ListTasks(ListTasksRequest::default()));
/// assert!(service.clone().oneshot(list()).await.is_ok());
/// let refused = service.oneshot(list()).await.unwrap_err();
/// assert_eq!(refused.kind(), ErrorKind::ResourceExhausted);
/// assert!(refused.retry_after().is_some());
/// # });
/// ```
#[derive(Clone)]
pub struct QuotaLayer {
    quotas: Arc<Quotas>,
    counter: Arc<dyn QuotaCounter>,
}

impl std::fmt::Debug for QuotaLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuotaLayer").field("quotas", &self.quotas).finish_non_exhaustive()
    }
}

impl QuotaLayer {
    /// `quotas`, counted in this process ([`LocalQuotas`]).
    pub fn new(quotas: Quotas) -> Self {
        Self::counted_by(quotas, Arc::new(LocalQuotas::default()))
    }

    /// `quotas`, counted by `counter`.
    pub fn counted_by(quotas: Quotas, counter: Arc<dyn QuotaCounter>) -> Self {
        Self { quotas: Arc::new(quotas), counter }
    }

    /// Charges one request to `ctx`'s caller's rate, or refuses it, saying when to retry.
    pub(crate) async fn charge(&self, ctx: &RequestContext) -> Result<(), A2AError> {
        let quotas = &self.quotas;
        if let Some(rate) = quotas.requests_per_second.filter(|rate| *rate > 0.0) {
            let burst = quotas.request_burst.max(1) as f64;
            self.counter.take(&Caller::of(ctx), rate, burst).await.map_err(|wait| {
                let message = format!("more than {rate} requests per second; retry in {} ms", wait.as_millis());
                A2AError::resource_exhausted(message).with_retry_after(wait)
            })?;
        }
        Ok(())
    }

    /// Admits one request of `ctx`'s caller, with a permit if it opens a stream; or the refusal,
    /// which says when to retry.
    async fn take(&self, ctx: &RequestContext, request: &A2aRequest) -> Result<Option<StreamPermit>, A2AError> {
        let operation = request.operation();
        let caller = Caller::of(ctx);
        self.charge(ctx).await?;
        if !operation.opens_stream() && !long_poll(ctx, request) {
            return Ok(None);
        }
        self.open_stream(&caller).await.map(Some)
    }

    /// One more open stream of `caller`, or the refusal past [`Quotas::max_streams_per_principal`].
    pub(crate) async fn open_stream(&self, caller: &Caller) -> Result<StreamPermit, A2AError> {
        let max = self.quotas.max_streams_per_principal;
        self.counter.open_stream(caller, max).await.ok_or_else(|| {
            let message = format!("at most {max} streams may be open at once");
            A2AError::resource_exhausted(message).with_retry_after(Duration::from_secs(1))
        })
    }
}

/// Whether `request` is a GetTask that waits for the task's next change (the draft 1.1's long
/// poll): it holds its connection as long as a stream does, and counts as one.
fn long_poll(ctx: &RequestContext, request: &A2aRequest) -> bool {
    ctx.task_generations && matches!(request, A2aRequest::GetTask(get) if get.current_generation.is_some())
}

impl Admission for QuotaLayer {
    type Held = StreamPermit;

    /// The public card does not count, nor a request that opens no stream where the rate is not
    /// limited.
    fn concerns(&self, request: &A2aRequest) -> bool {
        let operation = request.operation();
        let held_open =
            operation.opens_stream() || matches!(request, A2aRequest::GetTask(get) if get.current_generation.is_some());
        !operation.is_public() && (self.quotas.requests_per_second.is_some() || held_open)
    }

    async fn admit(
        &self,
        ctx: RequestContext,
        request: &A2aRequest,
    ) -> Result<(RequestContext, Option<StreamPermit>), A2AError> {
        let permit = self.take(&ctx, request).await?;
        Ok((ctx, permit))
    }
}

impl<S> Layer<S> for QuotaLayer {
    type Service = Quota<S>;

    fn layer(&self, inner: S) -> Quota<S> {
        Admitted::new(inner, self.clone())
    }
}

/// The service [`QuotaLayer`] makes.
pub type Quota<S> = Admitted<S, QuotaLayer>;

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
///
/// Credentials that verified lately are let through all the same: one client sending wrong
/// tokens from behind the same proxy or NAT as others does not lock them out. The credentials
/// are known by a keyed hash of every header the authenticator reads them from (`Authorization`
/// and each API key's) and the client certificate, which nobody can match without presenting
/// the very same credentials.
pub(crate) struct AuthFailures {
    buckets: Mutex<Buckets<Option<IpAddr>>>,
    per_second: f64,
    burst: f64,
    /// The fingerprints of credentials that verified, with when they last did.
    verified: dashmap::DashMap<u64, Instant, foldhash::fast::RandomState>,
    /// The key of the fingerprints, new in each process.
    fingerprint_key: std::hash::RandomState,
    /// The headers credentials are read from, all in the fingerprint.
    credential_headers: Arc<[http::HeaderName]>,
}

/// How long credentials that verified are let past their address's failures.
const VERIFIED_FOR: Duration = Duration::from_secs(600);

/// Fingerprints of verified credentials kept before the stale ones are swept.
const MAX_VERIFIED: usize = 100_000;

impl AuthFailures {
    pub(crate) fn new(per_second: f64, burst: usize) -> Self {
        Self {
            buckets: Mutex::default(),
            per_second,
            burst: burst.max(1) as f64,
            verified: dashmap::DashMap::default(),
            fingerprint_key: std::hash::RandomState::new(),
            credential_headers: Arc::from([http::header::AUTHORIZATION]),
        }
    }

    /// These limits, for credentials read from `headers` too (API keys' headers).
    pub(crate) fn reading(mut self, headers: impl IntoIterator<Item = http::HeaderName>) -> Self {
        let mut all = vec![http::header::AUTHORIZATION];
        all.extend(headers.into_iter().filter(|header| *header != http::header::AUTHORIZATION));
        self.credential_headers = Arc::from(all);
        self
    }

    /// A keyed hash of the credentials `ctx` presents, while failures are limited.
    pub(crate) fn fingerprint(&self, ctx: &RequestContext) -> Option<u64> {
        use std::hash::{BuildHasher, Hasher};
        if self.per_second <= 0.0 {
            return None;
        }
        let certificate = ctx.peer.as_ref().and_then(|peer| peer.certificate.as_deref());
        let mut presented = certificate.is_some();
        let mut hasher = self.fingerprint_key.build_hasher();
        for header in self.credential_headers.iter() {
            for value in ctx.metadata.get_all(header) {
                presented = true;
                hasher.write_usize(value.len());
                hasher.write(value.as_bytes());
            }
            hasher.write_u8(0xff);
        }
        hasher.write(certificate.unwrap_or_default());
        presented.then(|| hasher.finish())
    }

    /// Refuses `ctx`'s caller while its address has no failed authentication left, unless its
    /// credentials (`fingerprint`) verified lately.
    pub(crate) fn check(&self, ctx: &RequestContext, fingerprint: Option<u64>) -> Result<(), A2AError> {
        if self.per_second <= 0.0 {
            return Ok(());
        }
        let wait = lock(&self.buckets).wait(&address_group(ctx), self.per_second, self.burst);
        if wait.is_zero() {
            return Ok(());
        }
        let verified = fingerprint.and_then(|fingerprint| self.verified.get(&fingerprint).map(|at| *at));
        if verified.is_some_and(|at| at.elapsed() < VERIFIED_FOR) {
            return Ok(());
        }
        let message = format!("too many failed authentications from this address; retry in {} ms", wait.as_millis());
        Err(A2AError::resource_exhausted(message).with_retry_after(wait))
    }

    /// Counts `outcome` of authenticating `ctx`'s caller, if it is a refusal of its credentials;
    /// remembers credentials that verified.
    pub(crate) fn note<T>(&self, ctx: &RequestContext, outcome: &Result<T, A2AError>, fingerprint: Option<u64>) {
        if self.per_second <= 0.0 {
            return;
        }
        match outcome {
            Err(error) if error.kind() == ErrorKind::Unauthenticated => {
                let _ = lock(&self.buckets).take(&address_group(ctx), self.per_second, self.burst);
            }
            Ok(_) => {
                let Some(fingerprint) = fingerprint else { return };
                let now = Instant::now();
                // Written again only once a while: most requests only read.
                let fresh =
                    self.verified.get(&fingerprint).is_some_and(|at| now.duration_since(*at) < VERIFIED_FOR / 10);
                if !fresh {
                    if self.verified.len() >= MAX_VERIFIED {
                        // Swept rarely: once half of it is still fresh, it starts again empty.
                        self.verified.retain(|_, at| now.duration_since(*at) < VERIFIED_FOR);
                        if self.verified.len() >= MAX_VERIFIED / 2 {
                            self.verified.clear();
                        }
                    }
                    self.verified.insert(fingerprint, now);
                }
            }
            Err(_) => {}
        }
    }
}

impl Default for AuthFailures {
    fn default() -> Self {
        let quotas = Quotas::default();
        Self::new(quotas.auth_failures_per_second, quotas.auth_failure_burst)
    }
}

#[cfg(test)]
mod tests {
    use agentwire_types::Principal;

    use super::*;

    fn get() -> A2aRequest {
        A2aRequest::GetTask(agentwire_types::GetTaskRequest::default())
    }

    fn subscribe() -> A2aRequest {
        A2aRequest::SubscribeToTask(agentwire_types::SubscribeToTaskRequest::default())
    }

    fn caller(name: &str) -> RequestContext {
        let mut ctx = RequestContext::default();
        ctx.principal = Some(Principal::new(name));
        ctx
    }

    #[tokio::test(start_paused = true)]
    async fn a_principal_over_its_rate_waits_while_another_is_served() {
        let quotas = QuotaLayer::new(Quotas { requests_per_second: Some(2.0), request_burst: 2, ..Quotas::default() });
        let (alice, bob) = (caller("alice"), caller("bob"));
        for _ in 0..2 {
            assert!(quotas.take(&alice, &get()).await.is_ok());
        }
        let refused = quotas.take(&alice, &get()).await.err().unwrap();
        assert_eq!(refused.retry_after(), Some(Duration::from_millis(500)));
        assert!(quotas.take(&bob, &get()).await.is_ok());
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(quotas.take(&alice, &get()).await.is_ok());
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
        let quotas = QuotaLayer::new(Quotas { requests_per_second: Some(1.0), request_burst: 1, ..Quotas::default() });
        assert!(quotas.take(&from("[2001:db8:1:2::1]:5000"), &get()).await.is_ok());
        let same_network = quotas.take(&from("[2001:db8:1:2:ffff::9]:6000"), &get()).await;
        assert!(same_network.is_err(), "another address of the same /64 is the same caller");
        assert!(quotas.take(&from("[2001:db8:1:3::1]:5000"), &get()).await.is_ok());
        assert!(quotas.take(&from("127.0.0.1:5000"), &get()).await.is_ok());
        assert!(quotas.take(&from("[::ffff:127.0.0.1]:5001"), &get()).await.is_err(), "mapped IPv4");
        assert!(quotas.take(&from("127.9.0.2:5000"), &get()).await.is_err(), "the probe's 2,000 loopback addresses");
        assert!(quotas.take(&from("10.0.0.2:5000"), &get()).await.is_ok());
    }

    /// The probe's 8,000 guesses in 1.5 s: past its burst of failures, an address is refused
    /// before its credentials are checked, until it has waited; other addresses are not.
    #[tokio::test(start_paused = true)]
    async fn failed_authentications_are_limited_by_address() {
        let failures = AuthFailures::new(2.0, 3);
        let (guesser, other) = (from("10.0.0.1:5000"), from("10.0.0.2:5000"));
        let refused: Result<(), A2AError> = Err(A2AError::unauthenticated("wrong"));
        for _ in 0..3 {
            assert!(failures.check(&guesser, None).is_ok());
            failures.note(&guesser, &refused, None);
        }
        let limited = failures.check(&guesser, None).unwrap_err();
        assert_eq!(limited.kind(), ErrorKind::ResourceExhausted);
        assert_eq!(limited.retry_after(), Some(Duration::from_millis(500)));
        assert!(failures.check(&other, None).is_ok());
        failures.note(&guesser, &Ok::<(), A2AError>(()), None);
        tokio::time::advance(Duration::from_millis(500)).await;
        assert!(failures.check(&guesser, None).is_ok(), "a failure is forgiven at the rate");
    }

    /// The probe's W-a: wrong tokens from one address locked out a valid token sent from the
    /// same address (behind one proxy or NAT). Credentials that verified are let through; a new
    /// guess is not.
    #[tokio::test(start_paused = true)]
    async fn a_guesser_does_not_lock_out_credentials_that_verify_from_its_address() {
        let failures = AuthFailures::new(2.0, 3);
        let with_token = |token: &str| {
            let mut ctx = from("10.0.0.1:5000");
            ctx.metadata.insert(http::header::AUTHORIZATION, format!("Bearer {token}").parse().unwrap());
            ctx
        };
        let (alice, guess) = (with_token("alice-secret"), with_token("guess"));
        let (alice_print, guess_print) = (failures.fingerprint(&alice), failures.fingerprint(&guess));
        assert_ne!(alice_print, guess_print);
        failures.note(&alice, &Ok::<(), A2AError>(()), alice_print);
        let refused: Result<(), A2AError> = Err(A2AError::unauthenticated("wrong"));
        for _ in 0..3 {
            failures.note(&guess, &refused, guess_print);
        }
        assert!(failures.check(&guess, guess_print).is_err(), "guessing stays slow");
        assert!(failures
            .check(&with_token("another guess"), failures.fingerprint(&with_token("another guess")))
            .is_err());
        assert!(failures.check(&alice, alice_print).is_ok(), "a token that verified is let through");
        // A verified token beside a guessed API key is another set of credentials: a guess.
        let failures = failures.reading([http::HeaderName::from_static("x-api-key")]);
        let mut beside = with_token("alice-secret");
        beside.metadata.insert("x-api-key", "guessed-key".parse().unwrap());
        assert_ne!(failures.fingerprint(&beside), failures.fingerprint(&alice));
        tokio::time::advance(VERIFIED_FOR).await;
        for _ in 0..3 {
            failures.note(&guess, &refused, guess_print);
        }
        assert!(failures.check(&alice, alice_print).is_err(), "for a while after it verified");
    }

    #[tokio::test]
    async fn streams_are_counted_while_open() {
        let quotas = QuotaLayer::new(Quotas { max_streams_per_principal: 1, ..Quotas::default() });
        let alice = caller("alice");
        let open = quotas.take(&alice, &subscribe()).await.unwrap();
        assert!(quotas.take(&alice, &subscribe()).await.is_err());
        assert!(quotas.take(&caller("bob"), &subscribe()).await.is_ok());
        drop(open);
        assert!(quotas.take(&alice, &subscribe()).await.unwrap().is_some());
    }
}
