-- 0001_initial: the whole store on PostgreSQL.
--
-- Applied by migrate.ts inside one transaction under an advisory lock, which records it in
-- schema_migrations (a table migrate.ts creates itself, since it reads it before any file is applied).
-- Never edit this file once released: its checksum is recorded, and an instance refuses a database whose
-- applied migration differs from its file. Change the schema in a new file, 0002_<name>.sql.
--
-- Conventions:
-- - Money is bigint cents. The database enforces the money invariants as well as the code: no negative
--   balance (CHECK), each ledger entry exactly once (PRIMARY KEY (agent_id, seq) with seq = ledger_seq + 1
--   taken under the account's row lock, so a lost update fails loudly with 23505).
-- - A transaction that writes for an agent locks its account row first. SELECT ... FOR NO KEY UPDATE
--   serialises such transactions as FOR UPDATE does, without blocking the KEY SHARE lock that the foreign
--   keys of ledger and memories take on the account in other transactions.
-- - Text that the API lets hold NUL (U+0000) is bytea (UTF-8) or json, never text or jsonb: both of those
--   refuse NUL (text: 22021; jsonb: \u0000 is refused). json keeps the text exactly as sent. Memory keys,
--   idempotency keys, queries and e-mail addresses are refused by validation when they hold a control
--   character, so they are text; keys are COLLATE "C" (byte order, no locale in equality or sorting).
-- - Instants are timestamptz (microseconds; the model's ISO strings have milliseconds, so they round-trip).
-- - Enumerations (plan, operation, memory type, query type) are checked by the core, not here, so that a
--   new operation needs no migration.

CREATE TABLE accounts (
  id              text        PRIMARY KEY,
  email           text        NOT NULL UNIQUE,
  -- SHA-256 of the API key, hex.
  key_hash        text        NOT NULL UNIQUE,
  -- The display name as UTF-8: the API accepts any character in it, NUL included.
  name            bytea,
  plan            text        NOT NULL,
  balance_cents   bigint      NOT NULL CHECK (balance_cents >= 0),
  -- The seq of this account's last ledger entry (0: none yet).
  ledger_seq      bigint      NOT NULL DEFAULT 0 CHECK (ledger_seq >= 0),
  -- What the agent's operations cost on spent_day (UTC), kept under the row lock for the daily limit.
  spent_day       date,
  spent_day_cents bigint      NOT NULL DEFAULT 0 CHECK (spent_day_cents >= 0),
  created_at      timestamptz NOT NULL
);

-- Append-only: never updated or deleted. balance = SUM(amount_cents) per agent.
CREATE TABLE ledger (
  agent_id            text        NOT NULL REFERENCES accounts (id),
  seq                 bigint      NOT NULL CHECK (seq >= 1),
  id                  text        NOT NULL UNIQUE,
  at                  timestamptz NOT NULL,
  operation           text        NOT NULL,
  amount_cents        bigint      NOT NULL,
  balance_after_cents bigint      NOT NULL CHECK (balance_after_cents >= 0),
  -- Absent on entries written before plans existed (the cost is then -amount_cents).
  cost_cents          bigint      CHECK (cost_cents >= 0),
  plan                text,
  memory_key          text        COLLATE "C",
  query_type          text,
  query               text,
  -- The idempotency key of the request that made the entry, for audits (at most one debit per key).
  idempotency_key     text        COLLATE "C",
  PRIMARY KEY (agent_id, seq)
);
CREATE INDEX ledger_agent_at ON ledger (agent_id, at);

-- Taken again on every write of a memory, so that "most recently updated first" is a total order per agent,
-- also for writes within the same millisecond.
CREATE SEQUENCE memories_update_seq AS bigint;

CREATE TABLE memories (
  agent_id   text        NOT NULL REFERENCES accounts (id),
  key        text        COLLATE "C" NOT NULL,
  -- The value as UTF-8: NUL included, byte for byte.
  value      bytea       NOT NULL,
  type       text        NOT NULL,
  -- json, not jsonb: kept as sent (key order, duplicate keys, \u0000).
  metadata   json        NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  update_seq bigint      NOT NULL DEFAULT nextval('memories_update_seq'),
  PRIMARY KEY (agent_id, key)
);
ALTER SEQUENCE memories_update_seq OWNED BY memories.update_seq;
CREATE INDEX memories_newest ON memories (agent_id, update_seq DESC);
CREATE INDEX memories_newest_by_type ON memories (agent_id, type, update_seq DESC);

-- One row per (agent, idempotency key): a claim while its request runs ('running', with claim_token and
-- lease_until), then the stored response ('done', with status and body) written in the charging
-- transaction by `UPDATE ... WHERE claim_token = $token`. A claim whose lease has passed, or a record older
-- than the retention, may be taken over by a guarded UPDATE.
CREATE TABLE idempotency (
  -- No foreign key: a claim is made outside the charging transaction and needs no lock on the account.
  agent_id    text        NOT NULL,
  key         text        COLLATE "C" NOT NULL,
  -- SHA-256 over the operation and its validated input, hex.
  fingerprint text        NOT NULL,
  operation   text        NOT NULL,
  state       text        NOT NULL CHECK (state IN ('running', 'done')),
  claim_token text,
  lease_until timestamptz,
  status      integer,
  -- json, not jsonb: a response may hold \u0000 (a memory value), and is replayed byte for byte.
  body        json,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (agent_id, key),
  CHECK (state <> 'running' OR (claim_token IS NOT NULL AND lease_until IS NOT NULL)),
  CHECK (state <> 'done' OR (status IS NOT NULL AND body IS NOT NULL))
);
CREATE INDEX idempotency_created_at ON idempotency (created_at);

-- Shared state that may be lost: UNLOGGED tables write no WAL and are emptied after a crash.

-- The live-data cache shared by every instance (the second level behind each process's own).
CREATE UNLOGGED TABLE live_cache (
  key        text        COLLATE "C" PRIMARY KEY,
  value      json        NOT NULL,
  fetched_at timestamptz NOT NULL
);
CREATE INDEX live_cache_fetched_at ON live_cache (fetched_at);

-- Single-flight across instances: the owner of a key's lease fetches it, the others wait for live_cache.
CREATE UNLOGGED TABLE live_flights (
  key         text        COLLATE "C" PRIMARY KEY,
  owner       text        NOT NULL,
  lease_until timestamptz NOT NULL
);

-- Rate-limit counters shared by every instance: hits of a key in its current window.
CREATE UNLOGGED TABLE rate_limits (
  key          text        COLLATE "C" PRIMARY KEY,
  window_start timestamptz NOT NULL,
  hits         integer     NOT NULL CHECK (hits >= 0)
);
CREATE INDEX rate_limits_window_start ON rate_limits (window_start);
