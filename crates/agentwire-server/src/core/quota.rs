//! Quotas per principal: a token bucket of requests, and a count of open streams.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentwire_types::jsonrpc::Operation;
use agentwire_types::{A2AError, RequestContext};
use tokio::time::Instant;

use super::Limits;

/// Buckets kept before the full ones (those of principals quiet long enough to have their whole
/// burst back, the same as no bucket) are swept.
const SWEEP_ABOVE: usize = 10_000;

/// The requests and streams of every principal.
#[derive(Default)]
pub(crate) struct Quotas {
    buckets: Mutex<Buckets>,
    streams: Mutex<HashMap<Caller, Arc<AtomicUsize>>>,
}

#[derive(Default)]
struct Buckets {
    by_caller: HashMap<Caller, Bucket>,
    sweep_above: usize,
}

/// Requests a caller may still make now, as of `at`.
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Whom a quota counts: the principal, or the address of a caller without one.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Caller {
    Principal(String),
    Address(Option<IpAddr>),
}

impl Caller {
    fn of(ctx: &RequestContext) -> Self {
        match &ctx.principal {
            Some(principal) => Self::Principal(principal.name.clone()),
            None => Self::Address(ctx.peer.as_ref().map(|peer| peer.addr.ip())),
        }
    }
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
            self.take_token(&caller, rate, limits.request_burst.max(1) as f64)?;
        }
        if !opens_stream {
            return Ok(None);
        }
        let open = {
            let mut streams = self.streams.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
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

    fn take_token(&self, caller: &Caller, rate: f64, burst: f64) -> Result<(), A2AError> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let bucket = match buckets.by_caller.get_mut(caller) {
            Some(bucket) => bucket,
            None => {
                buckets.sweep(now, rate, burst);
                buckets.by_caller.entry(caller.clone()).or_insert(Bucket { tokens: burst, at: now })
            }
        };
        bucket.tokens = (bucket.tokens + now.duration_since(bucket.at).as_secs_f64() * rate).min(burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return Ok(());
        }
        let wait = Duration::from_secs_f64((1.0 - bucket.tokens) / rate);
        let message = format!("more than {rate} requests per second; retry in {} ms", wait.as_millis());
        Err(A2AError::resource_exhausted(message).with_retry_after(wait))
    }
}

impl Buckets {
    /// Drops the buckets that have refilled, once there are many: the map stays as large as
    /// the callers busy at one time.
    fn sweep(&mut self, now: Instant, rate: f64, burst: f64) {
        if self.by_caller.len() < self.sweep_above.max(SWEEP_ABOVE) {
            return;
        }
        let refill = Duration::from_secs_f64(burst / rate);
        self.by_caller.retain(|_, bucket| now.duration_since(bucket.at) < refill);
        self.sweep_above = self.by_caller.len() * 2;
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
