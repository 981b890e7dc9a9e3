//! The sessions of `/mcp`, counted and bound: each belongs to the caller that opened it, a caller
//! and the server hold at most so many at once, and one with nothing in flight for its idle time
//! is closed.
//!
//! rmcp's [`LocalSessionManager`] keeps the sessions; [`BoundSessions`] wraps it to learn when one
//! is made and when it ends. The HTTP guard ([`crate::router`]) reserves a place before a request
//! may open a session, and hands the reservation to the manager through a task-local, since
//! rmcp asks its manager for a session without the request.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use agentwire_server::quota::Caller;
use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId, SessionManager};
use tokio::time::Instant;

/// How many sessions `/mcp` holds, and for how long one may sit idle.
///
/// ```
/// use std::time::Duration;
/// use agentwire_mcp::SessionLimits;
///
/// let limits = SessionLimits { max_sessions_per_caller: 10, idle: Duration::from_secs(60), ..SessionLimits::default() };
/// # drop(limits);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionLimits {
    /// Most sessions open at once, over all callers (1,000 by default). Past it, `initialize` is
    /// refused with 429.
    pub max_sessions: usize,
    /// Most sessions one caller (a principal; without authentication, an address) has open at
    /// once (50 by default). Past it, its `initialize` is refused with 429.
    pub max_sessions_per_caller: usize,
    /// How long a session with no request in flight lives after its last one (2 minutes by
    /// default). A client whose session ended is answered 404 and opens another, as MCP says.
    pub idle: Duration,
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self { max_sessions: 1_000, max_sessions_per_caller: 50, idle: Duration::from_secs(120) }
    }
}

tokio::task_local! {
    /// The place reserved for the session the current request may open.
    static OPENING: RefCell<Option<Reservation>>;
}

/// Runs `request` (a request that may open a session) with `reservation` for the session it opens.
pub(crate) async fn opening<F: Future>(reservation: Reservation, request: F) -> F::Output {
    OPENING.scope(RefCell::new(Some(reservation)), request).await
}

/// rmcp's sessions, each counted from its creation to its end.
pub(crate) struct BoundSessions {
    inner: LocalSessionManager,
    book: Mutex<Book>,
    limits: SessionLimits,
}

/// Who holds which session, and how many each caller holds (reservations included).
#[derive(Default)]
struct Book {
    by_id: HashMap<SessionId, Entry>,
    per_caller: HashMap<Caller, usize>,
    total: usize,
    swept_at: Option<Instant>,
}

struct Entry {
    owner: Option<String>,
    caller: Caller,
    in_flight: usize,
    last_seen: Instant,
}

/// Why a caller may not open a session now.
#[derive(Debug)]
pub(crate) struct Full(pub(crate) String);

/// A session the caller may not use: another principal's, or one unknown or ending.
#[derive(Debug)]
pub(crate) struct NotYours;

impl BoundSessions {
    /// Sessions within `limits`, swept in the background while the manager lives (when made on
    /// a Tokio runtime; otherwise when requests come).
    pub(crate) fn new(limits: SessionLimits) -> Arc<Self> {
        let mut inner = LocalSessionManager::default();
        // The idle time is ours: rmcp's would also end a session whose long call sends nothing.
        inner.session_config.keep_alive = None;
        let sessions = Arc::new(Self { inner, book: Mutex::new(Book::default()), limits });
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(sweep_while_alive(Arc::downgrade(&sessions)));
        }
        sessions
    }

    /// A place for one more session of `caller` (whose principal is `owner`), or why not.
    pub(crate) async fn reserve(self: &Arc<Self>, caller: Caller, owner: Option<String>) -> Result<Reservation, Full> {
        if let Err(full) = self.try_reserve(&caller) {
            // Sessions past their idle time make room before anyone is refused.
            self.sweep(true).await;
            self.try_reserve(&caller).map_err(|_| full)?;
        }
        Ok(Reservation { sessions: Arc::clone(self), caller, owner, claimed: false })
    }

    fn try_reserve(&self, caller: &Caller) -> Result<(), Full> {
        let mut book = lock(&self.book);
        let held = book.per_caller.get(caller).copied().unwrap_or(0);
        if held >= self.limits.max_sessions_per_caller {
            let most = self.limits.max_sessions_per_caller;
            return Err(Full(format!(
                "at most {most} MCP sessions may be open at once per caller; end one (DELETE /mcp) or reuse it"
            )));
        }
        if book.total >= self.limits.max_sessions {
            return Err(Full(format!(
                "the server holds its most MCP sessions ({}); retry later",
                self.limits.max_sessions
            )));
        }
        *book.per_caller.entry(caller.clone()).or_default() += 1;
        book.total += 1;
        Ok(())
    }

    /// A request in the session `id` by the principal `owner`: a mark held while it is in
    /// flight; or `NotYours` for a session of someone else's, or one that is unknown or ending
    /// (every session this server opens is in the book from its creation, before its id is
    /// given, to the start of its end).
    pub(crate) fn enter(self: &Arc<Self>, id: &str, owner: Option<&str>) -> Result<InFlight, NotYours> {
        let mut book = lock(&self.book);
        let entry = book.by_id.get_mut(id).ok_or(NotYours)?;
        if entry.owner.as_deref() != owner {
            return Err(NotYours);
        }
        entry.in_flight += 1;
        Ok(InFlight { sessions: Arc::clone(self), id: Arc::from(id) })
    }

    /// Closes the sessions idle past their time: at most once a second unless `now`.
    pub(crate) async fn sweep(&self, now: bool) {
        let idle: Vec<SessionId> = {
            let mut book = lock(&self.book);
            let at = Instant::now();
            if !now && book.swept_at.is_some_and(|swept| at.duration_since(swept) < Duration::from_secs(1)) {
                return;
            }
            book.swept_at = Some(at);
            let idle: Vec<SessionId> = book
                .by_id
                .iter()
                .filter(|(_, entry)| entry.in_flight == 0 && at.duration_since(entry.last_seen) >= self.limits.idle)
                .map(|(id, _)| id.clone())
                .collect();
            for id in &idle {
                book.forget(id);
            }
            idle
        };
        for id in idle {
            tracing::debug!(session = %id, "closing an idle MCP session");
            if let Err(error) = self.inner.close_session(&id).await {
                tracing::debug!(session = %id, %error, "an idle MCP session could not be closed");
            }
        }
    }

    fn release(&self, caller: &Caller) {
        lock(&self.book).release(caller);
    }
}

