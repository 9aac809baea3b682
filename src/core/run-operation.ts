/** How every face (REST, MCP) runs an entry of the operation table, idempotency keys included. */
import type { Core } from './core.js';
import type { IdempotentOutcome } from './idempotency.js';
import type { JsonObject } from './model.js';
import type { Operation } from './operation-table.js';

/**
 * Runs an operation for a face: with an idempotency key (on an operation that honours one), through the
 * idempotency records; otherwise directly.
 */
export async function runOperation(
  core: Core,
  op: Operation,
  agentId: string | undefined,
  input: unknown,
  idempotencyKey: string | undefined,
  /** The OAuth client whose access token the request carried (the ledger entry names it). */
  spentBy?: string,
): Promise<IdempotentOutcome<JsonObject>> {
  if (idempotencyKey === undefined || !op.idempotent || agentId === undefined)
    return {
      status: 200,
      body: (await op.run(core, agentId, input, undefined, spentBy)) as JsonObject,
      replayed: false,
    };
  return core.idempotency.run(
    agentId,
    op.name,
    idempotencyKey,
    input,
    async (record) => (await op.run(core, agentId, input, record, spentBy)) as JsonObject,
  );
}
