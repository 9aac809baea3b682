/**
 * What an account has allowed: one consent per (account, client), naming the grant that holds its scopes,
 * with who the client said it was and when it was last used. The consent page asks only when there is none
 * (or the client asks for more); the console lists them and revokes one, which deletes the grant and with
 * it every code and token issued under it (in the store every instance reads, so at once everywhere).
 */
import type { OAuthRecords } from '../store/oauth-records.js';

export interface Consent {
  accountId: string;
  clientId: string;
  grantId: string;
  clientName: string;
  /** The host of the client's redirect URIs (or of its metadata document). */
  clientHost: string;
  scopes: string[];
  /** Epoch ms. */
  allowedAt: number;
  lastUsedAt: number | null;
}

const KIND = 'Consent';
/** oidc-provider's grants, stored under their own ids (oauth-adapter.ts). */
const GRANT_KIND = 'Grant';
/**
 * Last uses are records of their own: a use written while the consent is being revoked leaves an orphan
 * (ignored, and gone when it expires) rather than bringing the consent back.
 */
const USE_KIND = 'ConsentUse';
const USE_KEPT_MS = 400 * 24 * 3600 * 1000;
/** A token's use is written at most this often per consent and process. */
const TOUCH_EVERY_MS = 60_000;

function idOf(accountId: string, clientId: string): string {
  return `${accountId} ${clientId}`;
}

export function createConsents(records: OAuthRecords, now: () => number = Date.now) {
  const touched = new Map<string, number>();

  async function get(accountId: string, clientId: string): Promise<Consent | undefined> {
    const record = await records.get(KIND, idOf(accountId, clientId));
    return record?.payload as unknown as Consent | undefined;
  }

  async function put(consent: Consent): Promise<void> {
    await records.put({
      kind: KIND,
      id: idOf(consent.accountId, consent.clientId),
      payload: { ...consent },
      accountId: consent.accountId,
    });
  }

  async function list(accountId: string): Promise<Consent[]> {
    const [found, uses] = await Promise.all([
      records.listByAccount(KIND, accountId),
      records.listByAccount(USE_KIND, accountId),
    ]);
    const lastUse = new Map(uses.map((use) => [use.id, Number(use.payload.at)]));
    // A consent whose grant is gone (expired, or revoked when a refresh token was used twice) allows nothing.
    const granted = await Promise.all(
      found.map(
        async (record) => (await records.get(GRANT_KIND, String(record.payload.grantId))) !== undefined,
      ),
    );
    return found
      .filter((_record, i) => granted[i])
      .map((record) => ({
        ...(record.payload as unknown as Consent),
        lastUsedAt: lastUse.get(record.id) ?? null,
      }))
      .sort((a, b) => b.allowedAt - a.allowedAt || a.clientId.localeCompare(b.clientId));
  }

  /**
   * Deletes the consent and every grant this account gave this client (with their codes and tokens), not only
   * the one the consent names: two authorizations allowed at once each made a grant. False when there was no
   * consent.
   */
  async function revoke(accountId: string, clientId: string): Promise<boolean> {
    const consent = await get(accountId, clientId);
    if (!consent) return false;
    const grants = (await records.listByAccount(GRANT_KIND, accountId)).filter(
      (grant) => grant.payload.clientId === clientId,
    );
    for (const grantId of new Set([consent.grantId, ...grants.map((grant) => grant.id)]))
      await records.deleteByGrant(grantId);
    await records.delete(KIND, idOf(accountId, clientId));
    await records.delete(USE_KIND, idOf(accountId, clientId));
    return true;
  }

  /** Revokes everything this account allowed, every client (its key was rotated). */
  async function revokeAll(accountId: string): Promise<void> {
    for (const grant of await records.listByAccount(GRANT_KIND, accountId))
      await records.deleteByGrant(grant.id);
    for (const kind of [KIND, USE_KIND])
      for (const record of await records.listByAccount(kind, accountId))
        await records.delete(kind, record.id);
  }

  /** Records a use of a token of this consent (throttled: the console shows minutes, not requests). */
  async function touch(accountId: string, clientId: string): Promise<void> {
    const id = idOf(accountId, clientId);
    const at = now();
    if (at - (touched.get(id) ?? 0) < TOUCH_EVERY_MS) return;
    touched.set(id, at);
    if (touched.size > 10_000) touched.clear();
    await records.put({ kind: USE_KIND, id, payload: { at }, accountId, expiresAt: at + USE_KEPT_MS });
  }

  return { get, put, list, revoke, revokeAll, touch };
}

export type Consents = ReturnType<typeof createConsents>;
