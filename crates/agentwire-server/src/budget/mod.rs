//! Budgets: what a caller may spend on models (tokens, rounds of tool calls) in a window of time,
//! per principal and per tenant (a principal's `tenant` claim), kept in a [`BudgetBook`].
//!
//! A budget is checked before a model is called, and charged with what the call spent once it
//! answered, as LLM proxies do: a call is let through while something is left, so the call that
//! crosses the budget finishes, and the next is refused with ResourceExhausted, saying the budget,
//! what was spent and when it resets. Windows are fixed, aligned to the Unix epoch (an hour's
//! starts on the hour, a day's at midnight UTC), so that every instance agrees on them.
//!
//! [`BudgetBook::shared`] keeps the sums in the store several instances share (PostgreSQL): a
//! budget is then one across them. Otherwise they live in this process's memory, and start again
//! with it.

mod routes;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub use agentwire_store::Spent;
use agentwire_types::{A2AError, Principal, Timestamp};
use async_trait::async_trait;
use serde::Serialize;

/// The name budgets give a caller without a principal (a server that authenticates no one):
/// all of them share one budget.
pub const ANONYMOUS: &str = "(anonymous)";

/// What a holder may spend in each window: tokens (input and output) and rounds of tool calls;
/// `None` for no limit.
///
/// ```
/// use std::time::Duration;
/// use agentwire_server::budget::Budget;
///
/// let daily = Budget { tokens: Some(100_000), tool_rounds: None, window: Duration::from_secs(86_400) };
/// # drop(daily);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Model tokens, input and output, a window.
    pub tokens: Option<u64>,
    /// Rounds of tool calls a window.
    pub tool_rounds: Option<u64>,
    /// The window; its starts are multiples of it since the Unix epoch. At least a second.
    pub window: Duration,
}

impl Budget {
    /// The window holding `now` (ms since the epoch): its start and its end, in ms.
    fn window_at(&self, now: i64) -> (i64, i64) {
        let length = i64::try_from(self.window.as_millis()).unwrap_or(i64::MAX).max(1_000);
        let start = now - now.rem_euclid(length);
        (start, start.saturating_add(length))
    }
}

/// Who spends from a budget: a principal, or every principal of a tenant.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Holder {
    /// A principal, by name ([`ANONYMOUS`] for the callers without one).
    Principal(String),
    /// The principals whose `tenant` claim names it.
    Tenant(String),
}

impl Holder {
    /// The holder as one string, as the store keeps it: `principal:NAME` or `tenant:NAME`.
    pub fn key(&self) -> String {
        match self {
            Self::Principal(name) => format!("principal:{name}"),
            Self::Tenant(name) => format!("tenant:{name}"),
        }
    }

    /// The holder a [`key`](Self::key) names.
    ///
    /// ```
    /// use agentwire_server::budget::Holder;
    ///
    /// let alice = Holder::Principal("alice".into());
    /// assert_eq!(Holder::from_key(&alice.key()), Some(alice));
    /// assert_eq!(Holder::from_key("someone"), None);
    /// ```
    pub fn from_key(key: &str) -> Option<Self> {
        match key.split_once(':')? {
            ("principal", name) => Some(Self::Principal(name.to_owned())),
            ("tenant", name) => Some(Self::Tenant(name.to_owned())),
            _ => None,
        }
    }
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Principal(name) => write!(f, "principal {name}"),
            Self::Tenant(name) => write!(f, "tenant {name}"),
        }
    }
}

/// The budgets of a server: each principal's, the named principals' own, the tenants'.
///
/// ```
/// use std::time::Duration;
/// use agentwire_server::budget::{Budget, Budgets};
///
/// let hour = Duration::from_secs(3_600);
/// let mut budgets = Budgets::default();
/// budgets.each_principal = Some(Budget { tokens: Some(10_000), tool_rounds: Some(20), window: hour });
/// budgets.principals.insert("batch".into(), Budget { tokens: Some(1_000_000), tool_rounds: None, window: hour });
/// assert!(!budgets.is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Budgets {
    /// Every principal's own, unless it has one in `principals`.
    pub each_principal: Option<Budget>,
    /// Principals' own budgets, by name.
    pub principals: BTreeMap<String, Budget>,
    /// Budgets every principal of a tenant spends from together, by tenant (a principal's
    /// `tenant` claim, when it is a string, as a gateway's visibility reads it); a principal of
    /// one spends from its own budget as well.
    pub tenants: BTreeMap<String, Budget>,
}