impl Book {
    /// Drops the session `id`, giving its place back.
    fn forget(&mut self, id: &str) {
        if let Some(entry) = self.by_id.remove(id) {
            self.release(&entry.caller);
        }
    }

    fn release(&mut self, caller: &Caller) {
        if let Some(held) = self.per_caller.get_mut(caller) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                self.per_caller.remove(caller);
            }
        }
        self.total = self.total.saturating_sub(1);
    }
}

/// Sweeps `sessions` every second or so until they are dropped.
async fn sweep_while_alive(sessions: Weak<BoundSessions>) {
    let period = match sessions.upgrade() {
        Some(sessions) => (sessions.limits.idle / 2).clamp(Duration::from_millis(250), Duration::from_secs(5)),
        None => return,
    };
    loop {
        tokio::time::sleep(period).await;
        let Some(sessions) = sessions.upgrade() else { return };
        sessions.sweep(true).await;
    }
}

/// A place held for a session about to be opened; given back when dropped unclaimed.
pub(crate) struct Reservation {
    sessions: Arc<BoundSessions>,
    caller: Caller,
    owner: Option<String>,
    claimed: bool,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if !self.claimed {
            self.sessions.release(&self.caller);
        }
    }
}

/// A request in flight in a session: the session is not idle until it is dropped.
pub(crate) struct InFlight {
    sessions: Arc<BoundSessions>,
    id: SessionId,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut book = lock(&self.sessions.book);
        if let Some(entry) = book.by_id.get_mut(&self.id) {
            entry.in_flight = entry.in_flight.saturating_sub(1);
            entry.last_seen = Instant::now();
        }
    }
}

impl SessionManager for BoundSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        let reservation = OPENING.try_with(|opening| opening.borrow_mut().take()).ok().flatten();
        if let Some(mut reservation) = reservation {
            reservation.claimed = true;
            let entry = Entry {
                owner: reservation.owner.take(),
                caller: reservation.caller.clone(),
                in_flight: 0,
                last_seen: Instant::now(),
            };
            lock(&self.book).by_id.insert(id.clone(), entry);
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        lock(&self.book).forget(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> Caller {
        Caller::Principal("alice".into())
    }

    #[tokio::test]
    async fn a_caller_holds_at_most_its_sessions_and_the_server_at_most_its_own() {
        let limits = SessionLimits { max_sessions: 3, max_sessions_per_caller: 2, idle: Duration::from_secs(60) };
        let sessions = BoundSessions::new(limits);
        let first = sessions.reserve(alice(), Some("alice".into())).await.unwrap();
        let _second = sessions.reserve(alice(), Some("alice".into())).await.unwrap();
        let refused = sessions.reserve(alice(), Some("alice".into())).await.err().unwrap();
        assert!(refused.0.contains("at most 2 MCP sessions"), "{refused:?}");
        drop(first);
        let _third = sessions.reserve(alice(), Some("alice".into())).await.unwrap();
        let _bob = sessions.reserve(Caller::Principal("bob".into()), None).await.unwrap();
        let refused = sessions.reserve(Caller::Principal("carol".into()), None).await.err().unwrap();
        assert!(refused.0.contains("most MCP sessions (3)"), "{refused:?}");
    }

    #[tokio::test]
    async fn a_session_is_its_openers_and_ends_when_idle() {
        let limits = SessionLimits { max_sessions: 10, max_sessions_per_caller: 1, idle: Duration::from_millis(50) };
        let sessions = BoundSessions::new(limits);
        let reservation = sessions.reserve(alice(), Some("alice".into())).await.unwrap();
        let (id, _transport) = opening(reservation, sessions.create_session()).await.unwrap();
        assert!(matches!(sessions.enter(&id, Some("bob")), Err(NotYours)));
        assert!(matches!(sessions.enter(&id, None), Err(NotYours)));
        let busy = sessions.enter(&id, Some("alice")).unwrap();
        tokio::time::sleep(Duration::from_millis(80)).await;
        sessions.sweep(true).await;
        assert!(sessions.enter(&id, Some("alice")).is_ok(), "a session with a request in flight stays");
        drop(busy);
        tokio::time::sleep(Duration::from_millis(80)).await;
        sessions.sweep(true).await;
        assert!(matches!(sessions.enter(&id, Some("alice")), Err(NotYours)), "an idle session is closed");
        assert!(sessions.reserve(alice(), Some("alice".into())).await.is_ok(), "and its place given back");
    }
}
