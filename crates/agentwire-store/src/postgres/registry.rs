//! The registry in PostgreSQL, shared by every gateway instance on the database: rows beside the
//! tasks, with the words a search looks for in a `tsvector` (English stemming; the card's name
//! weighs most, then its description, then its skills), ranked by `ts_rank`.

use sqlx::{PgPool, Postgres, Transaction};

use agentwire_types::Timestamp;

use crate::registry::{AgentQuery, CardState, Document, Found, RegisteredAgent, Registration, RegistryStore};
use crate::sql::backend;
use crate::Result;

/// The registry of a [`PostgresStore`](super::PostgresStore)'s database.
#[derive(Debug, Clone)]
pub(crate) struct PostgresRegistry {
    pub(crate) pool: PgPool,
}

/// Removes what `name` is found by besides its row's words (its facets).
async fn unindex(tx: &mut Transaction<'_, Postgres>, name: &str) -> Result<()> {
    sqlx::query("DELETE FROM registry_facets WHERE agent = $1").bind(name).execute(&mut **tx).await.map_err(backend)?;
    Ok(())
}

/// Writes what `name` is found by, in place of what it was.
async fn index(tx: &mut Transaction<'_, Postgres>, name: &str, document: &Document) -> Result<()> {
    sqlx::query(
        "UPDATE registry_agents SET words = setweight(to_tsvector('english', $2), 'A') \
         || setweight(to_tsvector('english', $3), 'B') || setweight(to_tsvector('english', $4), 'C') \
         WHERE name = $1",
    )
    .bind(name)
    .bind(&document.name)
    .bind(&document.description)
    .bind(&document.skills)
    .execute(&mut **tx)
    .await
    .map_err(backend)?;
    unindex(tx, name).await?;
    let (kinds, values): (Vec<&str>, Vec<&str>) =
        document.facets.iter().map(|(facet, value)| (facet.as_str(), value.as_str())).unzip();
    sqlx::query(
        "INSERT INTO registry_facets (kind, value, agent) SELECT kind, value, $3 FROM UNNEST($1::text[], $2::text[]) \
         AS f (kind, value) ON CONFLICT DO NOTHING",
    )
    .bind(kinds)
    .bind(values)
    .bind(name)
    .execute(&mut **tx)
    .await
    .map_err(backend)?;
    Ok(())
}

/// The `tsquery` text of `words`: any of them, each as a word or a word's start. Each word is
/// letters and digits only: nothing in it is query syntax.
fn ts_query(words: &[String]) -> String {
    let terms: Vec<String> = words.iter().map(|word| format!("{word}:*")).collect();
    terms.join(" | ")
}

crate::sql::registry::sql_registry!(PostgresRegistry, Postgres, pool, pool, " FOR UPDATE");

impl PostgresRegistry {
    /// The search, ranked by `ts_rank` over the words, paged in SQL.
    async fn find(&self, query: &AgentQuery) -> Result<Found> {
        let words = query.words();
        let mut conditions = String::new();
        let mut next = if words.is_empty() { 1 } else { 2 };
        for _ in &query.filters {
            conditions.push_str(&format!(
                " AND name IN (SELECT agent FROM registry_facets WHERE kind = ${} AND value = ${})",
                next,
                next + 1
            ));
            next += 2;
        }
        if !query.excluded.is_empty() {
            conditions.push_str(&format!(" AND name <> ALL(${next}::text[])"));
            next += 1;
        }
        let (matching, order) = match words.is_empty() {
            true => ("TRUE", "name"),
            false => ("words @@ to_tsquery('english', $1)", "ts_rank(words, to_tsquery('english', $1)) DESC, name"),
        };
        let page = format!(
            "SELECT name FROM registry_agents WHERE {matching}{conditions} ORDER BY {order} LIMIT ${next} OFFSET ${}",
            next + 1
        );
        let count = format!("SELECT count(*) FROM registry_agents WHERE {matching}{conditions}");
        let mut select = sqlx::query_as::<_, (String,)>(&page);
        let mut counting = sqlx::query_as::<_, (i64,)>(&count);
        if !words.is_empty() {
            select = select.bind(ts_query(&words));
            counting = counting.bind(ts_query(&words));
        }
        for (facet, value) in query.lowercase_filters() {
            select = select.bind(facet.as_str()).bind(value.clone());
            counting = counting.bind(facet.as_str()).bind(value);
        }
        if !query.excluded.is_empty() {
            select = select.bind(query.excluded.clone());
            counting = counting.bind(query.excluded.clone());
        }
        let limit = query.limit.map(|limit| i64::try_from(limit).unwrap_or(i64::MAX));
        let offset = i64::try_from(query.offset).unwrap_or(i64::MAX);
        let rows = select.bind(limit).bind(offset).fetch_all(&self.pool).await.map_err(backend)?;
        let names: Vec<String> = rows.into_iter().map(|(name,)| name).collect();
        // A first page that holds every match is its own count.
        let whole = query.offset == 0 && query.limit.is_none_or(|limit| names.len() < limit);
        let total = match whole {
            true => names.len(),
            false => {
                let (total,) = counting.fetch_one(&self.pool).await.map_err(backend)?;
                usize::try_from(total).unwrap_or(0)
            }
        };
        Ok(Found { names, total })
    }
}
