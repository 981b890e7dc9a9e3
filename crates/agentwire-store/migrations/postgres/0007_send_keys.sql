-- Idempotency keys: the key a send carried, per scope, with a digest of its request and the task
-- it made. A key goes with its task, and may name another send once it has expired (ms since the
-- epoch).
CREATE TABLE send_keys (
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    key TEXT NOT NULL,
    request TEXT NOT NULL,
    task BIGINT NOT NULL REFERENCES tasks (key) ON DELETE CASCADE,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (tenant, owner, key)
);
CREATE INDEX send_keys_by_task ON send_keys (task);
CREATE INDEX send_keys_by_expiry ON send_keys (expires_at);

-- Tasks left waiting are found by how long their status has not changed.
CREATE INDEX tasks_unfinished_by_status_time ON tasks (status_millis) WHERE ended_at IS NULL;
