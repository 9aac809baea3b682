-- 0005_memory_search: ranked full-text search and metadata filters over memories (memory_search's query and
-- filter).
--
-- search: the memory's words for PostgreSQL's full-text search ('english': Snowball stems, stop words
-- dropped), the key weighted A, the value B and the metadata's strings, numbers and booleans C. The store
-- computes it on every write from text it sends without NUL (the value and metadata may hold U+0000, which
-- text refuses; search sees a space there).
-- metadata_index: the metadata as jsonb, for equality filters on top-level fields (@>); a string holding
-- U+0000 holds U+FFFD there instead (jsonb refuses \u0000), so a filter compares it so too.
ALTER TABLE memories ADD COLUMN search tsvector, ADD COLUMN metadata_index jsonb;

-- The rows written before this migration. A value holding NUL is searched up to its first NUL only (new
-- writes replace NUL with a space); a metadata's \u0000 escapes become \ufffd.
UPDATE memories SET metadata_index = replace(metadata::text, '\u0000', '\ufffd')::jsonb;
UPDATE memories SET search =
  setweight(to_tsvector('english', key), 'A') ||
  setweight(to_tsvector('english', convert_from(
    CASE WHEN position('\x00'::bytea IN value) = 0 THEN value
         ELSE substring(value FROM 1 FOR position('\x00'::bytea IN value) - 1) END, 'UTF8')), 'B') ||
  setweight(to_tsvector('english', coalesce((
    SELECT string_agg(v #>> '{}', ' ')
    FROM jsonb_path_query(metadata_index,
      'strict $.** ? (@.type() == "string" || @.type() == "number" || @.type() == "boolean")') AS v), '')), 'C');

ALTER TABLE memories ALTER COLUMN search SET NOT NULL, ALTER COLUMN metadata_index SET NOT NULL;
CREATE INDEX memories_search ON memories USING gin (search);
