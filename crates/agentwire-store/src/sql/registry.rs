//! What the SQL registries share: an agent's row, and its columns as written.

use std::sync::Arc;

use agentwire_types::{AgentCard, Timestamp};

use crate::registry::{CallerAuthMode, CardState, RegisteredAgent, Registration, SignatureState, Visibility};
use crate::{Result, StoreError};

/// The columns every read of the registry selects, in [`AgentRow`]'s order.
pub(crate) const AGENT_COLUMNS: &str = "name, card_url, credential, caller_auth, visibility, registered_by, \
     registered_at, card, healthy, failures, checked_at, answered_at, signature, error";

/// An agent's row.
#[derive(sqlx::FromRow)]
pub(crate) struct AgentRow {
    name: String,
    card_url: String,
    credential: Option<String>,
    caller_auth: Option<String>,
    visibility: String,
    registered_by: String,
    registered_at: i64,
    card: Option<String>,
    healthy: bool,
    failures: i32,
    checked_at: Option<i64>,
    answered_at: Option<i64>,
    signature: String,
    error: Option<String>,
}

impl AgentRow {
    /// The agent the row holds; a card or visibility that no longer reads is left out (the next
    /// check of the agent records its card again) rather than failing every read.
    pub(crate) fn agent(self) -> RegisteredAgent {
        let millis = |ms: Option<i64>| ms.and_then(Timestamp::from_millis);
        let card = self.card.and_then(|card| serde_json::from_str::<AgentCard>(&card).ok()).map(Arc::new);
        let caller_auth = self.caller_auth.as_deref().map(CallerAuthMode::from_name);
        // A mode this version does not know (a newer instance's): the agent is seen by nobody
        // rather than called another way.
        let unknown_mode = matches!(caller_auth, Some(None));
        let nobody = || Visibility { principals: vec![String::new()], ..Visibility::default() };
        let registration = Registration {
            // Unreadable: seen by nobody rather than by everybody.
            visibility: serde_json::from_str(&self.visibility).ok().filter(|_| !unknown_mode).unwrap_or_else(nobody),
            name: self.name,
            card_url: self.card_url,
            credential: self.credential,
            caller_auth: caller_auth.flatten(),
            registered_by: self.registered_by,
            registered_at: Timestamp::from_millis(self.registered_at).unwrap_or_else(Timestamp::now),
        };
        let state = CardState {
            card,
            healthy: self.healthy,
            failures: u32::try_from(self.failures).unwrap_or(0),
            checked_at: millis(self.checked_at),
            answered_at: millis(self.answered_at),
            signature: SignatureState::from_name(&self.signature),
            error: self.error,
        };
        RegisteredAgent { registration, state }
    }
}

/// `visibility` as stored.
pub(crate) fn visibility_column(visibility: &Visibility) -> Result<String> {
    serde_json::to_string(visibility).map_err(|e| StoreError::Backend(e.to_string()))
}

/// `state`'s card as stored.
pub(crate) fn card_column(state: &CardState) -> Result<Option<String>> {
    state.card.as_deref().map(serde_json::to_string).transpose().map_err(|e| StoreError::Backend(e.to_string()))
}

