/**
 * The console's client of the service's REST API (same origin, /api/ac/...). The agent's key goes in
 * X-API-Key, the operator's token in Authorization: Bearer. Every error answer of the API is JSON with a
 * sentence in `error` (or `message`): an ApiError carries it, to be shown as it is.
 */
import { session } from './session';

export type Auth = 'agent' | 'admin' | 'none';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
    readonly body: Record<string, unknown> | undefined,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface CallOptions {
  auth?: Auth;
  method?: 'GET' | 'POST' | 'DELETE';
  query?: Record<string, string | number | undefined | null>;
  body?: unknown;
  headers?: Record<string, string>;
  /** Overrides the stored credential (signing in with a key not yet stored). */
  credential?: string;
}

export interface Answer<T> {
  status: number;
  body: T;
  headers: Headers;
}

type Listener<T> = (value: T) => void;
const unauthorizedListeners = new Set<Listener<{ auth: Auth; message: string }>>();
const balanceListeners = new Set<Listener<number>>();

/** Called when a stored credential is refused (401): the console signs that credential out. */
export function onUnauthorized(listener: Listener<{ auth: Auth; message: string }>): () => void {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

/** Called with the balance every agent answer that carries one reports. */
export function onBalance(listener: Listener<number>): () => void {
  balanceListeners.add(listener);
  return () => balanceListeners.delete(listener);
}

function messageOf(body: unknown, status: number): string {
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    if (typeof b.message === 'string' && b.message) return b.message;
    if (typeof b.error === 'string' && b.error) return b.error;
  }
  return `The service answered HTTP ${status} without an explanation.`;
}

export async function call<T>(path: string, options: CallOptions = {}): Promise<Answer<T>> {
  const auth = options.auth ?? 'agent';
  const url = new URL(path, window.location.origin);
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
  }
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  const stored = auth === 'agent' ? session.key() : auth === 'admin' ? session.adminToken() : null;
  const credential = options.credential ?? stored;
  if (auth === 'agent' && credential) headers['X-API-Key'] = credential;
  if (auth === 'admin' && credential) headers.Authorization = `Bearer ${credential}`;
  let payload: string | undefined;
  if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    headers['Content-Type'] = 'application/json';
  }
  let res: Response;
  try {
    res = await fetch(url, {
      method: options.method ?? 'GET',
      headers,
      credentials: 'omit',
      cache: 'no-store',
      ...(payload === undefined ? {} : { body: payload }),
    });
  } catch (err) {
    throw new ApiError(
      `Could not reach the service (${err instanceof Error ? err.message : String(err)}). Check that it is running, then try again.`,
      0,
      undefined,
      undefined,
    );
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const message = messageOf(body, res.status);
    const record = body && typeof body === 'object' ? (body as Record<string, unknown>) : undefined;
    // Only the credential still stored signs out: a late 401 for a key replaced since (a rotation, a new
    // sign-in) must not sign out its successor.
    const current = auth === 'agent' ? session.key() : auth === 'admin' ? session.adminToken() : null;
    if (res.status === 401 && auth !== 'none' && options.credential === undefined && stored === current) {
      for (const listener of unauthorizedListeners) listener({ auth, message });
    }
    throw new ApiError(
      message,
      res.status,
      typeof record?.code === 'string' ? record.code : undefined,
      record,
    );
  }
  if (body === undefined) {
    throw new ApiError(
      `The service answered HTTP ${res.status} without JSON.`,
      res.status,
      undefined,
      undefined,
    );
  }
  if (auth === 'agent') {
    const balance = (body as { credit_balance_cents?: unknown }).credit_balance_cents;
    if (typeof balance === 'number') for (const listener of balanceListeners) listener(balance);
  }
  return { status: res.status, body: body as T, headers: res.headers };
}

/** The agent key, which the memory and data operations repeat in `agent_key`. */
export function agentKey(): string {
  return session.key() ?? '';
}

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