impl Budgets {
    /// Whether there is no budget at all.
    pub fn is_empty(&self) -> bool {
        self.each_principal.is_none() && self.principals.is_empty() && self.tenants.is_empty()
    }

    /// The budgets `principal` spends from.
    fn of(&self, principal: Option<&Principal>) -> Vec<(Holder, Budget)> {
        let name = principal.map_or(ANONYMOUS, |principal| principal.name.as_str());
        let own = self.principals.get(name).or(self.each_principal.as_ref());
        let tenant = principal.and_then(|principal| principal.claims.get("tenant")).and_then(|t| t.as_str());
        let tenant = tenant.and_then(|tenant| Some((tenant, self.tenants.get(tenant)?)));
        let own = own.map(|budget| (Holder::Principal(name.to_owned()), *budget));
        own.into_iter().chain(tenant.map(|(tenant, budget)| (Holder::Tenant(tenant.to_owned()), *budget))).collect()
    }

    /// The budget of `holder`, if it has one.
    fn of_holder(&self, holder: &Holder) -> Option<Budget> {
        match holder {
            Holder::Principal(name) => self.principals.get(name).or(self.each_principal.as_ref()).copied(),
            Holder::Tenant(name) => self.tenants.get(name).copied(),
        }
    }
}

/// What a call is about to take, for [`BudgetBook::admit`]: about how many tokens and tool
/// rounds; `None` for a measure it does not take, `Some(0)` for one it takes an unknown amount of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Asked {
    /// Tokens, input and output.
    pub tokens: Option<u64>,
    /// Rounds of tool calls.
    pub tool_rounds: Option<u64>,
}

impl Asked {
    /// Any measure, in an unknown amount: refused where a budget is spent.
    pub const ANYTHING: Self = Self { tokens: Some(0), tool_rounds: Some(0) };

    /// A model call that takes about `tokens`.
    pub fn tokens(tokens: u64) -> Self {
        Self { tokens: Some(tokens), tool_rounds: None }
    }

    /// One round of tool calls.
    pub fn tool_round() -> Self {
        Self { tokens: None, tool_rounds: Some(1) }
    }
}

/// Keeps what each holder spent in its current window. [`LocalLedger`], in this process's
/// memory, is the default; [`SharedLedger`] counts in the store several instances share.
#[async_trait]
pub trait BudgetLedger: Send + Sync + 'static {
    /// Adds `spent` to what `holder` (its [`key`](Holder::key)) spent in the window that began at
    /// `window_start` (ms since the epoch), forgetting an earlier window's; returns the sums. A
    /// charge of nothing is a check: it reads, and keeps nothing new.
    async fn charge(&self, holder: &str, window_start: i64, spent: Spent) -> Result<Spent, String>;

    /// What every holder charged spent, with the start of the window it spent it in.
    async fn all(&self) -> Result<Vec<(String, i64, Spent)>, String>;

    /// Forgets what `holder` spent; whether it had spent anything.
    async fn reset(&self, holder: &str) -> Result<bool, String>;
}

/// What each holder spent, in this process's memory.
#[derive(Debug, Default)]
pub struct LocalLedger(Mutex<HashMap<String, (i64, Spent)>>);

#[async_trait]
impl BudgetLedger for LocalLedger {
    async fn charge(&self, holder: &str, window_start: i64, spent: Spent) -> Result<Spent, String> {
        let mut all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if spent == Spent::default() {
            // A check adds no holder: only what callers spent takes room.
            let current = all.get(holder).filter(|(start, _)| *start >= window_start);
            return Ok(current.map(|(_, sum)| *sum).unwrap_or_default());
        }
        let (start, sum) = all.entry(holder.to_owned()).or_insert((window_start, Spent::default()));
        if window_start > *start {
            (*start, *sum) = (window_start, Spent::default());
        }
        sum.tokens = sum.tokens.saturating_add(spent.tokens);
        sum.tool_rounds = sum.tool_rounds.saturating_add(spent.tool_rounds);
        Ok(*sum)
    }

