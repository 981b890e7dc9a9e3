//! A group of writes planned as a few statements (the batch `Script`).

use std::sync::Arc;

use agentwire_types::Task;
use sqlx::{QueryBuilder, Row, Sqlite, SqliteConnection};

use crate::sql::{as_seq, as_sql, backend, limit as sql_limit, now_millis, TaskRow};
use crate::{Result, Scope, SendKey};

use super::known::Removed;
use super::write::{create_refusal, refusal, Job, KeyWrite, Write};

/// Most bound values one script carries, within SQLite's limit of 32,766.
pub(super) const MAX_SCRIPT_VALUES: usize = 30_000;

/// A group of creates, commits and deletes of distinct tasks, written by one script: a
/// transaction with one insert for the new tasks, one update for the changed ones, one insert for
/// all their events and one delete.
pub(super) struct Script<'a> {
    pub(super) writes: Vec<Step<'a>>,
}

/// One write of a [`Script`].
pub(super) enum Step<'a> {
    Put(Planned<'a>),
    Delete { scope: &'a Scope, id: &'a String },
}

impl<'a> Step<'a> {
    pub(super) fn task(&self) -> (&'a Scope, &'a String) {
        match self {
            Self::Put(planned) => (planned.scope, &planned.task.id),
            Self::Delete { scope, id } => (scope, id),
        }
    }
}

/// A create or a commit in a [`Script`].
pub(super) struct Planned<'a> {
    pub(super) scope: &'a Scope,
    pub(super) task: &'a Arc<Task>,
    pub(super) row: &'a TaskRow,
    /// The version a commit starts from; `None` for a create.
    pub(super) expected: Option<u64>,
    /// A create's limit of unfinished tasks for its owner.
    pub(super) limit: Option<usize>,
    /// A create's idempotency key, reserved for it.
    pub(super) key: Option<&'a SendKey>,
}

impl Planned<'_> {
    pub(super) fn from(&self) -> u64 {
        self.expected.unwrap_or_default()
    }

    /// The task's version once written.
    pub(super) fn version(&self) -> u64 {
        self.from() + self.row.added
    }
}

