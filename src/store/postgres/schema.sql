-- GENERATED FILE: DO NOT EDIT BY HAND.
--
-- The PostgreSQL store's schema as it stands after the last migration
-- (0010_charge_fixes), read from the catalog of a fresh database migrated on PostgreSQL 15.
-- Regenerate it with `npm run schema` (scripts/dump-schema.ts, scripts/schema-text.ts);
-- test/store/schema-file.test.ts fails while it differs from what the migrations make.
--
-- The migrations in ./migrations are the history, and the only SQL that is ever applied: nothing runs this
-- file. To change the schema, add a migration, then regenerate this file. Here each object appears once, as
-- it is now (a function that a later migration re-created shows only the definition that runs), grouped by
-- kind and sorted by name: for reading, not for running. Names are qualified (public.). Not shown:
-- schema_migrations, the migrator's bookkeeping (migrate.ts creates it; no migration does), owners, and
-- the sequences' current values.


-- Types

CREATE TYPE public.ac_charge AS (
  agent_id text,
  at timestamp with time zone,
  cents bigint,
  operation text,
  entry_id text,
  memory_key text,
  query_type text,
  query text,
  client text,
  payg_limit bigint,
  unlimited_limit bigint,
  since timestamp with time zone,
  claim_key text,
  claim_token text,
  fingerprint text
);

CREATE TYPE public.ac_payer AS (
  payer public.accounts,
  refusal json
);

CREATE TYPE public.ac_template AS (
  parts text[],
  codes text[]
);

CREATE TYPE public.ac_values AS (
  names text[],
  texts text[]
);

CREATE TYPE public.ac_written AS (
  written public.memories,
  refusal json
);


-- Sequences

CREATE SEQUENCE public.memories_embedding_seq
  AS bigint
  START WITH 1
  INCREMENT BY 1
  MINVALUE 1
  MAXVALUE 9223372036854775807
  CACHE 1;
ALTER SEQUENCE public.memories_embedding_seq OWNED BY public.memories.embedding_seq;

CREATE SEQUENCE public.memories_update_seq
  AS bigint
  START WITH 1
  INCREMENT BY 1
  MINVALUE 1
  MAXVALUE 9223372036854775807
  CACHE 1;
ALTER SEQUENCE public.memories_update_seq OWNED BY public.memories.update_seq;

CREATE SEQUENCE public.oauth_records_put_seq
  AS bigint
  START WITH 1
  INCREMENT BY 1
  MINVALUE 1
  MAXVALUE 9223372036854775807
  CACHE 1;


-- Tables

CREATE TABLE public.accounts (
  id text NOT NULL,
  email text NOT NULL,
  key_hash text NOT NULL,
  name bytea,
  plan text NOT NULL,
  balance_cents bigint NOT NULL,
  ledger_seq bigint DEFAULT 0 NOT NULL,
  spent_day date,
  spent_day_cents bigint DEFAULT 0 NOT NULL,
  created_at timestamp with time zone NOT NULL,
  CONSTRAINT accounts_balance_cents_check CHECK ((balance_cents >= 0)),
  CONSTRAINT accounts_email_key UNIQUE (email),
  CONSTRAINT accounts_key_hash_key UNIQUE (key_hash),
  CONSTRAINT accounts_ledger_seq_check CHECK ((ledger_seq >= 0)),
  CONSTRAINT accounts_pkey PRIMARY KEY (id),
  CONSTRAINT accounts_spent_day_cents_check CHECK ((spent_day_cents >= 0))
) WITH (fillfactor=50);

