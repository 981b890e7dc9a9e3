//! The writer: one connection, group commit, and the reclaiming of freed pages between writes.

use std::path::Path;
use std::sync::Arc;

use sqlx::{Connection, Executor, SqliteConnection};
use tokio::sync::{mpsc, oneshot};

use crate::sql::backend;
use crate::{Result, StoreError};

use super::apply::apply;
use super::known::{Known, Removed};
use super::script::Script;
use super::write::{Job, Write};

/// The most writes one transaction commits.
pub(super) const MAX_GROUP: usize = 256;

/// How many times, at most, the writer lets other tasks run before it takes the next group,
/// while that brings more writes.
pub(super) const SIBLING_YIELDS: usize = 4;

/// Makes the file give the pages of removed tasks back to the file system
/// ([`vacuum_slice`]): a file made before it did is rebuilt once.
pub(super) async fn reclaim_freed_pages(conn: &mut SqliteConnection, path: &Path) -> Result<()> {
    const INCREMENTAL: i64 = 2;
    let mode: i64 = sqlx::query_scalar("PRAGMA auto_vacuum").fetch_one(&mut *conn).await.map_err(backend)?;
    if mode != INCREMENTAL {
        // A new file has no tables yet, and the rebuild is then instant: only an existing one is
        // worth a word.
        let tables: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM sqlite_master").fetch_one(&mut *conn).await.map_err(backend)?;
        if tables > 0 {
            tracing::info!(path = %path.display(), "rebuilding the store's file once, so that it shrinks when tasks go");
        }
        conn.execute("PRAGMA auto_vacuum = INCREMENTAL").await.map_err(backend)?;
        conn.execute("VACUUM").await.map_err(backend)?;
    }
    Ok(())
}

/// Free pages the file keeps for writes to come; beyond them, they are given back.
pub(super) const KEPT_FREE_PAGES: i64 = 2048;

/// Most free pages given back at once (16 MiB of 4 KiB pages): a vacuum moves pages from the end
/// of the file into the holes, and holds the writer while it does, so it goes in slices between
/// the groups of writes.
pub(super) const VACUUM_SLICE: i64 = 4096;

/// What one [`vacuum_slice`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slice {
    /// The file kept its free pages: they were within [`KEPT_FREE_PAGES`].
    Kept,
    /// Free pages were given back, and more are left to give (`true`) or not.
    GaveBack { more: bool },
}

/// Gives up to [`VACUUM_SLICE`] of the file's free pages beyond [`KEPT_FREE_PAGES`] back to the
/// file system (the file shrinks by as much).
pub(super) async fn vacuum_slice(conn: &mut SqliteConnection) -> Result<Slice> {
    let free: i64 = sqlx::query_scalar("PRAGMA freelist_count").fetch_one(&mut *conn).await.map_err(backend)?;
    let excess = free - KEPT_FREE_PAGES / 2;
    if free <= KEPT_FREE_PAGES {
        return Ok(Slice::Kept);
    }
    let pragma = format!("PRAGMA incremental_vacuum({})", excess.min(VACUUM_SLICE));
    conn.execute(pragma.as_str()).await.map_err(backend)?;
    Ok(Slice::GaveBack { more: excess > VACUUM_SLICE })
}

/// Gives back the next slice of free pages when some are due; once they are all given back, the
/// log the moves filled is folded into the database, so that it too shrinks back (to
/// `journal_size_limit`) at its next reset. `gave_back` says whether slices were given back since
/// the last fold: a purge whose freed pages the file keeps for its next writes (the steady state
/// under a sustained load) moved nothing, and folding the log then would copy every page the
/// recent groups wrote a second time, several times a second.
pub(super) async fn vacuum_if_due(conn: &mut SqliteConnection, known: &Known, gave_back: &mut bool) {
    use std::sync::atomic::Ordering;
    if !known.vacuum_due.load(Ordering::Relaxed) {
        return;
    }
    match vacuum_slice(conn).await {
        Ok(Slice::GaveBack { more: true }) => *gave_back = true,
        Ok(slice) => {
            known.vacuum_due.store(false, Ordering::Relaxed);
            let moved = std::mem::take(gave_back) || slice != Slice::Kept;
            if moved && let Err(error) = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").await {
                tracing::debug!(%error, "could not fold the write-ahead log after giving pages back");
            }
        }
        Err(error) => {
            known.vacuum_due.store(false, Ordering::Relaxed);
            tracing::warn!(%error, "could not give the pages of removed tasks back");
        }
    }
}

/// Asked of [`write_loop`] by [`SqliteStore::close`]: told once the writer's connection is closed.
pub(super) type CloseRequest = oneshot::Sender<()>;

