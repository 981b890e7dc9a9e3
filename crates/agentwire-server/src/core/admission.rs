//! Admission of new tasks under [`Limits::max_unfinished_tasks`], decided before their agent
//! starts.
//!
//! A new task is written with its agent's first events, in one commit, so the store sees it only
//! after the agent has run. Whether the scope has room for it is therefore decided first: the
//! scope's unfinished tasks in the store, plus those this process has admitted and not yet
//! written, must stay within the limit. A [`Place`] is held from admission until the task is
//! written (or the send fails), so admissions racing in one process never pass the limit; several
//! processes on one store may pass it by at most the number of their racing sends, which the
//! store's own check at creation then refuses.
//!
//! [`Limits::max_unfinished_tasks`]: super::Limits::max_unfinished_tasks

use std::sync::Arc;

use agentwire_store::{Scope, TaskStore};
use agentwire_types::A2AError;

type Counts = dashmap::DashMap<Scope, usize, foldhash::fast::RandomState>;

/// The new tasks of each scope admitted by this process and not yet written.
#[derive(Default)]
pub(crate) struct Admissions {
    pending: Arc<Counts>,
}

/// One admitted new task's place under its scope's limit, until it is written or given up.
pub(crate) struct Place {
    pending: Arc<Counts>,
    scope: Scope,
}

impl Admissions {
    /// Takes a place for one more unfinished task in `scope`, or refuses with ResourceExhausted
    /// when the scope has `limit` already.
    pub(crate) async fn admit(&self, tasks: &dyn TaskStore, scope: &Scope, limit: usize) -> Result<Place, A2AError> {
        // The place is taken before the store is asked, so that the admissions racing this one
        // count it whatever the order of their reads.
        let place = Place { pending: Arc::clone(&self.pending), scope: scope.clone() };
        let pending = {
            let mut count = self.pending.entry(scope.clone()).or_default();
            *count += 1;
            *count
        };
        let stored = tasks.count_unfinished(scope).await.map_err(super::store_error)?;
        if stored + pending > limit {
            return Err(super::store_error(agentwire_store::StoreError::TooManyUnfinished { limit }));
        }
        Ok(place)
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.pending.remove_if_mut(&self.scope, |_, count| {
            *count -= 1;
            *count == 0
        });
    }
}
