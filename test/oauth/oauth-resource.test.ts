/**
 * /mcp with OAuth on, on the run's store (AC_TEST_STORE): what it says to a request without a credential
 * (the challenge, the metadata it leads to), and that API keys go on as before: an SDK client of either era
 * sending X-API-Key or `Authorization: Bearer ac_…` is never challenged and its tools work.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PRICES } from '../../src/core/pricing.js';
import { httpTransport, type McpEra, newClient } from '../helpers/mcp-era.js';
import {
  freshStore,
  logProblems,
  type OAuthServer,
  rawToolCall,
  type StoreOf,
  startOAuthServer,
} from './oauth-harness.js';

let store: StoreOf;
let server: OAuthServer;
let key: string;

beforeAll(async () => {
  store = await freshStore();
  server = await startOAuthServer({ store });
  key = await server.register();
}, 60_000);
afterAll(async () => {
  await server?.stop();
  await store?.remove();
});

describe('discovery from /mcp', () => {
  it('answers a request without a credential 401, with a challenge naming the metadata and the scopes', async () => {
    const res = await fetch(server.mcpUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${server.issuer}/.well-known/oauth-protected-resource/mcp", scope="read write"`,
    );
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });

  it('answers an unknown bearer token 401 invalid_token, and never looks further', async () => {
    const refused = await rawToolCall(
      server,
      'not-a-token-this-server-issued-0123456789',
      'memory_retrieve',
      {
        memory_key: 'k',
      },
    );
    expect(refused.status).toBe(401);
    expect(refused.challenge).toMatch(
      /^Bearer resource_metadata="[^"]+", scope="read write", error="invalid_token", error_description="[^"]+"$/u,
    );
  });

  it('publishes the protected resource metadata (RFC 9728) and the authorization server metadata (RFC 8414)', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]) {
      const res = await server.request('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.body).toMatchObject({
        resource: `${server.issuer}/mcp`,
        authorization_servers: [server.issuer],
        scopes_supported: ['read', 'write'],
        bearer_methods_supported: ['header'],
      });
    }
    const as = await server.request('GET', '/.well-known/oauth-authorization-server');
    expect(as.status).toBe(200);
    expect(as.body).toMatchObject({
      issuer: server.issuer,
      authorization_endpoint: `${server.issuer}/oauth/authorize`,
      token_endpoint: `${server.issuer}/oauth/token`,
      registration_endpoint: `${server.issuer}/oauth/register`,
      revocation_endpoint: `${server.issuer}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
    // Refresh tokens need no scope (SEP-2207, the pure OAuth way): offline_access is not offered, so that
    // clients do not add prompt=consent to every authorization.
    expect(as.body.scopes_supported).not.toContain('offline_access');
    expect(as.body.scopes_supported).toEqual(expect.arrayContaining(['read', 'write']));
    // Tokens are Bearer only at /mcp: no DPoP, and no pushed authorization requests.
    expect(as.body).not.toHaveProperty('dpop_signing_alg_values_supported');
    expect(as.body).not.toHaveProperty('pushed_authorization_request_endpoint');
    const openid = await server.request('GET', '/.well-known/openid-configuration');
    expect(openid.body.issuer).toBe(server.issuer);
  });
});

describe('API keys on the same /mcp', () => {
  const cases: { era: McpEra; header: 'X-API-Key' | 'Authorization: Bearer' }[] = [
    { era: 'legacy', header: 'X-API-Key' },
    { era: 'legacy', header: 'Authorization: Bearer' },
    { era: 'modern', header: 'X-API-Key' },
    { era: 'modern', header: 'Authorization: Bearer' },
  ];

  it.each(cases)(
    'a $era client with $header is never challenged, and its tools work',
    async ({ era, header }) => {
      const seen: { status: number; challenge: string | null }[] = [];
      const watching: typeof fetch = async (input, init) => {
        const res = await fetch(input, init);
        seen.push({ status: res.status, challenge: res.headers.get('www-authenticate') });
        return res;
      };
      const headers: Record<string, string> =
        header === 'X-API-Key' ? { 'x-api-key': key } : { authorization: `Bearer ${key}` };
      const client = newClient({ era, name: `api-key-${era}` });
      await client.connect(httpTransport(server.mcpUrl, headers, { era, fetch: watching }));
      const before = (await server.request('GET', '/api/ac/account', { key })).body
        .credit_balance_cents as number;
      const memoryKey = `key-${era}-${header === 'X-API-Key' ? 'header' : 'bearer'}`;
      const stored = await client.callTool({
        name: 'memory_store',
        arguments: { memory_key: memoryKey, memory_value: 'with an API key' },
      });
      expect(stored.isError, JSON.stringify(stored)).not.toBe(true);
      const got = await client.callTool({ name: 'memory_retrieve', arguments: { memory_key: memoryKey } });
      expect(got.structuredContent).toMatchObject({ memory: { memory_value: 'with an API key' } });
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      await client.close();

      expect(seen.length).toBeGreaterThan(0);
      expect(seen.filter((r) => r.challenge !== null || r.status === 401 || r.status === 403)).toEqual([]);
      const after = (await server.request('GET', '/api/ac/account', { key })).body
        .credit_balance_cents as number;
      expect(after).toBe(before - 2 * PRICES.memoryOp);
      // Charged to the account's own key: no client in the ledger.
      const [last] = (await server.request('GET', '/api/ac/account/transactions', { key })).body.transactions;
      expect(last).toMatchObject({ operation: 'memory_retrieve' });
      expect(last).not.toHaveProperty('client');
    },
  );
});

it('logged no stack trace and answered no 5xx', () => {
  expect(server.log()).toMatch(store.logged);
  expect(logProblems(server.log())).toEqual([]);
});
