-- Issue 32, after review: two of migration 0009's functions replaced (an applied migration never changes).
--
-- ac_write_memory: a write that creates a memory counted the agent's live memories for the quota at every
-- creation, also inside an import, which checks its quota once for all its lines and passes the largest
-- integer as the quota: an import of n new memories counted n times, its cost growing with n squared. The
-- count is now skipped for that quota.
--
-- ac_fill: a template filled with a missing value (NULL) made the whole answer NULL, and the claim would have
-- been finished with no answer, so a replay would answer nothing. It now raises: the statement rolls back
-- whole and the request fails with nothing charged.

CREATE OR REPLACE FUNCTION ac_write_memory(
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
END $$;

CREATE OR REPLACE FUNCTION ac_fill(t ac_template, v ac_values) RETURNS text
LANGUAGE plpgsql IMMUTABLE AS $$
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
END $$;
