/**
 * What the OAuth tests need around the authorization server: the real `agent-context serve` (dist/cli.js)
 * on a loopback port its public URL names (the issuer), on the run's store (AC_TEST_STORE); an https host on
 * loopback, with the committed self-signed certificate, that serves a client's metadata document (CIMD); a
 * loopback callback that catches the authorization response; an OAuthClientProvider for the MCP SDK that
 * keeps everything in memory, as a connector would keep it; a person in Chromium who signs in with an API
 * key and answers the consent page; and a front door (a relay) that puts several instances behind one public
 * URL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import type { BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { lookAtBothWidths, watchPage } from '../helpers/browser.js';
import { freePort } from '../helpers/oauth-http.js';
import { testDatabase } from '../helpers/postgres.js';
import { CLI } from '../helpers/spawn-serve.js';
import { type ApiResponse, ON_POSTGRES, type RequestOptions, request } from '../helpers/test-server.js';

export { freePort };

const FIXTURES = path.resolve('test', 'fixtures', 'oauth');

export interface StoreOf {
  /** What the server's environment says about its store. */
  env: Record<string, string>;
  /** Removes what was made for it (the JSON store's DATA_DIR; a test database is the cluster's). */
  remove(): Promise<void>;
  label: string;
  /** What the server's "listening" log line says of this store. */
  logged: RegExp;
}

/** A fresh store of the run's kind: PostgreSQL under AC_TEST_STORE=postgres, else a DATA_DIR. */
export async function freshStore(): Promise<StoreOf> {
  if (ON_POSTGRES) return postgresStore();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'ac-oauth-'));
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: '' },
    remove: () => rm(dataDir, { recursive: true, force: true }),
    label: 'JSON store',
    logged: /"store":"the store in /u,
  };
}

/** A fresh PostgreSQL database, whatever the run's store (for instances that share one). */
export async function postgresStore(): Promise<StoreOf> {
  const { url } = await testDatabase({ label: 'oauth' });
  return {
    env: { DATABASE_URL: url, DATA_DIR: '' },
    remove: async () => {},
    label: 'PostgreSQL',
    logged: /"store":"the database at /u,
  };
}

export interface OAuthServer {
  /** Where this process listens (http://127.0.0.1:port). */
  url: string;
  /** The issuer, the public URL (the same as `url` unless several instances share one). */
  issuer: string;
  /** The MCP endpoint, the protected resource, as a client addresses it on this instance. */
  mcpUrl: URL;
  request(method: string, pathname: string, options?: RequestOptions): Promise<ApiResponse>;
  /** Makes an account over REST; its key. */
  register(email?: string): Promise<string>;
  /** Everything the process wrote to stderr (its log). */
  log(): string;
  stop(): Promise<void>;
}

export interface OAuthServerOptions {
  store: StoreOf;
  env?: Record<string, string>;
  /** Another instance's public URL, to stand behind the same one (default: its own address). */
  publicUrl?: string;
}

let emails = 0;

/** `agent-context serve` with OAuth on, on a free port that its AC_PUBLIC_URL names. */
export async function startOAuthServer(options: OAuthServerOptions): Promise<OAuthServer> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await spawnOn(port, options);
    } catch (err) {
      // Another process took the port between the probe and the server's listen: try another.
      if (attempt < 3 && /EADDRINUSE/u.test((err as Error).message)) continue;
      throw err;
    }
  }
}

function spawnOn(port: number, options: OAuthServerOptions): Promise<OAuthServer> {
  const url = `http://127.0.0.1:${port}`;
  const issuer = options.publicUrl ?? url;
  const child: ChildProcess = spawn(process.execPath, [CLI, 'serve'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      AC_PUBLIC_URL: issuer,
      AC_OAUTH_CIMD_ALLOW_LOOPBACK: 'on',
      AC_RATE_LIMIT: 'off',
      AC_LOG_LEVEL: 'info',
      ...options.store.env,
      ...options.env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let listening = false;
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
      if (listening || !/listening on http:\/\//u.test(stderr)) return;
      listening = true;
      const server: OAuthServer = {
        url,
        issuer,
        mcpUrl: new URL('/mcp', url),
        request: (method, pathname, o) => request(url, method, pathname, o),
        register: async (email) => {
          const res = await request(url, 'POST', '/api/ac/register', {
            body: { email: email ?? `person${++emails}-${process.pid}@example.com` },
          });
          if (res.status !== 200) throw new Error(`register failed: ${res.text}`);
          return res.body.agent_key as string;
        },
        log: () => stderr,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      };
      resolve(server);
    });
    exited.then((code) => {
      if (!listening) reject(new Error(`serve exited ${code}: ${stderr}`));
    });
  });
}

/**
 * One public address in front of several instances, as a load balancer is: a TCP relay on loopback to the
 * instance the test chooses. Choosing another cuts every open connection (a browser's kept-alive ones too),
 * so that the next request, whoever sends it, reaches the new one.
 */
