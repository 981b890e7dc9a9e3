//! The in-process backend: everything in hash maps, bounded by a retention policy.

use std::collections::hash_map::Entry as Slot;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use agentwire_types::{MemorySize, StreamResponse, Task};
use async_trait::async_trait;

use crate::page::status_millis;
use crate::{
    Change, PageToken, PushConfigRecord, PushConfigStore, Result, Scope, StoreError, StoredEvent, TaskPage, TaskQuery,
    TaskRecord, TaskStore, Updated,
};

/// Maps keyed by ids: foldhash is seeded per process, so it resists collision attacks like the
/// standard hasher, at a fraction of SipHash's cost.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// How much the memory store keeps of tasks that ended; the ones that ended first are evicted
/// when either bound is passed. Tasks that have not ended are never evicted.
#[derive(Debug, Clone, Copy)]
pub struct RetentionPolicy {
    /// Keep at most this many tasks in a terminal state (default 10,000).
    pub max_terminal_tasks: Option<usize>,
    /// Keep ended tasks, with their event logs, up to this much memory in all, as
    /// [`MemorySize`] estimates it (default 256 MiB).
    pub max_terminal_bytes: Option<usize>,
}

impl Default for RetentionPolicy {
    fn default() -> Self {
        Self { max_terminal_tasks: Some(10_000), max_terminal_bytes: Some(256 * 1024 * 1024) }
    }
}

/// Stores tasks, event logs and push configs in memory.
///
/// Lock sections are short and never span an `.await`: a read-mostly index of tasks, and one mutex
/// per task so that writers of different tasks never contend.
#[derive(Clone, Default)]
pub struct MemoryStore {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Keyed by the entry's own id allocation, which the retention queue shares.
    tasks: RwLock<HashMap<Arc<str>, Arc<Mutex<Entry>>>>,
    /// Terminal task ids, oldest first, for retention.
    ended: Mutex<VecDeque<Arc<str>>>,
    /// The memory the ended tasks still stored hold: the sum of their entries' `retained`.
    ended_bytes: AtomicUsize,
    push: RwLock<HashMap<String, Vec<(Scope, PushConfigRecord)>>>,
    retention: RetentionPolicy,
}

struct Entry {
    id: Arc<str>,
    scope: Scope,
    task: Arc<Task>,
    /// The number of events ever committed: the sequence number of the last one.
    version: u64,
    /// Every event, or none once the log was freed (see [`TaskStore::ended_unobserved`]).
    events: Vec<Arc<StreamResponse>>,
    /// Once the task has ended: the memory it holds, counted in [`Inner::ended_bytes`]. Changed
    /// only under the entry's lock, together with that total.
    retained: usize,
    /// The part of `retained` that its event log holds.
    retained_by_log: usize,
}

impl Entry {
    fn version(&self) -> u64 {
        self.version
    }

    fn append(&mut self, events: impl IntoIterator<Item = Arc<StreamResponse>>) {
        let before = self.events.len();
        self.events.extend(events);
        self.version += (self.events.len() - before) as u64;
    }
}

fn poisoned<T>(_: T) -> StoreError {
    StoreError::Backend("a memory store lock was poisoned".into())
}

impl MemoryStore {
    /// A store with the given retention policy.
    pub fn with_retention(retention: RetentionPolicy) -> Self {
        Self { inner: Arc::new(Inner { retention, ..Inner::default() }) }
    }

    fn entry(&self, task_id: &str) -> Result<Option<Arc<Mutex<Entry>>>> {
        Ok(self.inner.tasks.read().map_err(poisoned)?.get(task_id).cloned())
    }

    /// Records that a task ended, then evicts the tasks that ended first while either retention
    /// bound is passed.
    fn note_terminal(&self, entry: &Mutex<Entry>) -> Result<()> {
        let Inner { retention, ended, ended_bytes, .. } = &*self.inner;
        if retention.max_terminal_tasks.is_none() && retention.max_terminal_bytes.is_none() {
            return Ok(());
        }
        let id = {
            let mut e = entry.lock().map_err(poisoned)?;
            e.retained_by_log = e.events.iter().map(|event| event.memory_size()).sum();
            e.retained = e.task.memory_size() + e.retained_by_log;
            ended_bytes.fetch_add(e.retained, Ordering::Relaxed);
            Arc::clone(&e.id)
        };
        ended.lock().map_err(poisoned)?.push_back(id);
        loop {
            let evicted = {
                let mut ended = ended.lock().map_err(poisoned)?;
                let too_many = retention.max_terminal_tasks.is_some_and(|max| ended.len() > max);
                let too_large =
                    retention.max_terminal_bytes.is_some_and(|max| ended_bytes.load(Ordering::Relaxed) > max);
                if !(too_many || too_large) {
                    return Ok(());
                }
                match ended.pop_front() {
                    Some(id) => id,
                    None => return Ok(()),
                }
            };
            self.evict(&evicted)?;
        }
    }

