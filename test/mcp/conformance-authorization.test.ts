/**
 * The official MCP conformance suite's authorization server scenarios (`conformance authorization`) against
 * the real server with OAuth on:
 *
 * - authorization-server-metadata-endpoint: RFC 8414 metadata at the issuer's well-known URL, with
 *   `client_id_metadata_document_supported` (the suite warns without it; here it must be a SUCCESS);
 * - authorization-code-grant: an authorization request with PKCE (S256) for a pre-registered public client
 *   (`--client-id`, no secret), the answer at http://127.0.0.1:<port>/callback (code, state, iss), and the
 *   code exchanged at the token endpoint (200, JSON, `Cache-Control: no-store`, access_token, token_type).
 *
 * The suite has no automatic consent: it prints the authorization URL for a person to open and waits for
 * its callback. Here the person is a real Chromium, who signs in with an account's API key and allows the
 * client on the consent page. The client is registered beforehand by dynamic client registration with the
 * suite's redirect URI. The scenarios run together (the grant reads the metadata the first one fetched), once
 * with the resource indicator an MCP client sends (`--resource <issuer>/mcp`, RFC 8707) and once without.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, VIEWPORTS } from '../helpers/browser.js';
import { freePort } from '../helpers/oauth-http.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const CONFORMANCE = path.resolve('node_modules/@modelcontextprotocol/conformance/dist/index.js');
/** Gives the suite (0.2.0-alpha.x imports fs.globSync, Node 22 and later) what it lacks on Node 20. */
const ON_NODE_20 = pathToFileURL(path.resolve('test/helpers/conformance-node20.mjs')).href;
const SCENARIOS = ['authorization-server-metadata-endpoint', 'authorization-code-grant'];

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/** What the suite recorded for one scenario (`--output-dir`): `authorization-server-<scenario>-<time>`. */
async function checksOf(results: string, scenario: string): Promise<Check[]> {
  const prefix = `authorization-server-${scenario}-`;
  const dirs = (await readdir(results)).filter(
    (d) => d.startsWith(prefix) && /^\d{4}-\d\d-\d\dT[\d-]+Z$/u.test(d.slice(prefix.length)),
  );
  expect(dirs, `results of ${scenario}`).toHaveLength(1);
  const checks = JSON.parse(await readFile(path.join(results, dirs[0] as string, 'checks.json'), 'utf8'));
  return (checks as Check[]).map(({ id, status, errorMessage }) => ({
    id,
    status,
    ...(errorMessage ? { errorMessage } : {}),
  }));
}

describe('MCP conformance suite: authorization server scenarios', () => {
  let server: TestServer;
  let issuer: string;
  let browser: Browser;
  let key: string;
  let work: string;

  beforeAll(async () => {
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    work = await mkdtemp(path.join(tmpdir(), 'ac-conformance-authorization-'));
    [server, browser] = await Promise.all([
      startTestServer({ env: { PORT: String(port), AC_PUBLIC_URL: issuer } }),
      launchBrowser(),
    ]);
    expect(server.url).toBe(issuer);
    key = await server.register(`conformance-authorization-${process.pid}@example.com`);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** Registers a public client (dynamic client registration) whose redirect URI is the suite's callback. */
  async function registerClient(callbackPort: number): Promise<string> {
    const res = await server.request('POST', '/oauth/register', {
      body: {
        redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`],
        token_endpoint_auth_method: 'none',
        client_name: 'MCP conformance suite',
        application_type: 'native',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    });
    expect(res.status, res.text).toBe(201);
    return res.body.client_id as string;
  }

  /** The person: opens the URL the suite printed, signs in with the key and allows the client. */
  async function personAllows(authorizationUrl: string, callbackPort: number): Promise<string> {
    const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
    try {
      const page = await context.newPage();
      await page.goto(authorizationUrl);
      await page.getByLabel('Your agent-context API key').fill(key);
      await Promise.all([
        page.waitForURL((url) => /^\/oauth\/interaction\/[\w-]+$/u.test(url.pathname)),
        page.getByRole('button', { name: 'Sign in', exact: true }).click(),
      ]);
      await page.getByRole('button', { name: 'Allow', exact: true }).click();
      await page.waitForURL((url) => url.origin === `http://127.0.0.1:${callbackPort}`);
      return page.url();
    } finally {
      await context.close();
    }
  }

  /**
   * Runs both scenarios; when the suite prints the authorization URL, the person goes through the pages.
   * Resolves with the exit code, everything the suite printed, and where the browser was sent.
   */
  function runSuite(args: string[], callbackPort: number) {
    const child: ChildProcess = spawn(process.execPath, ['--import', ON_NODE_20, CONFORMANCE, ...args]);
    let output = '';
    let person: Promise<string> | undefined;
    const onData = (d: Buffer) => {
      output += d;
      const printed = /^(http:\/\/\S+\/oauth\/authorize\?\S+)$/mu.exec(output);
      if (printed && !person) {
        person = personAllows(printed[1] as string, callbackPort);
        // A failure in the pages leaves the suite waiting for its callback (5 minutes): stop it now.
        person.catch(() => child.kill());
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    return new Promise<{ code: number | null; output: string; landed: string | undefined }>(
      (resolve, reject) => {
        child.on('error', reject);
        child.on('close', async (code) => {
          try {
            resolve({ code, output, landed: await person });
          } catch (err) {
            reject(new Error(`the person could not allow the client: ${err}\n${output.slice(-3000)}`));
          }
        });
      },
    );
  }

  it.each([
    { name: 'with the resource indicator', resource: true },
    { name: 'without a resource indicator', resource: false },
  ])('passes every check $name', { timeout: 90_000 }, async ({ resource }) => {
    const callbackPort = await freePort();
    const clientId = await registerClient(callbackPort);
    const results = path.join(work, resource ? 'resource' : 'plain');
    const { code, output, landed } = await runSuite(
      [
        'authorization',
        ...['--url', issuer, '--client-id', clientId, '-p', String(callbackPort)],
        ...(resource ? ['--resource', `${issuer}/mcp`] : []),
        ...['--output-dir', results],
      ],
      callbackPort,
    );

    // The person was sent to the suite's callback with a code, the state and the issuer.
    expect(landed, output.slice(-3000)).toBeDefined();
    const answer = new URL(landed as string);
    expect(answer.pathname).toBe('/callback');
    expect(answer.searchParams.get('iss')).toBe(issuer);
    expect(answer.searchParams.get('error'), `${landed}\n${output.slice(-3000)}`).toBeNull();

    for (const scenario of SCENARIOS) {
      const checks = await checksOf(results, scenario);
      expect(checks.length, `${scenario} recorded no check`).toBeGreaterThan(0);
      expect(
        checks.filter((c) => c.status !== 'SUCCESS'),
        scenario,
      ).toEqual([]);
    }
    expect(output).toMatch(/✓ authorization-server-metadata-endpoint: 2 passed, 0 failed/u);
    expect(output).toMatch(/✓ authorization-code-grant: 1 passed, 0 failed/u);
    expect(output).toMatch(/Total: 3 passed, 0 failed/u);
    expect(code, output.slice(-3000)).toBe(0);
  });
});
