-- What each budget's holder (`principal:NAME` or `tenant:NAME`) has spent in its current window,
-- which began at `window_start` (ms since the epoch). A charge in a later window starts it again;
-- an operator's reset removes the row.
CREATE TABLE budget_spent (
    holder TEXT PRIMARY KEY,
    window_start BIGINT NOT NULL,
    tokens BIGINT NOT NULL,
    tool_rounds BIGINT NOT NULL
);