/// Commits the waiting writes in groups until every store handle is gone or the store is closed;
/// the writes already waiting go first.
pub(super) async fn write_loop(
    mut conn: SqliteConnection,
    mut jobs: mpsc::Receiver<Job>,
    mut closes: mpsc::Receiver<CloseRequest>,
    known: Arc<Known>,
) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    let mut gave_back = false;
    let close = loop {
        let vacuum_due = known.vacuum_due.load(std::sync::atomic::Ordering::Relaxed);
        tokio::select! {
            biased;
            taken = jobs.recv_many(&mut group, MAX_GROUP) => if taken == 0 { break None },
            Some(close) = closes.recv() => break Some(close),
            // No write waits: the next slice of pages to give back goes now.
            () = std::future::ready(()), if vacuum_due => {
                vacuum_if_due(&mut conn, &known, &mut gave_back).await;
                continue;
            }
        }
        let (results, removed) = commit_group(&mut conn, &group, &known).await;
        known.removed(removed);
        known.groups.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        known.grouped_writes.fetch_add(group.len() as u64, std::sync::atomic::Ordering::Relaxed);
        for (job, result) in group.drain(..).zip(results) {
            if let Ok(outcome) = &result {
                note(&known, &job.write, *outcome);
            }
            // The caller may have gone; the write stands.
            let _ = job.reply.send(result);
        }
        vacuum_if_due(&mut conn, &known, &mut gave_back).await;
        // The writers just answered are about to send their next writes; letting them run first
        // puts those writes in the next group instead of the one after.
        for _ in 0..SIBLING_YIELDS {
            let waiting = jobs.len();
            tokio::task::yield_now().await;
            if jobs.len() == waiting {
                break;
            }
        }
    };
    // The log is folded into the database and emptied first: closing removes it only when no
    // reader is left open, and a reader sqlx was handing back as its pool closed can be.
    if let Err(error) = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").await {
        tracing::warn!(%error, "could not fold the write-ahead log into the database");
    }
    // Closed last, after the readers, the connection removes the log and its shared-memory file.
    let _ = conn.close().await;
    if let Some(close) = close {
        let _ = close.send(());
    }
}

/// Updates what the store knows after `write` committed with `outcome`.
pub(super) fn note(known: &Known, write: &Write, outcome: u64) {
    match write {
        Write::Create { scope, task, row, key, .. } => {
            if let Some(key) = key {
                known.recorded_keys.recorded(scope, &key.key.key);
            }
            known.running.committed(scope, task, outcome, row.lag);
            known.written(scope, &task.id, row.ended, row.lag.bytes as u64, true);
        }
        Write::Commit { scope, task, row, .. } => {
            known.running.committed(scope, task, outcome, row.lag);
            known.written(scope, &task.id, row.ended, row.lag.bytes as u64, false);
        }
        Write::Delete { scope, id } => {
            known.forget(scope, id);
        }
        Write::PutConfig { scope, record, .. } => {
            known.with_configs.insert((scope.clone(), record.config.task_id.clone()), ());
        }
        Write::Purge(_) | Write::DeleteConfig { .. } | Write::MarkDelivered { .. } => {}
    }
}

/// Writes of a group, with their places in it.
type Numbered<'a> = Vec<(usize, &'a Job)>;

/// Runs `group` in one transaction, or two when it holds keyed creates not reserved or a purge
/// (which go in the second).
/// A write refused by a check (a conflict, a missing task, a key held) has changed nothing and
/// the others go on; if the database itself fails, the writes of its transaction fail.
///
/// Each statement is a round trip to the connection's thread, which costs more than SQLite's own
/// work: a group of creates and commits of distinct tasks, the common case, is therefore sent as
/// one script of a few statements whatever its size. Other groups go write by write.
/// Returns each write's result, and the ended tasks the group removed.
pub(super) async fn commit_group(
    conn: &mut SqliteConnection,
    group: &[Job],
    known: &Known,
) -> (Vec<Result<u64>>, Removed) {
    let mut removed = Removed::default();
    // A keyed create that was not reserved may be refused after its insert, so it is written on
    // its own; the rest of
    // the group still goes as one script. Each part is a transaction: a part that fails fails
    // its own writes alone.
    let (alone, scripted): (Numbered<'_>, Numbered<'_>) =
        group.iter().enumerate().partition(|(_, job)| match &job.write {
            Write::Create { key: Some(key), .. } => !key.reserved,
            // A purge is no part of a script: the creates and commits beside it still are.
            Write::Purge(_) => true,
            _ => false,
        });
    let mut results = Vec::with_capacity(group.len());
    for part in [scripted, alone] {
        if part.is_empty() {
            continue;
        }
        let jobs: Vec<&Job> = part.iter().map(|(_, job)| *job).collect();
        let written = match Script::of(&jobs) {
            Some(script) => script.run(conn, &mut removed).await,
            None => one_by_one(conn, &jobs, known, &mut removed).await,
        };
        let indices = part.iter().map(|(i, _)| *i);
        match written {
            Ok(written) => results.extend(indices.zip(written)),
            Err(error) => {
                let _ = conn.execute("ROLLBACK").await;
                results.extend(indices.map(|i| (i, Err(StoreError::Backend(error.to_string())))));
            }
        }
    }
    results.sort_unstable_by_key(|(i, _)| *i);
    (results.into_iter().map(|(_, result)| result).collect(), removed)
}

pub(super) async fn one_by_one(
    conn: &mut SqliteConnection,
    group: &[&Job],
    known: &Known,
    removed: &mut Removed,
) -> Result<Vec<Result<u64>>> {
    conn.execute("BEGIN IMMEDIATE").await.map_err(backend)?;
    let mut results = Vec::with_capacity(group.len());
    for job in group {
        match apply(conn, &job.write, known, removed).await {
            Err(StoreError::Backend(error)) => return Err(StoreError::Backend(error)),
            result => results.push(result),
        }
    }
    conn.execute("COMMIT").await.map_err(backend)?;
    Ok(results)
}
