import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from '../../src/core/errors.js';
import { buildUrl, createHttpClient, parseRetryAfter, type Upstream } from '../../src/live/http-client.js';
import { cleanText, decodeEntities, httpUrl } from '../../src/live/text.js';
import { closedPortUrl } from '../fakes/fake-upstream.js';
import { useFakeUpstream } from '../fakes/use-fake-upstream.js';
import { appErrorOf } from './helpers.js';

const THING: Upstream = { id: 'thing', name: 'Thing', kind: 'test' };
const schema = z.object({ ok: z.boolean() });

describe('http client', () => {
  const fake = useFakeUpstream();
  const http = createHttpClient({ userAgent: 'ua-test/1', timeoutMs: 200 });

  it('sends User-Agent and Accept, plus extra headers, and returns the validated body', async () => {
    fake.route('/x', { json: { ok: true, extra: 1 } });
    const body = await http.getJson(THING, new URL(`${fake.url}/x`), schema, { headers: { 'x-key': 'k' } });
    expect(body).toEqual({ ok: true });
    expect(fake.requests[0]?.headers).toMatchObject({
      'user-agent': 'ua-test/1',
      accept: 'application/json',
      'x-key': 'k',
    });
  });

  it('parses JSON by body whatever the content type', async () => {
    fake.route('/x', { text: '{"ok":false}', contentType: 'application/x-javascript' });
    expect(await http.getJson(THING, new URL(`${fake.url}/x`), schema)).toEqual({ ok: false });
  });

  it('lets the caller map a status to its own error', async () => {
    fake.route('/x', { status: 404, json: {} });
    const err = await appErrorOf(
      http.getJson(THING, new URL(`${fake.url}/x`), schema, {
        onStatus: (status) => (status === 404 ? new AppError('not_found', 'No such thing.') : undefined),
      }),
    );
    expect(err.code).toBe('not_found');
  });

  it('maps a 429 without Retry-After, an empty 200 body, a timeout and a refused connection', async () => {
    fake.route('/x', { status: 429, text: '' });
    const limited = await appErrorOf(http.getJson(THING, new URL(`${fake.url}/x`), schema));
    expect(limited.message).toBe(
      'The test upstream (Thing) is rate-limiting this service (HTTP 429); nothing was charged, try again in a minute.',
    );
    expect(limited.details).toEqual({ source: 'thing', upstream_status: 429 });

    fake.route('/x', { status: 200 });
    expect((await appErrorOf(http.getJson(THING, new URL(`${fake.url}/x`), schema))).message).toContain(
      'not JSON',
    );

    fake.route('/x', { json: { ok: true }, delayMs: 1000 });
    expect((await appErrorOf(http.getJson(THING, new URL(`${fake.url}/x`), schema))).code).toBe(
      'upstream_timeout',
    );

    const refused = await appErrorOf(http.getJson(THING, new URL(`${await closedPortUrl()}/x`), schema));
    expect(refused.code).toBe('upstream_failed');
    expect(refused.cause).toBeInstanceOf(TypeError);
  });

  it('does not retry a 429 whose Retry-After is beyond the deadline (seconds or a date): one request, at once', async () => {
    const waits: number[] = [];
    const patient = createHttpClient({
      userAgent: 'ua-test/1',
      timeoutMs: 200,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const url = new URL(`${fake.url}/x`);
    fake.route('/x', { status: 429, headers: { 'retry-after': '30' }, json: { reason: 'limit' } });
    const started = Date.now();
    const limited = await appErrorOf(patient.getJson(THING, url, schema, { deadline: Date.now() + 15_000 }));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(limited.details).toEqual({ source: 'thing', upstream_status: 429, retry_after_s: 30 });
    expect(fake.requests).toHaveLength(1);
    // Without a deadline of the caller's: its own (3 attempts of 200 ms) is shorter than 30 s too.
    await appErrorOf(patient.getJson(THING, url, schema));
    expect(fake.requests).toHaveLength(2);
    const inAMinute = new Date(Date.now() + 60_000).toUTCString();
    fake.route('/x', { status: 429, headers: { 'retry-after': inAMinute }, json: {} });
    await appErrorOf(patient.getJson(THING, url, schema, { deadline: Date.now() + 15_000 }));
    expect(fake.requests).toHaveLength(3);
    expect(waits).toEqual([]);
    // A Retry-After that fits the deadline is waited for, then the call is made again.
    fake.route('/x', { status: 429, headers: { 'retry-after': '1' }, json: {} });
    await appErrorOf(patient.getJson(THING, url, schema, { deadline: Date.now() + 15_000 }));
    expect(fake.requests).toHaveLength(3 + 3);
    expect(waits).toEqual([1_000, 1_000]);
  });

  it("takes a call's shorter per-attempt timeout (a geocoder's), never a longer one", async () => {
    const slow = createHttpClient({ userAgent: 'ua-test/1', timeoutMs: 2_000, maxRetries: 0 });
    fake.route('/x', { json: { ok: true }, delayMs: 1_000 });
    const started = Date.now();
    const err = await appErrorOf(slow.getJson(THING, new URL(`${fake.url}/x`), schema, { timeoutMs: 100 }));
    expect(err.code).toBe('upstream_timeout');
    expect(Date.now() - started).toBeLessThan(800);
    expect(err.message).toContain('within 0.1 s');
    const quick = createHttpClient({ userAgent: 'ua-test/1', timeoutMs: 100, maxRetries: 0 });
    const capped = await appErrorOf(
      quick.getJson(THING, new URL(`${fake.url}/x`), schema, { timeoutMs: 3_000 }),
    );
    expect(capped.message).toContain('within 0.1 s');
  });

  it('builds URLs from the origin of the base plus the documented path', () => {
    const url = buildUrl('https://api.example.com:8443/some/path?x=1#f', '/v1/search', {
      name: 'são paulo & co',
      skip: undefined,
      count: '5',
    });
    expect(url.href).toBe('https://api.example.com:8443/v1/search?name=s%C3%A3o%20paulo%20%26%20co&count=5');
    expect(buildUrl('http://127.0.0.1:1234', '/').href).toBe('http://127.0.0.1:1234/');
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-21T06:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter('Sat, 21 Nov 2026 06:01:30 GMT', now)).toBe(90);
    expect(parseRetryAfter('Sat, 21 Nov 2026 05:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe('upstream text', () => {
  it('strips tags, decodes entities once and collapses whitespace', () => {
    expect(cleanText('<span class="searchmatch">Rust</span>  &amp;\n Go')).toBe('Rust & Go');
    expect(cleanText('It&#39;s &quot;fine&quot; &#x2F; ok&nbsp;now')).toBe('It\'s "fine" / ok now');
    expect(decodeEntities('&amp;lt;b&amp;gt;')).toBe('&lt;b&gt;');
    expect(cleanText('&lt;script&gt;alert(1)&lt;/script&gt;')).toBe('<script>alert(1)</script>');
    expect(decodeEntities('&bogus; &#0; &#xD800;')).toBe('&bogus; &#0; &#xD800;');
    expect(cleanText('a\u0000b\u0007c')).toBe('a b c');
  });

  it('accepts only absolute http(s) links', () => {
    expect(httpUrl('https://example.org/a')?.href).toBe('https://example.org/a');
    expect(httpUrl('javascript:alert(1)')).toBeUndefined();
    expect(httpUrl('/relative')).toBeUndefined();
    expect(httpUrl(null)).toBeUndefined();
  });
});
