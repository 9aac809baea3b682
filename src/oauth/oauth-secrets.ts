/**
 * The authorization server's own secrets: the keys that sign its cookies, and the key that would sign an ID
 * token (an `openid` request). Every instance must use the same ones, so they are made once, by whichever
 * instance starts first, and kept in the store beside the records they protect (`putIfAbsent`: two
 * instances starting together agree on one). They never leave the server.
 */
import { generateKeyPairSync, type JsonWebKey, randomBytes } from 'node:crypto';
import type { OAuthRecords } from '../store/oauth-records.js';

export interface OAuthSecrets {
  cookieKeys: string[];
  signingKeys: JsonWebKey[];
}

function freshSecrets(): OAuthSecrets {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  return {
    cookieKeys: [randomBytes(32).toString('base64url')],
    signingKeys: [{ ...jwk, alg: 'ES256', use: 'sig', kid: randomBytes(8).toString('base64url') }],
  };
}

export async function loadSecrets(records: OAuthRecords): Promise<OAuthSecrets> {
  const stored = await records.putIfAbsent({
    kind: 'Secret',
    id: 'authorization-server',
    payload: { ...freshSecrets() },
  });
  return stored.payload as unknown as OAuthSecrets;
}
