/** When OAuth is on, and the settings Config refuses (src/config.ts, oauthConfig). */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startTestServer } from '../helpers/test-server.js';

const BASE = { DATA_DIR: '/tmp/ac-oauth-config' };

describe('OAuth configuration', () => {
  it('is on for an https public URL (AC_PUBLIC_URL or PUBLIC_URL), with the documented defaults', () => {
    for (const name of ['AC_PUBLIC_URL', 'PUBLIC_URL']) {
      const config = loadConfig({ ...BASE, [name]: 'https://memory.example.com/' });
      expect(config.oauth).toEqual({
        issuer: 'https://memory.example.com',
        accessTokenTtlSeconds: 3600,
        refreshTokenTtlSeconds: 30 * 24 * 3600,
        cimdAllowLoopback: false,
      });
      expect(config.publicUrl).toBe('https://memory.example.com');
    }
  });

  it('is on for a loopback public URL (a machine’s own clients, tests), and takes the token lifetimes', () => {
    const config = loadConfig({
      ...BASE,
      AC_PUBLIC_URL: 'http://127.0.0.1:8787',
      AC_OAUTH_ACCESS_TOKEN_TTL: '10m',
      AC_OAUTH_REFRESH_TOKEN_TTL: '7d',
      AC_OAUTH_CIMD_ALLOW_LOOPBACK: 'on',
    });
    expect(config.oauth).toMatchObject({
      issuer: 'http://127.0.0.1:8787',
      accessTokenTtlSeconds: 600,
      refreshTokenTtlSeconds: 7 * 24 * 3600,
      cimdAllowLoopback: true,
    });
  });

  it('is off without a public URL, or with a plain-http public one, and says why; AC_OAUTH=off turns it off', () => {
    const none = loadConfig(BASE);
    expect(none.oauth).toBeUndefined();
    expect(none.oauthOffReason).toMatch(/AC_PUBLIC_URL is not set/);
    const plain = loadConfig({ ...BASE, AC_PUBLIC_URL: 'http://memory.example.com' });
    expect(plain.oauth).toBeUndefined();
    expect(plain.oauthOffReason).toMatch(/not https/);
    const off = loadConfig({ ...BASE, AC_PUBLIC_URL: 'https://memory.example.com', AC_OAUTH: 'off' });
    expect(off.oauth).toBeUndefined();
    expect(off.oauthOffReason).toBeUndefined();
  });

  it('refuses AC_OAUTH=on where OAuth cannot be, the loopback test setting with a public issuer, and two public URLs', () => {
    expect(() => loadConfig({ ...BASE, AC_OAUTH: 'on' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...BASE, AC_OAUTH: 'on', AC_PUBLIC_URL: 'http://memory.example.com' })).toThrow(
      /AC_OAUTH=on, but AC_PUBLIC_URL .* is not https/,
    );
    expect(() =>
      loadConfig({
        ...BASE,
        AC_PUBLIC_URL: 'https://memory.example.com',
        AC_OAUTH_CIMD_ALLOW_LOOPBACK: 'on',
      }),
    ).toThrow(/test setting/);
    expect(() =>
      loadConfig({ ...BASE, AC_PUBLIC_URL: 'https://a.example.com', PUBLIC_URL: 'https://b.example.com' }),
    ).toThrow(/differ/);
    expect(() => loadConfig({ ...BASE, AC_OAUTH_ACCESS_TOKEN_TTL: 'forever' })).toThrow(/not a duration/);
  });
});

describe('AC_OAUTH on a running server', () => {
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  };
  const mcpHeaders = { accept: 'application/json, text/event-stream' };

  it('off: no metadata, no /oauth, and /mcp answers without a credential as before', async () => {
    const server = await startTestServer({
      env: { AC_PUBLIC_URL: 'https://memory.example.com', AC_OAUTH: 'off' },
    });
    try {
      expect((await server.request('GET', '/.well-known/oauth-protected-resource/mcp')).status).toBe(404);
      expect((await server.request('GET', '/.well-known/oauth-authorization-server')).status).toBe(404);
      expect((await server.request('GET', '/oauth/authorize')).status).toBe(404);
      expect(
        (await server.request('GET', '/api/ac/oauth/clients', { key: await server.register() })).status,
      ).toBe(404);
      const res = await server.request('POST', '/mcp', { body: initialize, headers: mcpHeaders });
      expect(res.status).toBe(200);
      expect(res.headers.get('www-authenticate')).toBeNull();
    } finally {
      await server.close();
    }
  });

  it('on (an https public URL): the metadata names it, /mcp challenges a request without a credential, a key is never challenged', async () => {
    const server = await startTestServer({ env: { AC_PUBLIC_URL: 'https://memory.example.com' } });
    try {
      const prm = await server.request('GET', '/.well-known/oauth-protected-resource/mcp');
      expect(prm.status).toBe(200);
      expect(prm.body).toMatchObject({
        resource: 'https://memory.example.com/mcp',
        authorization_servers: ['https://memory.example.com'],
        scopes_supported: ['read', 'write'],
      });
      const as = await server.request('GET', '/.well-known/oauth-authorization-server');
      expect(as.body).toMatchObject({
        issuer: 'https://memory.example.com',
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        client_id_metadata_document_supported: true,
        authorization_response_iss_parameter_supported: true,
        registration_endpoint: 'https://memory.example.com/oauth/register',
      });
      const anonymous = await server.request('POST', '/mcp', { body: initialize, headers: mcpHeaders });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe(
        'Bearer resource_metadata="https://memory.example.com/.well-known/oauth-protected-resource/mcp", scope="read write"',
      );
      const key = await server.register();
      for (const credential of [{ key }, { bearer: key }]) {
        const res = await server.request('POST', '/mcp', {
          body: initialize,
          headers: mcpHeaders,
          ...credential,
        });
        expect(res.status).toBe(200);
        expect(res.headers.get('www-authenticate')).toBeNull();
      }
    } finally {
      await server.close();
    }
  });
});

describe('OAuth configuration that cannot hold', () => {
  it('a public URL with a path leaves OAuth off (its endpoints are at the root), AC_OAUTH=on refuses it', () => {
    const config = loadConfig({ ...BASE, AC_PUBLIC_URL: 'https://example.com/memory' });
    expect(config.oauth).toBeUndefined();
    expect(config.oauthOffReason).toMatch(/has a path/);
    expect(() =>
      loadConfig({ ...BASE, AC_PUBLIC_URL: 'https://example.com/memory', AC_OAUTH: 'on' }),
    ).toThrow(ConfigError);
  });

  it('the loopback metadata-document setting needs the server itself on loopback', () => {
    expect(() =>
      loadConfig({
        ...BASE,
        HOST: '0.0.0.0',
        AC_PUBLIC_URL: 'http://127.0.0.1:8787',
        AC_OAUTH_CIMD_ALLOW_LOOPBACK: 'on',
      }),
    ).toThrow(/listens on loopback/);
  });
});
