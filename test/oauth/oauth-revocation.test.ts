/**
 * What ends an OAuth grant, and what is asked again: two authorizations of one client allowed at once are both
 * revoked from the console; rotating the API key revokes every grant of the account; an answer that goes to
 * this computer asks the person each time, whatever the client says it is; and the store keeps no credential
 * a browser or client could present, during a sign-in either.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authorizeUrl,
  authorizeWithKey,
  browse,
  CookieJar,
  callbackOf,
  interactionOf,
  pageOf,
  pkce,
  registerClient,
  tokenRequest,
} from '../helpers/oauth-http.js';
import {
  freshStore,
  type OAuthServer,
  rawToolCall,
  type StoreOf,
  startOAuthServer,
} from './oauth-harness.js';

const CALLBACK = 'http://127.0.0.1:53998/callback';

/** Everything the store holds for the authorization server, as text: oauth.json, or the table's rows. */
async function storedText(store: StoreOf): Promise<string> {
  if (store.env.DATA_DIR) return readFile(path.join(store.env.DATA_DIR, 'oauth.json'), 'utf8');
  const client = new pg.Client({ connectionString: store.env.DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query(
      'SELECT kind, id, payload::text AS payload, uid, grant_id FROM oauth_records',
    );
    expect(rows.length).toBeGreaterThan(0);
    return JSON.stringify(rows);
  } finally {
    await client.end();
  }
}
const WEB_CALLBACK = 'https://app.example.com/callback';

describe('revocation and repeated consent', () => {
  let store: StoreOf;
  let server: OAuthServer;

  beforeAll(async () => {
    store = await freshStore();
    server = await startOAuthServer({ store });
  });
  afterAll(async () => {
    await server?.stop();
    await store?.remove();
  });

  async function tokensFor(clientId: string, callback: URL, verifier: string, redirectUri = CALLBACK) {
    const res = await tokenRequest(server.issuer, {
      grant_type: 'authorization_code',
      code: callback.searchParams.get('code') as string,
      code_verifier: verifier,
      redirect_uri: redirectUri,
      client_id: clientId,
      resource: `${server.issuer}/mcp`,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { access: String(res.body.access_token), refresh: String(res.body.refresh_token) };
  }

  it('two authorizations allowed at once: revoking the client in the console ends both', async () => {
    const key = await server.register();
    const clientId = await registerClient(server.issuer, [CALLBACK], 'Twice');
    const request = { issuer: server.issuer, clientId, redirectUri: CALLBACK };
    // Both reach the consent page before either is allowed (two tabs).
    const flows = await Promise.all(
      [new CookieJar(), new CookieJar()].map(async (jar) => {
        const codes = pkce();
        const signIn = pageOf(await browse(jar, authorizeUrl(request, codes.challenge), CALLBACK));
        const consent = pageOf(
          await browse(jar, `${server.issuer}/oauth/interaction/${interactionOf(signIn)}/sign-in`, CALLBACK, {
            api_key: key,
          }),
        );
        return { jar, consent, verifier: codes.verifier };
      }),
    );
    const tokens = [];
    for (const flow of flows) {
      const callback = callbackOf(
        await browse(
          flow.jar,
          `${server.issuer}/oauth/interaction/${interactionOf(flow.consent)}/consent`,
          CALLBACK,
          {
            decision: 'allow',
          },
        ),
      );
      tokens.push(await tokensFor(clientId, callback, flow.verifier));
    }
    for (const { access } of tokens)
      expect((await rawToolCall(server, access, 'account_info', {})).status).toBe(200);
    const revoked = await server.request('DELETE', '/api/ac/oauth/clients', {
      key,
      query: { client_id: clientId },
    });
    expect(revoked.status, revoked.text).toBe(200);
    for (const { access, refresh } of tokens) {
      expect((await rawToolCall(server, access, 'account_info', {})).status).toBe(401);
      const refreshed = await tokenRequest(server.issuer, {
        grant_type: 'refresh_token',
        refresh_token: refresh,
        client_id: clientId,
      });
      expect(refreshed.status).toBe(400);
      expect(refreshed.body.error).toBe('invalid_grant');
    }
  });

  it('rotating the API key revokes every grant of the account first; other accounts keep theirs', async () => {
    const key = await server.register();
    const other = await server.register();
    const clientId = await registerClient(server.issuer, [CALLBACK], 'Rotated');
    const mine = await authorizeWithKey({ issuer: server.issuer, clientId, redirectUri: CALLBACK }, key);
    const theirs = await authorizeWithKey({ issuer: server.issuer, clientId, redirectUri: CALLBACK }, other);
    const myTokens = await tokensFor(clientId, mine.callback, mine.verifier);
    const theirTokens = await tokensFor(clientId, theirs.callback, theirs.verifier);
    const rotated = await server.request('POST', '/api/ac/account/rotate-key', { key, body: {} });
    expect(rotated.status, rotated.text).toBe(200);
    expect((await rawToolCall(server, myTokens.access, 'account_info', {})).status).toBe(401);
    expect((await rawToolCall(server, theirTokens.access, 'account_info', {})).status).toBe(200);
    const list = await server.request('GET', '/api/ac/oauth/clients', { key: rotated.body.agent_key });
    expect(list.body.clients).toEqual([]);
  });

  it('an answer to this computer asks again each time, for a client registered as web too; a web redirect does not', async () => {
    const key = await server.register();
    const web = await server.request('POST', '/oauth/register', {
      body: {
        redirect_uris: [CALLBACK, WEB_CALLBACK],
        token_endpoint_auth_method: 'none',
        client_name: 'Webby',
      },
    });
    expect(web.status, web.text).toBe(201);
    const clientId = web.body.client_id as string;
    await authorizeWithKey({ issuer: server.issuer, clientId, redirectUri: CALLBACK }, key);
    // A fresh browser: sign in again, and the consent page comes back for the loopback redirect.
    const jar = new CookieJar();
    const signIn = pageOf(
      await browse(
        jar,
        authorizeUrl({ issuer: server.issuer, clientId, redirectUri: CALLBACK }, pkce().challenge),
        CALLBACK,
      ),
    );
    const again = pageOf(
      await browse(jar, `${server.issuer}/oauth/interaction/${interactionOf(signIn)}/sign-in`, CALLBACK, {
        api_key: key,
      }),
    );
    expect(again.text).toContain('name="decision"');
    expect(again.text).toContain('localhost');
    // The same client to its web redirect, allowed once: remembered.
    await authorizeWithKey({ issuer: server.issuer, clientId, redirectUri: WEB_CALLBACK }, key);
    const jar2 = new CookieJar();
    const signIn2 = pageOf(
      await browse(
        jar2,
        authorizeUrl({ issuer: server.issuer, clientId, redirectUri: WEB_CALLBACK }, pkce().challenge),
        WEB_CALLBACK,
      ),
    );
    const remembered = await browse(
      jar2,
      `${server.issuer}/oauth/interaction/${interactionOf(signIn2)}/sign-in`,
      WEB_CALLBACK,
      { api_key: key },
    );
    expect(callbackOf(remembered).searchParams.get('code')).toBeTruthy();
  });

  it('the store holds no interaction id, session cookie, code or token in clear, in the middle of a sign-in', async () => {
    const key = await server.register();
    const clientId = await registerClient(server.issuer, [CALLBACK], 'Peeked');
    const jar = new CookieJar();
    const signIn = pageOf(
      await browse(
        jar,
        authorizeUrl({ issuer: server.issuer, clientId, redirectUri: CALLBACK }, pkce().challenge),
        CALLBACK,
      ),
    );
    const uid = interactionOf(signIn);
    const consent = pageOf(
      await browse(jar, `${server.issuer}/oauth/interaction/${uid}/sign-in`, CALLBACK, { api_key: key }),
    );
    const cookies = jar
      .header()
      .split('; ')
      .map((pair) => pair.slice(pair.indexOf('=') + 1))
      .filter((value) => value.length >= 16);
    const during = await storedText(store);
    for (const secret of [uid, ...cookies]) expect(during.includes(secret), secret).toBe(false);
    const callback = callbackOf(
      await browse(jar, `${server.issuer}/oauth/interaction/${interactionOf(consent)}/consent`, CALLBACK, {
        decision: 'allow',
      }),
    );
    const code = callback.searchParams.get('code') as string;
    const after = await storedText(store);
    expect(after.includes(code)).toBe(false);
    expect(after.includes(key)).toBe(false);
  });
});