CREATE TABLE public.idempotency (
  agent_id text NOT NULL,
  key text COLLATE pg_catalog."C" NOT NULL,
  fingerprint text NOT NULL,
  operation text NOT NULL,
  state text NOT NULL,
  claim_token text,
  lease_until timestamp with time zone,
  status integer,
  body json,
  created_at timestamp with time zone NOT NULL,
  CONSTRAINT idempotency_check CHECK (((state <> 'running'::text) OR ((claim_token IS NOT NULL) AND (lease_until IS NOT NULL)))),
  CONSTRAINT idempotency_check1 CHECK (((state <> 'done'::text) OR ((status IS NOT NULL) AND (body IS NOT NULL)))),
  CONSTRAINT idempotency_pkey PRIMARY KEY (agent_id, key),
  CONSTRAINT idempotency_state_check CHECK ((state = ANY (ARRAY['running'::text, 'done'::text])))
);

CREATE TABLE public.ledger (
  agent_id text NOT NULL,
  seq bigint NOT NULL,
  id text NOT NULL,
  at timestamp with time zone NOT NULL,
  operation text NOT NULL,
  amount_cents bigint NOT NULL,
  balance_after_cents bigint NOT NULL,
  cost_cents bigint,
  plan text,
  memory_key text COLLATE pg_catalog."C",
  query_type text,
  query text,
  idempotency_key text COLLATE pg_catalog."C",
  client text,
  CONSTRAINT ledger_balance_after_cents_check CHECK ((balance_after_cents >= 0)),
  CONSTRAINT ledger_cost_cents_check CHECK ((cost_cents >= 0)),
  CONSTRAINT ledger_id_key UNIQUE (id),
  CONSTRAINT ledger_pkey PRIMARY KEY (agent_id, seq),
  CONSTRAINT ledger_seq_check CHECK ((seq >= 1))
);

CREATE UNLOGGED TABLE public.live_cache (
  key text COLLATE pg_catalog."C" NOT NULL,
  value json NOT NULL,
  fetched_at timestamp with time zone NOT NULL,
  CONSTRAINT live_cache_pkey PRIMARY KEY (key)
);

CREATE UNLOGGED TABLE public.live_flights (
  key text COLLATE pg_catalog."C" NOT NULL,
  owner text NOT NULL,
  lease_until timestamp with time zone NOT NULL,
  CONSTRAINT live_flights_pkey PRIMARY KEY (key)
);

CREATE TABLE public.live_usage (
  agent_id text NOT NULL,
  day date NOT NULL,
  state text NOT NULL,
  count bigint NOT NULL,
  CONSTRAINT live_usage_agent_id_fkey FOREIGN KEY (agent_id) REFERENCES public.accounts(id),
  CONSTRAINT live_usage_count_check CHECK ((count >= 0)),
  CONSTRAINT live_usage_pkey PRIMARY KEY (agent_id, day, state)
);

CREATE TABLE public.memories (
  agent_id text NOT NULL,
  key text COLLATE pg_catalog."C" NOT NULL,
  value bytea NOT NULL,
  type text NOT NULL,
  metadata json NOT NULL,
  created_at timestamp with time zone NOT NULL,
  updated_at timestamp with time zone NOT NULL,
  update_seq bigint DEFAULT nextval('public.memories_update_seq'::regclass) NOT NULL,
  version integer DEFAULT 1 NOT NULL,
  expires_at timestamp with time zone,
  ttl_seconds integer,
  search tsvector,
  metadata_index jsonb GENERATED ALWAYS AS ((replace((metadata)::text, '\u0000'::text, '\ufffd'::text))::jsonb) STORED,
  embedding bytea,
  embedding_model text,
  embedding_version integer,
  embedding_seq bigint,
  CONSTRAINT memories_pkey PRIMARY KEY (agent_id, key),
  CONSTRAINT memories_ttl_seconds_check CHECK ((ttl_seconds >= 1)),
  CONSTRAINT memories_version_check CHECK ((version >= 1))
);

CREATE TABLE public.memory_history (
  agent_id text NOT NULL,
  key text COLLATE pg_catalog."C" NOT NULL,
  version integer NOT NULL,
  at timestamp with time zone NOT NULL,
  deleted boolean DEFAULT false NOT NULL,
  value bytea,
  type text,
  metadata json,
  ttl_seconds integer,
  CONSTRAINT memory_history_pkey PRIMARY KEY (agent_id, key, version),
  CONSTRAINT memory_history_version_check CHECK ((version >= 1))
);

