-- 0005_memory_search: ranked full-text search and metadata filters over memories (memory_search's query and
-- filter).
--
-- search: the memory's search terms (src/core/search-text.ts: words of letters and digits, lowercased,
-- English stop words dropped, Porter2 stems), computed by the store and read with the 'simple'
-- configuration, which keeps each as it is: the key's weighted A, the value's B, the metadata values' C.
-- The rows written before this migration get theirs from the store at start-up (search-backfill.ts), since
-- the terms are computed outside SQL; until then they are not found by a query.
-- metadata_index: the metadata as jsonb, for equality filters on top-level fields (@>), generated from the
-- metadata's JSON text with its \u0000 escapes as \ufffd (jsonb refuses \u0000); a filter's JSON text is
-- read the same way (memory-query-sql.ts), so equal values stay equal.
ALTER TABLE memories
  ADD COLUMN search tsvector,
  ADD COLUMN metadata_index jsonb GENERATED ALWAYS AS (replace(metadata::text, '\u0000', '\ufffd')::jsonb) STORED;

CREATE INDEX memories_search ON memories USING gin (search);
