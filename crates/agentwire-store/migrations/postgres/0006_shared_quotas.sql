-- Quotas every instance counts alike. A caller's requests are a token bucket: `tokens` as of
-- `at_millis` (the database's clock, in ms since the epoch), refilled at the caller's rate up to
-- its burst. A bucket untouched for a day is full for any rate worth limiting, and is removed.
CREATE TABLE quota_buckets (
    caller TEXT PRIMARY KEY,
    tokens DOUBLE PRECISION NOT NULL,
    at_millis BIGINT NOT NULL
);
CREATE INDEX quota_buckets_by_time ON quota_buckets (at_millis);

-- The streams each instance holds open for each caller; those of an instance whose lease ran
-- out are not counted, and go with it.
CREATE TABLE quota_streams (
    caller TEXT NOT NULL,
    instance TEXT NOT NULL,
    open INTEGER NOT NULL,
    PRIMARY KEY (caller, instance)
);
