/**
 * The authorization server's rate limits, on a server with the limits on: the console's Connected apps routes
 * count in the API's limits (a wrong key is limited per address), and a limited sign-in is a page that says
 * so, with Retry-After, not the API's JSON.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAUTH_LIMITS } from '../../src/http/rate-limits.js';
import {
  authorizeUrl,
  browse,
  CookieJar,
  interactionOf,
  pageOf,
  pkce,
  registerClient,
} from '../helpers/oauth-http.js';
import { freshStore, type OAuthServer, type StoreOf, startOAuthServer } from './oauth-harness.js';

const CALLBACK = 'http://127.0.0.1:53997/callback';

describe('OAuth rate limits', () => {
  let store: StoreOf;
  let server: OAuthServer;

  beforeAll(async () => {
    store = await freshStore();
    server = await startOAuthServer({
      store,
      env: { AC_RATE_LIMIT: 'on', AC_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '3' },
    });
  });
  afterAll(async () => {
    await server?.stop();
    await store?.remove();
  });

  it('the Connected apps routes are limited per address for a wrong key, like the rest of the API', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await server.request('GET', '/api/ac/oauth/clients', { key: 'ac_wrong' })).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
  });

  it('a sign-in attempt over the limit is a page with Retry-After', async () => {
    const clientId = await registerClient(server.issuer, [CALLBACK], 'Limited');
    const jar = new CookieJar();
    const signIn = pageOf(
      await browse(
        jar,
        authorizeUrl({ issuer: server.issuer, clientId, redirectUri: CALLBACK }, pkce().challenge),
        CALLBACK,
      ),
    );
    const url = `${server.issuer}/oauth/interaction/${interactionOf(signIn)}/sign-in`;
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i <= OAUTH_LIMITS.signInPerMinutePerAddress; i++) {
      last = await fetch(url, {
        method: 'POST',
        headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        body: 'api_key=ac_not-a-key',
      });
      statuses.push(last.status);
      if (i < OAUTH_LIMITS.signInPerMinutePerAddress) await last.arrayBuffer();
    }
    expect(statuses.slice(0, -1).every((status) => status === 401)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    expect(last?.headers.get('content-type')).toMatch(/^text\/html/);
    expect(last?.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await last?.text()).toContain('Too many attempts');
  });
});
