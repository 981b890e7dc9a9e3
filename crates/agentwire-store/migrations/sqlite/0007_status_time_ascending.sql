-- A listing's index in ascending order: SQLite reads it backwards for a newest-first page just as
-- fast, and a new task's entry then goes at the index's end, where a full page is split by
-- starting a new one, rather than at its start, where every split leaves two half-empty pages
-- (the index took twice the pages of the id index, and each group of writes rewrote three).
DROP INDEX tasks_by_status_time;
CREATE INDEX tasks_by_status_time ON tasks (tenant, owner, status_millis, id);