CREATE TABLE public.oauth_records (
  kind text COLLATE pg_catalog."C" NOT NULL,
  id text COLLATE pg_catalog."C" NOT NULL,
  payload json NOT NULL,
  expires_at timestamp with time zone,
  grant_id text COLLATE pg_catalog."C",
  uid text COLLATE pg_catalog."C",
  user_code text COLLATE pg_catalog."C",
  account_id text COLLATE pg_catalog."C",
  consumed_at timestamp with time zone,
  put_seq bigint DEFAULT nextval('public.oauth_records_put_seq'::regclass) NOT NULL,
  CONSTRAINT oauth_records_kind_check CHECK (((length(kind) >= 1) AND (length(kind) <= 64))),
  CONSTRAINT oauth_records_pkey PRIMARY KEY (kind, id)
);

CREATE UNLOGGED TABLE public.rate_limits (
  key text COLLATE pg_catalog."C" NOT NULL,
  window_start timestamp with time zone NOT NULL,
  hits integer NOT NULL,
  CONSTRAINT rate_limits_hits_check CHECK ((hits >= 0)),
  CONSTRAINT rate_limits_pkey PRIMARY KEY (key)
);


-- Views

-- (none)


-- Indexes

CREATE INDEX accounts_email_c ON public.accounts USING btree (email COLLATE "C");

-- Made by the constraint accounts_email_key of public.accounts:
-- CREATE UNIQUE INDEX accounts_email_key ON public.accounts USING btree (email);

-- Made by the constraint accounts_key_hash_key of public.accounts:
-- CREATE UNIQUE INDEX accounts_key_hash_key ON public.accounts USING btree (key_hash);

-- Made by the constraint accounts_pkey of public.accounts:
-- CREATE UNIQUE INDEX accounts_pkey ON public.accounts USING btree (id);

CREATE INDEX idempotency_created_at ON public.idempotency USING btree (created_at);

-- Made by the constraint idempotency_pkey of public.idempotency:
-- CREATE UNIQUE INDEX idempotency_pkey ON public.idempotency USING btree (agent_id, key);

CREATE INDEX ledger_agent_at ON public.ledger USING btree (agent_id, at);

-- Made by the constraint ledger_id_key of public.ledger:
-- CREATE UNIQUE INDEX ledger_id_key ON public.ledger USING btree (id);

-- Made by the constraint ledger_pkey of public.ledger:
-- CREATE UNIQUE INDEX ledger_pkey ON public.ledger USING btree (agent_id, seq);

CREATE INDEX live_cache_fetched_at ON public.live_cache USING btree (fetched_at);

-- Made by the constraint live_cache_pkey of public.live_cache:
-- CREATE UNIQUE INDEX live_cache_pkey ON public.live_cache USING btree (key);

-- Made by the constraint live_flights_pkey of public.live_flights:
-- CREATE UNIQUE INDEX live_flights_pkey ON public.live_flights USING btree (key);

CREATE INDEX live_usage_day ON public.live_usage USING btree (day);

-- Made by the constraint live_usage_pkey of public.live_usage:
-- CREATE UNIQUE INDEX live_usage_pkey ON public.live_usage USING btree (agent_id, day, state);

CREATE INDEX memories_embedded ON public.memories USING btree (agent_id, embedding_seq) WHERE (embedding_seq IS NOT NULL);

CREATE INDEX memories_expires_at ON public.memories USING btree (expires_at) WHERE (expires_at IS NOT NULL);

CREATE INDEX memories_newest ON public.memories USING btree (agent_id, update_seq DESC);

CREATE INDEX memories_newest_by_type ON public.memories USING btree (agent_id, type, update_seq DESC);

