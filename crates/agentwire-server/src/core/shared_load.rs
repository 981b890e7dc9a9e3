//! One read of a task for all the long polls that want it at once.
//!
//! A change to a task wakes every long poll waiting on it together; each answering from a read
//! of its own would hold as many copies of the task as there are polls (on the SQL stores a read
//! folds the task's whole log), so one caller's polls on one large task could take gigabytes.
//! Instead the polls that want a task at the same time wait on one read, and each keeps of it
//! only what it answers with.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agentwire_store::{Scope, TaskRecord, TaskStore};
use agentwire_types::A2AError;
use futures_util::future::{BoxFuture, FutureExt, Shared};

type Load = Shared<BoxFuture<'static, Result<TaskRecord, A2AError>>>;

/// The reads in flight, by task.
#[derive(Default)]
pub(crate) struct SharedLoads {
    inflight: Mutex<HashMap<(Scope, String), Load>>,
}

impl SharedLoads {
    /// The task `task_id` of `scope`, read once for every caller asking at the same time. A read
    /// already in flight may have begun before a change its caller has seen: the task comes back
    /// at version `at_least` or later, read again on its own if the shared read is older.
    pub(crate) async fn load(
        &self,
        store: &Arc<dyn TaskStore>,
        scope: &Scope,
        task_id: &str,
        at_least: u64,
    ) -> Result<TaskRecord, A2AError> {
        let key = (scope.clone(), task_id.to_owned());
        let load = {
            let mut inflight = lock(&self.inflight);
            match inflight.get(&key) {
                Some(load) if load.peek().is_none() => load.clone(),
                _ => {
                    let load = read(Arc::clone(store), scope.clone(), task_id.to_owned()).boxed().shared();
                    inflight.insert(key.clone(), load.clone());
                    load
                }
            }
        };
        let joined = Joined { loads: self, key, load };
        let record = joined.load.clone().await?;
        drop(joined);
        if record.version >= at_least {
            return Ok(record);
        }
        read(Arc::clone(store), scope.clone(), task_id.to_owned()).await
    }
}

async fn read(store: Arc<dyn TaskStore>, scope: Scope, task_id: String) -> Result<TaskRecord, A2AError> {
    let record = store.get(&scope, &task_id).await.map_err(super::store_error)?;
    record.ok_or_else(|| A2AError::task_not_found(&task_id))
}

/// A caller's share of a read; the last to leave (or the first once it is done) removes it, so
/// that a later caller reads anew and an abandoned read is not kept.
struct Joined<'a> {
    loads: &'a SharedLoads,
    key: (Scope, String),
    load: Load,
}

impl Drop for Joined<'_> {
    fn drop(&mut self) {
        let mut inflight = lock(&self.loads.inflight);
        let Some(held) = inflight.get(&self.key) else { return };
        // Held by the map and by this caller alone, or done: nobody else will join it.
        let last = self.load.strong_count().is_some_and(|count| count <= 2);
        if held.ptr_eq(&self.load) && (last || self.load.peek().is_some()) {
            inflight.remove(&self.key);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
