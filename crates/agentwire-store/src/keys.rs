//! Idempotency keys: what a keyed create records, and the reservations a store that serves one
//! process hands out before the create.

use std::sync::Arc;

use tokio::sync::watch;

use crate::Scope;

/// An idempotency key a send carried, as a keyed create records it beside the task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendKey {
    /// The key, as the client sent it.
    pub key: String,
    /// A digest of the request that carried it: a repeat with another request is told apart.
    pub request: String,
    /// How long the key holds; afterwards it may name another send.
    pub ttl: std::time::Duration,
}

impl SendKey {
    /// When the key recorded at `now` (ms since the epoch) expires, in ms since the epoch.
    pub(crate) fn expires_at(&self, now: i64) -> i64 {
        now.saturating_add(i64::try_from(self.ttl.as_millis()).unwrap_or(i64::MAX))
    }
}

/// The send an idempotency key was first used for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyedSend {
    /// The digest of that send's request ([`SendKey::request`]).
    pub request: String,
    /// The task it made.
    pub task_id: String,
}

/// What [`TaskStore::reserve_key`](crate::TaskStore::reserve_key) found.
#[derive(Debug)]
pub enum Reservation {
    /// No send holds the key: it is the caller's until the guard drops, and a keyed create given
    /// the guard records it.
    Reserved(KeyGuard),
    /// An earlier send holds the key.
    Held(KeyedSend),
    /// The store cannot tell before writing: write the task first.
    Unchecked,
}

/// A key reserved for one send; dropping it frees the key for the sends waiting for it (which
/// then find it recorded, if the send's task was written).
pub struct KeyGuard {
    release: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl std::fmt::Debug for KeyGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyGuard").finish_non_exhaustive()
    }
}

impl Drop for KeyGuard {
    fn drop(&mut self) {
        if let Some(release) = self.release.take() {
            release();
        }
    }
}

/// The keys of the sends in progress in this process, each until its task is written.
#[derive(Default)]
pub(crate) struct PendingKeys(dashmap::DashMap<(Scope, String), watch::Receiver<()>, foldhash::fast::RandomState>);

impl PendingKeys {
    /// Reserves `key` in `scope`, waiting while another send of this process has it.
    pub(crate) async fn reserve(self: &Arc<Self>, scope: &Scope, key: &str) -> KeyGuard {
        let index = (scope.clone(), key.to_owned());
        loop {
            let mut held = match self.0.entry(index.clone()) {
                dashmap::Entry::Vacant(vacant) => {
                    let (released, watched) = watch::channel(());
                    vacant.insert(watched);
                    let pending = Arc::clone(self);
                    let release = move || {
                        pending.0.remove(&index);
                        // Wakes the sends waiting for the key.
                        drop(released);
                    };
                    return KeyGuard { release: Some(Box::new(release)) };
                }
                dashmap::Entry::Occupied(occupied) => occupied.get().clone(),
            };
            // Resolves once the holder's guard drops its sender.
            let _ = held.changed().await;
        }
    }
}

/// The keys a store that alone writes its file has recorded, as hashes: a key not among them was
/// never recorded, and its reservation reads nothing. Up to [`RecordedKeys::MAX`] of them; past
/// that the set is given up, and every reservation reads the file.
#[cfg(feature = "sqlite")]
pub(crate) struct RecordedKeys {
    hasher: foldhash::fast::RandomState,
    hashes: std::sync::Mutex<std::collections::HashSet<u64, foldhash::fast::RandomState>>,
    complete: std::sync::atomic::AtomicBool,
}

#[cfg(feature = "sqlite")]
impl Default for RecordedKeys {
    fn default() -> Self {
        Self { hasher: Default::default(), hashes: Default::default(), complete: true.into() }
    }
}

#[cfg(feature = "sqlite")]
impl RecordedKeys {
    /// The most keys told apart in memory (about 16 MiB of hashes).
    pub(crate) const MAX: usize = 1 << 20;

    /// Whether `key` may have been recorded in `scope`: false means it certainly was not.
    pub(crate) fn may_hold(&self, scope: &Scope, key: &str) -> bool {
        use std::sync::atomic::Ordering::Acquire;
        let hash = self.hash(scope, key);
        !self.complete.load(Acquire) || self.hashes.lock().map_or(true, |hashes| hashes.contains(&hash))
    }

    /// Notes that `key` was recorded in `scope`.
    pub(crate) fn recorded(&self, scope: &Scope, key: &str) {
        use std::sync::atomic::Ordering::{Acquire, Release};
        if !self.complete.load(Acquire) {
            return;
        }
        let hash = self.hash(scope, key);
        let Ok(mut hashes) = self.hashes.lock() else { return };
        hashes.insert(hash);
        if hashes.len() > Self::MAX {
            self.complete.store(false, Release);
            *hashes = Default::default();
        }
    }

    fn hash(&self, scope: &Scope, key: &str) -> u64 {
        use std::hash::BuildHasher;
        self.hasher.hash_one((&scope.tenant, &scope.owner, key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_reserved_key_waits_for_its_holder() {
        let pending = Arc::new(PendingKeys::default());
        let scope = Scope::new("", "alice");
        let first = pending.reserve(&scope, "k").await;
        let waiting = tokio::spawn({
            let (pending, scope) = (Arc::clone(&pending), scope.clone());
            async move { pending.reserve(&scope, "k").await }
        });
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(!waiting.is_finished(), "a second send took a key the first still holds");
        let other = pending.reserve(&scope, "another").await;
        drop(first);
        let second = tokio::time::timeout(std::time::Duration::from_secs(5), waiting).await.unwrap().unwrap();
        drop((second, other));
        assert!(pending.0.is_empty(), "every guard dropped frees its key");
    }
}
