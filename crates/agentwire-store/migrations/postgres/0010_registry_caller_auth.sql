-- How a registered agent is called as each caller (`passthrough`, `exchange`); NULL: with the
-- registration's token, or none.
ALTER TABLE registry_agents ADD COLUMN caller_auth TEXT;
