//! The in-process backend: everything in hash maps, bounded by a retention policy.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use agentwire_types::{MemorySize, StreamResponse, Task, TaskState, Timestamp};
use async_trait::async_trait;

use crate::keys::PendingKeys;
use crate::page::status_millis;
use crate::{
    Change, KeyGuard, KeyedSend, PageToken, Purge, PushConfigRecord, PushConfigStore, Reservation, Result, Scope,
    SendKey, StoreError, StoredEvent, TaskPage, TaskQuery, TaskRecord, TaskStore, Unfinished, Updated,
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
/// Lock sections are short and never span an `.await`: a read-mostly index of tasks per scope, and
/// one mutex per task so that writers of different tasks never contend.
#[derive(Clone, Default)]
pub struct MemoryStore {
    inner: Arc<Inner>,
}

/// A task's key within its scope's map, shared with the retention queue.
type TaskKey = (Scope, Arc<str>);

/// The tasks of one scope, by id.
type ScopeTasks = HashMap<Arc<str>, Arc<Mutex<Entry>>>;

#[derive(Default)]
struct Inner {
    tasks: RwLock<HashMap<Scope, ScopeTasks>>,
    /// Ended tasks in the order they ended, with the time they did, for retention.
    ended: Mutex<VecDeque<(TaskKey, Timestamp)>>,
    /// The memory the ended tasks still stored hold: the sum of their entries' `retained`.
    ended_bytes: AtomicUsize,
    /// What each principal has `unfinished`; principals with nothing are left out.
    unfinished: dashmap::DashMap<String, Unfinished, foldhash::fast::RandomState>,
    retention: RetentionPolicy,
    /// Idempotency keys by scope and key.
    keys: Mutex<HashMap<(Scope, String), HeldKey>>,
    /// The keys of removed tasks, with the task each named, for the next holder of `keys`' lock
    /// to forget: a task may be removed by the create that holds that lock (its retention).
    released_keys: Mutex<Vec<((Scope, String), String)>>,
    /// The keys reserved by sends whose tasks are not written yet.
    pending_keys: Arc<PendingKeys>,
}

/// An idempotency key a keyed create recorded.
struct HeldKey {
    send: KeyedSend,
    /// Until when it holds, in ms since the epoch.
    expires_at: i64,
}

struct Entry {
    task: Arc<Task>,
    /// The sequence number of the last event committed.
    version: u64,
    /// Every event committed, in order, the last numbered `version`.
    events: Vec<Arc<StreamResponse>>,
    /// The memory the events hold, counted in their owner's [`Unfinished::bytes`] while the task
    /// is unfinished.
    log_bytes: u64,
    /// Webhook configurations, in creation order.
    configs: Vec<PushConfigRecord>,
    /// Once the task has ended: the memory it holds, counted in [`Inner::ended_bytes`]. Changed
    /// only under the entry's lock, together with that total.
    retained: usize,
    /// Whether the task counts in [`Inner::unfinished`]: set when an unfinished task is created,
    /// cleared once, under the entry's lock, by whoever sees it end or removes it, who then takes
    /// it off the count.
    unfinished: bool,
    /// The idempotency key recorded with the task, which goes with it.
    send_key: Option<String>,
}

impl Entry {
    fn version(&self) -> u64 {
        self.version
    }

    /// Appends `events`, and returns the memory they hold.
    fn log(&mut self, events: &[Arc<StreamResponse>]) -> u64 {
        let bytes: u64 = events.iter().map(|event| event.memory_size() as u64).sum();
        self.events.extend(events.iter().cloned());
        self.version += events.len() as u64;
        self.log_bytes += bytes;
        bytes
    }
}

fn poisoned<T>(_: T) -> StoreError {
    StoreError::Backend("a memory store lock was poisoned".into())
}

impl MemoryStore {
    /// Stores a new task (see [`TaskStore::create`]), with the idempotency key recorded for it.
    fn insert(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        max_unfinished: Option<usize>,
        send_key: Option<String>,
    ) -> Result<u64> {
        let terminal = task.status.state.is_terminal();
        let id: Arc<str> = Arc::from(task.id.as_str());
        let mut entry = Entry {
            task,
            version: 0,
            events: Vec::new(),
            log_bytes: 0,
            configs: Vec::new(),
            retained: 0,
            unfinished: !terminal,
            send_key,
        };
        let bytes = entry.log(events);
        let version = entry.version();
        let entry = Arc::new(Mutex::new(entry));
        {
            // The count is checked and taken under the index's lock, with the insert.
            let mut tasks = self.inner.tasks.write().map_err(poisoned)?;
            if tasks.get(scope).is_some_and(|scoped| scoped.contains_key(&id)) {
                return Err(StoreError::AlreadyExists(id.to_string()));
            }
            if !terminal {
                let mut unfinished = self.inner.unfinished.entry(scope.owner.clone()).or_default();
                if let Some(limit) = max_unfinished.filter(|limit| unfinished.tasks >= *limit) {
                    drop(unfinished);
                    self.inner.unfinished.remove_if(&scope.owner, |_, u| u.tasks == 0);
                    return Err(StoreError::TooManyUnfinished { limit });
                }
                unfinished.tasks += 1;
                unfinished.bytes += bytes;
            }
            tasks.entry(scope.clone()).or_default().insert(id, Arc::clone(&entry));
        }
        if terminal {
            self.note_terminal(scope, &entry)?;
        }
        Ok(version)
    }

    /// Forgets the keys of the tasks removed since last time, unless a later send holds one by
    /// now. Called with `keys`' lock held.
    fn forget_released_keys(&self, keys: &mut HashMap<(Scope, String), HeldKey>) -> Result<()> {
        let released = std::mem::take(&mut *self.inner.released_keys.lock().map_err(poisoned)?);
        for (index, task_id) in released {
            if keys.get(&index).is_some_and(|held| held.send.task_id == task_id) {
                keys.remove(&index);
            }
        }
        Ok(())
    }

    /// The send holding the key at `index`, if it has not expired and its task is still stored
    /// (a key goes with its task).
    fn held_key(
        &self,
        keys: &HashMap<(Scope, String), HeldKey>,
        index: &(Scope, String),
        now: i64,
    ) -> Result<Option<KeyedSend>> {
        let Some(held) = keys.get(index).filter(|held| held.expires_at > now) else { return Ok(None) };
        Ok(self.entry(&index.0, &held.send.task_id)?.map(|_| held.send.clone()))
    }

    /// A store with the given retention policy.
    pub fn with_retention(retention: RetentionPolicy) -> Self {
        Self { inner: Arc::new(Inner { retention, ..Inner::default() }) }
    }

    /// The store, with the bus and cancel signal of this process, for a server.
    pub fn backend(self) -> crate::Backend {
        crate::Backend::local(self)
    }

    fn entry(&self, scope: &Scope, task_id: &str) -> Result<Option<Arc<Mutex<Entry>>>> {
        Ok(self.inner.tasks.read().map_err(poisoned)?.get(scope).and_then(|tasks| tasks.get(task_id)).cloned())
    }

    /// A task reached a terminal state: it no longer counts as unfinished, and retention keeps
    /// track of it.
    fn ended(&self, scope: &Scope, entry: &Mutex<Entry>) -> Result<()> {
        {
            let mut e = entry.lock().map_err(poisoned)?;
            if std::mem::take(&mut e.unfinished) {
                self.count_finished(&scope.owner, e.log_bytes);
            }
        }
        self.note_terminal(scope, entry)
    }

    /// Takes an entry whose log held `bytes` off its owner's unfinished tasks.
    fn count_finished(&self, owner: &str, bytes: u64) {
        self.inner.unfinished.remove_if_mut(owner, |_, unfinished| {
            unfinished.tasks = unfinished.tasks.saturating_sub(1);
            unfinished.bytes = unfinished.bytes.saturating_sub(bytes);
            unfinished.tasks == 0
        });
    }

    /// Adds `bytes` logged by an unfinished task to its owner's.
    fn count_logged(&self, owner: &str, bytes: u64) {
        if let Some(mut unfinished) = self.inner.unfinished.get_mut(owner) {
            unfinished.bytes += bytes;
        }
    }

    /// Records that a task ended, then evicts the tasks that ended first while either retention
    /// bound is passed.
    fn note_terminal(&self, scope: &Scope, entry: &Mutex<Entry>) -> Result<()> {
        let id = {
            let mut e = entry.lock().map_err(poisoned)?;
            e.retained = e.task.memory_size() + e.log_bytes as usize;
            self.inner.ended_bytes.fetch_add(e.retained, Ordering::Relaxed);
            Arc::<str>::from(e.task.id.as_str())
        };
        self.inner.ended.lock().map_err(poisoned)?.push_back(((scope.clone(), id), Timestamp::now()));
        let RetentionPolicy { max_terminal_tasks, max_terminal_bytes } = self.inner.retention;
        let too_large = || max_terminal_bytes.is_some_and(|max| self.inner.ended_bytes.load(Ordering::Relaxed) > max);
        self.evict_while(|_, _, len| max_terminal_tasks.is_some_and(|max| len > max) || too_large())?;
        Ok(())
    }

    /// Evicts ended tasks, oldest end first, while `evict(key, ended_at, ended_count)` says so.
    fn evict_while(&self, mut evict: impl FnMut(&TaskKey, Timestamp, usize) -> bool) -> Result<u64> {
        let mut removed = 0;
        loop {
            let key = {
                let mut ended = self.inner.ended.lock().map_err(poisoned)?;
                let len = ended.len();
                match ended.front() {
                    Some((key, at)) if evict(key, *at, len) => ended.pop_front().map(|(key, _)| key),
                    _ => None,
                }
            };
            let Some((scope, id)) = key else { return Ok(removed) };
            removed += u64::from(self.remove(&scope, &id)?.is_some());
        }
    }

    /// Removes a task; `Some(whether it had ended)` if it was there.
    fn remove(&self, scope: &Scope, task_id: &str) -> Result<Option<bool>> {
        let removed = {
            let mut tasks = self.inner.tasks.write().map_err(poisoned)?;
            let Some(scoped) = tasks.get_mut(scope) else { return Ok(None) };
            let removed = scoped.remove(task_id);
            if scoped.is_empty() {
                tasks.remove(scope);
            }
            removed
        };
        let Some(entry) = removed else { return Ok(None) };
        let (ended, unfinished, send_key) = {
            let mut e = entry.lock().map_err(poisoned)?;
            self.inner.ended_bytes.fetch_sub(std::mem::take(&mut e.retained), Ordering::Relaxed);
            let unfinished = std::mem::take(&mut e.unfinished).then_some(e.log_bytes);
            (e.task.status.state.is_terminal(), unfinished, e.send_key.take())
        };
        if let Some(bytes) = unfinished {
            self.count_finished(&scope.owner, bytes);
        }
        if let Some(key) = send_key {
            self.inner.released_keys.lock().map_err(poisoned)?.push(((scope.clone(), key), task_id.to_owned()));
        }
        // Freed outside the locks.
        drop(entry);
        Ok(Some(ended))
    }
}

impl Default for crate::Backend {
    /// A [`MemoryStore`] with its default retention.
    fn default() -> Self {
        MemoryStore::default().backend()
    }
}

#[async_trait]
impl TaskStore for MemoryStore {
    async fn create(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        max_unfinished: Option<usize>,
    ) -> Result<u64> {
        self.insert(scope, task, events, max_unfinished, None)
    }

    async fn reserve_key(&self, scope: &Scope, key: &SendKey) -> Result<Reservation> {
        let guard = self.inner.pending_keys.reserve(scope, &key.key).await;
        let keys = self.inner.keys.lock().map_err(poisoned)?;
        let index = (scope.clone(), key.key.clone());
        Ok(match self.held_key(&keys, &index, Timestamp::now().as_millis())? {
            Some(held) => Reservation::Held(held),
            None => Reservation::Reserved(guard),
        })
    }

    /// The create under the lock of the keys, so that a key is checked and taken with its task.
    async fn create_keyed(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        max_unfinished: Option<usize>,
        key: &SendKey,
        _reserved: Option<&KeyGuard>,
    ) -> Result<u64> {
        let now = Timestamp::now().as_millis();
        let mut keys = self.inner.keys.lock().map_err(poisoned)?;
        let index = (scope.clone(), key.key.clone());
        if let Some(held) = self.held_key(&keys, &index, now)? {
            return Err(StoreError::KeyTaken(held));
        }
        let task_id = task.id.clone();
        let version = self.insert(scope, task, events, max_unfinished, Some(key.key.clone()))?;
        let expires_at = key.expires_at(now);
        keys.insert(index, HeldKey { send: KeyedSend { request: key.request.clone(), task_id }, expires_at });
        self.forget_released_keys(&mut keys)?;
        Ok(version)
    }

    async fn commit(
        &self,
        scope: &Scope,
        task: Arc<Task>,
        events: &[Arc<StreamResponse>],
        expected: u64,
    ) -> Result<u64> {
        let entry = self.entry(scope, &task.id)?.ok_or_else(|| StoreError::NotFound(task.id.clone()))?;
        let (version, ended) = {
            let mut e = entry.lock().map_err(poisoned)?;
            if e.version() != expected {
                return Err(StoreError::Conflict { task_id: task.id.clone(), expected, found: e.version() });
            }
            let ended = task.status.state.is_terminal() && !e.task.status.state.is_terminal();
            e.task = Arc::clone(&task);
            let bytes = e.log(events);
            if e.unfinished {
                self.count_logged(&scope.owner, bytes);
            }
            (e.version(), ended)
        };
        if ended {
            self.ended(scope, &entry)?;
        }
        Ok(version)
    }

    /// Changes the task in place under its lock; the task is copied only if a reader still holds
    /// it.
    async fn update(&self, scope: &Scope, task_id: &str, change: &mut Change<'_>) -> Result<Updated> {
        let entry = self.entry(scope, task_id)?.ok_or_else(|| StoreError::NotFound(task_id.to_owned()))?;
        let (updated, ended) = {
            let mut e = entry.lock().map_err(poisoned)?;
            let was_terminal = e.task.status.state.is_terminal();
            let events = change(Arc::make_mut(&mut e.task)).map_err(StoreError::Refused)?;
            let events: Vec<Arc<StreamResponse>> = events.into_iter().map(Arc::new).collect();
            let bytes = e.log(&events);
            if e.unfinished {
                self.count_logged(&scope.owner, bytes);
            }
            let ended = !was_terminal && e.task.status.state.is_terminal();
            (Updated { task: Arc::clone(&e.task), version: e.version(), events }, ended)
        };
        if ended {
            self.ended(scope, &entry)?;
        }
        Ok(updated)
    }

    async fn get(&self, scope: &Scope, task_id: &str) -> Result<Option<TaskRecord>> {
        let Some(entry) = self.entry(scope, task_id)? else { return Ok(None) };
        let e = entry.lock().map_err(poisoned)?;
        Ok(Some(TaskRecord { task: Arc::clone(&e.task), version: e.version() }))
    }

    async fn events_after(&self, scope: &Scope, task_id: &str, after: u64, limit: usize) -> Result<Vec<StoredEvent>> {
        let Some(entry) = self.entry(scope, task_id)? else { return Ok(Vec::new()) };
        let e = entry.lock().map_err(poisoned)?;
        let start = usize::try_from(after).unwrap_or(usize::MAX).min(e.events.len());
        Ok(e.events[start..]
            .iter()
            .take(limit)
            .zip(after + 1..)
            .map(|(event, seq)| StoredEvent { seq, event: Arc::clone(event) })
            .collect())
    }

    async fn list(&self, scope: &Scope, query: &TaskQuery) -> Result<TaskPage> {
        let entries: Vec<Arc<Mutex<Entry>>> = match self.inner.tasks.read().map_err(poisoned)?.get(scope) {
            Some(tasks) => tasks.values().cloned().collect(),
            None => Vec::new(),
        };
        // The tasks after the page token, newest first; only the page's own are sorted.
        let mut total = 0;
        let mut after: Vec<(i64, Arc<Task>)> = Vec::new();
        for entry in entries {
            let task = Arc::clone(&entry.lock().map_err(poisoned)?.task);
            let keep = query.context_id.as_ref().is_none_or(|c| *c == task.context_id)
                && query.state.is_none_or(|s| s == task.status.state)
                && query.status_after.is_none_or(|after| task.status.timestamp.is_some_and(|ts| ts >= after));
            if keep {
                total += 1;
                let millis = status_millis(&task);
                if query.after.as_ref().is_none_or(|token| token.precedes(millis, &task.id)) {
                    after.push((millis, task));
                }
            }
        }
        let newest_first = |a: &(i64, Arc<Task>), b: &(i64, Arc<Task>)| (b.0, &b.1.id).cmp(&(a.0, &a.1.id));
        let remaining = after.len();
        if query.page_size < remaining {
            after.select_nth_unstable_by(query.page_size, newest_first);
            after.truncate(query.page_size);
        }
        after.sort_unstable_by(newest_first);
        let mut page = TaskPage { tasks: Vec::new(), next: None, total };
        let mut bytes = 0;
        let mut last = None;
        for (millis, task) in after {
            let id = task.id.clone();
            let task = task.view(query.history_length, query.include_artifacts);
            bytes += task.memory_size();
            if query.max_bytes.is_some_and(|max| bytes > max) && !page.tasks.is_empty() {
                break;
            }
            page.tasks.push(task);
            last = Some(PageToken { status_millis: millis, task_id: id });
        }
        if page.tasks.len() < remaining {
            page.next = last;
        }
        Ok(page)
    }

    async fn unfinished(&self, owner: &str) -> Result<Unfinished> {
        Ok(self.inner.unfinished.get(owner).map_or_else(Unfinished::default, |u| *u))
    }

    async fn tasks_in_progress(&self, limit: usize) -> Result<Vec<(Scope, String)>> {
        let tasks = self.inner.tasks.read().map_err(poisoned)?;
        let mut found = Vec::new();
        for (scope, scoped) in tasks.iter() {
            for (id, entry) in scoped {
                if found.len() == limit {
                    return Ok(found);
                }
                if entry.lock().map_err(poisoned)?.task.status.state.is_running() {
                    found.push((scope.clone(), id.to_string()));
                }
            }
        }
        Ok(found)
    }

    async fn delete(&self, scope: &Scope, task_id: &str) -> Result<bool> {
        let removed = self.remove(scope, task_id)?;
        if removed == Some(true) {
            let mut ended = self.inner.ended.lock().map_err(poisoned)?;
            ended.retain(|((s, id), _)| !(s == scope && **id == *task_id));
        }
        Ok(removed.is_some())
    }

    async fn tasks_unchanged_since(
        &self,
        states: &[TaskState],
        before: Timestamp,
        limit: usize,
    ) -> Result<Vec<(Scope, String)>> {
        let tasks = self.inner.tasks.read().map_err(poisoned)?;
        let mut found = Vec::new();
        for (scope, scoped) in tasks.iter() {
            for (id, entry) in scoped {
                let status = &entry.lock().map_err(poisoned)?.task.status;
                let at = status.timestamp.map_or(i64::MIN, |at| at.as_millis());
                if states.contains(&status.state) && at < before.as_millis() {
                    found.push((at, scope.clone(), id.to_string()));
                }
            }
        }
        found.sort_unstable_by_key(|(at, ..)| *at);
        Ok(found.into_iter().take(limit).map(|(_, scope, id)| (scope, id)).collect())
    }

    async fn purge(&self, rules: &Purge) -> Result<u64> {
        let ended_bytes = &self.inner.ended_bytes;
        let removed = self.evict_while(|_, at, len| {
            rules.ended_before.is_some_and(|before| at < before)
                || rules.keep_ended.is_some_and(|keep| len > keep)
                || rules.keep_ended_bytes.is_some_and(|keep| ended_bytes.load(Ordering::Relaxed) as u64 > keep)
        })?;
        // Keys go with their tasks; an expired key of a task still stored is no longer held
        // (`held_key`), and is replaced by the next send that carries it.
        let mut keys = self.inner.keys.lock().map_err(poisoned)?;
        self.forget_released_keys(&mut keys)?;
        Ok(removed)
    }
}

#[async_trait]
impl PushConfigStore for MemoryStore {
    async fn put_config(&self, scope: &Scope, record: &PushConfigRecord) -> Result<()> {
        let task_id = &record.config.task_id;
        let entry = self.entry(scope, task_id)?.ok_or_else(|| StoreError::NotFound(task_id.clone()))?;
        let mut e = entry.lock().map_err(poisoned)?;
        match e.configs.iter_mut().find(|r| r.config.id == record.config.id) {
            Some(existing) => {
                let delivered_through = existing.delivered_through;
                *existing = PushConfigRecord { delivered_through, ..record.clone() };
            }
            None => e.configs.push(record.clone()),
        }
        Ok(())
    }

    async fn get_config(&self, scope: &Scope, task_id: &str, config_id: &str) -> Result<Option<PushConfigRecord>> {
        let Some(entry) = self.entry(scope, task_id)? else { return Ok(None) };
        let e = entry.lock().map_err(poisoned)?;
        Ok(e.configs.iter().find(|r| r.config.id == config_id).cloned())
    }

    async fn list_configs(&self, scope: &Scope, task_id: &str) -> Result<Vec<PushConfigRecord>> {
        let Some(entry) = self.entry(scope, task_id)? else { return Ok(Vec::new()) };
        let e = entry.lock().map_err(poisoned)?;
        Ok(e.configs.clone())
    }

    async fn delete_config(&self, scope: &Scope, task_id: &str, config_id: &str) -> Result<bool> {
        let Some(entry) = self.entry(scope, task_id)? else { return Ok(false) };
        let mut e = entry.lock().map_err(poisoned)?;
        let before = e.configs.len();
        e.configs.retain(|r| r.config.id != config_id);
        Ok(e.configs.len() != before)
    }

    async fn mark_delivered(&self, scope: &Scope, task_id: &str, config_id: &str, seq: u64) -> Result<()> {
        let Some(entry) = self.entry(scope, task_id)? else { return Ok(()) };
        let mut e = entry.lock().map_err(poisoned)?;
        if let Some(record) = e.configs.iter_mut().find(|r| r.config.id == config_id) {
            record.delivered_through = record.delivered_through.max(seq);
        }
        Ok(())
    }

    async fn undelivered(&self, limit: usize) -> Result<Vec<(Scope, String)>> {
        let tasks = self.inner.tasks.read().map_err(poisoned)?;
        let mut due = Vec::new();
        for (scope, entries) in tasks.iter() {
            for (id, entry) in entries {
                if due.len() >= limit {
                    return Ok(due);
                }
                let e = entry.lock().map_err(poisoned)?;
                if e.configs.iter().any(|r| r.delivered_through < e.version()) {
                    due.push((scope.clone(), id.to_string()));
                }
            }
        }
        Ok(due)
    }
}

#[cfg(test)]
mod tests;
