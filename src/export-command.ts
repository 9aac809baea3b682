/**
 * `agent-context memories export --email E`: the memory_export entry of the operation table, run on the store
 * directly for the account registered with E, its NDJSON written to a stream (stdout) with backpressure.
 */
import type { Writable } from 'node:stream';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import type { Config } from './config.js';
import { AppError } from './core/errors.js';
import { createOperations } from './core/operation-table.js';
import { Email } from './core/operations/fields.js';
import { parseInput } from './core/validation.js';
import { openService } from './service.js';
import { DataDirLockedError } from './store/json/data-dir-lock.js';

export async function exportMemoriesCommand(
  config: Readonly<Config>,
  email: string,
  out: Writable,
): Promise<number> {
  let service: Awaited<ReturnType<typeof openService>>;
  try {
    service = await openService(config, { command: 'memories export' });
  } catch (err) {
    if (err instanceof DataDirLockedError && err.holder.url) {
      throw new AppError(
        'unavailable',
        `The store in ${config.dataDir} is held by the agent-context server at ${err.holder.url} (pid ` +
          `${err.holder.pid}). Export through it with the agent's key: curl -H "X-API-Key: $KEY" ` +
          `${err.holder.url}/api/ac/memory/export > memories.ndjson; or stop the server and run this again.`,
      );
    }
    throw err;
  }
  try {
    const { email: normalised } = parseInput(z.strictObject({ email: Email }), { email });
    const account = await service.store.read((reader) => reader.findAccountByEmail(normalised));
    if (!account) {
      throw new AppError(
        'not_found',
        `No account is registered with ${JSON.stringify(email)}; nothing was exported.`,
      );
    }
    const op = createOperations(service.core.schemas).find((entry) => entry.name === 'memory_export');
    if (!op) throw new Error('the operation table has no memory_export');
    const lines = (await op.run(service.core, account.id, {})) as unknown as AsyncIterable<unknown>;
    let count = 0;
    async function* text() {
      for await (const line of lines) {
        count++;
        yield `${JSON.stringify(line)}\n`;
      }
    }
    await pipeline(Readable.from(text()), out, { end: false });
    return count;
  } finally {
    await service.close();
  }
}