-- Made by the constraint memories_pkey of public.memories:
-- CREATE UNIQUE INDEX memories_pkey ON public.memories USING btree (agent_id, key);

CREATE INDEX memories_search ON public.memories USING gin (search);

-- Made by the constraint memory_history_pkey of public.memory_history:
-- CREATE UNIQUE INDEX memory_history_pkey ON public.memory_history USING btree (agent_id, key, version);

CREATE INDEX oauth_records_account ON public.oauth_records USING btree (kind, account_id) WHERE (account_id IS NOT NULL);

CREATE INDEX oauth_records_expires_at ON public.oauth_records USING btree (expires_at) WHERE (expires_at IS NOT NULL);

CREATE INDEX oauth_records_grant ON public.oauth_records USING btree (grant_id) WHERE (grant_id IS NOT NULL);

-- Made by the constraint oauth_records_pkey of public.oauth_records:
-- CREATE UNIQUE INDEX oauth_records_pkey ON public.oauth_records USING btree (kind, id);

CREATE INDEX oauth_records_uid ON public.oauth_records USING btree (kind, uid) WHERE (uid IS NOT NULL);

CREATE INDEX oauth_records_user_code ON public.oauth_records USING btree (kind, user_code) WHERE (user_code IS NOT NULL);

-- Made by the constraint rate_limits_pkey of public.rate_limits:
-- CREATE UNIQUE INDEX rate_limits_pkey ON public.rate_limits USING btree (key);

CREATE INDEX rate_limits_window_start ON public.rate_limits USING btree (window_start);


-- Functions

CREATE OR REPLACE FUNCTION public.ac_charge_only(c public.ac_charge, p_answer public.ac_template)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION public.ac_condition(p_key text, p_current integer, p_expected integer, p_create_only boolean)
 RETURNS json
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
  IF (p_create_only AND p_current IS NOT NULL) OR (p_expected IS NOT NULL AND p_current IS DISTINCT FROM p_expected) THEN
    RETURN json_build_object('refused', 'version_conflict', 'key', p_key, 'current', p_current);
  END IF;
  RETURN NULL;
END $function$;

CREATE OR REPLACE FUNCTION public.ac_debit(c public.ac_charge, payer public.accounts)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION public.ac_fill(t public.ac_template, v public.ac_values)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
  v_out text := t.parts[1];
BEGIN
  FOR i IN 1 .. coalesce(cardinality(t.codes), 0) LOOP
    v_out := v_out || v.texts[array_position(v.names, t.codes[i])] || t.parts[i + 1];
  END LOOP;
  IF v_out IS NULL THEN
    RAISE EXCEPTION 'an answer template was filled with a missing value' USING ERRCODE = 'XX000';
  END IF;
  RETURN v_out;
END $function$;

CREATE OR REPLACE FUNCTION public.ac_finish(c public.ac_charge, p_answer public.ac_template, v public.ac_values)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  PERFORM ac_finish_claim(c, ac_fill(p_answer, v)::json);
END $function$;

CREATE OR REPLACE FUNCTION public.ac_finish_claim(c public.ac_charge, p_body json)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
BEGIN
  UPDATE idempotency SET state = 'done', fingerprint = c.fingerprint, operation = c.operation, status = 200,
         body = p_body, created_at = c.at, claim_token = NULL, lease_until = NULL
   WHERE agent_id = c.agent_id AND key = c.claim_key AND state = 'running' AND claim_token = c.claim_token;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'the idempotency claim of this request was taken over' USING ERRCODE = 'AC409';
  END IF;
END $function$;

