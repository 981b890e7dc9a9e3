-- A task is its event log alone. The log starts at its base: an event holding the whole task,
-- which a read folds the later events into. A compaction (when the events after the base outgrow
-- it) replaces the log with one such event, numbered like the last event it replaces, so each
-- message is stored once. log_bytes is the size of the log as stored, which
-- byte budgets and retention count.
ALTER TABLE tasks ADD COLUMN base BIGINT NOT NULL DEFAULT 1;
ALTER TABLE tasks ADD COLUMN log_bytes BIGINT NOT NULL DEFAULT 0;

-- head is the task without its history and artifacts: what a listing without them sends, read
-- without the log. A commit that changes the status writes it.
ALTER TABLE tasks ADD COLUMN head TEXT;
UPDATE tasks SET head = (snapshot::jsonb - 'history' - 'artifacts')::text;

-- The snapshot of each task becomes its base: the event at its number is replaced by the task,
-- and the events before it, which the snapshot already holds, go.
UPDATE tasks SET base = version - snapshot_behind;
INSERT INTO events (task, seq, body) SELECT key, base, '{"task":' || snapshot || '}' FROM tasks
    ON CONFLICT (task, seq) DO UPDATE SET body = excluded.body;
DELETE FROM events USING tasks t WHERE t.key = events.task AND events.seq < t.base;
UPDATE tasks SET log_bytes = (SELECT COALESCE(SUM(octet_length(body)), 0) FROM events WHERE task = tasks.key);
ALTER TABLE tasks DROP COLUMN snapshot;
ALTER TABLE tasks DROP COLUMN snapshot_behind;

-- Tasks in progress are limited per principal, across the tenants it names; the index also
-- carries their sizes, which the principal's byte budget adds up.
DROP INDEX tasks_unfinished;
CREATE INDEX tasks_unfinished ON tasks (owner) INCLUDE (log_bytes) WHERE ended_at IS NULL;
