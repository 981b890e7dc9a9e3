//! The registry in the SQLite file: rows beside the tasks, the words in an FTS5 table ranked by
//! BM25. Its writes are rare and small, and go through a connection of their own rather than the
//! tasks' writer, whose groups they then wait for (and which waits for them).

use sqlx::{Sqlite, SqlitePool, Transaction};

use agentwire_types::Timestamp;

use crate::registry::{AgentQuery, CardState, Document, Found, RegisteredAgent, Registration, RegistryStore};
use crate::sql::backend;
use crate::Result;

/// The registry of a [`SqliteStore`](super::SqliteStore)'s file.
#[derive(Debug, Clone)]
pub(super) struct SqliteRegistry {
    pub(super) reads: SqlitePool,
    pub(super) writes: SqlitePool,
}

/// How much a word found in a card's name, description and skills weighs in the ranking.
const WEIGHTS: &str = "10.0, 4.0, 1.0";

/// Writes what `name` is found by, in place of what it was.
async fn index(tx: &mut Transaction<'_, Sqlite>, name: &str, document: &Document) -> Result<()> {
    unindex(tx, name).await?;
    sqlx::query(
        "INSERT INTO registry_text (rowid, name, description, skills) \
         SELECT rowid, ?, ?, ? FROM registry_agents WHERE name = ?",
    )
    .bind(&document.name)
    .bind(&document.description)
    .bind(&document.skills)
    .bind(name)
    .execute(&mut **tx)
    .await
    .map_err(backend)?;
    for (facet, value) in &document.facets {
        sqlx::query("INSERT OR IGNORE INTO registry_facets (kind, value, agent) VALUES (?, ?, ?)")
            .bind(facet.as_str())
            .bind(value)
            .bind(name)
            .execute(&mut **tx)
            .await
            .map_err(backend)?;
    }
    Ok(())
}

/// Removes what `name` is found by (its words are under its row's id).
async fn unindex(tx: &mut Transaction<'_, Sqlite>, name: &str) -> Result<()> {
    sqlx::query("DELETE FROM registry_text WHERE rowid = (SELECT rowid FROM registry_agents WHERE name = ?)")
        .bind(name)
        .execute(&mut **tx)
        .await
        .map_err(backend)?;
    sqlx::query("DELETE FROM registry_facets WHERE agent = ?").bind(name).execute(&mut **tx).await.map_err(backend)?;
    Ok(())
}

/// The FTS5 query of `words`: any of them, each as a word or a word's start. Each word is
/// letters and digits only, quoted: nothing in it is FTS5 syntax.
fn match_expression(words: &[String]) -> String {
    let terms: Vec<String> = words.iter().map(|word| format!("\"{word}\"*")).collect();
    terms.join(" OR ")
}

crate::sql::registry::sql_registry!(SqliteRegistry, Sqlite, reads, writes, "");

impl SqliteRegistry {
    /// The search, ranked by BM25 over the words, paged in SQL.
    async fn find(&self, query: &AgentQuery) -> Result<Found> {
        let words = query.words();
        // The agents' row ids every filter and the exclusion leave, as conditions on `rowid`. In
        // a text search they filter what the words found (`+rowid`): as a constraint handed to
        // FTS5, each id would be a lookup of the words of its own.
        let rowid = if words.is_empty() { "rowid" } else { "+rowid" };
        let mut conditions = String::new();
        for _ in &query.filters {
            conditions.push_str(&format!(
                " AND {rowid} IN (SELECT a.rowid FROM registry_facets f JOIN registry_agents a ON a.name = f.agent \
                 WHERE f.kind = ? AND f.value = ?)"
            ));
        }
        if !query.excluded.is_empty() {
            conditions.push_str(&format!(
                " AND {rowid} NOT IN (SELECT rowid FROM registry_agents WHERE name IN (SELECT value FROM json_each(?)))"
            ));
        }
        let excluded = serde_json::to_string(&query.excluded).map_err(|e| crate::StoreError::Backend(e.to_string()))?;
        let limit = query.limit.map_or(-1, |limit| i64::try_from(limit).unwrap_or(i64::MAX));
        let offset = i64::try_from(query.offset).unwrap_or(i64::MAX);
        let (page, count) = match words.is_empty() {
            true => (
                format!("SELECT name FROM registry_agents WHERE 1{conditions} ORDER BY name LIMIT ? OFFSET ?"),
                format!("SELECT count(*) FROM registry_agents WHERE 1{conditions}"),
            ),
            // Ranked from the index, then the page's names read.
            false => (
                format!(
                    "SELECT a.name FROM (SELECT rowid, bm25(registry_text, {WEIGHTS}) AS rank FROM registry_text \
                     WHERE registry_text MATCH ?{conditions} ORDER BY rank, rowid LIMIT ? OFFSET ?) AS m \
                     JOIN registry_agents a ON a.rowid = m.rowid ORDER BY m.rank, m.rowid"
                ),
                format!("SELECT count(*) FROM registry_text WHERE registry_text MATCH ?{conditions}"),
            ),
        };
        let expression = match_expression(&words);
        let mut select = sqlx::query_as::<_, (String,)>(&page);
        let mut counting = sqlx::query_as::<_, (i64,)>(&count);
        if !words.is_empty() {
            select = select.bind(expression.clone());
            counting = counting.bind(expression);
        }
        for (facet, value) in query.lowercase_filters() {
            select = select.bind(facet.as_str()).bind(value.clone());
            counting = counting.bind(facet.as_str()).bind(value);
        }
        if !query.excluded.is_empty() {
            select = select.bind(excluded.clone());
            counting = counting.bind(excluded);
        }
        let rows = select.bind(limit).bind(offset).fetch_all(&self.reads).await.map_err(backend)?;
        let names: Vec<String> = rows.into_iter().map(|(name,)| name).collect();
        // A first page that holds every match is its own count.
        let whole = query.offset == 0 && query.limit.is_none_or(|limit| names.len() < limit);
        let total = match whole {
            true => names.len(),
            false => {
                let (total,) = counting.fetch_one(&self.reads).await.map_err(backend)?;
                usize::try_from(total).unwrap_or(0)
            }
        };
        Ok(Found { names, total })
    }
}
