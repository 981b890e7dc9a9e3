//! Tasks by state: from the feed of commits, or from the store several instances share.

use std::collections::HashMap;
use std::sync::Arc;

use agentwire_store::{Commit, CommitFeed, FeedNotice, Scope};
use agentwire_types::TaskState;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::{Instruments, StateLabel, TenantLabel};

/// Follows the commits of this process, keeping the gauges of tasks in progress by state and by
/// tenant and counting the tasks that end, until `stop`. It knows a task's state from the commits
/// it saw: a task this process did not commit since it started (one resumed from the store, or
/// carried on by another instance) is counted from its next commit here, and one that another
/// instance ends stays counted here in its last state seen.
///
/// With `gauges` false, it counts the tasks that end alone: the gauges are the store's
/// ([`count_tasks`]).
pub(crate) async fn follow_tasks(
    mut feed: CommitFeed,
    instruments: Arc<Instruments>,
    gauges: bool,
    stop: CancellationToken,
) {
    let mut states = States { gauges, ..States::default() };
    loop {
        let notice = tokio::select! {
            () = stop.cancelled() => return,
            notice = feed.recv() => notice,
        };
        match notice {
            Ok(FeedNotice::Commit(commit)) => states.committed(&instruments, &commit),
            Ok(FeedNotice::Check) => {}
            Err(RecvError::Lagged(missed)) => {
                tracing::debug!(
                    missed,
                    "the metrics of tasks missed commits; their counts may be off until the tasks change again"
                );
            }
            Err(RecvError::Closed) => return,
        }
    }
}

/// Sets the gauges of tasks in progress by state and by tenant from the counts `shared` gives
/// this instance to report, every [`COUNT_EVERY`], until `stop`: on a store several instances
/// serve, a task another instance ends leaves the gauges as it leaves the store.
pub(crate) async fn count_tasks(
    shared: Arc<dyn agentwire_store::SharedState>,
    instruments: Arc<Instruments>,
    stop: CancellationToken,
) {
    let mut shown = Counted::default();
    loop {
        match shared.tasks_in_progress_to_report().await {
            Ok(counts) => shown = shown.replace(&instruments, &counts),
            Err(error) => tracing::debug!(%error, "could not count the tasks in progress"),
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(COUNT_EVERY) => {}
        }
    }
}

/// How often the tasks in progress of a shared store are counted.
const COUNT_EVERY: std::time::Duration = std::time::Duration::from_secs(2);

/// The series [`count_tasks`] last set.
#[derive(Default)]
struct Counted {
    states: Vec<StateLabel>,
    tenants: Vec<TenantLabel>,
}

impl Counted {
    /// Sets the gauges to `counts` (by tenant and state), and zeroes or removes the series the
    /// last counts had and these do not. Tenants past the cap share one series.
    fn replace(self, instruments: &Instruments, counts: &[(String, TaskState, u64)]) -> Self {
        let cap = instruments.max_tenant_series.load(std::sync::atomic::Ordering::Relaxed);
        let mut by_state: HashMap<&'static str, u64> = HashMap::new();
        let mut by_tenant: HashMap<&str, u64> = HashMap::new();
        for (tenant, state, count) in counts {
            *by_state.entry(state.as_proto_name()).or_default() += count;
            *by_tenant.entry(tenant).or_default() += count;
        }
        let mut tenants: Vec<(&str, u64)> = by_tenant.into_iter().collect();
        tenants.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let mut series: HashMap<TenantLabel, u64> = HashMap::new();
        for (i, (tenant, count)) in tenants.into_iter().enumerate() {
            let name = if i < cap { tenant } else { OTHER_TENANTS };
            *series.entry(TenantLabel { tenant: name.to_owned() }).or_default() += count;
        }
        let gauge = |count: u64| i64::try_from(count).unwrap_or(i64::MAX);
        for state in self.states.iter().filter(|label| !by_state.contains_key(label.state)) {
            instruments.tasks.get_or_create(state).set(0);
        }
        for tenant in self.tenants.iter().filter(|label| !series.contains_key(label)) {
            instruments.tasks_in_progress.remove(tenant);
        }
        let states: Vec<StateLabel> = by_state.keys().map(|state| StateLabel { state }).collect();
        for label in &states {
            instruments.tasks.get_or_create(label).set(gauge(by_state[label.state]));
        }
        for (label, count) in &series {
            instruments.tasks_in_progress.get_or_create(label).set(gauge(*count));
        }
        Self { states, tenants: series.into_keys().collect() }
    }
}

/// The label of the tasks in progress of the tenants past the cap on tenant series.
const OTHER_TENANTS: &str = "(other)";

