/**
 * oidc-provider's storage adapter over the store's OAuth records (src/store/oauth-records.ts), so that codes,
 * tokens, grants, sessions and registered clients live where the accounts do: in DATA_DIR on the JSON store,
 * in one table every instance shares on PostgreSQL (a revocation on one instance is seen by the next request
 * on any other). Ids that are credentials (tokens, codes, session and interaction ids) are stored only as
 * their SHA-256, and the copies of the id that oidc-provider keeps in a payload (`jti`; an interaction's `uid`
 * and the resume URL in its `returnTo`) are taken out before it is stored and put back when the record is read,
 * as is the browser session's id an interaction notes (which oidc-provider never reads back): a copy of the
 * store holds nothing a client or a browser could present.
 */
import { createHash } from 'node:crypto';
import { type Adapter, type AdapterPayload, errors } from 'oidc-provider';
import type { OAuthRecord, OAuthRecords } from '../store/oauth-records.js';

/**
 * The models whose records are spent once (a code, a refresh token under rotation): of two exchanges that
 * raced past oidc-provider's own "already used" check, the one whose consume loses is a reuse.
 */
const SPENT_ONCE = new Set(['AuthorizationCode', 'RefreshToken']);

/**
 * How long a registered client is kept after its registration or its last use (a token asked for, an
 * authorization begun): registrations nobody uses do not pile up. One gone is told `invalid_client`, which
 * makes a connector register again.
 */
const CLIENT_KEPT_MS = 90 * 24 * 3600 * 1000;
const DAY_MS = 24 * 3600 * 1000;

/** The largest payload stored (a registered client's metadata is the largest thing there is). */
const PAYLOAD_MAX_BYTES = 64 * 1024;

export function hashId(id: string): string {
  return createHash('sha256').update(id).digest('base64url');
}

/** Where a payload held its own id, so that it is put back there when the record is read. */
interface IdPlaces {
  uid?: true;
  returnTo?: true;
}

/** What a stored payload may keep of a record whose id is a credential: everything but copies of the id. */
function storedPayload(id: string, payload: AdapterPayload): Record<string, unknown> {
  const { jti: _jti, ...rest } = payload as Record<string, unknown>;
  const places: IdPlaces = {};
  if (rest.uid === id) {
    delete rest.uid;
    places.uid = true;
  }
  if (typeof rest.returnTo === 'string' && rest.returnTo.includes(id)) {
    rest.returnTo = rest.returnTo.split(id).join(':id');
    places.returnTo = true;
  }
  const session = rest.session as Record<string, unknown> | undefined;
  if (session && typeof session === 'object' && 'cookie' in session) {
    const { cookie: _cookie, ...kept } = session;
    rest.session = kept;
  }
  return places.uid || places.returnTo ? { ...rest, idPlaces: places } : rest;
}

/** The stored payload with its id put back where it was. */
function revivedPayload(id: string, stored: Record<string, unknown>): Record<string, unknown> {
  const { idPlaces, ...payload } = stored as Record<string, unknown> & { idPlaces?: IdPlaces };
  if (idPlaces?.uid) payload.uid = id;
  if (idPlaces?.returnTo && typeof payload.returnTo === 'string')
    payload.returnTo = payload.returnTo.split(':id').join(id);
  return payload;
}

/** One oidc-provider model's records: `kind` is the model's name. */
export function oauthAdapterFor(records: OAuthRecords, now: () => number) {
  return class OAuthAdapter implements Adapter {
    constructor(private readonly kind: string) {}

    private revive(record: OAuthRecord | undefined, id?: string): AdapterPayload | undefined {
      if (record === undefined) return undefined;
      const payload = (
        id !== undefined && this.secret ? revivedPayload(id, record.payload) : { ...record.payload }
      ) as AdapterPayload;
      // A model's id is its jti (a grant's too: without it, a grant read back is saved again under a new id,
      // and the session and the codes name none); a client's metadata has no jti.
      if (id !== undefined && this.kind !== 'Client') payload.jti = id;
      if (record.consumedAt !== undefined) payload.consumed = Math.floor(record.consumedAt / 1000);
      return payload;
    }

    /** Clients and grants are named by ids that are not secrets; everything else by a hash. */
    private get secret(): boolean {
      return this.kind !== 'Client' && this.kind !== 'Grant';
    }

    private key(id: string): string {
      return this.secret ? hashId(id) : id;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const { jti: _jti, ...plain } = payload;
      const stored = this.secret ? storedPayload(id, payload) : plain;
      if (Buffer.byteLength(JSON.stringify(stored)) > PAYLOAD_MAX_BYTES)
        throw new Error(`An OAuth ${this.kind} over ${PAYLOAD_MAX_BYTES} bytes was not stored.`);
      await records.put({
        kind: this.kind,
        id: this.key(id),
        payload: stored,
        ...(expiresIn
          ? { expiresAt: now() + expiresIn * 1000 }
          : this.kind === 'Client'
            ? { expiresAt: now() + CLIENT_KEPT_MS }
            : {}),
        // A grant is indexed by its own id, so that revoking a grant removes it with its codes and tokens.
        ...(this.kind === 'Grant' ? { grantId: id } : {}),
        ...(typeof payload.grantId === 'string' ? { grantId: payload.grantId } : {}),
        ...(typeof payload.uid === 'string' ? { uid: hashId(payload.uid) } : {}),
        ...(typeof payload.userCode === 'string' ? { userCode: hashId(payload.userCode) } : {}),
        ...(typeof payload.accountId === 'string' ? { accountId: payload.accountId } : {}),
      });
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const record = await records.get(this.kind, this.key(id));
      // A registered client in use is kept: its lifetime starts again, at most once a day.
      if (record && this.kind === 'Client' && (record.expiresAt ?? 0) < now() + CLIENT_KEPT_MS - DAY_MS)
        await records.put({ ...record, expiresAt: now() + CLIENT_KEPT_MS });
      return this.revive(record, id);
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      // Without its id: oidc-provider only compares what a session found by its uid says (its account).
      return this.revive(await records.findByUid(this.kind, hashId(uid)));
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.revive(await records.findByUserCode(this.kind, hashId(userCode)));
    }

    async consume(id: string): Promise<void> {
      const consumed = await records.consume(this.kind, this.key(id));
      if (!consumed && SPENT_ONCE.has(this.kind)) {
        // Two exchanges of one code or refresh token raced, and the other won: this one is a reuse, which
        // revokes the grant (as oidc-provider does for a reuse it sees) and is answered invalid_grant.
        const record = await records.get(this.kind, this.key(id));
        if (typeof record?.grantId === 'string') await records.deleteByGrant(record.grantId);
        throw new errors.InvalidGrant(
          `${this.kind === 'RefreshToken' ? 'refresh token' : 'authorization code'} already used`,
        );
      }
    }

    async destroy(id: string): Promise<void> {
      await records.delete(this.kind, this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await records.deleteByGrant(grantId);
    }
  };
}