    async fn all(&self) -> Result<Vec<(String, i64, Spent)>, String> {
        let all = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(all.iter().map(|(holder, (start, spent))| (holder.clone(), *start, *spent)).collect())
    }

    async fn reset(&self, holder: &str) -> Result<bool, String> {
        Ok(self.0.lock().unwrap_or_else(PoisonError::into_inner).remove(holder).is_some())
    }
}

/// What each holder spent, in the store several instances share
/// ([`Backend::shared`](agentwire_store::Backend::shared)): one budget across them.
pub struct SharedLedger(Arc<dyn agentwire_store::SharedState>);

impl std::fmt::Debug for SharedLedger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedLedger").finish_non_exhaustive()
    }
}

#[async_trait]
impl BudgetLedger for SharedLedger {
    async fn charge(&self, holder: &str, window_start: i64, spent: Spent) -> Result<Spent, String> {
        let charged = self.0.charge_budget(holder, window_start, spent.tokens, spent.tool_rounds).await;
        charged.map_err(|error| error.to_string())
    }

    async fn all(&self) -> Result<Vec<(String, i64, Spent)>, String> {
        self.0.budgets_spent().await.map_err(|error| error.to_string())
    }

    async fn reset(&self, holder: &str) -> Result<bool, String> {
        self.0.reset_budget(holder).await.map_err(|error| error.to_string())
    }
}

/// A server's [`Budgets`], what their holders spent, and who may see and reset them all.
///
/// ```
/// use std::time::Duration;
/// use agentwire_server::budget::{Budget, BudgetBook, Budgets};
/// use agentwire_types::{ErrorKind, Principal};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let mut budgets = Budgets::default();
/// budgets.each_principal = Some(Budget { tokens: Some(100), tool_rounds: None, window: Duration::from_secs(3_600) });
/// let book = BudgetBook::new(budgets);
/// let (alice, bob) = (Principal::new("alice"), Principal::new("bob"));
/// book.check(Some(&alice)).await.unwrap();
/// book.charge(Some(&alice), 120, 0).await;
/// let refused = book.check(Some(&alice)).await.unwrap_err();
/// assert_eq!(refused.kind(), ErrorKind::ResourceExhausted);
/// assert!(refused.message().contains("120 of 100 tokens"), "{}", refused.message());
/// book.check(Some(&bob)).await.unwrap();
/// # });
/// ```
#[derive(Clone)]
pub struct BudgetBook {
    budgets: Arc<Budgets>,
    ledger: Arc<dyn BudgetLedger>,
    admins: Arc<[String]>,
}

impl std::fmt::Debug for BudgetBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BudgetBook").field("budgets", &self.budgets).field("admins", &self.admins).finish()
    }
}

/// A holder's budget and what it spent in the current window, as `GET /budgets` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Statement {
    /// `principal:NAME` or `tenant:NAME`.
    pub holder: String,
    /// The window's length, in seconds.
    pub window_seconds: u64,
    /// When the current window began.
    pub window_start: Timestamp,
    /// When it ends, and the spending starts again from nothing.
    pub resets_at: Timestamp,
    /// The tokens it may spend and has spent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Measure>,
    /// The rounds of tool calls it may make and has made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_rounds: Option<Measure>,
}

/// A limit and what was spent of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Measure {
    /// What may be spent in a window.
    pub budget: u64,
    /// What was spent in this one.
    pub spent: u64,
}

impl BudgetBook {
    /// `budgets`, counted in this process ([`LocalLedger`]).
    pub fn new(budgets: Budgets) -> Self {
        Self::counted_by(budgets, Arc::new(LocalLedger::default()))
    }

    /// `budgets`, counted by `ledger`.
    pub fn counted_by(budgets: Budgets, ledger: Arc<dyn BudgetLedger>) -> Self {
        Self { budgets: Arc::new(budgets), ledger, admins: Arc::from([]) }
    }

