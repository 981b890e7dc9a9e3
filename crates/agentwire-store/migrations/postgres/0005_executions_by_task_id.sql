-- An execution is recorded as it starts, which is before its task's first commit (the execution
-- writes the task together with its first events), so it names its task by id rather than by
-- the task's row. The rows are rewritten by every running instance, so none need be kept.
DROP TABLE executions;
CREATE TABLE executions (
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    instance TEXT NOT NULL,
    PRIMARY KEY (tenant, owner, task_id, instance)
);
CREATE INDEX executions_by_instance ON executions (instance);
