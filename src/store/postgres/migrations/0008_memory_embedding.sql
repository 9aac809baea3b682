-- 0008_memory_embedding: semantic search's vectors kept with their memories (issue 31), so that every instance
-- finds a memory by meaning as soon as one instance has embedded it.
--
-- embedding: the unit vector of the memory's key and value, float32 little-endian; embedding_model: the model
-- that made it (src/core/embedding-port.ts: a vector of another model is never compared); embedding_version:
-- the memory version it was made from (a rewrite leaves the old vector, which no search uses for the new
-- version, until the new one is saved); embedding_seq: taken from memories_embedding_seq each time a vector
-- is saved, so that an instance reads the vectors saved since it last looked (memories_embedded).
-- The vectors are made by the service after a write commits (semantic-index.ts), never in a write's path;
-- rows without one are embedded when an instance's first ranked search of their agent catches up.
CREATE SEQUENCE memories_embedding_seq AS bigint;

ALTER TABLE memories
  ADD COLUMN embedding bytea,
  ADD COLUMN embedding_model text,
  ADD COLUMN embedding_version integer,
  ADD COLUMN embedding_seq bigint;

ALTER SEQUENCE memories_embedding_seq OWNED BY memories.embedding_seq;

CREATE INDEX memories_embedded ON memories (agent_id, embedding_seq) WHERE embedding_seq IS NOT NULL;