    /// `budgets`, counted in `backend`'s shared state when it has one (one budget across the
    /// instances on a PostgreSQL database), else in this process.
    pub fn shared(budgets: Budgets, backend: &agentwire_store::Backend) -> Self {
        match backend.shared() {
            Some(shared) => Self::counted_by(budgets, Arc::new(SharedLedger(Arc::clone(shared)))),
            None => Self::new(budgets),
        }
    }

    /// The principals who may see every holder's budget and reset them (`GET /budgets`,
    /// `DELETE /budgets/principal/NAME`); where a server authenticates no one, callers on its own
    /// host may.
    pub fn admins(mut self, admins: impl IntoIterator<Item = String>) -> Self {
        self.admins = admins.into_iter().collect();
        self
    }

    /// The budgets.
    pub fn budgets(&self) -> &Budgets {
        &self.budgets
    }

    /// Refuses `principal` (`None`: an anonymous caller) with ResourceExhausted while a budget it
    /// spends from is spent, saying which, what was spent, and when it resets. When the ledger
    /// cannot be read, the caller is let through (and the failure logged).
    pub async fn check(&self, principal: Option<&Principal>) -> Result<(), A2AError> {
        self.charge_all(principal, Spent::default(), Asked::ANYTHING).await
    }

    /// Refuses `principal`, as [`check`](Self::check) does, a call that would take a budget it
    /// spends from past its limit: one that `asked` about as many tokens or tool rounds as
    /// there are left, or more. Measures the call does not take (`None`) are not looked at.
    ///
    /// ```
    /// use std::time::Duration;
    /// use agentwire_server::budget::{Asked, Budget, BudgetBook, Budgets};
    /// use agentwire_types::Principal;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let budget = Budget { tokens: Some(100), tool_rounds: Some(1), window: Duration::from_secs(3_600) };
    /// let book = BudgetBook::new(Budgets { each_principal: Some(budget), ..Budgets::default() });
    /// let alice = Principal::new("alice");
    /// book.charge(Some(&alice), 60, 1).await.unwrap_err();
    /// book.admit(Some(&alice), Asked::tokens(40)).await.unwrap();
    /// assert!(book.admit(Some(&alice), Asked::tokens(41)).await.unwrap_err().message().contains("would be passed"));
    /// book.admit(Some(&alice), Asked::tool_round()).await.unwrap_err();
    /// # });
    /// ```
    pub async fn admit(&self, principal: Option<&Principal>, asked: Asked) -> Result<(), A2AError> {
        self.charge_all(principal, Spent::default(), asked).await
    }

    /// Charges what `principal` spent (`tokens`, `tool_rounds`) to every budget it spends from;
    /// the refusal [`check`](Self::check) would now give, if a budget is spent.
    pub async fn charge(&self, principal: Option<&Principal>, tokens: u64, tool_rounds: u64) -> Result<(), A2AError> {
        self.charge_all(principal, Spent { tokens, tool_rounds }, Asked::ANYTHING).await
    }

    async fn charge_all(&self, principal: Option<&Principal>, spent: Spent, asked: Asked) -> Result<(), A2AError> {
        let now = now_millis();
        let mut refusal = None;
        for (holder, budget) in self.budgets.of(principal) {
            let (start, end) = budget.window_at(now);
            let sums = match self.ledger.charge(&holder.key(), start, spent).await {
                Ok(sums) => sums,
                Err(error) => {
                    tracing::warn!(%error, %holder, "could not count against a budget; letting the caller through");
                    continue;
                }
            };
            let measures = [
                ("tokens", budget.tokens, sums.tokens, asked.tokens),
                ("tool rounds", budget.tool_rounds, sums.tool_rounds, asked.tool_rounds),
            ];
            let over = measures.into_iter().find_map(|(measure, limit, spent, more)| {
                let (limit, more) = (limit?, more?);
                (spent >= limit || spent.saturating_add(more) > limit).then_some(Over { measure, limit, spent, more })
            });
            if let (Some(over), None) = (over, &refusal) {
                refusal = Some(over.error(&holder, &budget, end, now));
            }
        }
        refusal.map_or(Ok(()), Err)
    }