CREATE OR REPLACE FUNCTION public.ac_history(c public.ac_charge, p_key text, p_live boolean, p_limit integer, p_keep integer, p_retention_seconds bigint)
 RETURNS SETOF public.memory_history
 LANGUAGE plpgsql
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION public.ac_json_instant(t timestamp with time zone)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
  RETURN coalesce('"' || to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"', 'null');
END $function$;

CREATE OR REPLACE FUNCTION public.ac_json_string(b bytea)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE STRICT
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION public.ac_lock_payer(c public.ac_charge)
 RETURNS public.ac_payer
 LANGUAGE plpgsql
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION public.ac_memory_history(c public.ac_charge, p_key text, p_limit integer, p_keep integer, p_retention_seconds bigint, p_answer public.ac_template, p_live public.ac_template, p_deleted public.ac_template)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION public.ac_memory_import(c public.ac_charge, p_keys text[], p_values bytea[], p_types text[], p_metadata text[], p_expires_at timestamp with time zone[], p_ttls integer[], p_search tsvector[], p_planned integer[], p_created timestamp with time zone[], p_updated timestamp with time zone[], p_kept_versions integer[], p_quota integer, p_keep integer, p_retention_seconds bigint, p_answer public.ac_template)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION public.ac_memory_json(m public.memories)
 RETURNS json
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
  RETURN json_build_object('key', m.key, 'value', encode(m.value, 'hex'), 'type', m.type, 'metadata', m.metadata,
    'created_at', m.created_at, 'updated_at', m.updated_at, 'version', m.version, 'expires_at', m.expires_at,
    'ttl_seconds', m.ttl_seconds);
END $function$;

CREATE OR REPLACE FUNCTION public.ac_memory_restore(c public.ac_charge, p_key text, p_version integer, p_expected integer, p_read_at timestamp with time zone, p_search tsvector, p_quota integer, p_keep integer, p_retention_seconds bigint, p_answer public.ac_template)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION public.ac_memory_retrieve(c public.ac_charge, p_key text, p_refresh boolean, p_answer public.ac_template)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION public.ac_memory_store(c public.ac_charge, p_keys text[], p_values bytea[], p_types text[], p_metadata text[], p_expires_at timestamp with time zone[], p_ttls integer[], p_search tsvector[], p_expected integer[], p_create_only boolean[], p_quota integer, p_keep integer, p_retention_seconds bigint, p_answer public.ac_template)
 RETURNS json
 LANGUAGE plpgsql
AS $function$
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
END $function$;

CREATE OR REPLACE FUNCTION public.ac_memory_values(p_prefix text, m public.memories)
 RETURNS public.ac_values
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
  RETURN ROW(
    ARRAY[p_prefix || '.key', p_prefix || '.value', p_prefix || '.type', p_prefix || '.metadata',
          p_prefix || '.created_at', p_prefix || '.updated_at', p_prefix || '.version', p_prefix || '.expires_at'],
    ARRAY[to_json(m.key)::text, ac_json_string(m.value), to_json(m.type)::text, m.metadata::text,
          ac_json_instant(m.created_at), ac_json_instant(m.updated_at), m.version::text,
          ac_json_instant(m.expires_at)])::ac_values;
END $function$;

CREATE OR REPLACE FUNCTION public.ac_version_json(h public.memory_history)
 RETURNS json
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
BEGIN
  RETURN json_build_object('version', h.version, 'at', h.at, 'deleted', h.deleted,
    'value', encode(h.value, 'hex'), 'type', h.type, 'metadata', h.metadata, 'ttl_seconds', h.ttl_seconds);
END $function$;

CREATE OR REPLACE FUNCTION public.ac_write_memory(c public.ac_charge, p_key text, p_value bytea, p_type text, p_metadata json, p_expires_at timestamp with time zone, p_ttl integer, p_search tsvector, p_live boolean, p_existing public.memories, p_quota integer, p_keep integer, p_retention_seconds bigint, p_kept_created timestamp with time zone, p_kept_updated timestamp with time zone, p_kept_version integer)
 RETURNS public.ac_written
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_held      bigint;
  v_version   integer;
  v_newest    integer;
  v_newest_at timestamptz;
  v_written   memories;
BEGIN
  IF NOT p_live AND p_quota < 2147483647 THEN
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
END $function$;


-- Triggers

-- (none)