/// The last state seen of each task in progress, and the tenant series it is counted in.
#[derive(Default)]
struct States {
    in_progress: HashMap<(Scope, String), (TaskState, TenantLabel)>,
    /// The tasks in progress counted under each tenant series.
    series: HashMap<TenantLabel, usize>,
    /// Whether it keeps the gauges of tasks in progress.
    gauges: bool,
}

impl States {
    fn committed(&mut self, instruments: &Instruments, commit: &Commit) {
        if !self.gauges {
            if commit.state.is_terminal() {
                instruments.tasks_ended.get_or_create(&StateLabel { state: commit.state.as_proto_name() }).inc();
            }
            return;
        }
        let key = (commit.scope.clone(), commit.task_id.clone());
        let state = commit.state;
        let before = match self.in_progress.get_mut(&key) {
            Some((seen, _)) if *seen == state => return,
            Some((seen, tenant)) if !state.is_terminal() => Some((std::mem::replace(seen, state), tenant.clone())),
            Some(_) => self.in_progress.remove(&key),
            None if state.is_terminal() => None,
            None => {
                let tenant = self.series_for(&commit.scope.tenant, instruments);
                self.in_progress.insert(key, (state, tenant));
                None
            }
        };
        if let Some((before, _)) = &before {
            instruments.tasks.get_or_create(&StateLabel { state: before.as_proto_name() }).dec();
        }
        if state.is_terminal() {
            instruments.tasks_ended.get_or_create(&StateLabel { state: state.as_proto_name() }).inc();
            if let Some((_, tenant)) = before {
                self.leave(&tenant, instruments);
            }
        } else {
            instruments.tasks.get_or_create(&StateLabel { state: state.as_proto_name() }).inc();
        }
    }

    /// The series a new task in progress of `tenant` is counted in: the tenant's own while there
    /// are fewer than the cap, else one for every other tenant. Tenant names are chosen by
    /// clients, so their series are bounded.
    fn series_for(&mut self, tenant: &str, instruments: &Instruments) -> TenantLabel {
        let own = TenantLabel { tenant: tenant.to_owned() };
        let cap = instruments.max_tenant_series.load(std::sync::atomic::Ordering::Relaxed);
        let label = if self.series.contains_key(&own) || self.series.len() < cap {
            own
        } else {
            TenantLabel { tenant: OTHER_TENANTS.to_owned() }
        };
        *self.series.entry(label.clone()).or_default() += 1;
        instruments.tasks_in_progress.get_or_create(&label).inc();
        label
    }

    /// A task counted in `tenant`'s series ended; the series goes with its last task.
    fn leave(&mut self, tenant: &TenantLabel, instruments: &Instruments) {
        instruments.tasks_in_progress.get_or_create(tenant).dec();
        if let Some(count) = self.series.get_mut(tenant) {
            *count -= 1;
            if *count == 0 {
                self.series.remove(tenant);
                instruments.tasks_in_progress.remove(tenant);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use agentwire_store::{Commit, Scope};
    use agentwire_types::TaskState;

    use super::States;
    use crate::Metrics;

    fn commit(tenant: &str, task: usize, state: TaskState) -> Commit {
        let scope = Scope::new(tenant.to_owned(), "someone".to_owned());
        Commit { scope, task_id: format!("t{task}"), version: 1, state, events: Vec::new(), trace: None }
    }

    /// The tenant series of `metrics`: their labels and values.
    fn tenant_series(metrics: &Metrics) -> Vec<(String, String)> {
        let text = metrics.encode();
        let series = text.lines().filter_map(|line| line.strip_prefix("a2a_tenant_tasks_in_progress{tenant=\""));
        series
            .filter_map(|rest| rest.split_once("\"} "))
            .map(|(tenant, value)| (tenant.to_owned(), value.to_owned()))
            .collect()
    }

    /// The probe's series per tenant: client-chosen tenants get a series each up to the cap, the
    /// rest share one, and every series goes with its tenant's last task in progress.
    #[test]
    fn tenant_series_are_capped() {
        let metrics = Metrics::new();
        metrics.limit_tenant_series(3);
        let mut states = States { gauges: true, ..States::default() };
        for task in 0..10 {
            states.committed(&metrics.instruments, &commit(&format!("tenant{task}"), task, TaskState::Working));
        }
        let series = tenant_series(&metrics);
        assert_eq!(series.len(), 4, "{series:?}");
        assert!(series.contains(&("(other)".to_owned(), "7".to_owned())), "{series:?}");
        for task in 0..10 {
            states.committed(&metrics.instruments, &commit(&format!("tenant{task}"), task, TaskState::Completed));
        }
        assert!(tenant_series(&metrics).is_empty(), "{:?}", tenant_series(&metrics));
    }
}