    /// The statements of the holders `principal` spends from; of every holder charged or named
    /// when `all`.
    pub async fn statements(&self, principal: Option<&Principal>, all: bool) -> Result<Vec<Statement>, A2AError> {
        let unread = |error: String| A2AError::internal(format!("the budgets' ledger could not be read: {error}"));
        let now = now_millis();
        let mut holders: Vec<Holder> = self.budgets.of(principal).into_iter().map(|(holder, _)| holder).collect();
        // Every holder's sums for an admin; a caller's own are read one by one, as checks read
        // them, rather than with everyone else's.
        let mut charged: HashMap<String, (i64, Spent)> = HashMap::new();
        if all {
            let rows = self.ledger.all().await.map_err(unread)?;
            charged = rows.into_iter().map(|(holder, start, spent)| (holder, (start, spent))).collect();
            let named = self.budgets.principals.keys().map(|name| Holder::Principal(name.clone()));
            let tenants = self.budgets.tenants.keys().map(|name| Holder::Tenant(name.clone()));
            let others = charged.keys().filter_map(|key| Holder::from_key(key));
            holders.extend(named.chain(tenants).chain(others));
        }
        holders.sort();
        holders.dedup();
        let mut statements = Vec::with_capacity(holders.len());
        for holder in holders {
            let Some(budget) = self.budgets.of_holder(&holder) else { continue };
            let (start, end) = budget.window_at(now);
            let spent = match charged.get(&holder.key()) {
                Some((charged_at, spent)) if *charged_at >= start => *spent,
                Some(_) => Spent::default(),
                None if all => Spent::default(),
                None => self.ledger.charge(&holder.key(), start, Spent::default()).await.map_err(unread)?,
            };
            statements.push(Statement {
                holder: holder.key(),
                window_seconds: budget.window.as_secs(),
                window_start: timestamp(start),
                resets_at: timestamp(end),
                tokens: budget.tokens.map(|budget| Measure { budget, spent: spent.tokens }),
                tool_rounds: budget.tool_rounds.map(|budget| Measure { budget, spent: spent.tool_rounds }),
            });
        }
        Ok(statements)
    }

    /// Forgets what `holder` spent in its window: it may spend its whole budget again. Whether it
    /// had spent anything.
    pub async fn reset(&self, holder: &Holder) -> Result<bool, A2AError> {
        self.ledger
            .reset(&holder.key())
            .await
            .map_err(|error| A2AError::internal(format!("the budget of {holder} could not be reset: {error}")))
    }

    /// Whether `principal` may see every budget and reset them.
    pub(crate) fn is_admin(&self, principal: &Principal) -> bool {
        self.admins.contains(&principal.name)
    }
}

/// Whether `principal`, calling from `peer`, may see every holder's budget and usage and reset
/// budgets: an admin of `book`, or, on a server that `authenticates` no one, a caller on its own
/// host.
pub(crate) fn sees_everyone(
    book: Option<&BudgetBook>,
    authenticates: bool,
    principal: Option<&Principal>,
    peer: Option<&agentwire_types::Peer>,
) -> bool {
    match principal {
        Some(principal) => book.is_some_and(|book| book.is_admin(principal)),
        None => !authenticates && peer.is_some_and(|peer| peer.addr.ip().to_canonical().is_loopback()),
    }
}

/// A measure of a budget that a call finds spent, or would pass.
struct Over {
    measure: &'static str,
    limit: u64,
    spent: u64,
    /// What the call asked for (0: unknown).
    more: u64,
}

impl Over {
    /// The refusal of a caller whose `holder`'s `budget` this is, in the window that ends at
    /// `end`.
    fn error(&self, holder: &Holder, budget: &Budget, end: i64, now: i64) -> A2AError {
        let Self { measure, limit, spent, more } = *self;
        let resets_at = timestamp(end).to_string();
        let window = humane(budget.window);
        let message = if spent >= limit {
            format!(
                "the budget of {holder} is spent: {spent} of {limit} {measure} in this window of {window}; it resets at {resets_at}"
            )
        } else {
            format!(
                "the budget of {holder} would be passed: {spent} of {limit} {measure} spent in this window of {window}, \
                 and this call needs about {more} more; it resets at {resets_at}"
            )
        };
        let wait = Duration::from_millis(u64::try_from(end.saturating_sub(now)).unwrap_or(0));
        A2AError::resource_exhausted(message)
            .with_retry_after(wait)
            .with_metadata("budgetHolder", holder.key())
            .with_metadata("budgetMeasure", measure)
            .with_metadata("budget", limit.to_string())
            .with_metadata("spent", spent.to_string())
            .with_metadata("resetsAt", resets_at)
    }
}

