//! What the store keeps of what it wrote, since every write passes through it: the running
//! tasks, which tasks have push configs, each principal's unfinished tasks and the ended ones.

use sqlx::{Row, SqlitePool};

use crate::sql::{as_seq, backend, RunningTasks};
use crate::{Result, Scope};

pub(super) type Map<K, V> = dashmap::DashMap<K, V, foldhash::fast::RandomState>;

/// What the store knows without reading the file, because it made every write.
#[derive(Default)]
pub(super) struct Known {
    /// The tasks in SUBMITTED or WORKING state, as last committed.
    pub(super) running: RunningTasks,
    /// The tasks that may have push configs; the others have none.
    pub(super) with_configs: Map<(Scope, String), ()>,
    /// Each principal's unfinished tasks (not in a terminal state), which
    /// [`TaskStore::unfinished`] adds up: a send's admission asks it every time.
    pub(super) unfinished: Map<String, OwnerTasks>,
    /// The ended tasks stored, with the size of their logs: a purge within the retention's bounds
    /// writes nothing, and one beyond them knows how much to remove.
    pub(super) ended: std::sync::Mutex<Ended>,
    /// Pages of removed tasks wait to be given back to the file system, a slice at a time
    /// between groups ([`vacuum_slice`]).
    pub(super) vacuum_due: std::sync::atomic::AtomicBool,
    /// The idempotency keys reserved by sends whose tasks are not written yet.
    pub(super) pending_keys: std::sync::Arc<crate::keys::PendingKeys>,
    /// The idempotency keys recorded.
    pub(super) recorded_keys: crate::keys::RecordedKeys,
    /// The groups the writer committed, and the writes in them.
    pub(super) groups: std::sync::atomic::AtomicU64,
    pub(super) grouped_writes: std::sync::atomic::AtomicU64,
}

/// Ended tasks and the size of their logs.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Ended {
    pub(super) tasks: u64,
    pub(super) bytes: u64,
}

impl Ended {
    pub(super) fn add(&mut self, bytes: u64) {
        self.tasks += 1;
        self.bytes += bytes;
    }
}

/// The ended tasks a group of writes removed: how many and their bytes, and the tasks a purge
/// removed, whose configs went with them.
#[derive(Default)]
pub(super) struct Removed {
    pub(super) ended: Ended,
    pub(super) purged: Vec<(Scope, String)>,
}

/// One principal's unfinished tasks, by tenant and id, with the size of their logs.
#[derive(Default)]
pub(super) struct OwnerTasks {
    pub(super) logs: std::collections::HashMap<(String, String), u64, foldhash::fast::RandomState>,
    pub(super) bytes: u64,
}

impl Known {
    pub(super) fn forget(&self, scope: &Scope, task_id: &str) {
        self.running.forget(scope, task_id);
        self.with_configs.remove(&(scope.clone(), task_id.to_owned()));
        self.ended(scope, task_id);
    }

    /// Notes a task just written (`created`, or changed), whose log now takes `bytes`:
    /// unfinished, or `ended`.
    pub(super) fn written(&self, scope: &Scope, task_id: &str, ended: bool, bytes: u64, created: bool) {
        if ended {
            let was_unfinished = self.ended(scope, task_id);
            if was_unfinished || created {
                self.ended_totals().add(bytes);
            }
            return;
        }
        let mut owner = self.unfinished.entry(scope.owner.clone()).or_default();
        let owner = &mut *owner;
        let key = (scope.tenant.clone(), task_id.to_owned());
        let before = owner.logs.insert(key, bytes).unwrap_or_default();
        owner.bytes = owner.bytes + bytes - before;
    }

    /// Notes a task ended or gone: it no longer counts as unfinished. Returns whether it did.
    pub(super) fn ended(&self, scope: &Scope, task_id: &str) -> bool {
        let mut was_unfinished = false;
        self.unfinished.remove_if_mut(&scope.owner, |_, owner| {
            if let Some(bytes) = owner.logs.remove(&(scope.tenant.clone(), task_id.to_owned())) {
                owner.bytes -= bytes;
                was_unfinished = true;
            }
            owner.logs.is_empty()
        });
        was_unfinished
    }

    pub(super) fn ended_totals(&self) -> std::sync::MutexGuard<'_, Ended> {
        // Held for a few additions; a panic while held leaves sums that are still sums.
        self.ended.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes ended tasks removed by a committed group.
    pub(super) fn removed(&self, removed: Removed) {
        let mut ended = self.ended_totals();
        ended.tasks = ended.tasks.saturating_sub(removed.ended.tasks);
        ended.bytes = ended.bytes.saturating_sub(removed.ended.bytes);
        drop(ended);
        for key in removed.purged {
            self.with_configs.remove(&key);
        }
    }
}

/// Notes which tasks have push configs.
pub(super) async fn load_config_owners(reads: &SqlitePool, known: &Known) -> Result<()> {
    let rows =
        sqlx::query("SELECT DISTINCT t.tenant, t.owner, t.id FROM push_configs c JOIN tasks t ON t.key = c.task")
            .fetch_all(reads)
            .await
            .map_err(backend)?;
    known.with_configs.clear();
    for row in rows {
        let scope = Scope::new(row.get::<String, _>(0), row.get::<String, _>(1));
        known.with_configs.insert((scope, row.get(2)), ());
    }
    Ok(())
}

/// Notes how many tasks have ended, and the size of their logs.
pub(super) async fn load_ended(reads: &SqlitePool, known: &Known) -> Result<()> {
    let (tasks, bytes): (i64, i64) =
        sqlx::query_as("SELECT COUNT(*), COALESCE(SUM(log_bytes), 0) FROM tasks WHERE ended_at IS NOT NULL")
            .fetch_one(reads)
            .await
            .map_err(backend)?;
    *known.ended_totals() = Ended { tasks: as_seq(tasks), bytes: as_seq(bytes) };
    Ok(())
}

/// Notes which tasks are unfinished.
/// The keys recorded and not expired, or none if there are more than memory tells apart.
pub(super) async fn load_keys(reads: &SqlitePool, known: &Known) -> Result<()> {
    let max = crate::keys::RecordedKeys::MAX;
    let rows: Vec<(String, String, String)> =
        sqlx::query_as("SELECT tenant, owner, key FROM send_keys WHERE expires_at > ? LIMIT ?")
            .bind(crate::sql::now_millis())
            .bind(crate::sql::limit(max + 1))
            .fetch_all(reads)
            .await
            .map_err(backend)?;
    for (tenant, owner, key) in rows {
        known.recorded_keys.recorded(&Scope::new(tenant, owner), &key);
    }
    Ok(())
}

pub(super) async fn load_unfinished(reads: &SqlitePool, known: &Known) -> Result<()> {
    let rows: Vec<(String, String, String, i64)> =
        sqlx::query_as("SELECT tenant, owner, id, log_bytes FROM tasks WHERE ended_at IS NULL")
            .fetch_all(reads)
            .await
            .map_err(backend)?;
    for (tenant, owner, id, bytes) in rows {
        known.written(&Scope::new(tenant, owner), &id, false, as_seq(bytes), false);
    }
    Ok(())
}
