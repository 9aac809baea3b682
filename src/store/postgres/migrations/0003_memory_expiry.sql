-- Memories that expire: expires_at (NULL: never) and the time to live they were stored with, which
-- refresh_on_read extends them by. An expired memory is absent to every read; the sweeper deletes it.
ALTER TABLE memories ADD COLUMN expires_at timestamptz;
ALTER TABLE memories ADD COLUMN ttl_seconds integer CHECK (ttl_seconds >= 1);
-- The sweeper's scan: only memories that expire at all.
CREATE INDEX memories_expires_at ON memories (expires_at) WHERE expires_at IS NOT NULL;
