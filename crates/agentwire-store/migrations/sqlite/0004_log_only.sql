-- A task is its event log alone. The log starts at its base: an event holding the whole task,
-- which a read folds the later events into. A compaction (when the events after the base outgrow
-- it) replaces the log with one such event, numbered like the last event it replaces, so each
-- message is stored once. log_bytes is the size of the log as stored, which
-- byte budgets and retention count.
ALTER TABLE tasks ADD COLUMN base INTEGER NOT NULL DEFAULT 1;
ALTER TABLE tasks ADD COLUMN log_bytes INTEGER NOT NULL DEFAULT 0;

-- head is the task without its history and artifacts: what a listing without them sends, read
-- without the log. A commit that changes the status writes it.
ALTER TABLE tasks ADD COLUMN head TEXT;
UPDATE tasks SET head = json_remove(snapshot, '$.history', '$.artifacts');

-- The snapshot of each task becomes its base: the event at its number is replaced by the task,
-- and the events before it, which the snapshot already holds, go.
UPDATE tasks SET base = version - snapshot_behind;
INSERT INTO events (task, seq, body) SELECT key, base, '{"task":' || snapshot || '}' FROM tasks WHERE TRUE
    ON CONFLICT (task, seq) DO UPDATE SET body = excluded.body;
DELETE FROM events WHERE seq < (SELECT base FROM tasks WHERE key = events.task);
UPDATE tasks SET log_bytes = (SELECT COALESCE(SUM(length(CAST(body AS BLOB))), 0) FROM events WHERE task = tasks.key);
ALTER TABLE tasks DROP COLUMN snapshot;
ALTER TABLE tasks DROP COLUMN snapshot_behind;

-- The log keeps its bodies in a table with row ids: the (task, seq) key is then an index of its
-- own, and finding an event reads keys alone, where a table WITHOUT ROWID keeps the bodies in its
-- key's b-tree and reads a large body's whole overflow chain at every key it compares.
CREATE TABLE events_by_row (
    task INTEGER NOT NULL REFERENCES tasks (key) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    -- The StreamResponse as ProtoJSON.
    body TEXT NOT NULL,
    PRIMARY KEY (task, seq)
);
INSERT INTO events_by_row (task, seq, body) SELECT task, seq, body FROM events;
DROP TABLE events;
ALTER TABLE events_by_row RENAME TO events;

-- Tasks in progress are limited per principal, across the tenants it names.
DROP INDEX tasks_unfinished;
CREATE INDEX tasks_unfinished ON tasks (owner) WHERE ended_at IS NULL;
