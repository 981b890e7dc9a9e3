-- Tasks, their event logs and their webhook configurations, shared by every instance.
--
-- A task is known by (tenant, owner, id): the same id in two scopes is two tasks. Everything else
-- refers to a task by its row key and goes with it.

CREATE TABLE tasks (
    key BIGSERIAL PRIMARY KEY,
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    context_id TEXT NOT NULL,
    -- The state's number in lf.a2a.v1.TaskState.
    state INTEGER NOT NULL,
    -- The status timestamp in ms since the epoch (0 without one): listings are ordered by it.
    status_millis BIGINT NOT NULL,
    -- The sequence number of the last event: the optimistic-concurrency version.
    version BIGINT NOT NULL,
    -- When the task last changed, in ms since the epoch.
    changed_at BIGINT NOT NULL,
    -- When the task reached a terminal state, in ms since the epoch; NULL while in progress.
    ended_at BIGINT,
    -- The task as ProtoJSON.
    snapshot TEXT NOT NULL,
    UNIQUE (tenant, owner, id)
);

CREATE INDEX tasks_by_status_time ON tasks (tenant, owner, status_millis DESC, id DESC);
CREATE INDEX tasks_by_end ON tasks (ended_at) WHERE ended_at IS NOT NULL;
CREATE INDEX tasks_running ON tasks (changed_at) WHERE ended_at IS NULL;

CREATE TABLE events (
    task BIGINT NOT NULL REFERENCES tasks (key) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    -- The StreamResponse as ProtoJSON.
    body TEXT NOT NULL,
    PRIMARY KEY (task, seq)
);

CREATE TABLE push_configs (
    task BIGINT NOT NULL REFERENCES tasks (key) ON DELETE CASCADE,
    id TEXT NOT NULL,
    -- Creation order, kept when a config is replaced.
    position BIGINT NOT NULL,
    -- The protocol generation the config was made in: v1, v03 or legacy.
    dialect TEXT NOT NULL,
    -- The TaskPushNotificationConfig as ProtoJSON.
    config TEXT NOT NULL,
    -- The push outbox: the sequence number of the last event the webhook was handed (delivered,
    -- or given up on). The task's events after it are still due to this webhook.
    delivered_through BIGINT NOT NULL,
    PRIMARY KEY (task, id)
);

-- Every serving process, with the time its lease runs out unless it renews it.
CREATE TABLE instances (
    id TEXT PRIMARY KEY,
    expires_at BIGINT NOT NULL
);

-- Which instance runs an execution of which task.
CREATE TABLE executions (
    task BIGINT NOT NULL REFERENCES tasks (key) ON DELETE CASCADE,
    instance TEXT NOT NULL,
    PRIMARY KEY (task, instance)
);
