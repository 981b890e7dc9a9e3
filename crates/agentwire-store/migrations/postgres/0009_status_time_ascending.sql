-- A listing's index in ascending order: a newest-first page reads it backwards as fast, and a new
-- task's entry goes at the index's end, where a full page splits by starting a new one, rather
-- than at its start, where every split leaves two half-empty pages.
DROP INDEX tasks_by_status_time;
CREATE INDEX tasks_by_status_time ON tasks (tenant, owner, status_millis, id);