/// Gives `$registry` the registry's writes and reads on its pools `$reads` and `$writes`, with
/// the statements built for `$db`; `$lock` ends the read of a name's row in a registration (a
/// row lock where several writers race). The backend supplies `index` and `unindex` (what a
/// search finds a name by, in a transaction) and `find` (the search itself): those differ by
/// engine, the rest does not. A macro rather than generic code, as for the task reads.
macro_rules! sql_registry {
    ($registry:ty, $db:ty, $reads:ident, $writes:ident, $lock:expr) => {
        impl $registry {
            /// Moves the registry's revision on, in `tx`.
            async fn bump(tx: &mut sqlx::Transaction<'_, $db>) -> Result<()> {
                sqlx::query("UPDATE registry_revision SET revision = revision + 1 WHERE id = 1")
                    .execute(&mut **tx)
                    .await
                    .map_err(backend)?;
                Ok(())
            }
        }

        #[async_trait::async_trait]
        impl RegistryStore for $registry {
            async fn register(&self, registration: &Registration) -> Result<()> {
                let mut tx = self.$writes.begin().await.map_err(backend)?;
                let mut known = sqlx::QueryBuilder::<$db>::new("SELECT card_url FROM registry_agents WHERE name = ");
                known.push_bind(&registration.name).push($lock);
                let known: Option<(String,)> =
                    known.build_query_as().fetch_optional(&mut *tx).await.map_err(backend)?;
                let same_card = known.is_some_and(|(url,)| url == registration.card_url);
                if !same_card {
                    unindex(&mut tx, &registration.name).await?;
                    let mut delete = sqlx::QueryBuilder::<$db>::new("DELETE FROM registry_agents WHERE name = ");
                    delete.push_bind(&registration.name).build().execute(&mut *tx).await.map_err(backend)?;
                }
                let visibility = crate::sql::registry::visibility_column(&registration.visibility)?;
                let mut insert = sqlx::QueryBuilder::<$db>::new(
                    "INSERT INTO registry_agents \
                     (name, card_url, credential, caller_auth, visibility, registered_by, registered_at) VALUES (",
                );
                let mut values = insert.separated(", ");
                values.push_bind(&registration.name).push_bind(&registration.card_url);
                values.push_bind(&registration.credential);
                values.push_bind(registration.caller_auth.map(crate::registry::CallerAuthMode::as_str)).push_bind(visibility);
                values.push_bind(&registration.registered_by).push_bind(registration.registered_at.as_millis());
                insert.push(")");
                insert.push(
                    " ON CONFLICT (name) DO UPDATE SET credential = excluded.credential, \
                     caller_auth = excluded.caller_auth, \
                     visibility = excluded.visibility, registered_by = excluded.registered_by, \
                     registered_at = excluded.registered_at",
                );
                insert.build().execute(&mut *tx).await.map_err(backend)?;
                if !same_card {
                    index(&mut tx, &registration.name, &Document::of(&CardState::default())).await?;
                }
                Self::bump(&mut tx).await?;
                tx.commit().await.map_err(backend)
            }

            async fn unregister(&self, name: &str) -> Result<bool> {
                let mut tx = self.$writes.begin().await.map_err(backend)?;
                unindex(&mut tx, name).await?;
                let mut delete = sqlx::QueryBuilder::<$db>::new("DELETE FROM registry_agents WHERE name = ");
                let removed =
                    delete.push_bind(name).build().execute(&mut *tx).await.map_err(backend)?.rows_affected() > 0;
                if removed {
                    Self::bump(&mut tx).await?;
                }
                tx.commit().await.map_err(backend)?;
                Ok(removed)
            }

            async fn record(&self, name: &str, state: &CardState) -> Result<()> {
                let mut tx = self.$writes.begin().await.map_err(backend)?;
                let mut update = sqlx::QueryBuilder::<$db>::new("UPDATE registry_agents SET card = ");
                update.push_bind(crate::sql::registry::card_column(state)?);
                update.push(", healthy = ").push_bind(state.healthy);
                update.push(", failures = ").push_bind(i32::try_from(state.failures).unwrap_or(i32::MAX));
                update.push(", checked_at = ").push_bind(state.checked_at.as_ref().map(Timestamp::as_millis));
                update.push(", answered_at = ").push_bind(state.answered_at.as_ref().map(Timestamp::as_millis));
                update.push(", signature = ").push_bind(state.signature.as_str());
                update.push(", error = ").push_bind(&state.error);
                update.push(" WHERE name = ").push_bind(name);
                let updated = update.build().execute(&mut *tx).await.map_err(backend)?.rows_affected();
                if updated > 0 {
                    index(&mut tx, name, &Document::of(state)).await?;
                    Self::bump(&mut tx).await?;
                }
                tx.commit().await.map_err(backend)
            }

            async fn touch(&self, name: &str, checked_at: &Timestamp, answered: bool) -> Result<()> {
                let mut update = sqlx::QueryBuilder::<$db>::new("UPDATE registry_agents SET checked_at = ");
                update.push_bind(checked_at.as_millis());
                if answered {
                    update.push(", answered_at = ").push_bind(checked_at.as_millis());
                }
                update.push(" WHERE name = ").push_bind(name);
                update.build().execute(&self.$writes).await.map_err(backend)?;
                Ok(())
            }

            async fn agents(&self) -> Result<Vec<RegisteredAgent>> {
                let select = format!("SELECT {} FROM registry_agents ORDER BY name", crate::sql::registry::AGENT_COLUMNS);
                let rows: Vec<crate::sql::registry::AgentRow> =
                    sqlx::query_as(&select).fetch_all(&self.$reads).await.map_err(backend)?;
                Ok(rows.into_iter().map(crate::sql::registry::AgentRow::agent).collect())
            }

            async fn revision(&self) -> Result<u64> {
                let (revision,): (i64,) = sqlx::query_as("SELECT revision FROM registry_revision WHERE id = 1")
                    .fetch_one(&self.$reads)
                    .await
                    .map_err(backend)?;
                Ok(u64::try_from(revision).unwrap_or(0))
            }

            async fn search(&self, query: &AgentQuery) -> Result<Found> {
                self.find(query).await
            }
        }
    };
}

pub(crate) use sql_registry;
