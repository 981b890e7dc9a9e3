//! Admission of the work a send brings, under the limits of what one principal may have in
//! progress ([`Limits::max_unfinished_tasks`] and [`Limits::max_unfinished_bytes`]), decided
//! before the agent starts.
//!
//! A new task is written with its agent's first events, in one commit, so the store sees it only
//! after the agent has run. Whether the principal has room for it is therefore decided first: its
//! unfinished tasks in the store, in every tenant, plus those this process has admitted and not
//! yet written, must stay within the limits. A [`Place`] is held from admission until the task is
//! written (or the send fails), so admissions racing in one process never pass the count;
//! several processes on one store may pass it by at most the number of their racing sends, which
//! the store's own check at creation then refuses. A message to a task in progress is admitted
//! the same way, by its size.
//!
//! [`Limits::max_unfinished_tasks`]: super::Limits::max_unfinished_tasks
//! [`Limits::max_unfinished_bytes`]: super::Limits::max_unfinished_bytes

use std::sync::Arc;

use agentwire_store::{TaskStore, Unfinished};
use agentwire_types::A2AError;

use super::Limits;

type Pending = dashmap::DashMap<String, Unfinished, foldhash::fast::RandomState>;

/// What each principal was admitted by this process and is not yet written.
#[derive(Default)]
pub(crate) struct Admissions {
    pending: Arc<Pending>,
}

/// One admission's place under its principal's limits, until what it brings is written or given
/// up.
pub(crate) struct Place {
    pending: Arc<Pending>,
    owner: String,
    taken: Unfinished,
}

impl Admissions {
    /// Takes a place for `bringing` (a new task, or none, and the bytes of its message) under
    /// `owner`'s limits, or refuses with ResourceExhausted.
    pub(crate) async fn admit(
        &self,
        tasks: &dyn TaskStore,
        owner: &str,
        bringing: Unfinished,
        limits: &Limits,
    ) -> Result<Place, A2AError> {
        // The place is taken before the store is asked, so that the admissions racing this one
        // count it whatever the order of their reads.
        let place = Place { pending: Arc::clone(&self.pending), owner: owner.to_owned(), taken: bringing };
        let pending = {
            let mut pending = self.pending.entry(owner.to_owned()).or_default();
            pending.tasks += bringing.tasks;
            pending.bytes += bringing.bytes;
            *pending
        };
        let stored = tasks.unfinished(owner).await.map_err(super::store_error)?;
        let limit = limits.max_unfinished_tasks;
        if bringing.tasks > 0 && stored.tasks + pending.tasks > limit {
            return Err(super::store_error(agentwire_store::StoreError::TooManyUnfinished { limit }));
        }
        let (held, max) = (stored.bytes + pending.bytes, limits.max_unfinished_bytes as u64);
        if held > max {
            return Err(A2AError::resource_exhausted(format!(
                "the tasks in progress would hold about {held} bytes, more than the {max} one principal may \
                 have; wait for some to end, or cancel some"
            ))
            .with_metadata("limitBytes", max.to_string()));
        }
        Ok(place)
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let taken = self.taken;
        self.pending.remove_if_mut(&self.owner, |_, pending| {
            pending.tasks -= taken.tasks;
            pending.bytes -= taken.bytes;
            *pending == Unfinished::default()
        });
    }
}
