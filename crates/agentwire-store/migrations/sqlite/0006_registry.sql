-- A gateway's registry of agents: one row per registered name, with the card last served (v1.0
-- JSON) and its health; times in ms since the epoch.
CREATE TABLE registry_agents (
    name TEXT PRIMARY KEY,
    card_url TEXT NOT NULL,
    credential TEXT,
    visibility TEXT NOT NULL,
    registered_by TEXT NOT NULL,
    registered_at INTEGER NOT NULL,
    card TEXT,
    healthy INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    checked_at INTEGER,
    answered_at INTEGER,
    signature TEXT NOT NULL DEFAULT 'unsigned',
    error TEXT
);

-- What a search filters on: (facet, lower-cased value) per agent.
CREATE TABLE registry_facets (
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    agent TEXT NOT NULL REFERENCES registry_agents (name) ON DELETE CASCADE,
    PRIMARY KEY (kind, value, agent)
) WITHOUT ROWID;
CREATE INDEX registry_facets_by_agent ON registry_facets (agent);

-- The words a search looks for: the card's name, description and skills, with Porter stemming,
-- under the agent's rowid. Contentless: a search ranks and counts from the index alone, and
-- reads the rows of the page it returns only.
CREATE VIRTUAL TABLE registry_text USING fts5 (
    name, description, skills, content = '', contentless_delete = 1, tokenize = 'porter unicode61'
);

-- Changes with every registration, removal and recorded card: readers poll it.
CREATE TABLE registry_revision (id INTEGER PRIMARY KEY CHECK (id = 1), revision INTEGER NOT NULL);
INSERT INTO registry_revision (id, revision) VALUES (1, 0);
