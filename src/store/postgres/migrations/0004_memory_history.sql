-- Each memory key's history: the versions stored (and restored) and the deletes (delete markers, no
-- content), the newest AC_MEMORY_HISTORY of them kept. Not tied to the memories row: a deleted memory keeps
-- its history (so a delete can be undone) until its retention runs out and the sweeper drops it.
CREATE TABLE memory_history (
  agent_id    text        NOT NULL REFERENCES accounts (id),
  key         text        COLLATE "C" NOT NULL,
  version     integer     NOT NULL CHECK (version >= 1),
  at          timestamptz NOT NULL,
  deleted     boolean     NOT NULL DEFAULT false,
  -- The content of a stored version (NULL on a delete marker), as the memories table keeps it.
  value       bytea,
  type        text,
  metadata    json,
  ttl_seconds integer,
  PRIMARY KEY (agent_id, key, version)
);
