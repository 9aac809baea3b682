-- 0005_memory_search: ranked full-text search and metadata filters over memories (memory_search's query and
-- filter).
--
-- search: the memory's search terms (src/core/search-text.ts: words of letters and digits, lowercased,
-- English stop words dropped, Porter2 stems), computed by the store and read with the 'simple'
-- configuration, which keeps each as it is: the key's weighted A, the value's B, the metadata values' C.
-- The rows written before this migration get theirs from the store at start-up (search-backfill.ts), since
-- the terms are computed outside SQL; until then they are not found by a query.
-- metadata_index: the metadata as jsonb, for equality filters on top-level fields (@>); U+0000 in its
-- strings and keys is U+FFFD there (jsonb refuses \u0000), and a filter compares it so too.
ALTER TABLE memories ADD COLUMN search tsvector, ADD COLUMN metadata_index jsonb;

-- The rows written before this migration: the \u0000 escapes of their metadata's JSON text become \ufffd.
UPDATE memories SET metadata_index = replace(metadata::text, '\u0000', '\ufffd')::jsonb;
ALTER TABLE memories ALTER COLUMN metadata_index SET NOT NULL;

CREATE INDEX memories_search ON memories USING gin (search);
