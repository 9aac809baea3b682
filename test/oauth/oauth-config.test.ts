/** When OAuth is on, and the settings Config refuses (src/config.ts, oauthConfig). */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

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
      loadConfig({ ...BASE, AC_PUBLIC_URL: 'https://memory.example.com', AC_OAUTH_CIMD_ALLOW_LOOPBACK: 'on' }),
    ).toThrow(/test setting/);
    expect(() =>
      loadConfig({ ...BASE, AC_PUBLIC_URL: 'https://a.example.com', PUBLIC_URL: 'https://b.example.com' }),
    ).toThrow(/differ/);
    expect(() => loadConfig({ ...BASE, AC_OAUTH_ACCESS_TOKEN_TTL: 'forever' })).toThrow(/not a duration/);
  });
});
