-- Counts a scope's unfinished tasks (not in a terminal state) by the index alone: a create
-- refused at the limit of tasks in progress asks it.
CREATE INDEX tasks_unfinished ON tasks (tenant, owner) WHERE ended_at IS NULL;