export class FrontDoor {
  private target: number | undefined;
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    readonly url: string,
  ) {}

  static async open(): Promise<FrontDoor> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const door = new FrontDoor(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on('connection', (client) => door.relay(client));
    return door;
  }

  /** From now on, every connection goes to `instance`. */
  sendTo(instance: Pick<OAuthServer, 'url'>): void {
    this.target = Number(new URL(instance.url).port);
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  private relay(client: net.Socket): void {
    if (this.target === undefined) {
      client.destroy();
      return;
    }
    const upstream = net.connect(this.target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * A fetch that keeps no connection alive (undici's `pipelining: 0`), for a client behind a FrontDoor: a
 * kept-alive connection that the door cuts when it turns to another instance would fail the next request.
 * The Agent is Node's own undici's (the global dispatcher's class), which its fetch requires.
 */
export async function unpooledFetch(): Promise<typeof fetch> {
  await fetch('data:,'); // makes sure Node's fetch has made its global dispatcher
  const global = globalThis as Record<symbol, unknown>;
  const dispatcher =
    global[Symbol.for('undici.globalDispatcher.2')] ?? global[Symbol.for('undici.globalDispatcher.1')];
  const Agent = (dispatcher as { constructor: new (options: object) => unknown }).constructor;
  const agent = new Agent({ pipelining: 0 });
  return (input, init) => fetch(input, { ...init, dispatcher: agent } as RequestInit);
}

/** The log's problems: stack traces, and answers with a 5xx status (every failure here is a known one). */
export function logProblems(log: string): string[] {
  const problems: string[] = [];
  for (const line of log.split('\n')) {
    if (/"stack"|^\s+at\s/u.test(line)) problems.push(`stack trace: ${line.slice(0, 300)}`);
    if (/"status":5\d\d/u.test(line)) problems.push(`5xx answer: ${line.slice(0, 300)}`);
  }
  return problems;
}

/** An https host on loopback (the committed self-signed certificate) serving one client metadata document. */
export interface CimdHost {
  /** The document's URL: the client's id. */
  clientId: string;
  /** How often the document was fetched. */
  fetches(): number;
  close(): Promise<void>;
}

export async function startCimdHost(
  document: (clientId: string) => Record<string, unknown>,
): Promise<CimdHost> {
  let fetched = 0;
  let clientId = '';
  const server = https.createServer(
    {
      key: readFileSync(path.join(FIXTURES, 'loopback-key.pem')),
      cert: readFileSync(path.join(FIXTURES, 'loopback-cert.pem')),
    },
    (req, res) => {
      if (req.url !== '/oauth/client-metadata.json') {
        res.writeHead(404).end();
        return;
      }
      fetched++;
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' });
      res.end(JSON.stringify(document(clientId)));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  clientId = `https://127.0.0.1:${(server.address() as AddressInfo).port}/oauth/client-metadata.json`;
  return {
    clientId,
    fetches: () => fetched,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A loopback redirect URI, as a native MCP client listens on one: it hands over each authorization response. */
export interface Callback {
  redirectUri: string;
  /**
   * The query of the next request to the redirect URI (any that came before are dropped); rejects when none
   * comes within `timeoutMs`.
   */
  next(timeoutMs?: number): Promise<URLSearchParams>;
  close(): Promise<void>;
}

export async function startCallback(): Promise<Callback> {
  const waiting: ((params: URLSearchParams) => void)[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/callback') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Connected</title><p>You can close this window.</p>');
    waiting.shift()?.(url.searchParams); // one nobody waits for is dropped
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    redirectUri: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`,
    next: (timeoutMs = 15_000) => {
      waiting.length = 0;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.length = 0;
          reject(new Error(`Nothing reached the redirect URI within ${timeoutMs} ms.`));
        }, timeoutMs);
        waiting.push((params) => {
          clearTimeout(timer);
          resolve(params);
        });
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The MCP client's side of OAuth, kept in memory as a connector keeps it: its client information (a CIMD
 * URL, or what dynamic registration gave it), its tokens, the PKCE verifier, the state it sent, and the
 * authorization URL it would open in the person's browser.
 */
export class MemoryOAuthClient implements OAuthClientProvider {
  readonly clientMetadataUrl?: string;
  /** Every token set saved, oldest first. */
  readonly saved: StoredOAuthTokens[] = [];
  /** The URL of the last authorization the SDK asked the person's browser to open. */
  authorizationUrl: URL | undefined;
  private information: StoredOAuthClientInformation | undefined;
  private current: StoredOAuthTokens | undefined;
  private verifier = '';
  private discovery: OAuthDiscoveryState | undefined;
  private sentState = '';

  constructor(
    private readonly options: {
      redirectUri: string;
      metadata: OAuthClientMetadata;
      clientMetadataUrl?: string;
    },
  ) {
    if (options.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.options.redirectUri;
  }
  get clientMetadata(): OAuthClientMetadata {
    return this.options.metadata;
  }
  /** The state of the last authorization request. */
  get lastState(): string {
    return this.sentState;
  }
  state(): string {
    this.sentState = randomBytes(16).toString('base64url');
    return this.sentState;
  }
  clientInformation(): StoredOAuthClientInformation | undefined {
    return this.information;
  }
  saveClientInformation(information: StoredOAuthClientInformation): void {
    this.information = information;
  }
  tokens(): StoredOAuthTokens | undefined {
    return this.current;
  }
  saveTokens(tokens: StoredOAuthTokens): void {
    this.current = tokens;
    this.saved.push(tokens);
  }
  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizationUrl = authorizationUrl;
  }
  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }
  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'tokens') this.current = undefined;
    if (scope === 'all' || scope === 'client') this.information = undefined;
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }
  /** The client id the SDK ended up with (the CIMD URL, or the registered one). */
  get clientId(): string {
    const id = this.information?.client_id;
    if (id === undefined) throw new Error('The client has no client id yet.');
    return id;
  }
  /** The current tokens, which a test expects to be there. */
  get tokenSet(): StoredOAuthTokens {
    if (!this.current) throw new Error('The client has no tokens yet.');
    return this.current;
  }
}

/** What the person meets in the browser on the way to the redirect URI, in order. */
export type Step = 'sign-in' | 'consent';

export interface PersonOptions {
  /** The key the person signs in with, when asked. */
  apiKey: string;
  /** The steps the person is expected to meet. */
  expect: Step[];
  /** Name screenshots of the pages (test-output/screenshots/<name>-<step>-<width>.png). */
  screenshots?: string;
  /** 'deny' to press Deny on the consent page. */
  decision?: 'allow' | 'deny';
}

export interface PersonResult {
  /** The authorization response at the redirect URI. */
  params: URLSearchParams;
  /** The consent page's text, when it was shown. */
  consentText?: string;
  /** Problems the pages showed (console errors, blocked or failed requests), the redirect excepted. */
  problems: string[];
}

/**
 * A person opens the authorization URL in `context` and goes through the pages the server shows: signs in
 * with the key when asked, reads the consent page and presses Allow (or Deny). Checks that exactly the
 * `expect`ed steps were shown and returns what reached the callback.
 */
export async function personAuthorizes(
  context: BrowserContext,
  authorizationUrl: URL,
  callback: Callback,
  options: PersonOptions,
): Promise<PersonResult> {
  const page = await context.newPage();
  const watch = watchPage(page, authorizationUrl.origin);
  const redirectOrigin = new URL(callback.redirectUri).origin;
  const met: Step[] = [];
  let consentText: string | undefined;
  try {
    const arrived = callback.next();
    arrived.catch(() => {}); // awaited below, unless a step fails first
    await page.goto(authorizationUrl.href);
    for (;;) {
      const step = await stepOf(page, redirectOrigin);
      if (step === 'done') break;
      met.push(step);
      if (options.screenshots) {
        const violations = await lookAtBothWidths(page, `${options.screenshots}-${step}`);
        expect(violations, `accessibility of the ${step} page`).toEqual([]);
      }
      if (step === 'sign-in') {
        await page.getByLabel('Your agent-context API key').fill(options.apiKey);
        await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in' }).click()]);
      } else {
        consentText = await page.locator('main').innerText();
        const button = options.decision === 'deny' ? 'Deny' : 'Allow';
        await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: button }).click()]);
      }
    }
    expect(met, 'the pages the person met').toEqual(options.expect);
    const params = await arrived;
    const problems = watch.problems.filter((problem) => !problem.includes(redirectOrigin));
    return { params, ...(consentText === undefined ? {} : { consentText }), problems };
  } finally {
    await page.close();
  }
}

/** Which page the browser is on: a step, or the redirect URI (done). Anything else fails the test. */
async function stepOf(page: Page, redirectOrigin: string): Promise<Step | 'done'> {
  const url = new URL(page.url());
  if (url.origin === redirectOrigin) return 'done';
  const heading = await page.locator('h1').first().innerText();
  if (/^Sign in to connect/u.test(heading)) return 'sign-in';
  if (/asks to use your agent-context account/u.test(heading)) return 'consent';
  throw new Error(`Unexpected page ${page.url()}: ${heading}\n${await page.locator('main').innerText()}`);
}

/** A refresh at the token endpoint, as a client sends it (form body, public client). */
export async function refreshAt(
  server: Pick<OAuthServer, 'url'>,
  clientId: string,
  refreshToken: string,
): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(new URL('/oauth/token', server.url), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: clientId,
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** A raw tools/call on /mcp with a bearer token (2025-06-18, no session: the server is stateless). */
export async function rawToolCall(
  server: Pick<OAuthServer, 'mcpUrl'>,
  bearer: string,
  name: string,
  args: Record<string, unknown>,
): Promise<{ status: number; challenge: string | null; body: any }> {
  const res = await fetch(server.mcpUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bearer}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // an SSE answer: its last data line
    const data = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .at(-1);
    if (data) body = JSON.parse(data.slice(6));
  }
  return { status: res.status, challenge: res.headers.get('www-authenticate'), body };
}