    fn evict(&self, task_id: &str) -> Result<()> {
        let removed = self.inner.tasks.write().map_err(poisoned)?.remove(task_id);
        let configs = self.inner.push.write().map_err(poisoned)?.remove(task_id);
        if let Some(entry) = &removed {
            let mut e = entry.lock().map_err(poisoned)?;
            self.inner.ended_bytes.fetch_sub(std::mem::take(&mut e.retained), Ordering::Relaxed);
            // A reader that took the entry before it left the map may still free its log.
            e.retained_by_log = 0;
        }
        // Freed outside the locks.
        drop((removed, configs));
        Ok(())
    }
}

#[async_trait]
impl TaskStore for MemoryStore {
    async fn create(&self, scope: &Scope, task: Arc<Task>, events: &[Arc<StreamResponse>]) -> Result<u64> {
        let terminal = task.status.state.is_terminal();
        let id: Arc<str> = Arc::from(task.id.as_str());
        let entry = Entry {
            id: Arc::clone(&id),
            scope: scope.clone(),
            task,
            version: events.len() as u64,
            events: events.to_vec(),
            retained: 0,
            retained_by_log: 0,
        };
        let version = entry.version();
        let entry = Arc::new(Mutex::new(entry));
        match self.inner.tasks.write().map_err(poisoned)?.entry(id) {
            Slot::Occupied(slot) => return Err(StoreError::AlreadyExists(slot.key().to_string())),
            Slot::Vacant(slot) => slot.insert(Arc::clone(&entry)),
        };
        if terminal {
            self.note_terminal(&entry)?;
        }
        Ok(version)
    }

    async fn commit(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        expected: u64,
    ) -> Result<u64> {
        let entry = self.entry(&task.id)?.ok_or_else(|| StoreError::NotFound(task.id.clone()))?;
        let (version, ended) = {
            let mut e = entry.lock().map_err(poisoned)?;
            if e.scope != *scope {
                return Err(StoreError::NotFound(task.id.clone()));
            }
            if e.version() != expected {
                return Err(StoreError::Conflict { task_id: task.id.clone(), expected, found: e.version() });
            }
            let ended = task.status.state.is_terminal() && !e.task.status.state.is_terminal();
            e.task = Arc::clone(&task);
            e.append(events.iter().cloned());
            (e.version(), ended)
        };
        if ended {
            self.note_terminal(&entry)?;
        }
        Ok(version)
    }

    /// Changes the task in place under its lock; the snapshot is copied only if a reader still
    /// holds it.
    async fn update(&self, scope: &Scope, task_id: &str, change: &mut Change<'_>) -> Result<Updated> {
        let not_found = || StoreError::NotFound(task_id.to_owned());
        let entry = self.entry(task_id)?.ok_or_else(not_found)?;
        let (updated, ended) = {
            let mut e = entry.lock().map_err(poisoned)?;
            if e.scope != *scope {
                return Err(not_found());
            }
            let was_terminal = e.task.status.state.is_terminal();
            let events = change(Arc::make_mut(&mut e.task)).map_err(StoreError::Refused)?;
            let events: Vec<Arc<StreamResponse>> = events.into_iter().map(Arc::new).collect();
            e.append(events.iter().cloned());
            let ended = !was_terminal && e.task.status.state.is_terminal();
            (Updated { task: Arc::clone(&e.task), version: e.version(), events }, ended)
        };
        if ended {
            self.note_terminal(&entry)?;
        }
        Ok(updated)
    }

    async fn get(&self, scope: &Scope, task_id: &str) -> Result<Option<TaskRecord>> {
        let Some(entry) = self.entry(task_id)? else { return Ok(None) };
        let e = entry.lock().map_err(poisoned)?;
        Ok((e.scope == *scope).then(|| TaskRecord { task: Arc::clone(&e.task), version: e.version() }))
    }

    async fn events_after(&self, scope: &Scope, task_id: &str, after: u64, limit: usize) -> Result<Vec<StoredEvent>> {
        let Some(entry) = self.entry(task_id)? else { return Ok(Vec::new()) };
        let e = entry.lock().map_err(poisoned)?;
        if e.scope != *scope || e.events.len() as u64 != e.version {
            return Ok(Vec::new());
        }
        let start = usize::try_from(after).unwrap_or(usize::MAX).min(e.events.len());
        Ok(e.events[start..]
            .iter()
            .take(limit)
            .zip(after + 1..)
            .map(|(event, seq)| StoredEvent { seq, event: Arc::clone(event) })
            .collect())
    }

