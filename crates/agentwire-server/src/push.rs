//! Push notifications: webhook delivery, and the guard on webhook addresses.
//!
//! Delivery follows the bus's feed of commits, like any consumer: the core commits and announces,
//! and knows nothing of webhooks. It catches up from the store when it starts, when it falls
//! behind the feed, when a commit's events did not reach it (a full lane), and when the feed
//! says another instance is gone: what that instance owed is delivered here, since every
//! config's cursor is in the store.
//!
//! Delivery is at least once, in order per webhook: each committed event is matched with its
//! task's configs, and one lane per (task, config) posts them one after another, retrying with
//! exponential backoff. The task's event log is the outbox: each config keeps a cursor, the last
//! event its webhook was handed, so what is due is always in the store. Each event is serialized
//! once, whatever the number of webhooks, and a global limit caps the attempts in flight.
//!
//! Only globally reachable addresses are called unless private targets are allowed: URLs are
//! checked when a config is created, names are checked as they are resolved for the connection
//! (which then goes only to the checked addresses), and redirects are not followed.

mod courier;
mod deliver;
mod guard;

use std::time::Duration;

pub(crate) use courier::DeliverySigner;
pub(crate) use deliver::PushDispatcher;
pub use guard::WebhookGuard;

/// How webhooks are called.
#[derive(Debug, Clone)]
pub struct PushSettings {
    /// Which webhook addresses are allowed (default: public addresses only).
    pub guard: WebhookGuard,
    /// Attempts per delivery, the first included (default 5).
    pub max_attempts: u32,
    /// Wait before the first retry; doubles each time, up to 30 s (default 500 ms).
    pub initial_backoff: Duration,
    /// Time limit of one attempt (default 10 s).
    pub timeout: Duration,
    /// Deliveries one webhook config of one task may hold in memory behind the one in flight;
    /// beyond it, the lane reads them back from the task's log when it has room (default 64).
    pub lane_capacity: usize,
    /// Attempts in flight at once across all webhooks; other lanes wait for a free slot, which
    /// they do not hold while they back off (default 64).
    pub max_concurrent_deliveries: usize,
    /// Make deliveries (default). Off, configs are still validated and stored, and each event
    /// that would have been delivered is logged instead and passed over for good (a later run
    /// with delivery on does not deliver it): for conformance suites whose webhook URLs are
    /// placeholders on hosts the server must not call.
    pub deliver: bool,
}

impl Default for PushSettings {
    fn default() -> Self {
        Self {
            guard: WebhookGuard::default(),
            max_attempts: 5,
            initial_backoff: Duration::from_millis(500),
            timeout: Duration::from_secs(10),
            lane_capacity: 64,
            max_concurrent_deliveries: 64,
            deliver: true,
        }
    }
}
