/**
 * The operator's commands (`credits add`, `accounts plan`) run an admin entry of the operation table: on
 * the store directly, or, while a server holds the store, through that server's admin route with
 * AC_ADMIN_TOKEN. Either way the input is validated by the entry's schema and the answer is the route's.
 */
import type { Config } from './config.js';
import { AppError, type ErrorBody } from './core/errors.js';
import type { JsonObject } from './core/model.js';
import { createOperations, type Operation } from './core/operation-table.js';
import { createSchemas } from './core/schemas.js';
import { parseInput } from './core/validation.js';
import { openService } from './service.js';
import { DataDirLockedError, reachableUrl } from './store/json/data-dir-lock.js';

const REQUEST_TIMEOUT_MS = 15_000;

function adminOperation(config: Readonly<Config>, name: string): Operation & { http: { path: string } } {
  const op = createOperations(createSchemas(config.limits)).find((entry) => entry.name === name);
  if (!op?.http || op.auth !== 'admin') throw new Error(`the operation table has no admin route ${name}`);
  return op as Operation & { http: { path: string } };
}

export async function runOperatorOperation(
  config: Readonly<Config>,
  name: string,
  fields: Record<string, unknown>,
): Promise<JsonObject> {
  const op = adminOperation(config, name);
  const input = parseInput(op.input, fields);
  let service: Awaited<ReturnType<typeof openService>>;
  try {
    service = await openService(config, { command: op.name });
  } catch (err) {
    if (err instanceof DataDirLockedError && err.holder.url) {
      return throughServer(config, op, input, err.holder.url, err.holder.pid);
    }
    throw err;
  }
  try {
    return (await op.run(service.core, undefined, input)) as JsonObject;
  } finally {
    await service.close();
  }
}

/** Runs the operation through the admin route of the server that holds the store. */
async function throughServer(
  config: Readonly<Config>,
  op: Operation & { http: { path: string } },
  input: unknown,
  holderUrl: string,
  holderPid: number,
): Promise<JsonObject> {
  const url = new URL(op.http.path, reachableUrl(holderUrl));
  if (config.adminToken === undefined) {
    throw new AppError(
      'unavailable',
      `The store in ${config.dataDir} is held by the agent-context server at ${holderUrl} (pid ${holderPid}). ` +
        'To do this ' +
        "through it, set AC_ADMIN_TOKEN to that server's admin token (the server must have been started with " +
        `one) and run the command again: it then calls POST ${url.href}. Or stop the server and run it again.`,
    );
  }
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${config.adminToken}` },
      body: JSON.stringify(input),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (err) {
    throw new AppError(
      'unavailable',
      `The agent-context server at ${holderUrl} holds the store in ${config.dataDir} but does not answer ` +
        `(${(err as Error).message}); try again, or stop it.`,
    );
  }
  const body = (await response.json().catch(() => ({}))) as JsonObject;
  if (response.ok) return body;
  const error = body as Partial<ErrorBody>;
  const hint =
    response.status === 401 || response.status === 404
      ? ' Check that AC_ADMIN_TOKEN is the token the server was started with (a server without one has no ' +
        'admin routes: restart it with AC_ADMIN_TOKEN set).'
      : '';
  throw new AppError(
    error.code ?? 'internal',
    `The server at ${holderUrl} answered ${response.status}: ${error.error ?? 'no error message'}${hint}`,
  );
}
