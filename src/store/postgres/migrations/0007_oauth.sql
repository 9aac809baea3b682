-- The OAuth 2.1 authorization server's records (src/store/oauth-records.ts), shared by every instance: tokens,
-- authorization codes, sessions, interactions, grants, registered clients, consents and the signing keys,
-- each a JSON object under (kind, id), with the columns oidc-provider looks records up by. A record whose
-- expires_at has passed is absent to every read; the background sweeper deletes it.
-- - payload is json, not jsonb: nothing queries inside it, and json keeps any text as sent (jsonb refuses
--   \u0000, which a client's request parameters may hold).
-- - consumed_at is set once, by one UPDATE ... WHERE consumed_at IS NULL: of concurrent consumers, one wins.
-- - put_seq orders an account's records, the newest put first; a put that replaces a record takes a new one.
CREATE SEQUENCE oauth_records_put_seq AS bigint;

CREATE TABLE oauth_records (
  kind        text        COLLATE "C" NOT NULL CHECK (length(kind) BETWEEN 1 AND 64),
  id          text        COLLATE "C" NOT NULL,
  payload     json        NOT NULL,
  expires_at  timestamptz,
  grant_id    text        COLLATE "C",
  uid         text        COLLATE "C",
  user_code   text        COLLATE "C",
  account_id  text        COLLATE "C",
  consumed_at timestamptz,
  put_seq     bigint      NOT NULL DEFAULT nextval('oauth_records_put_seq'),
  PRIMARY KEY (kind, id)
);
-- Revoking a grant deletes its tokens and codes of every kind.
CREATE INDEX oauth_records_grant ON oauth_records (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oauth_records_uid ON oauth_records (kind, uid) WHERE uid IS NOT NULL;
CREATE INDEX oauth_records_user_code ON oauth_records (kind, user_code) WHERE user_code IS NOT NULL;
CREATE INDEX oauth_records_account ON oauth_records (kind, account_id) WHERE account_id IS NOT NULL;
-- The sweeper's scan: only records that expire at all.
CREATE INDEX oauth_records_expires_at ON oauth_records (expires_at) WHERE expires_at IS NOT NULL;

-- The OAuth client that spent a ledger entry, when the request carried an access token rather than the
-- account's own key (NULL: the key, or an entry written before OAuth).
ALTER TABLE ledger ADD COLUMN client text;
