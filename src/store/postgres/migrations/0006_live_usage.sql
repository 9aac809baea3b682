-- Live-data answers per agent, UTC day and how they were served (fresh, hit, stale, shared_flight): the
-- cache-hit rate of the usage endpoint and the operator's status. Counts arrive in batches (the core tallies
-- answers in memory and adds them every few seconds), each an upsert that adds to the row.
CREATE TABLE live_usage (
  agent_id text    NOT NULL REFERENCES accounts (id),
  day      date    NOT NULL,
  state    text    NOT NULL,
  count    bigint  NOT NULL CHECK (count >= 0),
  PRIMARY KEY (agent_id, day, state)
);
-- The operator's view sums every agent's recent days.
CREATE INDEX live_usage_day ON live_usage (day);

-- The operator's list of accounts, in e-mail order of bytes (as the JSON store orders them), page by page.
CREATE INDEX accounts_email_c ON accounts (email COLLATE "C");
