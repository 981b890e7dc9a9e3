-- Tasks, their event logs and their webhook configurations.
--
-- A task is known by (tenant, owner, id): the same id in two scopes is two tasks. Everything else
-- refers to a task by its row key and goes with it.

CREATE TABLE tasks (
    key INTEGER PRIMARY KEY,
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    context_id TEXT NOT NULL,
    -- The state's number in lf.a2a.v1.TaskState.
    state INTEGER NOT NULL,
    -- The status timestamp in ms since the epoch (0 without one): listings are ordered by it.
    status_millis INTEGER NOT NULL,
    -- The sequence number of the last event: the optimistic-concurrency version.
    version INTEGER NOT NULL,
    -- When the task reached a terminal state, in ms since the epoch; NULL while in progress.
    ended_at INTEGER,
    -- The task as ProtoJSON.
    snapshot TEXT NOT NULL,
    UNIQUE (tenant, owner, id)
);

CREATE INDEX tasks_by_status_time ON tasks (tenant, owner, status_millis DESC, id DESC);
CREATE INDEX tasks_by_end ON tasks (ended_at) WHERE ended_at IS NOT NULL;

CREATE TABLE events (
    task INTEGER NOT NULL REFERENCES tasks (key) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    -- The StreamResponse as ProtoJSON.
    body TEXT NOT NULL,
    PRIMARY KEY (task, seq)
) WITHOUT ROWID;

CREATE TABLE push_configs (
    task INTEGER NOT NULL REFERENCES tasks (key) ON DELETE CASCADE,
    id TEXT NOT NULL,
    -- Creation order, kept when a config is replaced.
    position INTEGER NOT NULL,
    -- The protocol generation the config was made in: v1, v03 or legacy.
    dialect TEXT NOT NULL,
    -- The TaskPushNotificationConfig as ProtoJSON.
    config TEXT NOT NULL,
    -- The push outbox: the sequence number of the last event the webhook was handed (delivered,
    -- or given up on). The task's events after it are still due to this webhook.
    delivered_through INTEGER NOT NULL,
    PRIMARY KEY (task, id)
) WITHOUT ROWID;
