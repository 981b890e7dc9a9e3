//! The cancellations of one session's calls, kept when they outrun their call.
//!
//! A client may send `notifications/cancelled` for a request the server has not started yet (the
//! two travel as separate HTTP requests, and rmcp forgets a cancel for a request it does not
//! know). The session remembers such a cancel, so that the call it names ends before it sends
//! anything; and a call that started registers its token, so that a cancel handled after it
//! started reaches it.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use rmcp::model::RequestId;
use tokio_util::sync::CancellationToken;

/// Cancels remembered for requests not seen yet, at most: the oldest are forgotten first.
const MAX_EARLY: usize = 256;

/// One session's calls in flight and the cancels that came before their call.
#[derive(Default)]
pub(crate) struct Cancels {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    running: HashMap<RequestId, CancellationToken>,
    early: VecDeque<RequestId>,
}

impl Cancels {
    /// The request `id` starts, canceled with `parent` or by a cancel for it: its token, already
    /// canceled when a cancel came first. Give it back with [`finished`](Self::finished).
    pub(crate) fn started(&self, id: &RequestId, parent: &CancellationToken) -> CancellationToken {
        let token = parent.child_token();
        let mut state = lock(&self.state);
        if let Some(at) = state.early.iter().position(|early| early == id) {
            state.early.remove(at);
            token.cancel();
        }
        state.running.insert(id.clone(), token.clone());
        token
    }

    /// The request `id` has ended.
    pub(crate) fn finished(&self, id: &RequestId) {
        lock(&self.state).running.remove(id);
    }

    /// The client canceled the request `id`: its call ends, or will as soon as it starts.
    pub(crate) fn cancel(&self, id: &RequestId) {
        let mut state = lock(&self.state);
        if let Some(token) = state.running.get(id) {
            token.cancel();
            return;
        }
        if state.early.len() >= MAX_EARLY {
            state.early.pop_front();
        }
        state.early.push_back(id.clone());
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    #[test]
    fn a_cancel_before_its_call_cancels_the_call_when_it_starts() {
        let cancels = Cancels::default();
        let parent = CancellationToken::new();
        cancels.cancel(&NumberOrString::Number(7));
        assert!(cancels.started(&NumberOrString::Number(7), &parent).is_cancelled());
        cancels.finished(&NumberOrString::Number(7));
        assert!(!cancels.started(&NumberOrString::Number(7), &parent).is_cancelled(), "a cancel counts once");
    }

    #[test]
    fn a_cancel_after_its_call_started_reaches_it() {
        let cancels = Cancels::default();
        let token = cancels.started(&NumberOrString::Number(1), &CancellationToken::new());
        cancels.cancel(&NumberOrString::Number(1));
        assert!(token.is_cancelled());
    }

    #[test]
    fn early_cancels_are_bounded() {
        let cancels = Cancels::default();
        for n in 0..(MAX_EARLY as i64 + 10) {
            cancels.cancel(&NumberOrString::Number(n));
        }
        assert_eq!(lock(&cancels.state).early.len(), MAX_EARLY);
    }
}
