-- 0009_one_statement_charges: every charged operation as one statement (issue 32). Each ac_memory_* function
-- (and ac_charge_only) does what the operation's transaction did (postgres-tx.ts under the core's runCharged):
-- lock the payer's account, refuse what it cannot pay (an answer saying why: no exception, nothing written), do
-- the operation's reads and writes, append the ledger entry with the account's next seq, finish the request's
-- idempotency claim, and answer json. Called as `SELECT ac_...(...)` with no BEGIN: the statement's own
-- implicit transaction commits it (postgres-charges.ts). The rules are the core's (ledger.ts, memory-writes.ts,
-- memory-rules.ts, memory-history.ts); the core turns each refusal into the error of its transaction path.
--
-- - The money invariants stay the tables' own: no negative balance (CHECK), one entry per (agent, seq) (the
--   primary key, seq taken from the locked account row), the balance the last entry's balance after it.
-- - Each statement inside a function reads a fresh snapshot (READ COMMITTED), so what is read after the
--   account's lock sees every charge of the agent committed before it, as the transaction's reads did.
-- - A refusal found after a write (a batch's later item) raises SQLSTATE AC422 with the refusal as DETAIL, so
--   that the whole statement rolls back; a claim lost to another request raises AC409, as the transaction's
--   division by zero did. Neither is on a path that succeeds.
-- - Times come from the service's clock (c.at), never now(): the same instants as on the JSON store.
-- - Memory values are bytea (they may hold NUL): json carries them as hex.
-- - All PL/pgSQL (its statements are planned once per connection; SQL functions are planned at every call
--   before PostgreSQL 18), helpers called as expressions (no function scan), no EXCEPTION block (each would
--   start a subtransaction).

-- The account rows are updated on every charge: with room left on their page, the new row version goes on the
-- same page without touching the indexes (a HOT update; no index covers balance_cents or ledger_seq). Applies
-- to pages written from now on.
ALTER TABLE accounts SET (fillfactor = 50);

-- A foreign key is a trigger on every row: each ledger entry, memory and history entry checked its account
-- again (and share-locked its row) though every write of them comes after the account's row is locked, and
-- an account is never deleted. The seq of an entry comes from its locked account row (NULL without one, which
-- NOT NULL refuses). Measured (BENCHMARKS.md, issue 32): about 15% of the database's processor time per
-- charged read, and as much per store.
ALTER TABLE ledger DROP CONSTRAINT ledger_agent_id_fkey;
ALTER TABLE memories DROP CONSTRAINT memories_agent_id_fkey;
ALTER TABLE memory_history DROP CONSTRAINT memory_history_agent_id_fkey;

-- Who pays, what, and how the ledger entry reads; the claim to finish, if the request carries an idempotency key.
CREATE TYPE ac_charge AS (
  agent_id        text,
  at              timestamptz,
  cents           bigint,
  operation       text,
  entry_id        text,
  memory_key      text,
  query_type      text,
  query           text,
  client          text,
  -- The daily spending limit of each plan (NULL: none) and the start of the day (UTC) it counts from.
  payg_limit      bigint,
  unlimited_limit bigint,
  since           timestamptz,
  claim_key       text,
  claim_token     text,
  fingerprint     text
);

-- The payer's locked account row, and why it cannot pay (NULL: it can).
CREATE TYPE ac_payer AS (payer accounts, refusal json);

-- A memory written (ac_write_memory), or why not.
CREATE TYPE ac_written AS (written memories, refusal json);

CREATE FUNCTION ac_lock_payer(c ac_charge) RETURNS ac_payer
LANGUAGE plpgsql AS $$
DECLARE
  v_payer accounts;
  v_limit bigint;
  v_spent bigint;
BEGIN
  SELECT * INTO v_payer FROM accounts WHERE id = c.agent_id FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN ROW(NULL, '{"refused":"unauthorized"}')::ac_payer;
  END IF;
  IF c.cents = 0 THEN
    RETURN ROW(v_payer, NULL)::ac_payer;
  END IF;
  IF v_payer.plan <> 'unlimited' AND v_payer.balance_cents < c.cents THEN
    RETURN ROW(v_payer, json_build_object('refused', 'insufficient_credits', 'balance', v_payer.balance_cents))::ac_payer;
  END IF;
  v_limit := CASE WHEN v_payer.plan = 'unlimited' THEN c.unlimited_limit ELSE c.payg_limit END;
  IF v_limit IS NOT NULL THEN
    -- costOf: the cost when recorded, else what a debit took from the balance.
    SELECT coalesce(sum(coalesce(cost_cents, greatest(0, -amount_cents))), 0) INTO v_spent
      FROM ledger WHERE agent_id = c.agent_id AND at >= c.since;
    IF v_spent + c.cents > v_limit THEN
      RETURN ROW(v_payer, json_build_object('refused', 'daily_limit_reached', 'spent', v_spent, 'limit', v_limit))::ac_payer;
    END IF;
  END IF;
  RETURN ROW(v_payer, NULL)::ac_payer;
END $$;

-- Debits c.cents (an entry of amount 0 on the unlimited plan, which records the cost) and returns the balance
-- after it; no entry when the price is 0.
CREATE FUNCTION ac_debit(c ac_charge, payer accounts) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_amount  bigint := CASE WHEN payer.plan = 'unlimited' THEN 0 ELSE -c.cents END;
  v_balance bigint;
BEGIN
  IF c.cents = 0 THEN
    RETURN payer.balance_cents;
  END IF;
  WITH a AS (
    UPDATE accounts SET ledger_seq = ledger_seq + 1, balance_cents = balance_cents + v_amount
     WHERE id = c.agent_id RETURNING ledger_seq, balance_cents)
  INSERT INTO ledger (agent_id, seq, id, at, operation, amount_cents, balance_after_cents, cost_cents, plan,
                      memory_key, query_type, query, idempotency_key, client)
    SELECT c.agent_id, a.ledger_seq, c.entry_id, c.at, c.operation, v_amount, a.balance_cents, c.cents,
           CASE WHEN payer.plan = 'unlimited' THEN payer.plan END, c.memory_key, c.query_type, c.query,
           c.claim_key, c.client FROM a
    RETURNING balance_after_cents INTO v_balance;
  RETURN v_balance;
END $$;

-- Finishes the request's idempotency claim with its answer (ac_fill); called only when it has one.
CREATE FUNCTION ac_finish_claim(c ac_charge, p_body json) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE idempotency SET state = 'done', fingerprint = c.fingerprint, operation = c.operation, status = 200,
         body = p_body, created_at = c.at, claim_token = NULL, lease_until = NULL
   WHERE agent_id = c.agent_id AND key = c.claim_key AND state = 'running' AND claim_token = c.claim_token;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'the idempotency claim of this request was taken over' USING ERRCODE = 'AC409';
  END IF;
END $$;

-- The idempotency record's body: the service's answer exactly as the service sends it, made of a template of
-- the answer (postgres-answers.ts: the answer's JSON text cut at its marks, `parts` around them, `codes` naming
-- what each mark stands for) and of the statement's values, each as JSON text (`names`, `texts`), so that each
-- answer has one definition, the service's (src/core/memory-answers.ts). Text, not json: PostgreSQL's json
-- functions refuse a string holding \u0000 when they read it, and a memory may hold one.
CREATE TYPE ac_template AS (parts text[], codes text[]);
-- Values by name, as JSON text.
CREATE TYPE ac_values AS (names text[], texts text[]);

-- A bytea of UTF-8 as a JSON string, as JSON.stringify writes it (text cannot hold NUL: the parts between NULs
-- are escaped, joined by NUL's escape).
CREATE FUNCTION ac_json_string(b bytea) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  v_out  text := '';
  v_at   integer;
  v_part text;
BEGIN
  LOOP
    v_at := position('\x00'::bytea IN b);
    v_part := to_json(convert_from(CASE WHEN v_at = 0 THEN b ELSE substring(b FROM 1 FOR v_at - 1) END, 'UTF8'))::text;
    v_out := v_out || substr(v_part, 2, length(v_part) - 2);
    EXIT WHEN v_at = 0;
    v_out := v_out || '\u0000';
    b := substring(b FROM v_at + 1);
  END LOOP;
  RETURN '"' || v_out || '"';
END $$;

-- An instant as a JSON string, as toISOString writes it; null for none.
CREATE FUNCTION ac_json_instant(t timestamptz) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN coalesce('"' || to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"', 'null');
END $$;

-- A memory's fields as the answers write them, named `<prefix>.<field>`.
CREATE FUNCTION ac_memory_values(p_prefix text, m memories) RETURNS ac_values
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN ROW(
    ARRAY[p_prefix || '.key', p_prefix || '.value', p_prefix || '.type', p_prefix || '.metadata',
          p_prefix || '.created_at', p_prefix || '.updated_at', p_prefix || '.version', p_prefix || '.expires_at'],
    ARRAY[to_json(m.key)::text, ac_json_string(m.value), to_json(m.type)::text, m.metadata::text,
          ac_json_instant(m.created_at), ac_json_instant(m.updated_at), m.version::text,
          ac_json_instant(m.expires_at)])::ac_values;
END $$;

-- The template filled with the values.
CREATE FUNCTION ac_fill(t ac_template, v ac_values) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  v_out text := t.parts[1];
BEGIN
  FOR i IN 1 .. coalesce(cardinality(t.codes), 0) LOOP
    v_out := v_out || v.texts[array_position(v.names, t.codes[i])] || t.parts[i + 1];
  END LOOP;
  RETURN v_out;
END $$;

-- Finishes the claim with the answer, when the request holds one (the values are made only then).
CREATE FUNCTION ac_finish(c ac_charge, p_answer ac_template, v ac_values) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM ac_finish_claim(c, ac_fill(p_answer, v)::json);
END $$;

CREATE FUNCTION ac_memory_json(m memories) RETURNS json
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN json_build_object('key', m.key, 'value', encode(m.value, 'hex'), 'type', m.type, 'metadata', m.metadata,
    'created_at', m.created_at, 'updated_at', m.updated_at, 'version', m.version, 'expires_at', m.expires_at,
    'ttl_seconds', m.ttl_seconds);
END $$;

CREATE FUNCTION ac_version_json(h memory_history) RETURNS json
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN json_build_object('version', h.version, 'at', h.at, 'deleted', h.deleted,
    'value', encode(h.value, 'hex'), 'type', h.type, 'metadata', h.metadata, 'ttl_seconds', h.ttl_seconds);
END $$;

-- The refusal of a conditional write (checkCondition), or NULL when it may go ahead.
CREATE FUNCTION ac_condition(p_key text, p_current integer, p_expected integer, p_create_only boolean)
RETURNS json
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF (p_create_only AND p_current IS NOT NULL) OR (p_expected IS NOT NULL AND p_current IS DISTINCT FROM p_expected) THEN
    RETURN json_build_object('refused', 'version_conflict', 'key', p_key, 'current', p_current);
  END IF;
  RETURN NULL;
END $$;

-- Writes a memory over its live one (p_live, p_existing) as writeMemory does (memory-writes.ts): the quota,
-- the next version (the history dropped for a new life, or while none is kept), the memory, its history entry.
-- An import keeps its line's times and version (p_kept_*).
CREATE FUNCTION ac_write_memory(
  c ac_charge, p_key text, p_value bytea, p_type text, p_metadata json, p_expires_at timestamptz,
  p_ttl integer, p_search tsvector, p_live boolean, p_existing memories, p_quota integer,
  p_keep integer, p_retention_seconds bigint, p_kept_created timestamptz, p_kept_updated timestamptz,
  p_kept_version integer)
RETURNS ac_written
LANGUAGE plpgsql AS $$
DECLARE
  v_held      bigint;
  v_version   integer;
  v_newest    integer;
  v_newest_at timestamptz;
  v_written   memories;
BEGIN
  IF NOT p_live THEN
    SELECT count(*) INTO v_held FROM memories
     WHERE agent_id = c.agent_id AND (expires_at IS NULL OR expires_at > c.at);
    IF v_held >= p_quota THEN
      RETURN ROW(NULL, '{"refused":"quota_exceeded"}')::ac_written;
    END IF;
  END IF;
  IF p_live AND p_keep > 0 THEN
    v_version := p_existing.version + 1;
  ELSE
    SELECT version, at INTO v_newest, v_newest_at FROM memory_history
     WHERE agent_id = c.agent_id AND key = p_key ORDER BY version DESC LIMIT 1;
    IF v_newest IS NOT NULL AND (p_keep = 0 OR (NOT p_live
        AND v_newest_at < c.at - p_retention_seconds * interval '1 second')) THEN
      DELETE FROM memory_history WHERE agent_id = c.agent_id AND key = p_key;
    END IF;
    v_version := greatest(CASE WHEN p_live THEN p_existing.version ELSE 0 END, coalesce(v_newest, 0)) + 1;
  END IF;
  IF v_version = 1 AND p_kept_version IS NOT NULL THEN
    v_version := p_kept_version;
  END IF;
  INSERT INTO memories (agent_id, key, value, type, metadata, created_at, updated_at, version, expires_at,
                        ttl_seconds, search)
    VALUES (c.agent_id, p_key, p_value, p_type, p_metadata,
            coalesce(p_kept_created, CASE WHEN p_live THEN p_existing.created_at END, c.at),
            coalesce(p_kept_updated, c.at), v_version, p_expires_at, p_ttl, p_search)
    ON CONFLICT (agent_id, key) DO UPDATE SET value = EXCLUDED.value, type = EXCLUDED.type,
      metadata = EXCLUDED.metadata, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at,
      version = EXCLUDED.version, expires_at = EXCLUDED.expires_at, ttl_seconds = EXCLUDED.ttl_seconds,
      search = EXCLUDED.search, update_seq = nextval('memories_update_seq')
    RETURNING * INTO v_written;
  IF p_keep > 0 THEN
    INSERT INTO memory_history (agent_id, key, version, at, deleted, value, type, metadata, ttl_seconds)
      VALUES (c.agent_id, p_key, v_version, c.at, false, p_value, p_type, p_metadata, p_ttl);
    -- The newest p_keep stay (by rank: a key's versions need not be consecutive).
    DELETE FROM memory_history WHERE agent_id = c.agent_id AND key = p_key AND version < (
      SELECT version FROM memory_history WHERE agent_id = c.agent_id AND key = p_key
       ORDER BY version DESC OFFSET p_keep - 1 LIMIT 1);
  END IF;
  RETURN ROW(v_written, NULL)::ac_written;
END $$;

-- A key's history as far as it is kept (historyOf): none while none is kept, none once a key without a live
-- memory is past its retention.
CREATE FUNCTION ac_history(c ac_charge, p_key text, p_live boolean, p_limit integer, p_keep integer,
                           p_retention_seconds bigint)
RETURNS SETOF memory_history
LANGUAGE plpgsql AS $$
DECLARE
  v_newest_at timestamptz;
BEGIN
  IF p_keep = 0 THEN
    RETURN;
  END IF;
  IF NOT p_live THEN
    SELECT at INTO v_newest_at FROM memory_history
     WHERE agent_id = c.agent_id AND key = p_key ORDER BY version DESC LIMIT 1;
    IF v_newest_at < c.at - p_retention_seconds * interval '1 second' THEN
      RETURN;
    END IF;
  END IF;
  RETURN QUERY SELECT * FROM memory_history WHERE agent_id = c.agent_id AND key = p_key
    ORDER BY version DESC LIMIT p_limit;
END $$;

-- A charge whose answer the service built before it (search, live data): only the balance comes from here.
CREATE FUNCTION ac_charge_only(c ac_charge, p_answer ac_template) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  v         ac_payer := ac_lock_payer(c);
  v_balance bigint;
BEGIN
  IF v.refusal IS NOT NULL THEN
    RETURN v.refusal;
  END IF;
  v_balance := ac_debit(c, v.payer);
  IF c.claim_token IS NOT NULL THEN
    PERFORM ac_finish(c, p_answer, ROW(ARRAY['balance'], ARRAY[v_balance::text])::ac_values);
  END IF;
  RETURN json_build_object('balance', v_balance);
END $$;

-- memory_retrieve (memories.ts retrieveMemory).
CREATE FUNCTION ac_memory_retrieve(c ac_charge, p_key text, p_refresh boolean, p_answer ac_template) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  v         ac_payer := ac_lock_payer(c);
  m         memories;
  f         ac_values;
  v_balance bigint;
BEGIN
  IF v.refusal IS NOT NULL THEN
    RETURN v.refusal;
  END IF;
  SELECT * INTO m FROM memories WHERE agent_id = c.agent_id AND key = p_key;
  IF NOT FOUND OR m.expires_at <= c.at THEN
    RETURN '{"refused":"not_found"}';
  END IF;
  IF p_refresh AND m.ttl_seconds IS NOT NULL THEN
    -- update_seq stays: a refresh is not an update. No row: the background purge removed it (it had expired).
    UPDATE memories SET expires_at = c.at + m.ttl_seconds * interval '1 second'
     WHERE agent_id = c.agent_id AND key = p_key RETURNING expires_at INTO m.expires_at;
    IF NOT FOUND THEN
      RETURN '{"refused":"not_found"}';
    END IF;
  END IF;
  v_balance := ac_debit(c, v.payer);
  IF c.claim_token IS NOT NULL THEN
    f := ac_memory_values('memory', m);
    PERFORM ac_finish(c, p_answer, ROW(f.names || 'balance'::text, f.texts || v_balance::text)::ac_values);
  END IF;
  RETURN json_build_object('balance', v_balance, 'memory', ac_memory_json(m));
END $$;

-- memory_store and memory_store_batch (memories.ts storeOne): each item in order, each seeing the ones before
-- it; all stored or none. Arrays hold one element per item.
CREATE FUNCTION ac_memory_store(
  c ac_charge, p_keys text[], p_values bytea[], p_types text[], p_metadata text[], p_expires_at timestamptz[],
  p_ttls integer[], p_search tsvector[], p_expected integer[], p_create_only boolean[], p_quota integer,
  p_keep integer, p_retention_seconds bigint, p_answer ac_template)
RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  v         ac_payer := ac_lock_payer(c);
  w         ac_written;
  m         memories;
  f         ac_values := ROW('{}', '{}')::ac_values;
  g         ac_values;
  v_live    boolean;
  v_refusal json;
  v_results json[] := '{}';
  v_balance bigint;
BEGIN
  IF v.refusal IS NOT NULL THEN
    RETURN v.refusal;
  END IF;
  FOR i IN 1 .. cardinality(p_keys) LOOP
    SELECT * INTO m FROM memories WHERE agent_id = c.agent_id AND key = p_keys[i];
    v_live := FOUND AND (m.expires_at IS NULL OR m.expires_at > c.at);
    v_refusal := ac_condition(p_keys[i], CASE WHEN v_live THEN m.version END, p_expected[i], p_create_only[i]);
    IF v_refusal IS NULL THEN
      w := ac_write_memory(c, p_keys[i], p_values[i], p_types[i], p_metadata[i]::json, p_expires_at[i],
        p_ttls[i], p_search[i], v_live, m, p_quota, p_keep, p_retention_seconds, NULL, NULL, NULL);
      v_refusal := w.refusal;
    END IF;
    IF v_refusal IS NOT NULL THEN
      IF i = 1 THEN
        RETURN v_refusal;
      END IF;
      RAISE EXCEPTION 'a memory of the batch was refused' USING ERRCODE = 'AC422', DETAIL = v_refusal::text;
    END IF;
    v_results := v_results || json_build_object('memory', ac_memory_json(w.written), 'created', NOT v_live);
    IF c.claim_token IS NOT NULL THEN
      g := ac_memory_values('results.' || (i - 1) || '.memory', w.written);
      f := ROW(f.names || g.names || ('results.' || (i - 1) || '.created'),
               f.texts || g.texts || (NOT v_live)::text)::ac_values;
    END IF;
  END LOOP;
  v_balance := ac_debit(c, v.payer);
  IF c.claim_token IS NOT NULL THEN
    PERFORM ac_finish(c, p_answer, ROW(f.names || 'balance'::text, f.texts || v_balance::text)::ac_values);
  END IF;
  RETURN json_build_object('balance', v_balance, 'results', to_json(v_results));
END $$;

-- memory_history (memory-history.ts memoryHistory). A kept answer's entries are each filled by the template of
-- a stored version (p_live) or of a delete (p_deleted).
CREATE FUNCTION ac_memory_history(c ac_charge, p_key text, p_limit integer, p_keep integer,
  p_retention_seconds bigint, p_answer ac_template, p_live ac_template, p_deleted ac_template)
RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  v          ac_payer := ac_lock_payer(c);
  m          memories;
  v_live     boolean;
  v_versions json;
  v_entries  text;
  v_balance  bigint;
  v_current  integer;
BEGIN
  IF v.refusal IS NOT NULL THEN
    RETURN v.refusal;
  END IF;
  SELECT * INTO m FROM memories WHERE agent_id = c.agent_id AND key = p_key;
  v_live := FOUND AND (m.expires_at IS NULL OR m.expires_at > c.at);
  v_current := CASE WHEN v_live THEN m.version END;
  SELECT json_agg(ac_version_json(h) ORDER BY h.version DESC),
         -- The kept answer's entries, made only for a request that keeps one.
         string_agg(ac_fill(CASE WHEN h.deleted THEN p_deleted ELSE p_live END,
           ROW(ARRAY['version', 'at', 'value', 'type', 'metadata'],
               ARRAY[h.version::text, ac_json_instant(h.at), ac_json_string(h.value), to_json(h.type)::text,
                     h.metadata::text])::ac_values), ',' ORDER BY h.version DESC)
           FILTER (WHERE c.claim_token IS NOT NULL)
    INTO v_versions, v_entries
    FROM ac_history(c, p_key, v_live, p_limit, p_keep, p_retention_seconds) h;
  IF NOT v_live AND v_versions IS NULL THEN
    RETURN '{"refused":"not_found"}';
  END IF;
  v_balance := ac_debit(c, v.payer);
  IF c.claim_token IS NOT NULL THEN
    PERFORM ac_finish(c, p_answer, ROW(ARRAY['key', 'current', 'versions', 'balance'],
      ARRAY[to_json(p_key)::text, coalesce(v_current::text, 'null'), '[' || coalesce(v_entries, '') || ']',
            v_balance::text])::ac_values);
  END IF;
  RETURN json_build_object('balance', v_balance, 'key', p_key, 'current', v_current,
    'versions', coalesce(v_versions, '[]'));
END $$;

-- memory_restore (memory-history.ts restoreMemory). The version's search terms were computed by the service
-- from its content as read before (p_read_at: the entry's time then); an entry that is not what was read
-- answers "stale", and the service reads it again.
CREATE FUNCTION ac_memory_restore(
  c ac_charge, p_key text, p_version integer, p_expected integer, p_read_at timestamptz, p_search tsvector,
  p_quota integer, p_keep integer, p_retention_seconds bigint, p_answer ac_template)
RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  v         ac_payer := ac_lock_payer(c);
  w         ac_written;
  m         memories;
  h         memory_history;
  f         ac_values;
  v_live    boolean;
  v_refusal json;
  v_balance bigint;
BEGIN
  IF v.refusal IS NOT NULL THEN
    RETURN v.refusal;
  END IF;
  SELECT * INTO m FROM memories WHERE agent_id = c.agent_id AND key = p_key;
  v_live := FOUND AND (m.expires_at IS NULL OR m.expires_at > c.at);
  v_refusal := ac_condition(p_key, CASE WHEN v_live THEN m.version END, p_expected, false);
  IF v_refusal IS NOT NULL THEN
    RETURN v_refusal;
  END IF;
  SELECT * INTO h FROM ac_history(c, p_key, v_live, p_keep, p_keep, p_retention_seconds) e
   WHERE e.version = p_version;
  IF NOT FOUND THEN
    RETURN '{"refused":"version_not_found"}';
  END IF;
  IF h.deleted OR h.value IS NULL OR h.type IS NULL THEN
    RETURN '{"refused":"version_deleted"}';
  END IF;
  IF p_read_at IS DISTINCT FROM h.at THEN
    RETURN '{"refused":"stale"}';
  END IF;
  w := ac_write_memory(c, p_key, h.value, h.type, coalesce(h.metadata, '{}'),
    c.at + h.ttl_seconds * interval '1 second', h.ttl_seconds, p_search, v_live, m, p_quota, p_keep,
    p_retention_seconds, NULL, NULL, NULL);
  IF w.refusal IS NOT NULL THEN
    RETURN w.refusal;
  END IF;
  v_balance := ac_debit(c, v.payer);
  IF c.claim_token IS NOT NULL THEN
    f := ac_memory_values('memory', w.written);
    PERFORM ac_finish(c, p_answer, ROW(f.names || ARRAY['created', 'restored_from', 'balance'],
      f.texts || ARRAY[(NOT v_live)::text, p_version::text, v_balance::text])::ac_values);
  END IF;
  RETURN json_build_object('balance', v_balance, 'memory', ac_memory_json(w.written), 'created', NOT v_live);
END $$;

-- memory_import (memory-transfer.ts importMemories): the lines the service planned to write, each against the
-- live memory's version it planned on (NULL: none); a line whose memory is no longer so answers "stale", and
-- the service plans again. The price (c.cents) is the service's, from its plan, and so is the answer (its
-- balance from here, as ac_charge_only).
CREATE FUNCTION ac_memory_import(
  c ac_charge, p_keys text[], p_values bytea[], p_types text[], p_metadata text[], p_expires_at timestamptz[],
  p_ttls integer[], p_search tsvector[], p_planned integer[], p_created timestamptz[], p_updated timestamptz[],
  p_kept_versions integer[], p_quota integer, p_keep integer, p_retention_seconds bigint, p_answer ac_template)
RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  v         ac_payer := ac_lock_payer(c);
  w         ac_written;
  m         memories;
  v_live    boolean;
  v_created integer := 0;
  v_held    bigint;
  v_written json[] := '{}';
  v_balance bigint;
BEGIN
  IF (v.payer).id IS NULL THEN
    RETURN v.refusal;
  END IF;
  -- The plan first: its quota is refused before the price, as the core plans before it debits.
  FOR i IN 1 .. cardinality(p_keys) LOOP
    SELECT * INTO m FROM memories WHERE agent_id = c.agent_id AND key = p_keys[i];
    v_live := FOUND AND (m.expires_at IS NULL OR m.expires_at > c.at);
    IF (CASE WHEN v_live THEN m.version END) IS DISTINCT FROM p_planned[i] THEN
      RETURN '{"refused":"stale"}';
    END IF;
    IF NOT v_live THEN
      v_created := v_created + 1;
    END IF;
  END LOOP;
  IF v_created > 0 THEN
    SELECT count(*) INTO v_held FROM memories
     WHERE agent_id = c.agent_id AND (expires_at IS NULL OR expires_at > c.at);
    IF v_held + v_created > p_quota THEN
      RETURN json_build_object('refused', 'import_quota_exceeded', 'held', v_held, 'created', v_created);
    END IF;
  END IF;
  IF v.refusal IS NOT NULL THEN
    RETURN v.refusal;
  END IF;
  FOR i IN 1 .. cardinality(p_keys) LOOP
    SELECT * INTO m FROM memories WHERE agent_id = c.agent_id AND key = p_keys[i];
    v_live := FOUND AND (m.expires_at IS NULL OR m.expires_at > c.at);
    w := ac_write_memory(c, p_keys[i], p_values[i], p_types[i], p_metadata[i]::json, p_expires_at[i],
      p_ttls[i], p_search[i], v_live, m, 2147483647, p_keep, p_retention_seconds, p_created[i], p_updated[i],
      p_kept_versions[i]);
    v_written := v_written || ac_memory_json(w.written);
  END LOOP;
  v_balance := ac_debit(c, v.payer);
  IF c.claim_token IS NOT NULL THEN
    PERFORM ac_finish(c, p_answer, ROW(ARRAY['balance'], ARRAY[v_balance::text])::ac_values);
  END IF;
  RETURN json_build_object('balance', v_balance, 'written', to_json(v_written));
END $$;
