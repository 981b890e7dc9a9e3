-- The event log is the write path and the snapshot a cache: a commit may append its events and
-- update the indexed columns without rewriting the snapshot. snapshot_behind is how many of the
-- task's last events the snapshot lacks; a read folds them in. Rows written before this column
-- existed hold their full snapshot, so they are 0 behind.
ALTER TABLE tasks ADD COLUMN snapshot_behind INTEGER NOT NULL DEFAULT 0;