    /// The change runs under the task's mutex, which `get` takes too.
    fn update_excludes_reads(&self) -> bool {
        true
    }

    fn ended_unobserved(&self, task_id: &str) {
        let Ok(Some(entry)) = self.entry(task_id) else { return };
        let Ok(mut e) = entry.lock() else { return };
        if e.task.status.state.is_terminal() {
            let freed = std::mem::take(&mut e.retained_by_log);
            e.events = Vec::new();
            e.retained -= freed;
            self.inner.ended_bytes.fetch_sub(freed, Ordering::Relaxed);
        }
    }

    async fn list(&self, scope: &Scope, query: &TaskQuery) -> Result<TaskPage> {
        let entries: Vec<Arc<Mutex<Entry>>> = self.inner.tasks.read().map_err(poisoned)?.values().cloned().collect();
        let mut matches: Vec<(i64, String, Arc<Mutex<Entry>>)> = Vec::new();
        for entry in entries {
            let e = entry.lock().map_err(poisoned)?;
            let t = &e.task;
            let keep = e.scope == *scope
                && query.context_id.as_ref().is_none_or(|c| *c == t.context_id)
                && query.state.is_none_or(|s| s == t.status.state)
                && query.status_after.is_none_or(|after| t.status.timestamp.is_some_and(|ts| ts >= after));
            if keep {
                let key = (status_millis(t), t.id.clone());
                drop(e);
                matches.push((key.0, key.1, entry));
            }
        }
        let total = matches.len();
        matches.sort_unstable_by(|a, b| (b.0, &b.1).cmp(&(a.0, &a.1)));
        let start = match &query.after {
            Some(token) => matches.partition_point(|(millis, id, _)| !token.precedes(*millis, id)),
            None => 0,
        };
        let page: Vec<_> = matches[start..].iter().take(query.page_size).collect();
        let next = (start + page.len() < total && !page.is_empty())
            .then(|| page.last().map(|(millis, id, _)| PageToken { status_millis: *millis, task_id: id.clone() }))
            .flatten();
        let mut tasks = Vec::with_capacity(page.len());
        for (_, _, entry) in page {
            tasks.push(Arc::clone(&entry.lock().map_err(poisoned)?.task));
        }
        Ok(TaskPage { tasks, next, total })
    }
}

#[async_trait]
impl PushConfigStore for MemoryStore {
    async fn put_config(&self, scope: &Scope, record: &PushConfigRecord) -> Result<()> {
        let mut push = self.inner.push.write().map_err(poisoned)?;
        let configs = push.entry(record.config.task_id.clone()).or_default();
        match configs.iter_mut().find(|(s, r)| s == scope && r.config.id == record.config.id) {
            Some((_, existing)) => *existing = record.clone(),
            None => configs.push((scope.clone(), record.clone())),
        }
        Ok(())
    }

    async fn get_config(&self, scope: &Scope, task_id: &str, config_id: &str) -> Result<Option<PushConfigRecord>> {
        let push = self.inner.push.read().map_err(poisoned)?;
        Ok(push
            .get(task_id)
            .and_then(|configs| configs.iter().find(|(s, r)| s == scope && r.config.id == config_id))
            .map(|(_, r)| r.clone()))
    }

    async fn list_configs(&self, scope: &Scope, task_id: &str) -> Result<Vec<PushConfigRecord>> {
        let push = self.inner.push.read().map_err(poisoned)?;
        Ok(push
            .get(task_id)
            .map(|configs| configs.iter().filter(|(s, _)| s == scope).map(|(_, r)| r.clone()).collect())
            .unwrap_or_default())
    }

    async fn delete_config(&self, scope: &Scope, task_id: &str, config_id: &str) -> Result<bool> {
        let mut push = self.inner.push.write().map_err(poisoned)?;
        let Some(configs) = push.get_mut(task_id) else { return Ok(false) };
        let before = configs.len();
        configs.retain(|(s, r)| !(s == scope && r.config.id == config_id));
        Ok(configs.len() != before)
    }

    fn may_have_configs(&self, task_id: &str) -> bool {
        self.inner.push.read().map_or(true, |push| push.get(task_id).is_some_and(|configs| !configs.is_empty()))
    }
}

#[cfg(test)]
mod tests;
