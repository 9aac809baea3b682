-- Every memory carries a version: 1 when created, one more with each change (conditional writes compare it).
-- Memories stored before this migration are version 1.
ALTER TABLE memories ADD COLUMN version integer NOT NULL DEFAULT 1 CHECK (version >= 1);