/// `window` as a person says it: `1h`, `30m`, `7d`.
fn humane(window: Duration) -> String {
    let seconds = window.as_secs();
    [(86_400, "d"), (3_600, "h"), (60, "m")]
        .into_iter()
        .find(|(unit, _)| seconds >= *unit && seconds.is_multiple_of(*unit))
        .map_or_else(|| format!("{seconds}s"), |(unit, name)| format!("{}{name}", seconds / unit))
}

fn now_millis() -> i64 {
    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

/// `millis` since the epoch as a timestamp; the epoch itself for one out of range.
fn timestamp(millis: i64) -> Timestamp {
    Timestamp::from_millis(millis).or_else(|| Timestamp::from_millis(0)).unwrap_or_else(Timestamp::now)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hourly(tokens: u64) -> Budget {
        Budget { tokens: Some(tokens), tool_rounds: Some(2), window: Duration::from_secs(3_600) }
    }

    /// A window no test runs across (a year and a day, from a multiple of it since the epoch).
    fn yearly(tokens: u64) -> Budget {
        Budget { window: Duration::from_secs(366 * 86_400), ..hourly(tokens) }
    }

    #[test]
    fn windows_start_on_their_multiples_of_the_epoch() {
        let hour = 3_600_000;
        assert_eq!(hourly(1).window_at(5 * hour + 17), (5 * hour, 6 * hour));
        assert_eq!(humane(Duration::from_secs(86_400)), "1d");
        assert_eq!(humane(Duration::from_secs(90)), "90s");
    }

    #[tokio::test]
    async fn a_tenant_budget_is_spent_by_all_its_principals_and_each_has_its_own() {
        let mut budgets = Budgets { each_principal: Some(yearly(100)), ..Budgets::default() };
        budgets.tenants.insert("acme".into(), yearly(150));
        let book = BudgetBook::new(budgets);
        let of_acme = |name: &str| Principal::new(name).with_claim("tenant", "acme");
        let (alice, bob, carol) = (of_acme("alice"), of_acme("bob"), Principal::new("carol"));
        book.charge(Some(&alice), 90, 0).await.unwrap();
        book.charge(Some(&bob), 60, 0).await.unwrap_err();
        let refused = book.check(Some(&alice)).await.unwrap_err();
        assert!(refused.message().contains("tenant acme"), "{}", refused.message());
        assert_eq!(refused.metadata().get("budget").map(String::as_str), Some("150"));
        book.check(Some(&carol)).await.unwrap();
        book.charge(Some(&carol), 0, 2).await.unwrap_err();
        assert!(book.check(Some(&carol)).await.unwrap_err().message().contains("2 of 2 tool rounds"));
        assert!(book.reset(&Holder::Tenant("acme".into())).await.unwrap());
        book.check(Some(&alice)).await.unwrap();
        let statements = book.statements(None, true).await.unwrap();
        let holders: Vec<&str> = statements.iter().map(|s| s.holder.as_str()).collect();
        assert_eq!(
            holders,
            ["principal:(anonymous)", "principal:alice", "principal:bob", "principal:carol", "tenant:acme"]
        );
        assert_eq!(statements[1].tokens, Some(Measure { budget: 100, spent: 90 }));
    }

    #[tokio::test]
    async fn a_new_window_starts_from_nothing_and_sums_do_not_wrap() {
        let ledger = LocalLedger::default();
        let huge = Spent { tokens: u64::MAX, tool_rounds: 1 };
        ledger.charge("principal:a", 0, huge).await.unwrap();
        assert_eq!(ledger.charge("principal:a", 0, huge).await.unwrap().tokens, u64::MAX);
        let next = ledger.charge("principal:a", 3_600_000, Spent { tokens: 5, tool_rounds: 0 }).await.unwrap();
        assert_eq!(next, Spent { tokens: 5, tool_rounds: 0 });
    }
}
