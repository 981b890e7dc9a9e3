//! What agents spend, as they report it with the usage extension ([`USAGE_EXTENSION`]), counted
//! by caller, agent and model in the gateway's metrics as their answers pass through it, and
//! charged to the callers' budgets, which the gateway checks before it relays a send.

use std::collections::{HashSet, VecDeque};
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, PoisonError};

use agentwire_server::budget::BudgetBook;
use agentwire_server::{Metrics, Operations};
use agentwire_types::{
    A2aRequest, A2aResponse, Principal, RequestContext, SendMessageResponse, StreamResponse, Task,
    TaskStatusUpdateEvent, Usage,
};
use futures_util::StreamExt;
use tower::ServiceExt;

#[cfg(doc)]
use agentwire_types::USAGE_EXTENSION;

/// How many turns the meter remembers having counted: a turn read again within them (a task
/// polled, a stream resumed) is not counted twice.
const REMEMBERED_TURNS: usize = 16 * 1024;

/// Counts the usage of each turn an agent reports, once, as the answers that end the turn pass
/// through the gateway: a blocking send's task, a stream's last status, a task read by GetTask
/// or a subscription. Shared by every agent of a gateway.
#[derive(Clone)]
pub(crate) struct UsageMeter(Arc<Inner>);

struct Inner {
    metrics: Option<Metrics>,
    budgets: Option<BudgetBook>,
    counted: Mutex<Counted>,
    hasher: std::hash::RandomState,
}

/// The turns counted lately, oldest first out.
#[derive(Default)]
struct Counted {
    order: VecDeque<u64>,
    set: HashSet<u64>,
}

impl Counted {
    /// Remembers `turn`; false when it was already.
    fn first_time(&mut self, turn: u64) -> bool {
        if !self.set.insert(turn) {
            return false;
        }
        self.order.push_back(turn);
        if self.order.len() > REMEMBERED_TURNS
            && let Some(oldest) = self.order.pop_front()
        {
            self.set.remove(&oldest);
        }
        true
    }
}

impl UsageMeter {
    /// A meter that counts in `metrics` and charges `budgets`; none when it has neither.
    pub(crate) fn new(metrics: Option<Metrics>, budgets: Option<BudgetBook>) -> Option<Self> {
        if metrics.is_none() && budgets.is_none() {
            return None;
        }
        let counted = Mutex::default();
        Some(Self(Arc::new(Inner { metrics, budgets, counted, hasher: std::hash::RandomState::new() })))
    }

    /// `operations` of the agent mounted as `agent`, whose answers are metered, and whose sends
    /// are refused to a caller whose budget is spent.
    pub(crate) fn metered(&self, agent: &str, operations: Operations) -> Operations {
        let (meter, agent): (Self, Arc<str>) = (self.clone(), agent.into());
        let service = tower::service_fn(move |(ctx, request): (RequestContext, A2aRequest)| {
            let (meter, agent, operations) = (meter.clone(), Arc::clone(&agent), operations.clone());
            let sends = matches!(request, A2aRequest::SendMessage(_) | A2aRequest::SendStreamingMessage(_));
            let reads_turns = sends || matches!(request, A2aRequest::GetTask(_) | A2aRequest::SubscribeToTask(_));
            let principal = ctx.principal.clone();
            async move {
                if let (true, Some(budgets)) = (sends, &meter.0.budgets) {
                    budgets.check(principal.as_ref()).await?;
                }
                let answer = operations.oneshot((ctx, request)).await?;
                if !reads_turns {
                    return Ok(answer);
                }
                let caller = Arc::new(Caller { meter, agent, principal });
                Ok(match answer {
                    A2aResponse::Send(SendMessageResponse::Task(task)) => {
                        caller.task(&task).await;
                        A2aResponse::Send(SendMessageResponse::Task(task))
                    }
                    A2aResponse::Task(task) => {
                        caller.task(&task).await;
                        A2aResponse::Task(task)
                    }
                    // Each event is let through once its turn is charged: the caller's next send
                    // sees it spent.
                    A2aResponse::Stream(events) => A2aResponse::Stream(Box::pin(events.then(move |item| {
                        let caller = Arc::clone(&caller);
                        async move {
                            if let Ok(item) = &item {
                                caller.event(&item.response).await;
                            }
                            item
                        }
                    }))),
                    other => other,
                })
            }
        });
        tower::util::BoxCloneSyncService::new(service)
    }
}

/// A request's caller and the agent it reached.
struct Caller {
    meter: UsageMeter,
    agent: Arc<str>,
    principal: Option<Principal>,
}

impl Caller {
    /// Counts the turn `task` ended, if it ended one (a final or interrupted state) and reports it.
    async fn task(&self, task: &Task) {
        if task.status.state.is_terminal() || task.status.state.is_interrupted() {
            self.count(&task.id, task.metadata.as_ref()).await;
        }
    }

    async fn event(&self, event: &StreamResponse) {
        match event {
            StreamResponse::Task(task) => self.task(task).await,
            StreamResponse::StatusUpdate(TaskStatusUpdateEvent { task_id, status, metadata, .. })
                if status.state.is_terminal() || status.state.is_interrupted() =>
            {
                self.count(task_id, metadata.as_ref()).await;
            }
            _ => {}
        }
    }

    async fn count(&self, task_id: &str, metadata: Option<&serde_json::Map<String, serde_json::Value>>) {
        let Some(usage) = Usage::in_metadata(metadata) else { return };
        let inner = &self.meter.0;
        // A turn is known by its task and the totals it ended with: the same answer read again
        // has the same, the next turn's differ (one more model call at least, or more time).
        let turn = inner.hasher.hash_one((&*self.agent, task_id, usage.total));
        if !inner.counted.lock().unwrap_or_else(PoisonError::into_inner).first_time(turn) {
            return;
        }
        if let Some(metrics) = &inner.metrics {
            let principal = self.principal.as_ref().map(|principal| principal.name.as_str()).unwrap_or_default();
            metrics.count_usage(principal, &self.agent, &usage);
        }
        if let Some(budgets) = &inner.budgets {
            let (budgets, principal, spent) = (budgets.clone(), self.principal.clone(), usage.latest());
            // Charged to its end even if the caller goes away meanwhile (a stream dropped): the
            // turn is counted already, and would not be charged again.
            let charged = tokio::spawn(async move {
                let _spent = budgets.charge(principal.as_ref(), spent.tokens(), spent.tool_rounds).await;
            });
            let _ = charged.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_is_remembered_until_many_more_come() {
        let mut counted = Counted::default();
        assert!(counted.first_time(1));
        assert!(!counted.first_time(1));
        for turn in 2..=REMEMBERED_TURNS as u64 + 1 {
            assert!(counted.first_time(turn));
        }
        assert_eq!(counted.set.len(), REMEMBERED_TURNS);
        assert!(counted.first_time(1), "the oldest is forgotten first");
        assert!(!counted.first_time(REMEMBERED_TURNS as u64 + 1));
    }
}
