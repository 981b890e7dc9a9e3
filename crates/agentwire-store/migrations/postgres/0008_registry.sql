-- A gateway's registry of agents, shared by every gateway instance on the database: one row per
-- registered name, with the card last served (v1.0 JSON), its health, and the words a search
-- looks for (name A, description B, skills C); times in ms since the epoch.
CREATE TABLE registry_agents (
    name TEXT PRIMARY KEY,
    card_url TEXT NOT NULL,
    credential TEXT,
    visibility TEXT NOT NULL,
    registered_by TEXT NOT NULL,
    registered_at BIGINT NOT NULL,
    card TEXT,
    healthy BOOLEAN NOT NULL DEFAULT FALSE,
    failures INTEGER NOT NULL DEFAULT 0,
    checked_at BIGINT,
    answered_at BIGINT,
    signature TEXT NOT NULL DEFAULT 'unsigned',
    error TEXT,
    words TSVECTOR NOT NULL DEFAULT ''::tsvector
);
CREATE INDEX registry_agents_words ON registry_agents USING GIN (words);

-- What a search filters on: (facet, lower-cased value) per agent.
CREATE TABLE registry_facets (
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    agent TEXT NOT NULL REFERENCES registry_agents (name) ON DELETE CASCADE,
    PRIMARY KEY (kind, value, agent)
);
CREATE INDEX registry_facets_by_agent ON registry_facets (agent);

-- Changes with every registration, removal and recorded card: readers poll it.
CREATE TABLE registry_revision (id INTEGER PRIMARY KEY CHECK (id = 1), revision BIGINT NOT NULL);
INSERT INTO registry_revision (id, revision) VALUES (1, 0);