impl<'a> Script<'a> {
    pub(super) fn of(group: &[&'a Job]) -> Option<Self> {
        let mut writes = Vec::with_capacity(group.len());
        let mut tasks = std::collections::HashSet::new();
        let mut values = 0;
        for job in group.iter().copied() {
            let step = match &job.write {
                // A keyed create not reserved goes on its own: its key may refuse it after its insert.
                Write::Create { key: Some(KeyWrite { reserved: false, .. }), .. } => return None,
                Write::Create { scope, task, row, limit, key } => {
                    let key = key.as_ref().map(|key| &key.key);
                    Step::Put(Planned { scope, task, row, expected: None, limit: *limit, key })
                }
                Write::Commit { scope, task, row, expected } => {
                    Step::Put(Planned { scope, task, row, expected: Some(*expected), limit: None, key: None })
                }
                Write::Delete { scope, id } => Step::Delete { scope, id },
                _ => return None,
            };
            values += match &step {
                Step::Put(planned) => 18 + 6 * planned.row.bodies().len() + 6 * usize::from(planned.key.is_some()),
                Step::Delete { .. } => 3,
            };
            if !tasks.insert(step.task()) || values > MAX_SCRIPT_VALUES {
                return None;
            }
            writes.push(step);
        }
        Some(Script { writes })
    }

    pub(super) async fn run(self, conn: &mut SqliteConnection, removed: &mut Removed) -> Result<Vec<Result<u64>>> {
        let puts = || self.writes.iter().filter_map(|w| if let Step::Put(planned) = w { Some(planned) } else { None });
        let creates: Vec<&Planned<'_>> = puts().filter(|w| w.expected.is_none()).collect();
        let commits: Vec<&Planned<'_>> = puts().filter(|w| w.expected.is_some()).collect();
        let deletes: Vec<(&Scope, &String)> =
            self.writes.iter().filter(|w| matches!(w, Step::Delete { .. })).map(Step::task).collect();
        let mut sql = QueryBuilder::<Sqlite>::new("BEGIN IMMEDIATE; ");
        if !creates.is_empty() {
            // A limited create goes in while its owner's unfinished tasks, with the limited
            // creates before it in this group, are fewer than its limit: the count is taken
            // before the statement inserts anything.
            let mut earlier: std::collections::HashMap<&str, i64> = std::collections::HashMap::new();
            let before: Vec<i64> = creates
                .iter()
                .map(|w| match w.limit {
                    Some(_) => {
                        let n = earlier.entry(w.scope.owner.as_str()).or_default();
                        *n += 1;
                        *n - 1
                    }
                    None => 0,
                })
                .collect();
            sql.push(
                "INSERT INTO tasks
                     (tenant, owner, id, context_id, state, status_millis, version, ended_at, base, log_bytes, head)
                 SELECT column1, column2, column3, column4, column5, column6, column7, column8, column9, column10,
                     column11
                 FROM (",
            );
            sql.push_values(creates.iter().zip(&before), |mut values, (w, before)| {
                values.push_bind(&w.scope.tenant).push_bind(&w.scope.owner).push_bind(&w.task.id);
                values.push_bind(&w.row.context_id).push_bind(w.row.state).push_bind(w.row.status_millis);
                values.push_bind(as_sql(w.version())).push_bind(w.row.ended.then(now_millis));
                values.push_bind(as_sql(w.row.first_seq(0))).push_bind(w.row.bytes()).push_bind(&w.row.head);
                values.push_bind(w.limit.map(sql_limit)).push_bind(*before);
            });
            sql.push(
                ") AS v WHERE v.column12 IS NULL OR v.column13 + (SELECT COUNT(*) FROM tasks t
                     WHERE t.owner = v.column2 AND t.ended_at IS NULL) < v.column12
                 ON CONFLICT DO NOTHING RETURNING key, tenant, owner, id; ",
            );
        }
        if !commits.is_empty() {
            sql.push(
                "WITH v (tenant, owner, id, expected, added, context_id, state, status_millis, ended, base, bytes, head) AS (",
            );
            sql.push_values(&commits, |mut values, w| {
                values.push_bind(&w.scope.tenant).push_bind(&w.scope.owner).push_bind(&w.task.id);
                values.push_bind(as_sql(w.from())).push_bind(as_sql(w.row.added));
                values.push_bind(&w.row.context_id).push_bind(w.row.state).push_bind(w.row.status_millis);
                values.push_bind(w.row.ended).push_bind(w.row.compacts().then(|| as_sql(w.version())));
                values.push_bind(w.row.bytes()).push_bind(&w.row.head);
            });
            sql.push(
                ") UPDATE tasks SET context_id = v.context_id, state = v.state, status_millis = v.status_millis,
                     version = tasks.version + v.added, base = COALESCE(v.base, tasks.base),
                     head = COALESCE(v.head, tasks.head),
                     log_bytes = CASE WHEN v.base IS NULL THEN tasks.log_bytes + v.bytes ELSE v.bytes END,
                     ended_at = CASE WHEN v.ended THEN COALESCE(tasks.ended_at, ",
            );
            sql.push_bind(now_millis()).push(
                ") END FROM v WHERE tasks.tenant = v.tenant AND tasks.owner = v.owner AND tasks.id = v.id
                 AND tasks.version = v.expected RETURNING key, tenant, owner, id; ",
            );
        }
        // The events of every write, joined to their task. A refused write's events are left
        // out: its task is at another version, or its numbers are taken, or were compacted away.
        let events: Vec<(&Planned<'_>, i64, &String)> = puts()
            .flat_map(|w| {
                let first = as_sql(w.row.first_seq(w.from()));
                w.row.bodies().iter().zip(first..).map(move |(body, seq)| (w, seq, body))
            })
            .collect();
        if !events.is_empty() {
            sql.push("INSERT OR IGNORE INTO events (task, seq, body) SELECT t.key, v.column4, v.column5 FROM (");
            sql.push_values(&events, |mut values, (w, seq, body)| {
                values.push_bind(&w.scope.tenant).push_bind(&w.scope.owner).push_bind(&w.task.id);
                values.push_bind(*seq).push_bind(*body).push_bind(as_sql(w.version()));
            });
            sql.push(
                ") AS v JOIN tasks t ON t.tenant = v.column1 AND t.owner = v.column2 AND t.id = v.column3
                 WHERE t.version = v.column6 AND v.column4 >= t.base; ",
            );
        }
        let keyed: Vec<(&Planned<'_>, &SendKey)> = creates.iter().filter_map(|w| Some((*w, w.key?))).collect();
        if !keyed.is_empty() {
            // The reserved keys of the creates written: no send holds them (an expired row is
            // replaced). A new task's id is the server's, so the id alone finds it.
            let now = now_millis();
            sql.push(
                "INSERT INTO send_keys (tenant, owner, key, request, task, expires_at)
                 SELECT v.column1, v.column2, v.column3, v.column4, t.key, v.column6 FROM (",
            );
            sql.push_values(&keyed, |mut values, (w, key)| {
                let expires = key.expires_at(now);
                values.push_bind(&w.scope.tenant).push_bind(&w.scope.owner).push_bind(&key.key);
                values.push_bind(&key.request).push_bind(&w.task.id).push_bind(expires);
            });
            sql.push(
                ") AS v JOIN tasks t ON t.tenant = v.column1 AND t.owner = v.column2 AND t.id = v.column5 WHERE TRUE
                 ON CONFLICT (tenant, owner, key) DO UPDATE SET request = excluded.request, task = excluded.task,
                     expires_at = excluded.expires_at; ",
            );
        }
        let compacted: Vec<&Planned<'_>> = commits.iter().copied().filter(|w| w.row.compacts()).collect();
        if !compacted.is_empty() {
            // The events a compaction replaced: those before the task's new base.
            sql.push("DELETE FROM events WHERE task IN (SELECT key FROM tasks WHERE (tenant, owner, id) IN (VALUES ");
            let mut separated = sql.separated(", ");
            for w in &compacted {
                separated.push("(").push_bind_unseparated(&w.scope.tenant).push_unseparated(", ");
                separated.push_bind_unseparated(&w.scope.owner).push_unseparated(", ");
                separated.push_bind_unseparated(&w.task.id).push_unseparated(")");
            }
            sql.push(")) AND seq < (SELECT base FROM tasks WHERE key = events.task); ");
        }
        if !deletes.is_empty() {
            // Their events, configs and executions go with them (ON DELETE CASCADE).
            sql.push("DELETE FROM tasks WHERE (tenant, owner, id) IN (VALUES ");
            let mut separated = sql.separated(", ");
            for (scope, id) in &deletes {
                separated.push("(").push_bind_unseparated(&scope.tenant).push_unseparated(", ");
                separated.push_bind_unseparated(&scope.owner).push_unseparated(", ");
                separated.push_bind_unseparated(*id).push_unseparated(")");
            }
            sql.push(") RETURNING key, tenant, owner, id, ended_at, log_bytes; ");
        }
        sql.push("COMMIT;");
        let written = sql.build().fetch_all(&mut *conn).await.map_err(backend)?;
        for deleted in written.iter().filter(|row| row.len() == 6) {
            if deleted.get::<Option<i64>, _>(4).is_some() {
                removed.ended.add(as_seq(deleted.get(5)));
            }
        }
        let written: std::collections::HashSet<(String, String, String)> =
            written.iter().map(|row| (row.get(1), row.get(2), row.get(3))).collect();
        let mut results = Vec::with_capacity(self.writes.len());
        for w in &self.writes {
            let (scope, id) = w.task();
            let done = written.contains(&(scope.tenant.clone(), scope.owner.clone(), id.clone()));
            results.push(match (w, done) {
                (Step::Delete { .. }, done) => Ok(u64::from(done)),
                (Step::Put(w), true) => Ok(w.version()),
                (Step::Put(Planned { expected: None, limit, .. }), false) => {
                    Err(create_refusal(conn, scope, id, *limit).await?)
                }
                (Step::Put(Planned { expected: Some(expected), .. }), false) => {
                    Err(refusal(conn, scope, id, *expected).await?)
                }
            });
        }
        Ok(results)
    }
}
